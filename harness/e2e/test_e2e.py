"""CPU tests of the end-to-end harness (no PyTorch, no GPU): the manifest slice, the
metrics' definitions on hand-computed cases, the run folder and e2e.json, the driver's dry
run through the real planner, and the driver's e2e.json from fake measurements that equal
the plan's own costs (then measured and predicted must agree exactly). Run by ctest as
e2e_unit; ADALOAD_BIN names the adaload program."""
import csv
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import e2e_lib as L  # noqa: E402
import experiment  # noqa: E402

ADALOAD = os.environ.get("ADALOAD_BIN", os.path.join(ROOT, "build", "adaload"))
DEFAULT = os.path.join(ROOT, "datasets", "default.csv")


class Slice(unittest.TestCase):
    def test_seeded_subset_in_order(self):
        with tempfile.TemporaryDirectory() as d:
            a, b, c = (os.path.join(d, x) for x in "abc")
            L.slice_manifest(DEFAULT, a, 500, seed=1)
            L.slice_manifest(DEFAULT, b, 500, seed=1)
            L.slice_manifest(DEFAULT, c, 500, seed=2)
            ra, rb, rc = (list(csv.reader(open(x))) for x in (a, b, c))
            full = list(csv.reader(open(DEFAULT)))
            self.assertEqual(ra, rb)
            self.assertNotEqual(ra, rc)
            self.assertEqual(ra[0], full[0])
            self.assertEqual(len(ra), 501)
            pos = [full.index(r) for r in ra[1:]]
            self.assertEqual(pos, sorted(pos))
            self.assertEqual(sorted(os.listdir(d)), ["a", "b", "c"])

    def test_bad_sizes(self):
        with tempfile.TemporaryDirectory() as d:
            for n in (0, 100001):
                with self.assertRaises(ValueError):
                    L.slice_manifest(DEFAULT, os.path.join(d, "x"), n)
            self.assertEqual(os.listdir(d), [])
            with self.assertRaises(ValueError):
                L.atomic_write(d, lambda f: f.write("x"))


class Calibration(unittest.TestCase):
    """train.py calibrate's torch-free parts: the points span the plan's buckets at several
    batch sizes, and the memory fit separates the per-sample bytes a batch-1 sweep cannot."""

    def test_points_span_batches_and_tokens(self):
        buckets = [{"tokens": t, "batch_size": b} for t, b in
                   ((1560, 520), (3600, 200), (14040, 50), (32760, 20), (75600, 8), (111600, 1))]
        pts = L.calibration_points(buckets, 4, 2000000)
        self.assertGreaterEqual(len({b for b, _ in pts}), 4)
        self.assertEqual({s for _, s in pts}, {1560, 14040, 32760, 111600})
        self.assertIn((520, 1560), pts)
        self.assertIn((1, 111600), pts)
        self.assertTrue(all(b * s <= 2000000 for b, s in pts))
        self.assertEqual(max(b for b, s in L.calibration_points(buckets, 4, 100000) if s == 1560), 64)

    def test_memory_fit_per_sample_term_and_range(self):
        truth = lambda b, s: 3e9 + b * (170000 * s + 4e8)  # noqa: E731
        pts = [(b, s, truth(b, s)) for b, s in L.calibration_points(
            [{"tokens": 1560, "batch_size": 64}, {"tokens": 32760, "batch_size": 8}], 2, 10 ** 7)]
        f = L.fit_memory(pts)
        self.assertAlmostEqual(f["bytes_per_sample"] / 4e8, 1.0, places=6)
        self.assertAlmostEqual(f["bytes_per_token"] / 170000, 1.0, places=6)
        self.assertLess(f["max_rel"], 1e-9)
        self.assertEqual(f["range"]["batch_max"], 64)
        # batch 1 only: the per-sample bytes cannot be separated (they hide in the intercept),
        # and the range says batch 1 is all that was measured
        one = L.fit_memory([(1, s, truth(1, s)) for s in (1560, 3600, 32760)])
        self.assertEqual(one["bytes_per_sample"], 0.0)
        self.assertEqual(one["range"]["batch_max"], 1)


