"""adaload.torch.lnmod_res on a GPU (issue 22's fused gated residual + LayerNorm-Modulate op)
against PyTorch in float64: the forward (h and out; out against LayerNorm of the STORED h, the
op's contract) at Wan shapes (D 1536/3072/5120 and an odd D), both variants that have the op
(naive, dtile), Wan's dtypes (residual fp32, branch bf16, modulation fp32, out bf16), all
fp32, and a bf16 residual, at Wan's three sites (gate + affine norm3, no gate + modulate, gate
+ the next block's modulate) through strided chunk views of [B, 6, D]; every gradient (dr, dy,
the modulation's, the affine weight's and bias's) against float64 autograd, with and without
a gradient along h; a central finite difference of the loss along a random direction (the
kernels have no float64: a relative check in fp32); two backwards bit-identical. Skips (77)
without PyTorch, a CUDA device or the fused op's kernels."""
import unittest

from common import skip

try:
    import torch
except ImportError:
    skip("PyTorch is not installed (python_torch_res_gpu needs it)")
if not torch.cuda.is_available():
    skip("no CUDA device (python_torch_res_gpu needs one)")

from adaload import _lib  # noqa: E402

if not _lib.load().has_res:
    skip("libadaload was built without the CUDA kernels of the fused residual op")

import adaload.torch as at  # noqa: E402
from adaload.errors import KernelError  # noqa: E402

EPS = 1e-6
RTOL = {torch.float32: 1e-5, torch.bfloat16: 2.0 ** -7, torch.float16: 2.0 ** -10}
DEV = torch.device("cuda")
F32, BF16 = torch.float32, torch.bfloat16


def site_args(site, r, y, e, en, w, b):
    """Wan's sites: 1 gate e[2] + norm3 (affine); 2 no gate, e[4]/e[3]; 3 gate e[5], e'[1]/e'[0]."""
    c, cn = e.chunk(6, dim=1), en.chunk(6, dim=1)
    if site == 1:
        return r, y, c[2], w, b
    if site == 2:
        return r, y, None, c[4], c[3]
    return r, y, c[5], cn[1], cn[0]


def ref64(r, y, gate, scale, shift):
    """h and out in float64 (per-sample map)."""
    D = y.shape[2]
    h = r.double() + (gate.double() * y.double() if gate is not None else y.double())
    if scale.dim() == 1:
        out = torch.nn.functional.layer_norm(h, (D,), scale.double(), shift.double(), EPS)
    else:
        out = torch.nn.functional.layer_norm(h, (D,), eps=EPS) * (1 + scale.double()) + shift.double()
    return h, out


def inputs(B, S, D, rdt, ydt, mdt, seed):
    g = torch.Generator(device=DEV).manual_seed(seed)
    r = (torch.randn(B, S, D, device=DEV, generator=g) * 2 + 1).to(rdt)
    y = torch.randn(B, S, D, device=DEV, generator=g).to(ydt)
    e = (0.3 * torch.randn(B, 6, D, device=DEV, generator=g)).to(mdt)
    en = (0.3 * torch.randn(B, 6, D, device=DEV, generator=g)).to(mdt)
    w = (1 + 0.2 * torch.randn(D, device=DEV, generator=g)).to(mdt)
    b = (0.2 * torch.randn(D, device=DEV, generator=g)).to(mdt)
    return r, y, e, en, w, b


def rel_err(got, ref):
    """max |got - ref| / (|ref| + 1e-3 max |ref|): relative where the reference is not tiny
    (column sums of hundreds of rows can cancel to ~0, where fp32 leaves an absolute error)."""
    ref = ref.double()
    return ((got.double() - ref).abs() / (ref.abs() + 1e-3 * ref.abs().max() + 1e-30)).max().item()


def within(got, ref, rtol, atol=1e-5):
    ok = (got.double() - ref).abs() <= atol + rtol * ref.abs()
    return bool(ok.all()), int((~ok).sum()), ok.numel()


class Forward(unittest.TestCase):
    def case(self, site, D, rdt, ydt, mdt, variant, B=2, S=300):
        r, y, e, en, w, b = inputs(B, S, D, rdt, ydt, mdt, site * 7 + D)
        a = site_args(site, r, y, e, en, w, b)
        h, out = at.lnmod_res(*a, eps=EPS, variant=variant)
        torch.cuda.synchronize()
        self.assertEqual((h.dtype, out.dtype), (rdt, ydt))
        h64, _ = ref64(*a)
        # h: one rounding of the exact r + g y to the residual's dtype.
        ok, bad, n = within(h, h64, 2 * RTOL[rdt] if rdt != F32 else 2.0 ** -22, atol=1e-6)
        self.assertTrue(ok, "h: %d of %d out of tolerance" % (bad, n))
        # out: LayerNorm of the stored h, then the modulation or the affine, rounded once.
        _, o64 = ref64(h, torch.zeros_like(y), None, *a[3:])
        ok, bad, n = within(out, o64, RTOL[ydt])
        self.assertTrue(ok, "out: %d of %d out of tolerance" % (bad, n))

    def test_grid(self):
        for variant in ("naive", "dtile"):
            for rdt, ydt, mdt in ((F32, BF16, F32), (F32, F32, F32), (BF16, BF16, F32)):
                for D in (1536, 3072, 5120, 1000):
                    for site in (1, 2, 3):
                        with self.subTest(v=variant, dt=(rdt, ydt, mdt), D=D, site=site):
                            self.case(site, D, rdt, ydt, mdt, variant)

    def test_a_wrong_result_fails(self):
        # The comparison can fail: the same check against a reference with the gate dropped.
        r, y, e, en, w, b = inputs(2, 300, 1536, F32, BF16, F32, 1)
        a = site_args(3, r, y, e, en, w, b)
        h, out = at.lnmod_res(*a, eps=EPS)
        h64, _ = ref64(r, y, None, *a[3:])
        self.assertFalse(within(h, h64, 2.0 ** -22, atol=1e-6)[0])

    def test_bad_inputs(self):
        r, y, e, en, w, b = inputs(2, 8, 64, F32, BF16, F32, 2)
        a = site_args(3, r, y, e, en, w, b)
        with self.assertRaises(ValueError):
            at.lnmod_res(r.cpu(), *a[1:])
        with self.assertRaises(KernelError):
            at.lnmod_res(*a, variant="no_such_variant")
        with self.assertRaises(KernelError):
            at.lnmod_res(*a, variant="row_per_warp")  # no fused op: LNMOD_ERR_UNSUPPORTED
        with self.assertRaises(KernelError):
            at.lnmod_res(*a, eps=0.0)


