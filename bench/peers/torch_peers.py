#!/usr/bin/env python3
"""torch_peers.py -- the PyTorch peers of adaload's LayerNorm-Modulate benchmarks.

Times, on the shapes `adaload bench` times and under the same names, what a PyTorch user
would run instead of the fused kernels, and writes Google Benchmark JSON (repetitions plus
mean/median/stddev/cv aggregates) that `adaload compare` and `adaload report` read like
adaload's own bench.json:

  lnmod_fwd/torch_eager/<shape>             F.layer_norm(x) * (1 + scale) + shift, in x's
                                            dtype where the dtypes allow, cast to y's dtype
  lnmod_fwd/torch_compile/<shape>           torch.compile of the same (static shapes)
  lnmod_fwd/torch_eager_wan_fp32/<shape>    the official Wan chain: x.float(), layer_norm in
                                            fp32, * (1 + scale) + shift in fp32, .type_as(x)
  lnmod_fwd/torch_compile_wan_fp32/<shape>  torch.compile of the Wan chain
  lnmod_fwd/torch_{eager,compile}_table/<shape>  per sample: Wan 2.1's table form,
                                            e = (modulation + t_emb).chunk(6, dim=1), then
                                            layer_norm(x) * (1 + e[1]) + e[0]
  lnmod_fwd/liger/<shape>                   batch 1 per sample, where liger_kernel imports:
                                            LigerLayerNormFunction(x, 1 + scale, shift)
  lnmod_bwd/<peer>/<bwd shape>              the backward of torch_eager, torch_compile, the
                                            table forms and liger: autograd of y for dy
                                            (dx and the modulation table's gradient)
  lnmod_res_{fwd,bwd}/torch_{eager,compile}/<shape>  the fused gated residual op's shapes
                                            ("op": "lnmod_res"): res_peers.py, res_ops.py
  lnmod_{fwd,bwd}/peer:<name>/<shape>       your own callable, --peer MODULE:FUNCTION
                                            (peer_user.py: the contract), checked and timed
                                            like every peer
  layer_norm/torch/<shape>                  F.layer_norm(x) alone (no modulation)
  copy/torch/bytes<N>[/graph<K>]            dst.copy_(src) of N/2 bytes (N moved): a
                                            labelled extra (pct_torch_copy_bw)

Every peer is first run on one input set of the shape and checked against a float64
reference (peer_ops.py: y, and for a backward dx, dscale, dshift and the zero gradient of the
table's other chunks); a peer that is wrong there is written as "wrong result: <errors>"
(an error entry, no time), and its backward is not timed. pct_copy_bw is against adaload's
copy of the same bytes in the same run, whose bandwidth adaload puts into the shape list
(copy_bytes_per_second; peer_json.py); this script reads no bench.json. Each backward
entry carries saved_bytes: the device bytes its forward kept alive for the backward, beyond
the inputs and y (torch.cuda.memory_allocated).

Timing, the same method as adaload's (bench/bench_gpu.c): each sample is one CUDA-graph
replay of K calls (K = the shape's graph_k, or 1 for large shapes), time / K, between two
CUDA events; before each sample a fill of 2x the L2 size evicts L2 outside the events; the
K calls rotate among input sets covering >= 2x L2; 3 warm-up samples per repetition; each
repetition averages enough samples to reach --min-time seconds; the median of the
repetitions is the result. A backward call is torch.autograd.grad(y, inputs, dy,
retain_graph=True) of a forward run once, outside the graph. A call that cannot be
captured in a graph is timed as plain launches where K is 1 (counter cuda_graph 0, else 1). Graph replay removes Python
and launch overhead, which flatters eager PyTorch: the peers are timed at their best.
--device cpu (tests only) runs the same flow on the CPU with wall-clock timing.

  python3 torch_peers.py --shapes shapes.json --out peers.json
  python3 torch_peers.py --set wan --adaload build/adaload --out peers.json

The shape list is `adaload bench --list-shapes --set S` (JSON: no ceilings, pct_copy_bw 0);
adaload bench --with-peers writes it with its own copies' bandwidths of the run and runs this
script on it. Needs PyTorch with CUDA.
"""
import argparse
import datetime
import math
import os
import re
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_json  # noqa: E402
import peer_ops  # noqa: E402
import peer_user  # noqa: E402
import res_peers  # noqa: E402


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
    p.add_argument("--no-compile", action="store_true", help="leave out the torch.compile peers")
    p.add_argument("--peer", action="append", default=[], metavar="MODULE:FUNCTION",
                   help="also check and time your own callable fn(x, scale, shift, eps) -> y as "
                        "peer:<name> (repeatable; peer_user.py)")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                   help="cpu: the same flow with wall-clock timing (for tests; no graphs)")
    a = p.parse_args()
    if a.repetitions < 1:
        p.error("--repetitions must be >= 1")
    if not (a.min_time > 0):
        p.error("--min-time must be > 0")
    return a


