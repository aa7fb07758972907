"""The bulk reader of per-rank files (adaload/_plan_fast.py) against the line-by-line reader
of adaload.plan: on the files `adaload plan --per-rank` writes (sorted-window, kk, lpt,
random; whole-number and string ids; idle ranks; a part from --start-step) it is taken and
gives exactly the line-by-line reader's micro-batches; on files edited in any of the ways
below it either declines (and PlanBatches reads the file line by line: the same result or
the same refusal) or gives the same micro-batches -- never a result where the line-by-line
reader refuses the file. CPU only; needs the adaload program (ADALOAD_BIN)."""
import csv
import json
import os
import re
import subprocess
import tempfile
import unittest

from common import dataset

from adaload import plan as P
from adaload.errors import PlanError

BIN = os.environ.get("ADALOAD_BIN", "adaload")


def per_rank(d, manifest, gpus, *args):
    out = os.path.join(d, "pr")
    p = subprocess.run([BIN, "plan", "--manifest", manifest, "--model", "wan2.1-1.3b", "--no-baselines",
                        "--gpus", str(gpus), "--per-rank", out] + list(args),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 0, p.stderr
    return out


def slow(path, world_size, rank):
    """The line-by-line reader's view (PlanBatches' fallback), or the PlanError's text."""
    try:
        return [P.MicroBatch(s, e["bucket"], float(e["cost"]), list(e["ids"]), h["sync"], h["group_samples"],
                             h["group_tokens"], e.get("tokens"), h["window"])
                for s, h, (e,) in P._step_lines(path, world_size, rank, {})]
    except PlanError as x:
        return str(x)


def first_difference(a, b):
    """None when the lists are equal (types too: a bulk 3 must not be a line-by-line 3.0),
    else the first place and both sides there (unittest's diff of two long lists takes
    minutes)."""
    key = lambda m: (m, tuple(map(type, m)), tuple(map(type, m.ids)))  # noqa: E731
    for i, (x, y) in enumerate(zip(a, b)):
        if key(x) != key(y):
            return i, x, y
    return None if len(a) == len(b) else ("length", len(a), len(b))


class SameAsLineByLine(unittest.TestCase):
    def check(self, d, gpus, ranks):
        for r in ranks:
            path = os.path.join(d, "rank%d.jsonl" % r)
            info = {}
            fast = P._fast_rank(path, gpus, r, info)
            self.assertIsNotNone(fast, "%s: adaload plan's own file not read in bulk" % path)
            self.assertIsNone(first_difference(fast, slow(path, gpus, r)), path)
            with open(path) as f:
                self.assertEqual(info["plan_id"], json.loads(f.read().splitlines()[-1])["plan_id"])

    def test_assignments_and_ids(self):
        with tempfile.TemporaryDirectory() as d:
            nums = os.path.join(d, "nums.csv")  # no id column: the ids are line numbers
            with open(dataset("default.csv"), newline="") as f, open(nums, "w", newline="") as g:
                w = csv.writer(g)
                for i, row in enumerate(csv.reader(f)):
                    w.writerow(row[1:])
                    if i == 3000:
                        break
            cases = [(dataset("default.csv"), 3, ["--assign", "sorted-window"]),
                     (dataset("default.csv"), 4, ["--assign", "kk", "--window", "8"]),
                     (dataset("default.csv"), 2, ["--assign", "lpt", "--start-step", "5", "--steps", "40"]),
                     (nums, 3, ["--assign", "random"]),
                     (dataset("tiny.csv"), 8, []),  # most ranks idle
                     (dataset("longtail.csv"), 1, [])]
            for k, (m, gpus, args) in enumerate(cases):
                with self.subTest(manifest=os.path.basename(m), args=args):
                    os.makedirs(os.path.join(d, str(k)))
                    self.check(per_rank(os.path.join(d, str(k)), m, gpus, *args), gpus, range(gpus))
            idle = [mb for mb in P._fast_rank(os.path.join(d, "4", "pr", "rank1.jsonl"), 8, 1, {}) if mb.bucket is None]
            self.assertTrue(idle and all(mb.ids == [] and mb.cost == 0.0 and mb.tokens == 0 for mb in idle))
            kk = P._fast_rank(os.path.join(d, "1", "pr", "rank0.jsonl"), 4, 0, {})
            self.assertIn(False, [mb.sync for mb in kk])
            self.assertIsInstance(P._fast_rank(os.path.join(d, "3", "pr", "rank0.jsonl"), 3, 0, {})[0].ids[0], int)


# (what is changed, a regular expression, its replacement, the line: a number (-1: the end
# record), "idle" or "busy": the first step line with such an entry; declined: the bulk
# reader must leave it to the line-by-line one)
EDITS = [
    ("leading zero", r'\{"step":1,', '{"step":01,', 1, True),
    ("another rank", r'"ranks":\[\{"rank":1,', '"ranks":[{"rank":2,', 1, True),
    ("negative cost", r'"cost":', '"cost":-', "busy", True),
    ("sync as a number", r'"sync":true', '"sync":1', 1, True),
    ("window as a string", r'"window":(\d+)', r'"window":"\1"', 1, True),
    ("idle with ids", r'"ids":\[\]', '"ids":[1]', "idle", True),
    ("busy without ids", r'"ids":\[', '"ids":[],"x":[', "busy", True),
    ("idle with a cost", r'"bucket":null,"cost":0', '"bucket":null,"cost":1', "idle", True),
    ("a space (valid JSON)", r'"step":', '"step": ', 1, True),
    ("an escaped id (valid JSON)", r'"ids":\["', r'"ids":["a\\"b","', "busy", True),
    ("an extra key (valid)", r'"tokens":', '"x":1,"tokens":', "busy", True),
    ("a mixed id list (valid)", r'"ids":\["', '"ids":[7,"', "busy", True),
    ("a cost in e-notation", r'"cost":[0-9.]+', '"cost":1.5e-05', "busy", False),
    ("steps not consecutive", r'\{"step":2,', '{"step":3,', 2, True),
    ("the end's step count", r'"steps":', '"steps":1', -1, True),
    ("the end's rank", r'"rank":1,"plan_id"', '"rank":2,"plan_id"', -1, True),
    ("no plan_id", r'"plan_id":', '"plan":', -1, True),
    ("the end's gpus", r'"gpus":4', '"gpus":5', -1, True),
]


class Edited(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        out = per_rank(cls.tmp.name, dataset("tiny.csv"), 4, "--assign", "sorted-window", "--window", "1")
        cls.lines = open(os.path.join(out, "rank1.jsonl")).read().splitlines(True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def same(self, lines, what):
        path = os.path.join(self.tmp.name, "edited.jsonl")
        with open(path, "w") as f:
            f.write("".join(lines))
        fast, want = P._fast_rank(path, 4, 1, {}), slow(path, 4, 1)
        if fast is not None:
            self.assertNotIsInstance(want, str, "%s: read in bulk, refused line by line (%s)" % (what, want))
            self.assertIsNone(first_difference(fast, want), what)
        try:
            got = list(P.PlanBatches(path, rank=1, world_size=4).microbatches())
        except PlanError as x:
            got = str(x)
        self.assertEqual(got, want, what)
        return fast, want

    def test_edits(self):
        for what, old, new, at, declined in EDITS:
            with self.subTest(what):
                lines = list(self.lines)
                if at in ("idle", "busy"):
                    at = next(i for i, x in enumerate(lines[:-1]) if ('"bucket":null' in x) == (at == "idle"))
                lines[at], n = re.subn(old, new, lines[at], count=1)
                self.assertEqual(n, 1, what)
                fast, want = self.same(lines, what)
                self.assertEqual(fast is None, declined, what)

    def test_cut_and_extra_lines(self):
        cases = {"no end record": self.lines[:-1], "the end record cut": self.lines[:-1] + [self.lines[-1][:-1]],
                 "a line after the end": self.lines + [self.lines[0]], "an empty line": self.lines[:1] + ["\n"] + self.lines[1:],
                 "a step line twice": self.lines[:1] + self.lines,
                 "CRLF (read line by line)": [x.replace("\n", "\r\n") for x in self.lines]}
        for what, lines in cases.items():
            with self.subTest(what):
                fast, want = self.same(lines, what)
                self.assertIsNone(fast, what)


if __name__ == "__main__":
    unittest.main()
