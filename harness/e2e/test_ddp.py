"""CPU tests of the two-GPU DDP experiment's torch-free parts (ddp_lib.py, ddp_report.py, ddp.py;
ctest e2e_ddp, no PyTorch needed): the multicast-off check, each rank reading only its own
per-rank file and the ranks' plan check, every rank's groups and all-reduce trigger, the loss
weights, the measured figures on hand-made records, the all-reduce-aware prediction by hand
and against records simulated from the plan, the comparison with the replay, the report, the
worker's refusal without the variables, and the driver's dry run and run folder (through
`adaload results new/publish`) from simulated records. ADALOAD_BIN names the adaload program.
The PyTorch path (gloo DDP against the replay) is test_ddp_torch.py (ctest e2e_ddp_torch)."""
import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import ddp  # noqa: E402
import ddp_lib as D  # noqa: E402
import ddp_report  # noqa: E402
import replay_lib as R  # noqa: E402
from adaload.plan import MicroBatch  # noqa: E402

ADALOAD = os.environ.get("ADALOAD_BIN", os.path.join(ROOT, "build", "adaload"))
HAVE_ADALOAD = os.path.exists(ADALOAD)


def manifest(path):
    with open(path, "w") as f:
        f.write("id,width,height,frames\n")
        for i in range(24):
            f.write("s%02d,%d,64,%d\n" % (i, 64 * (1 + i % 2), 1 + 4 * (i % 3)))


def lpt_plan(tmp):
    """An lpt plan for 2 ranks whose first window has ranks running different numbers of
    micro-batches and whose second has rank 0 idle at the sync step (test_ddp_torch's)."""
    m = os.path.join(tmp, "m.csv")
    manifest(m)
    folder = os.path.join(tmp, "lpt-w2")
    subprocess.run([ADALOAD, "plan", "--manifest", m, "--model", "wan2.1-1.3b", "--gpus", "2",
                    "--policy", "equal-token", "--tok-budget", "130", "--assign", "lpt", "--window",
                    "4", "--per-rank", folder, "--summary-json", folder + ".summary.json",
                    "--no-baselines"], check=True, capture_output=True)
    return folder


def mb(step, n, sync, gs=10, bucket=0):
    return MicroBatch(step, bucket, 1.0, ["x%d" % i for i in range(n)], sync, gs, 0, 0, 0)


