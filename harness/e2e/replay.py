#!/usr/bin/env python3
"""replay.py -- issue 20's experiment on one GPU: the same manifest slice planned for W ranks
(W = 2 and 8) under each configuration -- the dual plan (adaload plan's default: dual +
sorted-window), the strongest public baselines (verl-kk, sort-by-length over equal-token
micro-batches at M_mem), equal-token + random (what bucket loaders do) and dual + random --,
every rank's micro-batches replayed in turn from the `adaload plan --per-rank` files, with
PyTorch's chain and with adaload's kernel, measured per rank and sync group against the
simulator's prediction for the same groups (replay_lib's docstring has the definitions).

  python3 harness/e2e/replay.py run [--ranks 2,8] [--configs dual,verl-kk,...]
        [--kernels torch,adaload] [--steps 8] [--warmup 1] [--window 8] [--budget-s 420]
        [--device cuda|cpu|stand-in] [--dry-run] [--reuse-work]
  python3 harness/e2e/replay.py report RUN_DIR        # the table of predicted vs measured
  python3 harness/e2e/replay.py compare RUN_A RUN_B   # step time of B against A, same plans
  python3 harness/e2e/replay.py run --kernels adaload --fused-residual ...   # issue 22's op

Steps: slice -> calibrate (train.py calibrate's code, in this process: profile.csv and
memory.json from the same GPU) -> the model file -> one `adaload plan --per-rank` per
configuration and W (equal-token at the dual plan's M_mem) -> the plan of work (per
configuration the groups replayed and the predicted seconds of replaying them) -> the
replays, in order, each only if the predicted time (x --slack) fits in what is left of
--budget-s (else recorded in not_run with the reason) -> op-bench at the replayed shapes
-> one run folder results/<testbed>/e2e/<run>/ through `adaload results new/publish`
(discarded on failure) with e2e.json and report.md.
--calibration-from RUN: an earlier replay run's profile.csv and memory.json (same model and
slice, checked) instead of calibrating again; recorded in e2e.json's info.
--dry-run: slice, fake calibration, the plans for real and the plan of work; nothing runs,
nothing is written to results/. --device stand-in: the whole run with replay_lib.StandIn
(a pure-Python device whose truth is the --fake-calibration model with --stand-in-jitter):
the CPU check of every step, numbers labelled "stand-in". --device cpu: PyTorch on the CPU
(a tiny model; functional only). --reuse-work: the slice, calibration, model file and plans
already in --work (an earlier run's, e.g. ddp.py's) replayed again, nothing re-planned.
--fused-residual (with --kernels adaload only; issue 22): the model runs its residual adds and
the norms after them as adaload.torch.lnmod_res (train.py --fused-residual); the replays are
named <config>-w<W>-adaload-res, e2e.json's info and each configuration say
"fused_residual": true, and op-bench is skipped (it times lnmod alone; no op share). The
step-time change is this run's compute_s against a run without it on the same plans (the same
--work with --reuse-work, or --calibration-from). Exit: 0 ok, 1 a configuration failed (out
of memory), 2 bad usage or input, 77 no PyTorch / no GPU for --device cuda.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import e2e_lib  # noqa: E402
import replay_lib as R  # noqa: E402
import replay_report  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", nargs="?", choices=("run", "report", "compare"), default="run")
    p.add_argument("run_dir", nargs="?", help="report: the run folder (compare: run A)")
    p.add_argument("run_b", nargs="?", help="compare: run B")
    p.add_argument("--manifest", default=os.path.join(ROOT, "datasets", "default.csv"))
    p.add_argument("--samples", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ranks", default="2,8", help="emulated data-parallel ranks, comma-separated")
    p.add_argument("--configs", default=",".join(R.CONFIGS))
    p.add_argument("--kernels", default="torch,adaload")
    p.add_argument("--steps", type=int, default=6, help="measured steps (whole sync groups)")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--first-step", type=int, default=0)
    p.add_argument("--window", type=int, default=8, help="the planner's --window")
    p.add_argument("--repeats", type=int, default=2, help="extra runs of the first groups (jitter)")
    p.add_argument("--repeat-groups", type=int, default=1)
    p.add_argument("--budget-s", type=float, default=420.0,
                   help="wall seconds for the whole run; a replay that would not fit is skipped")
    # On the H200 (2026-12-02, nine replays at W 2 and 8) a replay took 1.003-1.034x its
    # predicted seconds; 1.5 skipped replays that would have fit (a W=8 one estimated at 322 s
    # with 239 s left, ~220 s needed). A replay that outruns its estimate is cut at the
    # budget's deadline anyway (R.OverBudget), so the margin needs to cover the spread only.
    p.add_argument("--slack", type=float, default=1.15, help="predicted seconds x this = the estimate")
    p.add_argument("--width", type=int, default=1536)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--ffn", type=int, default=8960)
    p.add_argument("--text-len", type=int, default=512)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--points", type=int, default=4, help="calibration: token counts")
    p.add_argument("--max-tokens", type=int, default=200000,
                   help="calibration: the largest micro-batch measured (the plans stay inside)")
    p.add_argument("--cal-repeats", type=int, default=3)
    p.add_argument("--op-bench", type=int, default=1, help="1: time the op alone (0: skip)")
    p.add_argument("--fused-residual", action="store_true",
                   help="the model's residual adds + norms as adaload's fused op "
                        "(adaload.torch.lnmod_res); with --kernels adaload only")
    p.add_argument("--device", choices=("cuda", "cpu", "stand-in"), default="cuda")
    p.add_argument("--adaload", default=os.path.join(ROOT, "build", "adaload"))
    p.add_argument("--results", default=os.path.join(ROOT, "results"))
    p.add_argument("--testbed", default=None, help="default: adaload results testbed")
    p.add_argument("--work", default=os.path.join(ROOT, "build", "e2e-replay"))
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--reuse-work", action="store_true",
                   help="the slice, calibration, model file and plans already in --work (made by an "
                        "earlier run with the same --ranks and --configs): replay them again")
    p.add_argument("--calibration-from", metavar="RUN",
                   help="take profile.csv and memory.json from an earlier replay run folder of the "
                        "same model, slice and GPU instead of calibrating (saves its ~100 s on an "
                        "H200); the run's model and slice options must equal these")
    p.add_argument("--fake-calibration", default="3e-6,4e-12,0.004,0.02,1e9,170000,2e8",
                   help="dry run / stand-in: alpha,beta,gamma,t0,reserve_bytes,bytes_per_token,"
                        "bytes_per_sample")
    p.add_argument("--stand-in-jitter", type=float, default=0.02)
    p.add_argument("--stand-in-skew", type=float, default=0.0,
                   help="stand-in: its time grows by skew x S/1e5 beyond the fake model's")
    a = p.parse_args(argv)
    if a.mode == "report":
        if not a.run_dir:
            p.error("report needs RUN_DIR")
        return a
    if a.mode == "compare":
        if not (a.run_dir and a.run_b):
            p.error("compare needs RUN_A and RUN_B")
        return a
    try:
        a.rank_list = [int(x) for x in a.ranks.split(",") if x]
    except ValueError:
        p.error("--ranks: whole numbers, comma-separated")
    a.config_list = [c for c in a.configs.split(",") if c]
    a.kernel_list = [k for k in a.kernels.split(",") if k]
    bad = [c for c in a.config_list if c not in R.CONFIGS]
    if bad or not a.config_list:
        p.error("--configs: %s not among %s" % (",".join(bad) or "none", ",".join(R.CONFIGS)))
    if not a.kernel_list or any(k not in ("torch", "adaload") for k in a.kernel_list):
        p.error("--kernels: torch and/or adaload")
    if not a.rank_list or any(w < 1 for w in a.rank_list):
        p.error("--ranks: at least one, each >= 1")
    if a.device == "cpu" and "adaload" in a.kernel_list:
        p.error("--device cpu runs the PyTorch chain only: --kernels torch")
    if a.fused_residual and a.kernel_list != ["adaload"]:
        p.error("--fused-residual is adaload's fused op: it needs --kernels adaload (not %s)"
                % ",".join(a.kernel_list))
    if a.steps < 1 or a.warmup < 0 or a.window < 1 or a.repeats < 0 or a.budget_s <= 0:
        p.error("--steps >= 1, --warmup >= 0, --window >= 1, --repeats >= 0, --budget-s > 0")
    try:
        a.fake = [float(v) for v in a.fake_calibration.split(",")]
    except ValueError:
        a.fake = []
    if len(a.fake) != 7 or min(a.fake) < 0:
        p.error("--fake-calibration: 7 numbers >= 0")
    if a.calibration_from and (a.reuse_work or a.device == "stand-in"):
        p.error("--calibration-from: not with --reuse-work (it reuses the work's own) or the "
                "stand-in device (its truth is --fake-calibration)")
    return a


def ada(a, args):
    cmd = [a.adaload] + args
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("replay.py: step failed (exit %d): %s\n%s" % (r.returncode, " ".join(cmd),
                                                                       r.stderr.strip()))
    return r.stdout


def fake_calibration(a, buckets, cal):
    """profile.csv of the --fake-calibration model at the points calibrate would measure, and
    its memory.json: what the dry run and the stand-in plan with."""
    al, be, ga, t0, reserve, bpt, bps = a.fake
    pts = e2e_lib.calibration_points(buckets, a.points, a.max_tokens)
    params = e2e_lib.model_params(a.width, a.depth, a.ffn)
    e2e_lib.atomic_write(os.path.join(cal, "profile.csv"), lambda f: f.write(
        "batch,tokens,seconds,seconds_cv,peak_bytes\n" + "".join(
            "%d,%d,%.9g,%.6g,%d\n" % (B, S, t0 + B * (al * S + be * S * S + ga),
                                      max(a.stand_in_jitter, 1e-6), B * (bpt * S + bps))
            for B, S in pts)))
    return {"fixed_bytes": params * 16 + reserve, "bytes_per_token": bpt, "bytes_per_sample": bps,
            "device_bytes": 150109880320, "params": params, "fake": True}


def calibrate(a, summary_path, cal):
    """train.py calibrate's code in this process (one torch import for the whole run)."""
    import train
    ns = train.parse_args(["calibrate", "--summary", summary_path, "--out", cal, "--points",
                           str(a.points), "--max-tokens", str(a.max_tokens), "--repeats",
                           str(a.cal_repeats), "--device", a.device] + model_args(a))
    train.calibrate(ns)
    return e2e_lib.load_json(os.path.join(cal, "memory.json"))


