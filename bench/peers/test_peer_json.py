"""The peers' JSON without PyTorch (issue 17, one ceiling): a peer's pct_copy_bw is against
adaload's copy of the same bytes in the same run (--ceiling bench.json), torch's own copy is
the labelled extra pct_torch_copy_bw, no ceiling gives 0 (shown as missing), a wrong peer is
an error entry that starts with "wrong result" and has no time, and the file is strict JSON."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_json  # noqa: E402

COPY = "copy/bytes4000000"


def gbench(path, entries):
    with open(path, "w") as f:
        json.dump({"context": {}, "benchmarks": entries}, f)


def it(name, bps, i=0):
    return {"name": name, "run_name": name, "run_type": "iteration", "repetition_index": i,
            "real_time": 1.0, "time_unit": "us", "bytes_per_second": bps}


class Ceiling(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.bench = os.path.join(self.dir, "bench.json")
        # adaload's copy: repetitions at 3, 4 and 5 TB/s (median 4), an aggregate and an
        # errored copy that must not count, and a kernel entry that is no ceiling.
        gbench(self.bench, [it(COPY, 3e12, 0), it(COPY, 5e12, 1), it(COPY, 4e12, 2),
                            dict(it(COPY, 9e12), run_type="aggregate", name=COPY + "_median"),
                            dict(it("copy/bytes8", 1e12), error_occurred=True),
                            it("lnmod_fwd/dtile/x", 3.9e12)])

    def test_medians_of_adaloads_copies(self):
        c = peer_json.load_ceilings(self.bench)
        self.assertEqual(c, {COPY: 4e12})

    def test_pct_copy_is_against_adaloads_copy_and_torchs_is_an_extra(self):
        ceil = peer_json.load_ceilings(self.bench)
        # 4 MB in 2 us = 2 TB/s: 50% of adaload's copy (4 TB/s), 80% of torch's (2.5 TB/s).
        res = [{"name": "lnmod_fwd/torch_compile/s", "reps": [(2e-6, 10)] * 3, "bytes": 4000000,
                "copy": COPY, "counters": {"check_rel_err_y": 0.002}}]
        b = peer_json.benchmarks(res, ceil, {COPY: 2.5e12})
        reps = [e for e in b if e["run_type"] == "iteration"]
        self.assertEqual(len(reps), 3)
        for e in reps:
            self.assertAlmostEqual(e["pct_copy_bw"], 50.0)
            self.assertAlmostEqual(e["pct_torch_copy_bw"], 80.0)
            self.assertEqual(e["check_rel_err_y"], 0.002)
        med = [e for e in b if e.get("aggregate_name") == "median"][0]
        self.assertAlmostEqual(med["pct_copy_bw"], 50.0)
        # Without adaload's bench.json there is no ceiling: 0, never torch's copy.
        none = peer_json.benchmarks(res, {}, {COPY: 2.5e12})
        self.assertTrue(all(e["pct_copy_bw"] == 0.0 for e in none if "pct_copy_bw" in e))

    def test_a_wrong_peer_has_no_time(self):
        res = [{"name": "lnmod_bwd/torch_compile_table/s", "error": peer_json.WRONG +
                ": rel err y 0.002, dx 0.003, dscale 0.9986 (tolerance 0.0156; wrong: dscale)"}]
        b = peer_json.benchmarks(res, {}, {})
        self.assertEqual(len(b), 1)
        self.assertTrue(b[0]["error_occurred"])
        self.assertTrue(b[0]["error_message"].startswith("wrong result"))
        self.assertEqual(b[0]["real_time"], 0.0)
        self.assertNotIn("pct_copy_bw", b[0])

    def test_written_strict(self):
        out = os.path.join(self.dir, "peers.json")
        res = [{"name": "n", "reps": [(0.0, 1), (1e-6, 1)], "bytes": 10, "copy": COPY}]
        peer_json.write(out, {"k": "v"}, peer_json.benchmarks(res, {COPY: float("inf")}, {}))
        with open(out) as f:
            json.loads(f.read(), parse_constant=lambda c: self.fail("non-finite " + c))
        self.assertEqual([n for n in os.listdir(self.dir) if ".tmp." in n], [])


if __name__ == "__main__":
    unittest.main()
