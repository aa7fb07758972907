"""ddp_train.py -- `train.py train`'s worker (one process per rank under torchrun): real
DistributedDataParallel over the ranks (NCCL on GPUs, gloo on the CPU), each rank reading only
its own per-rank plan file, following the plan's sync marks with no_sync() between syncs, and
recording per step, rank and sync group: compute time, the time waiting in the all-reduce,
the optimizer's time, peak memory (ddp_lib's docstring has the definitions and the loss
weights). Several plans ("jobs") run in one launch, each from the same initial weights with a
fresh AdamW; one DDP wrapper per launch (one kernel).

Per job, OUT/<name>/: steps-rank<r>.jsonl (one record per step: config, group, step, rank,
warmup, repeat (0), sync, trigger, compute_s, allreduce_s, optimizer_s, idle_pass_s, step_s,
peak_bytes, samples, tokens, bucket, loss, ar_rounds), `started` and `done` (written by rank 0:
a job started and not done failed), failed-rank<r>.txt (the error of a rank that failed).
OUT/allreduce-alone.json: a flat fp32 all-reduce of the gradients' size, timed alone after a
barrier (median of 5): the transfer without any wait. With --dump DIR each rank saves, after
each group it runs (warm-up included, numbered from 0), the averaged gradients (before the
optimizer step) and the parameters (after it) to DIR/<name>-g<i>-rank<r>.pt: the numerics
check against replay.py.
"""
import contextlib
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ddp_lib  # noqa: E402
import replay_lib  # noqa: E402


class HookState:
    """DDP's communication hook state: marks the moment the last bucket is ready (every
    gradient computed) when armed, and counts the all-reduce rounds (last buckets)."""

    def __init__(self, marks):
        self.marks, self.armed, self.rounds, self.grads = marks, False, 0, None


