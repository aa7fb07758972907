"""replay_lib.py -- the torch-free parts of the one-GPU experiment with replayed ranks (issue
20): W data-parallel ranks of a plan run one after the other on one GPU, from the files of
`adaload plan --per-rank`, and measured against the simulator's prediction for the same
sync groups.

    import replay_lib as R
    plan = R.load_ranks("plans/dual-w8", ranks=8)   # PlanBatches of every rank, checked
    warm, meas = R.schedule(plan, first=0, warmup=1, count=8)   # whole sync groups
    recs, opt_s = R.replay(executor, plan, buckets, warm, meas, repeats=2, repeat_groups=1)
    m = R.measured(recs, 8, device_bytes)           # idle, samples/s, VRAM, jitter
    p = R.predicted(plan, meas, summary)            # the same figures from the plan's costs

The definitions are the simulator's (planner/README.md "Metrics"), over the replayed sync
groups: a rank's load in a group is the sum of its micro-batches' compute (forward + backward;
measured: CUDA events, predicted: the plan's cost), an idle rank counts 0;
idle = sum_g (max_r - mean_r) / sum_g max_r; samples/s of the emulated cluster = samples /
sum_g max_r. What replaying leaves out: the all-reduce and its overlap with the backward,
and the optimizer step (timed, reported apart as `optimizer_s_mean`); the two-GPU issue
measures them.

An executor runs one micro-batch: microbatch(bucket, n, weight, seed) -> (compute_s,
peak_bytes), idle_bytes(), optimizer_step() -> seconds, zero_grad(), total_bytes().
replay_torch.TorchExecutor is the real one (a GPU, or PyTorch on the CPU); StandIn below is a
pure-Python device whose truth is a given cost and memory model with seeded jitter: it
exercises every step of the driver where PyTorch is missing, and its numbers are labelled
as such ("device": "stand-in"), never results.
"""
import math
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import e2e_lib  # noqa: E402  (also puts this tree's python/ on sys.path)

# name: (policy, assign, equal-token at M_mem). The order is the run order under a budget.
CONFIGS = {
    "dual": ("dual", "sorted-window", False),           # adaload plan's default
    "verl-kk": ("equal-token", "verl-kk", True),        # the strongest public baseline
    "eqtok-random": ("equal-token", "random", True),    # what bucket loaders do
    "sort-by-length": ("equal-token", "sort-by-length", True),
    "dual-random": ("dual", "random", False),
}


class OutOfMemory(Exception):
    """A micro-batch did not fit: the configuration fails (named step, rank, shape)."""


class OverBudget(Exception):
    """The replay passed its deadline between two groups: the configuration is cut short."""


class Plan:
    """Every rank's micro-batches of one plan, read from its per-rank files:
    steps[k][r] = (bucket, cost, ids), sync[k], group_samples[k]."""

    def __init__(self, steps, sync, group_samples, plan_id, first_step):
        self.steps, self.sync, self.group_samples = steps, sync, group_samples
        self.plan_id, self.first_step = plan_id, first_step
        self.ranks = len(steps[0]) if steps else 0


def load_ranks(folder, ranks):
    """Reads folder/rank<r>.jsonl for r < ranks with adaload.plan.PlanBatches (the one reader
    of the format: each file checked as rank r's part of one plan); the files must share one
    plan_id, their steps, sync marks and group totals. ValueError otherwise."""
    from adaload.plan import PlanBatches
    per = []
    for r in range(ranks):
        path = os.path.join(folder, "rank%d.jsonl" % r)
        pb = PlanBatches(path, rank=r, world_size=ranks)
        per.append((pb.plan_id, pb.first_step, list(pb.microbatches())))
    pid, first, mb0 = per[0]
    for r, (p, f, mbs) in enumerate(per):
        if p != pid or f != first:
            raise ValueError("%s: rank %d's file is of another plan (plan_id %s, rank 0's %s)"
                             % (folder, r, p, pid))
        if [(m.step, m.sync, m.group_samples) for m in mbs] != \
                [(m.step, m.sync, m.group_samples) for m in mb0]:
            raise ValueError("%s: rank %d's steps differ from rank 0's" % (folder, r))
    steps = [[(per[r][2][i].bucket, per[r][2][i].cost, list(per[r][2][i].ids))
              for r in range(ranks)] for i in range(len(mb0))]
    return Plan(steps, [m.sync for m in mb0], [m.group_samples for m in mb0], pid, first)


