"""adaload.torch on the CPU: the PyTorch backward that lnmod uses until the fused backward
kernel exists (backward_reference) against autograd of the PyTorch chain in float64, for the
three modulation layouts; and the whole autograd.Function -- descriptor, strides of Wan's
chunk views, pointers, saved tensors, backward -- driven through a stand-in for
lnmod_forward that reads and writes the memory the descriptor describes (so a wrong
stride, layout or frame length gives wrong numbers). Also: without a CUDA device lnmod
raises NoCudaError. Skips (77) without PyTorch."""
import ctypes
import unittest

from common import skip

try:
    import torch
except ImportError:
    skip("PyTorch is not installed (python_torch_cpu needs it)")

import numpy as np  # noqa: E402

import adaload.torch as at  # noqa: E402
from adaload.errors import NoCudaError  # noqa: E402
from adaload.torch import backward_reference, mod_index  # noqa: E402


def chain64(x, scale, shift, eps, layout, L):
    B, S, D = x.shape
    m = mod_index(B * S, S, layout, L, x.device)
    xn = torch.nn.functional.layer_norm(x, (D,), eps=eps).reshape(B * S, D)
    K = scale.shape[1]
    sc, sh = scale.reshape(B * K, D)[m], shift.reshape(B * K, D)[m]
    return (xn * (1 + sc) + sh).reshape(B, S, D)


