#!/usr/bin/env python3
"""ddp.py -- issue 23's experiment on two GPUs: the plans of the one-GPU experiment (replay.py:
dual, verl-kk, sort-by-length, equal-token + random, dual + random) at W = 2, trained with
real DistributedDataParallel on the two GPUs (train.py train: each rank its own per-rank file,
no_sync between the plan's syncs, NCCL with NVLink multicast off), and the same plans replayed
on one GPU beside it (replay.py), so the all-reduce's share is a measured difference; the
simulator's prediction given the measured all-reduce time per step (ddp_lib's docstring).

  python3 harness/e2e/ddp.py run [--configs dual,verl-kk,...] [--kernels torch,adaload]
        [--steps 6] [--warmup 1] [--window 8] [--budget-s 540] [--replay-budget-s 200]
        [--device cuda|cpu] [--reuse-work] [--dry-run]
  python3 harness/e2e/ddp.py report RUN_DIR          # the table of a DDP run folder

Steps: replay.py run --ranks 2 (slice, calibration on GPU 0, `adaload plan --per-rank` per
configuration into WORK/plans/<config>-w2/, the replays within --replay-budget-s, its own run
folder; --reuse-work: replay.py --reuse-work, the plans and calibration already in WORK) ->
the plan of work (per configuration its groups and predicted seconds) -> one `torchrun
--nproc-per-node 2 train.py train --per-rank ...` per kernel with every configuration that
fits in what is left of --budget-s (the launcher's environment has the multicast-off
variables; a configuration that fails ends its launch: the rest run in a new one) -> one run
folder results/<testbed>/e2e/<run>/ (testbed: the GPU's name and -x2, e.g. nvidia-h200-x2, for
both the replay's run folder and this one) through `adaload results new/publish` with e2e.json
(emulated: false, ranks [2], per configuration the measured per rank and group figures, the
prediction, the comparison with the replay) and report.md.
--dry-run: replay.py --dry-run (the plans for real, fake calibration) and this plan of work
with the torchrun commands; nothing trained, nothing written to results/. --device cpu: gloo on
two CPU processes, a tiny model (functional only; testbed cpu-e2e-check).
Exit: 0 ok, 1 a configuration failed, 2 bad usage or input, 77 fewer than 2 GPUs (or no
PyTorch) here.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import ddp_lib as D  # noqa: E402
import ddp_report  # noqa: E402
import e2e_lib  # noqa: E402
import replay_lib as R  # noqa: E402

W = 2  # ranks: the two GPUs of the machine
SETUP_S = 60.0  # a launch: torch import, process group, model, the all-reduce timed alone


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", nargs="?", choices=("run", "report"), default="run")
    p.add_argument("run_dir", nargs="?", help="report: the run folder")
    p.add_argument("--configs", default=",".join(R.CONFIGS))
    p.add_argument("--kernels", default="torch,adaload")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--window", type=int, default=8)
    p.add_argument("--budget-s", type=float, default=540.0, help="wall seconds for everything")
    p.add_argument("--replay-budget-s", type=float, default=200.0,
                   help="replay.py's --budget-s (calibration and the one-GPU replays)")
    p.add_argument("--slack", type=float, default=1.5)
    p.add_argument("--reuse-work", action="store_true",
                   help="replay.py --reuse-work: the plans and calibration already in --work")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--adaload", default=os.path.join(ROOT, "build", "adaload"))
    p.add_argument("--results", default=os.path.join(ROOT, "results"))
    p.add_argument("--testbed", default=None)
    p.add_argument("--work", default=os.path.join(ROOT, "build", "e2e-ddp"))
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--bucket-mb", type=float, default=25.0, help="DDP's bucket_cap_mb")
    # passed to replay.py as they are (the model, the slice, the calibration)
    for k, v in (("--manifest", None), ("--samples", None), ("--seed", "0"), ("--width", "1536"),
                 ("--depth", "4"), ("--heads", "12"), ("--ffn", "8960"), ("--text-len", "512"),
                 ("--lr", "1e-4"), ("--points", None), ("--max-tokens", None)):
        p.add_argument(k, default=v)
    a = p.parse_args(argv)
    if a.mode == "report":
        if not a.run_dir:
            p.error("report needs RUN_DIR")
        return a
    a.config_list = [c for c in a.configs.split(",") if c]
    a.kernel_list = [k for k in a.kernels.split(",") if k]
    bad = [c for c in a.config_list if c not in R.CONFIGS]
    if bad or not a.config_list:
        p.error("--configs: %s not among %s" % (",".join(bad) or "none", ",".join(R.CONFIGS)))
    if not a.kernel_list or any(k not in ("torch", "adaload") for k in a.kernel_list):
        p.error("--kernels: torch and/or adaload")
    if a.device == "cpu" and "adaload" in a.kernel_list:
        p.error("--device cpu runs the PyTorch chain only: --kernels torch")
    if a.steps < 1 or a.warmup < 0 or a.window < 1 or a.budget_s <= 0 or a.replay_budget_s <= 0:
        p.error("--steps >= 1, --warmup >= 0, --window >= 1, budgets > 0")
    return a


MODEL_KEYS = ("width", "depth", "heads", "ffn", "text_len", "lr")


def model_args(a):
    return [x for k in MODEL_KEYS for x in ("--" + k.replace("_", "-"), str(getattr(a, k)))]


def replay_cmd(a):
    cmd = [sys.executable, os.path.join(HERE, "replay.py"), "run", "--ranks", str(W),
           "--configs", ",".join(a.config_list), "--kernels", ",".join(a.kernel_list),
           "--steps", str(a.steps), "--warmup", str(a.warmup), "--window", str(a.window),
           "--budget-s", str(a.replay_budget_s), "--device", a.device, "--adaload", a.adaload,
           "--results", a.results, "--work", a.work] + model_args(a)
    for k in ("manifest", "samples", "seed", "points", "max_tokens", "testbed"):
        if getattr(a, k) is not None:
            cmd += ["--" + k.replace("_", "-"), str(getattr(a, k))]
    return cmd + (["--dry-run"] if a.dry_run else []) + (["--reuse-work"] if a.reuse_work else [])


def work_plan(a):
    """Per configuration: its per-rank folder, the plan of all ranks, the measured groups and
    the predicted seconds of training them (warm-up included) x --slack."""
    items = []
    for c in a.config_list:
        folder = os.path.join(a.work, "plans", "%s-w%d" % (c, W))
        plan = R.load_ranks(folder, W)
        warm, meas = R.schedule(plan, 0, a.warmup, a.steps)
        if not meas:
            raise ValueError("%s: no whole sync group in the plan's %d steps" % (folder, len(plan.steps)))
        t = sum(max(sum(plan.steps[k][r][1] for k in g) for r in range(W)) for g in warm + meas)
        items.append({"config": c, "folder": folder, "plan": plan, "warm": warm, "meas": meas,
                      "estimate_s": t * a.slack, "summary": folder + ".summary.json"})
    print("DDP plan of work (W=%d, predicted seconds x %.2g slack, per kernel):" % (W, a.slack))
    print("  %-16s %6s %7s %9s %9s" % ("config", "groups", "mbatch", "pred idle", "est s"))
    for it in items:
        nmb = sum(1 for g in it["warm"] + it["meas"] for k in g for _, _, ids in it["plan"].steps[k] if ids)
        print("  %-16s %6d %7d %9.4f %9.1f" % (it["config"], len(it["meas"]), nmb,
                                              R.predicted(it["plan"], it["meas"])["idle_fraction"],
                                              it["estimate_s"]))
    return items


def launch_cmd(a, kernel, items, deadline):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
           str(W), os.path.join(HERE, "train.py"), "train", "--kernel", kernel, "--out",
           os.path.join(a.work, "ddp"), "--warmup", str(a.warmup), "--steps", str(a.steps),
           "--device", a.device, "--bucket-mb", str(a.bucket_mb), "--seed", str(a.seed),
           "--deadline", "%.0f" % deadline] + model_args(a)
    for it in items:
        cmd += ["--per-rank", it["folder"], "--estimate-s", "%.1f" % it["estimate_s"]]
    return cmd


def job_state(a, name):
    """(state, reason) of a job's folder: done | skipped | failed | pending."""
    d = os.path.join(a.work, "ddp", name)
    if os.path.exists(os.path.join(d, "done")):
        return "done", ""
    if os.path.exists(os.path.join(d, "skipped")):
        return "skipped", e2e_lib.load_json(os.path.join(d, "skipped"))["reason"]
    if os.path.exists(os.path.join(d, "started")):
        why = [e2e_lib.read_text(os.path.join(d, f)).strip() for f in sorted(os.listdir(d))
               if f.startswith("failed-rank")]
        return "failed", "failed: " + ("; ".join(why) or "the launch ended")
    return "pending", ""


