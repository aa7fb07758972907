#!/usr/bin/env python3
"""train.py -- one configuration of the end-to-end experiment: trains harness/e2e/model.py's
DiT on synthetic latents of a plan's micro-batches, data-parallel over torchrun's ranks, and
records per step and rank: compute time, all-reduce time, peak memory, samples, tokens.
Also the two single-GPU measurements the experiment needs (calibrate, op-bench).

  torchrun --nproc-per-node 2 train.py train --plan plan.jsonl --summary summary.json \\
           --kernel torch|adaload --out DIR [--first-step K] [--steps N] [--warmup W]
  python3 train.py calibrate --summary summary.json --out DIR      # profile.csv, memory.json
  python3 train.py op-bench --plan a.jsonl [--plan b.jsonl ...] --summary summary.json \
           --world-size 2 --out DIR                                   # op.json
  (model options on every mode: --width 1536 --depth 4 --heads 12 --ffn 8960 --text-len 512)

Training step on each rank (the rank's micro-batch from adaload.plan.PlanBatches, resumed at
--first-step): forward + backward under bf16 autocast with per-block activation
checkpointing (loss = sum of per-sample MSE / the samples of the step's sync group over all
ranks, so the summed gradient is the mean over the group), then the gradients are
all-reduced (NCCL, summed, in buckets of --bucket-mb) and AdamW steps -- at every step, or
for the planner's lpt/kk plans only at a step marked "sync" (gradients accumulate inside
the window). Whole sync groups are run: --warmup and --steps are rounded up to them. The all-reduce is explicit rather
than DistributedDataParallel's backward hooks so that its time -- transfer plus waiting for
the slowest rank -- is measured on its own; a rank that idles in a step contributes zero
gradients and still joins the all-reduce. CUDA events time compute (forward + backward)
and the all-reduce; the step's wall time is taken after a device synchronize. NVLink
multicast stays off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
NVSHMEM_DISABLE_NVLS=1), as the lent machines require.

Output (--out DIR): steps-rank<R>.jsonl, one JSON object per step: step, rank, warmup, sync,
compute_s, allreduce_s, step_s, peak_bytes, samples, tokens, bucket, loss.

--device cpu is a functional check only (gloo instead of NCCL, fp32 instead of bf16
autocast, host timers instead of CUDA events, peak_bytes 0, the PyTorch chain only): it
runs the same loop, plan reading, all-reduce and records on a machine without a GPU; its
numbers mean nothing. The experiment uses --device cuda (the default).
"""
import os

for _k, _v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
               ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[_k] = _v

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import e2e_lib  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=("train", "calibrate", "op-bench"))
    p.add_argument("--plan", action="append", help="the plan (op-bench: repeat for several)")
    p.add_argument("--summary", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--kernel", choices=("torch", "adaload"), default="torch")
    p.add_argument("--first-step", type=int, default=0)
    p.add_argument("--steps", type=int, default=40, help="steps run after the warm-up")
    p.add_argument("--warmup", type=int, default=3, help="steps run first, recorded as warmup")
    p.add_argument("--world-size", type=int, default=2, help="op-bench: ranks of the plan")
    p.add_argument("--width", type=int, default=1536)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--ffn", type=int, default=8960)
    p.add_argument("--text-len", type=int, default=512)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--bucket-mb", type=float, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cpu: functional check only (see the docstring)")
    p.add_argument("--points", type=int, default=6, help="calibrate: token counts measured "
                   "(each at batch 1, 2, 4, ... up to its planned batch)")
    p.add_argument("--max-tokens", type=int, default=2000000,
                   help="calibrate: the largest micro-batch (batch x tokens) measured")
    p.add_argument("--repeats", type=int, default=5, help="calibrate/op-bench: timed repeats")
    a = p.parse_args(argv)
    if a.mode in ("train", "op-bench") and not a.plan:
        p.error("%s needs --plan" % a.mode)
    if a.mode == "train" and len(a.plan) != 1:
        p.error("train takes one --plan")
    if a.steps < 1 or a.warmup < 0 or a.first_step < 0:
        p.error("--steps >= 1, --warmup >= 0, --first-step >= 0")
    return a


