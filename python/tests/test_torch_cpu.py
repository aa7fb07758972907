"""The PyTorch backward that adaload.torch.lnmod uses until the fused backward kernel exists
(backward_reference), against autograd of the PyTorch chain in float64, on the CPU, for the
three modulation layouts. Skips (77) without PyTorch."""
import unittest

from common import skip

try:
    import torch
except ImportError:
    skip("PyTorch is not installed (python_torch_cpu needs it)")

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


if __name__ == "__main__":
    unittest.main()