class Jitter(unittest.TestCase):
    def test_pooled_cv_of_repeated_shapes(self):
        recs = [{"bucket": 1, "samples": 4, "compute_s": t} for t in (0.9, 1.1, 1.0, 1.0)]
        recs += [{"bucket": 2, "samples": 1, "compute_s": t} for t in (1.8, 2.2)]
        recs += [{"bucket": 3, "samples": 1, "compute_s": 5.0},  # once: no information
                 {"bucket": 0, "samples": 0, "compute_s": 0.0}]  # idle
        # deviations relative to each shape's mean: 0.1, 0.1, 0, 0 (3 dof) and 0.1, 0.1 (1 dof)
        self.assertAlmostEqual(L.jitter_cv(recs), (0.04 / 4) ** 0.5, places=12)
        self.assertIsNone(L.jitter_cv(recs[-2:]))


class Metrics(unittest.TestCase):
    def test_idle_fraction_by_hand(self):
        # step 1: loads 4, 2 -> max 4, mean 3; step 2: 1, 1 -> 1, 1: (1 + 0) / (4 + 1) = 0.2
        self.assertAlmostEqual(L.idle_fraction([[4, 2], [1, 1]]), 0.2)
        self.assertEqual(L.idle_fraction([[0, 0]]), 0.0)
        self.assertAlmostEqual(L.idle_fraction([[3, 0, 0]]), 2 / 3)

    def test_predicted_over_the_window(self):
        steps = [[(0, 4.0, ["a"]), (1, 2.0, ["b", "c"])], [(0, 1.0, ["d"]), (None, 0.0, [])],
                 [(2, 9.0, ["e"]), (2, 9.0, ["f"])]]
        p = L.predicted(steps, 0, 2)
        self.assertAlmostEqual(p["idle_fraction"], (1 + 0.5) / 5)
        self.assertAlmostEqual(p["samples_per_s"], 4 / 5)
        self.assertEqual(p["steps"], 2)
        p = L.predicted(steps, 1, 10)  # clipped to steps 1, 2
        self.assertEqual(p["steps"], 2)
        self.assertAlmostEqual(p["samples_per_s"], 3 / 10)
        with self.assertRaises(ValueError):
            L.predicted(steps, 3, 1)

    def test_sync_groups_and_whole_group_windows(self):
        sync = [False, False, True, True, False, True, False]
        self.assertEqual(L.groups(sync, range(7)), [[0, 1, 2], [3], [4, 5]])  # 6: cut off
        self.assertEqual(L.run_steps(sync, 0, 1, 1), ([0, 1, 2], [3]))
        self.assertEqual(L.run_steps(sync, 0, 0, 2), ([], [0, 1, 2]))
        self.assertEqual(L.run_steps(sync, 3, 1, 2), ([3], [4, 5]))
        self.assertEqual(L.run_steps(sync, 4, 0, 9), ([], [4, 5, 6]))  # the plan's end
        # An lpt-like window: rank 0 runs 3 and 1, rank 1 runs 2 and 2 (idle 0); then a
        # single step 4 vs 1: (0 + 1.5) / (4 + 4).
        steps = [[(0, 3.0, ["a"]), (0, 2.0, ["b"])], [(0, 1.0, ["c"]), (0, 2.0, ["d"])],
                 [(0, 4.0, ["e"]), (0, 1.0, ["f"])]]
        p = L.predicted(steps, 0, 3, sync=[False, True, True])
        self.assertEqual((p["steps"], p["sync_groups"]), (3, 2))
        self.assertAlmostEqual(p["idle_fraction"], 1.5 / 8)
        self.assertAlmostEqual(p["samples_per_s"], 6 / 8)
        # Every step its own group: (0.5 + 0.5 + 1.5) / (3 + 2 + 4).
        self.assertAlmostEqual(L.predicted(steps, 0, 3)["idle_fraction"], 2.5 / 9)
        with self.assertRaises(ValueError):
            L.predicted(steps, 0, 1, sync=[False, True, True])  # no whole group

    def test_measured_groups_by_sync(self):
        r = self.rec
        recs = [dict(r(0, 0, 3.0, 1, 50, 3.0), sync=False), dict(r(0, 1, 2.0, 1, 50, 3.0), sync=False),
                dict(r(1, 0, 1.0, 1, 50, 1.0), sync=True), dict(r(1, 1, 2.0, 1, 50, 1.0), sync=True),
                dict(r(2, 0, 1.0, 1, 50, 1.0), sync=False), dict(r(2, 1, 1.0, 1, 50, 1.0), sync=False)]
        m = L.measured(recs, 2, 100)  # step 2 opens a group that never closes: left out
        self.assertEqual((m["steps"], m["sync_groups"]), (2, 1))
        self.assertAlmostEqual(m["idle_fraction"], 0.0)
        self.assertAlmostEqual(m["samples_per_s"], 4 / 4.0)

    def rec(self, step, rank, c, samples, peak=10, wall=5.0):
        return {"step": step, "rank": rank, "compute_s": c, "allreduce_s": 0.5, "step_s": wall,
                "peak_bytes": peak, "samples": samples, "tokens": 100 * samples}

    def test_measured_by_hand(self):
        recs = [self.rec(0, 0, 4.0, 1, 50, 5.0), self.rec(0, 1, 2.0, 2, 30, 5.1),
                self.rec(1, 0, 1.0, 1, 20, 2.0), self.rec(1, 1, 0.0, 0, 5, 2.0)]
        m = L.measured(recs, 2, 100)
        self.assertAlmostEqual(m["idle_fraction"], (1 + 0.5) / 5)
        self.assertAlmostEqual(m["samples_per_s"], 4 / 7)  # rank 0's wall: 5 + 2
        self.assertAlmostEqual(m["vram_util_mean"], (0.5 + 0.3 + 0.2) / 3)  # idle rank left out
        self.assertAlmostEqual(m["vram_util_max"], 0.5)
        self.assertAlmostEqual(m["step_time_s"], 3.5)
        self.assertEqual(m["tokens"], 400)

    def test_records_checked(self):
        r = [self.rec(0, 0, 1, 1)]
        with self.assertRaises(ValueError) as c:
            L.measured(r, 2, 100)
        self.assertIn("no record of rank 1", str(c.exception))
        with self.assertRaises(ValueError):
            L.measured(r + [self.rec(0, 0, 1, 1)], 1, 100)
        bad = dict(r[0])
        del bad["peak_bytes"]
        with self.assertRaises(ValueError):
            L.measured([bad], 1, 100)
        with self.assertRaises(ValueError):
            L.measured([], 1, 100)

    def test_fit_line(self):
        a, b = L.fit_line([1, 2, 3], [5, 7, 9])
        self.assertAlmostEqual(a, 3)
        self.assertAlmostEqual(b, 2)
        with self.assertRaises(ValueError):
            L.fit_line([1, 1], [2, 3])

    @unittest.skipUnless(importlib.util.find_spec("torch"), "PyTorch is not installed")
    def test_param_count_formula_matches_the_model(self):
        from model import WanDiT, count_params
        m = WanDiT(width=64, depth=2, heads=4, ffn=96, text_len=8, text_dim=32, freq_dim=16)
        self.assertEqual(count_params(m), L.model_params(64, 2, 96, text_dim=32, freq_dim=16))


