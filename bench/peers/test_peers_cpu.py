"""torch_peers.py's whole flow on the CPU (--device cpu, wall-clock timing): every peer is
checked against float64 before it is timed; a peer with a wrong forward or wrong gradients
is written as "wrong result" with its errors and no time (never a ratio); correct peers carry
their checked errors; pct_copy_bw is against adaload's copy whose bandwidth the shape list
carries (copy_bytes_per_second, as `adaload bench --with-peers` writes it), never against
torch's own copy_ timed in the same run. Skips (77) without PyTorch (CI has none)."""
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
    print("SKIP: PyTorch is not installed (peers_cpu needs it)")
    sys.exit(77)

import peer_json  # noqa: E402
import peer_ops  # noqa: E402
import torch_peers  # noqa: E402


def shape(layout, x, D, rows, S, L=None):
    sfx = "%s-f32-%s/%s/D%d/rows%d/graph64" % (x, x, layout, D, rows)
    return {"suffix": sfx, "copy_name": "copy/bytes100/graph64", "x_dtype": x, "mod_dtype": "f32",
            "y_dtype": x, "layout": layout, "D": D, "rows": rows, "rows_per_sample": S,
            "frame_len": L or S, "eps": 1e-6, "min_bytes": 100, "graph_k": 64,
            "bwd_suffix": sfx, "bwd_copy_name": "copy/bytes200/graph64", "bwd_min_bytes": 200,
            "bwd_graph_k": 64, "copy_bytes_per_second": 1e3, "bwd_copy_bytes_per_second": 2e3}


class Judge(unittest.TestCase):
    def test_the_op_is_right_and_planted_errors_are_caught(self):
        import torch.nn.functional as F
        sh = shape("sample", "bf16", 64, 48, 48)
        s = peer_ops.make_inputs(torch, sh, 1, torch.device("cpu"),
                                 {"bf16": torch.bfloat16, "f32": torch.float32}, True)[0]
        tol = peer_ops.tolerance("bf16", "bf16")
        plist, _ = peer_ops.peers(torch, F, sh, 1e-6, torch.bfloat16, lambda f: f, False)
        eager = [p for p in plist if p.name == "torch_eager"][0]
        fok, _, bok, btext = peer_ops.check(torch, eager, s, "sample", 1e-6, tol, True)
        self.assertTrue(fok and bok, btext)
        off = eager._replace(fwd=lambda s: eager.fwd(s) * 1.05)
        fok, ftext, _, _ = peer_ops.check(torch, off, s, "sample", 1e-6, tol, False)
        self.assertFalse(fok)
        self.assertTrue(ftext.startswith("wrong result"), ftext)

        def no_dscale(s):  # right forward, scale's gradient cut off
            sc, sf = peer_ops.chunks(s["e"], "sample")
            return (F.layer_norm(s["x"], (64,), eps=1e-6) * (1 + sc.detach()) + sf).to(torch.bfloat16)
        fok, _, bok, btext = peer_ops.check(torch, eager._replace(fwd=no_dscale), s, "sample",
                                            1e-6, tol, True)
        self.assertTrue(fok)
        self.assertFalse(bok)
        self.assertIn("wrong: dscale", btext)


