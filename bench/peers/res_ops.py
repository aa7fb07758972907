"""res_ops.py -- the PyTorch peers of the fused gated residual + LayerNorm-Modulate op
(issue 22, kernels/lnmod_res_desc.h), in the style of peer_ops.py: the inputs of a shape,
the peers, the float64 reference every peer is checked against before its time counts, and
the memory a peer's forward keeps for its backward. torch_peers.py times them for the shapes
whose "op" is "lnmod_res" (res_peers.py) as lnmod_res_fwd/<peer>/... and lnmod_res_bwd/...

The op (Wan 2.1's third site, per sample): h = r + g * y, out = LN(h) * (1 + scale) + shift,
with g = e[:, 5], scale = e'[:, 1], shift = e'[:, 0] chunk views of two [B, 6, D] tables
(the block's e and the next block's e'). A peer is a peer_ops.Peer whose fwd(set) returns
(h, out); its gradients are those of (h, out) for (dh, d_out) with respect to r, y, e and e',
read back as dr, dy, dgate, dscale, dshift and the exact-zero gradient of the tables' other
chunks. Inputs of one set (make_inputs):
  r     [B, S, D] in res_dtype (the fp32 residual stream)
  y     [B, S, D] in branch_dtype (the FFN's output)
  e, e2 [B, 6, D] in mod_dtype (gate chunk 5 of e; scale chunk 1, shift chunk 0 of e2)
  dout  [B, S, D] in out_dtype, dh [B, S, D] in res_dtype: the incoming gradients
The reference (reference64), in float64 from the same storage:
  h = r + g y; xhat = (h - mean) rstd; out = xhat (1 + scale) + shift;
  t = dh + rstd (gm - mean(gm) - xhat mean(gm xhat)), gm = dout (1 + scale);
  dr = t, dy = g t, dgate = sum of t y, dscale = sum of dout xhat, dshift = sum of dout
  (sums over the rows of each sample).
judge(): per output the relative L2 error against it, wrong above tolerance (peer_ops's, of
the least precise of branch and out dtype) or not finite; the other chunks' gradient must be 0.
"""
import peer_ops

Peer = peer_ops.Peer
KEYS = ("h", "out", "dr", "dy", "dgate", "dscale", "dshift")


def dims(sh):
    D, rows, S = sh["D"], sh["rows"], sh["rows_per_sample"]
    if sh.get("layout", "sample") != "sample" or not sh.get("gate", True):
        raise ValueError("res peers: per-sample gated shapes only (site 3)")
    return rows // S, S, D


def tolerance(sh):
    return peer_ops.tolerance(sh["branch_dtype"], sh["out_dtype"])


def make_inputs(torch, sh, nsets, dev, dtypes, grad):
    """nsets input sets (dicts) of shape sh on dev; leaf tensors require grad when grad."""
    B, S, D = dims(sh)
    rdt, ydt = dtypes[sh["res_dtype"]], dtypes[sh["branch_dtype"]]
    mdt, odt = dtypes[sh["mod_dtype"]], dtypes[sh["out_dtype"]]
    sets = []
    for i in range(nsets):
        g = torch.Generator(device=dev).manual_seed(2000 + i)
        s = {"r": (torch.randn(B, S, D, device=dev, generator=g) + 0.25).to(rdt),
             "y": torch.randn(B, S, D, device=dev, generator=g).to(ydt),
             "e": (0.5 * torch.randn(B, 6, D, device=dev, generator=g)).to(mdt),
             "e2": (0.1 * torch.randn(B, 6, D, device=dev, generator=g)).to(mdt),
             "dout": torch.randn(B, S, D, device=dev, generator=g).to(odt),
             "dh": torch.randn(B, S, D, device=dev, generator=g).to(rdt)}
        if grad:
            for k in ("r", "y", "e", "e2"):
                s[k] = s[k].detach().requires_grad_()
        sets.append(s)
    return sets


def views(s):
    """(gate, scale, shift) chunk views, broadcastable to [B, S, D]."""
    return s["e"][:, 5:6], s["e2"][:, 1:2], s["e2"][:, 0:1]


