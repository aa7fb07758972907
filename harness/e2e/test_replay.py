"""CPU tests of the replayed-ranks experiment (replay.py, replay_lib.py, replay_report.py):
the figures on hand-computed records, the replay's order, weights and optimizer steps, the
per-rank files' checks, the jitter model, the report's verdicts, and the whole driver on the
pure-Python stand-in device (plans for real through the adaload program, run folder through
`adaload results new/publish`). With PyTorch, also the driver on the CPU with a tiny model.
Run by ctest as e2e_replay; ADALOAD_BIN names the adaload program."""
import contextlib
import importlib.util
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import replay  # noqa: E402
import replay_lib as R  # noqa: E402
import replay_report  # noqa: E402

ADALOAD = os.environ.get("ADALOAD_BIN", os.path.join(ROOT, "build", "adaload"))
HAVE_ADALOAD = os.path.exists(ADALOAD)
B = [{"tokens": 100}, {"tokens": 200}]


def hand_plan():
    # 2 ranks; group 0 = step 0; group 1 = steps 1-2 (a window: sync only at step 2).
    steps = [[(0, 2.0, ["a", "b"]), (1, 1.0, ["c"])],
             [(0, 1.0, ["d"]), (1, 3.0, ["e", "f", "g"])],
             [(1, 1.0, ["h"]), (None, 0.0, [])]]
    return R.Plan(steps, [True, False, True], [3, 5, 5], "x", 0)


class Recorder:
    """An executor whose compute time is the micro-batch's own number of samples."""

    def __init__(self):
        self.calls, self.opt, self.zero = [], 0, 0

    def microbatch(self, bucket, n, weight, seed):
        self.calls.append((bucket["tokens"], n, weight))
        return float(n), 1000 * n

    def idle_bytes(self):
        return 7

    def optimizer_step(self):
        self.opt += 1
        return 0.5

    def zero_grad(self):
        self.zero += 1

    def total_bytes(self):
        return 10000


