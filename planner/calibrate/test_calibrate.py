#!/usr/bin/env python3
"""test_calibrate.py -- the torch-free parts of calibrate.py (ctest planner_calibrate_fit):
the least-squares helper recovers known coefficients, the 1- and 2-block extrapolation gives
the L-layer model, and the profile it writes is read by `adaload plan --profile` (the strict
reader of plan_profile.c) with the same coefficients. ADALOAD_BIN names the program."""
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
CK, W, C0 = 20000, 300000, 1.5e9
L = 40


def fake_rows(points):
    rows = []
    for k in (1, 2):
        for B, S in points:
            blk = T0B + B * (A * S + BETA * S * S + G)
            rows.append({"blocks": k, "batch": B, "tokens": S, "seconds": REST + k * blk,
                         "peak_bytes": C0 + (k * CK + W) * B * S})
    return rows


class Calibrate(unittest.TestCase):
    def test_lstsq_recovers(self):
        pts = [(b, s) for b in (1, 2, 4) for s in (1560, 3600, 14040, 32760, 75600)]
        x = cal.lstsq([[B * S, B * S * S, B, 1.0] for B, S in pts],
                      [0.4 + B * (2.5e-4 * S + 8e-9 * S * S + 0.02) for B, S in pts])
        for got, want in zip(x, (2.5e-4, 8e-9, 0.02, 0.4)):
            self.assertAlmostEqual(got / want, 1.0, places=9)

    def test_extrapolation_and_the_reader(self):
        pts = cal.DEFAULT_POINTS
        prof = cal.extrapolate(fake_rows(pts), pts, L)
        for B, S, t, m in prof:
            blk = T0B + B * (A * S + BETA * S * S + G)
            self.assertAlmostEqual(t, REST + L * blk, places=9)
            self.assertAlmostEqual(m, C0 + (L * CK + W) * B * S, delta=1.0)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "profile.csv")
            tfit, mfit = cal.write_profile(out, prof, {"schema": "adaload.calibrate/1"})
            self.assertAlmostEqual(tfit[0] / (L * A), 1.0, places=6)
            self.assertAlmostEqual(tfit[3] / (REST + L * T0B), 1.0, places=6)
            self.assertAlmostEqual(mfit[0] / (L * CK + W), 1.0, places=6)
            with open(out) as f:
                self.assertEqual(f.readline(), "batch,tokens,seconds,peak_bytes\n")
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
            self.assertEqual(j["memory_model"]["bytes_per_token_status"], "measured (profile)")
            self.assertAlmostEqual(j["cost_model"]["overhead"] / (REST + L * T0B), 1.0, places=5)
            self.assertAlmostEqual(j["cost_model"]["beta"] / (L * BETA), 1.0, places=5)


if __name__ == "__main__":
    unittest.main()
