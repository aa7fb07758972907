"""peer_ops.py -- what torch_peers.py times: the inputs of a shape, the PyTorch peers of the
LayerNorm-Modulate op (forward and backward), the float64 reference every peer is checked
against before its time counts, and the memory a peer's forward keeps for its backward.

A peer is a Peer(name, fwd, mode): fwd(inputs) -> y, and its gradients are those of y with
respect to the tensors it was given (x and the modulation table), read back as dx, dscale,
dshift. Inputs of one set (make_inputs):
  x    [B, S, D] in x's dtype ([B, F, L, D] per frame, so [B, F, 1, D] rows broadcast)
  e    Wan's modulation table: [B, 6, D] per sample (chunk 0 shift, chunk 1 scale),
       [B, S, 6, D] per token, [B, F, 6, D] per frame; in the modulation dtype
  mod, temb  per sample only: e = mod + temb exactly as fp32 adds them (Wan 2.1's
       `e = (self.modulation + e).chunk(6, dim=1)`: mod [1, 6, D], temb [B, 6, D])
  dy   [B, S, D] (x's view) in y's dtype: the incoming gradient
The reference (reference64) computes the op's definition in float64 from the same storage
(two-pass statistics; dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * (1 +
scale); dscale = sum of dy * xhat, dshift = sum of dy over the rows of each modulation row).

judge() compares a peer's outputs with it: per output the relative L2 error ||got - ref|| /
||ref|| (float64), and a peer is wrong when any of them is above tolerance(dtype) or not
finite; the gradients of the table's other four chunks must be exactly zero.
"""
import collections

# name: the benchmark's variant field; fwd(set) -> y; grads_of: the set's tensors its
# gradients are taken of; bwd: whether its backward is timed too.
Peer = collections.namedtuple("Peer", "name fwd grads_of bwd")


def tolerance(x_dtype, y_dtype):
    """The largest relative L2 error a correct peer may have: 4 unit roundoffs of the least
    precise of x's and y's dtype (bf16 2^-8, fp16 2^-11), 1e-5 for fp32 (accumulation over D
    and over the rows of a modulation row). One rounding of every element of an output gives
    about u / sqrt(3); 4u leaves room for a peer that rounds an intermediate (eager rounds
    LayerNorm's output to x's dtype before the modulation). Wrong gradients are off by O(1)."""
    u = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11, "f32": 0.0}
    worst = max(u[x_dtype], u[y_dtype])
    return 4 * worst if worst > 0 else 1e-5


def dims(sh):
    D, rows, S = sh["D"], sh["rows"], sh["rows_per_sample"]
    layout = sh.get("layout", "sample")
    L = sh.get("frame_len", S)
    if layout == "frame" and S % L:
        raise ValueError("per-frame peer needs whole frames (S % frame_len == 0)")
    return rows // S, S, D, layout, L


def chunks(e, layout):
    """(scale, shift) views of the modulation table for the layout: broadcastable to x."""
    if layout == "token":
        return e[:, :, 1], e[:, :, 0]
    if layout == "frame":
        return e[:, :, 1:2], e[:, :, 0:1]
    return e[:, 1:2], e[:, 0:1]


def chunk_grads(ge, layout):
    """(dscale, dshift, the other four chunks' gradient) of the table's gradient."""
    if layout == "sample":
        return ge[:, 1], ge[:, 0], ge[:, 2:]
    return ge[:, :, 1], ge[:, :, 0], ge[:, :, 2:]


def make_inputs(torch, sh, nsets, dev, dtypes, grad):
    """nsets input sets (dicts) of shape sh on dev; leaf tensors require grad when grad."""
    B, S, D, layout, L = dims(sh)
    xdt, mdt, ydt = dtypes[sh["x_dtype"]], dtypes[sh["mod_dtype"]], dtypes[sh["y_dtype"]]
    sets = []
    for i in range(nsets):
        g = torch.Generator(device=dev).manual_seed(1000 + i)
        x = (torch.randn(B, S, D, device=dev, generator=g) + 0.25).to(xdt)
        dy = torch.randn(B, S, D, device=dev, generator=g).to(ydt)
        s = {}
        if layout == "token":
            e = (0.1 * torch.randn(B, S, 6, D, device=dev, generator=g)).to(mdt)
        elif layout == "frame":
            F_ = S // L
            e = (0.1 * torch.randn(B, F_, 6, D, device=dev, generator=g)).to(mdt)
            x, dy = x.view(B, F_, L, D), dy.view(B, F_, L, D)
        else:
            mod = (0.1 * torch.randn(1, 6, D, device=dev, generator=g)).to(mdt)
            temb = (0.1 * torch.randn(B, 6, D, device=dev, generator=g)).to(mdt)
            e = mod + temb  # the same fp32 sum the table-form peer computes
            s["mod"], s["temb"] = mod, temb
        s.update(x=x, e=e, dy=dy)
        if grad:
            for k in ("x", "e", "mod", "temb"):
                if k in s:
                    s[k] = s[k].detach().requires_grad_()
        sets.append(s)
    return sets