def train_all(a, items, t_start):
    """Launches per kernel until every configuration is done, skipped or failed."""
    env = dict(os.environ, **D.NO_MULTICAST)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), env.get("PYTHONPATH", "")])
    deadline = t_start + a.budget_s - 20.0  # the run folder is written after the last job
    not_run = []
    for kernel in a.kernel_list:
        left = list(items)
        while left:
            if time.time() + SETUP_S > deadline:
                not_run += [{"name": "%s-w%d-%s" % (it["config"], W, kernel), "reason": "budget: "
                             "no time left for a launch"} for it in left]
                break
            cmd = launch_cmd(a, kernel, left, deadline)
            print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
            rc = subprocess.run(cmd, env=env).returncode
            pending, systematic = [], None
            for it in left:
                name = "%s-w%d-%s" % (it["config"], W, kernel)
                st, why = job_state(a, name)
                if st in ("skipped", "failed"):
                    not_run.append({"name": name, "reason": why})
                    if st == "failed" and "OutOfMemory" not in why:
                        systematic = "%s %s" % (name, why)
                elif st == "pending":
                    pending.append(it)
            # Out of memory is the configuration's; anything else (a missing library, a bad
            # file) would fail every later launch the same way.
            if rc != 0 and (systematic or len(pending) == len(left)):
                why = systematic or "the launch exited %d before this job" % rc
                not_run += [{"name": "%s-w%d-%s" % (it["config"], W, kernel),
                             "reason": "failed: not run after %s" % why} for it in pending]
                break
            left = pending
    return not_run


