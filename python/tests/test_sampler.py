"""The per-rank batches of a plan (adaload.plan.PlanBatches, the core of
adaload.torch.PlanBatchSampler): every sample exactly once across ranks per epoch, exact
resume, the library's planner equal to `adaload plan`, and clear errors for bad inputs.
CPU only; needs libadaload (the planner part is always built)."""
import json
import os
import subprocess
import tempfile
import unittest

from common import dataset, manifest_ids, source_dir

from adaload.errors import PlanError
from adaload.plan import PlanBatches, make_plan, read_steps


def all_ranks(world, **kw):
    return [PlanBatches(rank=r, world_size=world, **kw) for r in range(world)]


class ExactlyOnce(unittest.TestCase):
    def check(self, manifest, world, **kw):
        ranks = all_ranks(world, manifest=manifest, **kw)
        steps = {len(b) for b in ranks}
        self.assertEqual(len(steps), 1, "every rank must run the same number of steps")
        seen = [i for b in ranks for ids in b for i in ids]
        want = manifest_ids(manifest)
        self.assertEqual(len(seen), len(want), "samples used != samples in the manifest")
        self.assertEqual(sorted(map(str, seen)), sorted(map(str, want)))
        return ranks

    def test_tiny_all_policies(self):
        for policy in ("equal-token", "dual"):
            for assign in ("random", "same-bucket"):
                for world in (1, 2, 3, 16):
                    with self.subTest(policy=policy, assign=assign, world=world):
                        self.check(dataset("tiny.csv"), world, model="wan2.1-1.3b",
                                   policy=policy, assign=assign, seed=5)

    def test_default_manifest_two_ranks(self):
        ranks = self.check(dataset("default.csv"), 2, model="wan2.1-1.3b", policy="dual")
        self.assertGreater(len(ranks[0]), 100)

    def test_line_numbers_without_id_column(self):
        with tempfile.TemporaryDirectory() as d:
            m = os.path.join(d, "noid.csv")
            with open(m, "w") as f:
                f.write("width,height,frames\n832,480,1\n832,480,81\n1280,720,33\n832,480,1\n")
            ranks = self.check(m, 2, model="wan2.1-1.3b")
            ids = [i for b in ranks for x in b for i in x]
            self.assertTrue(all(isinstance(i, int) for i in ids))

    def test_seed_changes_the_plan(self):
        a = list(PlanBatches(manifest=dataset("default.csv"), model="wan2.1-1.3b", world_size=2, seed=0))
        b = list(PlanBatches(manifest=dataset("default.csv"), model="wan2.1-1.3b", world_size=2, seed=1))
        self.assertNotEqual(a, b)


