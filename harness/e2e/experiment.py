#!/usr/bin/env python3
"""experiment.py -- the end-to-end experiment of issue 14: the same manifest slice trained
on N GPUs (default 2) under three plans, each with the PyTorch chain and with adaload's
kernel, measured, and set beside the planner simulator's prediction for the same plan on a
calibrated profile. Writes one run folder results/<testbed>/e2e/<UTC>_<sha7>/ and adds it to
results/index.jsonl (`adaload results add`).

  python3 harness/e2e/experiment.py [--gpus 2] [--samples 2000] [--steps 40] [--warmup 3]
         [--width 1536 --depth 4 ...] [--configs a-torch,b-adaload,...] [--dry-run]

Steps (each a separate program, so a failure names its step):
  1. slice:      a seeded --samples subset of --manifest (datasets/default.csv)
  2. calibrate:  train.py calibrate on one GPU: seconds and peak memory of micro-batches at
                 several batch sizes (1, 2, 4, ... up to each bucket's planned batch) and
                 token counts spread over the slice's buckets -> profile.csv (with peak_bytes:
                 the plans' memory model and its measured range), memory.json
  3. model file: the planner's model JSON of the trained DiT, memory model from step 2
  4. plans:      adaload plan --gpus N --profile profile.csv --model-file ... for
                 (a) equal-token + random, (b) dual + random, (c) dual + --cost-aware
  5. train:      torchrun train.py train, six times: plans (a)-(c) x kernel torch | adaload
  6. op-bench:   train.py op-bench: the op alone at the trained micro-batch shapes
  7. e2e.json:   measured (e2e_lib.measured over the non-warm-up steps) and predicted
                 (e2e_lib.predicted over exactly the same steps of the plan) per config
--dry-run does 1, 3 (with --fake-calibration numbers) and 4 for real, prints the commands of
2, 5 and 6, and writes nothing into results/ (needs neither PyTorch nor a GPU).
--device cpu runs every step on the CPU (train.py's functional check: gloo, fp32, host
timers, the PyTorch chain only, so only the -torch configurations; plans from the FLOP model,
not the calibration); for testing the harness, never for results (the run folder then says
"device": "cpu").
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import e2e_lib  # noqa: E402

NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}
PLANS = {"a": ("equal-token", "random"), "b": ("dual", "random"), "c": ("dual", None)}
KERNELS = ("torch", "adaload")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--manifest", default=os.path.join(ROOT, "datasets", "default.csv"))
    p.add_argument("--samples", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gpus", type=int, default=2)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--first-step", type=int, default=0)
    p.add_argument("--width", type=int, default=1536)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--ffn", type=int, default=8960)
    p.add_argument("--text-len", type=int, default=512)
    p.add_argument("--cost-aware", default="sorted-window",
                   help="the --assign name of the planner's cost-aware assignment for plan c "
                        "(default sorted-window, planner v2; lpt and kk are the others)")
    p.add_argument("--configs", default=",".join("%s-%s" % (k, n) for k in PLANS for n in KERNELS))
    p.add_argument("--adaload", default=os.path.join(ROOT, "build", "adaload"))
    p.add_argument("--results", default=os.path.join(ROOT, "results"))
    p.add_argument("--testbed", default=None, help="default: nvidia-h200-x<gpus>")
    p.add_argument("--work", default=None, help="scratch folder (default: build/e2e-work)")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--window", type=int, default=None,
                   help="the planner's --window (steps per window of sorted-window, lpt, kk)")
    p.add_argument("--p", default=None, help="the planner's --p (default auto; 1 with --device "
                   "cpu, whose noisy timings can make the fitted exponent meaningless)")
    p.add_argument("--fake-calibration", default="1e-5,4e-9,0.05,2e10,3e5",
                   help="dry run: alpha,beta,gamma,fixed_bytes,bytes_per_token")
    a = p.parse_args(argv)
    a.config_list = [c for c in a.configs.split(",") if c]
    for c in a.config_list:
        k, _, n = c.partition("-")
        if k not in PLANS or n not in KERNELS:
            p.error("--configs: %r is not <a|b|c>-<torch|adaload>" % c)
    if a.device == "cpu" and any(c.endswith("-adaload") for c in a.config_list):
        p.error("--device cpu runs the PyTorch chain only: give --configs of *-torch")
    a.p = a.p or ("1" if a.device == "cpu" else None)
    a.testbed = a.testbed or ("nvidia-h200-x%d" % a.gpus if a.device == "cuda" else "cpu-e2e-check")
    a.work = a.work or os.path.join(ROOT, "build", "e2e-work")
    return a


def model_args(a):
    return ["--width", str(a.width), "--depth", str(a.depth), "--heads", str(a.heads),
            "--ffn", str(a.ffn), "--text-len", str(a.text_len), "--device", a.device]


def run(cmd, a, env=None, what=""):
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    if a.dry_run and what != "cpu":
        return
    e = dict(os.environ, **NO_MULTICAST)
    e["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), e.get("PYTHONPATH", "")])
    e.update(env or {})
    r = subprocess.run(cmd, env=e)
    if r.returncode != 0:
        raise SystemExit("experiment.py: step failed (exit %d): %s" % (r.returncode, " ".join(cmd)))


def plan_cmd(a, policy, assign, model_file, profile, gpu_mem_gib, summary, plan):
    return [a.adaload, "plan", "--manifest", os.path.join(a.work, "slice.csv"), "--model-file",
            model_file, "--gpus", str(a.gpus), "--gpu-mem-gib", "%.6f" % gpu_mem_gib,
            "--policy", policy, "--assign", assign, "--seed", str(a.seed),
            "--summary-json", summary, "--plan-out", plan] + (["--p", a.p] if a.p else []) + (
            ["--window", str(a.window)] if a.window else []) + (
            # The CPU check's timings are noise (a quadratic fit to them can go negative):
            # its plans use the FLOP model; the calibration still runs and is kept.
            ["--profile", profile] if a.device == "cuda" else [])


def calibration(a, cal_dir):
    """memory.json of step 2, or the --fake-calibration numbers in a dry run."""
    if not a.dry_run:
        return json.load(open(os.path.join(cal_dir, "memory.json")))
    al, be, ga, fixed, bpt = (float(v) for v in a.fake_calibration.split(","))
    pts = [1560, 3600, 14040, 32760, 75600]
    e2e_lib.atomic_write(os.path.join(cal_dir, "profile.csv"), lambda f: f.write(
        "tokens,seconds\n" + "".join("%d,%.9g\n" % (s, al * s + be * s * s + ga) for s in pts)))
    return {"fixed_bytes": fixed, "bytes_per_token": bpt, "device_bytes": 150109880320,
            "params": e2e_lib.model_params(a.width, a.depth, a.ffn), "fake": True}


def records(path, world):
    recs = []
    for r in range(world):
        with open(os.path.join(path, "steps-rank%d.jsonl" % r)) as f:
            recs += [json.loads(x) for x in f]
    return recs


def op_share(op, steps, win, buckets, calls, meas, kernel):
    """The op's time per step (alone, at the same micro-batch shapes, x calls per forward,
    forward twice under checkpointing) over the mean step's compute."""
    if any(kernel not in s for s in op["shapes"]):
        return {"op_s_per_step": None, "op_share_of_compute": None}
    t = {(s["batch"], s["tokens"]): s[kernel] for s in op["shapes"]}
    per_rank = []
    for k in win:
        for b, _, ids in steps[k]:
            if ids:
                x = t[(len(ids), buckets[b]["tokens"])]
                per_rank.append(calls * (2 * x["fwd_s"] + x["bwd_s"]))
            else:
                per_rank.append(0.0)
    mean_op = sum(per_rank) / len(per_rank)
    return {"op_s_per_step": mean_op, "op_share_of_compute": mean_op / meas["compute_s_mean"]
            if meas["compute_s_mean"] else None}