def model_args(a):
    return ["--width", str(a.width), "--depth", str(a.depth), "--heads", str(a.heads),
            "--ffn", str(a.ffn), "--text-len", str(a.text_len), "--lr", str(a.lr)]


def make_plans(a, mfile, profile, gib):
    """One `adaload plan --per-rank` per (W, configuration); equal-token at the dual plan's
    M_mem. Returns [(W, name, policy, assign, summary path, per-rank folder)]."""
    out = []
    for w in a.rank_list:
        m_mem = None
        for name in ["dual"] + [c for c in a.config_list if c != "dual"]:
            policy, assign, at_m_mem = R.CONFIGS[name]
            base = os.path.join(a.work, "plans", "%s-w%d" % (name, w))
            s = base + ".summary.json"
            args = ["plan", "--manifest", os.path.join(a.work, "slice.csv"), "--model-file", mfile,
                    "--gpus", str(w), "--gpu-mem-gib", "%.6f" % gib, "--policy", policy,
                    "--assign", assign, "--window", str(a.window), "--seed", str(a.seed),
                    "--summary-json", s, "--per-rank", base]
            args += ["--tok-budget", str(m_mem)] if at_m_mem else []
            # The CPU check's timings are noise: its plans use the FLOP model (as experiment.py).
            args += ["--profile", profile] if a.device != "cpu" else ["--p", "1"]
            ada(a, args)
            if name == "dual":
                m_mem = e2e_lib.load_json(s)["m_mem_tokens"]
            if name in a.config_list:
                out.append((w, name, policy, assign, s, base))
    return out


