"""adaload.torch.lnmod_res on the CPU: the whole autograd.Function of the fused gated residual
+ LayerNorm-Modulate op -- validation, descriptor, strides of Wan's [B, 6, D] chunk views,
the pointer structs, saved tensors, which gradients are returned, dh NULL when h's gradient
is not needed -- driven through stand-ins for lnmod_res_forward / _backward_workspace /
_backward that read and write the memory the descriptor and the structs describe, in
float64 (so a wrong stride, layout, gate flag, norm or pointer gives wrong numbers), against
float64 autograd of the PyTorch chain at Wan's three sites. Planted mistakes in the stand-in
(gradients written at the wrong stride, dh ignored) must fail the comparison. Skips (77)
without PyTorch."""
import ctypes
import unittest

from common import skip

try:
    import torch
except ImportError:
    skip("PyTorch is not installed (python_torch_res_cpu needs it)")

import numpy as np  # noqa: E402

import adaload.torch as at  # noqa: E402
from adaload.errors import KernelError, NoCudaError  # noqa: E402

EPS = 1e-6


def floats(addr, n):
    return np.ctypeslib.as_array((ctypes.c_float * n).from_address(addr))


def res_map(d):
    """(modulation rows, m(i) for every token row) of the descriptor's map."""
    rows, S, L = d.rows, d.rows_per_sample, d.frame_len
    layout = {0: "sample", 1: "token", 2: "frame"}[d.layout]
    F = -(-S // L)
    nmod = {"sample": rows // S, "token": rows, "frame": rows // S * F}[layout]
    m = [{"sample": r // S, "token": r, "frame": (r // S) * F + (r % S) // L}[layout]
         for r in range(rows)]
    return nmod, m


class FakeRes:
    """lnmod_res_forward_workspace / _forward / _backward_workspace / _backward for fp32 CPU
    memory, in float64, from the descriptor and the structs' raw pointers alone; the forward
    insists on dtile's 16-byte workspace, zero on entry (lnmod_res.h), and leaves it zero.
    Plants: row_stride (write dgate/dscale/dshift rows this far apart, ignoring the
    descriptor's strides), drop_dh (treat dh as zero)."""

    def __init__(self, row_stride=None, drop_dh=False):
        self.row_stride, self.drop_dh = row_stride, drop_dh
        self.fwd_calls, self.bwd_calls, self.saw = 0, 0, {}

    def _mods(self, d, nmod):
        D = d.D
        if d.norm == 0:
            return (lambda p: floats(p, (nmod - 1) * d.scale_stride + D).astype(np.float64),
                    lambda k: k * d.scale_stride, lambda k: k * d.shift_stride)
        return (lambda p: floats(p, D).astype(np.float64), lambda k: 0, lambda k: 0)

    def forward_workspace(self, variant, dref, out):
        out._obj.value = 16
        return 0

    def forward(self, variant, dref, iref, oref, work, ws, stream):
        d, i, o = dref._obj, iref._obj, oref._obj
        assert variant == b"dtile"
        assert work and ws >= 16, "the forward workspace the query asked for"
        w = (ctypes.c_ubyte * ws).from_address(work)
        assert not any(w), "the forward workspace must be zero on entry"
        assert d.res_dtype == d.branch_dtype == d.mod_dtype == d.out_dtype == 0, "fp32 only here"
        self.fwd_calls += 1
        self.saw["fwd_stats"] = o.mean is not None
        rows, D = d.rows, d.D
        nmod, m = res_map(d)
        R = floats(i.r, rows * D).reshape(rows, D).astype(np.float64)
        Y = floats(i.y, rows * D).reshape(rows, D).astype(np.float64)
        G = floats(i.gate, (nmod - 1) * d.gate_stride + D).astype(np.float64) if d.gate else None
        read, soff, hoff = self._mods(d, nmod)
        SC, SH = read(i.scale), floats(i.shift, SC_len(d, nmod)).astype(np.float64)
        H = floats(o.h, rows * D).reshape(rows, D)
        OUT = floats(o.out, rows * D).reshape(rows, D)
        mu, rs = np.zeros(rows), np.zeros(rows)
        for r in range(rows):
            k = m[r]
            g = G[k * d.gate_stride: k * d.gate_stride + D] if d.gate else 1.0
            H[r] = R[r] + g * Y[r]
            hs = H[r].astype(np.float64)  # the stored h is what is normalized
            mu[r] = hs.mean()
            rs[r] = 1 / np.sqrt(((hs - mu[r]) ** 2).mean() + d.eps)
            xh = (hs - mu[r]) * rs[r]
            kn = k if d.norm == 0 else 0
            sc = SC[soff(kn): soff(kn) + D]
            sh = SH[hoff(kn): hoff(kn) + D]
            OUT[r] = xh * (1 + sc) + sh if d.norm == 0 else xh * sc + sh
        if o.mean is not None:
            floats(o.mean, rows)[:] = mu
            floats(o.rstd, rows)[:] = rs
        return 0

    def workspace(self, variant, dref, out):
        out._obj.value = 4096
        return 0

    def backward(self, variant, dref, iref, oref, work, ws, stream):
        d, i, o = dref._obj, iref._obj, oref._obj
        assert variant == b"dtile"
        assert work and ws >= 4096, "the workspace the query asked for"
        self.bwd_calls += 1
        self.saw["dh"] = i.dh is not None
        rows, D = d.rows, d.D
        nmod, m = res_map(d)
        nnorm = nmod if d.norm == 0 else 1
        Hs = floats(i.h, rows * D).reshape(rows, D).astype(np.float64)
        DO = floats(i.dout, rows * D).reshape(rows, D).astype(np.float64)
        DH = (floats(i.dh, rows * D).reshape(rows, D).astype(np.float64)
              if i.dh is not None and not self.drop_dh else np.zeros((rows, D)))
        mu, rs = floats(i.mean, rows).astype(np.float64), floats(i.rstd, rows).astype(np.float64)
        read, soff, _ = self._mods(d, nmod)
        SC = read(i.scale)
        if d.gate:
            Y = floats(i.y, rows * D).reshape(rows, D).astype(np.float64)
            G = floats(i.gate, (nmod - 1) * d.gate_stride + D).astype(np.float64)
        DR = floats(o.dr, rows * D).reshape(rows, D)
        DY = floats(o.dy, rows * D).reshape(rows, D)
        acc_g, acc_s, acc_h = np.zeros((nmod, D)), np.zeros((nnorm, D)), np.zeros((nnorm, D))
        for r in range(rows):
            k = m[r]
            kn = k if d.norm == 0 else 0
            sc = SC[soff(kn): soff(kn) + D]
            xh = (Hs[r] - mu[r]) * rs[r]
            gm = DO[r] * (1 + sc) if d.norm == 0 else DO[r] * sc
            t = DH[r] + rs[r] * (gm - gm.mean() - xh * (gm * xh).mean())
            DR[r] = t
            if d.gate:
                DY[r] = G[k * d.gate_stride: k * d.gate_stride + D] * t
                acc_g[k] += t * Y[r]
            else:
                DY[r] = t
            acc_s[kn] += DO[r] * xh
            acc_h[kn] += DO[r]

        def put(ptr, acc, stride, n):
            st = self.row_stride or stride
            out = floats(ptr, (n - 1) * st + D)
            for k in range(n):
                out[k * st: k * st + D] = acc[k]
        if d.gate:
            put(o.dgate, acc_g, d.gate_stride, nmod)
        if d.norm == 0:
            put(o.dscale, acc_s, d.scale_stride, nnorm)
            put(o.dshift, acc_h, d.shift_stride, nnorm)
        else:
            floats(o.dscale, D)[:] = acc_s[0]
            floats(o.dshift, D)[:] = acc_h[0]
        return 0


def SC_len(d, nmod):
    return (nmod - 1) * d.shift_stride + d.D if d.norm == 0 else d.D


def fake_lib(fr):
    class Lib:
        has_cuda = has_backward = has_res = True
        path = "fake"

        class dll:
            lnmod_res_forward_workspace = staticmethod(fr.forward_workspace)
            lnmod_res_forward = staticmethod(fr.forward)
            lnmod_res_backward_workspace = staticmethod(fr.workspace)
            lnmod_res_backward = staticmethod(fr.backward)

        def require_res(self):
            pass

        def set_device(self, i):
            pass

        def check(self, st, what):
            assert st == 0, what
    return Lib()


def chain64(r, y, gate, scale, shift, layout="sample", L=1):
    """h = r + g y, out = LN(h) (1 + scale) + shift or LN(h) w + b, in float64 autograd."""
    B, S, D = y.shape
    m = at.mod_index(B * S, S, layout, L, y.device)

    def per_row(t):
        return t.reshape(-1, D)[m].reshape(B, S, D)
    h = r + (per_row(gate) * y if gate is not None else y)
    if scale.dim() == 1:
        out = torch.nn.functional.layer_norm(h, (D,), scale, shift, EPS)
    else:
        out = torch.nn.functional.layer_norm(h, (D,), eps=EPS) * (1 + per_row(scale)) + per_row(shift)
    return h, out


def rel(got, ref):
    return ((got.double() - ref).abs() / (1e-3 + ref.abs())).max().item()


class Sites(unittest.TestCase):
    """Wan's three residual sites through the Function and the stand-in."""

    def setUp(self):
        self.saved = (at._lib.load, at._check_res_device, at._stream_of)
        self.fr = FakeRes()
        at._lib.load = lambda path=None: fake_lib(self.fr)
        at._check_res_device = lambda *a: None
        at._stream_of = lambda x: 0

    def tearDown(self):
        at._lib.load, at._check_res_device, at._stream_of = self.saved

    def use(self, fr):
        self.fr = fr
        at._lib.load = lambda path=None: fake_lib(fr)

    def run_site(self, site, B=2, S=10, D=16, layout="sample", L=1, use_h=True, use_out=True):
        """site 1: gate e[2] + affine (weight, bias); 2: no gate, e[4]/e[3]; 3: gate e[5],
        the next block's e'[1]/e'[0]. Compares h, out and every gradient with float64."""
        g = torch.Generator().manual_seed(100 * site + S)
        K = {"sample": 1, "token": S, "frame": -(-S // L)}[layout]
        shape6 = (B, 6, D) if layout == "sample" else (B, K, 6, D)

        def chunk(t, i):
            return t[:, i:i + 1] if layout == "sample" else t[:, :, i]
        r = (torch.randn(B, S, D, generator=g) * 2 + 1).requires_grad_()
        y = torch.randn(B, S, D, generator=g).requires_grad_()
        e = (0.3 * torch.randn(*shape6, generator=g)).requires_grad_()
        en = (0.3 * torch.randn(*shape6, generator=g)).requires_grad_()
        w = (1 + 0.2 * torch.randn(D, generator=g)).requires_grad_()
        b = (0.2 * torch.randn(D, generator=g)).requires_grad_()

        def args(r, y, e, en, w, b):
            if site == 1:
                return r, y, chunk(e, 2), w, b
            if site == 2:
                return r, y, None, chunk(e, 4), chunk(e, 3)
            return r, y, chunk(e, 5), chunk(en, 1), chunk(en, 0)
        a = args(r, y, e, en, w, b)
        if a[2] is not None:
            self.assertFalse(a[2].is_contiguous())
        h, out = at.lnmod_res(*a, eps=EPS, layout=layout, frame_len=L if layout == "frame" else None)
        self.assertEqual(h.dtype, torch.float32)
        self.assertEqual(out.dtype, torch.float32)
        wh = torch.randn(B, S, D, generator=g)
        wo = torch.randn(B, S, D, generator=g)
        leaves = (r, y, e, en, w, b)
        # Only what the loss uses: an unused h must reach the backward as no gradient at all.
        loss = sum([(h * wh).sum()] * use_h + [(out * wo).sum()] * use_out)
        grads = torch.autograd.grad(loss, leaves, allow_unused=True)
        l64 = [t.detach().double().requires_grad_() for t in leaves]
        h64, o64 = chain64(*args(*l64), layout=layout, L=L)
        self.assertLess((h.double() - h64).abs().max().item(), 1e-5, "h")
        self.assertLess((out.double() - o64).abs().max().item(), 1e-5, "out")
        loss64 = sum([(h64 * wh.double()).sum()] * use_h + [(o64 * wo.double()).sum()] * use_out)
        refs = torch.autograd.grad(loss64, l64, allow_unused=True)
        names = ("dr", "dy", "de", "de_next", "dweight", "dbias")
        for got, ref, n in zip(grads, refs, names):
            if ref is None:  # unused by the site (or only through an unused output: zeros)
                self.assertTrue(got is None or got.abs().max().item() == 0.0, n)
                continue
            self.assertIsNotNone(got, n)
            self.assertLess(rel(got, ref), 1e-3, "site %d %s %s" % (site, layout, n))
        # The chunks the site does not use get no gradient.
        de = grads[2]
        used = {1: [2], 2: [3, 4], 3: [5]}[site]
        for i in range(6):
            if i not in used and de is not None:
                self.assertEqual(chunk(de, i).abs().max().item(), 0.0, "de chunk %d" % i)
        return grads

    def test_site3_gate_modulate_next_block(self):
        self.run_site(3)
        self.assertTrue(self.fr.saw["dh"])

    def test_site2_no_gate(self):
        self.run_site(2)

    def test_site1_gate_affine_norm3(self):
        self.run_site(1)

    def test_per_token_and_per_frame_maps(self):
        self.run_site(3, S=7, layout="token")
        self.run_site(3, S=12, layout="frame", L=4)
        self.run_site(2, S=10, layout="frame", L=4)  # ragged last frame

    def test_h_unused_passes_no_dh(self):
        self.run_site(3, use_h=False)
        self.assertFalse(self.fr.saw["dh"])

    def test_out_unused(self):
        self.run_site(3, use_out=False)
        self.assertTrue(self.fr.saw["dh"])

    def test_planted_stride_mistake_fails(self):
        # dgate/dscale/dshift written D apart instead of 6*D: the [B, 1, D] gradient views of
        # Wan's chunks do not see them; the comparison must reject it.
        self.use(FakeRes(row_stride=16))
        with self.assertRaises(AssertionError):
            self.run_site(3)

    def test_planted_dh_ignored_fails(self):
        self.use(FakeRes(drop_dh=True))
        with self.assertRaises(AssertionError):
            self.run_site(3)

    def test_only_the_needed_gradients(self):
        g = torch.Generator().manual_seed(3)
        r = torch.randn(2, 5, 8, generator=g, requires_grad=True)
        y = torch.randn(2, 5, 8, generator=g)
        e = torch.randn(2, 6, 8, generator=g)
        h, out = at.lnmod_res(r, y, e[:, 5:6], e[:, 1:2], e[:, 0:1])
        gr, = torch.autograd.grad(out.sum() + h.sum(), (r,))
        self.assertEqual(gr.shape, r.shape)
        self.assertIsNone(y.grad)
        # The gate alone needs a gradient.
        e = e.clone().requires_grad_()
        h, out = at.lnmod_res(r.detach(), y, e[:, 5:6], e[:, 1:2].detach(), e[:, 0:1].detach())
        ge, = torch.autograd.grad(out.sum(), (e,))
        self.assertGreater(ge[:, 5].abs().max().item(), 0)
        self.assertEqual(ge[:, :5].abs().max().item(), 0.0)

    def test_no_grad_computes_no_statistics(self):
        r, y = torch.randn(1, 4, 8), torch.randn(1, 4, 8)
        e = torch.randn(1, 6, 8)
        h, out = at.lnmod_res(r, y, e[:, 5:6], e[:, 1:2], e[:, 0:1])
        self.assertFalse(self.fr.saw["fwd_stats"])
        self.assertFalse(h.requires_grad or out.requires_grad)

    def test_bad_inputs(self):
        r, y = torch.randn(2, 4, 8), torch.randn(2, 4, 8)
        e = torch.randn(2, 6, 8)
        w, b = torch.ones(8), torch.zeros(8)
        g, sc, sh = e[:, 5:6], e[:, 1:2], e[:, 0:1]
        cases = [
            ((r[:, :3], y, g, sc, sh), {}, "one shape"),
            ((r.half(), y, g, sc, sh), {}, "float32 or y's dtype"),
            ((r, y, g, sc.double(), sh.double()), {}, "dtype"),
            ((r, y, g.half(), sc, sh), {}, "one dtype"),
            ((r, y, torch.randn(2, 4, 8), sc, sh), {}, "one map"),
            ((r, y, g, torch.randn(2, 3, 8), torch.randn(2, 3, 8)), {}, "one map"),
            ((r, y, g, w[:4], b[:4]), {}, "[D]"),
            ((r, y, g, torch.ones(16)[::2], torch.zeros(8)), {}, "contiguous"),
            ((r, y, g, sc, sh), {"norm": "affine"}, "[D]"),
            ((r, y, g, sc, sh), {"norm": "rms"}, "modulate or affine"),
            ((r, y, g, sc, sh), {"out_dtype": torch.float16}, "out_dtype"),
            ((r, y, torch.zeros(2, 1, 16)[:, :, ::2], sc, sh), {}, "contiguous in its last"),
            ((r, y, torch.zeros(1000).as_strided((2, 4, 8), (300, 48, 1)), torch.zeros(2, 4, 8),
              torch.zeros(2, 4, 8)), {}, "evenly spaced"),
            ((r, y, torch.zeros(2, 3, 8), torch.zeros(2, 3, 8), torch.zeros(2, 3, 8)),
             {"frame_len": 3}, "ceil(S / frame_len)"),
        ]
        for a, kw, msg in cases:
            with self.subTest(msg=msg):
                with self.assertRaises(ValueError) as c:
                    at.lnmod_res(*a, **kw)
                self.assertIn(msg, str(c.exception))
        with self.assertRaises(TypeError):
            at.lnmod_res(r, y, 1.0, sc, sh)
        self.assertEqual(self.fr.fwd_calls, 0)

    def test_status_is_raised(self):
        class Failing(FakeRes):
            def forward(self, *a):
                return 9  # LNMOD_ERR_UNKNOWN_VARIANT
        fr = Failing()

        class Lib:
            has_res = True
            path = "fake"

            class dll:
                lnmod_res_forward_workspace = staticmethod(fr.forward_workspace)
                lnmod_res_forward = staticmethod(fr.forward)

                @staticmethod
                def lnmod_status_name(st):
                    return b"LNMOD_ERR_UNKNOWN_VARIANT"

                @staticmethod
                def lnmod_strerror(st):
                    return b"no kernel variant has this name"

            def require_res(self):
                pass

            def set_device(self, i):
                pass
        from adaload._lib import Library
        Lib.check = Library.check
        at._lib.load = lambda path=None: Lib()
        r = torch.randn(1, 4, 8)
        e = torch.randn(1, 6, 8)
        with self.assertRaises(KernelError) as c:
            at.lnmod_res(r, r, e[:, 5:6], e[:, 1:2], e[:, 0:1], variant="nope")
        self.assertIn("lnmod_res_forward(nope)", str(c.exception))


class TorchChain(unittest.TestCase):
    def test_lnmod_res_torch_is_the_chain(self):
        g = torch.Generator().manual_seed(5)
        r, y = torch.randn(2, 12, 8, generator=g), torch.randn(2, 12, 8, generator=g)
        e = torch.randn(2, 3, 6, 8, generator=g)
        w, b = torch.randn(8, generator=g), torch.randn(8, generator=g)
        for gate, sc, sh in ((e[:, :, 5], e[:, :, 1], e[:, :, 0]), (None, e[:, :, 4], e[:, :, 3]),
                             (e[:, :, 2], w, b)):
            h, out = at.lnmod_res_torch(r, y, gate, sc, sh, eps=EPS, frame_len=4)
            h64, o64 = chain64(r.double(), y.double(), None if gate is None else gate.double(),
                               sc.double(), sh.double(), "frame", 4)
            self.assertLess((h.double() - h64).abs().max().item(), 1e-5)
            self.assertLess((out.double() - o64).abs().max().item(), 1e-4)


class NoDevice(unittest.TestCase):
    def test_without_cuda_is_a_clear_error(self):
        if torch.cuda.is_available():
            self.skipTest("a CUDA device is present")
        r = torch.randn(1, 4, 8)
        e = torch.zeros(1, 6, 8)
        with self.assertRaises(NoCudaError):
            at.lnmod_res(r, r, e[:, 5:6], e[:, 1:2], e[:, 0:1])


if __name__ == "__main__":
    unittest.main()