class Figures(unittest.TestCase):
    def test_replay_order_weights_and_steps(self):
        p, ex = hand_plan(), Recorder()
        warm, meas = [], [[0], [1, 2]]
        recs, opt = R.replay(ex, p, B, warm, meas, repeats=2, repeat_groups=1)
        # rank by rank inside each group, each rank's steps in order
        self.assertEqual([c[:2] for c in ex.calls[:5]], [(100, 2), (200, 1), (100, 1), (200, 1), (200, 3)])
        w = {}
        for (tok, n, wt), r in zip(ex.calls, [x for x in recs if x["samples"]]):
            w.setdefault((r["group"], r["repeat"]), []).append(wt)
        for k, ws in w.items():
            self.assertAlmostEqual(sum(ws), 1.0, msg=k)  # DDP's mean over the group's samples
        self.assertEqual((ex.opt, ex.zero, opt), (2, 2, [0.5, 0.5]))
        idle = [x for x in recs if not x["samples"]]
        self.assertEqual([(x["step"], x["rank"], x["compute_s"], x["peak_bytes"]) for x in idle],
                         [(2, 1, 0.0, 7)] * 1 + [])
        self.assertEqual(sorted({x["repeat"] for x in recs}), [0, 1, 2])
        self.assertEqual(len([x for x in recs if x["repeat"]]), 2 * 2)

    def test_measured_by_hand(self):
        p, ex = hand_plan(), Recorder()
        recs, opt = R.replay(ex, p, B, [], [[0], [1, 2]])
        m = R.measured(recs, 2, 10000, opt)
        # loads: group 0 [2, 1], group 1 [1 + 1, 3 + 0] -> idle (0.5 + 0.5) / (2 + 3)
        self.assertAlmostEqual(m["idle_fraction"], 0.2)
        self.assertAlmostEqual(m["samples_per_s"], 8 / 5.0)
        self.assertEqual((m["steps"], m["sync_groups"], m["samples"]), (3, 2, 8))
        self.assertEqual(m["rank_compute_s"], [4.0, 4.0])
        self.assertAlmostEqual(m["vram_util_max"], 0.3)
        self.assertEqual(m["optimizer_s_mean"], 0.5)
        pr = R.predicted(p, [[0], [1, 2]])
        # the plan's costs: group 0 [2, 1], group 1 [2, 3]: the same by construction here
        self.assertAlmostEqual(pr["idle_fraction"], 0.2)
        self.assertAlmostEqual(pr["samples_per_s"], 8 / 5.0)

    def test_warmup_and_repeats_stay_out_of_the_figures(self):
        p = hand_plan()
        recs, _ = R.replay(Recorder(), p, B, [[0]], [[1, 2]], repeats=3, repeat_groups=1)
        m = R.measured(recs, 2, 0)
        self.assertEqual((m["sync_groups"], m["samples"]), (1, 5))
        self.assertAlmostEqual(m["idle_fraction"], (3 - 2.5) / 3)
        self.assertEqual(m["repeated_microbatches"], 3 * 3)

    def test_jitter_of_repeats(self):
        recs = [{"warmup": False, "repeat": r, "samples": 2, "bucket": 0, "compute_s": t,
                 "group": 0, "rank": 0, "step": 0, "peak_bytes": 1, "tokens": 2}
                for r, t in enumerate((0.9, 1.1, 1.0))]
        self.assertAlmostEqual(R.measured(recs, 1, 0)["jitter_cv"], 0.1)

    def test_lognormal_and_jitter_prediction(self):
        rng = random.Random(3)
        xs = [R.lognormal_factor(rng, 0.2) for _ in range(20000)]
        mean = sum(xs) / len(xs)
        cv = (sum((x - mean) ** 2 for x in xs) / len(xs)) ** 0.5 / mean
        self.assertAlmostEqual(mean, 1.0, delta=0.01)
        self.assertAlmostEqual(cv, 0.2, delta=0.01)
        flat = R.Plan([[(0, 1.0, ["a"]), (0, 1.0, ["b"])]] * 4, [True] * 4, [2] * 4, "x", 0)
        meas = [[k] for k in range(4)]
        self.assertEqual(R.jitter_predicted(flat, meas, 0.0)["idle_fraction"], 0.0)
        j = R.jitter_predicted(flat, meas, 0.1)
        # two equal ranks: E(max - mean) / E(max) ~ cv / sqrt(pi) / (1 + cv / sqrt(pi))
        self.assertAlmostEqual(j["idle_fraction"], 0.0533, delta=0.012)
        self.assertIsNone(R.jitter_predicted(flat, meas, None))

    def test_memory_check_and_explain(self):
        p = hand_plan()
        recs, _ = R.replay(Recorder(), p, B, [], [[0], [1, 2]])
        summary = {"memory_model": {"fixed_bytes": 0, "bytes_per_token": 5, "bytes_per_sample": 0},
                   "buckets": B, "gpu": {"usable_bytes": 9}}
        mc = R.memory_check(recs, summary)
        # peak 1000 n against 5 x tokens x n: 2.0 for bucket 0, 1.0 for bucket 1 (not above)
        self.assertAlmostEqual(mc["measured_over_predicted_max"], 2.0)
        self.assertEqual(mc["microbatches_above_prediction"], 2)
        x = R.explain(p, [[0], [1, 2]], recs)
        self.assertAlmostEqual(x["cost_ratio"], 1.0)
        self.assertAlmostEqual(x["repredicted_idle_fraction"], 0.2)

    def test_deadline_between_groups(self):
        t = iter([0.0, 5.0, 11.0])  # the clock at each group's start
        ex = Recorder()
        with self.assertRaisesRegex(R.OverBudget, "before group 0 .pass 1"):
            R.replay(ex, hand_plan(), B, [[0]], [[1, 2]], repeats=1, repeat_groups=1,
                     deadline=10.0, clock=lambda: next(t))
        self.assertEqual(ex.opt, 2)  # the warm-up and the measured group ran, the repeat did not

    def test_stand_in_out_of_memory(self):
        s = R.StandIn(1e-6, 0, 0, 100, 10, capacity=1000)
        self.assertEqual(s.microbatch({"tokens": 5}, 2, 1, 0)[1], 200)
        with self.assertRaises(R.OutOfMemory):
            s.microbatch({"tokens": 100}, 1, 1, 0)