class Resume(unittest.TestCase):
    def test_start_step_equals_uninterrupted(self):
        kw = dict(manifest=dataset("default.csv"), model="wan2.1-1.3b", world_size=3, rank=1,
                  seed=7)
        full = list(PlanBatches(**kw))
        fullmb = list(PlanBatches(**kw).microbatches())
        for n in (0, 1, 2, len(full) // 2, len(full) - 1, len(full)):
            with self.subTest(start_step=n):
                b = PlanBatches(start_step=n, **kw)
                self.assertEqual(len(b), len(full) - n)
                self.assertEqual(list(b), full[n:])
                self.assertEqual(list(b.microbatches()), fullmb[n:])
                if n < len(full):
                    self.assertEqual(next(b.microbatches()).step, n)

    def test_partial_plan_file_resumes_exactly(self):
        # A file holding only steps F.. (as `adaload plan --start-step F` writes) gives the
        # same batches as the whole plan from any start_step >= F.
        with tempfile.TemporaryDirectory() as d:
            whole = os.path.join(d, "whole.jsonl")
            make_plan(dataset("default.csv"), whole, model="wan2.1-1.3b", gpus=2, seed=4)
            lines = open(whole).read().splitlines(True)
            end = json.loads(lines.pop())
            F = len(lines) // 3
            part = os.path.join(d, "part.jsonl")
            with open(part, "w") as f:
                f.writelines(lines[F:])
                f.write(json.dumps(dict(end, first_step=F, steps=len(lines) - F)) + "\n")
            full = list(PlanBatches(whole, world_size=2, rank=1))
            for n in (F, F + 1, len(lines) - 1, len(lines)):
                with self.subTest(start_step=n):
                    b = PlanBatches(part, world_size=2, rank=1, start_step=n)
                    self.assertEqual(list(b), full[n:])
                    self.assertEqual(b.first_step, F)
            with self.assertRaises(PlanError) as c:
                PlanBatches(part, world_size=2, start_step=F - 1)
            self.assertIn("starts at step %d" % F, str(c.exception))

    def test_iteration_is_repeatable(self):
        b = PlanBatches(manifest=dataset("tiny.csv"), model="wan2.1-1.3b", world_size=2,
                        start_step=1)
        self.assertEqual(list(b), list(b))


class LibraryEqualsCommand(unittest.TestCase):
    def test_same_plan_bytes_as_adaload_plan(self):
        exe = os.environ.get("ADALOAD_BIN")
        if not exe:
            self.skipTest("ADALOAD_BIN not set")
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "lib.jsonl"), os.path.join(d, "cli.jsonl")
            sa, sb = os.path.join(d, "lib.json"), os.path.join(d, "cli.json")
            # No policy, assignment or window given: the library's defaults are the command's.
            make_plan(dataset("default.csv"), a, sa, model="wan2.1-1.3b", seed=3, gpus=4)
            subprocess.run([exe, "plan", "--manifest", dataset("default.csv"), "--model",
                            "wan2.1-1.3b", "--seed", "3", "--gpus", "4", "--plan-out", b,
                            "--summary-json", sb],
                           check=True, stdout=subprocess.DEVNULL)
            for x, y in ((a, b), (sa, sb)):
                with open(x, "rb") as f, open(y, "rb") as g:
                    self.assertEqual(f.read(), g.read(), "%s differs from adaload plan's" % x)
            self.assertEqual(list(PlanBatches(a, world_size=4, rank=2)),
                             list(PlanBatches(manifest=dataset("default.csv"), model="wan2.1-1.3b",
                                              seed=3, world_size=4, rank=2)))
            self.assertEqual(sorted(os.listdir(d)), ["cli.json", "cli.jsonl", "lib.json", "lib.jsonl"],
                             "temporary files left behind")


GOOD = {"step": 0, "ranks": [{"rank": 0, "bucket": 1, "cost": 0.5, "ids": ["a", "b"]},
                             {"rank": 1, "bucket": None, "cost": 0, "ids": []}]}


def end_record(lines, gpus=2):
    """The end record `adaload plan` writes after these step lines."""
    steps = [ln for ln in lines if isinstance(ln, dict) and "step" in ln]
    first = steps[0]["step"] if steps else 0
    return {"end": True, "first_step": first, "steps": len(lines), "gpus": gpus}