def load_shapes(args):
    import json
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


class Timer:
    """The timing method (module doc) on one device."""

    def __init__(self, torch, dev, min_time, reps):
        self.torch, self.dev, self.min_time, self.reps = torch, dev, min_time, reps
        self.cuda = dev.type == "cuda"
        self.last_graphed = False
        if self.cuda:
            props = torch.cuda.get_device_properties(dev)
            self.l2 = int(getattr(props, "L2_cache_size", 0) or (50 << 20))
            self.flush = torch.empty(2 * self.l2, dtype=torch.uint8, device=dev)
            self.stream = torch.cuda.Stream()
        else:
            self.l2 = 1 << 20

    def stream_ctx(self):
        import contextlib
        return self.torch.cuda.stream(self.stream) if self.cuda else contextlib.nullcontext()

    def _time(self, graphs, k, iters):
        torch = self.torch
        if not self.cuda:
            t0 = time.perf_counter()
            for s in range(iters):
                graphs[s % len(graphs)]()
            return (time.perf_counter() - t0) / (iters * k)
        total = 0.0
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(self.stream):
            for s in range(iters):
                self.flush.fill_((s & 0x7F) | 1)  # evicts L2; keeps the GPU busy while we enqueue
                start.record(self.stream)
                graphs[s % len(graphs)]()
                end.record(self.stream)
                end.synchronize()
                total += start.elapsed_time(end) * 1e-3 / k
        return total / iters

    def measure(self, groups, k):
        """groups: lists of k calls each (rotated); per-repetition (seconds per call, iters)."""
        torch = self.torch
        graphs, self.last_graphed = [], self.cuda
        for calls in groups:
            if not self.cuda:
                graphs.append(lambda calls=calls: [c() for c in calls])
                continue
            g = torch.cuda.CUDAGraph()
            try:
                with torch.cuda.graph(g, stream=self.stream):
                    for c in calls:
                        c()
            except Exception as ex:
                # A call that cannot be captured (a backward that syncs, say) is timed as
                # plain launches on the same stream, only where one call is one sample
                # (large shapes), where launch latency is small beside the call.
                if k != 1:
                    raise
                torch.cuda.synchronize()
                print("torch_peers: not captured (%s): plain launches" % str(ex).splitlines()[0][:200],
                      file=sys.stderr)
                self.last_graphed = False
                graphs = [lambda calls=calls: [c() for c in calls] for calls in groups]
                break
            graphs.append(g.replay)
        for _ in range(3):
            self._time(graphs, k, 1)
        probe = self._time(graphs, k, 3)
        iters = max(1, min(100000, int(math.ceil(self.min_time / max(probe, 1e-9)))))
        reps = []
        for _ in range(self.reps):
            self._time(graphs, k, 3)  # warm-up
            reps.append((self._time(graphs, k, iters), iters))
        del graphs
        return reps


