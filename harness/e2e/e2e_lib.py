"""e2e_lib.py -- the parts of the end-to-end experiment that need neither PyTorch nor a GPU:
the manifest slice, the plan's per-step predictions, the measured metrics from per-step
records, the model file of the trained model, and the run folder with e2e.json.

    import e2e_lib as L
    L.slice_manifest("datasets/default.csv", "slice.csv", samples=2000, seed=0)
    steps = L.read_plan("plan.jsonl", world_size=2)             # [[(bucket, cost, ids)] per rank]
    pred = L.predicted(steps, first=2, count=50, summary=json.load(open("summary.json")))
    meas = L.measured(records, world_size=2, device_bytes=150e9)  # records: train.py's lines
    run = L.new_run_folder("build/adaload", "results", "nvidia-h200-x2",
                           files={"e2e.json": L.e2e_document(configs, info)})
    # -> results/nvidia-h200-x2/e2e/<UTC>_<sha7>/, staged, published and indexed by adaload

The definitions (same as the planner's simulator, planner/README.md "Metrics"):
- idle fraction: sum over sync groups of (max - mean) / sum over sync groups of max, of
  each rank's compute time in the group (measured: CUDA-event time of forward + backward;
  predicted: the plan's cost per rank), idle ranks counting as 0. A sync group is one step,
  or for the planner's lpt/kk assignments the steps up to a step marked "sync": true (the
  ranks all-reduce only there: gradient accumulation in between);
- samples/s: samples of the steps / the steps' time (measured: wall time of each step on
  rank 0, synchronized; predicted: sum over steps of the slowest rank's cost);
- VRAM utilization: per micro-batch peak allocated bytes / the device's memory, mean and
  max over busy rank-steps (predicted: the planner's memory model, from the summary).
"""
import csv
import json
import os
import random
import subprocess
import sys
import tempfile

# adaload.plan (the plan file's reader) from this source tree when it is not installed.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from adaload.fit import lstsq  # noqa: E402  (the one solver, shared with calibrate.py)

SCHEMA = "adaload.e2e/1"
CONFIG_KEYS = ("name", "policy", "assign", "kernel", "measured", "predicted")


def slice_manifest(src, dst, samples, seed=0):
    """Writes a seeded random subset of `samples` rows of src (header kept, original order
    kept) to dst, atomically. Deterministic for (src, samples, seed). Returns the row count."""
    with open(src, newline="") as f:
        r = csv.reader(f)
        header = next(r, None)
        rows = list(r)
    if header is None:
        raise ValueError("%s: empty manifest" % src)
    if samples < 1 or samples > len(rows):
        raise ValueError("samples %d: must be in [1, %d] (%s has %d rows)"
                         % (samples, len(rows), src, len(rows)))
    keep = sorted(random.Random(seed).sample(range(len(rows)), samples))
    def write(f):
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for i in keep:
            w.writerow(rows[i])
    atomic_write(dst, write, newline="")
    return samples


def load_json(path):
    """The JSON document in path (the drivers' one reader of their work and run files)."""
    with open(path) as f:
        return json.load(f)


def read_text(path):
    with open(path) as f:
        return f.read()


