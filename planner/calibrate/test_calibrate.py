#!/usr/bin/env python3
"""test_calibrate.py -- the torch-free parts of calibrate.py (ctest planner_calibrate_fit):
the least-squares helper recovers known coefficients, the fit over depths gives the L-layer
model (and cuts the noise of the old 1- vs 2-block difference), the memory fit separates the
per-sample term, points can span a plan's buckets, and the profile it writes is read by
`adaload plan --profile` (the strict reader of plan_profile.c) with the same coefficients,
its measured range and its jitter. ADALOAD_BIN names the program."""
import random
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
spec = importlib.util.spec_from_file_location("calibrate", os.path.join(HERE, "calibrate.py"))
cal = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cal)
ADALOAD = os.environ.get("ADALOAD_BIN", os.path.join(ROOT, "build", "adaload"))

# A block costs t0b + B (a S + b S^2 + g) per layer; the rest of the step r; a checkpoint
# keeps ck bytes per token, the recomputed block w per token over a constant c0.
A, BETA, G, T0B, REST = 6e-6, 2e-10, 5e-4, 0.01, 0.05
CK, W, C0, PS = 20000, 300000, 1.5e9, 2e8
L = 40


def fake_rows(points, depths=(1, 2, 4, 8), noise=0.0, reps=5, rng=None):
    """Rows of a fake GPU; noise: the CV of each repetition's time."""
    rows = []
    for k in depths:
        for B, S in points:
            blk = T0B + B * (A * S + BETA * S * S + G)
            t = REST + k * blk
            ts = [t * (1 + noise * rng.gauss(0, 1)) for _ in range(reps)] if noise else [t] * reps
            rows.append({"blocks": k, "batch": B, "tokens": S, "seconds": sorted(ts)[reps // 2], "times": ts,
                         "peak_bytes": C0 + (k * CK + W) * B * S + PS * B})
    return rows


class Calibrate(unittest.TestCase):
    def test_lstsq_recovers(self):
        pts = [(b, s) for b in (1, 2, 4) for s in (1560, 3600, 14040, 32760, 75600)]
        x = cal.lstsq([[B * S, B * S * S, B, 1.0] for B, S in pts],
                      [0.4 + B * (2.5e-4 * S + 8e-9 * S * S + 0.02) for B, S in pts])
        for got, want in zip(x, (2.5e-4, 8e-9, 0.02, 0.4)):
            self.assertAlmostEqual(got / want, 1.0, places=9)
        # the one solver (python/adaload/fit.py), also e2e_lib's
        from adaload import fit
        self.assertIs(cal.lstsq, fit.lstsq)
        # one batch size: the per-sample column is the constant's multiple -> None, not noise
        one = [(2, s) for s in (1560, 3600, 14040)]
        self.assertIsNone(cal.lstsq([[B * S, 1.0, B] for B, S in one], [1e9 + 3e5 * B * S for B, S in one]))
        self.assertIsNone(cal.lstsq([[0.0, 1.0], [0.0, 1.0]], [1.0, 2.0]))
        m = cal.fit_memory([(B, S, 0.0, 1e9 + 3e5 * B * S) for B, S in one])
        self.assertAlmostEqual(m["bytes_per_token"] / 3e5, 1.0, places=9)
        self.assertEqual(m["bytes_per_sample"], 0.0)
        with self.assertRaises(ValueError):
            cal.fit_memory([(1, 1560, 0.0, 1e9), (1, 1560, 0.0, 1.1e9)])
        with tempfile.TemporaryDirectory() as d:
            tfit, _ = cal.write_profile(os.path.join(d, "p.csv"), [(B, S, 0.1 * B * S, 1e9 + 3e5 * B * S) for B, S in one],
                                        {"schema": "adaload.calibrate/1"})
            self.assertIsNone(tfit)
            with open(os.path.join(d, "p.csv.json")) as f:
                self.assertIsNone(json.load(f)["fit_seconds"])

    def test_extrapolation_and_the_reader(self):
        pts = cal.DEFAULT_POINTS
        prof = cal.extrapolate(fake_rows(pts), pts, L)
        for B, S, t, m, info in prof:
            blk = T0B + B * (A * S + BETA * S * S + G)
            self.assertAlmostEqual(t, REST + L * blk, places=9)
            self.assertAlmostEqual(m, C0 + (L * CK + W) * B * S + PS * B, delta=1.0)
            self.assertEqual(info["depths"], [1, 2, 4, 8])
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "profile.csv")
            tfit, mfit = cal.write_profile(out, prof, {"schema": "adaload.calibrate/1"})
            self.assertAlmostEqual(tfit[0] / (L * A), 1.0, places=6)
            self.assertAlmostEqual(tfit[3] / (REST + L * T0B), 1.0, places=6)
            self.assertAlmostEqual(mfit["bytes_per_token"] / (L * CK + W), 1.0, places=6)
            self.assertAlmostEqual(mfit["bytes_per_sample"] / PS, 1.0, places=5)
            self.assertLess(mfit["max_rel"], 1e-9)
            with open(out) as f:
                self.assertEqual(f.readline(), "batch,tokens,seconds,peak_bytes,seconds_cv\n")
            with open(out + ".json") as f:
                self.assertIn("fit_peak", json.load(f))
            if not os.path.exists(ADALOAD):
                self.skipTest("the adaload program is not built")
            s = os.path.join(d, "s.json")
            r = subprocess.run([ADALOAD, "plan", "--manifest", os.path.join(ROOT, "datasets", "tiny.csv"),
                                "--model", "wan2.1-1.3b", "--profile", out, "--no-baselines",
                                "--summary-json", s], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(s) as f:
                j = json.load(f)
            self.assertEqual(j["memory_model"]["bytes_per_token"], L * CK + W)
            self.assertAlmostEqual(j["memory_model"]["bytes_per_sample"] / PS, 1.0, places=5)
            self.assertEqual(j["memory_model"]["measured_range"]["batch_max"], 8)
            self.assertEqual(j["jitter"]["source"], "measured (the profile's seconds_cv)")
            self.assertEqual(j["memory_model"]["bytes_per_token_status"], "measured (profile)")
            self.assertAlmostEqual(j["cost_model"]["overhead"] / (REST + L * T0B), 1.0, places=5)
            self.assertAlmostEqual(j["cost_model"]["beta"] / (L * BETA), 1.0, places=5)


    def test_depth_fit_cuts_the_noise(self):
        # 2% noise per repetition: the old estimate t1 + (L-1)(t2 - t1) from two medians
        # against the fit over depths 1, 2, 4, 8 and every repetition, over 200 seeded trials.
        rng = random.Random(7)
        pts = [(2, 1560)]
        blk = T0B + 2 * (A * 1560 + BETA * 1560 ** 2 + G)
        want = REST + L * blk
        old, new, se = [], [], []
        for _ in range(200):
            rows = fake_rows(pts, noise=0.02, rng=rng)
            by = {r["blocks"]: r["seconds"] for r in rows}
            old.append(by[1] + (L - 1) * (by[2] - by[1]) - want)
            B, S, t, m, info = cal.extrapolate(rows, pts, L)[0]
            new.append(t - want)
            se.append(info["se_seconds"])
        rms = lambda v: (sum(x * x for x in v) / len(v)) ** 0.5
        self.assertLess(rms(new), rms(old) / 4, "the depth fit must cut the old estimate's error")
        # the reported spread is honest: the mean standard error is the error's size
        self.assertAlmostEqual(sum(se) / len(se) / rms(new), 1.0, delta=0.3)

    def test_span_points_cover_the_plan(self):
        summary = {"buckets": [{"tokens": 1560, "batch_size": 90}, {"tokens": 32760, "batch_size": 4},
                               {"tokens": 75600, "batch_size": 1}, {"tokens": 3600, "batch_size": 39},
                               {"tokens": 9000, "dropped": True}]}
        pts = cal.span_points(summary, points=3, max_tokens=160000)
        self.assertIn((90, 1560), pts)
        self.assertIn((1, 1560), pts)
        self.assertIn((64, 1560), pts)
        self.assertIn((1, 75600), pts)
        self.assertNotIn(9000, {s for _, s in pts})
        self.assertTrue(all(b * s <= 160000 for b, s in pts))


if __name__ == "__main__":
    unittest.main()
