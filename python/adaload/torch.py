"""PyTorch entry points over libadaload: the fused LayerNorm-Modulate op and the planner's
batch sampler.

    import adaload.torch as at
    y = at.lnmod(x, scale, shift, eps=1e-6, variant="dtile")   # x [B, S, D] on a CUDA device
    h, out = at.lnmod_res(x, y_ffn, e[5], e_next[1], e_next[0])  # x + gate*y, then the op
    sampler = at.PlanBatchSampler("plan.jsonl", rank=r, world_size=w, start_step=k)

lnmod computes y = LayerNorm(x) * (1 + scale) + shift (no affine weights of its own) with
the modulation layout read from the shapes: scale/shift [B, 1, D] per sample (Wan 2.1: a
chunk of the [B, 6, D] modulation, batch stride 6*D), [B, S, D] per token (Wan 2.2
TI2V-5B), [B, F, D] per latent frame (pass frame_len, the tokens per frame). scale and shift
are passed to the kernel as the strided views they are (no copies); they must be contiguous
in D and share one dtype, fp32 or x's. x is fp32, fp16 or bf16 and is used as is when
contiguous (else one contiguous copy). y has x's dtype unless out_dtype=torch.float32.
The forward runs on PyTorch's current stream of x's device.

The backward (backward="auto", the default): the variant's fused backward kernel,
lnmod_backward, when the loaded library exports it, on the current stream of x's device,
its workspace from PyTorch's allocator on that stream (none when it needs 0 bytes), dx in
x's dtype, and dscale / dshift in the modulation dtype written straight into gradients with
the strides of the scale / shift views (the kernel reads scale and writes dscale with one
row stride, the descriptor's: e.g. Wan's [B, 1, D] chunk of [B, 6, D] gets a [B, 1, D]
gradient at batch stride 6*D, no gather and no copy). Where the library has no
lnmod_backward, or the variant has none (LNMOD_ERR_UNSUPPORTED; a warning says so once), the
backward is computed by PyTorch, in fp32, from the saved x, mean and rstd, with the formulas
of the op's definition (g = dy * (1 + scale)):
    dx     = rstd * (g - mean_D(g) - xhat * mean_D(g * xhat)),  xhat = (x - mean) * rstd
    dscale = sum over the rows of each modulation row of dy * xhat
    dshift = sum over the same rows of dy
backward="kernel" insists on the kernel (LibraryError / KernelError instead of falling
back); backward="torch" always uses the PyTorch formulas. Only x, mean and rstd (fp32, 8
bytes per row) are saved for the backward, besides the scale input.

lnmod_res(r, y, gate, scale, shift) -> (h, out) is the fused gated residual + LayerNorm-
Modulate op of issue 22 (h = r + gate * y, out = LN(h) * (1 + scale) + shift, or an affine
LN(h) * weight + bias), forward and backward in adaload's kernels (its docstring); not yet
run on a GPU from Python.

Needs PyTorch; lnmod needs a CUDA device and a library built with the CUDA kernels (each
missing piece is a clear NoCudaError / LibraryError).
"""
try:
    import torch as _torch
except ImportError as _e:  # pragma: no cover - exercised by the no-torch test
    raise ImportError("adaload.torch needs PyTorch (pip install torch); without it, "
                      "adaload.plan.PlanBatches gives the same batches as plain lists") from _e

import ctypes
import warnings

from . import _lib
from .errors import KernelError, LibraryError, NoCudaError
from .plan import PlanBatches

BACKWARDS = ("auto", "kernel", "torch")

_DT = {_torch.float32: "f32", _torch.float16: "f16", _torch.bfloat16: "bf16"}


def _mod_stride(t, what, op="lnmod"):
    """The element stride between modulation rows of a [B, K, D] view, whose row k of batch b
    must sit at (b*K + k) * stride; ValueError when the view is not of that form."""
    B, K, D = t.shape
    if t.stride(2) != 1:
        raise ValueError("adaload.torch.%s: %s must be contiguous in its last dimension "
                         "(stride %d)" % (op, what, t.stride(2)))
    if K > 1:
        s = t.stride(1)
        if B > 1 and t.stride(0) != K * s:
            raise ValueError("adaload.torch.%s: %s of shape %s has strides %s: rows of "
                             "consecutive batches must be evenly spaced (stride(0) = %d * stride(1))"
                             % (op, what, tuple(t.shape), t.stride(), K))
    else:
        s = t.stride(0) if B > 1 else D
    return max(s, D) if B * K == 1 else s