def row(name, im, ip, sm, sp, **kw):
    c = {"name": name, "config": name, "ranks": 2, "kernel": "torch",
         "measured": {"idle_fraction": im, "samples_per_s": sm},
         "predicted": {"idle_fraction": ip, "samples_per_s": sp}}
    c.update(kw)
    return c


class Report(unittest.TestCase):
    def test_verdicts(self):
        x = {"repredicted_idle_fraction": 0.30, "repredicted_samples_per_s": 10.2, "cost_ratio": 1.3,
             "shape_ratio_min": 1.1, "shape_ratio_max": 1.5}
        self.assertEqual(replay_report.verdict(row("a", 0.2, 0.24, 10, 10.9)), (True, ""))
        self.assertFalse(replay_report.verdict(row("a", 0.2, 0.26, 10, 10))[0])
        self.assertTrue(replay_report.verdict(row("b", 0.3, 0.1, 10, 13, explanation=x))[1]
                        .startswith("cost model"))
        j = {"cv": 0.05, "idle_fraction": 0.28}
        self.assertTrue(replay_report.verdict(row("c", 0.3, 0.1, 10, 10.5, jitter_predicted=j))[1]
                        .startswith("jitter"))
        self.assertEqual(replay_report.verdict(row("d", 0.3, 0.1, 10, 13))[1], "not explained")

    def test_table_and_not_run(self):
        doc = {"info": {"device": "x"}, "ranks": [2], "configs": [
            row("dual", 0.1, 0.1, 12, 12), row("verl-kk", 0.2, 0.2, 10, 10)],
            "not_run": [{"name": "sort-by-length-w2-torch", "reason": "budget: ..."}]}
        t = replay_report.render(doc)
        self.assertIn("| dual | 2 | torch | 0.1000 | 0.1000 | +0.0000 |", t)
        # Without the simulator's epoch figures the plans' ratio is unknown ("--"); the
        # replayed groups' ratio is shown as such.
        self.assertIn("| 2 | torch | verl-kk | -- | -- | 1.000, 1.000 | 1.200x / 1.200x |", t)
        self.assertIn("- sort-by-length-w2-torch: budget", t)

    def test_plans_compared_by_epoch_not_by_replayed_groups(self):
        # The H200 case (2026-12-02T050252Z): the replayed first groups of the dual plan were
        # its costliest (0.64x equal-token + random over them), the epochs 1.116x apart.
        d = row("dual", 0.0012, 0.0, 2.596, 2.604)
        d["predicted"]["epoch"] = {"epoch_idle_fraction": 0.0887, "samples_per_s": 8.288}
        b = row("eqtok-random", 0.088, 0.0978, 4.039, 4.069)
        b["predicted"]["epoch"] = {"epoch_idle_fraction": 0.1836, "samples_per_s": 7.425}
        t = replay_report.render({"info": {"device": "x"}, "ranks": [2], "configs": [d, b]})
        self.assertIn("| 2 | torch | eqtok-random | 1.116x | 0.0887 / 0.1836 | 1.003, 1.007 | 0.643x / 0.640x |", t)


