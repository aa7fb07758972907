"""adaload.torch.lnmod on a GPU against the PyTorch chain in float64: forward (every layout,
x fp32/fp16/bf16, fp32 and x-dtype modulation, Wan's strided chunk views) within the
project's tolerances, and the gradients of x, scale and shift against float64 autograd; the
sampler through adaload.torch. Skips (77) without PyTorch, a CUDA device or the kernels."""
import unittest

from common import skip

try:
    import torch
except ImportError:
    skip("PyTorch is not installed (python_torch_gpu needs it)")
if not torch.cuda.is_available():
    skip("no CUDA device (python_torch_gpu needs one)")

from adaload import _lib  # noqa: E402

if not _lib.load().has_cuda:
    skip("libadaload was built without the CUDA kernels")

import adaload.torch as at  # noqa: E402
from adaload.errors import KernelError  # noqa: E402

RTOL = {torch.float32: 1e-5, torch.bfloat16: 2.0 ** -7, torch.float16: 2.0 ** -10}


def ref64(x, scale, shift, eps, layout, L):
    B, S, D = x.shape
    m = at.mod_index(B * S, S, layout, L, x.device)
    K = scale.shape[1]
    xn = torch.nn.functional.layer_norm(x.double(), (D,), eps=eps).reshape(B * S, D)
    sc = scale.double().reshape(B * K, D)[m]
    sh = shift.double().reshape(B * K, D)[m]
    return (xn * (1 + sc) + sh).reshape(B, S, D)


def wan_chunks(B, K, D, dtype, dev):
    """scale and shift as Wan makes them: chunks of one [B, K, 6, D] (or [B, 6, D]) tensor."""
    if K == 1:
        e = torch.randn(B, 6, D, device=dev, dtype=dtype) * 0.2
        c = e.chunk(6, dim=1)
        return c[1], c[0]
    e = torch.randn(B, K, 6, D, device=dev, dtype=dtype) * 0.2
    c = e.unbind(2)
    return c[1], c[0]


class Forward(unittest.TestCase):
    def case(self, B, S, D, xdt, mdt, layout, L=1, variant="dtile"):
        dev = torch.device("cuda")
        K = {"sample": 1, "token": S, "frame": -(-S // L)}[layout]
        x = (torch.randn(B, S, D, device=dev) * 2 + 1).to(xdt)
        scale, shift = wan_chunks(B, K, D, mdt, dev)
        self.assertFalse(scale.is_contiguous() and B > 1)
        y = at.lnmod(x, scale, shift, variant=variant, layout=layout,
                     frame_len=L if layout == "frame" else None)
        torch.cuda.synchronize()
        ref = ref64(x, scale, shift, 1e-6, layout, L)
        ok = (y.double() - ref).abs() <= 1e-5 + RTOL[xdt] * ref.abs()
        self.assertTrue(bool(ok.all()), "%s %s %s %s: %d of %d elements out of tolerance"
                        % (variant, layout, xdt, mdt, int((~ok).sum()), ok.numel()))

    def test_grid(self):
        for variant in ("naive", "row_per_warp", "dtile"):
            for xdt in (torch.float32, torch.float16, torch.bfloat16):
                for mdt in {torch.float32, xdt}:
                    for layout, S, L in (("sample", 300, 1), ("token", 40, 1), ("frame", 90, 16)):
                        for D in (1536, 1000):
                            with self.subTest(v=variant, x=xdt, m=mdt, layout=layout, D=D):
                                self.case(2, S, D, xdt, mdt, layout, L, variant)

    def test_bad_inputs(self):
        dev = torch.device("cuda")
        x = torch.randn(2, 8, 64, device=dev)
        s = torch.zeros(2, 1, 64, device=dev)
        with self.assertRaises(ValueError):
            at.lnmod(x.cpu(), s, s)
        with self.assertRaises(ValueError):
            at.lnmod(x, s[:, :, ::2], s[:, :, ::2])
        with self.assertRaises(ValueError):
            at.lnmod(x, torch.zeros(2, 3, 64, device=dev), torch.zeros(2, 3, 64, device=dev))
        with self.assertRaises(KernelError):
            at.lnmod(x, s, s, variant="no_such_variant")
        with self.assertRaises(KernelError):
            at.lnmod(x, s, s, eps=0.0)


class Backward(unittest.TestCase):
    def test_gradients_against_float64(self):
        dev = torch.device("cuda")
        for layout, S, L in (("sample", 300, 1), ("token", 40, 1), ("frame", 90, 16)):
            K = {"sample": 1, "token": S, "frame": -(-S // L)}[layout]
            x = (torch.randn(2, S, 512, device=dev) * 2 + 1).requires_grad_()
            base = (torch.randn(2, K, 6, 512, device=dev) * 0.2).requires_grad_()
            scale, shift = base[:, :, 1], base[:, :, 0]
            dy = torch.randn(2, S, 512, device=dev)
            fl = L if layout == "frame" else None
            y = at.lnmod(x, scale, shift, layout=layout, frame_len=fl)
            gx, gb = torch.autograd.grad(y, (x, base), dy)
            x64 = x.detach().double().requires_grad_()
            b64 = base.detach().double().requires_grad_()
            r = ref64(x64, b64[:, :, 1], b64[:, :, 0], 1e-6, layout, L)
            rx, rb = torch.autograd.grad(r, (x64, b64), dy.double())
            for got, ref, n in ((gx, rx, "dx"), (gb, rb, "dmodulation")):
                err = ((got.double() - ref).abs() / (1e-3 + ref.abs())).max().item()
                self.assertLess(err, 1e-3, "%s %s: max rel err %g" % (layout, n, err))


class Sampler(unittest.TestCase):
    def test_torch_sampler_is_the_plan(self):
        from common import dataset
        from adaload.plan import PlanBatches
        a = list(at.PlanBatchSampler(manifest=dataset("tiny.csv"), model="wan2.1-1.3b",
                                  world_size=2, rank=1))
        b = list(PlanBatches(manifest=dataset("tiny.csv"), model="wan2.1-1.3b",
                                  world_size=2, rank=1))
        self.assertEqual(a, b)


if __name__ == "__main__":
    unittest.main()
