"""peer_json.py -- the peers' Google Benchmark JSON (standard library only, so it is tested
without PyTorch): one ceiling for every % of copy, and how a wrong peer is written.

One ceiling (issue 17): a peer's pct_copy_bw is against adaload's own copy of the same bytes
timed in the same run (copy/bytes<N>[/graph<K>], the median of its repetitions'
bytes_per_second), exactly the ceiling of ours. No Python reads adaload's bench.json: the C
side (runfiles/run_bench.h, the one reader of that file) puts those bandwidths into the shape
list it hands the script, as copy_bytes_per_second and bwd_copy_bytes_per_second beside
copy_name and bwd_copy_name (ceilings_of). Without them (the script run on its own, on
`adaload bench --list-shapes`) pct_copy_bw is 0, which every reader shows as missing.
PyTorch's own dst.copy_(src) of the same bytes stays as a labelled extra: copy/torch/bytes<N>
and the counter pct_torch_copy_bw; it is never the ceiling.

A peer whose output or gradients are wrong at a shape (peer_ops.judge) is written as an error
entry whose message starts with "wrong result" (WRONG), never with a time: its speed is not a
number any reader can turn into a ratio (runfiles/run_bench.h reads that prefix).
"""
import json
import math
import os
import statistics

WRONG = "wrong result"


def ceilings_of(shapes):
    """{adaload copy name: bytes/s} from the shape list adaload gave the script: each shape's
    copy_bytes_per_second (of copy_name) and bwd_copy_bytes_per_second (of bwd_copy_name);
    only finite positive numbers."""
    out = {}
    for sh in shapes:
        for name_key, bw_key in (("copy_name", "copy_bytes_per_second"),
                                 ("bwd_copy_name", "bwd_copy_bytes_per_second")):
            v, name = sh.get(bw_key), sh.get(name_key)
            if (name and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                    and v > 0):
                out[name] = float(v)
    return out


def assemble(results, shapes, torch_copy):
    """The peers' benchmark entries of a run: % of copy against adaload's ceilings from the
    shape list (ceilings_of), torch's copies only as pct_torch_copy_bw."""
    return benchmarks(results, ceilings_of(shapes), torch_copy)


def entry(name, fam, reps, i, t, iters):
    return {"name": name, "family_index": fam, "per_family_instance_index": 0,
            "run_name": name, "run_type": "iteration", "repetitions": reps,
            "repetition_index": i, "threads": 1, "iterations": iters,
            "real_time": t * 1e6, "cpu_time": t * 1e6, "time_unit": "us"}


def benchmarks(results, ceilings, torch_copy):
    """The benchmark entries of results: each {"name", "reps": [(s, iters)], "bytes",
    "copy", "counters"} or {"name", "error"}, "copy" naming adaload's copy of the same
    bytes; ceilings: adaload's copies' bandwidths, torch_copy: torch's copies of the same
    bytes, both {adaload copy name: bytes/s}."""
    benches = []
    for fam, r in enumerate(results):
        name = r["name"]
        if "error" in r:
            e = entry(name, fam, 1, 0, 0.0, 0)
            e.update(error_occurred=True, error_message=r["error"])
            benches.append(e)
            continue
        ceiling = ceilings.get(r.get("copy"), 0.0)
        own = torch_copy.get(r.get("copy"), 0.0)
        rows = []
        for i, (t, iters) in enumerate(r["reps"]):
            bw = r["bytes"] / t if t > 0 else 0.0
            e = entry(name, fam, len(r["reps"]), i, t, iters)
            e.update(bytes_per_second=bw,
                     pct_copy_bw=100.0 * bw / ceiling if ceiling > 0 else 0.0,
                     pct_torch_copy_bw=100.0 * bw / own if own > 0 else 0.0,
                     min_bytes=float(r["bytes"]))
            e.update(r.get("counters", {}))
            rows.append(e)
        benches.extend(rows)
        if len(rows) > 1:
            benches.extend(aggregates(name, fam, rows))
    for b in benches:  # strict JSON: never NaN or Infinity
        for key, v in b.items():
            if isinstance(v, float) and not math.isfinite(v):
                b[key] = 0.0
    return benches


def aggregates(name, fam, rows):
    keys = [k for k, v in rows[0].items()
            if isinstance(v, (int, float)) and k not in ("family_index", "per_family_instance_index",
                                                         "repetitions", "repetition_index",
                                                         "threads", "iterations")]
    out = []
    for agg in ("mean", "median", "stddev", "cv"):
        e = {"name": "%s_%s" % (name, agg), "family_index": fam, "per_family_instance_index": 0,
             "run_name": name, "run_type": "aggregate", "repetitions": len(rows), "threads": 1,
             "aggregate_name": agg, "aggregate_unit": "percentage" if agg == "cv" else "time",
             "iterations": len(rows), "time_unit": "us"}
        for k in keys:
            v = [float(row[k]) for row in rows]
            m = statistics.fmean(v)
            if agg == "mean":
                e[k] = m
            elif agg == "median":
                e[k] = statistics.median(v)
            else:
                sd = statistics.stdev(v)
                e[k] = sd if agg == "stddev" else (sd / m if m else 0.0)
        out.append(e)
    return out


def write(path, ctx, benches):
    """Atomically: a temporary beside path, synced, renamed over it."""
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump({"context": ctx, "benchmarks": benches}, f, indent=2, allow_nan=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