def main(argv=None):
    a = parse_args(argv)
    os.makedirs(a.work, exist_ok=True)
    py = sys.executable
    train = os.path.join(HERE, "train.py")
    e2e_lib.slice_manifest(a.manifest, os.path.join(a.work, "slice.csv"), a.samples, a.seed)
    # A first plan only for the slice's buckets (calibration points); FLOP model, no files kept.
    seed_summary = os.path.join(a.work, "buckets.json")
    run([a.adaload, "plan", "--manifest", os.path.join(a.work, "slice.csv"), "--model",
         "wan2.1-1.3b", "--gpus", str(a.gpus), "--summary-json", seed_summary], a, what="cpu")
    cal = os.path.join(a.work, "calibration")
    os.makedirs(cal, exist_ok=True)
    # On the CPU (a functional check: its numbers mean nothing) the sweep stops at 4,096 tokens a
    # micro-batch: the seed plan's GPU-sized batches (thousands of samples of a tiny model) took
    # the CPU check past its test's 10 minutes.
    cpu_cap = ["--max-tokens", "4096"] if a.device == "cpu" else []
    run([py, train, "calibrate", "--summary", seed_summary, "--out", cal] + model_args(a) + cpu_cap, a)
    mem = calibration(a, cal)
    mfile = os.path.join(a.work, "e2e-model.json")
    doc = e2e_lib.model_file_doc("e2e-dit-%dx%d" % (a.width, a.depth), a.width, a.depth, a.heads,
                                 a.ffn, a.text_len, mem["fixed_bytes"], mem["bytes_per_token"],
                                 mem["params"], "measured by train.py calibrate (memory.json)"
                                 if not mem.get("fake") else "dry run: --fake-calibration")
    e2e_lib.atomic_write(mfile, lambda f: f.write(json.dumps(doc, indent=2) + "\n"))
    # The planner's capacity: the device's memory (a nominal 141 GiB for the CPU check).
    gib = mem["device_bytes"] / 2 ** 30 if mem["device_bytes"] > 0 else 141.0
    plans = {}
    for key in sorted({c.split("-")[0] for c in a.config_list}):
        policy, assign = PLANS[key]
        assign = assign or a.cost_aware
        s, p = (os.path.join(a.work, "%s.%s" % (key, x)) for x in ("summary.json", "plan.jsonl"))
        run(plan_cmd(a, policy, assign, mfile, os.path.join(cal, "profile.csv"), gib, s, p), a,
            what="cpu")
        plans[key] = (policy, assign, s, p)
    configs = []
    for c in a.config_list:
        key, _, kernel = c.partition("-")
        policy, assign, s, p = plans[key]
        out = os.path.join(a.work, "run-" + c)
        run([py, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(a.gpus),
             train, "train",
             "--plan", p, "--summary", s, "--kernel", kernel, "--out", out, "--first-step",
             str(a.first_step), "--steps", str(a.steps), "--warmup", str(a.warmup)]
            + model_args(a), a)
        configs.append((c, key, kernel, policy, assign, s, p, out))
    plan_args = [x for key in sorted(plans) for x in ("--plan", plans[key][3])]
    # The plans share one manifest and model file, hence one bucket list.
    any_summary = plans[sorted(plans)[0]][2]
    run([py, train, "op-bench"] + plan_args + ["--summary", any_summary, "--world-size",
         str(a.gpus), "--out", a.work, "--first-step", str(a.first_step), "--steps",
         str(a.steps), "--warmup", str(a.warmup)] + model_args(a), a)
    if a.dry_run:
        print("experiment.py: dry run: plans in %s; nothing trained, nothing written to %s"
              % (a.work, a.results))
        return 0
    write_run(a, configs, mem)
    return 0