class BadInputs(unittest.TestCase):
    def plan_file(self, lines, end=True):
        fd, p = tempfile.mkstemp(suffix=".jsonl")
        with os.fdopen(fd, "w") as f:
            for ln in lines + ([end_record(lines)] if end else []):
                f.write((ln if isinstance(ln, str) else json.dumps(ln)) + "\n")
        self.addCleanup(os.unlink, p)
        return p

    def bad(self, lines, needle, **kw):
        p = self.plan_file(lines)
        kw.setdefault("world_size", 2)
        with self.assertRaises(PlanError) as c:
            PlanBatches(p, **kw)
        self.assertIn(needle, str(c.exception))
        return str(c.exception)

    def test_good_file_reads(self):
        p = self.plan_file([GOOD, dict(GOOD, step=1, window=0, barrier=True)])
        self.assertEqual(list(PlanBatches(p, world_size=2, rank=1)), [[], []])
        self.assertEqual(list(PlanBatches(p, world_size=2, rank=0)), [["a", "b"], ["a", "b"]])

    def test_malformed_lines_name_file_and_line(self):
        msg = self.bad([GOOD, "{not json"], "not JSON")
        self.assertIn(":2:", msg)
        self.bad([GOOD, dict(GOOD, step=2)], "expected 1")
        self.bad([dict(GOOD, step=5), dict(GOOD, step=7)], "expected 6")
        self.bad([dict(GOOD, step=True)], "expected a whole number >= 0")
        self.bad([dict(GOOD, step=-1)], "expected a whole number >= 0")
        self.bad([{"ranks": []}], "a plan line is")
        self.bad([GOOD, ""], "empty line")
        self.bad([], "no steps")
        r = json.loads(json.dumps(GOOD))
        r["ranks"].reverse()
        self.bad([r], "ranks must be listed")
        r = json.loads(json.dumps(GOOD))
        r["ranks"][1]["ids"] = ["x"]
        self.bad([r], "idle (bucket null) but has ids")
        r = json.loads(json.dumps(GOOD))
        r["ranks"][0]["ids"] = []
        self.bad([r], "but no ids")
        r = json.loads(json.dumps(GOOD))
        del r["ranks"][0]["cost"]
        self.bad([r], "has no \"cost\"")
        r = json.loads(json.dumps(GOOD))
        r["ranks"][0]["cost"] = -1
        self.bad([r], "\"cost\" must be")
        r = json.loads(json.dumps(GOOD))
        r["ranks"][0]["ids"] = [1.5]
        self.bad([r], "list of strings or integers")

    def test_rank_options(self):
        self.bad([GOOD], "world_size is 3", world_size=3)
        self.bad([GOOD], "rank 2: must be", rank=2)
        self.bad([GOOD], "rank -1", rank=-1)
        self.bad([GOOD], "world_size 0", world_size=0)
        self.bad([GOOD], "start_step -1", start_step=-1)
        self.bad([GOOD], "the plan has only 1 steps", start_step=2)
        self.assertEqual(len(PlanBatches(self.plan_file([GOOD]), world_size=2, start_step=1)), 0)

    def test_sources(self):
        with self.assertRaises(PlanError):
            PlanBatches()
        with self.assertRaises(PlanError):
            PlanBatches("x.jsonl", manifest=dataset("tiny.csv"))
        with self.assertRaises(PlanError) as c:
            PlanBatches("/nonexistent/plan.jsonl")
        self.assertIn("/nonexistent/plan.jsonl", str(c.exception))

    def test_planner_errors(self):
        with self.assertRaises(PlanError) as c:
            PlanBatches(manifest="/nonexistent.csv", world_size=2)
        self.assertIn("/nonexistent.csv", str(c.exception))
        with self.assertRaises(PlanError) as c:
            PlanBatches(manifest=dataset("tiny.csv"), policy="fastest")
        self.assertIn("policy fastest", str(c.exception))
        with self.assertRaises(PlanError) as c:
            PlanBatches(manifest=dataset("tiny.csv"), assign="round-robin")
        self.assertIn("assign round-robin", str(c.exception))
        with self.assertRaises(PlanError) as c:
            PlanBatches(manifest=dataset("tiny.csv"), model="wan9")
        self.assertIn("wan9", str(c.exception))
        bad = os.path.join(source_dir(), "planner", "testdata",
                           "not_a_number.csv")
        with self.assertRaises(PlanError) as c:
            PlanBatches(manifest=bad)
        self.assertIn("not_a_number.csv:", str(c.exception))

    def test_read_steps_checks_world_size(self):
        p = self.plan_file([GOOD])
        self.assertEqual([s for s, _ in read_steps(p, 2)], [0])
        with self.assertRaises(PlanError):
            list(read_steps(p, 1))


if __name__ == "__main__":
    unittest.main()
