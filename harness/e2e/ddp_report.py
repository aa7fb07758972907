"""ddp_report.py -- the table of a two-GPU DDP e2e.json (ddp.py): per configuration the
measured against the predicted figures -- compute idle (the simulator's definition, as the
one-GPU replay), the wait fraction (the share of compute + all-reduce time spent waiting in
the all-reduce) and samples/s, predicted by the simulator given the measured all-reduce time
per step (allreduce_exposed_s) -- with the issue's bar (idle within +-0.05, samples/s within
+-10%), the same with each shape's measured compute (repredicted: what remains is not the
cost model's), the one-GPU replay of the same plan beside it (the all-reduce's share of the
time per sample, the compute ratio), per rank the compute, the wait and the peak memory; then
what did not run.

    import ddp_report
    print(ddp_report.render(json.load(open("results/.../e2e.json"))))
"""
import ddp_lib as D


def _f(v, fmt):
    return "--" if v is None else fmt % v


def verdict(c):
    """(within the bar, the explanation of a gap) for one configuration of a DDP e2e.json."""
    m, p, rp = c["measured"], c["predicted"], c.get("repredicted")
    if D.within(m, p):
        return True, ""
    if rp and D.within(m, rp):
        return False, "cost model: with the measured compute per shape the prediction is inside"
    if abs(p["wait_fraction"] - m["wait_fraction"]) > D.IDLE_BAR:
        return False, "wait: predicted %.4f, measured %.4f" % (p["wait_fraction"], m["wait_fraction"])
    return False, "samples/s: predicted / measured %.3f" % (p["samples_per_s"] / m["samples_per_s"])


def render(doc):
    info = doc.get("info", {})
    alone = info.get("allreduce_alone") or {}
    rows = ["# Two ranks with real DDP: predicted vs measured", "",
            "Device: %s; %s ranks, DDP (%s), all-reduce of the gradients alone %s s (%s bytes); "
            "one-GPU replay of the same plans: %s. Bar: idle within +-%.2f, samples/s within +-%d%% "
            "(the prediction given the measured all-reduce time per step)." % (
                alone.get("device", info.get("device")), "/".join(str(w) for w in doc.get("ranks", [])),
                alone.get("backend", "?"), _f(alone.get("seconds"), "%.4g"), alone.get("bytes", "?"),
                info.get("replay_run") or "none", D.IDLE_BAR, round(D.SPS_BAR * 100)), "",
            "| config | kernel | idle meas | idle pred | wait meas | wait pred | samples/s meas | pred "
            "| pred/meas | all-reduce exposed s | pred/meas (all-reduce alone) | optimizer s | rounds | bar "
            "| gap | replay samples/s | all-reduce share | compute DDP/replay |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in doc["configs"]:
        m, p = c["measured"], c["predicted"]
        vr = c.get("versus_replay") or {}
        ok, why = verdict(c)
        rounds = "%d" % m["allreduce_rounds_min"] if m["allreduce_rounds_min"] == m["allreduce_rounds_max"] \
            else "%d-%d" % (m["allreduce_rounds_min"], m["allreduce_rounds_max"])
        pa = c.get("predicted_allreduce_alone")
        rows.append("| %s | %s | %.4f | %.4f | %.4f | %.4f | %.4g | %.4g | %.3f | %.4g | %s | %.4g | %s | %s "
                    "| %s | %s | %s | %s |" % (
                        c.get("config", c["name"]), c["kernel"], m["idle_fraction"], p["idle_fraction"],
                        m["wait_fraction"], p["wait_fraction"], m["samples_per_s"], p["samples_per_s"],
                        p["samples_per_s"] / m["samples_per_s"] if m["samples_per_s"] else float("nan"),
                        m["allreduce_exposed_s"], _f(pa["samples_per_s"] / m["samples_per_s"]
                                                     if pa and m["samples_per_s"] else None, "%.3f"),
                        m["optimizer_s_mean"], rounds,
                        "yes" if ok else "**no**", why, _f(vr.get("replay_samples_per_s"), "%.4g"),
                        _f(vr.get("allreduce_share"), "%.3f"), _f(vr.get("compute_ratio"), "%.3f")))
    rows += ["", "Per rank (measured groups): compute s, all-reduce wait s, peak GiB:", "",
             "| config | kernel | " + " | ".join("rank %d" % r for r in range(max(doc.get("ranks") or [0]))) + " |",
             "|---|---|" + "---|" * max(doc.get("ranks") or [0])]
    for c in doc["configs"]:
        m = c["measured"]
        rows.append("| %s | %s | %s |" % (c.get("config", c["name"]), c["kernel"], " | ".join(
            "%.4g / %.4g / %.2f" % (cs, ws, pb / 2 ** 30) for cs, ws, pb in
            zip(m["rank_compute_s"], m["rank_allreduce_wait_s"], m["rank_peak_bytes"]))))
    if doc.get("not_run"):
        rows += ["", "Not run:", ""] + ["- %s: %s" % (n["name"], n["reason"]) for n in doc["not_run"]]
    return "\n".join(rows) + "\n"