def reference64(torch, s, eps):
    """dict of KEYS in float64 from the set's storage (module doc)."""
    r, y = s["r"].detach().double(), s["y"].detach().double()
    g, sc, sf = (t.detach().double() for t in views(s))
    dout, dh = s["dout"].detach().double(), s["dh"].detach().double()
    h = r + g * y
    mean = h.mean(-1, keepdim=True)
    hc = h - mean
    rstd = 1.0 / torch.sqrt((hc * hc).mean(-1, keepdim=True) + eps)
    xh = hc * rstd
    out = xh * (1 + sc) + sf
    gm = dout * (1 + sc)
    t = dh + rstd * (gm - gm.mean(-1, keepdim=True) - xh * (gm * xh).mean(-1, keepdim=True))
    return {"h": h, "out": out, "dr": t, "dy": g * t, "dgate": (t * y).sum_to_size(g.shape),
            "dscale": (dout * xh).sum_to_size(sc.shape), "dshift": dout.sum_to_size(sf.shape)}


def judge(torch, got, ref, tol):
    """got: some of KEYS (and "other"); (ok, errors dict, one-line text) as peer_ops.judge."""
    errs = {k: peer_ops.rel_l2(torch, got[k], ref[k]) for k in KEYS if k in got}
    bad = [k for k, v in errs.items() if not (v <= tol)]
    if got.get("other") is not None:
        errs["other"] = got["other"].detach().double().abs().max().item()
        if not (errs["other"] == 0.0):
            bad.append("other")
    text = ", ".join("%s %.3g" % (k, v) for k, v in errs.items())
    if bad:
        return False, errs, "wrong result: rel err %s (tolerance %.3g; wrong: %s)" % (
            text, tol, ", ".join(bad))
    return True, errs, "rel err %s (tolerance %.3g)" % (text, tol)


def peers(torch, F, sh, eps, compile_fn):
    """The peers of a res shape, in timing order: PyTorch's eager chain as Wan runs it (x = x
    + y * e[5] in the residual's dtype, then the next block's norm1 and modulation, cast to
    out's dtype) and torch.compile of that chain (static shapes)."""
    odt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[sh["out_dtype"]]
    rdt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[sh["res_dtype"]]

    def chain(r, y, g, scale, shift):
        h = (r + y * g).to(rdt)
        out = F.layer_norm(h, (h.shape[-1],), eps=eps) * (1 + scale) + shift
        return h, out.to(odt)

    def peer(name, fn):
        return Peer(name, lambda s: fn(s["r"], s["y"], *views(s)), ("r", "y", "e", "e2"), True)

    return [peer("torch_eager", chain), peer("torch_compile", compile_fn(chain))]


def grads(torch, peer, s, h, out):
    """dict of dr, dy, dgate, dscale, dshift, other from autograd of (h, out) for (dh, dout)."""
    ins = [s[k] for k in peer.grads_of]
    gs = torch.autograd.grad((h, out), ins, (s["dh"].reshape(h.shape), s["dout"].reshape(out.shape)),
                             retain_graph=True, allow_unused=True)
    gr, gy, ge, ge2 = (g if g is not None else torch.zeros_like(t) for g, t in zip(gs, ins))
    other = torch.cat([ge[:, 0:5].reshape(-1), ge2[:, 2:6].reshape(-1)])
    return {"dr": gr, "dy": gy, "dgate": ge[:, 5], "dscale": ge2[:, 1], "dshift": ge2[:, 0],
            "other": other}


def check(torch, peer, s, eps, tol, with_grads):
    """Runs the peer on set s and judges it: (fwd ok, fwd text, bwd ok, bwd text)."""
    ref = reference64(torch, s, eps)
    ref = {k: (v.reshape(-1) if k in ("dgate", "dscale", "dshift") else v) for k, v in ref.items()}
    h, out = peer.fwd(s)
    fok, _, ftext = judge(torch, {"h": h, "out": out}, ref, tol)
    if not with_grads:
        return fok, ftext, None, None
    g = grads(torch, peer, s, h, out)
    got = {"h": h, "out": out, "other": g.pop("other")}
    got.update({k: (v.reshape(-1) if k in ("dgate", "dscale", "dshift") else v) for k, v in g.items()})
    bok, _, btext = judge(torch, got, ref, tol)
    return fok, ftext, bok, btext


def saved_bytes(torch, peer, s):
    """Device bytes the peer's forward keeps for its backward beyond its inputs, h and out
    (torch.cuda.memory_allocated around one forward); None off CUDA."""
    if s["r"].device.type != "cuda":
        return None
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    h, out = peer.fwd(s)
    torch.cuda.synchronize()
    n = torch.cuda.memory_allocated() - before - h.untyped_storage().nbytes() - out.untyped_storage().nbytes()
    del h, out
    return max(0, n)