def work_plan(a, plans):
    """The replays in run order, each with its schedule and predicted seconds; printed as
    the plan of work."""
    items = []
    # Every configuration with the first kernel (by --configs, then --ranks), then the dual
    # plan with the other kernels, then the rest: what a short budget cuts is the least needed.
    order = sorted(((k, p) for k in a.kernel_list for p in plans), key=lambda t: (
        t[0] != a.kernel_list[0] and t[1][1] != "dual", a.kernel_list.index(t[0]),
        a.config_list.index(t[1][1]), a.rank_list.index(t[1][0])))
    loaded = {}
    for kernel, (w, name, policy, assign, s, folder) in order:
        if folder not in loaded:
            plan = R.load_ranks(folder, w)
            warm, meas = R.schedule(plan, a.first_step, a.warmup, a.steps)
            if not meas:
                raise SystemExit("replay.py: %s at W=%d: no whole sync group in steps %d.. (the "
                                 "plan has %d steps)" % (name, w, a.first_step, len(plan.steps)))
            est = R.estimate_s(plan, warm) + R.estimate_s(plan, meas) + \
                R.estimate_s(plan, meas[:a.repeat_groups], a.repeats)
            loaded[folder] = plan, warm, meas, est
        plan, warm, meas, est = loaded[folder]
        label = kernel + ("-res" if a.fused_residual else "")
        items.append({"name": "%s-w%d-%s" % (name, w, label), "config": name, "ranks": w,
                      "kernel": kernel, "policy": policy, "assign": assign, "summary": s,
                      "folder": folder, "plan": plan, "warm": warm, "meas": meas,
                      "estimate_s": est * a.slack})
    print("plan of work (predicted seconds x %.2g slack; budget %.0f s):" % (a.slack, a.budget_s))
    print("  %-28s %4s %6s %7s %9s %9s %9s" % ("replay", "W", "groups", "mbatch", "pred idle",
                                                "est s", "cum s"))
    cum = 0.0
    for it in items:
        pred = R.predicted(it["plan"], it["meas"])
        cum += it["estimate_s"]
        nmb = sum(1 for g in it["warm"] + it["meas"] for k in g for _, _, ids in it["plan"].steps[k] if ids)
        print("  %-28s %4d %6d %7d %9.4f %9.1f %9.1f" % (it["name"], it["ranks"], len(it["meas"]),
                                                        nmb, pred["idle_fraction"], it["estimate_s"], cum))
    print("  total estimate %.1f s of %.0f s%s" % (cum, a.budget_s, "" if cum <= a.budget_s else
                                                  ": the last replays will be skipped"))
    return items