def atomic_write(path, fill, newline=None):
    """fill(file) into a temporary file beside path, then rename it over path. Refuses to
    replace anything that is not a regular file."""
    if os.path.lexists(path) and not os.path.isfile(path):
        raise ValueError("%s exists and is not a regular file: not replaced" % path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp.", dir=d)
    try:
        with os.fdopen(fd, "w", newline=newline) as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_plan(path, world_size):
    """The plan file as steps[k][rank] = (bucket or None, cost, ids), read and checked by
    adaload.plan (the one reader of the format: end record, consecutive steps from 0)."""
    from adaload.plan import read_steps
    steps = []
    for k, ranks in read_steps(path, world_size):
        if k != len(steps):
            raise ValueError("%s: starts at step %d, not 0" % (path, k))
        steps.append([(e["bucket"], float(e["cost"]), e["ids"]) for e in ranks])
    return steps


def read_sync(path):
    """Per step of a plan file: True when the ranks all-reduce after it (the line's "sync":
    every step of random, same-bucket and sorted-window, a window's last step of lpt/kk)."""
    from adaload.plan import read_steps
    with open(path) as f:
        first = f.readline()
    world = len(json.loads(first)["ranks"]) if first.startswith('{"step"') else 1
    return [h["sync"] for _, h, _ in read_steps(path, world, with_head=True)]


def groups(sync, steps):
    """The sync groups (lists of step numbers, in order) made of the given consecutive
    steps: a group ends at a step whose sync is True. A group cut short by the end of
    `steps` is not returned."""
    out, cur = [], []
    for k in steps:
        cur.append(k)
        if sync[k]:
            out.append(cur)
            cur = []
    return out


def run_steps(sync, first, warmup, count):
    """(warm-up steps, measured steps) from step `first`: whole sync groups, at least
    `warmup` steps of warm-up and then at least `count` steps (fewer where the plan ends)."""
    n = len(sync)
    warm, meas = [], []
    k = first
    while k < n and (len(warm) < warmup or (warm and not sync[warm[-1]])):
        warm.append(k)
        k += 1
    while k < n and (len(meas) < count or not sync[meas[-1]]):
        meas.append(k)
        k += 1
    return warm, meas


def step_window(nsteps, first, count):
    """The steps [first, first + count) clipped to the plan; ValueError when empty."""
    if first < 0 or count < 1 or first >= nsteps:
        raise ValueError("steps [%d, %d+%d): outside the plan's %d steps" % (first, first, count,
                                                                           nsteps))
    return range(first, min(nsteps, first + count))


def idle_fraction(per_step):
    """sum (max - mean) / sum max over steps; per_step = list of per-rank loads."""
    num = den = 0.0
    for loads in per_step:
        mx = max(loads)
        num += mx - sum(loads) / len(loads)
        den += mx
    return num / den if den > 0 else 0.0


def predicted(steps, first, count, summary=None, sync=None):
    """The simulator's prediction for exactly the steps that ran (whole sync groups of
    [first, first + count)), from the plan's per-rank costs, plus the whole-epoch figures of
    the planner's summary when given. sync: read_sync of the plan (None: every step)."""
    win = step_window(len(steps), first, count)
    sync = sync or [True] * len(steps)
    gs = groups(sync, win)
    if not gs:
        raise ValueError("steps [%d, %d): no whole sync group" % (win.start, win.stop))
    loads = [[sum(steps[k][r][1] for k in g) for r in range(len(steps[g[0]]))] for g in gs]
    ran = [k for g in gs for k in g]
    samples = sum(len(ids) for k in ran for _, _, ids in steps[k])
    t = sum(max(x) for x in loads)
    out = {"steps": len(ran), "sync_groups": len(gs), "idle_fraction": idle_fraction(loads),
           "samples_per_s": samples / t if t > 0 else 0.0,
           "step_time_s": t / len(ran), "samples": samples}
    if summary is not None:
        m = summary["metrics"]
        out["epoch"] = {k: m[k] for k in ("epoch_idle_fraction", "samples_per_s", "vram_util_mean",
                                           "vram_util_max") if k in m}
        out["vram_util_mean"] = m.get("vram_util_mean")
        out["vram_util_max"] = m.get("vram_util_max")
    return out


REC_KEYS = ("step", "rank", "compute_s", "allreduce_s", "step_s", "peak_bytes", "samples", "tokens")


def check_records(records, world_size):
    """Every step has exactly one record per rank with all keys; returns {step: [rec by rank]}."""
    by = {}
    for i, r in enumerate(records):
        miss = [k for k in REC_KEYS if k not in r]
        if miss:
            raise ValueError("record %d: missing %s" % (i, ", ".join(miss)))
        if not 0 <= r["rank"] < world_size:
            raise ValueError("record %d: rank %r outside [0, %d)" % (i, r["rank"], world_size))
        row = by.setdefault(r["step"], [None] * world_size)
        if row[r["rank"]] is not None:
            raise ValueError("step %d rank %d: two records" % (r["step"], r["rank"]))
        row[r["rank"]] = r
    for s, row in by.items():
        if None in row:
            raise ValueError("step %d: no record of rank %d" % (s, row.index(None)))
    return dict(sorted(by.items()))


def jitter_cv(records):
    """The per-micro-batch noise of measured steps: micro-batches of the same shape (bucket
    and samples) ran several times; the pooled stddev of their compute_s over the pooled mean,
    each shape's time relative to its own mean (None without a shape measured twice). What
    `adaload plan --jitter-cv` takes for the jitter-aware idle."""
    by = {}
    for r in records:
        if r.get("samples", 0) > 0 and not r.get("warmup"):
            by.setdefault((r.get("bucket"), r["samples"]), []).append(r["compute_s"])
    num = den = 0.0
    for ts in by.values():
        if len(ts) < 2:
            continue
        m = sum(ts) / len(ts)
        if m <= 0:
            continue
        num += sum((t / m - 1.0) ** 2 for t in ts)
        den += len(ts) - 1
    return (num / den) ** 0.5 if den > 0 else None


def measured(records, world_size, device_bytes):
    """The measured figures of one configuration from train.py's per-step, per-rank records
    (a record's "sync", true when absent, closes its sync group)."""
    by = check_records(records, world_size)
    if not by:
        raise ValueError("no measured steps")
    rows = list(by.values())
    comp, wall, cur, cw, steps, pending = [], 0.0, [0.0] * world_size, 0.0, [], []
    for row in rows:
        cur = [c + r["compute_s"] for c, r in zip(cur, row)]
        cw += row[0]["step_s"]
        pending.append(row)
        if row[0].get("sync", True):  # a whole group: counted; a cut-off tail is not
            comp.append(cur)
            wall += cw
            steps += pending
            cur, cw, pending = [0.0] * world_size, 0.0, []
    if not comp:
        raise ValueError("no whole sync group among the measured steps")
    n = len(steps)
    samples = sum(r["samples"] for row in steps for r in row)
    tokens = sum(r["tokens"] for row in steps for r in row)
    busy = [r for row in steps for r in row if r["samples"] > 0]
    util = [r["peak_bytes"] / device_bytes for r in busy] if device_bytes > 0 else []
    return {"steps": n, "sync_groups": len(comp), "idle_fraction": idle_fraction(comp),
            "samples_per_s": samples / wall if wall > 0 else 0.0,
            "tokens_per_s": tokens / wall if wall > 0 else 0.0,
            "step_time_s": wall / n,
            "compute_s_mean": sum(r["compute_s"] for row in steps for r in row) / (n * world_size),
            "allreduce_s_mean": sum(r["allreduce_s"] for row in steps for r in row) / (n * world_size),
            "vram_util_mean": sum(util) / len(util) if util else 0.0,
            "vram_util_max": max(util) if util else 0.0,
            "peak_bytes_max": max(r["peak_bytes"] for row in steps for r in row),
            "jitter_cv": jitter_cv([r for row in steps for r in row]),
            "samples": samples, "tokens": tokens}


def model_params(width, depth, ffn, text_dim=4096, freq_dim=256, in_ch=16, out_ch=16,
                 patch=(1, 2, 2)):
    """Parameter count of harness/e2e/model.py's DiT (weights and biases; what the planner's
    memory model multiplies by state_bytes_per_param)."""
    D, F = width, ffn
    p = patch[0] * patch[1] * patch[2]
    block = (4 * (D * D + D)) * 2 + (D * F + F) + (F * D + D) + 6 * D + 4 * D + 2 * D
    embed = (in_ch * p * D + D) + (text_dim * D + D) + (D * D + D) + (freq_dim * D + D) \
        + (D * D + D) + (D * 6 * D + 6 * D)
    head = D * out_ch * p + out_ch * p + 2 * D
    return depth * block + embed + head


def model_file_doc(name, width, depth, heads, ffn, text_len, fixed_bytes, bytes_per_token,
                   params, source):
    """A planner model JSON (datasets/models/README.md) for the trained model, with the memory
    model measured in calibration: DDP keeps full fp32 weights, grads and AdamW state on every
    rank (16 bytes per parameter, not sharded); the rest of the fixed bytes is the reserve."""
    state = 16
    return {"name": name, "description": "e2e DiT of Wan 2.1 blocks (harness/e2e/model.py)",
            "hidden_size": width, "layers": depth, "heads": heads, "ffn_size": ffn,
            "text_len": text_len, "in_channels": 16, "out_channels": 16,
            "vae_stride": [4, 8, 8], "patch": [1, 2, 2], "params": int(params),
            "state_bytes_per_param": state, "shard_states": False,
            # The planner takes whole numbers >= 1 (a fit can put the intercept below the state).
            "reserve_bytes": int(max(1, round(fixed_bytes - params * state))),
            "mem_bytes_per_token": int(max(1, round(bytes_per_token))),
            "train_flop_factor": 4,
            "sources": {"memory": source, "shape": "harness/e2e/model.py with these options"}}


def fit_memory(points):
    """peak = c0 + B (bytes_per_token S + bytes_per_sample) over (batch, tokens, peak) points,
    the way the planner's profile reader fits it (per-sample term with >= 2 batch sizes, a
    negative one dropped); returns {intercept, bytes_per_token, bytes_per_sample, rms_rel,
    max_rel, range: {tokens_min, tokens_max, batch_max, microbatch_tokens_max}}."""
    pts = [(float(b), float(s), float(m)) for b, s, m in points]
    two_b = len({b for b, _, _ in pts}) >= 2
    x = None
    if two_b:
        x = lstsq([[b * s, 1.0, b] for b, s, _ in pts], [m for _, _, m in pts])
        if x is not None and x[2] < 0:
            x = None
    if x is None:
        if len({b * s for b, s, _ in pts}) < 2:
            raise ValueError("the memory fit needs points with at least 2 different batch x tokens")
        x = lstsq([[b * s, 1.0] for b, s, _ in pts], [m for _, _, m in pts]) + [0.0]
    c0, bpt, bps = x[1], x[0], x[2]
    rel = [abs(c0 + b * (bpt * s + bps) - m) / m for b, s, m in pts]
    return {"intercept": c0, "bytes_per_token": bpt, "bytes_per_sample": bps,
            "rms_rel": (sum(e * e for e in rel) / len(rel)) ** 0.5, "max_rel": max(rel),
            "range": {"tokens_min": int(min(s for _, s, _ in pts)), "tokens_max": int(max(s for _, s, _ in pts)),
                      "batch_max": int(max(b for b, _, _ in pts)),
                      "microbatch_tokens_max": int(max(b * s for b, s, _ in pts))}}


def calibration_points(buckets, points, max_tokens):
    """(batch, tokens) to measure: `points` token counts spread over the buckets (by tokens),
    and for each the batch sizes 1, 2, 4, ... up to the bucket's planned batch size (and
    max_tokens per micro-batch), that plus the planned size itself: points at several batch
    sizes and token counts that span what the plan will run."""
    bs = sorted(buckets, key=lambda b: b["tokens"])
    n = min(points, len(bs))
    pick = [bs[round(i * (len(bs) - 1) / max(1, n - 1))] for i in range(n)]
    out = []
    for b in pick:
        S, top = b["tokens"], max(1, int(b.get("batch_size") or 1))
        top = max(1, min(top, max_tokens // S))
        B = 1
        while B < top:
            out.append((B, S))
            B *= 2
        out.append((top, S))
    seen = set()
    return [p for p in out if not (p in seen or seen.add(p))]


def fit_line(xs, ys):
    """Least squares y = a + b x; returns (a, b)."""
    n = len(xs)
    if n < 2:
        raise ValueError("a line needs at least two points")
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("a line needs two different x")
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - b * mx, b


def e2e_document(configs, info):
    """The e2e.json object: schema, info (how it was run), configs[] each with name, policy,
    assign, kernel, measured, predicted, and the comparison of both per configuration."""
    out = []
    for c in configs:
        miss = [k for k in CONFIG_KEYS if k not in c]
        if miss:
            raise ValueError("config %r: missing %s" % (c.get("name"), ", ".join(miss)))
        m, p = c["measured"], c["predicted"]
        cmp = {"idle_fraction_diff": p["idle_fraction"] - m["idle_fraction"],
               "samples_per_s_ratio": (p["samples_per_s"] / m["samples_per_s"]
                                       if m["samples_per_s"] else None)}
        cmp["within_bar"] = (abs(cmp["idle_fraction_diff"]) <= 0.05 and cmp["samples_per_s_ratio"]
                             is not None and abs(cmp["samples_per_s_ratio"] - 1) <= 0.10)
        out.append(dict({k: c[k] for k in CONFIG_KEYS}, prediction_vs_measured=cmp,
                        **{k: v for k, v in c.items() if k not in CONFIG_KEYS}))
    return {"schema": SCHEMA, "info": info, "configs": out}


def new_run_folder(adaload, results_root, testbed, files, command_line=""):
    """Creates results_root/testbed/e2e/<UTC>_<sha7>[-N]/ through the runs library of the
    adaload command (the one owner of run folders, runs/run_folder.h): `adaload results new`
    stages a hidden folder with meta.json (git facts, both kernel hashes, the machine, the
    command line), the given files ({name: JSON object, or text}) are written into it, and
    `adaload results publish` renames it and adds it to results_root/index.jsonl; on any
    failure `adaload results discard` removes it. Returns the published folder's path."""
    def ada(*args):
        p = subprocess.run([adaload, "results"] + list(args) + ["--results", results_root],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise ValueError("adaload results %s: %s" % (args[0], (p.stderr or p.stdout).strip()))
        return p.stdout.strip()
    for fn in files:
        if os.sep in fn or fn.startswith(".") or fn == "meta.json":
            raise ValueError("file name %r: a plain name other than meta.json is needed" % fn)
    os.makedirs(results_root, exist_ok=True)
    staged = ada("new", "--kind", "e2e", "--testbed", testbed, "--owner-pid", str(os.getpid()),
                 "--command", command_line or "harness/e2e")
    try:
        for fn, doc in files.items():
            with open(os.path.join(staged, fn), "w") as f:
                if isinstance(doc, str):
                    f.write(doc)
                else:
                    json.dump(doc, f, indent=2)
                    f.write("\n")
                f.flush()
                os.fsync(f.fileno())
    except BaseException:
        ada("discard", staged)
        raise
    return ada("publish", staged)