def run_main(args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = replay.main(args)
    return rc, out.getvalue()


@unittest.skipUnless(HAVE_ADALOAD, "the adaload program is not built")
class Driver(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="replay-test-")
        self.work, self.res = os.path.join(self.tmp, "w"), os.path.join(self.tmp, "r")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def args(self, *extra):
        return ["run", "--adaload", ADALOAD, "--work", self.work, "--results", self.res,
                "--samples", "400", "--steps", "3", "--device", "stand-in"] + list(extra)

    def doc(self):
        (run,) = os.listdir(os.path.join(self.res, "cpu-e2e-check", "e2e"))
        d = os.path.join(self.res, "cpu-e2e-check", "e2e", run)
        return d, json.load(open(os.path.join(d, "e2e.json")))

    def test_dry_run_plans_and_writes_nothing(self):
        rc, out = run_main(self.args("--dry-run"))
        self.assertEqual(rc, 0)
        for c in R.CONFIGS:
            for w in (2, 8):
                for k in ("torch", "adaload"):
                    self.assertRegex(out, r"\n  %s-w%d-%s +%d " % (c, w, k, w))
                self.assertTrue(os.path.exists(os.path.join(self.work, "plans", "%s-w%d" % (c, w), "rank%d.jsonl" % (w - 1))))
        self.assertIn("total estimate", out)
        self.assertFalse(os.path.exists(self.res))
        s = json.load(open(os.path.join(self.work, "plans", "verl-kk-w8.summary.json")))
        d = json.load(open(os.path.join(self.work, "plans", "dual-w8.summary.json")))
        self.assertEqual((s["policy"], s["assign"], s["m_tok"]), ("equal-token", "verl-kk", d["m_mem_tokens"]))
        self.assertEqual(d["cost_model"]["source"], "profile")

    def test_noise_free_stand_in_meets_the_prediction_exactly(self):
        # The stand-in's truth is the calibration the plans were made from: with no jitter the
        # measured figures are the predicted ones (the profile's fit is exact to ~1e-9).
        rc, out = run_main(self.args("--stand-in-jitter", "0", "--kernels", "torch"))
        self.assertEqual(rc, 0, out)
        d, doc = self.doc()
        self.assertEqual((doc["emulated"], doc["ranks"], doc["not_run"]), (True, [2, 8], []))
        self.assertEqual(len(doc["configs"]), 2 * len(R.CONFIGS))
        for c in doc["configs"]:
            m, p = c["measured"], c["predicted"]
            self.assertAlmostEqual(m["idle_fraction"], p["idle_fraction"], places=6, msg=c["name"])
            self.assertAlmostEqual(m["samples_per_s"] / p["samples_per_s"], 1.0, places=6, msg=c["name"])
            self.assertEqual((m["samples"], m["steps"]), (p["samples"], p["steps"]))
            self.assertTrue(c["prediction_vs_measured"]["within_bar"])
            self.assertLessEqual(c["memory"]["measured_over_predicted_max"], 1.0 + 1e-6)
            self.assertEqual(c["memory"]["microbatches_above_prediction"], 0)
        names = sorted(os.listdir(d))
        for f in ("e2e.json", "meta.json", "report.md", "profile.csv", "memory.json",
                  "steps-dual-w8-torch.jsonl", "summary-verl-kk-w2.json"):
            self.assertIn(f, names)
        rc, table = subprocess.run([sys.executable, os.path.join(HERE, "replay.py"), "report", d],
                                   capture_output=True, text=True).returncode, open(os.path.join(d, "report.md")).read()
        self.assertEqual(rc, 0)
        self.assertEqual(table.count("| yes |"), 2 * len(R.CONFIGS))
        r = subprocess.run([ADALOAD, "results", "check", "--results", self.res], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_a_wrong_cost_model_is_found_and_explained(self):
        rc, out = run_main(self.args("--stand-in-skew", "2", "--stand-in-jitter", "0.01",
                                     "--kernels", "torch", "--ranks", "8", "--configs", "dual,eqtok-random"))
        self.assertEqual(rc, 0, out)
        _, doc = self.doc()
        for c in doc["configs"]:
            self.assertGreater(c["explanation"]["cost_ratio"], 1.2)
            ok, why = replay_report.verdict(c)
            self.assertFalse(ok, c["name"])
            self.assertTrue(why.startswith("cost model"), why)

    def test_budget_and_out_of_memory_are_recorded(self):
        orig = replay.executor
        replay.executor = lambda a, k: R.StandIn(*a.fake[:3], 0, a.fake[5], capacity=1e10)
        try:
            rc, out = run_main(self.args("--kernels", "torch", "--ranks", "2", "--configs",
                                         "dual,verl-kk", "--budget-s", "1e-3"))
            self.assertEqual(rc, 0, out)  # all skipped by the budget: nothing failed
            _, doc = self.doc()
            self.assertEqual([n["reason"][:7] for n in doc["not_run"]], ["budget:"] * 2)
            shutil.rmtree(self.res)
            rc, out = run_main(self.args("--kernels", "torch", "--ranks", "2", "--configs", "dual"))
            self.assertEqual(rc, 1, out)
            _, doc = self.doc()
            self.assertTrue(doc["not_run"][0]["reason"].startswith("failed: out of memory"))
            self.assertEqual(doc["configs"], [])
        finally:
            replay.executor = orig

    def test_calibration_from_an_earlier_run(self):
        # A stand-in run's calibration is taken as it is (byte for byte) by a dry run of the
        # same model and slice; another model (depth) is refused with exit 2, naming the key.
        rc, out = run_main(self.args("--kernels", "torch", "--ranks", "2", "--configs", "dual"))
        self.assertEqual(rc, 0, out)
        run, _ = self.doc()
        work2 = os.path.join(self.tmp, "w2")
        base = ["run", "--adaload", ADALOAD, "--work", work2, "--results", self.res, "--samples",
                "400", "--steps", "3", "--ranks", "2", "--configs", "dual", "--calibration-from", run,
                # another fake model: ignoring --calibration-from would write another profile
                "--fake-calibration", "1e-6,1e-12,0.002,0.01,1e9,150000,1e8"]
        rc, out = run_main(base + ["--dry-run"])
        self.assertEqual(rc, 0, out)
        for f in ("profile.csv", "memory.json"):
            with open(os.path.join(run, f)) as x, open(os.path.join(work2, "calibration", f)) as y:
                self.assertEqual(json.loads(x.read()) if f.endswith("json") else x.read(),
                                 json.loads(y.read()) if f.endswith("json") else y.read(), f)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc, _ = run_main(base + ["--dry-run", "--depth", "2"])
        self.assertEqual(rc, 2)
        self.assertIn("its depth is 4, this run's 2", err.getvalue())
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            replay.parse_args(base + ["--reuse-work"])

    def test_per_rank_files_of_two_plans_are_refused(self):
        run_main(self.args("--dry-run", "--ranks", "2"))
        a, b = (os.path.join(self.work, "plans", n + "-w2") for n in ("dual", "verl-kk"))
        shutil.copy(os.path.join(b, "rank1.jsonl"), os.path.join(a, "rank1.jsonl"))
        with self.assertRaisesRegex(ValueError, "another plan"):
            R.load_ranks(a, 2)

    def test_reuse_work_replays_the_plans_already_there(self):
        # --reuse-work: no slice, calibration or planning; the plans of the first run, read
        # again (their files untouched), and a clear refusal where a plan is missing
        rc, _ = run_main(self.args("--dry-run", "--ranks", "2", "--configs", "dual,verl-kk"))
        self.assertEqual(rc, 0)
        f = os.path.join(self.work, "plans", "dual-w2", "rank1.jsonl")
        os.utime(f, (1, 1))
        os.unlink(os.path.join(self.work, "slice.csv"))
        rc, out = run_main(self.args("--reuse-work", "--ranks", "2", "--configs", "dual,verl-kk",
                                     "--kernels", "torch", "--stand-in-jitter", "0"))
        self.assertEqual(rc, 0, out)
        self.assertNotIn("adaload plan", out.replace("--no-baselines", ""))
        self.assertEqual(os.stat(f).st_mtime, 1)
        _, doc = self.doc()
        self.assertEqual([c["name"] for c in doc["configs"]], ["dual-w2-torch", "verl-kk-w2-torch"])
        for c in doc["configs"]:
            self.assertTrue(c["prediction_vs_measured"]["within_bar"])
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc, _ = run_main(self.args("--reuse-work", "--ranks", "2", "--configs", "sort-by-length"))
        self.assertEqual(rc, 2)
        self.assertIn("has no plan sort-by-length-w2", err.getvalue())

    def test_bad_usage(self):
        for bad in (["--configs", "dual,lpt"], ["--kernels", "cuda"], ["--ranks", "0"],
                    ["--device", "cpu", "--kernels", "adaload"], ["--fake-calibration", "1,2"],
                    ["--fused-residual"], ["--fused-residual", "--kernels", "torch"]):
            with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as e:
                replay.parse_args(["run"] + bad)
            self.assertEqual(e.exception.code, 2, bad)
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as e:
            replay.parse_args(["compare", "only-one-run"])
        self.assertEqual(e.exception.code, 2)

    def test_fused_residual_recorded_and_compared(self):
        # issue 22: the adaload replays without and then with --fused-residual on the same
        # plans (--reuse-work); the second run's e2e.json says the option was on, its replays
        # are named -adaload-res, it has no op-bench share (op-bench times lnmod alone), and
        # `replay.py compare` sets its step time beside the first run's (the noise-free
        # stand-in: exactly 1).
        base = ("--ranks", "2", "--configs", "dual,verl-kk", "--kernels", "adaload",
                "--stand-in-jitter", "0")
        rc, out = run_main(self.args(*base))
        self.assertEqual(rc, 0, out)
        (run_a,) = os.listdir(os.path.join(self.res, "cpu-e2e-check", "e2e"))
        rc, out = run_main(self.args(*base + ("--fused-residual", "--reuse-work")))
        self.assertEqual(rc, 0, out)
        runs = sorted(os.listdir(os.path.join(self.res, "cpu-e2e-check", "e2e")))
        (run_b,) = [r for r in runs if r != run_a]
        ra, rb = (os.path.join(self.res, "cpu-e2e-check", "e2e", r) for r in (run_a, run_b))
        da, db = (json.load(open(os.path.join(r, "e2e.json"))) for r in (ra, rb))
        self.assertFalse(da["info"]["fused_residual"])
        self.assertTrue(db["info"]["fused_residual"])
        self.assertEqual([c["name"] for c in db["configs"]], ["dual-w2-adaload-res", "verl-kk-w2-adaload-res"])
        for c in db["configs"]:
            self.assertEqual((c["kernel"], c["fused_residual"]), ("adaload", True))
            self.assertIsNone(c["measured"]["op_share_of_compute"])
        self.assertEqual([c["fused_residual"] for c in da["configs"]], [False, False])
        self.assertIn("| dual | 2 | adaload-res |", open(os.path.join(rb, "report.md")).read())
        r = subprocess.run([sys.executable, os.path.join(HERE, "replay.py"), "compare", ra, rb],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fused residual off", r.stdout)
        self.assertIn("fused residual on", r.stdout)
        for name in ("dual", "verl-kk"):
            self.assertRegex(r.stdout, r"\| %s \| 2 \| adaload \| adaload-res \| [^|]+ \| [^|]+ \| "
                             r"1\.0000 \| [^|]+ \| [^|]+ \| 1\.0000 \|" % name)
        # Other plans (another seed) are listed, not compared.
        doc = json.loads(json.dumps(db))
        doc["configs"][0]["plan_id"] = "another"
        t = replay_report.compare(da, doc)
        self.assertIn("Not compared:", t)
        self.assertEqual(t.count("| 1.0000 |"), 2)  # verl-kk's row only (two ratios)


@unittest.skipUnless(importlib.util.find_spec("torch") and HAVE_ADALOAD, "needs PyTorch")
class OnCPUTorch(unittest.TestCase):
    def test_tiny_model_end_to_end(self):
        with tempfile.TemporaryDirectory() as t:
            m = os.path.join(t, "m.csv")
            with open(m, "w") as f:
                f.write("id,width,height,frames\n")
                for i in range(24):
                    f.write("s%02d,%d,64,%d\n" % (i, 64 * (1 + i % 2), 1 + 4 * (i % 3)))
            rc, out = run_main(["run", "--device", "cpu", "--kernels", "torch", "--manifest", m, "--ranks", "2",
                                "--samples", "20", "--steps", "2", "--width", "32", "--depth", "1",
                                "--heads", "2", "--ffn", "64", "--text-len", "4", "--window", "2",
                                "--max-tokens", "4000", "--adaload", ADALOAD, "--work",
                                os.path.join(t, "w"), "--results", os.path.join(t, "r")])
            self.assertEqual(rc, 0, out)
            (run,) = os.listdir(os.path.join(t, "r", "cpu-e2e-check", "e2e"))
            doc = json.load(open(os.path.join(t, "r", "cpu-e2e-check", "e2e", run, "e2e.json")))
            self.assertEqual(len(doc["configs"]), len(R.CONFIGS))
            self.assertEqual(doc["not_run"], [])
            for c in doc["configs"]:
                self.assertGreater(c["measured"]["samples_per_s"], 0)


if __name__ == "__main__":
    unittest.main()