def _layout(x, scale, layout, frame_len, op="lnmod"):
    B, S, D = x.shape
    K = scale.shape[1]
    if layout is None:
        if frame_len is not None:
            layout = "frame"
        elif K == 1:
            layout = "sample"
        elif K == S:
            layout = "token"
        else:
            raise ValueError("adaload.torch.%s: the modulation has %d rows per sample for S = "
                             "%d tokens: pass frame_len for a per-frame layout" % (op, K, S))
    if layout not in _lib.LAYOUTS:
        raise ValueError("adaload.torch.%s: layout %r: sample, token or frame" % (op, layout))
    L = 1
    if layout == "frame":
        if frame_len is None or frame_len < 1:
            raise ValueError("adaload.torch.%s: the per-frame layout needs frame_len >= 1" % op)
        L = int(frame_len)
        F = -(-S // L)
        if K != F:
            raise ValueError("adaload.torch.%s: per-frame modulation needs ceil(S / frame_len) = "
                             "%d rows per sample, it has %d" % (op, F, K))
    elif layout == "token" and K != S:
        raise ValueError("adaload.torch.%s: per-token modulation needs S = %d rows, it has %d"
                         % (op, S, K))
    elif layout == "sample" and K != 1:
        raise ValueError("adaload.torch.%s: per-sample modulation is [B, 1, D], it has %d rows"
                         % (op, K))
    return layout, L


def _desc(x, scale, shift, eps, layout, L, y_dtype):
    B, S, D = x.shape
    d = _lib.LnmodDesc()
    d.rows, d.D, d.rows_per_sample, d.frame_len = B * S, D, S, L
    d.x_dtype = _lib.DTYPES[_DT[x.dtype]]
    d.mod_dtype = _lib.DTYPES[_DT[scale.dtype]]
    d.y_dtype = _lib.DTYPES[_DT[y_dtype]]
    d.layout = _lib.LAYOUTS[layout]
    d.scale_stride = _mod_stride(scale, "scale")
    d.shift_stride = _mod_stride(shift, "shift")
    d.eps = float(eps)
    return d


def _check_inputs(x, scale, shift):
    for name, t in (("x", x), ("scale", scale), ("shift", shift)):
        if not isinstance(t, _torch.Tensor):
            raise TypeError("adaload.torch.lnmod: %s must be a tensor" % name)
        if t.dim() != 3:
            raise ValueError("adaload.torch.lnmod: %s must be 3-D ([B, S, D] / [B, K, D]), it is %s"
                             % (name, tuple(t.shape)))
        if t.dtype not in _DT:
            raise ValueError("adaload.torch.lnmod: %s has dtype %s (float32, float16 or bfloat16)"
                             % (name, t.dtype))
    if scale.shape != shift.shape or scale.dtype != shift.dtype:
        raise ValueError("adaload.torch.lnmod: scale and shift must have one shape and dtype "
                         "(%s %s vs %s %s)" % (tuple(scale.shape), scale.dtype, tuple(shift.shape),
                                               shift.dtype))
    B, S, D = x.shape
    if scale.shape[0] != B or scale.shape[2] != D:
        raise ValueError("adaload.torch.lnmod: scale %s does not match x %s"
                         % (tuple(scale.shape), tuple(x.shape)))
    if scale.dtype not in (_torch.float32, x.dtype):
        raise ValueError("adaload.torch.lnmod: scale/shift dtype %s: float32 or x's dtype %s"
                         % (scale.dtype, x.dtype))
    if not _torch.cuda.is_available():
        raise NoCudaError("adaload.torch.lnmod: PyTorch sees no CUDA device here")
    if not (x.is_cuda and scale.device == x.device and shift.device == x.device):
        raise ValueError("adaload.torch.lnmod: x, scale and shift must be on one CUDA device "
                         "(%s, %s, %s)" % (x.device, scale.device, shift.device))


def _stream_of(x):
    """The cudaStream_t (as an int) of PyTorch's current stream on x's device."""
    return _torch.cuda.current_stream(x.device).cuda_stream


def mod_index(rows, S, layout, L, device):
    """m(r) for every token row (a LongTensor [rows])."""
    r = _torch.arange(rows, device=device)
    if layout == "token":
        return r
    if layout == "frame":
        F = -(-S // L)
        return (r // S) * F + (r % S) // L
    return r // S


def _column_sums(v, B, S, K, layout, L):
    """Sum of rows v [B*S, D] over each modulation row, deterministic (no atomics): [B*K, D]."""
    D = v.shape[1]
    if layout == "token":
        return v
    if layout == "sample":
        return v.reshape(B, S, D).sum(1)
    pad = K * L - S
    v = v.reshape(B, S, D)
    if pad:
        v = _torch.cat([v, v.new_zeros(B, pad, D)], 1)
    return v.reshape(B, K, L, D).sum(2).reshape(B * K, D)


def _per_token(t, S, layout, L):
    """The modulation rows of t [B, K, D] as seen by each token: broadcastable to [B, S, D]
    ([B, 1, D] per sample and [B, S, D] per token as they are; per frame, gathered)."""
    if layout != "frame":
        return t
    return t[:, _torch.arange(S, device=t.device) // L]


def backward_reference(x, scale, dy, mean, rstd, layout, L):
    """dx, dscale, dshift from the saved statistics, in fp32 (the fallback backward; also
    what a test compares the fused kernel with). Shapes: x, dy [B, S, D]; scale [B, K, D];
    mean, rstd [B*S]; results dx [B, S, D] fp32, dscale/dshift [B, K, D] fp32."""
    B, S, D = x.shape
    K = scale.shape[1]
    mean3, rstd3 = mean.reshape(B, S, 1), rstd.reshape(B, S, 1)
    xh = (x.float() - mean3) * rstd3
    g0 = dy.float()
    g = g0 * (1 + _per_token(scale.float(), S, layout, L))
    dx = rstd3 * (g - g.mean(2, keepdim=True) - xh * (g * xh).mean(2, keepdim=True))
    dscale = _column_sums((g0 * xh).reshape(B * S, D), B, S, K, layout, L)
    dshift = _column_sums(g0.reshape(B * S, D), B, S, K, layout, L)
    return dx, dscale.reshape(B, K, D), dshift.reshape(B, K, D)


class LnmodFunction(_torch.autograd.Function):
    """autograd.Function of the op; call it through lnmod()."""

    @staticmethod
    def forward(ctx, x, scale, shift, eps, variant, layout, frame_len, out_dtype, backward):
        if backward not in BACKWARDS:
            raise ValueError("adaload.torch.lnmod: backward=%r: auto, kernel or torch" % (backward,))
        lib = _lib.load()
        lib.require_cuda()
        _check_inputs(x, scale, shift)
        layout, L = _layout(x, scale, layout, frame_len)
        x = x.contiguous()
        y_dtype = out_dtype or x.dtype
        if y_dtype not in (x.dtype, _torch.float32):
            raise ValueError("adaload.torch.lnmod: out_dtype %s: x's dtype or float32" % y_dtype)
        d = _desc(x, scale, shift, eps, layout, L, y_dtype)
        need = any(ctx.needs_input_grad[:3])
        y = _torch.empty(x.shape, dtype=y_dtype, device=x.device)
        rows = x.shape[0] * x.shape[1]
        mean = _torch.empty(rows, dtype=_torch.float32, device=x.device) if need else None
        rstd = _torch.empty(rows, dtype=_torch.float32, device=x.device) if need else None
        lib.set_device(x.device.index)
        stream = _stream_of(x)
        # The forward's workspace (dtile's ticket counter, kernels/lnmod.h) must be zero on
        # entry: a fresh zeroed one a call, so calls on any streams never share one.
        fws = ctypes.c_size_t(0)
        lib.check(lib.dll.lnmod_forward_workspace(variant.encode(), ctypes.byref(d), ctypes.byref(fws)),
                  "lnmod_forward_workspace(%s)" % variant)
        wsf = _torch.zeros((fws.value + 7) // 8, dtype=_torch.int64, device=x.device) if fws.value else None
        st = lib.dll.lnmod_forward(variant.encode(), ctypes.byref(d), x.data_ptr(),
                                   scale.data_ptr(), shift.data_ptr(), y.data_ptr(),
                                   mean.data_ptr() if need else None,
                                   rstd.data_ptr() if need else None, _ptr(wsf), fws.value, stream)
        lib.check(st, "lnmod_forward(%s)" % variant)
        if need:
            ctx.save_for_backward(x, scale, mean, rstd)
            ctx.meta = (variant, layout, L, d, backward, (tuple(shift.shape), shift.stride()))
        return y

    @staticmethod
    def backward(ctx, dy):
        x, scale, mean, rstd = ctx.saved_tensors
        variant, layout, L, d, how, shift_view = ctx.meta
        lib = _lib.load()
        dy = dy.contiguous()
        fused = None
        if how != "torch":
            fused = _fused_backward(lib, variant, d, x, scale, shift_view, dy, mean, rstd,
                                    how == "kernel")
        if fused is not None:
            dx, dscale, dshift = fused
        else:
            dx, dscale, dshift = backward_reference(x, scale, dy, mean, rstd, layout, L)
            dx, dscale, dshift = dx.to(x.dtype), dscale.to(scale.dtype), dshift.to(scale.dtype)
        return (dx, dscale, dshift, None, None, None, None, None, None)


_warned = set()


def _fall_back(what, strict):
    """None (use the PyTorch backward) after one warning per reason; raises when strict."""
    if strict:
        raise what
    if str(what) not in _warned:
        _warned.add(str(what))
        warnings.warn("adaload.torch.lnmod: %s; the backward runs in PyTorch" % what, RuntimeWarning,
                      stacklevel=3)
    return None


def _fused_backward(lib, variant, d, x, scale, shift_view, dy, mean, rstd, strict):
    """lnmod_backward of kernels/lnmod.h: dx in x's dtype; dscale / dshift in the modulation
    dtype with the strides of the scale / shift views the forward was given (the descriptor's
    scale_stride and shift_stride, as in the forward). None where there is no backward kernel
    (library or variant) and not strict."""
    if not lib.has_backward:
        return _fall_back(LibraryError("%s has no lnmod_backward (a library built before the "
                                       "backward kernels)" % lib.path), strict)
    shift_shape, shift_stride = shift_view
    bd = _lib.LnmodDesc.from_buffer_copy(d)
    bd.y_dtype = _lib.DTYPES[_DT[dy.dtype]]
    ws = ctypes.c_size_t(0)
    v = variant.encode()
    st = lib.dll.lnmod_backward_workspace(v, ctypes.byref(bd), ctypes.byref(ws))
    if st == _lib.LNMOD_ERR_UNSUPPORTED:
        return _fall_back(KernelError("variant %s has no backward for this shape (%s)" % (
            variant, lib.dll.lnmod_status_name(st).decode()), "LNMOD_ERR_UNSUPPORTED"), strict)
    lib.check(st, "lnmod_backward_workspace(%s)" % variant)
    # PyTorch's caching allocator serves the current stream; blocks are 512-byte aligned.
    work = _torch.empty(ws.value, dtype=_torch.uint8, device=x.device) if ws.value else None
    dx = _torch.empty_like(x)
    dscale = _torch.empty_strided(scale.shape, scale.stride(), dtype=scale.dtype, device=x.device)
    dshift = _torch.empty_strided(shift_shape, shift_stride, dtype=scale.dtype, device=x.device)
    lib.set_device(x.device.index)
    stream = _stream_of(x)
    st = lib.dll.lnmod_backward(v, ctypes.byref(bd), x.data_ptr(), scale.data_ptr(), dy.data_ptr(),
                                mean.data_ptr(), rstd.data_ptr(), dx.data_ptr(), dscale.data_ptr(),
                                dshift.data_ptr(), work.data_ptr() if work is not None else None,
                                ws.value, stream)
    lib.check(st, "lnmod_backward(%s)" % variant)
    return dx, dscale, dshift


def lnmod(x, scale, shift, eps=1e-6, variant="dtile", layout=None, frame_len=None,
          out_dtype=None, backward="auto"):
    """y = LayerNorm(x) * (1 + scale) + shift through adaload's kernel (see the module's
    docstring for shapes, dtypes and the backward: "auto", "kernel" or "torch")."""
    return LnmodFunction.apply(x, scale, shift, eps, variant, layout, frame_len, out_dtype,
                               backward)


# ---- the fused gated residual + LayerNorm-Modulate op (issue 22, kernels/lnmod_res.h) ----

RES_OP = "lnmod_res"


def _res_norm(scale, norm):
    """"modulate" or "affine": given, or read from scale's dimensions ([B, K, D] or [D])."""
    if norm is None:
        return "affine" if isinstance(scale, _torch.Tensor) and scale.dim() == 1 else "modulate"
    if norm not in _lib.RES_NORMS:
        raise ValueError("adaload.torch.lnmod_res: norm=%r: modulate or affine" % (norm,))
    return norm


def _check_res_inputs(r, y, gate, scale, shift, norm):
    """Types, dimensions, shapes, dtypes and layouts (ValueError / TypeError naming the
    argument); the device is _check_res_device's."""
    op = "adaload.torch.lnmod_res"
    named = [("r", r), ("y", y), ("scale", scale), ("shift", shift)]
    if gate is not None:
        named.append(("gate", gate))
    for name, t in named:
        if not isinstance(t, _torch.Tensor):
            raise TypeError("%s: %s must be a tensor" % (op, name))
        if t.dtype not in _DT:
            raise ValueError("%s: %s has dtype %s (float32, float16 or bfloat16)" % (op, name, t.dtype))
    for name, t in (("r", r), ("y", y)):
        if t.dim() != 3:
            raise ValueError("%s: %s must be 3-D [B, S, D], it is %s" % (op, name, tuple(t.shape)))
    if r.shape != y.shape:
        raise ValueError("%s: r %s and y %s must have one shape" % (op, tuple(r.shape), tuple(y.shape)))
    B, S, D = y.shape
    if r.dtype not in (_torch.float32, y.dtype):
        raise ValueError("%s: r (the residual) has dtype %s: float32 or y's dtype %s"
                         % (op, r.dtype, y.dtype))
    if gate is not None and (gate.dim() != 3 or gate.shape[0] != B or gate.shape[2] != D):
        raise ValueError("%s: gate %s must be [B, K, D] for y %s" % (op, tuple(gate.shape),
                                                                       tuple(y.shape)))
    if scale.shape != shift.shape or scale.dtype != shift.dtype:
        raise ValueError("%s: scale and shift must have one shape and dtype (%s %s vs %s %s)"
                         % (op, tuple(scale.shape), scale.dtype, tuple(shift.shape), shift.dtype))
    if norm == "modulate":
        if scale.dim() != 3 or scale.shape[0] != B or scale.shape[2] != D:
            raise ValueError("%s: scale %s must be [B, K, D] for y %s (norm=\"modulate\")"
                             % (op, tuple(scale.shape), tuple(y.shape)))
        if gate is not None and gate.shape[1] != scale.shape[1]:
            raise ValueError("%s: gate has %d rows per sample, scale %d: one map (layout) for both"
                             % (op, gate.shape[1], scale.shape[1]))
    else:
        if scale.dim() != 1 or scale.shape[0] != D:
            raise ValueError("%s: norm=\"affine\" takes the LayerNorm's weight and bias as scale "
                             "and shift, [D] = [%d] each, not %s" % (op, D, tuple(scale.shape)))
        if scale.stride(0) != 1 or shift.stride(0) != 1:
            raise ValueError("%s: the affine weight and bias must be contiguous" % op)
    mods = [t for t in (gate, scale) if t is not None]
    if any(t.dtype != scale.dtype for t in mods):
        raise ValueError("%s: gate, scale and shift must share one dtype (%s vs %s)"
                         % (op, gate.dtype, scale.dtype))
    if scale.dtype not in (_torch.float32, y.dtype):
        raise ValueError("%s: the modulation dtype %s: float32 or y's dtype %s" % (op, scale.dtype, y.dtype))


def _check_res_device(r, y, gate, scale, shift):
    if not _torch.cuda.is_available():
        raise NoCudaError("adaload.torch.lnmod_res: PyTorch sees no CUDA device here")
    ts = [t for t in (r, gate, scale, shift) if t is not None]
    if not (y.is_cuda and all(t.device == y.device for t in ts)):
        raise ValueError("adaload.torch.lnmod_res: r, y, gate, scale and shift must be on one CUDA "
                         "device (%s)" % ", ".join(str(t.device) for t in [y] + ts))


def _res_desc(r, y, gate, scale, shift, norm, layout, L, out_dtype, eps):
    B, S, D = y.shape
    d = _lib.LnmodResDesc()
    d.rows, d.D, d.rows_per_sample, d.frame_len = B * S, D, S, L
    d.layout = _lib.LAYOUTS[layout]
    d.gate = _lib.RES_GATES["gate" if gate is not None else "none"]
    d.norm = _lib.RES_NORMS[norm]
    d.res_dtype = _lib.DTYPES[_DT[r.dtype]]
    d.branch_dtype = _lib.DTYPES[_DT[y.dtype]]
    d.mod_dtype = _lib.DTYPES[_DT[scale.dtype]]
    d.out_dtype = _lib.DTYPES[_DT[out_dtype]]
    d.gate_stride = _mod_stride(gate, "gate", RES_OP) if gate is not None else D
    if norm == "modulate":
        d.scale_stride = _mod_stride(scale, "scale", RES_OP)
        d.shift_stride = _mod_stride(shift, "shift", RES_OP)
    else:
        d.scale_stride = d.shift_stride = D
    d.eps = float(eps)
    return d


def _ptr(t):
    return t.data_ptr() if t is not None else None


class LnmodResFunction(_torch.autograd.Function):
    """autograd.Function of the fused gated residual + LayerNorm-Modulate op; call it through
    lnmod_res()."""

    @staticmethod
    def forward(ctx, r, y, gate, scale, shift, eps, variant, norm, layout, frame_len, out_dtype):
        lib = _lib.load()
        lib.require_res()
        norm = _res_norm(scale, norm)
        _check_res_inputs(r, y, gate, scale, shift, norm)
        _check_res_device(r, y, gate, scale, shift)
        mapped = gate if gate is not None else (scale if norm == "modulate" else None)
        if mapped is not None:
            layout, L = _layout(y, mapped, layout, frame_len, op=RES_OP)
        else:  # the affine norm without a gate uses no map (the descriptor ignores it)
            layout, L = "sample", 1
        out_dtype = out_dtype or y.dtype
        if out_dtype not in (y.dtype, _torch.float32):
            raise ValueError("adaload.torch.lnmod_res: out_dtype %s: y's dtype or float32" % out_dtype)
        r, y = r.contiguous(), y.contiguous()
        d = _res_desc(r, y, gate, scale, shift, norm, layout, L, out_dtype, eps)
        need = any(ctx.needs_input_grad[:5])
        dev = y.device
        h = _torch.empty(r.shape, dtype=r.dtype, device=dev)
        out = _torch.empty(y.shape, dtype=out_dtype, device=dev)
        rows = y.shape[0] * y.shape[1]
        mean = _torch.empty(rows, dtype=_torch.float32, device=dev) if need else None
        rstd = _torch.empty(rows, dtype=_torch.float32, device=dev) if need else None
        fin = _lib.LnmodResFwdIn(r.data_ptr(), y.data_ptr(), _ptr(gate), scale.data_ptr(),
                                 shift.data_ptr())
        fout = _lib.LnmodResFwdOut(h.data_ptr(), out.data_ptr(), _ptr(mean), _ptr(rstd))
        lib.set_device(dev.index)
        # The forward's workspace (dtile's ticket counter, lnmod_res.h) must be zero on entry:
        # a fresh zeroed one a call, so calls on any streams never share one.
        fws = ctypes.c_size_t(0)
        lib.check(lib.dll.lnmod_res_forward_workspace(variant.encode(), ctypes.byref(d),
                                                      ctypes.byref(fws)),
                  "lnmod_res_forward_workspace(%s)" % variant)
        wsf = _torch.zeros((fws.value + 7) // 8, dtype=_torch.int64, device=dev) if fws.value else None
        st = lib.dll.lnmod_res_forward(variant.encode(), ctypes.byref(d), ctypes.byref(fin),
                                       ctypes.byref(fout), _ptr(wsf), fws.value, _stream_of(y))
        lib.check(st, "lnmod_res_forward(%s)" % variant)
        ctx.set_materialize_grads(False)
        if need:
            # What the backward reads: h (normalized), mean/rstd, scale (weight), the gate and
            # y for dy = g t and dgate = sum t y (without a gate neither is read).
            ctx.save_for_backward(h, y if gate is not None else None, gate, scale, mean, rstd)
            ctx.meta = (variant, d, y.dtype, out_dtype, (tuple(shift.shape), shift.stride()))
        return h, out

    @staticmethod
    def backward(ctx, dh, dout):
        none6 = (None,) * 6
        if dh is None and dout is None:
            return (None,) * 5 + none6
        h, y, gate, scale, mean, rstd = ctx.saved_tensors
        variant, d, branch_dtype, out_dtype, (shift_shape, shift_stride) = ctx.meta
        dev = h.device
        if dout is None:  # out unused: only the residual's gradient flows
            dout = _torch.zeros(h.shape, dtype=out_dtype, device=dev)
        dout = dout.to(out_dtype).contiguous()
        if dh is not None:
            dh = dh.to(h.dtype).contiguous()
        lib = _lib.load()
        v = variant.encode()
        ws = ctypes.c_size_t(0)
        lib.check(lib.dll.lnmod_res_backward_workspace(v, ctypes.byref(d), ctypes.byref(ws)),
                  "lnmod_res_backward_workspace(%s)" % variant)
        # PyTorch's caching allocator serves the current stream; blocks are 512-byte aligned.
        work = _torch.empty(ws.value, dtype=_torch.uint8, device=dev) if ws.value else None
        dr = _torch.empty_like(h)
        dy = _torch.empty(h.shape, dtype=branch_dtype, device=dev)
        # Column sums written with the strides of the views the forward was given (the
        # descriptor's gate/scale/shift strides): Wan's [B, 1, D] chunk of [B, 6, D] gets a
        # [B, 1, D] gradient at batch stride 6*D, no gather, no copy.
        dgate = (_torch.empty_strided(gate.shape, gate.stride(), dtype=gate.dtype, device=dev)
                 if gate is not None else None)
        dscale = _torch.empty_strided(scale.shape, scale.stride(), dtype=scale.dtype, device=dev)
        dshift = _torch.empty_strided(shift_shape, shift_stride, dtype=scale.dtype, device=dev)
        bin_ = _lib.LnmodResBwdIn(h.data_ptr(), _ptr(y), _ptr(gate), scale.data_ptr(),
                                  dout.data_ptr(), _ptr(dh), mean.data_ptr(), rstd.data_ptr())
        bout = _lib.LnmodResBwdOut(dr.data_ptr(), dy.data_ptr(), _ptr(dgate), dscale.data_ptr(),
                                   dshift.data_ptr())
        lib.set_device(dev.index)
        st = lib.dll.lnmod_res_backward(v, ctypes.byref(d), ctypes.byref(bin_), ctypes.byref(bout),
                                        _ptr(work), ws.value, _stream_of(h))
        lib.check(st, "lnmod_res_backward(%s)" % variant)
        n = ctx.needs_input_grad
        return (dr if n[0] else None, dy if n[1] else None, dgate if n[2] else None,
                dscale if n[3] else None, dshift if n[4] else None) + none6


def lnmod_res(r, y, gate, scale, shift, eps=1e-6, variant="dtile", norm=None, layout=None,
              frame_len=None, out_dtype=None):
    """The fused gated residual + LayerNorm-Modulate op (kernels/lnmod_res_desc.h):
        h   = r + gate * y          (gate None: h = r + y), rounded once to r's dtype
        out = LayerNorm(h) * (1 + scale) + shift     norm "modulate" (scale/shift [B, K, D])
        out = LayerNorm(h) * scale + shift           norm "affine" (scale/shift = weight/bias [D])
    returns (h, out). norm None: "affine" when scale is 1-D, else "modulate". r [B, S, D]
    fp32 or y's dtype (the residual stream); y [B, S, D] fp32/fp16/bf16 (the branch); gate
    [B, K, D] and, under "modulate", scale/shift [B, K, D] as strided views (Wan's chunks of
    the [B, 6, D] modulation: no copies), contiguous in D, one map for gate and scale (the
    layout as lnmod's: per sample K = 1, per token K = S, per frame with frame_len), one dtype
    for gate/scale/shift: fp32 or y's. out has y's dtype unless out_dtype=torch.float32.
    Forward and backward run adaload's kernels (lnmod_res_forward / lnmod_res_backward) on
    PyTorch's current stream of y's device; the backward takes the gradient of out and that
    of h (h's other uses: the residual stream; none when h is unused) and gives dr, dy,
    dgate, dscale, dshift (each None where its input needs none). Saved for the backward:
    h, mean and rstd (fp32, 8 bytes a row), scale, and with a gate the gate and y.
    Wan 2.1's three sites (kernels/lnmod_res_design.md), e = the block's modulation chunks:
        x, n3 = lnmod_res(x, y_sa, e[2], norm3.weight, norm3.bias)   # then cross-attention
        x, n2 = lnmod_res(x, y_ca, None, e[4], e[3])                 # then the FFN
        x, n1 = lnmod_res(x, y_ffn, e[5], e_next[1], e_next[0])      # the next block's input
    """
    return LnmodResFunction.apply(r, y, gate, scale, shift, eps, variant, norm, layout,
                                  frame_len, out_dtype)


def lnmod_res_torch(r, y, gate, scale, shift, eps=1e-6, frame_len=None, out_dtype=None):
    """The same op as a PyTorch chain (add, F.layer_norm in fp32, modulate or affine), for
    comparisons: (h, out), h in r's dtype, out in y's dtype (or out_dtype)."""
    B, S, D = y.shape
    g = 1.0 if gate is None else _per_map(gate, S, frame_len).float()
    h = (r.float() + g * y.float()).to(r.dtype)
    if scale.dim() == 1:
        out = _torch.nn.functional.layer_norm(h.float(), (D,), scale.float(), shift.float(), eps)
    else:
        xn = _torch.nn.functional.layer_norm(h.float(), (D,), eps=eps)
        out = xn * (1 + _per_map(scale, S, frame_len).float()) + _per_map(shift, S, frame_len).float()
    return h, out.to(out_dtype or y.dtype)


def _per_map(t, S, frame_len):
    """[B, K, D] modulation rows broadcastable to [B, S, D] (per frame: gathered)."""
    K = t.shape[1]
    if K == 1 or (K == S and frame_len is None):
        return t
    return t[:, _torch.arange(S, device=t.device) // int(frame_len)]


def lnmod_torch(x, scale, shift, eps=1e-6, frame_len=None):
    """The same op as a PyTorch chain (F.layer_norm, then modulate), for comparisons."""
    B, S, D = x.shape
    K = scale.shape[1]
    xn = _torch.nn.functional.layer_norm(x, (D,), eps=eps)
    if K == 1 or (K == S and frame_len is None):
        return xn * (1 + scale) + shift
    L = int(frame_len)
    m = mod_index(S, S, "frame", L, x.device)
    return xn * (1 + scale[:, m, :]) + shift[:, m, :]


class PlanBatchSampler(_torch.utils.data.Sampler):
    """A batch sampler over adaload.plan.PlanBatches (same arguments): yields this rank's ids
    per step, [] where the rank idles in that step, each a PlanIds (a list) that carries the
    step's sync flag and its sync group's sample and token totals (.sync, .group_samples,
    .group_tokens, .step, .bucket, .tokens). A DataLoader passes only the ids on: drive the
    loop from microbatches() (zip it with the loader; the loader keeps the order) to see
    them. A DataLoader's default collate cannot stack an empty batch: give a collate_fn that
    handles [] (the rank must still join the step's all-reduce). set_epoch(e) moves to
    epoch e's plan (reshuffled), as DistributedSampler.set_epoch does."""

    def __init__(self, plan=None, **kw):
        self.batches = PlanBatches(plan, **kw)

    def __iter__(self):
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)

    def microbatches(self):
        return self.batches.microbatches()

    def set_epoch(self, epoch):
        self.batches.set_epoch(epoch)
