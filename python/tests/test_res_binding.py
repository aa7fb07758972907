"""The ctypes binding of the fused gated residual + LayerNorm-Modulate op (issue 22,
kernels/lnmod_res.h, lnmod_res_desc.h) without PyTorch and without a GPU: the mirrors of
lnmod_res_desc and of the four pointer structs against the library's own layout (and a wrong
mirror refused), the descriptor's validation and the pointer rules through the mirrors, the
minimal byte counts, and -- where the library holds the kernels -- the host-side checks of
lnmod_res_forward / _backward_workspace / _backward (null pointers, unknown variant, a
variant without the op, the workspace), none of which touch a device. CPU only."""
import ctypes
import os
import unittest

from adaload import _lib
from adaload.errors import LibraryError

LIB = os.environ.get("ADALOAD_LIB")
EXPECT_CUDA = os.environ.get("ADALOAD_EXPECT_CUDA") == "1"
F32, F16, BF16 = _lib.DTYPES["f32"], _lib.DTYPES["f16"], _lib.DTYPES["bf16"]
# Fake addresses: the checks look at NULL-ness only and never dereference.
P = 0x1000


def wan_desc(B=2, S=30, D=64, gate=1, norm=0):
    """Wan's third site: fp32 residual, bf16 branch and out, fp32 chunk views of [B, 6, D]."""
    return _lib.LnmodResDesc(rows=B * S, D=D, rows_per_sample=S, frame_len=1,
                             layout=_lib.LAYOUTS["sample"], gate=gate, norm=norm, res_dtype=F32,
                             branch_dtype=BF16, mod_dtype=F32, out_dtype=BF16,
                             gate_stride=6 * D, scale_stride=6 * D, shift_stride=6 * D, eps=1e-6)


