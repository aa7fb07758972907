"""res_ops.py -- the PyTorch peers of the fused gated residual + LayerNorm-Modulate op
(issue 22, kernels/lnmod_res_desc.h), in the style of peer_ops.py: the inputs of a shape,
the peers, the float64 reference every peer is checked against before its time counts, and
the memory a peer's forward keeps for its backward. torch_peers.py times them for the shapes
whose "op" is "lnmod_res" (res_peers.py) as lnmod_res_fwd/<peer>/... and lnmod_res_bwd/...

The op at Wan 2.1's three residual sites of a block (kernels/lnmod_res_design.md; the shape's
"site", 3 when it has none), per sample, with e the block's [B, 6, D] modulation table and e'
the next block's:
  site 1  h = r + y * e[2];  out = LN(h) * w + b       (norm3: affine, weight w and bias b [D])
  site 2  h = r + y;         out = LN(h) * (1 + e[4]) + e[3]                (norm2, no gate)
  site 3  h = r + y * e[5];  out = LN(h) * (1 + e'[1]) + e'[0]  (the next block's norm1)
(SITES below: which tensor and chunk is the gate g, the scale and the shift.) A peer is a
peer_ops.Peer whose fwd(set) returns (h, out); its gradients are those of (h, out) for (dh,
d_out) with respect to r, y and the site's tables (e; e' at site 3; w and b at site 1), read
back as dr, dy, dgate (not at site 2: no gate), dscale, dshift (dweight, dbias at site 1) and
the exact-zero gradient of the tables' chunks the site does not use. Inputs of one set
(make_inputs):
  r     [B, S, D] in res_dtype (the fp32 residual stream)
  y     [B, S, D] in branch_dtype (the attention's or the FFN's output)
  e     [B, 6, D] in mod_dtype; e2 [B, 6, D] (e', site 3); w, b [D] (site 1), mod_dtype
  dout  [B, S, D] in out_dtype, dh [B, S, D] in res_dtype: the incoming gradients
  site  the site (an int, not a tensor)
The reference (reference64), in float64 from the same storage, with g = 1 without a gate and
a = 1 + scale (MODULATE) or w (AFFINE):
  h = r + g y; xhat = (h - mean) rstd; out = xhat a + shift;
  t = dh + rstd (gm - mean(gm) - xhat mean(gm xhat)), gm = dout a;
  dr = t, dy = g t, dgate = sum of t y, dscale = sum of dout xhat, dshift = sum of dout
  (sums over the rows of each sample; over every row for dweight and dbias).
judge(): per output the relative L2 error against it, wrong above tolerance (peer_ops's, of
the least precise of branch and out dtype) or not finite; the other chunks' gradient must be 0.
"""
import peer_ops

Peer = peer_ops.Peer
KEYS = ("h", "out", "dr", "dy", "dgate", "dscale", "dshift")
GRAD_KEYS = ("dr", "dy", "dgate", "dscale", "dshift")
# site: (gate, scale, shift), each (tensor of the set, chunk of its [B, 6, D] table) or
# (tensor, None) for a [D] tensor; gate None: no gate.
SITES = {1: (("e", 2), ("w", None), ("b", None)),
         2: (None, ("e", 4), ("e", 3)),
         3: (("e", 5), ("e2", 1), ("e2", 0))}


def site_of(sh):
    """The shape's residual site (1, 2 or 3; 3 for a shape list without "site")."""
    site = sh.get("site", 3)
    if site not in SITES:
        raise ValueError("res peers: no residual site %r (1, 2 or 3)" % (site,))
    return site


def dims(sh):
    D, rows, S = sh["D"], sh["rows"], sh["rows_per_sample"]
    site = site_of(sh)
    if sh.get("layout", "sample") != "sample":
        raise ValueError("res peers: per-sample shapes only")
    if bool(sh.get("gate", True)) != (SITES[site][0] is not None):
        raise ValueError("res peers: site %d %s" % (site, "has no gate" if site == 2 else "has a gate"))
    if (sh.get("norm", "modulate") == "affine") != (site == 1):
        raise ValueError("res peers: the affine norm is site 1's alone")
    return rows // S, S, D


def grad_keys(sh):
    """The gradients checked at the shape's site: no dgate at site 2."""
    return tuple(k for k in GRAD_KEYS if k != "dgate" or SITES[site_of(sh)][0] is not None)


def tolerance(sh):
    return peer_ops.tolerance(sh["branch_dtype"], sh["out_dtype"])


def leaves(site):
    """The set's tensors a peer's gradients are taken of, in order."""
    return ("r", "y", "e", "e2") if site == 3 else ("r", "y", "e", "w", "b") if site == 1 else ("r", "y", "e")


def make_inputs(torch, sh, nsets, dev, dtypes, grad):
    """nsets input sets (dicts) of shape sh on dev; leaf tensors require grad when grad."""
    B, S, D = dims(sh)
    site = site_of(sh)
    rdt, ydt = dtypes[sh["res_dtype"]], dtypes[sh["branch_dtype"]]
    mdt, odt = dtypes[sh["mod_dtype"]], dtypes[sh["out_dtype"]]
    sets = []
    for i in range(nsets):
        g = torch.Generator(device=dev).manual_seed(2000 + i)
        s = {"r": (torch.randn(B, S, D, device=dev, generator=g) + 0.25).to(rdt),
             "y": torch.randn(B, S, D, device=dev, generator=g).to(ydt),
             "e": (0.5 * torch.randn(B, 6, D, device=dev, generator=g)).to(mdt)}
        if site == 3:
            s["e2"] = (0.1 * torch.randn(B, 6, D, device=dev, generator=g)).to(mdt)
        s["dout"] = torch.randn(B, S, D, device=dev, generator=g).to(odt)
        s["dh"] = torch.randn(B, S, D, device=dev, generator=g).to(rdt)
        if site == 1:  # norm3's weight near 1 (as trained), its bias small
            s["w"] = (1 + 0.1 * torch.randn(D, device=dev, generator=g)).to(mdt)
            s["b"] = (0.1 * torch.randn(D, device=dev, generator=g)).to(mdt)
        if grad:
            for k in leaves(site):
                s[k] = s[k].detach().requires_grad_()
        s["site"] = site
        sets.append(s)
    return sets


