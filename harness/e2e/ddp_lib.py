"""ddp_lib.py -- the torch-free parts of the two-GPU experiment with real DDP (issue 23): each
rank's work from its own `adaload plan --per-rank` file, the measured figures from train.py
train's per-step records, the simulator's prediction given the measured all-reduce time, and
the comparison with the one-GPU replay of the same plans.

    import ddp_lib as D
    pid, first, mbs = D.load_rank("plans/dual-w2", rank=1, world=2)  # only rank 1's file
    D.check_plan_ids([pid0, pid1], "plans/dual-w2")             # every rank's file of one plan
    work = D.rank_schedule(mbs, warmup=1, count=6)              # groups, with the all-reduce's trigger
    m = D.measured(records, world=2, device_bytes=...)          # records: train.py's lines
    p = D.predicted(plan, meas_groups, m["allreduce_exposed_s"], m["optimizer_s_mean"])
    c = D.versus_replay(m, replay_config)                       # the all-reduce's share

A sync group is the steps up to one whose "sync" is true (every step for random,
sorted-window, verl-kk and sort-by-length; a window for lpt/kk). In a group each rank runs its
micro-batches under DDP's no_sync() except its LAST busy one, whose backward triggers the
all-reduce (a rank with no micro-batch in the group runs one zero-weight pass of the smallest
bucket so that it still joins the all-reduce: `idle_pass_s`, counted as idle, not compute).
The loss of a micro-batch of n samples is weighted W n / G (G: the group's samples over all
ranks): DDP averages over the W ranks, so the gradient is the group's mean, the same numbers as
replay.py's accumulation of n / G over every rank's micro-batches.

Measured per rank and group (train.py train): compute_s = forward + backward of its
micro-batches up to the moment the last gradient bucket is ready (on CUDA events recorded on
the compute stream: before the forward, in DDP's communication hook of the last bucket, which
DDP launches after every other bucket, and after backward() returns, whose stream waits on
the all-reduce; on the CPU the host clock at the same three points); allreduce_s = from that
moment to backward()'s return, i.e. the time the rank waits for the all-reduce to complete
(transfer not hidden behind its own backward plus the wait for slower ranks); optimizer_s
(AdamW, events); peak_bytes (peak allocated per micro-batch); step_s (host wall of the step,
synchronized). Figures over the measured groups:
- idle_fraction: the simulator's, over compute only: sum_g (max_r c - mean_r c) / sum_g max_r c
  (what replay.py measures on one GPU);
- wait_fraction: the share of each rank's compute + all-reduce time spent waiting in the
  all-reduce: sum_{g,r} a_gr / sum_{g,r} (c_gr + a_gr) (a_gr: allreduce_s, plus idle_pass_s
  for a rank with nothing to compute in the group: the simulator counts that rank idle);
- samples_per_s: samples / sum_g max_r (c_gr + a_gr) (compute and all-reduce; comparable to
  replay's samples / sum_g max_r c); samples_per_s_wall: samples / sum_g max_r (sum of step_s)
  (everything: input synthesis, optimizer, host synchronization);
- allreduce_exposed_s: the median over groups of min_r a_gr: the all-reduce time that no
  rank's compute hides (what the rank that finished last still waits) -- the simulator's
  "measured all-reduce time per step".
Predicted (the simulator given that time T and the optimizer's mean time): per group
span_g = max_r cost_gr + T; wait_fraction = sum_g sum_r (span_g - cost_gr) / (W sum_g span_g);
samples_per_s = samples / sum_g span_g; idle_fraction as the simulator (compute only).
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import e2e_lib  # noqa: E402  (also puts this tree's python/ on sys.path)

# The lent machines' rule: NVLink multicast stays off in every process (launcher and workers).
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}
IDLE_BAR, SPS_BAR = 0.05, 0.10
GROUP_KEYS = ("compute_s", "allreduce_s", "optimizer_s", "idle_pass_s", "step_s")


def multicast_problems(env):
    """The variables of NO_MULTICAST that env lacks or sets otherwise: ["NAME=value (want v)"]."""
    return ["%s=%s (want %s)" % (k, env.get(k, "<unset>"), v) for k, v in NO_MULTICAST.items()
            if env.get(k) != v]


def load_rank(folder, rank, world, first=0):
    """Rank `rank`'s part of a plan: folder/rank<rank>.jsonl only (adaload.plan.PlanBatches
    checks it is that rank's part of a plan for `world` ranks). Returns (plan_id, the file's
    first step, the MicroBatch list from step `first`)."""
    from adaload.plan import PlanBatches
    pb = PlanBatches(os.path.join(folder, "rank%d.jsonl" % rank), rank=rank, world_size=world,
                     start_step=first)
    return pb.plan_id, pb.first_step, list(pb.microbatches())


def check_plan_ids(ids, where):
    """Every rank read a part of the same plan (the plan_ids the ranks gathered); ValueError."""
    if not ids or None in ids or len(set(ids)) != 1:
        raise ValueError("%s: the ranks' files are not of one plan (plan_ids %s)" % (where, ids))


def rank_schedule(mbs, warmup, count):
    """One rank's groups from its MicroBatch list (which starts at the first step to run):
    whole sync groups, at least `warmup` steps of warm-up then at least `count` steps (the
    plan's sync marks, e2e_lib.run_steps). Each group: {"group": its index among the warm-up
    or the measured groups, "warmup", "steps": [MicroBatch], "trigger": index into steps of
    the rank's last busy micro-batch (its backward all-reduces; None: the rank idles the whole
    group and runs the zero-weight pass)}."""
    sync = [m.sync for m in mbs]
    warm, meas = e2e_lib.run_steps(sync, 0, warmup, count)
    out = []
    for is_warm, ks in ((True, warm), (False, meas)):
        for gi, g in enumerate(e2e_lib.groups(sync, ks)):
            steps = [mbs[k] for k in g]
            busy = [i for i, m in enumerate(steps) if m.ids]
            out.append({"group": gi, "warmup": is_warm, "steps": steps,
                        "trigger": busy[-1] if busy else None})
    return out


def loss_weight(n, group_samples, world):
    """The weight of a micro-batch of n samples in DDP (which averages over `world` ranks) so
    that the group's gradient is the mean over its samples (replay.py's n / G, times W)."""
    return world * n / group_samples


def _by_group(records, world):
    """{group: {key: [per rank]}, samples, tokens} of the measured (non-warm-up) records."""
    out = {}
    for x in records:
        if x["warmup"]:
            continue
        if not 0 <= x["rank"] < world:
            raise ValueError("record of step %d: rank %r outside [0, %d)" % (x["step"], x["rank"], world))
        g = out.setdefault(x["group"], dict({k: [0.0] * world for k in GROUP_KEYS},
                                            peak_bytes=[0] * world, samples=0, tokens=0,
                                            ar_rounds=[0] * world, steps=set(), seen=set()))
        for k in GROUP_KEYS:
            g[k][x["rank"]] += x.get(k, 0.0)
        g["peak_bytes"][x["rank"]] = max(g["peak_bytes"][x["rank"]], x["peak_bytes"])
        g["ar_rounds"][x["rank"]] += x.get("ar_rounds", 0)
        g["samples"] += x["samples"]
        g["tokens"] += x["tokens"]
        g["steps"].add(x["step"])
        g["seen"].add((x["step"], x["rank"]))
    for gi, g in out.items():
        if len(g["seen"]) != len(g["steps"]) * world:
            raise ValueError("group %d: %d records for %d steps x %d ranks" % (
                gi, len(g["seen"]), len(g["steps"]), world))
    return out


def measured(records, world, device_bytes):
    """The measured figures of one configuration (module docstring) from train.py train's
    per-step, per-rank records of one configuration."""
    by = _by_group(records, world)
    if not by:
        raise ValueError("no measured records")
    gs = [by[g] for g in sorted(by)]
    c = [g["compute_s"] for g in gs]
    # a rank with no micro-batch in a group waits for the others: its zero-weight pass too
    a = [[x + y for x, y in zip(g["allreduce_s"], g["idle_pass_s"])] for g in gs]
    span = sum(max(ci + ai for ci, ai in zip(cg, ag)) for cg, ag in zip(c, a))
    wall = sum(max(g["step_s"]) for g in gs)
    tot = sum(sum(cg) + sum(ag) for cg, ag in zip(c, a))
    samples = sum(g["samples"] for g in gs)
    busy = [x for x in records if not x["warmup"] and x["samples"]]
    util = [x["peak_bytes"] / device_bytes for x in busy] if device_bytes > 0 else []
    steps = sum(len(g["steps"]) for g in gs)
    rounds = [r for g in gs for r in g["ar_rounds"]]
    return {"steps": steps, "sync_groups": len(gs), "samples": samples,
            "tokens": sum(g["tokens"] for g in gs),
            "idle_fraction": e2e_lib.idle_fraction(c),
            "wait_fraction": sum(map(sum, a)) / tot if tot > 0 else 0.0,
            "samples_per_s": samples / span if span > 0 else 0.0,
            "samples_per_s_wall": samples / wall if wall > 0 else 0.0,
            "step_time_s": span / steps, "wall_step_time_s": wall / steps,
            "compute_s_total": sum(map(sum, c)),
            "allreduce_exposed_s": statistics.median(min(ag) for ag in a),
            "allreduce_wait_s_mean": sum(map(sum, a)) / (len(gs) * world),
            "optimizer_s_mean": sum(sum(g["optimizer_s"]) for g in gs) / (len(gs) * world),
            "idle_pass_s_total": sum(sum(g["idle_pass_s"]) for g in gs),
            "allreduce_rounds_min": min(rounds), "allreduce_rounds_max": max(rounds),
            "rank_compute_s": [sum(cg[r] for cg in c) for r in range(world)],
            "rank_allreduce_wait_s": [sum(ag[r] for ag in a) for r in range(world)],
            "rank_peak_bytes": [max(g["peak_bytes"][r] for g in gs) for r in range(world)],
            "peak_bytes_max": max(max(g["peak_bytes"]) for g in gs),
            "vram_util_mean": sum(util) / len(util) if util else 0.0,
            "vram_util_max": max(util) if util else 0.0,
            "jitter_cv": e2e_lib.jitter_cv(busy),
            "groups": [{"steps": sorted(g["steps"]), "samples": g["samples"],
                        **{k: g[k] for k in GROUP_KEYS + ("peak_bytes",)}} for g in gs]}


def _predict(loads, samples, t_ar, t_opt, world, steps):
    spans = [max(x) + t_ar for x in loads]
    t = sum(spans)
    wait = sum(s - v for s, x in zip(spans, loads) for v in x)
    return {"idle_fraction": e2e_lib.idle_fraction(loads),
            "wait_fraction": wait / (world * t) if t > 0 else 0.0,
            "samples_per_s": samples / t if t > 0 else 0.0,
            "samples_per_s_wall": samples / (t + t_opt * len(loads)) if t > 0 else 0.0,
            "step_time_s": t / steps if steps else 0.0}


def predicted(plan, meas, t_ar, t_opt=0.0, summary=None):
    """The simulator's figures for the measured groups `meas` (replay_lib.schedule's, step
    indices into plan.steps of replay_lib.load_ranks) with every group's all-reduce taking
    t_ar after the slowest rank's compute and the optimizer t_opt; the plan's own costs."""
    loads = [[sum(plan.steps[k][r][1] for k in g if plan.steps[k][r][2]) for r in range(plan.ranks)]
             for g in meas]
    samples = sum(len(ids) for g in meas for k in g for _, _, ids in plan.steps[k])
    out = _predict(loads, samples, t_ar, t_opt, plan.ranks, sum(len(g) for g in meas))
    out.update(samples=samples, sync_groups=len(meas), allreduce_s_given=t_ar,
               optimizer_s_given=t_opt)
    if summary is not None:
        m = summary["metrics"]
        out["epoch"] = {k: m[k] for k in ("epoch_idle_fraction", "samples_per_s", "vram_util_mean",
                                           "vram_util_max") if k in m}
    return out


def repredicted(plan, meas, records, t_ar, t_opt=0.0):
    """predicted() with each micro-batch's cost replaced by the measured mean compute of its
    shape (bucket, samples) in these records: what is left of a gap is not the cost model's."""
    by = {}
    for x in records:
        if x["samples"] and not x["warmup"]:
            by.setdefault((x["bucket"], x["samples"]), []).append(x["compute_s"])
    mean = {s: sum(v) / len(v) for s, v in by.items()}
    loads = [[sum(mean[(plan.steps[k][r][0], len(plan.steps[k][r][2]))] for k in g
                  if plan.steps[k][r][2]) for r in range(plan.ranks)] for g in meas]
    samples = sum(len(ids) for g in meas for k in g for _, _, ids in plan.steps[k])
    return _predict(loads, samples, t_ar, t_opt, plan.ranks, sum(len(g) for g in meas))