@unittest.skipUnless(importlib.util.find_spec("torch"), "PyTorch is not installed")
class TinyModelOnCPU(unittest.TestCase):
    def test_one_step_with_checkpointing(self):
        # The PyTorch chain (no kernel, no GPU): forward and backward through checkpointed
        # blocks, gradients finite and reaching the modulation parameters.
        import torch
        from model import WanDiT, latent_shape, tokens_of
        torch.manual_seed(0)
        m = WanDiT(width=64, depth=2, heads=4, ffn=96, text_len=8, text_dim=32, freq_dim=16)
        f, h, w = 5, 64, 64
        S = tokens_of(f, h, w)
        lat = torch.randn(latent_shape(2, f, h, w))
        self.assertEqual(S, 2 * 4 * 4)
        loss = m.loss(lat, torch.tensor([10, 900]), torch.randn(2, 8, 32), torch.randn(2, S, 64))
        loss.backward()
        self.assertTrue(torch.isfinite(loss))
        for name, p in m.named_parameters():
            self.assertIsNotNone(p.grad, name)
            self.assertTrue(torch.isfinite(p.grad).all(), name)
        self.assertGreater(m.blocks[0].modulation.grad.abs().sum().item(), 0)
        self.assertEqual(m.calls_per_forward(), 5)

    def test_fused_residual_is_the_same_model(self):
        # issue 22: fused_residual moves each residual add into the norm after it (norm3,
        # norm2, the NEXT block's norm1, after the last block the head's modulate). With the
        # op's PyTorch chain standing in for adaload's kernels (adaload.torch.lnmod_res_torch,
        # no GPU here) the loss and every gradient must be the unfused model's: a site wired
        # to the wrong chunk, block or norm changes them.
        import torch
        import model as M
        import adaload.torch as at
        from model import WanDiT, latent_shape, tokens_of
        saved = M.modulate_fn, M.lnmod_res_fn
        calls = []

        def res():
            def f(r, y, gate, scale, shift):
                calls.append(gate is None)
                return at.lnmod_res_torch(r, y, gate, scale, shift, eps=M.EPS)
            return f
        M.modulate_fn = lambda kind: M.modulate_torch
        M.lnmod_res_fn = res
        try:
            with self.assertRaises(ValueError):
                WanDiT(width=64, depth=2, heads=4, ffn=96, text_len=8, text_dim=32, freq_dim=16,
                       fused_residual=True)  # modulate="torch": the fused op is adaload's
            torch.manual_seed(0)
            ref = WanDiT(width=64, depth=3, heads=4, ffn=96, text_len=8, text_dim=32, freq_dim=16)
            fused = WanDiT(width=64, depth=3, heads=4, ffn=96, text_len=8, text_dim=32, freq_dim=16,
                           modulate="adaload", fused_residual=True)
            with torch.no_grad():  # non-trivial norm3 affine weights and modulations
                for p in ref.parameters():
                    p.add_(0.1 * torch.randn_like(p))
            fused.load_state_dict(ref.state_dict())
            self.assertEqual(fused.calls_per_forward(), 1)
            f, h, w = 5, 64, 64
            S = tokens_of(f, h, w)
            g = torch.Generator().manual_seed(1)
            inputs = (torch.randn(latent_shape(2, f, h, w), generator=g), torch.tensor([10, 900]),
                      torch.randn(2, 8, 32, generator=g), torch.randn(2, S, 64, generator=g))
            losses = []
            for m in (ref, fused):
                loss = m.loss(*inputs)
                loss.backward()
                losses.append(loss.item())
            # gate, no gate, gate per block (then the checkpoints' recomputation in backward)
            self.assertEqual(calls[:9], [False, True, False] * 3)
            self.assertAlmostEqual(losses[0], losses[1], delta=1e-5 * abs(losses[0]))
            pf = dict(fused.named_parameters())
            for name, p in ref.named_parameters():
                q = pf[name].grad
                err = ((q - p.grad).abs().max() / (p.grad.abs().max() + 1e-12)).item()
                self.assertLess(err, 1e-4, name)
        finally:
            M.modulate_fn, M.lnmod_res_fn = saved