def records(a, name):
    recs = []
    for r in range(W):
        with open(os.path.join(a.work, "ddp", name, "steps-rank%d.jsonl" % r)) as f:
            recs += [json.loads(x) for x in f]
    return recs


def replay_doc(out_text):
    """The replay run's folder and e2e.json from replay.py's output (None: it wrote none)."""
    m = re.findall(r"^replay\.py: wrote and indexed (.+)$", out_text, re.M)
    if not m:
        return None, None
    return m[-1], e2e_lib.load_json(os.path.join(m[-1], "e2e.json"))


def config_doc(a, it, kernel, replay, alone=None):
    name = "%s-w%d-%s" % (it["config"], W, kernel)
    recs = records(a, name)
    summary = e2e_lib.load_json(it["summary"])
    mem_p = os.path.join(a.work, "calibration", "memory.json")
    dev_b = e2e_lib.load_json(mem_p).get("device_bytes", 0) if os.path.exists(mem_p) else 0
    m = D.measured(recs, W, dev_b if a.device == "cuda" else 0)
    want = [k + it["plan"].first_step for g in it["meas"] for k in g]
    got = [k for g in m["groups"] for k in g["steps"]]
    if want != got:
        raise ValueError("%s: the ranks trained steps %s, the plan's groups are %s" % (name, got, want))
    t_ar, t_opt = m["allreduce_exposed_s"], m["optimizer_s_mean"]
    p = D.predicted(it["plan"], it["meas"], t_ar, t_opt, summary)
    rp = D.repredicted(it["plan"], it["meas"], recs, t_ar, t_opt)
    # the same with the all-reduce timed alone (no overlap with the backward, no wait)
    pa = D.predicted(it["plan"], it["meas"], alone["seconds"], t_opt) if alone else None
    rcfg = next((c for c in (replay or {}).get("configs", []) if c["name"] == name), None)
    policy, assign, _ = R.CONFIGS[it["config"]]
    return {"name": name, "config": it["config"], "policy": policy, "assign": assign,
            "kernel": kernel, "ranks": W, "emulated": False, "plan_id": it["plan"].plan_id,
            "estimate_s": it["estimate_s"], "measured": m, "predicted": p, "repredicted": rp,
            "predicted_allreduce_alone": pa,
            "allreduce_aware": {"wait_fraction_diff": p["wait_fraction"] - m["wait_fraction"],
                                "samples_per_s_ratio": p["samples_per_s"] / m["samples_per_s"]
                                if m["samples_per_s"] else None,
                                "within_bar": D.within(m, p), "repredicted_within_bar": D.within(m, rp)},
            "versus_replay": D.versus_replay(m, rcfg)}, recs


