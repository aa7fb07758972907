"""What a trainer needs from a plan (issue 19): the end record (a file cut at a line boundary
is refused), the sync marks and group totals (they reproduce the plan's own idle figure;
all-reducing every step does not), resume inside an lpt/kk window refused or rewound, epochs,
manifest mode with the command's defaults and checks, and the one-rank decoding equal to the
full one. CPU only; needs libadaload."""
import json
import os
import subprocess
import tempfile
import unittest

from common import dataset, manifest_ids

from adaload.errors import PlanError
from adaload.plan import PlanBatches, make_plan, read_steps


def idle_of(ranks):
    """Epoch idle fraction from the ranks' micro-batches: a sync group ends at a step whose
    sync is true; each rank's load is the sum of its costs in the group."""
    sum_max = sum_gap = 0.0
    loads = [0.0] * len(ranks)
    for rows in zip(*[list(r.microbatches()) for r in ranks]):
        for i, mb in enumerate(rows):
            loads[i] += mb.cost
        if rows[0].sync:
            mx, mean = max(loads), sum(loads) / len(loads)
            sum_max += mx
            sum_gap += mx - mean
            loads = [0.0] * len(ranks)
    return sum_gap / sum_max


class Trainer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.plans = {}
        for assign in ("kk", "sorted-window", "lpt"):
            p = os.path.join(cls.tmp.name, assign + ".jsonl")
            s = os.path.join(cls.tmp.name, assign + ".json")
            make_plan(dataset("default.csv"), p, s, model="wan2.1-1.3b", gpus=4, assign=assign,
                      window=8, seed=2)
            with open(s) as f:
                cls.plans[assign] = (p, json.load(f))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def ranks(self, assign, **kw):
        return [PlanBatches(self.plans[assign][0], rank=r, world_size=4, **kw) for r in range(4)]

    def test_sync_marks_reproduce_the_plans_idle(self):
        for assign in self.plans:
            with self.subTest(assign=assign):
                ranks = self.ranks(assign)
                want = self.plans[assign][1]["metrics"]["epoch_idle_fraction"]
                self.assertAlmostEqual(idle_of(ranks), want, delta=1e-6 + 1e-6 * want)
        # Ignoring the marks (an all-reduce every step) is not the plan kk made.
        ranks = self.ranks("kk")
        every = []
        for r in ranks:
            every.append([mb._replace(sync=True) for mb in r.microbatches()])

        class Fake:
            def __init__(self, m):
                self.m = m

            def microbatches(self):
                return iter(self.m)
        self.assertGreater(idle_of([Fake(m) for m in every]),
                           2 * self.plans["kk"][1]["metrics"]["epoch_idle_fraction"])

    def test_group_totals(self):
        for assign in ("kk", "sorted-window"):
            ranks = [list(r.microbatches()) for r in self.ranks(assign)]
            n = t = 0
            for rows in zip(*ranks):
                n += sum(len(mb.ids) for mb in rows)
                t += sum(mb.tokens for mb in rows)
                if rows[0].sync:
                    self.assertEqual((rows[0].group_samples, rows[0].group_tokens), (n, t))
                    n = t = 0
            ids = [i for r in self.ranks(assign) for x in r for i in x]
            self.assertEqual(sorted(ids), sorted(manifest_ids(dataset("default.csv"))))
            first = next(iter(self.ranks(assign)[0]))
            self.assertIsInstance(first, list)
            self.assertEqual(first.sync, ranks[0][0].sync)

    def test_cut_files_are_refused(self):
        path = self.plans["kk"][0]
        with open(path) as f:
            lines = f.read().splitlines(True)
        for name, keep in (("cut at a line boundary", lines[:len(lines) // 2]),
                           ("end record only dropped", lines[:-1]),
                           ("a step dropped", lines[:3] + lines[4:]),
                           ("cut inside a line", lines[:-2] + [lines[-2][:40]])):
            with self.subTest(name):
                p = os.path.join(self.tmp.name, "cut.jsonl")
                with open(p, "w") as f:
                    f.writelines(keep)
                with self.assertRaises(PlanError):
                    PlanBatches(p, rank=1, world_size=4)
                with self.assertRaises(PlanError):
                    list(read_steps(p, 4))

    def test_resume_inside_a_window(self):
        full = list(self.ranks("kk")[2].microbatches())
        inside = next(k for k in range(1, len(full)) if not full[k - 1].sync)
        start = inside
        while start > 0 and not full[start - 1].sync:
            start -= 1
        with self.assertRaises(PlanError) as c:
            PlanBatches(self.plans["kk"][0], rank=2, world_size=4, start_step=inside)
        self.assertIn("resume at step %d" % start, str(c.exception))
        b = PlanBatches(self.plans["kk"][0], rank=2, world_size=4, start_step=inside, rewind=True)
        self.assertEqual(b.start_step, start)
        self.assertEqual(list(b.microbatches()), full[start:])
        # sorted-window syncs every step: any step resumes.
        sw = PlanBatches(self.plans["sorted-window"][0], rank=0, world_size=4, start_step=inside)
        self.assertEqual(sw.start_step, inside)

    def test_one_rank_decoding_equals_the_full_one(self):
        path = self.plans["lpt"][0]
        for r in range(4):
            mine = [(mb.step, mb.ids, mb.bucket) for mb in PlanBatches(path, rank=r, world_size=4).microbatches()]
            full = [(s, ranks[r]["ids"], ranks[r]["bucket"]) for s, ranks in read_steps(path, 4)]
            self.assertEqual(mine, full)


class ManifestMode(unittest.TestCase):
    def test_checks_shared_with_the_command(self):
        kw = dict(manifest=dataset("tiny.csv"), model="wan2.1-1.3b", world_size=2)
        for bad, needle in ((dict(seed=2 ** 64), "seed"), (dict(seed=-1), "seed"),
                            (dict(seed=True), "seed"), (dict(gpu_mem_gib=float("nan")), "gpu_mem_gib"),
                            (dict(flops=0), "flops"), (dict(flops=-1.0), "flops"),
                            (dict(flops=float("inf")), "flops"), (dict(window=0), "window"),
                            (dict(mem_margin=0.95), "margin"), (dict(epoch=-1), "epoch"),
                            (dict(windw=8), "windw")):
            with self.subTest(bad=bad):
                with self.assertRaises(PlanError) as c:
                    PlanBatches(**dict(kw, **bad))
                self.assertIn(needle, str(c.exception))

    def test_grad_accum_ties_the_window(self):
        with tempfile.TemporaryDirectory() as d:
            s = os.path.join(d, "s.json")
            make_plan(dataset("tiny.csv"), None, s, model="wan2.1-1.3b", gpus=2, grad_accum=3)
            with open(s) as f:
                j = json.load(f)
            self.assertEqual((j["window"], j["grad_accum"]), (3, 3))
            self.assertIn("optimizer_step_distinct_shapes", j["metrics"])
            with self.assertRaises(PlanError) as c:
                make_plan(dataset("tiny.csv"), None, s, model="wan2.1-1.3b", gpus=2, assign="kk",
                          window=4, grad_accum=3)
            self.assertIn("grad-accum", str(c.exception))

    def test_epochs_reshuffle_like_the_command(self):
        exe = os.environ.get("ADALOAD_BIN")
        kw = dict(manifest=dataset("default.csv"), model="wan2.1-1.3b", world_size=2, seed=5)
        b = PlanBatches(rank=1, **kw)
        e0 = list(b)
        b.set_epoch(1)
        e1 = list(b)
        self.assertNotEqual(e0, e1)
        self.assertEqual(e1, list(PlanBatches(rank=1, epoch=1, **kw)))
        both = [i for r in (0, 1) for x in PlanBatches(rank=r, epoch=1, **kw) for i in x]
        self.assertEqual(sorted(both), sorted(manifest_ids(dataset("default.csv"))))
        if exe:
            with tempfile.TemporaryDirectory() as d:
                cli = os.path.join(d, "e1.jsonl")
                subprocess.run([exe, "plan", "--manifest", dataset("default.csv"), "--model",
                                "wan2.1-1.3b", "--gpus", "2", "--seed", "5", "--epoch", "1",
                                "--no-baselines", "--plan-out", os.path.join(d, "plan-1.jsonl")],
                               check=True, stdout=subprocess.DEVNULL)
                f = PlanBatches(os.path.join(d, "plan-{epoch}.jsonl"), rank=1, world_size=2, epoch=1)
                self.assertEqual(list(f), e1)
                del cli


if __name__ == "__main__":
    unittest.main()