def write_run(a, configs, mem):
    op = json.load(open(os.path.join(a.work, "op.json")))
    out, files = [], {}
    for name, key, kernel, policy, assign, s, p, run_dir in configs:
        summary = json.load(open(s))
        steps, sync = e2e_lib.read_plan(p, a.gpus), e2e_lib.read_sync(p)
        recs = [r for r in records(run_dir, a.gpus) if not r["warmup"]]
        meas = e2e_lib.measured(recs, a.gpus, mem["device_bytes"])
        first = min(r["step"] for r in recs)
        pred = e2e_lib.predicted(steps, first, meas["steps"], summary, sync)
        win = e2e_lib.step_window(len(steps), first, meas["steps"])
        meas.update(op_share(op, steps, win, summary["buckets"], 2 * a.depth + 1, meas, kernel))
        out.append({"name": name, "policy": policy, "assign": assign, "kernel": kernel,
                    "measured": meas, "predicted": pred, "first_step": first})
        files["steps-%s.jsonl" % name] = "".join(json.dumps(r) + "\n" for r in records(run_dir, a.gpus))
        files["summary-%s.json" % key] = summary
    files["memory.json"] = mem
    files["op.json"] = op
    files["profile.csv"] = open(os.path.join(a.work, "calibration", "profile.csv")).read()
    files["e2e-model.json"] = json.load(open(os.path.join(a.work, "e2e-model.json")))
    info = {"gpus": a.gpus, "samples": a.samples, "manifest": os.path.basename(a.manifest),
            "seed": a.seed, "steps": a.steps, "warmup": a.warmup, "width": a.width,
            "depth": a.depth, "heads": a.heads, "ffn": a.ffn, "text_len": a.text_len,
            "device": a.device, "command_line": " ".join(shlex.quote(x) for x in sys.argv)}
    files["e2e.json"] = e2e_lib.e2e_document(out, info)
    # The run folder (meta.json with git facts, both kernel hashes and the machine) is made,
    # published and indexed by the adaload command's runs library.
    try:
        d = e2e_lib.new_run_folder(a.adaload, a.results, a.testbed, files, info["command_line"])
    except ValueError as e:
        raise SystemExit("experiment.py: %s" % e)
    print("experiment.py: wrote and indexed %s" % d)


if __name__ == "__main__":
    sys.exit(main())