def testbed(a):
    """Both run folders (the replay's and DDP's) go under one testbed: the GPU's name with the
    machine's GPU count (nvidia-h200-x2); cpu-e2e-check for the CPU check."""
    if a.device != "cuda":
        return "cpu-e2e-check"
    r = subprocess.run([a.adaload, "results", "testbed"], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise ValueError("adaload results testbed: %s" % (r.stderr or r.stdout).strip())
    return "%s-x%d" % (r.stdout.strip(), W)


def main(argv=None):
    a = parse_args(argv)
    if a.mode == "report":
        try:
            sys.stdout.write(ddp_report.render(e2e_lib.load_json(os.path.join(a.run_dir, "e2e.json"))))
        except (OSError, ValueError, KeyError) as e:
            print("ddp.py report: %s: %s" % (a.run_dir, e), file=sys.stderr)
            return 2
        return 0
    t_start = time.time()
    bad = D.multicast_problems(dict(os.environ, **D.NO_MULTICAST))
    assert not bad, bad  # the launcher's environment below always carries them
    if not a.dry_run:
        try:
            import torch
        except ImportError:
            print("ddp.py: PyTorch is not installed here", file=sys.stderr)
            return 77
        if a.device == "cuda" and torch.cuda.device_count() < W:
            print("ddp.py: %d CUDA device(s) visible here; the experiment needs %d (the "
                  "nvidia-h200-x2 kind)" % (torch.cuda.device_count(), W), file=sys.stderr)
            return 77
    if not a.dry_run and a.testbed is None:
        try:
            a.testbed = testbed(a)
        except ValueError as e:
            print("ddp.py: %s" % e, file=sys.stderr)
            return 2
    cmd = replay_cmd(a)
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in p.stdout:  # the device log shows the replay as it goes
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    rc = p.wait()
    if rc not in (0, 1):
        print("ddp.py: replay.py exited %d: no plans to train" % rc, file=sys.stderr)
        return rc
    try:
        items = work_plan(a)
    except (OSError, ValueError) as e:
        print("ddp.py: %s" % e, file=sys.stderr)
        return 2
    if a.dry_run:
        for k in a.kernel_list:
            print("+ " + " ".join(shlex.quote(c) for c in launch_cmd(a, k, items, t_start + a.budget_s)))
        print("ddp.py: dry run: plans in %s; nothing trained, nothing written to %s" % (a.work, a.results))
        return 0
    replay_run, replay = replay_doc("".join(lines))
    not_run = train_all(a, items, t_start)
    return write_run(a, items, not_run, replay_run, replay)


def write_run(a, items, not_run, replay_run, replay):
    configs, files = [], {}
    alone_p = os.path.join(a.work, "ddp", "allreduce-alone.json")
    alone = e2e_lib.load_json(alone_p) if os.path.exists(alone_p) else None
    for kernel in a.kernel_list:
        for it in items:
            name = "%s-w%d-%s" % (it["config"], W, kernel)
            if job_state(a, name)[0] != "done":
                continue
            try:
                c, recs = config_doc(a, it, kernel, replay, alone)
            except (OSError, ValueError, KeyError) as e:
                not_run.append({"name": name, "reason": "failed: its records: %s" % e})
                continue
            configs.append(c)
            files["steps-%s.jsonl" % name] = "".join(json.dumps(x) + "\n" for x in recs)
    info = {"ranks": [W], "emulated": False, "device": a.device, "steps": a.steps, "warmup": a.warmup,
            "window": a.window, "budget_s": a.budget_s, "bucket_mb": a.bucket_mb,
            "replay_run": os.path.relpath(replay_run, a.results) if replay_run else None,
            "allreduce_alone": alone, "multicast_off": D.NO_MULTICAST,
            "command_line": " ".join(shlex.quote(x) for x in sys.argv)}
    info.update({k: getattr(a, k) for k in MODEL_KEYS})
    doc = e2e_lib.e2e_document(configs, info) if configs else {"schema": e2e_lib.SCHEMA,
                                                               "info": info, "configs": []}
    doc.update(emulated=False, ranks=[W], not_run=not_run)
    files.update({"e2e.json": doc, "report.md": ddp_report.render(doc)})
    for it in items:
        files["summary-%s-w%d.json" % (it["config"], W)] = e2e_lib.load_json(it["summary"])
    for f in ("profile.csv", "memory.json"):
        p = os.path.join(a.work, "calibration", f)
        if os.path.exists(p):
            files[f] = e2e_lib.read_text(p)
    try:
        d = e2e_lib.new_run_folder(a.adaload, a.results, a.testbed or testbed(a), files,
                                   info["command_line"])
    except ValueError as e:
        print("ddp.py: %s" % e, file=sys.stderr)
        return 2
    print(files["report.md"])
    print("ddp.py: wrote and indexed %s" % d)
    return 1 if any(n["reason"].startswith("failed") for n in not_run) else 0


if __name__ == "__main__":
    sys.exit(main())
