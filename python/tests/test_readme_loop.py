"""The training loop of python/README.md ("Using a plan in a training loop"), extracted from
the README and run as written by two ranks (threads, a summing all-reduce): the gradient
each optimizer step applies is the mean over exactly the samples of its sync group, there
is one optimizer step per sync group, every sample is used once per epoch. CPU only; needs
libadaload (the plans are made through it)."""
import os
import re
import tempfile
import threading
import unittest

from common import dataset, manifest_ids, source_dir

from adaload.plan import make_plan


def readme_loop():
    with open(os.path.join(source_dir(), "python", "README.md")) as f:
        text = f.read()
    m = re.search(r"```python\n# example: training loop\n(.*?)```", text, re.S)
    if not m:
        raise AssertionError("python/README.md has no '# example: training loop' block")
    ns = {}
    exec(compile(m.group(1), "python/README.md", "exec"), ns)
    return ns["train"]


def value(i):
    """The fake model's per-sample gradient: a number that identifies the sample."""
    return float(len(str(i)) * 1000 + sum(map(ord, str(i))) % 997)


class Model:
    def __init__(self):
        self.g = 0.0
        self.pending = []

    def loss_sum(self, ids):
        self.pending = list(ids)
        return Loss(sum(value(i) for i in ids), ids)

    def backward(self, scaled):
        self.g += scaled.v

    def grads(self):
        return self


class Loss:
    def __init__(self, v, ids):
        self.v, self.ids = v, ids

    def __truediv__(self, n):
        return Loss(self.v / n, self.ids)


class World:
    """A summing all-reduce over threads, and the record of every optimizer step."""

    def __init__(self, n):
        self.n, self.bar, self.lock = n, threading.Barrier(n), threading.Lock()
        self.buf, self.steps = [], []

    def all_reduce(self, model):
        with self.lock:
            self.buf.append(model.g)
        self.bar.wait()
        total = sum(self.buf)
        self.bar.wait()
        with self.lock:
            self.buf = []
        model.g = total
        self.bar.wait()


class Optimizer:
    def __init__(self, model, world, rank):
        self.m, self.w, self.rank = model, world, rank

    def step(self):
        if self.rank == 0:
            self.w.steps.append(self.m.g)

    def zero_grad(self):
        self.m.g = 0.0


class ReadmeLoop(unittest.TestCase):
    def run_loop(self, assign, epochs):
        train = readme_loop()
        with tempfile.TemporaryDirectory() as d:
            plan = os.path.join(d, "plan-{epoch}.jsonl")
            for e in range(epochs):
                make_plan(dataset("default.csv"), plan.replace("{epoch}", str(e)), model="wan2.1-1.3b",
                          gpus=2, assign=assign, window=4, epoch=e, seed=9)
            world = World(2)
            errors = []

            def rank(r):
                try:
                    m = Model()
                    train(plan, r, 2, m, Optimizer(m, world, r), world.all_reduce, epochs=epochs)
                except Exception as x:  # noqa: BLE001 - reported by the test
                    errors.append(x)
                    world.bar.abort()
            ts = [threading.Thread(target=rank, args=(r,)) for r in (0, 1)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            self.assertEqual(errors, [])
            # the expected optimizer steps: per sync group, the mean of its samples' values
            from adaload.plan import read_steps
            want = []
            for e in range(epochs):
                group = []
                for _, head, ranks in read_steps(plan.replace("{epoch}", str(e)), 2, with_head=True):
                    group += [i for x in ranks for i in x["ids"]]
                    if head["sync"]:
                        want.append(sum(value(i) for i in group) / len(group))
                        self.assertEqual(len(group), head["group_samples"])
                        group = []
                ids = [i for _, ranks in read_steps(plan.replace("{epoch}", str(e)), 2) for x in ranks
                       for i in x["ids"]]
                self.assertEqual(sorted(ids), sorted(manifest_ids(dataset("default.csv"))))
            self.assertEqual(len(world.steps), len(want))
            for got, w in zip(world.steps, want):
                self.assertAlmostEqual(got, w, delta=1e-9 * abs(w))

    def test_lpt_and_kk_two_epochs(self):
        self.run_loop("kk", 2)
        self.run_loop("lpt", 1)

    def test_sorted_window(self):
        self.run_loop("sorted-window", 1)


if __name__ == "__main__":
    unittest.main()