class Dev:
    """The device and what differs between the GPU run and the CPU functional check."""

    def __init__(self, torch, kind, index=0):
        self.torch, self.cuda = torch, kind == "cuda"
        self.dev = torch.device("cuda", index) if self.cuda else torch.device("cpu")
        if self.cuda:
            torch.cuda.set_device(self.dev)
        self.dtype = torch.bfloat16 if self.cuda else torch.float32

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize(self.dev)

    def reset_peak(self):
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats(self.dev)

    def peak(self):
        return self.torch.cuda.max_memory_allocated(self.dev) if self.cuda else 0

    def allocated(self):
        return self.torch.cuda.memory_allocated(self.dev) if self.cuda else 0

    def empty_cache(self):
        if self.cuda:
            self.torch.cuda.empty_cache()

    def total_bytes(self):
        return self.torch.cuda.get_device_properties(self.dev).total_memory if self.cuda else 0

    def name(self):
        return self.torch.cuda.get_device_name(self.dev) if self.cuda else "cpu"

    def marks(self, n):
        """n time marks: CUDA events on the GPU (mark(i) records on the stream; seconds(i, j)
        after a synchronize), host clock after a synchronize on the CPU."""
        return Marks(self, n)


class Marks:
    def __init__(self, d, n):
        self.d = d
        self.ev = [d.torch.cuda.Event(enable_timing=True) for _ in range(n)] if d.cuda else None
        self.t = [0.0] * n

    def mark(self, i):
        if self.ev:
            self.ev[i].record()
        else:
            self.t[i] = time.perf_counter()

    def seconds(self, i, j):
        if self.ev:
            return self.ev[i].elapsed_time(self.ev[j]) / 1e3
        return self.t[j] - self.t[i]


def build(a, torch, kernel, d):
    from model import WanDiT
    torch.manual_seed(a.seed)
    m = WanDiT(width=a.width, depth=a.depth, heads=a.heads, ffn=a.ffn, text_len=a.text_len,
               modulate=kernel).to(d.dev)
    opt = torch.optim.AdamW(m.parameters(), lr=a.lr, fused=d.cuda)
    return m, opt


def batch_inputs(torch, m, bucket, n, gen, d):
    """Synthetic latents of exactly the bucket's shape, timesteps, text context, target."""
    from model import latent_shape, tokens_of
    f, h, w = bucket["frames"], bucket["height"], bucket["width"]
    if tokens_of(f, h, w) != bucket["tokens"]:
        raise ValueError("bucket %s: tokens differ from the Wan 2.1 formula" % bucket)
    dev, dt = d.dev, d.dtype
    lat = torch.randn(latent_shape(n, f, h, w), generator=gen, device=dev, dtype=dt)
    t = torch.randint(0, 1000, (n,), generator=gen, device=dev)
    ctx = torch.randn(n, m.text_len, m.text_dim, generator=gen, device=dev, dtype=dt)
    tgt = torch.randn(n, bucket["tokens"], 64, generator=gen, device=dev, dtype=dt)
    return lat, t, ctx, tgt


def fwd_bwd(torch, m, inputs, weight, d):
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=d.cuda):
        loss = m.loss(*inputs) * weight
    loss.backward()
    return float(loss.detach())


def allreduce(torch, dist, params, bucket_bytes):
    """Sums the gradients over the ranks, in flat buckets (zeros where a rank had none)."""
    for p in params:
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    group, size = [], 0
    for p in params + [None]:
        if p is not None:
            group.append(p)
            size += p.grad.numel() * p.grad.element_size()
        if group and (p is None or size >= bucket_bytes):
            flat = torch.cat([q.grad.reshape(-1) for q in group])
            dist.all_reduce(flat)
            off = 0
            for q in group:
                q.grad.copy_(flat[off:off + q.numel()].view_as(q.grad))
                off += q.numel()
            group, size = [], 0