def executor(a, kernel):
    if a.device == "stand-in":
        al, be, ga, t0, reserve, bpt, bps = a.fake
        fixed = e2e_lib.model_params(a.width, a.depth, a.ffn) * 16 + reserve
        return R.StandIn(al, be, ga, fixed, bpt, bps, t0, a.stand_in_jitter, a.stand_in_skew)
    import replay_torch
    return replay_torch.TorchExecutor(argparse.Namespace(seed=a.seed, **{
        k: getattr(a, k) for k in ("width", "depth", "heads", "ffn", "text_len", "lr",
                                   "fused_residual")}), kernel, a.device)


OP_RESERVE_S = 30.0  # kept from the replays' budget for op-bench


def run_replays(a, items, t_start, device_bytes):
    """Runs the items under the budget (less OP_RESERVE_S with --op-bench); returns (configs
    for e2e.json, not_run, records, the last executor)."""
    configs, not_run, records, ex, ex_kernel = [], [], {}, None, None
    budget = a.budget_s - (OP_RESERVE_S if a.op_bench and not a.fused_residual and
                           a.device != "stand-in" else 0.0)
    for it in items:
        left = budget - (time.time() - t_start)
        if it["estimate_s"] > left:
            not_run.append({"name": it["name"], "reason": "budget: estimated %.1f s, %.1f s left"
                            % (it["estimate_s"], left)})
            continue
        summary = e2e_lib.load_json(it["summary"])
        t0 = time.time()
        try:
            if ex_kernel != it["kernel"]:
                ex = ex_kernel = None
                ex, ex_kernel = executor(a, it["kernel"]), it["kernel"]
            if hasattr(ex, "reset"):
                ex.reset()
            recs, opt_s = R.replay(ex, it["plan"], summary["buckets"], it["warm"], it["meas"],
                                   a.repeats, a.repeat_groups, a.seed, t_start + budget)
        except R.OverBudget as e:
            not_run.append({"name": it["name"], "reason": "budget: %s" % e})
            continue
        except R.OutOfMemory as e:
            not_run.append({"name": it["name"], "reason": "failed: out of memory: %s" % e})
            print("replay.py: %s: out of memory: %s" % (it["name"], e), file=sys.stderr)
            continue
        except Exception as e:  # e.g. adaload's kernel library missing: the others still run
            not_run.append({"name": it["name"], "reason": "failed: %s: %s" % (type(e).__name__, e)})
            print("replay.py: %s: %s: %s" % (it["name"], type(e).__name__, e), file=sys.stderr)
            continue
        wall = time.time() - t0
        dev_b = device_bytes or ex.total_bytes()
        meas = R.measured(recs, it["ranks"], dev_b, opt_s)
        meas["wall_s"] = wall
        pred = R.predicted(it["plan"], it["meas"], summary)
        configs.append({"name": it["name"], "config": it["config"], "policy": it["policy"],
                        "assign": it["assign"], "kernel": it["kernel"], "ranks": it["ranks"],
                        "fused_residual": a.fused_residual,
                        "emulated": True, "measured": meas, "predicted": pred,
                        "jitter_predicted": R.jitter_predicted(it["plan"], it["meas"], meas["jitter_cv"]),
                        "memory": R.memory_check(recs, summary),
                        "explanation": R.explain(it["plan"], it["meas"], recs),
                        "estimate_s": it["estimate_s"], "plan_id": it["plan"].plan_id})
        records[it["name"]] = recs
        print("replay.py: %s: %.1f s (estimated %.1f): idle %.4f (predicted %.4f), samples/s %.4g "
              "(predicted %.4g)" % (it["name"], wall, it["estimate_s"], meas["idle_fraction"],
                                    pred["idle_fraction"], meas["samples_per_s"], pred["samples_per_s"]),
              flush=True)
    return configs, not_run, records, ex