class Env(unittest.TestCase):
    def test_multicast_problems(self):
        self.assertEqual(D.multicast_problems(dict(D.NO_MULTICAST, OTHER="1")), [])
        env = dict(D.NO_MULTICAST, NCCL_NVLS_ENABLE="1")
        del env["NVSHMEM_DISABLE_NVLS"]
        self.assertEqual(D.multicast_problems(env), ["NCCL_NVLS_ENABLE=1 (want 0)",
                                                     "NVSHMEM_DISABLE_NVLS=<unset> (want 1)"])

    def test_worker_refuses_a_launcher_without_them(self):
        # before torch is imported: the check runs here without PyTorch
        import ddp_train
        a = argparse.Namespace()
        env = {k: v for k, v in D.NO_MULTICAST.items() if k != "TORCH_SYMM_MEM_DISABLE_MULTICAST"}
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
            ddp_train.train(a, env)
        self.assertEqual(e.exception.code, 2)
        self.assertIn("TORCH_SYMM_MEM_DISABLE_MULTICAST=<unset> (want 1)", err.getvalue())

    def test_train_usage(self):
        import train
        for bad in (["train", "--out", "o"], ["train", "--out", "o", "--plan", "p", "--per-rank", "d"],
                    ["calibrate", "--out", "o"], ["op-bench", "--out", "o", "--per-rank", "d"]):
            with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as e:
                train.parse_args(bad)
            self.assertEqual(e.exception.code, 2, bad)
        a = train.parse_args(["train", "--out", "o", "--per-rank", "p/dual-w2", "--per-rank", "p/kk-w2/",
                              "--estimate-s", "3", "--kernel", "adaload"])
        import ddp_train
        self.assertEqual(ddp_train.jobs_of(a), [("dual-w2-adaload", "p/dual-w2", "p/dual-w2.summary.json", 3.0),
                                                ("kk-w2-adaload", "p/kk-w2/", "p/kk-w2.summary.json", None)])
        a = train.parse_args(["train", "--out", "o", "--per-rank", "p/dual-w2", "--kernel", "adaload",
                              "--fused-residual"])
        self.assertTrue(a.fused_residual)
        self.assertEqual(ddp_train.jobs_of(a)[0][0], "dual-w2-adaload-res")

    def test_fused_residual_needs_the_adaload_kernel(self):
        # issue 22: the fused residual op is adaload's; with the torch kernel a usage error
        # (exit 2, naming the option) in every mode, through the program itself too.
        import train
        for mode in (["train", "--out", "o", "--per-rank", "p/dual-w2"],
                     ["calibrate", "--out", "o", "--summary", "s.json"]):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
                train.parse_args(mode + ["--fused-residual"])
            self.assertEqual(e.exception.code, 2, mode)
            self.assertIn("--fused-residual", err.getvalue())
            self.assertIn("--kernel adaload", err.getvalue())
            self.assertFalse(train.parse_args(mode).fused_residual)
        r = subprocess.run([sys.executable, os.path.join(HERE, "train.py"), "calibrate", "--out", "o",
                            "--summary", "s.json", "--kernel", "torch", "--fused-residual"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--fused-residual", r.stderr)


class Schedule(unittest.TestCase):
    def test_trigger_is_the_last_busy_micro_batch(self):
        mbs = [mb(0, 2, False), mb(1, 0, False), mb(2, 1, True), mb(3, 1, False), mb(4, 0, True),
               mb(5, 0, False), mb(6, 0, True), mb(7, 3, False)]
        s = D.rank_schedule(mbs, 0, 7)
        self.assertEqual([[m.step for m in g["steps"]] for g in s], [[0, 1, 2], [3, 4], [5, 6]])
        self.assertEqual([g["trigger"] for g in s], [2, 0, None])  # step 7's group is cut off
        self.assertEqual([g["warmup"] for g in s], [False] * 3)
        s = D.rank_schedule(mbs, 1, 1)
        self.assertEqual([(g["group"], g["warmup"], len(g["steps"])) for g in s], [(0, True, 3), (0, False, 2)])

    def test_loss_weights_make_the_group_mean(self):
        # DDP averages the W ranks' gradients: the weights of all ranks' micro-batches of a
        # group, divided by W, add up to 1 (replay.py's n / G)
        ns = [[3, 1], [2, 0, 4]]
        G = sum(map(sum, ns))
        self.assertAlmostEqual(sum(D.loss_weight(n, G, 2) for r in ns for n in r) / 2, 1.0)
        self.assertEqual(D.loss_weight(3, 12, 4), 1.0)

    @unittest.skipUnless(HAVE_ADALOAD, "the adaload program is not built")
    def test_each_rank_reads_its_own_file(self):
        with tempfile.TemporaryDirectory() as t:
            folder = lpt_plan(t)
            plan = R.load_ranks(folder, 2)
            warm, meas = R.schedule(plan, 0, 1, 3)
            ids = []
            for r in range(2):
                pid, first, mbs = D.load_rank(folder, r, 2)
                ids.append(pid)
                self.assertEqual(first, 0)
                self.assertEqual([list(m.ids) for m in mbs], [plan.steps[k][r][2] for k in range(len(plan.steps))])
                s = D.rank_schedule(mbs, 1, 3)
                # every rank's groups are the plan's (the same sync marks in every file)
                self.assertEqual([[m.step for m in g["steps"]] for g in s], warm + meas)
                for g in s:
                    busy = [i for i, m in enumerate(g["steps"]) if m.ids]
                    self.assertEqual(g["trigger"], busy[-1] if busy else None)
                    self.assertEqual(len({m.group_samples for m in g["steps"]}), 1)
            D.check_plan_ids(ids, folder)
            # the group totals every rank uses are the plan's, over both ranks
            for g in warm + meas:
                self.assertEqual(plan.group_samples[g[0]], sum(len(plan.steps[k][r][2]) for k in g for r in range(2)))
            # a rank reading another rank's file, or files of two plans, is refused
            shutil.copy(os.path.join(folder, "rank0.jsonl"), os.path.join(t, "x.jsonl"))
            os.makedirs(os.path.join(t, "swap"))
            shutil.copy(os.path.join(folder, "rank0.jsonl"), os.path.join(t, "swap", "rank1.jsonl"))
            with self.assertRaises(Exception):
                D.load_rank(os.path.join(t, "swap"), 1, 2)
            for bad in ([ids[0], "other"], [ids[0], None], []):
                with self.assertRaisesRegex(ValueError, "not of one plan"):
                    D.check_plan_ids(bad, folder)


def rec(group, step, rank, c, a, samples=1, opt=0.0, wall=None, warmup=False, rounds=1, peak=100,
        bucket=0):
    return {"group": group, "step": step, "rank": rank, "compute_s": c, "allreduce_s": a,
            "optimizer_s": opt, "idle_pass_s": 0.0, "step_s": wall if wall is not None else c + a + opt,
            "peak_bytes": peak, "samples": samples, "tokens": 10 * samples, "bucket": bucket,
            "warmup": warmup, "ar_rounds": rounds, "repeat": 0}


def hand_plan():
    # 2 ranks; group 0 = step 0; group 1 = steps 1-2 (a window: sync only at step 2).
    steps = [[(0, 2.0, ["a", "b"]), (1, 1.0, ["c"])],
             [(0, 1.0, ["d"]), (1, 3.0, ["e", "f", "g"])],
             [(1, 1.0, ["h"]), (None, 0.0, [])]]
    return R.Plan(steps, [True, False, True], [3, 5, 5], "x", 0)


class Figures(unittest.TestCase):
    def test_measured_by_hand(self):
        recs = [rec(0, 0, 0, 2.0, 0.5, 2, opt=0.1), rec(0, 0, 1, 1.0, 1.5, 1, opt=0.1, peak=300),
                rec(1, 1, 0, 1.0, 0.0, 1, rounds=0), rec(1, 2, 0, 1.0, 1.2, 1, opt=0.1),
                rec(1, 1, 1, 3.0, 0.2, 3, rounds=0), rec(1, 2, 1, 0.0, 0.0, 0, opt=0.1),
                rec(9, 9, 0, 50, 50, 5, warmup=True), rec(9, 9, 1, 50, 50, 5, warmup=True)]
        m = D.measured(recs, 2, 1000)
        # compute: group 0 [2, 1], group 1 [2, 3]: idle (0.5 + 0.5) / (2 + 3)
        self.assertAlmostEqual(m["idle_fraction"], 0.2)
        # waits [0.5, 1.5], [1.2, 0.2] over compute + wait 2.5 + 2.5 + 3.2 + 3.2
        self.assertAlmostEqual(m["wait_fraction"], 3.4 / 11.4)
        self.assertAlmostEqual(m["samples_per_s"], 8 / (2.5 + 3.2))
        self.assertAlmostEqual(m["allreduce_exposed_s"], (0.5 + 0.2) / 2)  # median of the minima
        self.assertEqual(m["rank_compute_s"], [4.0, 4.0])
        self.assertAlmostEqual(m["rank_allreduce_wait_s"][1], 1.7)
        self.assertEqual((m["steps"], m["sync_groups"], m["samples"], m["rank_peak_bytes"]), (3, 2, 8, [100, 300]))
        self.assertAlmostEqual(m["optimizer_s_mean"], 0.1)
        self.assertEqual((m["allreduce_rounds_min"], m["allreduce_rounds_max"]), (1, 1))
        self.assertEqual(m["groups"][1]["compute_s"], [2.0, 3.0])
        self.assertAlmostEqual(m["vram_util_max"], 0.3)
        with self.assertRaisesRegex(ValueError, "group 0: 1 records for 1 steps x 2 ranks"):
            D.measured(recs[:1], 2, 0)
        # a rank idle in a whole group: its zero-weight pass counts as waiting, not compute
        idle = [rec(0, 0, 0, 2.0, 0.5, 2), dict(rec(0, 0, 1, 0.0, 0.5, 0), idle_pass_s=2.0)]
        m = D.measured(idle, 2, 0)
        self.assertEqual((m["idle_fraction"], m["compute_s_total"]), (0.5, 2.0))
        self.assertAlmostEqual(m["wait_fraction"], 3.0 / 5.0)
        self.assertAlmostEqual(m["samples_per_s"], 2 / 2.5)

    def test_predicted_by_hand(self):
        p = D.predicted(hand_plan(), [[0], [1, 2]], t_ar=1.0, t_opt=0.5)
        # loads [2, 1], [2, 3]; spans 3 and 4; waits (1 + 2) + (2 + 1) over 2 x 7
        self.assertAlmostEqual(p["idle_fraction"], 0.2)
        self.assertAlmostEqual(p["wait_fraction"], 6 / 14)
        self.assertAlmostEqual(p["samples_per_s"], 8 / 7)
        self.assertAlmostEqual(p["samples_per_s_wall"], 8 / 8)
        self.assertEqual((p["samples"], p["sync_groups"], p["allreduce_s_given"]), (8, 2, 1.0))
        self.assertAlmostEqual(D.predicted(hand_plan(), [[0], [1, 2]], 0.0)["wait_fraction"], 2 / 10)

    def test_simulated_ddp_meets_the_prediction(self):
        # Records of a DDP that follows the plan exactly: each rank computes its costs, the
        # all-reduce completes T after the slowest: the measured figures are the predicted ones.
        plan, meas, T = hand_plan(), [[0], [1, 2]], 0.7
        recs = simulate(plan, meas, T)
        m, p = D.measured(recs, 2, 0), D.predicted(plan, meas, T)
        for k in ("idle_fraction", "wait_fraction", "samples_per_s"):
            self.assertAlmostEqual(m[k], p[k], msg=k)
        self.assertAlmostEqual(m["allreduce_exposed_s"], T)
        self.assertTrue(D.within(m, p))
        rp = D.repredicted(plan, meas, recs, T)
        self.assertAlmostEqual(rp["samples_per_s"], p["samples_per_s"])

    def test_versus_replay(self):
        m = {"samples": 8, "steps": 3, "samples_per_s": 1.5, "compute_s_total": 12.0}
        rc = {"name": "dual-w2-torch", "measured": {"samples": 8, "steps": 3, "samples_per_s": 2.0,
                                                   "idle_fraction": 0.1, "compute_s_total": 10.0}}
        v = D.versus_replay(m, rc)
        self.assertAlmostEqual(v["allreduce_share"], 0.25)
        self.assertAlmostEqual(v["compute_ratio"], 1.2)
        rc["measured"]["samples"] = 9
        self.assertIsNone(D.versus_replay(m, rc)["allreduce_share"])
        self.assertIsNone(D.versus_replay(m, None))


def simulate(plan, meas, T, first_group=0):
    """train.py's records for groups `meas` of a DDP that takes exactly the plan's costs and
    whose all-reduce ends T after the slowest rank's compute (each rank's last busy step
    carries its wait)."""
    recs = []
    for gi, g in enumerate(meas):
        loads = [sum(plan.steps[k][r][1] for k in g if plan.steps[k][r][2]) for r in range(plan.ranks)]
        span = max(loads) + T
        for r in range(plan.ranks):
            busy = [k for k in g if plan.steps[k][r][2]]
            for k in g:
                b, c, ids = plan.steps[k][r]
                last = k == (busy[-1] if busy else g[-1])
                recs.append(rec(gi + first_group, k + plan.first_step, r, c if ids else 0.0,
                                span - loads[r] if last else 0.0, len(ids),
                                rounds=1 if k == g[-1] else 0, bucket=b))
    return recs


class Report(unittest.TestCase):
    def test_rows_verdicts_and_not_run(self):
        plan, meas = hand_plan(), [[0], [1, 2]]
        recs = simulate(plan, meas, 0.5)
        m, p = D.measured(recs, 2, 0), D.predicted(plan, meas, 0.5)
        ok = {"name": "dual-w2-torch", "config": "dual", "kernel": "torch", "measured": m, "predicted": p,
              "repredicted": p, "versus_replay": {"replay_samples_per_s": 2.0, "allreduce_share": 0.25,
                                                  "compute_ratio": 1.01}}
        bad = dict(ok, config="verl-kk", predicted=dict(p, wait_fraction=p["wait_fraction"] + 0.2),
                   repredicted=dict(p, wait_fraction=p["wait_fraction"] + 0.2))
        cm = dict(bad, config="sort-by-length", repredicted=p)
        self.assertEqual(ddp_report.verdict(ok), (True, ""))
        self.assertTrue(ddp_report.verdict(bad)[1].startswith("wait: predicted"))
        self.assertTrue(ddp_report.verdict(cm)[1].startswith("cost model"))
        doc = {"info": {"replay_run": "x/e2e/r", "allreduce_alone": {"seconds": 0.01, "bytes": 4,
                                                                     "backend": "nccl", "device": "H200"}},
               "ranks": [2], "configs": [ok, bad], "not_run": [{"name": "dual-w2-adaload", "reason": "failed: x"}]}
        t = ddp_report.render(doc)
        self.assertIn("| dual | torch | %.4f | %.4f | %.4f | %.4f |" % (
            m["idle_fraction"], p["idle_fraction"], m["wait_fraction"], p["wait_fraction"]), t)
        self.assertIn("| yes |  | 2 | 0.250 | 1.010 |", t)
        self.assertEqual(t.count("**no**"), 1)
        self.assertIn("- dual-w2-adaload: failed: x", t)
        self.assertIn("| rank 0 | rank 1 |", t)


@unittest.skipUnless(HAVE_ADALOAD, "the adaload program is not built")
class Driver(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp-test-")
        self.work, self.res = os.path.join(self.tmp, "w"), os.path.join(self.tmp, "r")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def args(self, *extra):
        return ["run", "--dry-run", "--adaload", ADALOAD, "--work", self.work, "--results", self.res,
                "--samples", "400", "--steps", "3"] + list(extra)

    def test_testbed_is_the_gpu_and_the_count(self):
        a = ddp.parse_args(["run", "--adaload", ADALOAD])
        tb = subprocess.run([ADALOAD, "results", "testbed"], capture_output=True, text=True).stdout.strip()
        self.assertEqual(ddp.testbed(a), tb + "-x2")
        self.assertEqual(ddp.testbed(ddp.parse_args(["run", "--device", "cpu", "--kernels", "torch"])),
                         "cpu-e2e-check")
        self.assertIn("--testbed nvidia-h200-x2", " ".join(ddp.replay_cmd(ddp.parse_args(
            ["run", "--testbed", "nvidia-h200-x2"]))))

    def test_dry_run_plans_and_commands(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = ddp.main(self.args())
        out = out.getvalue()
        self.assertEqual(rc, 0, out)
        launches = [x for x in out.splitlines() if "torch.distributed.run" in x]
        self.assertEqual(len(launches), 2)
        for k, line in zip(("torch", "adaload"), launches):
            self.assertIn("--nproc-per-node 2", line)
            self.assertIn("--kernel " + k, line)
            for c in R.CONFIGS:
                self.assertIn("--per-rank %s " % os.path.join(self.work, "plans", c + "-w2"), line)
        for c in R.CONFIGS:
            self.assertRegex(out, r"\n  %s +\d+ +\d+ " % c)
        self.assertIn("replay.py run --ranks 2", out)
        self.assertFalse(os.path.exists(self.res))

    def fake_launches(self, outcomes):
        """ddp.subprocess.run replaced by launches that mark each job of the command with the
        next outcome (done | oom | error) until one fails; returns the commands."""
        calls, it = [], iter(outcomes)

        def run(cmd, env=None):
            calls.append(cmd)
            self.assertEqual(D.multicast_problems(env), [])
            jobs = [cmd[i + 1] for i, x in enumerate(cmd) if x == "--per-rank"]
            for folder in jobs:
                d = os.path.join(self.work, "ddp", os.path.basename(folder) + "-torch")
                os.makedirs(d, exist_ok=True)
                open(os.path.join(d, "started"), "w").close()
                what = next(it)
                if what == "done":
                    open(os.path.join(d, "done"), "w").close()
                    continue
                with open(os.path.join(d, "failed-rank0.txt"), "w") as f:
                    f.write("OutOfMemoryError: x\n" if what == "oom" else "ImportError: no libadaload\n")
                return subprocess.CompletedProcess(cmd, 1)
            return subprocess.CompletedProcess(cmd, 0)
        return calls, run

    def test_relaunch_after_out_of_memory_not_after_other_errors(self):
        extra = ("--kernels", "torch", "--configs", "dual,verl-kk,eqtok-random")
        with contextlib.redirect_stdout(io.StringIO()):
            ddp.main(self.args(*extra))
            a = ddp.parse_args([x for x in self.args(*extra) if x != "--dry-run"] + ["--device", "cpu"])
            items = ddp.work_plan(a)
        orig = ddp.subprocess.run
        try:
            calls, ddp.subprocess.run = self.fake_launches(["oom", "done", "done"])
            with contextlib.redirect_stdout(io.StringIO()):
                nr = ddp.train_all(a, items, ddp.time.time())
            self.assertEqual(len(calls), 2)  # the rest ran in a second launch
            self.assertEqual(len([x for x in calls[1] if x == "--per-rank"]), 2)
            self.assertEqual(nr, [{"name": "dual-w2-torch", "reason": "failed: OutOfMemoryError: x"}])
            shutil.rmtree(os.path.join(self.work, "ddp"))
            calls, ddp.subprocess.run = self.fake_launches(["error"])
            with contextlib.redirect_stdout(io.StringIO()):
                nr = ddp.train_all(a, items, ddp.time.time())
            self.assertEqual(len(calls), 1)  # a systematic failure is not launched again
            self.assertEqual([n["reason"] for n in nr], ["failed: ImportError: no libadaload"] + [
                "failed: not run after dual-w2-torch failed: ImportError: no libadaload"] * 2)
        finally:
            ddp.subprocess.run = orig

    def test_run_folder_from_simulated_records(self):
        # The driver after training: job folders with records of a DDP that follows the plans
        # exactly (T = 0.3 s per all-reduce), one job failed, one skipped: the run folder.
        extra = ("--kernels", "torch", "--configs", "dual,verl-kk,eqtok-random")
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(ddp.main(self.args(*extra)), 0)
            a = ddp.parse_args([x for x in self.args(*extra) if x != "--dry-run"] +
                               ["--testbed", "fake", "--device", "cpu"])
            items = ddp.work_plan(a)
        for it, state in zip(items, ("done", "started", "skipped")):
            d = os.path.join(self.work, "ddp", "%s-w2-torch" % it["config"])
            os.makedirs(d)
            with open(os.path.join(d, state), "w") as f:
                f.write(json.dumps({"reason": "budget: test"}))
            if state == "done":
                recs = simulate(it["plan"], it["meas"], 0.3)
                warm = simulate(it["plan"], it["warm"], 0.3)
                for x in warm:
                    x["warmup"] = True
                for r in range(2):
                    with open(os.path.join(d, "steps-rank%d.jsonl" % r), "w") as f:
                        f.writelines(json.dumps(x) + "\n" for x in warm + recs if x["rank"] == r)
            if state == "started":
                with open(os.path.join(d, "failed-rank1.txt"), "w") as f:
                    f.write("OutOfMemoryError: x\n")
        with open(os.path.join(self.work, "ddp", "allreduce-alone.json"), "w") as f:
            json.dump({"seconds": 0.5, "bytes": 8, "world": 2, "backend": "nccl", "device": "x"}, f)
        not_run = []
        for it in items:
            st, why = ddp.job_state(a, "%s-w2-torch" % it["config"])
            if st != "done":
                not_run.append({"name": "%s-w2-torch" % it["config"], "reason": why})
        with contextlib.redirect_stdout(io.StringIO()):
            rc = ddp.write_run(a, items, not_run, None, None)
        self.assertEqual(rc, 1)  # a configuration failed
        (run,) = os.listdir(os.path.join(self.res, "fake", "e2e"))
        d = os.path.join(self.res, "fake", "e2e", run)
        doc = ddp.e2e_lib.load_json(os.path.join(d, "e2e.json"))
        self.assertEqual((doc["emulated"], doc["ranks"]), (False, [2]))
        self.assertEqual([n["reason"] for n in doc["not_run"]], ["failed: OutOfMemoryError: x", "budget: test"])
        (c,) = doc["configs"]
        self.assertEqual((c["name"], c["emulated"], c["ranks"]), ("dual-w2-torch", False, 2))
        self.assertAlmostEqual(c["measured"]["allreduce_exposed_s"], 0.3)
        self.assertAlmostEqual(c["measured"]["wait_fraction"], c["predicted"]["wait_fraction"])
        self.assertTrue(c["allreduce_aware"]["within_bar"])
        # with the all-reduce timed alone (0.5 s, more than the 0.3 s exposed): fewer samples/s
        pa = c["predicted_allreduce_alone"]
        self.assertAlmostEqual(pa["allreduce_s_given"], 0.5)
        groups = len(items[0]["meas"])
        self.assertAlmostEqual(1 / pa["samples_per_s"] - 1 / c["predicted"]["samples_per_s"],
                               0.2 * groups / c["measured"]["samples"])
        self.assertEqual(len(c["measured"]["groups"]), len(items[0]["meas"]))
        self.assertEqual(len(c["measured"]["groups"][0]["allreduce_s"]), 2)
        for f in ("report.md", "meta.json", "steps-dual-w2-torch.jsonl", "summary-verl-kk-w2.json"):
            self.assertTrue(os.path.exists(os.path.join(d, f)), f)
        chk = subprocess.run([ADALOAD, "results", "check", "--results", self.res], capture_output=True, text=True)
        self.assertEqual(chk.returncode, 0, chk.stdout + chk.stderr)


if __name__ == "__main__":
    unittest.main()