def last_bucket_hook(st, bucket):
    """DDP's default all-reduce (sum / world size), after marking when the last bucket -- which
    DDP launches after all others, in bucket order -- is ready."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    if bucket.is_last():
        st.rounds += 1
        if st.armed:
            st.marks.mark(1)
    return default_hooks.allreduce_hook(None, bucket)


def allreduce_alone(torch, dist, d, numel, repeats=5):
    """Seconds of one flat fp32 all-reduce of numel elements after a barrier (median)."""
    flat = torch.zeros(numel, dtype=torch.float32, device=d.dev)
    ts = []
    for r in range(2 + repeats):
        dist.barrier()
        d.sync()
        t0 = time.perf_counter()
        dist.all_reduce(flat)
        d.sync()
        if r >= 2:
            ts.append(time.perf_counter() - t0)
    del flat
    return statistics.median(ts)


def jobs_of(a):
    """[(name, plan source, summary path, estimate seconds or None)] from the options."""
    if a.plan:
        return [("plan", a.plan[0], a.summary, None)]
    est = list(a.estimate_s or [])
    kernel = a.kernel + ("-res" if getattr(a, "fused_residual", False) else "")
    return [(os.path.basename(os.path.normpath(p)) + "-" + kernel, p,
             a.summary or os.path.normpath(p) + ".summary.json", est[i] if i < len(est) else None)
            for i, p in enumerate(a.per_rank)]


def smallest_bucket(buckets):
    return min((b for b in buckets if not b.get("dropped")), key=lambda b: b["tokens"])


def train(a, launch_env):
    """The worker: see the module docstring. launch_env: the environment the process was
    started with (train.py's LAUNCH_ENV, taken before it sets anything). Exit 2 when it lacks
    the multicast-off variables."""
    import train as T
    bad = ddp_lib.multicast_problems(launch_env) + ddp_lib.multicast_problems(os.environ)
    if bad:
        print("train.py train: NVLink multicast must stay off in every process; the launcher's "
              "environment has %s" % ", ".join(bad), file=sys.stderr)
        raise SystemExit(2)
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from adaload.plan import PlanBatches
    import datetime
    dist.init_process_group("nccl" if a.device == "cuda" else "gloo",
                            timeout=datetime.timedelta(seconds=a.pg_timeout_s))
    rank, world = dist.get_rank(), dist.get_world_size()
    d = T.Dev(torch, a.device, int(os.environ.get("LOCAL_RANK", rank)))
    m, _ = T.build(a, torch, a.kernel, d)
    init = {k: v.detach().clone() for k, v in m.state_dict().items()}
    ev = d.marks(5)
    st = HookState(ev)
    ddp = DDP(m, device_ids=[d.dev.index] if d.cuda else None, bucket_cap_mb=a.bucket_mb)
    ddp.register_comm_hook(st, last_bucket_hook)
    params = [p for p in m.parameters() if p.requires_grad]
    os.makedirs(a.out, exist_ok=True)
    t_alone = allreduce_alone(torch, dist, d, sum(p.numel() for p in params))
    if rank == 0:
        e2e_write(os.path.join(a.out, "allreduce-alone.json"), {
            "seconds": t_alone, "bytes": 4 * sum(p.numel() for p in params), "world": world,
            "backend": dist.get_backend(), "device": d.name(), "torch": torch.__version__})
    gen = torch.Generator(device=d.dev)
    # DDP rebuilds its gradient buckets at the second synchronized iteration, with a collective
    # in that forward (measured on gloo: the faster rank's forward then holds the slower rank's
    # lead): two zero-weight iterations here, so no job's group pays for it.
    with open(jobs_of(a)[0][2]) as f:
        b = smallest_bucket(json.load(f)["buckets"])
    for i in range(2):
        gen.manual_seed(a.seed + i)
        inputs = T.batch_inputs(torch, m, b, 1, gen, d)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=d.cuda):
            loss = F.mse_loss(ddp(*inputs[:3]).float(), inputs[3].float()) * 0.0
        loss.backward()
        del inputs, loss
    m.zero_grad(set_to_none=True)
    d.sync()
    deadline = a.deadline or float("inf")
    for name, src, summary_path, est in jobs_of(a):
        # rank 0 decides whether the job fits in what is left (one decision for all ranks)
        go = [est is None or time.time() + est <= deadline]
        dist.broadcast_object_list(go, src=0)
        job = os.path.join(a.out, name) if a.per_rank else a.out
        os.makedirs(job, exist_ok=True)
        if not go[0]:
            if rank == 0:
                e2e_write(os.path.join(job, "skipped"), {"reason": "budget: estimated %.1f s, %.1f s left"
                                                          % (est, deadline - time.time())})
            continue
        if a.per_rank:
            pid, first_file, mbs = ddp_lib.load_rank(src, rank, world, a.first_step)
            ids = [None] * world
            dist.all_gather_object(ids, pid)
            ddp_lib.check_plan_ids(ids, src)  # ValueError: exits, torchrun ends the others
        else:  # a whole plan file (experiment.py): each rank decodes only its own entries
            pb = PlanBatches(src, rank=rank, world_size=world, start_step=a.first_step)
            first_file, mbs = pb.first_step, list(pb.microbatches())
        with open(summary_path) as f:
            buckets = json.load(f)["buckets"]
        sched = ddp_lib.rank_schedule(mbs, a.warmup, a.steps)
        m.load_state_dict(init)
        opt = T.make_opt(a, torch, m, d)
        if rank == 0:
            e2e_write(os.path.join(job, "started"), {"time": time.time()})
        dist.barrier()
        out = open(os.path.join(job, "steps-rank%d.jsonl" % rank), "w")
        try:
            for gi, grp in enumerate(sched):
                recs = run_group(a, torch, F, ddp, m, opt, d, ev, st, gen, grp, buckets, world,
                                 rank, first_file, T, name)
                for r in recs:
                    out.write(json.dumps(r) + "\n")
                out.flush()
                if a.dump:
                    dump(torch, m, os.path.join(a.dump, "%s-g%d-rank%d.pt" % (name, gi, rank)),
                         st.grads)
        except Exception as e:
            with open(os.path.join(job, "failed-rank%d.txt" % rank), "w") as f:
                f.write("%s: %s\n" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
            raise
        finally:
            out.close()
        del opt
        d.empty_cache()
        dist.barrier()
        if rank == 0:
            e2e_write(os.path.join(job, "done"), {"time": time.time()})
    dist.barrier()
    dist.destroy_process_group()


def e2e_write(path, doc):
    import e2e_lib
    e2e_lib.atomic_write(path, lambda f: f.write(json.dumps(doc) + "\n"))


def dump(torch, m, path, grads):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save({"grads": grads, "params": {k: p.detach().cpu().clone() for k, p in m.named_parameters()}},
               path)


def run_group(a, torch, F, ddp, m, opt, d, ev, st, gen, grp, buckets, world, rank, first_file,
              T, name):
    """One sync group on this rank: its micro-batches under no_sync() but the trigger (its last
    busy one), whose backward all-reduces; the zero-weight pass when it has none; then AdamW.
    Returns the group's per-step records."""
    st.rounds = 0
    recs = []
    steps = grp["steps"]
    for i, mb in enumerate(steps):
        t0 = time.perf_counter()
        trig = grp["trigger"] == i or (grp["trigger"] is None and i == len(steps) - 1)
        n = len(mb.ids)
        b = buckets[mb.bucket] if n else smallest_bucket(buckets)
        rec = {"config": name, "group": grp["group"], "step": mb.step, "rank": rank,
               "warmup": grp["warmup"], "repeat": 0, "sync": mb.sync, "trigger": trig,
               "compute_s": 0.0, "allreduce_s": 0.0, "optimizer_s": 0.0, "idle_pass_s": 0.0,
               "samples": n, "tokens": b["tokens"] * n if n else 0,
               "bucket": mb.bucket, "loss": 0.0, "ar_rounds": 0}
        d.sync()
        d.reset_peak()
        if n or trig:
            gen.manual_seed(replay_lib._mb_seed(a.seed, mb.step - first_file, rank, 0))
            inputs = T.batch_inputs(torch, m, b, max(n, 1), gen, d)
            w = ddp_lib.loss_weight(n, mb.group_samples, world) if n else 0.0
            d.sync()
            d.reset_peak()
            st.armed = trig
            ev.mark(0)
            if trig and a.straggle_s and rank == world - 1:
                time.sleep(a.straggle_s)  # tests: a slower rank (host clock: counted as compute)
            with (contextlib.nullcontext() if trig else ddp.no_sync()):
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=d.cuda):
                    out = ddp(*inputs[:3])
                    loss = F.mse_loss(out.float(), inputs[3].float(), reduction="mean") * w
                loss.backward()
            if not trig:
                ev.mark(1)
            ev.mark(2)
            d.sync()
            st.armed = False
            c = ev.seconds(0, 1)
            rec["compute_s" if n else "idle_pass_s"] = c
            rec["allreduce_s"] = ev.seconds(1, 2) if trig else 0.0
            rec["loss"] = float(loss.detach())
            del inputs, out, loss
        rec["peak_bytes"] = d.peak() if (n or trig) else d.allocated()
        if i == len(steps) - 1:
            if not mb.sync:
                raise ValueError("group ends at step %d without a sync mark" % mb.step)
            st.grads = {k: p.grad.detach().cpu().clone() for k, p in m.named_parameters()} \
                if a.dump else None
            ev.mark(3)
            opt.step()
            opt.zero_grad(set_to_none=True)
            ev.mark(4)
            d.sync()
            rec["optimizer_s"] = ev.seconds(3, 4)
            rec["ar_rounds"] = st.rounds
        rec["step_s"] = time.perf_counter() - t0
        recs.append(rec)
    return recs