def views(s):
    """(gate, scale, shift) of the set's site, broadcastable to [B, S, D]: chunk views of the
    tables ([B, 1, D]) or w and b themselves ([D]); gate None at site 2."""
    def view(p):
        if p is None:
            return None
        t = s[p[0]]
        return t if p[1] is None else t[:, p[1]:p[1] + 1]
    return tuple(view(p) for p in SITES[s.get("site", 3)])


def reference64(torch, s, eps):
    """dict of KEYS (no dgate at site 2) in float64 from the set's storage (module doc)."""
    site = s.get("site", 3)
    r, y = s["r"].detach().double(), s["y"].detach().double()
    g, sc, sf = (None if t is None else t.detach().double() for t in views(s))
    dout, dh = s["dout"].detach().double(), s["dh"].detach().double()
    h = r + (y if g is None else g * y)
    mean = h.mean(-1, keepdim=True)
    hc = h - mean
    rstd = 1.0 / torch.sqrt((hc * hc).mean(-1, keepdim=True) + eps)
    xh = hc * rstd
    a = sc if site == 1 else 1 + sc
    out = xh * a + sf
    gm = dout * a
    t = dh + rstd * (gm - gm.mean(-1, keepdim=True) - xh * (gm * xh).mean(-1, keepdim=True))
    ref = {"h": h, "out": out, "dr": t, "dy": t if g is None else g * t,
           "dscale": (dout * xh).sum_to_size(sc.shape), "dshift": dout.sum_to_size(sf.shape)}
    if g is not None:
        ref["dgate"] = (t * y).sum_to_size(g.shape)
    return ref


def judge(torch, got, ref, tol):
    """got: some of KEYS (and "other"); (ok, errors dict, one-line text) as peer_ops.judge. A
    key the reference has not (dgate at site 2) is not judged; one that got lacks neither."""
    errs = {k: peer_ops.rel_l2(torch, got[k], ref[k]) for k in KEYS if k in got and k in ref}
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
    """The peers of a res shape, in timing order: PyTorch's eager chain as Wan runs it at the
    site (x = x + y * e[k] -- x + y at site 2 -- in the residual's dtype, then the norm of the
    stored x: norm3 with its weight and bias, or the modulated norm2 / next block's norm1;
    cast to out's dtype) and torch.compile of that chain (static shapes)."""
    site = site_of(sh)
    odt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[sh["out_dtype"]]
    rdt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[sh["res_dtype"]]

    def chain(r, y, g, scale, shift):  # sites 2 (g None) and 3
        h = (r + (y if g is None else y * g)).to(rdt)
        out = F.layer_norm(h, (h.shape[-1],), eps=eps) * (1 + scale) + shift
        return h, out.to(odt)

    def affine_chain(r, y, g, w, b):  # site 1
        h = (r + y * g).to(rdt)
        out = F.layer_norm(h, (h.shape[-1],), weight=w, bias=b, eps=eps)
        return h, out.to(odt)

    fn = affine_chain if site == 1 else chain

    def peer(name, f):
        return Peer(name, lambda s: f(s["r"], s["y"], *views(s)), leaves(site), True)

    return [peer("torch_eager", fn), peer("torch_compile", compile_fn(fn))]


def grads(torch, peer, s, h, out):
    """dict of dr, dy, dgate (with a gate), dscale, dshift, other from autograd of (h, out) for
    (dh, dout); other: the gradient of every table chunk the site does not use."""
    ins = [s[k] for k in peer.grads_of]
    gs = torch.autograd.grad((h, out), ins, (s["dh"].reshape(h.shape), s["dout"].reshape(out.shape)),
                             retain_graph=True, allow_unused=True)
    gd = {k: (g if g is not None else torch.zeros_like(t)) for k, g, t in zip(peer.grads_of, gs, ins)}
    site = s.get("site", 3)
    used = {}
    res = {"dr": gd["r"], "dy": gd["y"]}
    for key, p in zip(("dgate", "dscale", "dshift"), SITES[site]):
        if p is None:
            continue
        res[key] = gd[p[0]] if p[1] is None else gd[p[0]][:, p[1]]
        if p[1] is not None:
            used.setdefault(p[0], set()).add(p[1])
    res["other"] = torch.cat([gd[k][:, c].reshape(-1) for k in sorted(used) for c in range(6) if c not in used[k]])
    return res


def check(torch, peer, s, eps, tol, with_grads):
    """Runs the peer on set s and judges it: (fwd ok, fwd text, bwd ok, bwd text)."""
    flat = ("dgate", "dscale", "dshift")
    ref = reference64(torch, s, eps)
    ref = {k: (v.reshape(-1) if k in flat else v) for k, v in ref.items()}
    h, out = peer.fwd(s)
    fok, _, ftext = judge(torch, {"h": h, "out": out}, ref, tol)
    if not with_grads:
        return fok, ftext, None, None
    g = grads(torch, peer, s, h, out)
    got = {"h": h, "out": out, "other": g.pop("other")}
    got.update({k: (v.reshape(-1) if k in flat else v) for k, v in g.items()})
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