def op_table(a, ex, records, t_start):
    """The op alone at every replayed shape (a torch executor only, and time left)."""
    # Not with --fused-residual: op-bench times lnmod alone, which the fused model calls once.
    if not a.op_bench or a.fused_residual or not hasattr(ex, "op_bench") or \
            a.budget_s - (time.time() - t_start) < OP_RESERVE_S / 2:
        return None
    shapes = sorted({(x["samples"], x["tokens"] // x["samples"]) for recs in records.values()
                     for x in recs if x["samples"]})
    try:
        return ex.op_bench(shapes, 3)
    except Exception as e:  # the table is optional; the replays are already measured
        print("replay.py: op-bench: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return None


def prepare(a, cal):
    """Slice, calibration (fake in a dry run or on the stand-in), model file, plans: (the
    calibration's memory.json, make_plans's list)."""
    for sub in ("calibration", "plans"):
        os.makedirs(os.path.join(a.work, sub), exist_ok=True)
    e2e_lib.slice_manifest(a.manifest, os.path.join(a.work, "slice.csv"), a.samples, a.seed)
    bsum = os.path.join(a.work, "buckets.json")
    ada(a, ["plan", "--manifest", os.path.join(a.work, "slice.csv"), "--model", "wan2.1-1.3b",
            "--gpus", str(max(a.rank_list)), "--summary-json", bsum, "--no-baselines"])
    buckets = [b for b in e2e_lib.load_json(bsum)["buckets"] if not b.get("dropped")]
    fake = (a.dry_run or a.device == "stand-in") and not a.calibration_from
    if a.calibration_from:
        mem = calibration_from(a, cal)
    else:
        mem = fake_calibration(a, buckets, cal) if fake else calibrate(a, bsum, cal)
    if fake:  # what --reuse-work reads back (calibrate writes its own)
        e2e_lib.atomic_write(os.path.join(cal, "memory.json"),
                             lambda f: f.write(json.dumps(mem, indent=2) + "\n"))
    mfile = os.path.join(a.work, "e2e-model.json")
    doc = e2e_lib.model_file_doc("e2e-dit-%dx%d" % (a.width, a.depth), a.width, a.depth, a.heads,
                                 a.ffn, a.text_len, mem["fixed_bytes"], mem["bytes_per_token"],
                                 mem["params"], "--fake-calibration" if fake else "memory.json")
    e2e_lib.atomic_write(mfile, lambda f: f.write(json.dumps(doc, indent=2) + "\n"))
    gib = mem["device_bytes"] / 2 ** 30 if mem["device_bytes"] > 0 else 139.8
    return mem, make_plans(a, mfile, os.path.join(cal, "profile.csv"), gib)


# What a reused calibration must share with this run: the model and the slice it measured.
CALIBRATION_KEYS = ("width", "depth", "heads", "ffn", "text_len", "samples", "manifest", "seed")


def calibration_from(a, cal):
    """profile.csv and memory.json of the run folder --calibration-from into cal, after checking
    that its e2e.json measured this model on this slice (ValueError naming the first key that
    differs); returns memory.json's content."""
    run = a.calibration_from
    info = e2e_lib.load_json(os.path.join(run, "e2e.json"))["info"]
    mine = {"width": a.width, "depth": a.depth, "heads": a.heads, "ffn": a.ffn,
            "text_len": a.text_len, "samples": a.samples,
            "manifest": os.path.basename(a.manifest), "seed": a.seed}
    for k in CALIBRATION_KEYS:
        if info.get(k) != mine[k]:
            raise ValueError("--calibration-from %s: its %s is %r, this run's %r (a calibration "
                             "measures one model on one slice)" % (run, k, info.get(k), mine[k]))
    mem = e2e_lib.load_json(os.path.join(run, "memory.json"))
    profile = e2e_lib.read_text(os.path.join(run, "profile.csv"))
    e2e_lib.atomic_write(os.path.join(cal, "profile.csv"), lambda f: f.write(profile))
    e2e_lib.atomic_write(os.path.join(cal, "memory.json"),
                         lambda f: f.write(json.dumps(mem, indent=2) + "\n"))
    return mem


def reuse_work(a):
    """prepare()'s results read back from --work: the calibration's memory.json and, per W of
    --ranks and configuration of --configs, its plan folder (ValueError when one is missing)."""
    mem = e2e_lib.load_json(os.path.join(a.work, "calibration", "memory.json"))
    plans = []
    for w in a.rank_list:
        for name in a.config_list:
            policy, assign, _ = R.CONFIGS[name]
            base = os.path.join(a.work, "plans", "%s-w%d" % (name, w))
            if not os.path.exists(os.path.join(base, "rank%d.jsonl" % (w - 1))) or \
                    not os.path.exists(base + ".summary.json"):
                raise ValueError("--reuse-work: %s has no plan %s-w%d (run without --reuse-work "
                                 "first)" % (a.work, name, w))
            plans.append((w, name, policy, assign, base + ".summary.json", base))
    return mem, plans


def main(argv=None):
    a = parse_args(argv)
    if a.mode == "report":
        try:
            sys.stdout.write(replay_report.render(e2e_lib.load_json(os.path.join(a.run_dir, "e2e.json"))))
        except (OSError, ValueError, KeyError) as e:
            print("replay.py report: %s: %s" % (a.run_dir, e), file=sys.stderr)
            return 2
        return 0
    if a.mode == "compare":
        try:
            sys.stdout.write(replay_report.compare(
                *(e2e_lib.load_json(os.path.join(r, "e2e.json")) for r in (a.run_dir, a.run_b))))
        except (OSError, ValueError, KeyError) as e:
            print("replay.py compare: %s" % e, file=sys.stderr)
            return 2
        return 0
    t_start = time.time()
    if a.device in ("cuda", "cpu") and not a.dry_run:
        try:
            import torch
        except ImportError:
            print("replay.py: PyTorch is not installed here (--device stand-in runs without it)",
                  file=sys.stderr)
            return 77
        if a.device == "cuda" and not torch.cuda.is_available():
            print("replay.py: no CUDA device here", file=sys.stderr)
            return 77
    cal = os.path.join(a.work, "calibration")
    try:
        mem, plans = reuse_work(a) if a.reuse_work else prepare(a, cal)
    except (OSError, ValueError) as e:
        print("replay.py: %s" % e, file=sys.stderr)
        return 2
    items = work_plan(a, plans)
    if a.dry_run:
        print("replay.py: dry run: plans in %s; nothing replayed, nothing written to %s"
              % (a.work, a.results))
        return 0
    configs, not_run, records, ex = run_replays(a, items, t_start, mem["device_bytes"])
    op = op_table(a, ex, records, t_start)
    for c in configs:
        # op-bench times lnmod alone: no share for the fused model (its op is lnmod_res).
        c["measured"].update(R.op_share(records[c["name"]], None if a.fused_residual else op,
                                        2 * a.depth + 1, c["kernel"]))
    return write_run(a, configs, not_run, records, mem, op, ex, cal)


def write_run(a, configs, not_run, records, mem, op, ex, cal):
    info = {"ranks": a.rank_list, "emulated": True, "device": a.device, "samples": a.samples,
            "manifest": os.path.basename(a.manifest), "seed": a.seed, "steps": a.steps,
            "warmup": a.warmup, "window": a.window, "repeats": a.repeats,
            "repeat_groups": a.repeat_groups, "budget_s": a.budget_s, "width": a.width,
            "depth": a.depth, "heads": a.heads, "ffn": a.ffn, "text_len": a.text_len,
            "device_name": ex.device_name() if hasattr(ex, "device_name") else a.device,
            "command_line": " ".join(shlex.quote(x) for x in sys.argv),
            "calibration_from": a.calibration_from, "fused_residual": a.fused_residual}
    doc = e2e_lib.e2e_document(configs, info) if configs else {"schema": e2e_lib.SCHEMA,
                                                               "info": info, "configs": []}
    doc.update(emulated=True, ranks=a.rank_list, not_run=not_run)
    files = {"e2e.json": doc, "memory.json": mem, "report.md": replay_report.render(doc),
             "profile.csv": e2e_lib.read_text(os.path.join(cal, "profile.csv")),
             "e2e-model.json": e2e_lib.load_json(os.path.join(a.work, "e2e-model.json"))}
    if op:
        files["op.json"] = {"D": a.width, "shapes": [dict(batch=b, tokens=s, **v)
                                                     for (b, s), v in sorted(op.items())]}
    for name, recs in records.items():
        files["steps-%s.jsonl" % name] = "".join(json.dumps(r) + "\n" for r in recs)
    for w in a.rank_list:
        for c in a.config_list:
            p = os.path.join(a.work, "plans", "%s-w%d.summary.json" % (c, w))
            files["summary-%s-w%d.json" % (c, w)] = e2e_lib.load_json(p)
    testbed = a.testbed or ("cpu-e2e-check" if a.device != "cuda" else
                            ada(a, ["results", "testbed"]).strip())
    try:
        d = e2e_lib.new_run_folder(a.adaload, a.results, testbed, files, info["command_line"])
    except ValueError as e:
        print("replay.py: %s" % e, file=sys.stderr)
        return 2
    print(files["report.md"])
    print("replay.py: wrote and indexed %s" % d)
    return 1 if any(n["reason"].startswith("failed") for n in not_run) else 0


if __name__ == "__main__":
    sys.exit(main())