def schedule(plan, first, warmup, count):
    """(warm-up groups, measured groups): whole sync groups from step `first`, at least
    `warmup` steps of warm-up, then at least `count` steps (fewer where the plan ends).
    Each group is a list of step indices into plan.steps."""
    warm, meas = e2e_lib.run_steps(plan.sync, first, warmup, count)
    return e2e_lib.groups(plan.sync, warm), e2e_lib.groups(plan.sync, meas)


def estimate_s(plan, groups, times=1):
    """Predicted seconds of replaying `groups` `times` times: every rank's cost, in turn."""
    return times * sum(c for g in groups for k in g for _, c, _ in plan.steps[k])


def _mb_seed(seed, k, r, rep):
    return (seed * 1000003 + k * 101 + r * 7919 + rep * 65537) % (2 ** 63)


def replay(ex, plan, buckets, warm, meas, repeats=0, repeat_groups=0, seed=0, deadline=None,
           clock=None):
    """Runs the groups on executor ex: per group, rank by rank, each of the rank's
    micro-batches of the group's steps (loss weight = its samples / the group's samples, so
    the accumulated gradient is W-rank DDP's mean), then one optimizer step. Then the first
    `repeat_groups` measured groups `repeats` more times (gradients discarded) for the
    per-micro-batch jitter. Returns (records, optimizer seconds of the measured groups);
    a record per step and rank: group, step, rank, warmup, repeat, compute_s, peak_bytes,
    samples, tokens, bucket, sync. OutOfMemory propagates; OverBudget when clock() passes
    `deadline` before a group starts (clock: time.time unless given)."""
    clock = clock or time.time
    recs, opt_s = [], []
    passes = [(g, i, True, 0) for i, g in enumerate(warm)]
    passes += [(g, i, False, 0) for i, g in enumerate(meas)]
    passes += [(g, i, False, rep) for rep in range(1, repeats + 1)
               for i, g in enumerate(meas[:repeat_groups])]
    for g, gi, warmup, rep in passes:
        if deadline is not None and clock() > deadline:
            raise OverBudget("stopped before group %d (pass %d): the budget ran out" % (gi, rep))
        for r in range(plan.ranks):
            for k in g:
                b, _, ids = plan.steps[k][r]
                n = len(ids)
                if n:
                    t, peak = ex.microbatch(buckets[b], n, n / plan.group_samples[k],
                                            _mb_seed(seed, k, r, rep))
                else:
                    t, peak = 0.0, ex.idle_bytes()
                recs.append({"group": gi, "step": k + plan.first_step, "rank": r,
                             "warmup": warmup, "repeat": rep, "compute_s": t,
                             "peak_bytes": peak, "samples": n,
                             "tokens": buckets[b]["tokens"] * n if n else 0,
                             "bucket": b, "sync": plan.sync[k]})
        if rep == 0:
            s = ex.optimizer_step()
            if not warmup:
                opt_s.append(s)
        else:
            ex.zero_grad()
    return recs, opt_s


def _loads(recs, ranks):
    """Per measured group, each rank's summed compute_s (records of the first pass only)."""
    by = {}
    for x in recs:
        if x["warmup"] or x["repeat"]:
            continue
        by.setdefault(x["group"], [0.0] * ranks)[x["rank"]] += x["compute_s"]
    return [by[g] for g in sorted(by)]