class Flow(unittest.TestCase):
    def test_checked_timed_and_wrong_peers(self):
        d = tempfile.mkdtemp()
        shapes = [shape("sample", "bf16", 64, 32, 32), shape("frame", "f32", 16, 24, 12, L=4)]
        with open(os.path.join(d, "shapes.json"), "w") as f:
            json.dump(shapes, f)
        orig = peer_ops.peers

        def planted(torch_, F, sh, eps, ydt, compile_fn, want_liger=True, user=()):
            plist, note = orig(torch_, F, sh, eps, ydt, compile_fn, want_liger, user)
            base = plist[0]
            _, _, _, layout, _ = peer_ops.dims(sh)

            def cut(s):  # shift's gradient cut off
                sc, sf = peer_ops.chunks(s["e"], layout)
                return (F.layer_norm(s["x"], (sh["D"],), eps=eps) * (1 + sc) + sf.detach()).to(ydt)
            class Raises(torch_.autograd.Function):  # a backward that raises, as
                @staticmethod                         # torch.compile's did at batch 1
                def forward(ctx, y):
                    return y.clone()

                @staticmethod
                def backward(ctx, g):
                    raise RuntimeError("planted: invalid gradient")

            def raises(s):  # right forward, its backward raises
                return Raises.apply(base.fwd(s))
            return plist + [base._replace(name="planted_wrong", fwd=cut),
                            base._replace(name="planted_raises", fwd=raises)], note
        peer_ops.peers = planted
        out = os.path.join(d, "peers.json")
        argv = sys.argv
        sys.argv = ["torch_peers.py", "--shapes", os.path.join(d, "shapes.json"), "--out", out,
                    "--device", "cpu", "--no-compile",
                    "--repetitions", "2", "--min-time", "0.0005"]
        try:
            self.assertEqual(torch_peers.main(), 0)
        finally:
            peer_ops.peers, sys.argv = orig, argv
        with open(out) as f:
            b = [e for e in json.load(f)["benchmarks"] if e["run_type"] == "iteration"]
        by = {}
        for e in b:
            by.setdefault(e["name"], []).append(e)
        for sh in shapes:
            f_, b_ = sh["suffix"], sh["bwd_suffix"]
            for peer in ("torch_eager", "torch_eager_wan_fp32"):
                e = by["lnmod_fwd/%s/%s" % (peer, f_)]
                self.assertEqual(len(e), 2)
                self.assertGreater(e[0]["check_rel_err_y"], 0)
                self.assertLess(e[0]["check_rel_err_y"], peer_ops.tolerance(sh["x_dtype"], sh["y_dtype"]))
                # Against adaload's 1 kB/s copy from the shape list, not torch's copy_.
                self.assertAlmostEqual(e[0]["pct_copy_bw"], 100 * e[0]["bytes_per_second"] / 1e3)
                self.assertNotAlmostEqual(e[0]["pct_copy_bw"], e[0]["pct_torch_copy_bw"])
            e = by["lnmod_bwd/torch_eager/" + b_][0]
            self.assertAlmostEqual(e["pct_copy_bw"], 100 * e["bytes_per_second"] / 2e3)
            self.assertIn("check_rel_err_dscale", e)
            self.assertNotIn("saved_bytes", e)  # measured on CUDA only
            # The planted peer's forward is right (timed), its backward wrong (not timed).
            fw = by["lnmod_fwd/planted_wrong/" + f_]
            self.assertEqual((len(fw), fw[0].get("error_occurred", False)), (2, False))
            w = by["lnmod_bwd/planted_wrong/" + b_]
            self.assertEqual(len(w), 1)
            self.assertTrue(w[0]["error_occurred"])
            self.assertTrue(w[0]["error_message"].startswith(peer_json.WRONG), w[0])
            self.assertIn("dshift", w[0]["error_message"])
            # A backward that raises costs the peer its backward only: the forward is timed.
            fr = by["lnmod_fwd/planted_raises/" + f_]
            self.assertEqual((len(fr), fr[0].get("error_occurred", False)), (2, False))
            r = by["lnmod_bwd/planted_raises/" + b_]
            self.assertTrue(r[0]["error_occurred"])
            self.assertIn("planted: invalid gradient", r[0]["error_message"])
        # The table forms are per-sample peers only.
        self.assertIn("lnmod_bwd/torch_eager_table/" + shapes[0]["bwd_suffix"], by)
        self.assertNotIn("lnmod_bwd/torch_eager_table/" + shapes[1]["bwd_suffix"], by)


class UserPeer(unittest.TestCase):
    """--peer MODULE:FUNCTION (peer_user.py): example_peer.py's right callable is checked and
    timed in both directions; its planted bug (shift left out) is "wrong result", untimed."""

    def test_user_peers_are_checked_before_timed(self):
        d = tempfile.mkdtemp()
        shapes = [shape("sample", "bf16", 64, 32, 32), shape("token", "f32", 16, 12, 12)]
        with open(os.path.join(d, "shapes.json"), "w") as f:
            json.dump(shapes, f)
        out, ex = os.path.join(d, "peers.json"), os.path.join(HERE, "example_peer.py")
        argv = sys.argv
        sys.argv = ["torch_peers.py", "--shapes", os.path.join(d, "shapes.json"), "--out", out,
                    "--device", "cpu", "--no-compile", "--repetitions", "2", "--min-time", "0.0005",
                    "--peer", ex + ":lnmod_fp32", "--peer", ex + ":lnmod_no_shift",
                    "--filter", "^lnmod_(fwd|bwd)/peer:"]
        try:
            self.assertEqual(torch_peers.main(), 0)
            sys.argv[-3] = ex + ":missing"
            self.assertEqual(torch_peers.main(), 2, "a bad --peer is bad usage")
        finally:
            sys.argv = argv
        with open(out) as f:
            b = [e for e in json.load(f)["benchmarks"] if e["run_type"] == "iteration"]
        by = {}
        for e in b:
            by.setdefault(e["name"], []).append(e)
        self.assertEqual({n.split("/")[1] for n in by}, {"peer:lnmod_fp32", "peer:lnmod_no_shift"})
        for sh in shapes:
            for op, sfx in (("fwd", sh["suffix"]), ("bwd", sh["bwd_suffix"])):
                good = by["lnmod_%s/peer:lnmod_fp32/%s" % (op, sfx)]
                self.assertEqual(len(good), 2)
                self.assertIn("real_time", good[0])
                bad = by["lnmod_%s/peer:lnmod_no_shift/%s" % (op, sfx)]
                self.assertEqual(len(bad), 1)
                self.assertTrue(bad[0]["error_message"].startswith(peer_json.WRONG), bad[0])


if __name__ == "__main__":
    unittest.main()