def train(a):
    import torch
    import torch.distributed as dist
    from adaload.plan import PlanBatches
    dist.init_process_group("nccl" if a.device == "cuda" else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    d = Dev(torch, a.device, int(os.environ.get("LOCAL_RANK", rank)))
    summary = json.load(open(a.summary))
    buckets = summary["buckets"]
    steps = e2e_lib.read_plan(a.plan[0], world)
    sync = e2e_lib.read_sync(a.plan[0])
    warm, meas = e2e_lib.run_steps(sync, a.first_step, a.warmup, a.steps)
    run = set(warm) | set(meas)
    # Samples of each step's sync group over all ranks: the loss weight that makes the
    # summed (and, inside an lpt/kk window, accumulated) gradient the mean over the group.
    group_samples = {}
    for g in e2e_lib.groups(sync, warm + meas):
        n = sum(len(ids) for k in g for _, _, ids in steps[k])
        group_samples.update((k, n) for k in g)
    mine = PlanBatches(a.plan[0], rank=rank, world_size=world, start_step=a.first_step)
    m, opt = build(a, torch, a.kernel, d)
    params = [p for p in m.parameters() if p.requires_grad]
    gen = torch.Generator(device=d.dev)
    os.makedirs(a.out, exist_ok=True)
    out = open(os.path.join(a.out, "steps-rank%d.jsonl" % rank), "w")
    ev = d.marks(3)
    for mb in mine.microbatches():
        k = mb.step
        if k not in run:
            break
        gen.manual_seed(a.seed * 1000003 + k * 101 + rank)
        d.sync()
        d.reset_peak()
        t0 = time.perf_counter()
        ev.mark(0)
        loss = 0.0
        tokens = 0
        if mb.ids:
            b = buckets[mb.bucket]
            tokens = b["tokens"] * len(mb.ids)
            inputs = batch_inputs(torch, m, b, len(mb.ids), gen, d)
            loss = fwd_bwd(torch, m, inputs, len(mb.ids) / group_samples[k], d)
        ev.mark(1)
        if sync[k]:  # else: an lpt/kk window goes on, gradients accumulate
            allreduce(torch, dist, params, int(a.bucket_mb * 2 ** 20))
        ev.mark(2)
        if sync[k]:
            opt.step()
            opt.zero_grad(set_to_none=True)
        d.sync()
        wall = time.perf_counter() - t0
        rec = {"step": k, "rank": rank, "warmup": k in warm, "sync": sync[k],
               "compute_s": ev.seconds(0, 1), "allreduce_s": ev.seconds(1, 2), "step_s": wall,
               "peak_bytes": d.peak(), "samples": len(mb.ids),
               "tokens": tokens, "bucket": mb.bucket, "loss": loss}
        out.write(json.dumps(rec) + "\n")
        out.flush()
    out.close()
    dist.barrier()
    dist.destroy_process_group()


def calibrate(a):
    """Forward + backward time (what the training records call compute_s; the optimizer
    step is not timed) and peak memory above the model state of micro-batches at several
    batch sizes and token counts spanning the summary's buckets (e2e_lib.calibration_points:
    --points token counts, batch 1, 2, 4, ... up to each bucket's planned batch). A point that
    runs out of memory ends that token count's batch sweep (recorded). Writes profile.csv
    (batch,tokens,seconds,peak_bytes,seconds_cv: `adaload plan --profile` fits the memory
    model with its per-sample term and clamps batches to this measured range) and memory.json
    (the fit: fixed bytes, bytes per token and per sample, residuals, range, the OOMs)."""
    import torch
    d = Dev(torch, a.device)
    buckets = json.load(open(a.summary))["buckets"]
    buckets = [b for b in buckets if not b.get("dropped")]
    pts = e2e_lib.calibration_points(buckets, a.points, a.max_tokens)
    m, opt = build(a, torch, a.kernel, d)
    gen = torch.Generator(device=d.dev)
    gen.manual_seed(a.seed)
    rows, ooms, skip = [], [], set()
    for B, S in pts:
        if S in skip:
            continue
        b = next(x for x in buckets if x["tokens"] == S)
        times, peaks = [], []
        try:
            for r in range(2 + a.repeats):
                inputs = batch_inputs(torch, m, b, B, gen, d)
                d.sync()
                # gradients stay allocated (zeroed, not freed): they are model state, not
                # the micro-batch's; the peak above this base is the micro-batch's own
                opt.zero_grad(set_to_none=False)
                base = d.allocated()
                d.reset_peak()
                t0 = time.perf_counter()
                fwd_bwd(torch, m, inputs, 1.0, d)
                d.sync()
                t1 = time.perf_counter()
                if r >= 2:
                    times.append(t1 - t0)
                    peaks.append(d.peak() - base)
                del inputs
        except torch.cuda.OutOfMemoryError:
            ooms.append({"batch": B, "tokens": S})
            skip.add(S)
            opt.zero_grad(set_to_none=False)
            d.empty_cache()
            print("train.py calibrate: B=%d S=%d ran out of memory: the sweep at S=%d ends" % (B, S, S),
                  file=sys.stderr)
            continue
        med = statistics.median(times)
        cv = statistics.pstdev(times) / med if len(times) > 1 and med > 0 else 0.0
        rows.append({"batch": B, "tokens": S, "seconds": med, "seconds_cv": cv,
                     "peak_bytes": max(peaks)})
    if len({r["tokens"] for r in rows}) < 3:
        raise SystemExit("train.py calibrate: fewer than 3 token counts measured (raise --points "
                         "or --max-tokens)")
    with_peak = d.cuda and all(r["peak_bytes"] > 0 for r in rows)
    fit = e2e_lib.fit_memory([(r["batch"], r["tokens"], r["peak_bytes"]) for r in rows]) if with_peak else None
    os.makedirs(a.out, exist_ok=True)

    def profile(f):
        f.write("batch,tokens,seconds,seconds_cv" + (",peak_bytes" if with_peak else "") + "\n")
        for r in rows:
            f.write("%d,%d,%.9g,%.6g" % (r["batch"], r["tokens"], r["seconds"], max(r["seconds_cv"], 1e-6)))
            f.write((",%d\n" % max(1, r["peak_bytes"])) if with_peak else "\n")
    e2e_lib.atomic_write(os.path.join(a.out, "profile.csv"), profile)
    params = sum(p.numel() for p in m.parameters())
    state = d.allocated()  # weights, gradients, optimizer state after the sweep
    doc = {"points": rows, "out_of_memory": ooms,
           "fixed_bytes": float(state + (fit["intercept"] if fit and fit["intercept"] > 0 else 0)),
           "state_bytes": state,
           "bytes_per_token": fit["bytes_per_token"] if fit else 0.0,
           "bytes_per_sample": fit["bytes_per_sample"] if fit else 0.0,
           "fit": fit, "device_bytes": d.total_bytes(), "params": params,
           "torch": torch.__version__, "device": d.name()}
    e2e_lib.atomic_write(os.path.join(a.out, "memory.json"),
                         lambda f: f.write(json.dumps(doc, indent=2) + "\n"))


def op_times(torch, d, shapes, D, repeats, kinds):
    """The op alone, forward and backward, per (batch, tokens) shape and kind (torch |
    adaload): [{batch, tokens, <kind>: {fwd_s, bwd_s}}], medians of `repeats` after 2
    untimed runs (CUDA events; the host clock on the CPU)."""
    from model import modulate_fn
    dev = d.dev
    res = []
    ev = d.marks(3)
    for B, S in shapes:
        x = torch.randn(B, S, D, device=dev, requires_grad=True)
        e = torch.randn(B, 6, D, device=dev, requires_grad=True)
        dy = torch.randn(B, S, D, device=dev)
        row = {"batch": B, "tokens": S}
        for kind in kinds:
            f = modulate_fn(kind)
            fw, bw = [], []
            for r in range(2 + repeats):
                sc, sh = e.chunk(6, dim=1)[1], e.chunk(6, dim=1)[0]
                d.sync()
                ev.mark(0)
                y = f(x, sc, sh)
                ev.mark(1)
                y.backward(dy)
                ev.mark(2)
                d.sync()
                if r >= 2:
                    fw.append(ev.seconds(0, 1))
                    bw.append(ev.seconds(1, 2))
                x.grad = e.grad = None
            row[kind] = {"fwd_s": statistics.median(fw), "bwd_s": statistics.median(bw)}
        res.append(row)
        del x, e, dy
    return res


def op_bench(a):
    """The op's forward and backward alone (PyTorch chain and adaload's kernel) at the row
    counts of the micro-batches that the training steps run: op.json, medians in seconds."""
    import torch
    d = Dev(torch, a.device)
    summary = json.load(open(a.summary))
    shapes = set()
    for plan in a.plan:
        steps = e2e_lib.read_plan(plan, a.world_size)
        warm, meas = e2e_lib.run_steps(e2e_lib.read_sync(plan), a.first_step, a.warmup, a.steps)
        shapes |= {(len(ids), summary["buckets"][b]["tokens"]) for k in warm + meas
                   for b, _, ids in steps[k] if ids}
    D = a.width
    kinds = ("torch", "adaload") if d.cuda else ("torch",)
    res = op_times(torch, d, sorted(shapes), D, a.repeats, kinds)
    os.makedirs(a.out, exist_ok=True)
    e2e_lib.atomic_write(os.path.join(a.out, "op.json"), lambda f: f.write(
        json.dumps({"D": D, "shapes": res}, indent=2) + "\n"))


def main(argv=None):
    a = parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("train.py: PyTorch is not installed here (the e2e harness needs it)", file=sys.stderr)
        return 77
    if a.device == "cuda" and not torch.cuda.is_available():
        print("train.py: no CUDA device here (--device cpu runs the functional check)",
              file=sys.stderr)
        return 77
    {"train": train, "calibrate": calibrate, "op-bench": op_bench}[a.mode](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