@unittest.skipUnless(importlib.util.find_spec("torch") and os.path.exists(ADALOAD),
                     "needs PyTorch and the adaload program")
class ExperimentOnCPU(unittest.TestCase):
    def test_driver_calibrates_plans_trains_and_writes_the_run(self):
        # experiment.py --device cpu: every step for real (calibration, plans, torchrun with
        # gloo on 2 ranks, op-bench), a tiny DiT on a tiny manifest; the numbers are
        # meaningless, the run folder and e2e.json must be complete and consistent.
        with tempfile.TemporaryDirectory() as w, tempfile.TemporaryDirectory() as res:
            m = os.path.join(w, "m.csv")
            with open(m, "w") as f:
                f.write("id,width,height,frames\n")
                for i in range(24):
                    f.write("s%02d,%d,64,%d\n" % (i, 64 * (1 + i % 2), 1 + 4 * (i % 3)))
            cmd = [sys.executable, os.path.join(HERE, "experiment.py"), "--device", "cpu",
                   "--manifest", m, "--samples", "20", "--steps", "2", "--warmup", "1",
                   "--width", "32", "--depth", "1", "--heads", "2", "--ffn", "64", "--text-len",
                   "4", "--configs", "a-torch,c-torch", "--cost-aware", "lpt", "--window", "2", "--work",
                   os.path.join(w, "work"), "--results", res, "--adaload", ADALOAD]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
            (run,) = os.listdir(os.path.join(res, "cpu-e2e-check", "e2e"))
            d = os.path.join(res, "cpu-e2e-check", "e2e", run)
            doc = json.load(open(os.path.join(d, "e2e.json")))
            self.assertEqual(doc["info"]["device"], "cpu")
            self.assertEqual([c["name"] for c in doc["configs"]], ["a-torch", "c-torch"])
            self.assertEqual(doc["configs"][1]["assign"], "lpt")
            for c in doc["configs"]:
                # Whole sync groups: random every step, lpt per window (here the rest of the
                # plan after the warm-up window may be a single step).
                self.assertGreaterEqual(c["measured"]["steps"], 1)
                self.assertEqual(c["predicted"]["steps"], c["measured"]["steps"])
                self.assertEqual(c["predicted"]["sync_groups"], c["measured"]["sync_groups"])
                self.assertEqual(c["measured"]["samples"], c["predicted"]["samples"])
                self.assertGreater(c["measured"]["samples_per_s"], 0)
                self.assertTrue(0 <= c["measured"]["idle_fraction"] < 1)
            recs = [json.loads(x) for x in open(os.path.join(d, "steps-a-torch.jsonl"))]
            self.assertEqual(len(recs), 2 * 3)  # 2 ranks x (1 warm-up + 2 steps)
            recs = [json.loads(x) for x in open(os.path.join(d, "steps-c-torch.jsonl"))]
            self.assertIn(False, [r["sync"] for r in recs], "lpt windows accumulate")
            self.assertEqual(json.load(open(os.path.join(d, "meta.json")))["kind"], "e2e")
            for f in ("profile.csv", "memory.json", "op.json", "e2e-model.json", "summary-a.json"):
                self.assertTrue(os.path.getsize(os.path.join(d, f)) > 0, f)