def measured(recs, ranks, device_bytes, opt_s=()):
    """The measured figures (module docstring) from replay's records."""
    first = [x for x in recs if not x["warmup"] and not x["repeat"]]
    if not first:
        raise ValueError("no measured records")
    loads = _loads(recs, ranks)
    t = sum(max(g) for g in loads)
    samples = sum(x["samples"] for x in first)
    busy = [x for x in first if x["samples"]]
    util = [x["peak_bytes"] / device_bytes for x in busy] if device_bytes > 0 else []
    steps = len({x["step"] for x in first})
    return {"steps": steps, "sync_groups": len(loads),
            "idle_fraction": e2e_lib.idle_fraction(loads),
            "samples_per_s": samples / t if t > 0 else 0.0,
            "step_time_s": t / steps, "samples": samples,
            "tokens": sum(x["tokens"] for x in first),
            "compute_s_total": sum(x["compute_s"] for x in first),
            "rank_compute_s": [sum(g[r] for g in loads) for r in range(ranks)],
            "optimizer_s_mean": sum(opt_s) / len(opt_s) if opt_s else None,
            "vram_util_mean": sum(util) / len(util) if util else 0.0,
            "vram_util_max": max(util) if util else 0.0,
            "peak_bytes_max": max(x["peak_bytes"] for x in first),
            "jitter_cv": e2e_lib.jitter_cv([x for x in recs if not x["warmup"]]),
            "repeated_microbatches": sum(1 for x in recs if x["repeat"] and x["samples"])}


def predicted(plan, meas, summary=None):
    """The simulator's figures for exactly the measured groups (e2e_lib.predicted over the
    plan's own per-rank costs), plus the summary's whole-epoch figures."""
    ks = [k for g in meas for k in g]
    return e2e_lib.predicted(plan.steps, ks[0], len(ks), summary, plan.sync)


def lognormal_factor(rng, cv):
    """A lognormal of mean 1 and coefficient of variation cv (the planner's jitter model)."""
    if cv <= 0:
        return 1.0
    s2 = math.log(1.0 + cv * cv)
    return math.exp(rng.gauss(-s2 / 2.0, math.sqrt(s2)))


def jitter_predicted(plan, meas, cv, epochs=64, seed=0):
    """Idle and samples/s of the measured groups when every micro-batch's predicted cost is
    multiplied by an independent lognormal of mean 1 and CV cv (planner/README.md "Jitter"),
    averaged over `epochs` seeded draws; None when cv is None."""
    if cv is None:
        return None
    rng = random.Random(seed)
    samples = sum(len(ids) for g in meas for k in g for _, _, ids in plan.steps[k])
    idle = sps = 0.0
    for _ in range(epochs):
        loads = [[sum(plan.steps[k][r][1] * lognormal_factor(rng, cv) for k in g
                      if plan.steps[k][r][2]) for r in range(plan.ranks)] for g in meas]
        t = sum(max(x) for x in loads)
        idle += e2e_lib.idle_fraction(loads)
        sps += samples / t if t > 0 else 0.0
    return {"cv": cv, "epochs": epochs, "idle_fraction": idle / epochs,
            "samples_per_s": sps / epochs}


def mb_bytes(mm, n, tokens):
    """The planner's memory model (summary memory_model) for n samples of `tokens` tokens."""
    return mm["fixed_bytes"] + n * (mm["bytes_per_token"] * tokens + mm.get("bytes_per_sample", 0)
                                    + mm.get("bytes_per_token_sq", 0) * tokens * tokens)


def memory_check(recs, summary):
    """Each measured micro-batch's peak against what the plan's memory model predicted for
    it: the largest measured / predicted, how many went above, and the usable bytes."""
    mm, bs = summary["memory_model"], summary["buckets"]
    worst, over = 0.0, 0
    for x in recs:
        if x["samples"] and not x["warmup"] and not x["repeat"]:
            p = mb_bytes(mm, x["samples"], bs[x["bucket"]]["tokens"])
            worst = max(worst, x["peak_bytes"] / p)
            over += x["peak_bytes"] > p
    return {"measured_over_predicted_max": worst, "microbatches_above_prediction": over,
            "usable_bytes": summary["gpu"]["usable_bytes"]}


