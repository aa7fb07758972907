"""The fused gated residual op's peers (res_ops.py, res_peers.py) on the CPU: the eager chain
is right against float64 in both directions at each of Wan's three residual sites; planted
errors are caught in the output they touch (site 3: a forward off by 5%, the gate's gradient
cut off, dh ignored; site 1: (1 + w) for the weight w, dweight cut off; site 2: a gate added,
scale taken from the wrong chunk); a shape list that disagrees with its site is refused;
torch_peers.py's whole flow (--device cpu) writes lnmod_res_fwd/lnmod_res_bwd entries for the
eager chain at every site (names with /site1, /site2) with their checked errors (no dgate at
site 2) and % of adaload's copy from the shape list, and a planted wrong peer as "wrong
result" with no time. Skips (77) without PyTorch (CI has none), as test_peers_cpu.py."""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
try:
    import torch
except ImportError:
    print("SKIP: PyTorch is not installed (res_peers_cpu needs it)")
    sys.exit(77)

import peer_json  # noqa: E402
import res_ops  # noqa: E402
import torch_peers  # noqa: E402

DT = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def shape(D, S, B=1, site=None):
    """A shape list entry as bench_shapes.c writes it; site None: one without "site" (site 3)."""
    part = "/site%d" % site if site in (1, 2) else ""
    sfx = "f32-bf16-f32-bf16/sample%s/D%d/rows%d%s/graph64" % (part, D, S * B, "/B%d" % B if B > 1 else "")
    sh = {"op": "lnmod_res", "suffix": sfx, "copy_name": "copy/bytes100/graph64",
          "res_dtype": "f32", "branch_dtype": "bf16", "mod_dtype": "f32", "out_dtype": "bf16",
          "x_dtype": "f32", "y_dtype": "f32", "gate": site != 2, "norm": "affine" if site == 1 else "modulate",
          "layout": "sample", "D": D, "rows": S * B, "rows_per_sample": S, "frame_len": S,
          "mod_rows": B, "mod_stride": 6 * D, "gate_stride": 6 * D, "eps": 1e-6,
          "min_bytes": 100, "graph_k": 64, "bwd_suffix": sfx, "bwd_copy_name": "copy/bytes200/graph64",
          "bwd_min_bytes": 200, "bwd_graph_k": 64, "copy_bytes_per_second": 1e3,
          "bwd_copy_bytes_per_second": 2e3}
    if site is not None:
        sh["site"] = site
    return sh


def setup(sh):
    import torch.nn.functional as F
    s = res_ops.make_inputs(torch, sh, 1, torch.device("cpu"), DT, True)[0]
    return F, s, res_ops.tolerance(sh), res_ops.peers(torch, F, sh, 1e-6, lambda f: f)[0]


class Judge(unittest.TestCase):
    def test_the_op_is_right_and_planted_errors_are_caught(self):
        import torch.nn.functional as F
        sh = shape(64, 40, 2)
        s = res_ops.make_inputs(torch, sh, 1, torch.device("cpu"), DT, True)[0]
        tol = res_ops.tolerance(sh)
        eager = res_ops.peers(torch, F, sh, 1e-6, lambda f: f)[0]
        fok, ftext, bok, btext = res_ops.check(torch, eager, s, 1e-6, tol, True)
        self.assertTrue(fok and bok, ftext + " / " + str(btext))
        for k in ("dr", "dy", "dgate", "dscale", "dshift", "other"):
            self.assertIn(k, btext)

        def off(s_):
            h, out = eager.fwd(s_)
            return h, out * 1.05
        fok, ftext, _, _ = res_ops.check(torch, eager._replace(fwd=off), s, 1e-6, tol, False)
        self.assertFalse(fok)
        self.assertIn("wrong: out", ftext)

        def no_dgate(s_):  # right forward, the gate's gradient cut off
            g, sc, sf = res_ops.views(s_)
            h = s_["r"] + s_["y"] * g.detach()
            return h, (F.layer_norm(h, (64,), eps=1e-6) * (1 + sc) + sf).to(torch.bfloat16)
        fok, _, bok, btext = res_ops.check(torch, eager._replace(fwd=no_dgate), s, 1e-6, tol, True)
        self.assertTrue(fok)
        self.assertFalse(bok)
        self.assertIn("wrong: dgate", btext)

        def no_dh(s_):  # h's other use dropped: the gradient along the residual is lost
            h, out = eager.fwd(s_)
            return h.detach().requires_grad_(), out
        fok, _, bok, btext = res_ops.check(torch, eager._replace(fwd=no_dh), s, 1e-6, tol, True)
        self.assertTrue(fok)
        self.assertFalse(bok)
        self.assertIn("dr", btext.split("wrong:")[1])