def within(m, p):
    """The issue's bar on the all-reduce-aware figures: wait fraction within +-0.05 and
    samples/s within +-10%."""
    return (abs(p["wait_fraction"] - m["wait_fraction"]) <= IDLE_BAR and m["samples_per_s"] > 0
            and abs(p["samples_per_s"] / m["samples_per_s"] - 1) <= SPS_BAR)


def versus_replay(m, replay):
    """The same plan replayed on one GPU (a config of replay.py's e2e.json) beside the DDP
    measurement m: the all-reduce's share of the DDP time per sample (1 - DDP samples/s /
    replay samples/s), the compute ratio (DDP compute / replayed compute: the all-reduce's
    traffic and kernels slowing the backward, plus GPU-to-GPU differences); None without a
    replay of the same groups (samples differ)."""
    if not replay:
        return None
    rm = replay["measured"]
    same = rm.get("samples") == m["samples"] and rm.get("steps") == m["steps"]
    return {"replay_name": replay["name"], "same_groups": same,
            "replay_idle_fraction": rm["idle_fraction"],
            "replay_samples_per_s": rm["samples_per_s"],
            "allreduce_share": 1 - m["samples_per_s"] / rm["samples_per_s"]
            if same and rm["samples_per_s"] else None,
            "compute_ratio": m["compute_s_total"] / rm["compute_s_total"]
            if same and rm.get("compute_s_total") else None}
