"""res_peers.py -- torch_peers.py's flow for the shapes of the fused gated residual op
(shape list entries with "op": "lnmod_res", bench/bench_shapes.h): adaload's copies of both
directions' minimal bytes timed as torch copies (labelled extras, as for every shape), then
each peer of res_ops.py checked against float64 at the shape (outputs h and out; gradients
dr, dy, dgate -- none at site 2 --, dscale, dshift and the zero gradient of the tables' other
chunks) and only then timed, with torch_peers.py's Timer and method:

  lnmod_res_fwd/torch_eager/<shape>      Wan's chain at the shape's site (res_ops.py): site 3
                                         h = r + y * g; LN(h) * (1 + scale) + shift -> out;
                                         site 1 the affine LN(h) * w + b; site 2 h = r + y
  lnmod_res_fwd/torch_compile/<shape>    torch.compile of the same chain (static shapes)
  lnmod_res_bwd/<peer>/<bwd shape>       autograd of (h, out) for (dh, d_out) of a forward
                                         run once outside the graph

(<shape> has /site1 or /site2 after the layout at those sites, bench/bench_shapes.h.)

A peer wrong at the shape is written as "wrong result: <errors>" (no time; its backward not
timed); one whose backward raises keeps its checked forward. tp is the torch_peers module
(its Run, Timer and helpers).
"""
import sys

import res_ops


def checked(torch, p, s, eps, tol, want_b):
    """res_ops.check with each direction judged on its own (torch_peers.checked's rule)."""
    def error(ex):
        return "error: " + ("%s: %s" % (type(ex).__name__, ex)).splitlines()[0][:300]
    try:
        return res_ops.check(torch, p, s, eps, tol, want_b)
    except Exception as ex:  # noqa: BLE001 -- any failure of the peer is its verdict
        if not want_b:
            return False, error(ex), None, None
        bwd_error = error(ex)
    try:
        fok, ftext, _, _ = res_ops.check(torch, p, s, eps, tol, False)
    except Exception as ex:  # noqa: BLE001
        return False, error(ex), False, error(ex)
    return fok, ftext, False, bwd_error


def bwd_measure(tp, run, timer, p, sh, nsets, dtypes, k):
    torch = run.torch
    sets = res_ops.make_inputs(torch, sh, nsets, timer.dev, dtypes, True)
    calls = []
    for s in sets:
        h, out = p.fwd(s)
        ins = [s[n] for n in p.grads_of]
        gouts = (s["dh"].reshape(h.shape), s["dout"].reshape(out.shape))

        def call(outs=(h, out), ins=ins, gouts=gouts):
            return torch.autograd.grad(outs, ins, gouts, retain_graph=True, allow_unused=True)
        for _ in range(2):  # warm-up (and the compiled backward) outside the capture
            call()
        calls.append(call)
    if timer.cuda:
        torch.cuda.synchronize()
    return timer.measure(tp.groups_of(calls, k), k)


def one_shape(tp, run, timer, sh, dtypes):
    torch = run.torch
    import torch.nn.functional as F
    torch._dynamo.reset()
    eps, tol = sh["eps"], res_ops.tolerance(sh)
    B, S, D = res_ops.dims(sh)
    esz = {"bf16": 2, "f16": 2, "f32": 4}
    elem = 3 * esz[sh["res_dtype"]] + esz[sh["branch_dtype"]] + esz[sh["out_dtype"]]
    nsets = tp.nsets_for(timer, B * S * D * elem + 2 * B * 6 * D * esz[sh["mod_dtype"]])
    fk, bk = max(1, sh["graph_k"]), max(1, sh["bwd_graph_k"])
    tp.time_copy(run, timer, sh["copy_name"], sh["min_bytes"], fk)
    tp.time_copy(run, timer, sh["bwd_copy_name"], sh["bwd_min_bytes"], bk)
    compile_fn = ((lambda fn: fn) if run.args.no_compile else
                  (lambda fn: torch.compile(fn, dynamic=False)))
    plist = res_ops.peers(torch, F, sh, eps, compile_fn)
    if run.args.no_compile:
        plist = [p for p in plist if "compile" not in p.name]
    with timer.stream_ctx():
        check_set = res_ops.make_inputs(torch, sh, 1, timer.dev, dtypes, True)[0]
        sets = None
        for p in plist:
            fname = "lnmod_res_fwd/%s/%s" % (p.name, sh["suffix"])
            bname = "lnmod_res_bwd/%s/%s" % (p.name, sh["bwd_suffix"])
            want_f, want_b = run.wants(fname), run.wants(bname)
            if not (want_f or want_b):
                continue
            fok, ftext, bok, btext = checked(torch, p, check_set, eps, tol, want_b)
            print("torch_peers: %s (res): check: %s / %s" % (p.name, ftext, btext), file=sys.stderr)
            if want_f:
                if not fok:
                    run.wrong(fname, ftext)
                else:
                    sets = sets or res_ops.make_inputs(torch, sh, nsets, timer.dev, dtypes, False)
                    run.record(fname, lambda: timer.measure(tp.fwd_groups(timer, p.fwd, sets, fk), fk),
                               sh["min_bytes"], sh["copy_name"],
                               {"check_rel_err_%s" % k: tp.err_of(ftext, k) for k in ("h", "out")})
            if want_b:
                if not (fok and bok):
                    run.wrong(bname, btext or ftext)
                else:
                    counters = {"check_rel_err_%s" % k: tp.err_of(btext, k) for k in res_ops.grad_keys(sh)}
                    saved = res_ops.saved_bytes(torch, p, check_set)
                    if saved is not None:
                        counters["saved_bytes"] = float(saved)
                    run.record(bname, lambda: bwd_measure(tp, run, timer, p, sh, nsets, dtypes, bk),
                               sh["bwd_min_bytes"], sh["bwd_copy_name"], counters)
        del check_set, sets
    run.sync()