class Backward(unittest.TestCase):
    def grads(self, site, D, ydt, variant="dtile", use_h=True, B=2, S=300, seed=0):
        """Gradients of sum(h wh) + sum(out wo) (h's term only with use_h) from the op and from
        float64 autograd; dout arrives in out's dtype (wo rounded to it for both)."""
        leaves = [t.requires_grad_() for t in inputs(B, S, D, F32, ydt, F32, seed + site)]
        g = torch.Generator(device=DEV).manual_seed(seed + 99)
        wh = torch.randn(B, S, D, device=DEV, generator=g)
        wo = torch.randn(B, S, D, device=DEV, generator=g).to(ydt).float()
        h, out = at.lnmod_res(*site_args(site, *leaves), eps=EPS, variant=variant)
        loss = sum([(h * wh).sum()] * use_h + [(out.float() * wo).sum()])
        got = torch.autograd.grad(loss, leaves, allow_unused=True)
        l64 = [t.detach().double().requires_grad_() for t in leaves]
        h64, o64 = ref64(*site_args(site, *l64))
        loss64 = sum([(h64 * wh.double()).sum()] * use_h + [(o64 * wo.double()).sum()])
        ref = torch.autograd.grad(loss64, l64, allow_unused=True)
        return got, ref

    def test_gradients_against_float64(self):
        names = ("dr", "dy", "de", "de_next", "dweight", "dbias")
        for variant in ("naive", "dtile"):
            for ydt in (F32, BF16):
                for D in (1536, 5120, 1000):
                    for site in (1, 2, 3):
                        for use_h in (True, False):
                            got, ref = self.grads(site, D, ydt, variant, use_h)
                            for gt, rf, n in zip(got, ref, names):
                                key = "%s %s D%d site %d use_h %s %s" % (variant, ydt, D, site, use_h, n)
                                if rf is None:
                                    self.assertIsNone(gt, key)
                                    continue
                                # dy is rounded to the branch dtype; the rest is fp32.
                                tol = 1e-2 if (n == "dy" and ydt == BF16) else 1e-3
                                err = rel_err(gt, rf)
                                self.assertLess(err, tol, "%s: max rel err %g" % (key, err))

    def test_finite_difference_fp32(self):
        # d/dt L(x + t v) at t = 0 by central differences against <grad L, v>, all fp32.
        for site in (1, 2, 3):
            leaves = [t.requires_grad_() for t in inputs(2, 64, 256, F32, F32, F32, 40 + site)]
            g = torch.Generator(device=DEV).manual_seed(41)
            wh = torch.randn(2, 64, 256, device=DEV, generator=g)
            wo = torch.randn(2, 64, 256, device=DEV, generator=g)
            vs = [torch.randn(t.shape, device=DEV, generator=g) for t in leaves]

            def L(ts):
                h, out = at.lnmod_res(*site_args(site, *ts), eps=EPS)
                return (h.double() * wh.double()).sum() + (out.double() * wo.double()).sum()
            grads = torch.autograd.grad(L(leaves), leaves, allow_unused=True)
            dd = sum(float((gr.double() * v.double()).sum()) for gr, v in zip(grads, vs) if gr is not None)
            t = 1e-2
            with torch.no_grad():
                lp = L([x + t * v for x, v in zip(leaves, vs)])
                lm = L([x - t * v for x, v in zip(leaves, vs)])
            fd = float(lp - lm) / (2 * t)
            self.assertLess(abs(fd - dd) / (1e-6 + abs(dd)), 1e-2, "site %d: fd %g vs %g" % (site, fd, dd))

    def test_a_wrong_gradient_fails(self):
        got, ref = self.grads(3, 1536, BF16)
        wrong = got[0] * 1.01
        self.assertLess(rel_err(got[0], ref[0]), 1e-3)
        self.assertGreater(rel_err(wrong, ref[0]), 1e-3)

    def test_two_backwards_bit_identical(self):
        a, _ = self.grads(3, 5120, BF16, seed=5)
        b, _ = self.grads(3, 5120, BF16, seed=5)
        for x, y in zip(a, b):
            if x is not None:
                self.assertTrue(torch.equal(x, y))


if __name__ == "__main__":
    unittest.main()
