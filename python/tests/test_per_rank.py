"""Per-rank plan files (`adaload plan --per-rank DIR`): rank r's file gives exactly the
micro-batches, sync flags and group totals of rank r's view of the whole plan (sorted-window
and kk), names its rank, world size and the whole plan's identity, is refused when cut,
read by another rank or world size, or not a per-rank file; the files are one transaction
with the other outputs. CPU only; needs the adaload program (ADALOAD_BIN)."""
import json
import os
import subprocess
import tempfile
import unittest

from common import dataset

from adaload.errors import PlanError
from adaload.plan import PlanBatches

BIN = os.environ.get("ADALOAD_BIN", "adaload")


def plan(*args):
    return subprocess.run([BIN, "plan", "--manifest", dataset("default.csv"), "--model", "wan2.1-1.3b",
                           "--no-baselines"] + list(args), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)


def view(b):
    return [(m.step, m.bucket, m.cost, m.ids, m.sync, m.group_samples, m.group_tokens, m.tokens,
             m.window) for m in b.microbatches()]


class SameAsWholePlan(unittest.TestCase):
    def test_sorted_window_and_kk(self):
        for assign in ("sorted-window", "kk"):
            with self.subTest(assign=assign), tempfile.TemporaryDirectory() as d:
                whole, prd = os.path.join(d, "whole.jsonl"), os.path.join(d, "pr")
                p = plan("--gpus", "3", "--assign", assign, "--plan-out", whole, "--per-rank", prd)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(sorted(os.listdir(prd)), ["rank0.jsonl", "rank1.jsonl", "rank2.jsonl"])
                ids = set()
                for r in range(3):
                    w = PlanBatches(whole, rank=r, world_size=3)
                    b = PlanBatches(os.path.join(prd, "rank%d.jsonl" % r), rank=r, world_size=3)
                    self.assertEqual(view(b), view(w))
                    self.assertIsNone(w.plan_id)
                    ids.add(b.plan_id)
                self.assertEqual(len(ids), 1)
                if assign == "kk":  # the test sees windows, not only syncs every step
                    self.assertTrue(any(not m.sync for m in b.microbatches()))

    def test_part_and_identity(self):
        with tempfile.TemporaryDirectory() as d:
            whole, a, b = (os.path.join(d, n) for n in ("w.jsonl", "a", "b"))
            self.assertEqual(plan("--gpus", "2", "--plan-out", whole, "--per-rank", a,
                                  "--start-step", "5", "--steps", "7").returncode, 0)
            self.assertEqual(plan("--gpus", "2", "--seed", "9", "--per-rank", b).returncode, 0)
            pa = PlanBatches(os.path.join(a, "rank1.jsonl"), rank=1, world_size=2, start_step=5)
            self.assertEqual(view(pa), view(PlanBatches(whole, rank=1, world_size=2, start_step=5)))
            self.assertEqual(len(pa), 7)
            pb = PlanBatches(os.path.join(b, "rank1.jsonl"), rank=1, world_size=2)
            self.assertNotEqual(pa.plan_id, pb.plan_id)  # another plan, another identity


class Refused(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = tempfile.TemporaryDirectory()
        cls.dir = os.path.join(cls.d.name, "pr")
        p = plan("--gpus", "2", "--assign", "kk", "--per-rank", cls.dir)
        assert p.returncode == 0, p.stderr
        cls.lines = open(os.path.join(cls.dir, "rank1.jsonl")).read().splitlines(True)

    @classmethod
    def tearDownClass(cls):
        cls.d.cleanup()

    def refused(self, lines, want, rank=1, world=2):
        path = os.path.join(self.d.name, "bad.jsonl")
        with open(path, "w") as f:
            f.writelines(lines)
        with self.assertRaises(PlanError) as c:
            PlanBatches(path, rank=rank, world_size=world)
        self.assertIn(want, str(c.exception))

    def test_good_file_reads(self):
        path = os.path.join(self.d.name, "good.jsonl")
        with open(path, "w") as f:
            f.writelines(self.lines)
        self.assertEqual(len(PlanBatches(path, rank=1, world_size=2)), len(self.lines) - 1)

    def test_truncated(self):
        self.refused(self.lines[:-1], "no end record")
        self.refused(self.lines[:-2] + self.lines[-1:], "the end record says")
        self.refused(self.lines[:-1] + [self.lines[-1][:-5]], "cut")

    def test_mismatched(self):
        self.refused(self.lines, "per-rank file of rank 1, read as rank 0", rank=0)
        self.refused(self.lines, "world_size is 3", world=3)
        end = json.loads(self.lines[-1])
        del end["rank"]
        self.refused(self.lines[:-1] + [json.dumps(end) + "\n"], "names no rank")
        end = json.loads(self.lines[-1])
        del end["plan_id"]
        self.refused(self.lines[:-1] + [json.dumps(end) + "\n"], "plan_id")
        # a whole plan's end record must not name a rank
        with tempfile.TemporaryDirectory() as d:
            whole = os.path.join(d, "w.jsonl")
            self.assertEqual(plan("--gpus", "2", "--plan-out", whole).returncode, 0)
            wl = open(whole).read().splitlines(True)
            end = json.loads(wl[-1])
            end["rank"] = 1
            self.refused(wl[:-1] + [json.dumps(end) + "\n"], "lines hold every rank")


class Command(unittest.TestCase):
    def test_usage_and_transaction(self):
        with tempfile.TemporaryDirectory() as d:
            f = os.path.join(d, "file")
            open(f, "w").close()
            p = plan("--per-rank", f)
            self.assertEqual(p.returncode, 2)
            self.assertIn("not a folder", p.stderr)
            # more ranks than the 32 outputs the transaction once held: every rank's file
            big = os.path.join(d, "big")
            whole = os.path.join(d, "whole64.jsonl")
            p = plan("--per-rank", big, "--gpus", "64", "--plan-out", whole)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(sorted(os.listdir(big)), sorted("rank%d.jsonl" % r for r in range(64)))
            for r in (0, 31, 32, 63):
                self.assertEqual(view(PlanBatches(os.path.join(big, "rank%d.jsonl" % r), rank=r, world_size=64)),
                                 view(PlanBatches(whole, rank=r, world_size=64)))
            # all files or none: a failing output leaves no per-rank folder behind
            pr = os.path.join(d, "pr")
            p = plan("--gpus", "2", "--per-rank", pr, "--summary-json", os.path.join(d, "no", "s.json"))
            self.assertEqual(p.returncode, 2)
            self.assertFalse(os.path.exists(pr))
            p = plan("--gpus", "2", "--per-rank", pr, "--start-step", "999999999")
            self.assertEqual(p.returncode, 2)
            self.assertFalse(os.path.exists(pr))


if __name__ == "__main__":
    unittest.main()
