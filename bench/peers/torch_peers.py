#!/usr/bin/env python3
"""torch_peers.py -- the PyTorch peers of adaload's LayerNorm-Modulate benchmarks.

Times, on the shapes `adaload bench` times and under the same names, what a PyTorch user
would run instead of the fused kernel, and writes Google Benchmark JSON (repetitions plus
mean/median/stddev/cv aggregates) that `adaload compare` and `adaload report` read like
adaload's own bench.json:

  lnmod_fwd/torch_eager/<shape>             F.layer_norm(x) * (1 + scale) + shift, in x's
                                            dtype where the dtypes allow, cast to y's dtype
  lnmod_fwd/torch_compile/<shape>           torch.compile of the same (static shapes)
  lnmod_fwd/torch_eager_wan_fp32/<shape>    the official Wan chain: x.float(), layer_norm in
                                            fp32, * (1 + scale) + shift in fp32, .type_as(x)
  lnmod_fwd/torch_compile_wan_fp32/<shape>  torch.compile of the Wan chain
  layer_norm/torch/<shape>                  F.layer_norm(x) alone (no modulation)
  copy/torch/bytes<N>[/graph<K>]            dst.copy_(src) of N/2 bytes (N moved), the
                                            ceiling the peers' pct_copy_bw refers to

Layouts as in the shape list: per-sample scale/shift are [B, 1, D] chunks of [B, 6, D];
per-token [B, S, D] views of [B, S, 6, D]; per-frame [B, F, 1, D] views of [B, F, 6, D]
broadcast over x seen as [B, F, frame_len, D] (whole frames only).

Timing, the same method as adaload's (harness/bench_gpu.c): each sample is one CUDA-graph
replay of K calls (K = the shape's graph_k, or 1 for large shapes), time / K, between two
CUDA events; before each sample a fill of 2x the L2 size evicts L2 outside the events; the
K calls rotate among input sets covering >= 2x L2; 3 warm-up samples per repetition; each
repetition averages enough samples to reach --min-time seconds; the median of the
repetitions is the result. Graph replay removes Python and launch overhead, which flatters
eager PyTorch: the peers are timed at their best.

  python3 torch_peers.py --shapes shapes.json --out peers.json [--repetitions 9]
  python3 torch_peers.py --set wan --adaload build/adaload --out peers.json

The shape list is `adaload bench --list-shapes --set S` (JSON); adaload bench --with-peers
writes it and runs this script. Needs only PyTorch with CUDA (and the standard library).
"""
import argparse
import datetime
import json
import math
import os
import re
import socket
import statistics
import subprocess
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", help="shape list JSON from `adaload bench --list-shapes`")
    p.add_argument("--set", default="wan", help="shape set, read from `adaload bench --list-shapes`"
                   " when --shapes is not given (default wan)")
    p.add_argument("--adaload", default=None, help="the adaload program (default: build/adaload "
                   "of this source tree, else adaload on PATH)")
    p.add_argument("--out", required=True, help="Google Benchmark JSON to write")
    p.add_argument("--repetitions", type=int, default=9)
    p.add_argument("--min-time", type=float, default=0.01,
                   help="minimum measured seconds per repetition (default 0.01)")
    p.add_argument("--filter", default=None, help="only benchmarks whose name matches (regex)")
    a = p.parse_args()
    if a.repetitions < 1:
        p.error("--repetitions must be >= 1")
    if not (a.min_time > 0):
        p.error("--min-time must be > 0")
    return a