class Backward(unittest.TestCase):
    def run_case(self, B, S, D, layout, L=1, eps=1e-6):
        g = torch.Generator().manual_seed(B * 1000 + S * 10 + D)
        K = {"sample": 1, "token": S, "frame": -(-S // L)}[layout]
        x = (torch.randn(B, S, D, generator=g, dtype=torch.float64) * 3 + 2).requires_grad_()
        scale = (torch.randn(B, K, D, generator=g, dtype=torch.float64) * 0.3).requires_grad_()
        shift = torch.randn(B, K, D, generator=g, dtype=torch.float64).requires_grad_()
        dy = torch.randn(B, S, D, generator=g, dtype=torch.float64)
        y = chain64(x, scale, shift, eps, layout, L)
        gx, gs, gb = torch.autograd.grad(y, (x, scale, shift), dy)
        xd = x.detach().reshape(B * S, D)
        mean = xd.mean(1)
        rstd = 1 / torch.sqrt(((xd - mean[:, None]) ** 2).mean(1) + eps)
        dx, ds, db = backward_reference(x.detach().float(), scale.detach().float(), dy.float(),
                                        mean.float(), rstd.float(), layout, L)
        for got, ref, n in ((dx, gx, "dx"), (ds, gs, "dscale"), (db, gb, "dshift")):
            self.assertEqual(tuple(got.shape), tuple(ref.shape), n)
            err = ((got.double() - ref).abs() / (1e-4 + ref.abs())).max().item()
            self.assertLess(err, 2e-3, "%s %s B%d S%d D%d: max rel err %g" % (layout, n, B, S, D, err))

    def test_per_sample(self):
        self.run_case(2, 37, 64, "sample")

    def test_per_token(self):
        self.run_case(3, 5, 48, "token")

    def test_per_frame_even_and_ragged(self):
        self.run_case(2, 24, 32, "frame", L=6)
        self.run_case(2, 26, 32, "frame", L=6)  # the last frame holds 2 tokens

    def test_a_wrong_formula_is_caught(self):
        # The test can fail: drop the xhat term of dx and the comparison must reject it.
        import adaload.torch as at
        orig = at.backward_reference

        def wrong(x, scale, dy, mean, rstd, layout, L):
            dx, ds, db = orig(x, scale, dy, mean, rstd, layout, L)
            return dx * 1.01, ds, db
        globals()["backward_reference"] = wrong
        try:
            with self.assertRaises(AssertionError):
                self.run_case(2, 37, 64, "sample")
        finally:
            globals()["backward_reference"] = orig


def floats(addr, n):
    return np.ctypeslib.as_array((ctypes.c_float * n).from_address(addr))


def fake_forward_workspace(variant, dref, out):
    out._obj.value = 16
    return 0


def fake_forward(variant, dref, x, scale, shift, y, mean, rstd, work, ws, stream):
    """lnmod_forward for fp32 CPU memory, in float64, from the descriptor alone; it insists on
    dtile's 16-byte workspace, zero on entry (kernels/lnmod.h)."""
    d = dref._obj
    assert variant == b"dtile" and d.x_dtype == d.mod_dtype == d.y_dtype == 0
    assert work and ws >= 16 and not any((ctypes.c_ubyte * ws).from_address(work)), "a zeroed workspace"
    rows, D, S, L = d.rows, d.D, d.rows_per_sample, d.frame_len
    layout = {0: "sample", 1: "token", 2: "frame"}[d.layout]
    F = -(-S // L)
    nmod = {"sample": rows // S, "token": rows, "frame": rows // S * F}[layout]
    X = floats(x, rows * D).reshape(rows, D).astype(np.float64)
    SC = floats(scale, (nmod - 1) * d.scale_stride + D)
    SH = floats(shift, (nmod - 1) * d.shift_stride + D)
    Y = floats(y, rows * D).reshape(rows, D)
    mu = X.mean(1)
    rs = 1 / np.sqrt(((X - mu[:, None]) ** 2).mean(1) + d.eps)
    for r in range(rows):
        m = {"sample": r // S, "token": r, "frame": (r // S) * F + (r % S) // L}[layout]
        sc = SC[m * d.scale_stride: m * d.scale_stride + D]
        sh = SH[m * d.shift_stride: m * d.shift_stride + D]
        Y[r] = (X[r] - mu[r]) * rs[r] * (1 + sc) + sh
    if mean:
        floats(mean, rows)[:] = mu
        floats(rstd, rows)[:] = rs
    return 0


class FakeLib:
    has_cuda, has_backward, path = True, False, "fake"

    class dll:
        lnmod_forward_workspace = staticmethod(fake_forward_workspace)
        lnmod_forward = staticmethod(fake_forward)

    def require_cuda(self):
        pass

    def set_device(self, i):
        pass

    def check(self, st, what):
        assert st == 0, what


class FunctionOnCPU(unittest.TestCase):
    def setUp(self):
        self.saved = (at._lib.load, at._check_inputs, at._stream_of)
        at._lib.load = lambda path=None: FakeLib()
        at._check_inputs = lambda x, s, h: None
        at._stream_of = lambda x: 0

    def tearDown(self):
        at._lib.load, at._check_inputs, at._stream_of = self.saved

    def run_layout(self, layout, B, S, D, L=1):
        g = torch.Generator().manual_seed(7)
        K = {"sample": 1, "token": S, "frame": -(-S // L)}[layout]
        x = (torch.randn(B, S, D, generator=g) * 2 + 1).requires_grad_()
        if layout == "sample":
            base = (0.3 * torch.randn(B, 6, D, generator=g)).requires_grad_()
            scale, shift = base[:, 1:2], base[:, 0:1]
        else:
            base = (0.3 * torch.randn(B, K, 6, D, generator=g)).requires_grad_()
            scale, shift = base[:, :, 1], base[:, :, 0]
        self.assertFalse(scale.is_contiguous())
        y = at.lnmod(x, scale, shift, layout=layout, frame_len=L if layout == "frame" else None)
        dy = torch.randn(B, S, D, generator=g)
        gx, gb = torch.autograd.grad(y, (x, base), dy)
        x64, b64 = x.detach().double().requires_grad_(), base.detach().double().requires_grad_()
        s64, h64 = (b64[:, 1:2], b64[:, 0:1]) if layout == "sample" else (b64[:, :, 1], b64[:, :, 0])
        r = chain64(x64, s64, h64, 1e-6, layout, L)
        rx, rb = torch.autograd.grad(r, (x64, b64), dy.double())
        self.assertLess((y.double() - r).abs().max().item(), 1e-5, layout)
        self.assertLess(((gx.double() - rx).abs() / (1e-3 + rx.abs())).max().item(), 1e-3, layout)
        self.assertLess(((gb.double() - rb).abs() / (1e-3 + rb.abs())).max().item(), 1e-3, layout)
        # Untouched chunks of the modulation get no gradient.
        other = gb[:, 2:] if layout == "sample" else gb[:, :, 2:]
        self.assertEqual(other.abs().max().item(), 0.0)

    def test_per_sample_chunk_views(self):
        self.run_layout("sample", 3, 10, 16)

    def test_per_token_views(self):
        self.run_layout("token", 2, 7, 8)

    def test_per_frame_views_even_and_ragged(self):
        self.run_layout("frame", 2, 12, 8, L=4)
        self.run_layout("frame", 2, 10, 8, L=4)

    def test_bad_views_are_value_errors(self):
        x = torch.randn(2, 4, 8)
        odd = torch.zeros(1000).as_strided((2, 4, 8), (300, 48, 1))
        with self.assertRaises(ValueError) as c:  # batch stride 300 != 4 rows x 48
            at.lnmod(x, odd, odd)
        self.assertIn("evenly spaced", str(c.exception))
        with self.assertRaises(ValueError):  # not contiguous in D
            at.lnmod(x, torch.zeros(2, 1, 16)[:, :, ::2], torch.zeros(2, 1, 8))
        with self.assertRaises(ValueError):  # 3 rows per sample for S = 4: needs frame_len
            at.lnmod(x, torch.zeros(2, 3, 8), torch.zeros(2, 3, 8))
        with self.assertRaises(ValueError):  # frame_len 3 gives 2 frames, not 3
            at.lnmod(x, torch.zeros(2, 3, 8), torch.zeros(2, 3, 8), frame_len=3)


def _rows(d):
    rows, S, L = d.rows, d.rows_per_sample, d.frame_len
    layout = {0: "sample", 1: "token", 2: "frame"}[d.layout]
    F = -(-S // L)
    nmod = {"sample": rows // S, "token": rows, "frame": rows // S * F}[layout]
    m = [{"sample": r // S, "token": r, "frame": (r // S) * F + (r % S) // L}[layout]
         for r in range(rows)]
    return nmod, m


class FakeBackward:
    """lnmod_backward_workspace / lnmod_backward for fp32 CPU memory, in float64, from the
    descriptor and the raw pointers alone: scale is read and dscale written at the
    descriptor's scale_stride, dshift at its shift_stride (row_stride overrides both, to
    plant the mistake of ignoring them)."""

    def __init__(self, status=0, row_stride=None):
        self.calls, self.status, self.row_stride = 0, status, row_stride

    def workspace(self, variant, dref, out):
        if self.status:
            return self.status
        out._obj.value = 4096
        return 0

    def backward(self, variant, dref, x, scale, dy, mean, rstd, dx, dscale, dshift, work, ws, stream):
        d = dref._obj
        assert variant == b"dtile" and d.x_dtype == d.mod_dtype == d.y_dtype == 0
        assert work and ws >= 4096, "the workspace the query asked for"
        self.calls += 1
        rows, D = d.rows, d.D
        nmod, m = _rows(d)
        ss = self.row_stride or d.scale_stride
        hs = self.row_stride or d.shift_stride
        X = floats(x, rows * D).reshape(rows, D).astype(np.float64)
        G0 = floats(dy, rows * D).reshape(rows, D).astype(np.float64)
        SC = floats(scale, (nmod - 1) * d.scale_stride + D).astype(np.float64)
        mu, rs = floats(mean, rows).astype(np.float64), floats(rstd, rows).astype(np.float64)
        DX = floats(dx, rows * D).reshape(rows, D)
        DS = floats(dscale, (nmod - 1) * ss + D)
        DH = floats(dshift, (nmod - 1) * hs + D)
        acc_s, acc_h = np.zeros((nmod, D)), np.zeros((nmod, D))
        for r in range(rows):
            sc = SC[m[r] * d.scale_stride: m[r] * d.scale_stride + D]
            xh = (X[r] - mu[r]) * rs[r]
            g = G0[r] * (1 + sc)
            DX[r] = rs[r] * (g - g.mean() - xh * (g * xh).mean())
            acc_s[m[r]] += G0[r] * xh
            acc_h[m[r]] += G0[r]
        for k in range(nmod):
            DS[k * ss: k * ss + D] = acc_s[k]
            DH[k * hs: k * hs + D] = acc_h[k]
        return 0


def fused_lib(fb):
    class Lib(FakeLib):
        has_backward = True

        class dll:
            lnmod_forward_workspace = staticmethod(fake_forward_workspace)
            lnmod_forward = staticmethod(fake_forward)
            lnmod_backward_workspace = staticmethod(fb.workspace)
            lnmod_backward = staticmethod(fb.backward)

            @staticmethod
            def lnmod_status_name(st):
                return b"LNMOD_ERR_UNSUPPORTED" if st == 11 else b"LNMOD_ERR_?"
    return Lib()


class FusedBackwardOnCPU(FunctionOnCPU):
    """The autograd.Function's backward through a stand-in lnmod_backward: the descriptor,
    the strides the gradients are written with, the workspace, the fallbacks."""

    def use(self, fb):
        at._lib.load = lambda path=None: fused_lib(fb)
        return fb

    def test_per_sample_chunk_views(self):
        fb = self.use(FakeBackward())
        self.run_layout("sample", 3, 10, 16)
        self.assertEqual(fb.calls, 1)

    def test_per_token_views(self):
        fb = self.use(FakeBackward())
        self.run_layout("token", 2, 7, 8)
        self.assertEqual(fb.calls, 1)

    def test_per_frame_views_even_and_ragged(self):
        fb = self.use(FakeBackward())
        self.run_layout("frame", 2, 12, 8, L=4)
        self.run_layout("frame", 2, 10, 8, L=4)
        self.assertEqual(fb.calls, 2)

    def test_gradients_written_at_the_views_strides(self):
        # A backward that writes dscale/dshift rows D apart, not 6*D as the descriptor says,
        # puts them where the [B, 1, D] gradient views do not look: the test must fail.
        self.use(FakeBackward(row_stride=16))
        with self.assertRaises(AssertionError):
            self.run_layout("sample", 3, 10, 16)

    def test_no_backward_in_the_library(self):
        at._lib.load = lambda path=None: FakeLib()
        x = torch.randn(1, 4, 8, requires_grad=True)
        s = torch.zeros(1, 1, 8, requires_grad=True)
        with self.assertRaises(at.LibraryError):
            at.lnmod(x, s, s, backward="kernel").sum().backward()
        with self.assertRaises(ValueError):
            at.lnmod(x, s, s, backward="fast")

    def test_a_variant_without_backward_falls_back_or_raises(self):
        fb = self.use(FakeBackward(status=11))
        at._warned.clear()
        with self.assertWarns(RuntimeWarning):
            self.run_layout("sample", 2, 6, 8)  # right gradients, from the PyTorch formulas
        self.assertEqual(fb.calls, 0)
        x = torch.randn(1, 4, 8, requires_grad=True)
        s = torch.zeros(1, 1, 8, requires_grad=True)
        with self.assertRaises(at.KernelError):
            at.lnmod(x, s, s, backward="kernel").sum().backward()


class NoDevice(unittest.TestCase):
    def test_lnmod_without_cuda_is_a_clear_error(self):
        if torch.cuda.is_available():
            self.skipTest("a CUDA device is present")
        x = torch.randn(1, 4, 8)
        s = torch.zeros(1, 1, 8)
        with self.assertRaises(NoCudaError):
            at.lnmod(x, s, s)


if __name__ == "__main__":
    unittest.main()