class Sites(unittest.TestCase):
    def test_site1_affine_norm3(self):
        sh = shape(48, 24, 2, site=1)
        F, s, tol, eager = setup(sh)
        self.assertEqual(eager.grads_of, ("r", "y", "e", "w", "b"))
        fok, ftext, bok, btext = res_ops.check(torch, eager, s, 1e-6, tol, True)
        self.assertTrue(fok and bok, ftext + " / " + str(btext))
        for k in ("dr", "dy", "dgate", "dscale", "dshift", "other"):
            self.assertIn(k, btext)
        ref = res_ops.reference64(torch, s, 1e-6)
        # Wan's norm3 site written out with its chunks, independent of res_ops.SITES.
        d = {k: s[k].detach().double() for k in ("r", "y", "e", "w", "b")}
        h = d["r"] + d["y"] * d["e"][:, 2:3]
        self.assertTrue(torch.allclose(ref["h"], h))
        self.assertTrue(torch.allclose(ref["out"], F.layer_norm(h, (48,), weight=d["w"], bias=d["b"], eps=1e-6)))
        self.assertEqual(tuple(ref["dscale"].shape), (48,), "dweight: one row of D over every row")
        self.assertEqual(tuple(ref["dgate"].shape), (2, 1, 48), "dgate: a row per sample")

        def one_plus_w(s_):  # norm3 taken as a modulation: LN(h) * (1 + w) + b
            g, w, b = res_ops.views(s_)
            h = s_["r"] + s_["y"] * g
            return h, (F.layer_norm(h, (48,), eps=1e-6) * (1 + w) + b).to(torch.bfloat16)
        fok, ftext, _, _ = res_ops.check(torch, eager._replace(fwd=one_plus_w), s, 1e-6, tol, False)
        self.assertFalse(fok)
        self.assertIn("wrong: out", ftext)

        def no_dweight(s_):  # right forward, the weight's gradient cut off
            g, w, b = res_ops.views(s_)
            h = s_["r"] + s_["y"] * g
            return h, F.layer_norm(h, (48,), weight=w.detach(), bias=b, eps=1e-6).to(torch.bfloat16)
        fok, _, bok, btext = res_ops.check(torch, eager._replace(fwd=no_dweight), s, 1e-6, tol, True)
        self.assertTrue(fok)
        self.assertFalse(bok)
        self.assertEqual(btext.split("wrong: ")[1].rstrip(")"), "dscale")

    def test_site2_no_gate(self):
        sh = shape(40, 32, site=2)
        self.assertEqual(res_ops.grad_keys(sh), ("dr", "dy", "dscale", "dshift"))
        F, s, tol, eager = setup(sh)
        self.assertEqual(eager.grads_of, ("r", "y", "e"))
        self.assertIsNone(res_ops.views(s)[0])
        fok, ftext, bok, btext = res_ops.check(torch, eager, s, 1e-6, tol, True)
        self.assertTrue(fok and bok, ftext + " / " + str(btext))
        for k in ("dr", "dy", "dscale", "dshift", "other"):
            self.assertIn(k, btext)
        self.assertNotIn("dgate", btext)
        ref = res_ops.reference64(torch, s, 1e-6)
        self.assertNotIn("dgate", ref)
        d = {k: s[k].detach().double() for k in ("r", "y", "e")}  # norm2's site, by hand
        h = d["r"] + d["y"]
        self.assertTrue(torch.allclose(ref["h"], h))
        out = F.layer_norm(h, (40,), eps=1e-6) * (1 + d["e"][:, 4:5]) + d["e"][:, 3:4]
        self.assertTrue(torch.allclose(ref["out"], out))

        def gated(s_):  # a gate e[2] where site 2 has none
            _, sc, sf = res_ops.views(s_)
            h = s_["r"] + s_["y"] * s_["e"][:, 2:3]
            return h, (F.layer_norm(h, (40,), eps=1e-6) * (1 + sc) + sf).to(torch.bfloat16)
        fok, ftext, _, _ = res_ops.check(torch, eager._replace(fwd=gated), s, 1e-6, tol, False)
        self.assertFalse(fok)
        self.assertIn("wrong: h, out", ftext)

        def site3_scale(s_):  # scale from chunk 1 (site 3's) instead of 4
            _, _, sf = res_ops.views(s_)
            h = s_["r"] + s_["y"]
            return h, (F.layer_norm(h, (40,), eps=1e-6) * (1 + s_["e"][:, 1:2]) + sf).to(torch.bfloat16)
        fok, ftext, bok, btext = res_ops.check(torch, eager._replace(fwd=site3_scale), s, 1e-6, tol, True)
        self.assertFalse(fok)
        self.assertIn("wrong: out", ftext)
        self.assertIn("other", btext.split("wrong:")[1], "chunk 1's gradient is not zero")

    def test_shape_lists_that_disagree_are_refused(self):
        for sh in (dict(shape(8, 4, site=1), site=4), dict(shape(8, 4, site=2), gate=True),
                   dict(shape(8, 4), gate=False), dict(shape(8, 4, site=1), norm="modulate"),
                   dict(shape(8, 4), layout="token")):
            with self.assertRaises(ValueError, msg=str(sh)):
                res_ops.dims(sh)
        self.assertEqual(res_ops.site_of(shape(8, 4)), 3, "no \"site\": site 3")