@unittest.skipUnless(LIB, "ADALOAD_LIB not set")
class Mirror(unittest.TestCase):
    def setUp(self):
        self.lib = _lib.load(LIB)
        self.dll = self.lib.dll

    def name(self, st):
        return self.dll.lnmod_status_name(st).decode()

    def test_layout_is_the_librarys(self):
        lay = (ctypes.c_int64 * 20)()
        self.assertEqual(self.dll.adaload_capi_res_layout(lay, 20), 20)
        self.assertEqual(list(lay), _lib.res_layout())
        # 15 fields: 4 int64, 7 enums (int), 3 int64 strides, a double; pointers 8 bytes each.
        self.assertEqual(lay[0], 4 * 8 + 7 * 4 + 4 + 3 * 8 + 8)
        self.assertEqual(list(lay[16:]), [5 * 8, 8 * 8, 4 * 8, 5 * 8])

    def test_a_wrong_mirror_is_refused(self):
        # A mirror with gate and norm swapped: same size, other offsets.
        saved = _lib.res_layout
        _lib.res_layout = lambda: saved()[:6] + [saved()[7], saved()[6]] + saved()[8:]
        try:
            with self.assertRaises(LibraryError) as c:
                _lib.Library(LIB)  # a fresh load (load() caches)
            self.assertIn("lnmod_res_desc", str(c.exception))
        finally:
            _lib.res_layout = saved

    def test_has_res_matches_the_build(self):
        self.assertEqual(self.lib.has_res, EXPECT_CUDA)

    def test_validation_through_the_mirror(self):
        d = wan_desc()
        self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))), "LNMOD_OK")
        d.gate = 2
        self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))),
                         "LNMOD_ERR_LAYOUT")
        d = wan_desc()
        d.norm = 7
        self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))),
                         "LNMOD_ERR_LAYOUT")
        d = wan_desc()
        d.res_dtype = F16  # neither fp32 nor the branch's bf16
        self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))),
                         "LNMOD_ERR_DTYPE_COMBO")
        d = wan_desc()
        d.out_dtype = 9
        self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))),
                         "LNMOD_ERR_DTYPE")
        d = wan_desc()
        d.gate_stride = 63  # < D: rows overlap
        self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))),
                         "LNMOD_ERR_STRIDE")
        d = wan_desc()
        d.rows = 61  # not a multiple of S
        self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))),
                         "LNMOD_ERR_SHAPE")
        d = wan_desc()
        d.eps = 0.0
        self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))),
                         "LNMOD_ERR_EPS")
        # Wan's first site: affine norm3 with a gate; the second: no gate, modulate.
        for gate, norm in ((1, 1), (0, 0), (0, 1)):
            d = wan_desc(gate=gate, norm=norm)
            self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))),
                             "LNMOD_OK", (gate, norm))
        # Affine without a gate uses no map: its strides are not looked at.
        d = wan_desc(gate=0, norm=1)
        d.gate_stride = d.scale_stride = d.shift_stride = 1
        self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))), "LNMOD_OK")
        d.norm = 0  # modulate reads scale/shift at those strides: refused
        self.assertEqual(self.name(self.dll.lnmod_res_desc_validate(ctypes.byref(d))),
                         "LNMOD_ERR_STRIDE")

    def test_rows_of_the_map(self):
        d = wan_desc(B=3, S=10)
        self.assertEqual(self.dll.lnmod_res_mod_rows(ctypes.byref(d)), 3)
        self.assertEqual(self.dll.lnmod_res_norm_rows(ctypes.byref(d)), 3)
        d.norm = 1
        self.assertEqual(self.dll.lnmod_res_norm_rows(ctypes.byref(d)), 1)

    def test_pointer_rules_through_the_mirrors(self):
        d = wan_desc()
        fi = _lib.LnmodResFwdIn(P, P, P, P, P)
        chk = self.dll.lnmod_res_check_fwd_in
        self.assertEqual(self.name(chk(ctypes.byref(d), ctypes.byref(fi))), "LNMOD_OK")
        for f in ("r", "y", "gate", "scale", "shift"):
            bad = _lib.LnmodResFwdIn(P, P, P, P, P)
            setattr(bad, f, None)
            self.assertEqual(self.name(chk(ctypes.byref(d), ctypes.byref(bad))),
                             "LNMOD_ERR_NULL_POINTER", f)
        d0 = wan_desc(gate=0)
        fi.gate = None  # no gate: the gate pointer is ignored
        self.assertEqual(self.name(chk(ctypes.byref(d0), ctypes.byref(fi))), "LNMOD_OK")

        bi = _lib.LnmodResBwdIn(P, P, P, P, P, None, P, P)  # dh NULL: zero
        chk = self.dll.lnmod_res_check_bwd_in
        self.assertEqual(self.name(chk(ctypes.byref(d), ctypes.byref(bi))), "LNMOD_OK")
        for f in ("h", "y", "gate", "scale", "dout", "mean", "rstd"):
            bad = _lib.LnmodResBwdIn(P, P, P, P, P, P, P, P)
            setattr(bad, f, None)
            self.assertEqual(self.name(chk(ctypes.byref(d), ctypes.byref(bad))),
                             "LNMOD_ERR_NULL_POINTER", f)
        bi.y = bi.gate = None  # without a gate neither y nor the gate is read
        self.assertEqual(self.name(chk(ctypes.byref(d0), ctypes.byref(bi))), "LNMOD_OK")

        fo = _lib.LnmodResFwdOut(P, P, None, None)  # no statistics: allowed
        self.assertEqual(self.name(self.dll.lnmod_res_check_fwd_out(ctypes.byref(d), ctypes.byref(fo))),
                         "LNMOD_OK")
        fo.h = None
        self.assertEqual(self.name(self.dll.lnmod_res_check_fwd_out(ctypes.byref(d), ctypes.byref(fo))),
                         "LNMOD_ERR_NULL_POINTER")
        bo = _lib.LnmodResBwdOut(P, P, None, P, P)
        self.assertEqual(self.name(self.dll.lnmod_res_check_bwd_out(ctypes.byref(d), ctypes.byref(bo))),
                         "LNMOD_ERR_NULL_POINTER")  # dgate is required with a gate
        self.assertEqual(self.name(self.dll.lnmod_res_check_bwd_out(ctypes.byref(d0), ctypes.byref(bo))),
                         "LNMOD_OK")

    def test_min_bytes(self):
        # Wan 14B 480p, one sample (lnmod_res_design.md): 12 B an element forward (r 4, y 2,
        # h 4, out 2) + three fp32 modulation rows + 8 B a row of statistics.
        rows, D = 32760, 5120
        d = wan_desc(B=1, S=rows, D=D)
        self.assertEqual(self.dll.lnmod_res_fwd_min_bytes(ctypes.byref(d), 1),
                         rows * D * 12 + 3 * D * 4 + 8 * rows)
        self.assertEqual(self.dll.lnmod_res_fwd_min_bytes(ctypes.byref(d), 0),
                         rows * D * 12 + 3 * D * 4)
        # Backward with dh and a gate: 18 B an element, gate and scale read, three sums written.
        self.assertEqual(self.dll.lnmod_res_bwd_min_bytes(ctypes.byref(d), 1),
                         rows * D * 18 + 8 * rows + 5 * D * 4)