def reference64(torch, s, layout, eps):
    """(y, dx, dscale, dshift) in float64 from the set's storage (see the module doc)."""
    x = s["x"].detach().double()
    sc, sf = (t.detach().double() for t in chunks(s["e"], layout))
    dy = s["dy"].detach().double()
    mean = x.mean(-1, keepdim=True)
    xc = x - mean
    rstd = 1.0 / torch.sqrt((xc * xc).mean(-1, keepdim=True) + eps)
    xh = xc * rstd
    y = xh * (1 + sc) + sf
    g = dy * (1 + sc)
    dx = rstd * (g - g.mean(-1, keepdim=True) - xh * (g * xh).mean(-1, keepdim=True))
    dscale = (dy * xh).sum_to_size(sc.shape)
    dshift = dy.sum_to_size(sf.shape)
    return y, dx, dscale, dshift


def rel_l2(torch, got, ref):
    got = got.detach().double().reshape(ref.shape)
    den = torch.linalg.vector_norm(ref).item()
    num = torch.linalg.vector_norm(got - ref).item()
    return num / den if den > 0 else num


def judge(torch, got, ref, tol):
    """got/ref: dicts of y, dx, dscale, dshift (got may lack the gradients, and may hold
    "other": the other chunks' gradient). Returns (ok, errors dict, one-line text)."""
    errs = {}
    for k in ("y", "dx", "dscale", "dshift"):
        if k in got:
            errs[k] = rel_l2(torch, got[k], ref[k])
    bad = [k for k, v in errs.items() if not (v <= tol)]
    if "other" in got and got["other"] is not None:
        o = got["other"].detach().double().abs().max().item()
        errs["other"] = o
        if not (o == 0.0):
            bad.append("other")
    text = ", ".join("%s %.3g" % (k, v) for k, v in errs.items())
    if bad:
        return False, errs, "wrong result: rel err %s (tolerance %.3g; wrong: %s)" % (
            text, tol, ", ".join(bad))
    return True, errs, "rel err %s (tolerance %.3g)" % (text, tol)


def peers(torch, F, sh, eps, ydt, compile_fn, want_liger=True, user=()):
    """The peers of a shape, in timing order, and a note when Liger is left out (why).
    compile_fn(fn) -> the compiled fn (torch.compile with static shapes); user: the
    (name, fn, with_backward) of --peer (peer_user.py), called fn(x, scale, shift, eps)."""
    B, S, D, layout, L = dims(sh)

    def chain(x, scale, shift):
        return (F.layer_norm(x, (x.shape[-1],), eps=eps) * (1 + scale) + shift).to(ydt)

    def wan_fp32(x, scale, shift):
        # Wan 2.1: WanLayerNorm is layer_norm(x.float()); modulation in fp32.
        y = F.layer_norm(x.float(), (x.shape[-1],), eps=eps) * (1 + scale.float()) + shift.float()
        return y.type_as(x) if ydt == x.dtype else y.to(ydt)

    def table(x, mod, temb):
        e = (mod + temb).chunk(6, dim=1)
        return (F.layer_norm(x, (x.shape[-1],), eps=eps) * (1 + e[1]) + e[0]).to(ydt)

    def plain(name, fn, bwd):
        def fwd(s):
            sc, sf = chunks(s["e"], layout)
            return fn(s["x"], sc, sf)
        return Peer(name, fwd, ("x", "e"), bwd)

    def tabular(name, fn):
        return Peer(name, lambda s: fn(s["x"], s["mod"], s["temb"]), ("x", "mod", "temb"), True)

    out = [plain("torch_eager", chain, True), plain("torch_compile", compile_fn(chain), True),
           plain("torch_eager_wan_fp32", wan_fp32, False),
           plain("torch_compile_wan_fp32", compile_fn(wan_fp32), False)]
    for name, fn, bwd in user:
        out.append(plain(name, lambda x, sc, sf, fn=fn: fn(x, sc, sf, eps).to(ydt), bwd))
    if layout == "sample":
        out.append(tabular("torch_eager_table", table))
        out.append(tabular("torch_compile_table", compile_fn(table)))
    note = None
    if want_liger and layout == "sample" and B == 1:
        try:
            from liger_kernel.ops.layer_norm import LigerLayerNormFunction
        except Exception as ex:  # not installed, or it does not load with this torch/triton
            note = "liger: not importable (%s)" % ((str(ex).splitlines() or [type(ex).__name__])[0][:200])
        else:
            def liger(s):
                # At batch 1 adaLN is a LayerNorm with weight 1 + scale and bias shift.
                x, e = s["x"], s["e"]
                y = LigerLayerNormFunction.apply(x.reshape(-1, D), 1 + e[0, 1], e[0, 0], eps)
                return y.reshape(x.shape).to(ydt)
            out.append(Peer("liger", liger, ("x", "e"), True))
    return out, note