class Flow(unittest.TestCase):
    def test_res_shapes_checked_timed_and_wrong(self):
        d = tempfile.mkdtemp()
        shapes = [shape(64, 32), shape(32, 16, 2), shape(32, 24, site=1), shape(32, 24, site=2)]
        with open(os.path.join(d, "shapes.json"), "w") as f:
            json.dump(shapes, f)
        orig = res_ops.peers

        def planted(torch_, F, sh, eps, compile_fn):
            plist = orig(torch_, F, sh, eps, compile_fn)

            def cut(s_):  # shift's (bias's) gradient cut off
                g, sc, sf = res_ops.views(s_)
                h = s_["r"] + (s_["y"] if g is None else s_["y"] * g)
                a = sc if s_["site"] == 1 else 1 + sc
                return h, (F.layer_norm(h, (sh["D"],), eps=eps) * a + sf.detach()).to(torch_.bfloat16)
            return plist + [plist[0]._replace(name="planted_wrong", fwd=cut)]
        res_ops.peers = planted
        out = os.path.join(d, "peers.json")
        argv = sys.argv
        sys.argv = ["torch_peers.py", "--shapes", os.path.join(d, "shapes.json"), "--out", out,
                    "--device", "cpu", "--no-compile", "--repetitions", "2", "--min-time", "0.0005"]
        try:
            self.assertEqual(torch_peers.main(), 0)
        finally:
            res_ops.peers, sys.argv = orig, argv
        with open(out) as f:
            b = [e for e in json.load(f)["benchmarks"] if e["run_type"] == "iteration"]
        by = {}
        for e in b:
            by.setdefault(e["name"], []).append(e)
        self.assertFalse([n for n in by if n.startswith(("lnmod_fwd/", "lnmod_bwd/"))],
                         "res shapes get no lnmod peers")
        for sh in shapes:
            e = by["lnmod_res_fwd/torch_eager/" + sh["suffix"]]
            self.assertEqual(len(e), 2)
            self.assertGreater(e[0]["check_rel_err_out"], 0)
            self.assertAlmostEqual(e[0]["pct_copy_bw"], 100 * e[0]["bytes_per_second"] / 1e3)
            e = by["lnmod_res_bwd/torch_eager/" + sh["bwd_suffix"]][0]
            self.assertAlmostEqual(e["pct_copy_bw"], 100 * e["bytes_per_second"] / 2e3)
            if sh.get("site") == 2:
                self.assertNotIn("check_rel_err_dgate", e, "site 2 has no gate")
                self.assertIn("/sample/site2/", e["name"])
            else:
                self.assertGreater(e["check_rel_err_dgate"], 0)
            self.assertGreater(e["check_rel_err_dscale"], 0)
            fw = by["lnmod_res_fwd/planted_wrong/" + sh["suffix"]]
            self.assertEqual((len(fw), fw[0].get("error_occurred", False)), (2, False))
            w = by["lnmod_res_bwd/planted_wrong/" + sh["bwd_suffix"]]
            self.assertEqual(len(w), 1)
            self.assertTrue(w[0]["error_message"].startswith(peer_json.WRONG), w[0])
            self.assertIn("dshift", w[0]["error_message"])


if __name__ == "__main__":
    unittest.main()