@unittest.skipUnless(LIB, "ADALOAD_LIB not set")
class KernelEntryPointsOnTheHost(unittest.TestCase):
    """What lnmod_res_forward / _backward check before any CUDA call (lnmod_res_registry.cu),
    through the same declarations adaload.torch uses. Needs the kernels, not a GPU."""

    def setUp(self):
        self.lib = _lib.load(LIB)
        if not self.lib.has_res:
            self.skipTest("libadaload was built without the CUDA kernels")
        self.dll = self.lib.dll

    def name(self, st):
        return self.dll.lnmod_status_name(st).decode()

    def test_forward_checks(self):
        d = wan_desc()
        fi = _lib.LnmodResFwdIn(P, P, P, P, P)
        fo = _lib.LnmodResFwdOut(P, P, P, P)
        fwd = self.dll.lnmod_res_forward
        self.assertEqual(self.name(fwd(b"no_such_variant", ctypes.byref(d), ctypes.byref(fi),
                                       ctypes.byref(fo), P, 16, None)), "LNMOD_ERR_UNKNOWN_VARIANT")
        self.assertEqual(self.name(fwd(b"row_per_warp", ctypes.byref(d), ctypes.byref(fi),
                                       ctypes.byref(fo), P, 16, None)), "LNMOD_ERR_UNSUPPORTED")
        fi.gate = None
        self.assertEqual(self.name(fwd(b"dtile", ctypes.byref(d), ctypes.byref(fi),
                                       ctypes.byref(fo), P, 16, None)), "LNMOD_ERR_NULL_POINTER")
        fi.gate, fo.out = P, None
        self.assertEqual(self.name(fwd(b"dtile", ctypes.byref(d), ctypes.byref(fi),
                                       ctypes.byref(fo), P, 16, None)), "LNMOD_ERR_NULL_POINTER")
        fo.out, d.eps = P, -1.0
        self.assertEqual(self.name(fwd(b"dtile", ctypes.byref(d), ctypes.byref(fi),
                                       ctypes.byref(fo), P, 16, None)), "LNMOD_ERR_EPS")

    def test_forward_workspace(self):
        d = wan_desc()
        fi = _lib.LnmodResFwdIn(P, P, P, P, P)
        fo = _lib.LnmodResFwdOut(P, P, P, P)
        ws = ctypes.c_size_t(12345)
        st = self.dll.lnmod_res_forward_workspace(b"dtile", ctypes.byref(d), ctypes.byref(ws))
        self.assertEqual(self.name(st), "LNMOD_OK")
        self.assertEqual(ws.value, 16)  # the ticket counter: two 64-bit words
        st = self.dll.lnmod_res_forward_workspace(b"naive", ctypes.byref(d), ctypes.byref(ws))
        self.assertEqual((self.name(st), ws.value), ("LNMOD_OK", 0))
        fwd = self.dll.lnmod_res_forward
        self.assertEqual(self.name(fwd(b"dtile", ctypes.byref(d), ctypes.byref(fi), ctypes.byref(fo),
                                       None, 16, None)), "LNMOD_ERR_NULL_POINTER")
        self.assertEqual(self.name(fwd(b"dtile", ctypes.byref(d), ctypes.byref(fi), ctypes.byref(fo),
                                       P, 8, None)), "LNMOD_ERR_WORKSPACE")
        self.assertEqual(self.name(fwd(b"dtile", ctypes.byref(d), ctypes.byref(fi), ctypes.byref(fo),
                                       P + 8, 16, None)), "LNMOD_ERR_WORKSPACE")

    def test_workspace_and_backward_checks(self):
        d = wan_desc(B=2, S=300, D=1536)
        ws = ctypes.c_size_t(12345)
        st = self.dll.lnmod_res_backward_workspace(b"dtile", ctypes.byref(d), ctypes.byref(ws))
        self.assertEqual(self.name(st), "LNMOD_OK")
        self.assertEqual(ws.value % 16, 0)
        st = self.dll.lnmod_res_backward_workspace(b"row_per_warp", ctypes.byref(d), ctypes.byref(ws))
        self.assertEqual(self.name(st), "LNMOD_ERR_UNSUPPORTED")
        ws = ctypes.c_size_t(0)
        self.dll.lnmod_res_backward_workspace(b"dtile", ctypes.byref(d), ctypes.byref(ws))
        bi = _lib.LnmodResBwdIn(P, P, P, P, P, None, P, P)
        bo = _lib.LnmodResBwdOut(P, P, P, P, P)
        bwd = self.dll.lnmod_res_backward
        if ws.value:
            self.assertEqual(self.name(bwd(b"dtile", ctypes.byref(d), ctypes.byref(bi), ctypes.byref(bo),
                                           None, 0, None)), "LNMOD_ERR_NULL_POINTER")
            self.assertEqual(self.name(bwd(b"dtile", ctypes.byref(d), ctypes.byref(bi), ctypes.byref(bo),
                                           P, ws.value - 16, None)), "LNMOD_ERR_WORKSPACE")
            self.assertEqual(self.name(bwd(b"dtile", ctypes.byref(d), ctypes.byref(bi), ctypes.byref(bo),
                                           P + 8, ws.value, None)), "LNMOD_ERR_WORKSPACE")
        bo.dgate = None
        self.assertEqual(self.name(bwd(b"dtile", ctypes.byref(d), ctypes.byref(bi), ctypes.byref(bo),
                                       P, ws.value, None)), "LNMOD_ERR_NULL_POINTER")

    def test_status_to_error(self):
        d = wan_desc()
        fi = _lib.LnmodResFwdIn(P, P, P, P, P)
        fo = _lib.LnmodResFwdOut(P, P, P, P)
        st = self.dll.lnmod_res_forward(b"no_such_variant", ctypes.byref(d), ctypes.byref(fi),
                                        ctypes.byref(fo), P, 16, None)
        with self.assertRaises(Exception) as c:
            self.lib.check(st, "lnmod_res_forward(no_such_variant)")
        self.assertEqual(getattr(c.exception, "status", None), "LNMOD_ERR_UNKNOWN_VARIANT")


if __name__ == "__main__":
    unittest.main()