def nsets_for(timer, set_bytes):
    return max(1, -(-2 * timer.l2 // max(1, set_bytes)))


def groups_of(calls, k):
    """k calls per graph, rotating through the calls (one per input set)."""
    n = len(calls)
    return [[calls[(j * k + i) % n] for i in range(k)] for j in range(-(-n // k))]


class Run:
    """One script run: the records and the notes, in order."""

    def __init__(self, args, torch):
        self.args, self.torch = args, torch
        self.flt = re.compile(args.filter) if args.filter else None
        self.results, self.notes, self.torch_copy = [], [], {}
        self.timer = None
        self.user = []  # --peer (peer_user.py)

    def wants(self, name):
        return not self.flt or self.flt.search(name)

    def record(self, name, fn, bytes_, copy_name, counters=None):
        """Times fn() -> reps into a record; an exception is the record's error."""
        print("torch_peers: %s" % name, file=sys.stderr, flush=True)
        try:
            reps = fn()
            counters = dict(counters or {})
            if self.timer is not None:
                counters["cuda_graph"] = 1.0 if self.timer.last_graphed else 0.0
            self.results.append({"name": name, "reps": reps, "bytes": bytes_, "copy": copy_name,
                                 "counters": counters})
        except Exception as ex:  # a peer that cannot run is reported, not fatal
            msg = ("%s: %s" % (type(ex).__name__, ex)).splitlines()[0][:300]
            self.results.append({"name": name, "error": msg})
        self.sync()

    def wrong(self, name, text):
        print("torch_peers: %s: %s" % (name, text), file=sys.stderr, flush=True)
        self.results.append({"name": name, "error": text})

    def sync(self):
        if self.torch.cuda.is_available():
            self.torch.cuda.synchronize()
            self.torch.cuda.empty_cache()


def time_copy(run, timer, copy_name, bytes_, k):
    """torch's dst.copy_(src) of the bytes of adaload's copy_name, as copy/torch/...; its
    "copy" is adaload's copy (the one ceiling), run.torch_copy[copy_name] its bandwidth."""
    torch = run.torch
    name = copy_name.replace("copy/", "copy/torch/", 1)
    if copy_name in run.torch_copy or not run.wants(name):
        return
    half = bytes_ // 2
    cn = nsets_for(timer, 2 * half)

    def groups():
        bufs = [(torch.empty(half, dtype=torch.uint8, device=timer.dev).fill_(0x3C),
                 torch.empty(half, dtype=torch.uint8, device=timer.dev)) for _ in range(cn)]
        return groups_of([(lambda s=b: s[1].copy_(s[0])) for b in bufs], k)
    run.record(name, lambda: timer.measure(groups(), k), bytes_, copy_name)
    r = run.results[-1]
    if "reps" in r:
        run.torch_copy[copy_name] = statistics.median(bytes_ / t for t, _ in r["reps"])


def one_shape(run, timer, sh, dtypes):
    torch = run.torch
    import torch.nn.functional as F
    # Static shapes: every shape compiles afresh. Resetting dynamo also keeps its
    # per-function recompile limit (8 by default) from silently falling back to eager.
    torch._dynamo.reset()
    eps, ydt = sh["eps"], dtypes[sh["y_dtype"]]
    _, _, _, layout, _ = peer_ops.dims(sh)
    tol = peer_ops.tolerance(sh["x_dtype"], sh["y_dtype"])
    fwd_sfx, fwd_bytes, fk = sh["suffix"], sh["min_bytes"], max(1, sh["graph_k"])
    has_bwd = "bwd_suffix" in sh
    esz = sum(torch.tensor([], dtype=dtypes[sh[k]]).element_size() for k in ("x_dtype", "y_dtype"))
    mod_rows = sh.get("mod_rows", sh["rows"] // sh["rows_per_sample"])
    set_bytes = sh["rows"] * sh["D"] * (esz + 2) + mod_rows * 6 * sh["D"] * 4
    nsets = nsets_for(timer, set_bytes)
    fwd_copy = sh["copy_name"]
    bwd_copy = sh.get("bwd_copy_name")
    time_copy(run, timer, fwd_copy, fwd_bytes, fk)
    if has_bwd:
        time_copy(run, timer, bwd_copy, sh["bwd_min_bytes"], max(1, sh["bwd_graph_k"]))
    compile_fn = ((lambda fn: fn) if run.args.no_compile else
                  (lambda fn: torch.compile(fn, dynamic=False)))
    plist, note = peer_ops.peers(torch, F, sh, eps, ydt, compile_fn, user=run.user)
    if run.args.no_compile:
        plist = [p for p in plist if "compile" not in p.name or p.name.startswith("peer:")]
    if note and note not in run.notes:
        run.notes.append(note)
    ln_name = "layer_norm/torch/" + fwd_sfx
    with timer.stream_ctx():
        check_set = peer_ops.make_inputs(torch, sh, 1, timer.dev, dtypes, True)[0]
        sets = None
        if run.wants(ln_name):
            ln = peer_ops.layer_norm_only(F, eps)
            ok, text = peer_ops.check_layer_norm(torch, ln(check_set), check_set, eps, tol)
            if not ok:
                run.wrong(ln_name, text)
            else:
                sets = sets or peer_ops.make_inputs(torch, sh, nsets, timer.dev, dtypes, False)
                run.record(ln_name, lambda: timer.measure(fwd_groups(timer, ln, sets, fk), fk),
                           fwd_bytes, fwd_copy)
        for p in plist:
            fname = "lnmod_fwd/%s/%s" % (p.name, fwd_sfx)
            bname = "lnmod_bwd/%s/%s" % (p.name, sh["bwd_suffix"]) if has_bwd and p.bwd else None
            want_f, want_b = run.wants(fname), bname is not None and run.wants(bname)
            if not (want_f or want_b):
                continue
            fok, ftext, bok, btext = checked(torch, p, check_set, layout, eps, tol, want_b)
            print("torch_peers: %s: check: %s / %s" % (p.name, ftext, btext), file=sys.stderr)
            if want_f:
                if not fok:
                    run.wrong(fname, ftext)
                else:
                    sets = sets or peer_ops.make_inputs(torch, sh, nsets, timer.dev, dtypes, False)
                    run.record(fname, lambda: timer.measure(fwd_groups(timer, p.fwd, sets, fk), fk),
                               fwd_bytes, fwd_copy, {"check_rel_err_y": err_of(ftext, "y")})
            if want_b:
                if not (fok and bok):
                    run.wrong(bname, btext or ftext)
                else:
                    saved = peer_ops.saved_bytes(torch, p, check_set)
                    counters = {"check_rel_err_%s" % k: err_of(btext, k)
                                for k in ("dx", "dscale", "dshift")}
                    if saved is not None:
                        counters["saved_bytes"] = float(saved)
                    bk = max(1, sh["bwd_graph_k"])
                    run.record(bname, lambda: bwd_measure(run, timer, p, sh, nsets, dtypes, layout, bk),
                               sh["bwd_min_bytes"], bwd_copy, counters)
        del check_set, sets
    run.sync()


def checked(torch, p, check_set, layout, eps, tol, want_b):
    """peer_ops.check with each direction judged on its own: (fwd ok, fwd text, bwd ok, bwd
    text). A peer whose backward raises (torch.compile of the plain chain at batch 1 on the
    H200, torch 2.11: "CompiledFunctionBackward returned an invalid gradient") keeps the
    verdict of its forward, which is then timed; its backward is recorded with the error."""
    def error(ex):
        return "error: " + ("%s: %s" % (type(ex).__name__, ex)).splitlines()[0][:300]
    try:
        return peer_ops.check(torch, p, check_set, layout, eps, tol, want_b)
    except Exception as ex:  # noqa: BLE001 -- any failure of the peer is its verdict
        if not want_b:
            return False, error(ex), None, None
        bwd_error = error(ex)
    try:  # the backward raised: judge the forward alone
        fok, ftext, _, _ = peer_ops.check(torch, p, check_set, layout, eps, tol, False)
    except Exception as ex:  # noqa: BLE001
        return False, error(ex), False, error(ex)
    return fok, ftext, False, bwd_error


def err_of(text, key):
    m = re.search(r"\b%s ([0-9.eE+-]+|nan|inf)" % key, text)
    try:
        return float(m.group(1)) if m else 0.0
    except ValueError:
        return 0.0


def fwd_groups(timer, fn, sets, k):
    for s in sets:  # warm-up (and compile) outside the capture
        fn(s)
    if timer.cuda:
        timer.torch.cuda.synchronize()
    return groups_of([(lambda s=s: fn(s)) for s in sets], k)


def bwd_measure(run, timer, p, sh, nsets, dtypes, layout, k):
    """The backward of p: per input set one forward outside the graph, then the graph
    replays autograd.grad of it (retain_graph)."""
    torch = run.torch
    sets = peer_ops.make_inputs(torch, sh, nsets, timer.dev, dtypes, True)
    calls = []
    for s in sets:
        y = p.fwd(s)
        ins = [s[n] for n in p.grads_of]
        dy = s["dy"].reshape(y.shape)

        def call(y=y, ins=ins, dy=dy):
            return torch.autograd.grad(y, ins, dy, retain_graph=True, allow_unused=True)
        for _ in range(2):  # warm-up (and the compiled backward) outside the capture
            call()
        calls.append(call)
    if timer.cuda:
        torch.cuda.synchronize()
    return timer.measure(groups_of(calls, k), k)


def main():
    args = parse_args()
    shapes = load_shapes(args)
    try:
        import torch
    except ImportError:
        print("torch_peers.py: PyTorch is not installed", file=sys.stderr)
        return 77
    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch_peers.py: no CUDA device", file=sys.stderr)
        return 77
    try:
        user = peer_user.load_all(args.peer)
    except peer_user.PeerSpecError as ex:
        print("torch_peers.py: %s" % ex, file=sys.stderr)
        return 2
    ceilings = peer_json.ceilings_of(shapes)  # adaload's copies, never torch's copy_
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
    dev = torch.device(args.device)
    timer = Timer(torch, dev, args.min_time, args.repetitions)
    run = Run(args, torch)
    run.timer = timer
    run.user = user
    for sh in shapes:
        if sh.get("op") == "lnmod_res":
            res_peers.one_shape(sys.modules[__name__], run, timer, sh, dtypes)
        else:
            one_shape(run, timer, sh, dtypes)
    for n in run.notes:
        print("torch_peers: %s" % n, file=sys.stderr)
    ctx = context(args, torch, dev, ceilings, run.notes)
    peer_json.write(args.out, ctx, peer_json.assemble(run.results, shapes, run.torch_copy))
    return 0


def context(args, torch, dev, ceilings, notes):
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
        "gpu_name": torch.cuda.get_device_properties(dev).name if dev.type == "cuda" else "cpu",
        "peers_timing": "CUDA-graph replay of K calls (time/K) between CUDA events; 2xL2 fill "
                        "before each sample; inputs rotated >= 2xL2; 3 warm-up samples per "
                        "repetition" if dev.type == "cuda" else "wall clock (cpu test mode)",
        "peers_ceiling": ("pct_copy_bw: adaload's copy of the same bytes in the same run "
                          "(%d ceilings from adaload's shape list)" % len(ceilings)
                          if ceilings else "pct_copy_bw: none (the shape list has no ceilings)") +
                         "; pct_torch_copy_bw: torch's dst.copy_(src), an extra",
        "peers_checked": "every peer against float64 at its shape before timing (peer_ops.py)",
        "peers_notes": "; ".join(notes),
    }
    try:
        import liger_kernel  # noqa: F401
        from importlib import metadata
        ctx["liger_kernel_version"] = metadata.version("liger-kernel")
    except Exception:
        pass
    return ctx


if __name__ == "__main__":
    sys.exit(main())
