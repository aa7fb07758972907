#!/usr/bin/env python3
"""train.py -- the end-to-end experiment's PyTorch programs: `train` (real DDP over torchrun's
ranks: ddp_train.py), and the two single-GPU measurements the experiments need (calibrate,
op-bench).

  torchrun --nproc-per-node 2 train.py train --per-rank plans/dual-w2 [--per-rank plans/...]
           --kernel torch|adaload --out DIR [--first-step K] [--steps N] [--warmup W]
           [--estimate-s S ... --deadline T] [--dump DIR]
  torchrun --nproc-per-node 2 train.py train --plan plan.jsonl --summary summary.json ...
  python3 train.py calibrate --summary summary.json --out DIR      # profile.csv, memory.json
  python3 train.py op-bench --plan a.jsonl [--plan b.jsonl ...] --summary summary.json \
           --world-size 2 --out DIR                                   # op.json
  (model options on every mode: --width 1536 --depth 4 --heads 12 --ffn 8960 --text-len 512
   [--fused-residual])

--fused-residual (with --kernel adaload only; issue 22): the model's residual adds and the
norms after them run as adaload.torch.lnmod_res at all three sites of each block (model.py's
docstring); with --kernel torch it is a usage error (exit 2). op-bench still times the
unfused op (lnmod) only.

train: each rank reads only its own per-rank file (`adaload plan --per-rank DIR` writes
DIR/rank<r>.jsonl; a whole --plan file is read for this rank's entries only), the ranks check
that their files are of one plan (plan_id), and train the plan's sync groups with
DistributedDataParallel: no_sync() for every micro-batch of a group but the rank's last busy
one, whose backward all-reduces (NCCL on GPUs, gloo on the CPU), loss weighted W n / G (the
group's mean, the numerics of replay.py's accumulation), one AdamW step per group. Measured
per step, rank and group: compute (forward + backward up to the last gradient bucket),
the wait in the all-reduce, the optimizer, peak memory (ddp_lib.py's docstring: how each is
timed). Output per job: OUT/<plan folder>-<kernel>/steps-rank<r>.jsonl (ddp_train.py).

NVLink multicast stays off in every process, as the lent machines require: the launcher
must set NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 in
the environment it starts the workers with (ddp.py and experiment.py do); `train` refuses
(exit 2) when the environment it was started with lacks any of them; every mode sets them
before torch is imported.

--device cpu is a functional check only (gloo instead of NCCL, fp32 instead of bf16
autocast, host timers instead of CUDA events, peak_bytes 0, the PyTorch chain only): it
runs the same loop, plan reading, all-reduce and records on a machine without a GPU; its
numbers mean nothing. The experiment uses --device cuda (the default).
"""
import os

# The environment this process was started with (train checks the launcher's variables).
LAUNCH_ENV = dict(os.environ)
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
    p.add_argument("--per-rank", action="append", help="train: a folder of `adaload plan "
                   "--per-rank` (each rank reads only rank<r>.jsonl); repeat for several plans "
                   "run in one launch (summary: the folder's name + .summary.json)")
    p.add_argument("--estimate-s", type=float, action="append",
                   help="train: the predicted seconds of each --per-rank job, in order")
    p.add_argument("--deadline", type=float, default=None,
                   help="train: a job whose --estimate-s would end after this time "
                        "(seconds since the epoch) is skipped")
    p.add_argument("--dump", default=None, help="train: gradients and parameters after each "
                   "job's first group to DIR/<job>-rank<r>.pt (the numerics check)")
    p.add_argument("--straggle-s", type=float, default=0.0,
                   help="train, tests only: the last rank sleeps this long inside the compute of "
                        "each all-reduce-triggering micro-batch (a slower rank: the others' wait)")
    p.add_argument("--pg-timeout-s", type=float, default=300.0,
                   help="train: a collective that waits longer fails (a rank died or diverged)")
    p.add_argument("--summary")
    p.add_argument("--out", required=True)
    p.add_argument("--kernel", choices=("torch", "adaload"), default="torch")
    p.add_argument("--fused-residual", action="store_true",
                   help="the residual adds + norms as adaload's fused op (adaload.torch.lnmod_res) "
                        "at all three sites of each block; --kernel adaload only")
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
    p.add_argument("--optimizer", choices=("adamw", "sgd"), default="adamw",
                   help="sgd: for the numerics check only (test_ddp_torch)")
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
    if a.mode == "op-bench" and not a.plan:
        p.error("op-bench needs --plan")
    if a.mode == "train" and (bool(a.plan) == bool(a.per_rank) or len(a.plan or [0]) != 1):
        p.error("train takes one --plan or one or more --per-rank")
    if a.mode != "train" and a.per_rank:
        p.error("--per-rank is for train")
    if not a.summary and not (a.mode == "train" and a.per_rank):
        p.error("%s needs --summary" % a.mode)
    if a.steps < 1 or a.warmup < 0 or a.first_step < 0:
        p.error("--steps >= 1, --warmup >= 0, --first-step >= 0")
    if a.fused_residual and a.kernel != "adaload":
        p.error("--fused-residual is adaload's fused op: it needs --kernel adaload (not %s)" % a.kernel)
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
    fused = bool(getattr(a, "fused_residual", False))
    if fused and kernel != "adaload":
        raise ValueError("--fused-residual needs the adaload kernel, not %s" % kernel)
    m = WanDiT(width=a.width, depth=a.depth, heads=a.heads, ffn=a.ffn, text_len=a.text_len,
               modulate=kernel, fused_residual=fused).to(d.dev)
    return m, make_opt(a, torch, m, d)


def make_opt(a, torch, m, d):
    """AdamW (the experiment's), or plain SGD with --optimizer sgd: the numerics check of DDP
    against the replay, whose updates do not amplify the rounding of tiny gradients as
    AdamW's g / (sqrt(v) + eps) does."""
    if getattr(a, "optimizer", "adamw") == "sgd":
        return torch.optim.SGD(m.parameters(), lr=a.lr)
    return torch.optim.AdamW(m.parameters(), lr=a.lr, fused=d.cuda)


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


def train(a):
    """Real DDP over torchrun's ranks: ddp_train.py (its docstring)."""
    import ddp_train
    ddp_train.train(a, LAUNCH_ENV)


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