def explain(plan, meas, recs):
    """Where a gap comes from: the measured seconds of each shape (bucket, samples) against
    the plan's cost for it (cost_ratio: measured / predicted over the measured groups, and
    per shape its spread), and the figures re-predicted with each micro-batch's cost replaced
    by the measured mean of its shape (if those match the measurement, the gap is the cost
    model's; what remains is jitter)."""
    by, cost = {}, {}
    for x in recs:
        if x["samples"] and not x["warmup"]:
            by.setdefault((x["bucket"], x["samples"]), []).append(x["compute_s"])
    for g in meas:
        for k in g:
            for b, c, ids in plan.steps[k]:
                if ids:
                    cost[(b, len(ids))] = c
    ratios = [sum(ts) / len(ts) / cost[s] for s, ts in by.items() if cost.get(s)]
    mean_t = {s: sum(ts) / len(ts) for s, ts in by.items()}
    loads = [[sum(mean_t[(plan.steps[k][r][0], len(plan.steps[k][r][2]))] for k in g
                  if plan.steps[k][r][2]) for r in range(plan.ranks)] for g in meas]
    samples = sum(len(ids) for g in meas for k in g for _, _, ids in plan.steps[k])
    t = sum(max(x) for x in loads)
    tot_m = sum(x["compute_s"] for x in recs if x["samples"] and not x["warmup"] and not x["repeat"])
    tot_p = sum(c for g in meas for k in g for _, c, ids in plan.steps[k] if ids)
    return {"cost_ratio": tot_m / tot_p if tot_p else None,
            "shape_ratio_min": min(ratios) if ratios else None,
            "shape_ratio_max": max(ratios) if ratios else None,
            "shapes": len(by),
            "repredicted_idle_fraction": e2e_lib.idle_fraction(loads),
            "repredicted_samples_per_s": samples / t if t > 0 else 0.0}


class StandIn:
    """A pure-Python device: compute_s = t0 + n (alpha S + beta S^2 + gamma) x (1 + skew S /
    1e5) x a lognormal of CV jitter (seeded by the micro-batch); peak_bytes = fixed + n
    (bytes_per_token S + bytes_per_sample); out of memory above capacity. For the CPU check
    of the driver (module docstring), never for results."""

    def __init__(self, alpha, beta, gamma, fixed, bpt, bps=0.0, t0=0.0, jitter=0.0, skew=0.0,
                 capacity=150109880320):
        self.c = (alpha, beta, gamma, fixed, bpt, bps, t0, jitter, skew, capacity)
        self.steps = 0

    def microbatch(self, bucket, n, weight, seed):
        al, be, ga, fixed, bpt, bps, t0, jit, skew, cap = self.c
        S = bucket["tokens"]
        peak = fixed + n * (bpt * S + bps)
        if peak > cap:
            raise OutOfMemory("stand-in: %d x %d tokens need %d bytes" % (n, S, peak))
        t = t0 + n * (al * S + be * S * S + ga) * (1 + skew * S / 1e5)
        return t * lognormal_factor(random.Random(seed), jit), int(peak)

    def idle_bytes(self):
        return int(self.c[3])

    def optimizer_step(self):
        self.steps += 1
        return 0.0

    def zero_grad(self):
        pass

    def total_bytes(self):
        return self.c[9]


def op_share(recs, op, calls, kernel):
    """The op's share of the measured compute: per busy micro-batch the op alone at its shape
    (op[(samples, tokens)][kernel] = {fwd_s, bwd_s}, train.py op-bench's table) x calls per
    forward x (2 forwards under checkpointing + 1 backward), over the micro-batches' compute."""
    if not op:
        return {"op_s_total": None, "op_share_of_compute": None}
    t = c = 0.0
    for x in recs:
        if x["samples"] and not x["warmup"] and not x["repeat"]:
            o = op.get((x["samples"], x["tokens"] // x["samples"]), {}).get(kernel)
            if o is None:
                return {"op_s_total": None, "op_share_of_compute": None}
            t += calls * (2 * o["fwd_s"] + o["bwd_s"])
            c += x["compute_s"]
    return {"op_s_total": t, "op_share_of_compute": t / c if c > 0 else None}