def layer_norm_only(F, eps):
    """F.layer_norm(x) alone (no modulation): a labelled reference point, not a peer."""
    return lambda s: F.layer_norm(s["x"], (s["x"].shape[-1],), eps=eps)


def check_layer_norm(torch, y, s, eps, tol):
    x = s["x"].detach().double()
    xc = x - x.mean(-1, keepdim=True)
    ref = xc / torch.sqrt((xc * xc).mean(-1, keepdim=True) + eps)
    ok, _, text = judge(torch, {"y": y}, {"y": ref}, tol)
    return ok, text


def grads(torch, peer, s, y, layout):
    """dict of dx, dscale, dshift, other from autograd of y (a peer's output of set s)."""
    ins = [s[k] for k in peer.grads_of]
    gs = torch.autograd.grad(y, ins, s["dy"].reshape(y.shape), retain_graph=True,
                             allow_unused=True)
    got = dict(zip(peer.grads_of, gs))
    out = {"dx": got["x"]}
    if "e" in got:
        ds, dh, other = chunk_grads(got["e"], layout)
        out.update(dscale=ds, dshift=dh, other=other)
    else:
        # Wan's table form: mod [1, 6, D] and temb [B, 6, D] both get the table's gradient;
        # temb's is the per-sample one (mod's sums it over the batch).
        dt, dm = got["temb"], got["mod"]
        ds, dh, other = chunk_grads(dt, "sample")
        out.update(dscale=ds, dshift=dh, other=other)
        out["mod_sum"] = (dm, dt)
    return out


def check(torch, peer, s, layout, eps, tol, with_grads):
    """Runs the peer on set s and judges it: (fwd ok, fwd text, bwd ok, bwd text)."""
    ref_y, ref_dx, ref_ds, ref_dh = reference64(torch, s, layout, eps)
    ref = {"y": ref_y, "dx": ref_dx, "dscale": ref_ds.reshape(-1), "dshift": ref_dh.reshape(-1)}
    y = peer.fwd(s)
    fok, _, ftext = judge(torch, {"y": y}, ref, tol)
    if not with_grads:
        return fok, ftext, None, None
    g = grads(torch, peer, s, y, layout)
    got = {"y": y, "dx": g["dx"], "dscale": g["dscale"].reshape(-1),
           "dshift": g["dshift"].reshape(-1), "other": g["other"]}
    bok, _, btext = judge(torch, got, ref, tol)
    if bok and "mod_sum" in g:
        dm, dt = g["mod_sum"]
        e = rel_l2(torch, dm, dt.detach().double().sum(0, keepdim=True))
        if not (e <= tol):
            bok, btext = False, "wrong result: d(modulation) is not the batch sum of d(t_emb): rel err %.3g" % e
    return fok, ftext, bok, btext


def saved_bytes(torch, peer, s):
    """Device bytes the peer's forward keeps alive for its backward, beyond its inputs and
    y itself (torch.cuda.memory_allocated before and after one forward); None off CUDA."""
    if s["x"].device.type != "cuda":
        return None
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    y = peer.fwd(s)
    torch.cuda.synchronize()
    after = torch.cuda.memory_allocated()
    n = after - before - y.untyped_storage().nbytes()
    del y
    return max(0, n)