def config(name, idle_m, idle_p, sps_m, sps_p):
    return {"name": name, "policy": "dual", "assign": "random", "kernel": "torch",
            "measured": {"idle_fraction": idle_m, "samples_per_s": sps_m},
            "predicted": {"idle_fraction": idle_p, "samples_per_s": sps_p}}


class RunFolder(unittest.TestCase):
    def test_document_and_bar(self):
        doc = L.e2e_document([config("in", 0.20, 0.24, 10, 10.9), config("idle", 0.2, 0.26, 10, 10),
                              config("sps", 0.2, 0.2, 10, 11.2)], {"gpus": 2})
        self.assertEqual(doc["schema"], "adaload.e2e/1")
        self.assertEqual([c["prediction_vs_measured"]["within_bar"] for c in doc["configs"]],
                         [True, False, False])
        bad = config("x", 0, 0, 1, 1)
        del bad["kernel"]
        with self.assertRaises(ValueError):
            L.e2e_document([bad], {})

    @unittest.skipUnless(os.path.exists(ADALOAD), "the adaload program is not built")
    def test_folder_made_by_the_runs_library(self):
        # The folder is staged, published and indexed by `adaload results new/publish`: a
        # second run gets its own name, meta.json is the library's (both hashes, kind e2e),
        # the index agrees with the tree, and a bad file name leaves nothing behind.
        with tempfile.TemporaryDirectory() as d:
            a = L.new_run_folder(ADALOAD, d, "tb", {"e2e.json": {"x": 1}}, "experiment.py a")
            b = L.new_run_folder(ADALOAD, d, "tb", {"t.txt": "hi"}, "experiment.py b")
            self.assertEqual(os.path.dirname(a), os.path.join(d, "tb", "e2e"))
            self.assertNotEqual(a, b)
            meta = json.load(open(os.path.join(a, "meta.json")))
            self.assertEqual(meta["kind"], "e2e")
            self.assertEqual(meta["command_line"], "experiment.py a")
            self.assertEqual(len(meta["kernel_hash_v1"]), 64)
            self.assertEqual(len(meta["kernel_hash_v2"]), 64)
            self.assertEqual(json.load(open(os.path.join(a, "e2e.json"))), {"x": 1})
            with self.assertRaises(ValueError):
                L.new_run_folder(ADALOAD, d, "tb", {"../x": "no"})
            with self.assertRaises(ValueError):
                L.new_run_folder(ADALOAD, d, "tb", {"meta.json": {}})
            self.assertEqual(sorted(os.listdir(os.path.join(d, "tb", "e2e"))),
                             sorted([os.path.basename(a), os.path.basename(b)]))
            index = [json.loads(x)["path"] for x in open(os.path.join(d, "index.jsonl"))]
            self.assertEqual(sorted(index), sorted(["tb/e2e/" + os.path.basename(p) for p in (a, b)]))
            r = subprocess.run([ADALOAD, "results", "check", "--results", d], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


@unittest.skipUnless(os.path.exists(ADALOAD), "the adaload program is not built")
class Driver(unittest.TestCase):
    def test_sources_compile(self):
        for f in ("model.py", "train.py", "experiment.py", "e2e_lib.py"):
            path = os.path.join(HERE, f)
            compile(open(path).read(), path, "exec")  # what py_compile checks, nothing written

    def dry(self, work, extra=()):
        args = ["--dry-run", "--samples", "300", "--work", work, "--adaload", ADALOAD,
                "--configs", "a-torch,b-adaload", "--steps", "5", "--warmup", "1"] + list(extra)
        r = subprocess.run([sys.executable, os.path.join(HERE, "experiment.py")] + args,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_dry_run_plans_for_real(self):
        with tempfile.TemporaryDirectory() as w:
            out = self.dry(w)
            self.assertIn("torch.distributed.run --standalone --nproc-per-node 2", out)
            self.assertIn("--kernel adaload", out)
            for k in ("a", "b"):
                self.assertTrue(os.path.getsize(os.path.join(w, k + ".plan.jsonl")) > 0)
            sa = json.load(open(os.path.join(w, "a.summary.json")))
            sb = json.load(open(os.path.join(w, "b.summary.json")))
            self.assertEqual((sa["policy"], sb["policy"]), ("equal-token", "dual"))
            self.assertEqual(sa["gpus"], 2)
            self.assertEqual(sa["cost_model"]["source"], "profile")
            self.assertEqual(sa["model"], "e2e-dit-1536x4")
            m = json.load(open(os.path.join(w, "e2e-model.json")))
            self.assertEqual((m["layers"], m["hidden_size"], m["shard_states"]), (4, 1536, False))

    def test_e2e_json_from_fake_measurements_equal_to_the_plan(self):
        # Records whose compute time is the plan's cost and whose wall time is the step's
        # maximum cost: measured idle fraction and samples/s must equal the predicted ones.
        with tempfile.TemporaryDirectory() as w, tempfile.TemporaryDirectory() as res:
            self.dry(w)
            a = experiment.parse_args(["--work", w, "--samples", "300", "--adaload", ADALOAD,
                                       "--configs", "a-torch,b-adaload", "--results", res,
                                       "--steps", "5", "--warmup", "1", "--testbed", "fake"])
            mem = {"fixed_bytes": 1e9, "bytes_per_token": 1e4, "device_bytes": 1e11, "params": 1}
            configs, shapes = [], set()
            for name in a.config_list:
                key, _, kernel = name.partition("-")
                s, p = os.path.join(w, key + ".summary.json"), os.path.join(w, key + ".plan.jsonl")
                steps = L.read_plan(p, 2)
                buckets = json.load(open(s))["buckets"]
                run = os.path.join(w, "run-" + name)
                os.makedirs(run)
                for r in range(2):
                    with open(os.path.join(run, "steps-rank%d.jsonl" % r), "w") as f:
                        for k in range(6):
                            b, c, ids = steps[k][r]
                            shapes.add((len(ids), buckets[b]["tokens"]) if ids else None)
                            f.write(json.dumps({"step": k, "rank": r, "warmup": k == 0,
                                                "compute_s": c, "allreduce_s": 0.0,
                                                "step_s": max(x[1] for x in steps[k]),
                                                "peak_bytes": 10 ** 9, "samples": len(ids),
                                                "tokens": 1, "bucket": b}) + "\n")
                configs.append((name, key, kernel, *experiment.PLANS[key], s, p, run))
            op = {"D": 1536, "shapes": [{"batch": bs, "tokens": t,
                                         "torch": {"fwd_s": 1e-3, "bwd_s": 2e-3},
                                         "adaload": {"fwd_s": 2e-4, "bwd_s": 2e-3}}
                                        for bs, t in filter(None, shapes)]}
            json.dump(op, open(os.path.join(w, "op.json"), "w"))
            experiment.write_run(a, configs, mem)
            (folder,) = os.listdir(os.path.join(res, "fake", "e2e"))
            run = os.path.join(res, "fake", "e2e", folder)
            doc = json.load(open(os.path.join(run, "e2e.json")))
            # Indexed like every run, and the catalog agrees with the tree.
            (line,) = [json.loads(x) for x in open(os.path.join(res, "index.jsonl"))]
            self.assertEqual((line["kind"], line["testbed"]), ("e2e", "fake"))
            self.assertEqual(line["measured"], "2 configurations")
            chk = subprocess.run([ADALOAD, "results", "check", "--results", res],
                                 capture_output=True, text=True)
            self.assertEqual(chk.returncode, 0, chk.stdout + chk.stderr)
            self.assertEqual([c["name"] for c in doc["configs"]], ["a-torch", "b-adaload"])
            for c in doc["configs"]:
                self.assertEqual(c["measured"]["steps"], 5)
                self.assertEqual(c["predicted"]["steps"], 5)
                self.assertAlmostEqual(c["measured"]["idle_fraction"], c["predicted"]["idle_fraction"])
                self.assertAlmostEqual(c["measured"]["samples_per_s"], c["predicted"]["samples_per_s"])
                self.assertTrue(c["prediction_vs_measured"]["within_bar"])
                self.assertGreater(c["measured"]["op_share_of_compute"], 0)
                for k in ("policy", "assign", "kernel"):
                    self.assertIn(k, c)
            listing = sorted(os.listdir(run))
            self.assertIn("meta.json", listing)
            self.assertIn("steps-a-torch.jsonl", listing)


if __name__ == "__main__":
    unittest.main()