def load_shapes(args):
    if args.shapes:
        with open(args.shapes) as f:
            return json.load(f)
    exe = args.adaload
    if exe is None:
        here = os.path.dirname(os.path.abspath(__file__))
        cand = os.path.normpath(os.path.join(here, "..", "..", "build", "adaload"))
        exe = cand if os.access(cand, os.X_OK) else "adaload"
    out = subprocess.run([exe, "bench", "--list-shapes", "--set", args.set], check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


def main():
    args = parse_args()
    shapes = load_shapes(args)
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("torch_peers.py: PyTorch is not installed", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("torch_peers.py: no CUDA device", file=sys.stderr)
        return 77

    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = int(getattr(props, "L2_cache_size", 0) or (50 << 20))
    flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev)
    stream = torch.cuda.Stream()
    flt = re.compile(args.filter) if args.filter else None

    def eager(x, scale, shift, eps, ydt):
        return (F.layer_norm(x, (x.shape[-1],), eps=eps) * (1 + scale) + shift).to(ydt)

    def wan_fp32(x, scale, shift, eps, ydt):
        # Wan 2.1: WanLayerNorm is layer_norm(x.float()); modulation in fp32.
        y = F.layer_norm(x.float(), (x.shape[-1],), eps=eps) * (1 + scale.float()) + shift.float()
        return y.type_as(x) if ydt == x.dtype else y.to(ydt)

    def ln_only(x, scale, shift, eps, ydt):
        return F.layer_norm(x, (x.shape[-1],), eps=eps)

    compiled = {}

    def compiled_fn(fn):
        if fn not in compiled:
            compiled[fn] = torch.compile(fn, dynamic=False)
        return compiled[fn]

    def make_sets(sh, nsets):
        D, rows, S = sh["D"], sh["rows"], sh["rows_per_sample"]
        B = rows // S
        layout = sh.get("layout", "sample")
        L = sh.get("frame_len", S)
        xdt, mdt = dtypes[sh["x_dtype"]], dtypes[sh["mod_dtype"]]
        if layout == "frame" and S % L:
            raise ValueError("per-frame peer needs whole frames (S %% frame_len == 0)")
        sets = []
        for i in range(nsets):
            g = torch.Generator(device=dev).manual_seed(1000 + i)
            x = (torch.randn(B, S, D, device=dev, generator=g) + 0.25).to(xdt)
            if layout == "token":
                # Wan 2.2 TI2V: a [B, S, 6, D] modulation; [B, S, D] views at row stride 6*D.
                e = (0.1 * torch.randn(B, S, 6, D, device=dev, generator=g)).to(mdt)
                sets.append((x, e[:, :, 1], e[:, :, 0]))
            elif layout == "frame":
                # A timestep per latent frame: [B, F, 6, D]; x seen as [B, F, L, D] so the
                # [B, F, 1, D] views broadcast over each frame's tokens.
                F_ = S // L
                e = (0.1 * torch.randn(B, F_, 6, D, device=dev, generator=g)).to(mdt)
                sets.append((x.view(B, F_, L, D), e[:, :, 1:2], e[:, :, 0:1]))
            else:
                # Wan's [B, 6, D] modulation: chunk 0 is shift, chunk 1 is scale, [B, 1, D]
                # views at batch stride 6*D.
                e = (0.1 * torch.randn(B, 6, D, device=dev, generator=g)).to(mdt)
                sets.append((x, e[:, 1:2], e[:, 0:1]))
        return sets

    def time_graphs(graphs, k, iters):
        """Mean seconds per call over `iters` samples (one graph replay each)."""
        total = 0.0
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            for s in range(iters):
                flush.fill_((s & 0x7F) | 1)  # evicts L2; keeps the GPU busy while we enqueue
                start.record(stream)
                graphs[s % len(graphs)].replay()
                end.record(stream)
                end.synchronize()
                total += start.elapsed_time(end) * 1e-3 / k
        return total / iters

    def measure(name, build_calls, k, bytes_):
        """Captures graphs of k calls each, rotated; returns per-repetition (seconds, iters)."""
        graphs = []
        for calls in build_calls():
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=stream):
                for c in calls:
                    c()
            graphs.append(g)
        for _ in range(3):
            time_graphs(graphs, k, 1)
        probe = time_graphs(graphs, k, 3)
        iters = max(1, min(100000, int(math.ceil(args.min_time / max(probe, 1e-9)))))
        reps = []
        for _ in range(args.repetitions):
            time_graphs(graphs, k, 3)  # warm-up
            reps.append((time_graphs(graphs, k, iters), iters))
        del graphs
        return reps

    results = []  # (name, reps, bytes, copy_name) or (name, error)
    copy_bw = {}

    def record(name, fn, bytes_, copy_name=None):
        if flt and not flt.search(name):
            return
        print(f"torch_peers: {name}", file=sys.stderr, flush=True)
        try:
            reps = fn()
            results.append({"name": name, "reps": reps, "bytes": bytes_, "copy": copy_name})
        except Exception as ex:  # a peer that cannot run is reported, not fatal
            msg = f"{type(ex).__name__}: {ex}".splitlines()[0][:300]
            results.append({"name": name, "error": msg})
        torch.cuda.synchronize()
        torch.cuda.empty_cache()

    for sh in shapes:
        # Static shapes: every shape compiles afresh. Resetting dynamo also keeps its
        # per-function recompile limit (8 by default) from silently falling back to eager.
        torch._dynamo.reset()
        compiled.clear()
        suffix, bytes_, k_shape = sh["suffix"], sh["min_bytes"], sh["graph_k"]
        k = k_shape if k_shape > 0 else 1
        eps = sh["eps"]
        ydt = dtypes[sh["y_dtype"]]
        xdt = dtypes[sh["x_dtype"]]
        esz = torch.tensor([], dtype=xdt).element_size() + torch.tensor([], dtype=ydt).element_size()
        mod_rows = sh.get("mod_rows", sh["rows"] // sh["rows_per_sample"])
        set_bytes = sh["rows"] * sh["D"] * esz + mod_rows * 6 * sh["D"] * 4
        nsets = max(1, -(-2 * l2 // set_bytes))
        copy_name = sh["copy_name"].replace("copy/", "copy/torch/", 1)

        # The copy ceiling of the same bytes, once per byte count.
        if copy_name not in copy_bw and not any(r["name"] == copy_name for r in results):
            half = bytes_ // 2
            cn = max(1, -(-2 * l2 // (2 * half)))

            def copy_calls(half=half, cn=cn, k=k):
                bufs = [(torch.empty(half, dtype=torch.uint8, device=dev).fill_(0x3C),
                         torch.empty(half, dtype=torch.uint8, device=dev)) for _ in range(cn)]
                ng = -(-cn // k)
                return [[(lambda s=bufs[(j * k + i) % cn]: s[1].copy_(s[0])) for i in range(k)]
                        for j in range(ng)]

            record(copy_name, lambda: measure(copy_name, copy_calls, k, bytes_), bytes_, copy_name)
            for r in results:
                if r["name"] == copy_name and "reps" in r:
                    copy_bw[copy_name] = statistics.median(bytes_ / t for t, _ in r["reps"])

        sets_cache = {}

        def calls_for(fn, k=k, nsets=nsets, sh=sh, eps=eps, ydt=ydt):
            if "sets" not in sets_cache:
                sets_cache["sets"] = make_sets(sh, nsets)
            sets = sets_cache["sets"]
            for x, sc, sf in sets:  # warm-up (and compile) outside the capture
                fn(x, sc, sf, eps, ydt)
            torch.cuda.synchronize()
            ng = -(-nsets // k)
            return [[(lambda s=sets[(j * k + i) % nsets]: fn(s[0], s[1], s[2], eps, ydt))
                     for i in range(k)] for j in range(ng)]

        peers = [("lnmod_fwd/torch_eager/" + suffix, eager),
                 ("lnmod_fwd/torch_compile/" + suffix, compiled_fn(eager)),
                 ("lnmod_fwd/torch_eager_wan_fp32/" + suffix, wan_fp32),
                 ("lnmod_fwd/torch_compile_wan_fp32/" + suffix, compiled_fn(wan_fp32)),
                 ("layer_norm/torch/" + suffix, ln_only)]
        for name, fn in peers:
            record(name, lambda fn=fn, name=name: measure(name, lambda: calls_for(fn), k, bytes_),
                   bytes_, copy_name)
        sets_cache.clear()

    write_json(args, results, copy_bw, props, torch)
    return 0


def write_json(args, results, copy_bw, props, torch):
    ctx = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": os.path.abspath(__file__),
        "num_cpus": os.cpu_count() or 1,
        "mhz_per_cpu": 0,
        "caches": [],
        "library_build_type": "release",
        "torch_version": torch.__version__,
        "torch_cuda_version": str(torch.version.cuda),
        "gpu_name": props.name,
        "peers_timing": "CUDA-graph replay of K calls (time/K) between CUDA events; 2xL2 fill "
                        "before each sample; inputs rotated >= 2xL2; 3 warm-up samples per "
                        "repetition",
    }
    benches = []
    for fam, r in enumerate(results):
        name = r["name"]
        if "error" in r:
            benches.append({"name": name, "family_index": fam, "per_family_instance_index": 0,
                            "run_name": name, "run_type": "iteration", "repetitions": 1,
                            "repetition_index": 0, "threads": 1, "iterations": 0,
                            "real_time": 0.0, "cpu_time": 0.0, "time_unit": "us",
                            "error_occurred": True, "error_message": r["error"]})
            continue
        ceiling = copy_bw.get(r["copy"], 0.0)
        reps = r["reps"]
        rows = []
        for i, (t, iters) in enumerate(reps):
            bw = r["bytes"] / t if t > 0 else 0.0
            rows.append({"name": name, "family_index": fam, "per_family_instance_index": 0,
                         "run_name": name, "run_type": "iteration", "repetitions": len(reps),
                         "repetition_index": i, "threads": 1, "iterations": iters,
                         "real_time": t * 1e6, "cpu_time": t * 1e6, "time_unit": "us",
                         "bytes_per_second": bw,
                         "pct_copy_bw": 100.0 * bw / ceiling if ceiling > 0 else 0.0,
                         "min_bytes": float(r["bytes"])})
        benches.extend(rows)
        if len(reps) > 1:
            for agg in ("mean", "median", "stddev", "cv"):
                def stat(key, agg=agg):
                    v = [row[key] for row in rows]
                    if agg == "mean":
                        return statistics.fmean(v)
                    if agg == "median":
                        return statistics.median(v)
                    sd = statistics.stdev(v)
                    if agg == "stddev":
                        return sd
                    m = statistics.fmean(v)
                    return sd / m if m else 0.0
                benches.append({"name": f"{name}_{agg}", "family_index": fam,
                                "per_family_instance_index": 0, "run_name": name,
                                "run_type": "aggregate", "repetitions": len(reps), "threads": 1,
                                "aggregate_name": agg,
                                "aggregate_unit": "percentage" if agg == "cv" else "time",
                                "iterations": len(reps), "real_time": stat("real_time"),
                                "cpu_time": stat("cpu_time"), "time_unit": "us",
                                "bytes_per_second": stat("bytes_per_second"),
                                "pct_copy_bw": stat("pct_copy_bw"),
                                "min_bytes": stat("min_bytes")})
    for b in benches:  # strict JSON: never NaN or Infinity
        for key, v in b.items():
            if isinstance(v, float) and not math.isfinite(v):
                b[key] = 0.0
    tmp = f"{args.out}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump({"context": ctx, "benchmarks": benches}, f, indent=2, allow_nan=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, args.out)


if __name__ == "__main__":
    sys.exit(main())
