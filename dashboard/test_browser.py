#!/usr/bin/env python3
"""test_browser.py -- `adaload dashboard` in a real browser (CTest: dashboard_browser).

    python3 dashboard/test_browser.py --adaload build/adaload --results results --work DIR

Builds two sites -- one from the committed results/, one from a synthetic history (the
nightly's layout wan, sweep, wan, sweep on one testbed, dtile 800 -> 1040 us in the second
wan run, naive steady; a planner run with a plan summary; and on a second testbed an A/A
pair of two GPU leases, same kernel sources, naive 8% apart) -- loads each
in headless Chromium from file:// and checks in the DOM that the page ran to its end
(<html data-ready="1">), recorded no error (data-errors="0", and Chromium logged no console
message), drew every chart (each figure.chart has data-rendered="1" and at least one mark),
references nothing outside its folder, and, for the synthetic one, flagged the planted
regression (a table row and a ring on the chart, for dtile only, against the previous run of
the same set) and marked the A/A pair's shift as environment drift (a drift row and amber
squares, no regression). Screenshots of both go to
DIR (dashboard-committed.png, dashboard-synthetic.png). Only the standard library is used.
Exit 0 passed, 1 a check failed, 77 no Chromium here (ci/setup.sh installs it).
"""
import argparse
import html.parser
import json
import os
import shutil
import subprocess
import sys

PLANTED = "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760"
STEADY = "lnmod_fwd/naive/bf16-f32-bf16/sample/D1536/rows32760"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


class Dom(html.parser.HTMLParser):
    """The elements the checks need: their tag and attributes, in document order."""

    def __init__(self):
        super().__init__()
        self.elements = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def all(self, tag=None, cls=None):
        out = []
        for t, a in self.elements:
            if tag and t != tag:
                continue
            if cls and cls not in a.get("class", "").split():
                continue
            out.append(a)
        return out


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browser(exe, url, extra, timeout=120):
    args = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0",
            "--virtual-time-budget=15000"] + extra + [url]
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"))
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def reps(name, us, n=9, **counters):
    return [dict({"name": name, "run_name": name, "run_type": "iteration", "repetitions": n, "repetition_index": k,
                  "iterations": 1, "real_time": us * (1 + 0.001 * (k - n // 2)), "time_unit": "us"}, **counters)
            for k in range(n)]


def bench_run(root, testbed, run, set_name, shapes, uuid="GPU-1", kernels="ab" * 32):
    """One bench run folder: shapes = {name: us}, 9 repetitions each, a copy of 201 MB."""
    d = os.path.join(root, testbed, "bench", run)
    sha = run.split("_")[1] * 6
    write(os.path.join(d, "meta.json"), json.dumps(
        {"git_sha": sha[:40], "git_dirty": False, "kernel_hash_v1": kernels, "kernel_hash_v2": kernels,
         "testbed": testbed, "command_line": "adaload bench --set " + set_name,
         "fingerprint": {"gpu": "NVIDIA H200", "gpu_uuid": uuid, "driver": "550.54.15"}}))
    bench = reps("copy/bytes201289728", 50.0, bytes_per_second=4.0e12)
    for name, us in shapes.items():
        bench += reps(name, us, pct_copy_bw=100.0 * 50.0 / us)
    write(os.path.join(d, "bench.json"), json.dumps({"context": {"adaload_set": set_name}, "benchmarks": bench}))


BAD_RUN = "synth-gpu/bench/2026-01-04T000000Z_ddddddd"


def data_js_of(site):
    with open(os.path.join(site, "data.js")) as f:
        return f.read()


def synthetic(root):
    """The nightly's layout on testbed synth-gpu -- wan, sweep, wan with one shape 800 -> 1040
    us, sweep -- plus a planner run and a verification record; and on synth-aa an A/A pair:
    byte-identical kernel sources on two GPU leases (other UUIDs), naive 8% and dtile 1% apart."""
    def sweep_shapes(frac_dtile):
        out = {}
        for D in (256, 512, 4096):
            for v, frac in (("naive", 0.4), ("dtile", frac_dtile)):
                out["lnmod_fwd/%s/bf16-f32-bf16/sample/D%d/rows32760" % (v, D)] = D / 100.0 / frac
        return out
    bench_run(root, "synth-gpu", "2026-01-01T000000Z_aaaaaaa", "wan", {PLANTED: 800.0, STEADY: 1100.0})
    bench_run(root, "synth-gpu", "2026-01-01T010000Z_aaaaaaa", "sweep", sweep_shapes(0.9))
    bench_run(root, "synth-gpu", "2026-01-02T000000Z_ccccccc", "wan", {PLANTED: 1040.0, STEADY: 1101.0},
              kernels="cd" * 32)
    bench_run(root, "synth-gpu", "2026-01-02T010000Z_ccccccc", "sweep", sweep_shapes(0.9), kernels="cd" * 32)
    bench_run(root, "synth-aa", "2026-01-05T000000Z_eeeeeee", "wan", {PLANTED: 57.0, STEADY: 66.1}, uuid="GPU-1111")
    bench_run(root, "synth-aa", "2026-01-06T000000Z_eeeeeee", "wan", {PLANTED: 57.6, STEADY: 71.4}, uuid="GPU-2222")
    d = os.path.join(root, "synth-gpu", "planner", "2026-01-03T010000Z_ccccccc")
    write(os.path.join(d, "meta.json"), json.dumps({"git_sha": "c" * 40, "git_dirty": False,
                                                   "kernel_source_hash": "ab" * 32, "command_line": "p"}))
    bench = [{"name": "cpu/planner/%s/samples100000" % pol, "run_name": "cpu/planner/%s/samples100000" % pol,
              "run_type": "iteration", "repetition_index": k, "real_time": 14000.0 + k, "time_unit": "us",
              "seconds_per_10M": 1.4, "bytes_per_sample": 33.8} for pol in ("equal-token", "dual") for k in range(3)]
    write(os.path.join(d, "bench.json"), json.dumps({"context": {"adaload_set": "wan"}, "benchmarks": bench}))
    write(os.path.join(d, "plan-dual.json"), json.dumps({"policy": "dual", "assign": "random", "model": "wan2.1-14b",
        "gpus": 16, "metrics": {"epoch_idle_fraction": 0.338, "vram_util_mean": 0.846, "samples_per_s": 0.274}}))
    # One bad run folder (a truncated bench.json) must not take the site down (issue 17).
    d = os.path.join(root, "synth-gpu", "bench", BAD_RUN.split("/")[-1])
    write(os.path.join(d, "meta.json"), json.dumps({"git_sha": "d" * 40, "git_dirty": False,
                                                   "kernel_source_hash": "ab" * 32, "command_line": "b"}))
    write(os.path.join(d, "bench.json"), '{"context": {"adaload_set": "wan"}, "benchmarks": [{"name": "lnm')
    d = os.path.join(root, "synth-gpu", "verify", "2026-01-01T000000Z_aaaaaaa")
    write(os.path.join(d, "meta.json"), json.dumps({"git_sha": "a" * 40, "git_dirty": False,
                                                   "kernel_source_hash": "ab" * 32, "command_line": "v"}))
    write(os.path.join(d, "verify.json"), json.dumps({
        "schema": "adaload.verify/1", "kernel_source_hash": "ab" * 32, "backend": "cuda", "grid": "full",
        "cases": [{"pass": True}], "summary": {"cases": 1, "passed": 1}, "all_passed": True,
        "sanitizers": {t: "clean" for t in ("memcheck", "racecheck", "initcheck", "synccheck")}}))


def check_site(exe, site, shot, what):
    url = "file://" + os.path.abspath(os.path.join(site, "index.html"))
    rc, dom_text, err = browser(exe, url, ["--dump-dom"])
    if rc != 0 or "<html" not in dom_text:
        fail("%s: chromium --dump-dom exited %d\n%s" % (what, rc, err[-2000:]))
    console = [l for l in err.splitlines() if ":CONSOLE(" in l or "Uncaught" in l]
    if console:
        fail("%s: the page logged to the console:\n%s" % (what, "\n".join(console[:10])))
    dom = Dom()
    dom.feed(dom_text)
    root = dom.all("html")[0]
    if root.get("data-ready") != "1":
        fail("%s: app.js did not run to its end (no data-ready)" % what)
    if root.get("data-errors") != "0":
        fail("%s: the page recorded %s error(s)" % (what, root.get("data-errors")))
    charts = dom.all("figure", "chart")
    if not charts or len(charts) != int(root.get("data-charts", "-1")):
        fail("%s: %d charts in the DOM, the page counted %s" % (what, len(charts), root.get("data-charts")))
    for c in charts:
        if c.get("data-rendered") != "1" or int(c.get("data-points", "0")) < 1:
            fail("%s: chart %s was not drawn (%s)" % (what, c.get("data-chart"), c))
    if len(dom.all("details", "table-view")) < len(charts):
        fail("%s: a chart without its table view" % what)
    for t, a in dom.elements:
        for k in ("src", "href"):
            v = a.get(k, "")
            if "://" in v or v.startswith("//"):
                fail("%s: <%s %s=%s> reaches outside the site folder" % (what, t, k, v))
    rc, _, err = browser(exe, url, ["--screenshot=" + shot, "--window-size=1400,2600", "--hide-scrollbars"])
    with open(shot, "rb") as f:
        head = f.read(8)
    if rc != 0 or head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(shot) < 10000:
        fail("%s: no screenshot (%d)\n%s" % (what, rc, err[-1000:]))
    print("ok: %s: %d charts drawn, no console message, screenshot %s" % (what, len(charts), shot))
    return dom


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--adaload", required=True)
    ap.add_argument("--results", required=True, help="the committed results/ folder")
    ap.add_argument("--work", required=True, help="scratch folder; the screenshots stay here")
    a = ap.parse_args()
    exe = chromium()
    if not exe:
        print("skipped: no chromium here (ci/setup.sh installs Debian's chromium)")
        return 77
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)

    site = os.path.join(a.work, "committed-site")
    subprocess.run([a.adaload, "dashboard", "--results", a.results, "--out", site], check=True,
                   stdout=subprocess.DEVNULL)
    dom = check_site(exe, site, os.path.join(a.work, "dashboard-committed.png"), "committed results")
    beds = [x.get("data-testbed") for x in dom.all("section", "testbed")]
    if "nvidia-h200" not in beds:
        fail("committed results: no nvidia-h200 section (%s)" % beds)
    history = [c for c in dom.all("figure", "chart") if c.get("data-chart", "").startswith("history-")]
    if len(history) < 10:
        fail("committed results: only %d history charts" % len(history))
    if not [r for r in dom.all("tr", "verify-status") if r.get("data-gate") == "1"]:
        fail("committed results: no verification record shown as passing the gate for this tree")

    synth = os.path.join(a.work, "synthetic", "results")
    synthetic(synth)
    site = os.path.join(a.work, "synthetic-site")
    subprocess.run([a.adaload, "dashboard", "--results", synth, "--out", site], check=True,
                   stdout=subprocess.DEVNULL)
    dom = check_site(exe, site, os.path.join(a.work, "dashboard-synthetic.png"), "synthetic history")
    rows = dom.all("tr", "regression")
    flagged = sorted(set(r.get("data-name") for r in rows if r.get("data-name")))
    if flagged != [PLANTED]:
        fail("synthetic history: flagged %s, want only %s" % (flagged, PLANTED))
    if [r for r in rows if r.get("data-name") and r.get("data-run") != "2026-01-02T000000Z_ccccccc"]:
        fail("synthetic history: the regression is flagged on the wrong run (the wan run, against the previous wan run)")
    rings = [x.get("data-name") for x in dom.all("circle", "regression-point")]
    if PLANTED not in rings or STEADY in rings:
        fail("synthetic history: the chart rings %s, want %s" % (rings, PLANTED))
    drift = dom.all("tr", "drift")
    if sorted((r.get("data-name"), r.get("data-run")) for r in drift) != [(STEADY, "2026-01-06T000000Z_eeeeeee")]:
        fail("synthetic history: the A/A pair's drift rows are %s, want naive's on the second lease"
             % [(r.get("data-name"), r.get("data-run")) for r in drift])
    squares = [x.get("data-name") for x in dom.all("rect", "drift-point")]
    if squares != [STEADY, STEADY]:
        fail("synthetic history: the drift marks are %s, want naive's (time and %% of copy charts)" % squares)
    planner = [c for c in dom.all("figure", "chart") if c.get("data-chart", "").startswith("planner-speed/")]
    if len(planner) != 1 or int(planner[0].get("data-points", "0")) != 2:
        fail("synthetic history: the planner's speed chart is missing or incomplete (%s)" % planner)
    sweep = [c for c in dom.all("figure", "chart") if c.get("data-chart", "").startswith("sweep/")]
    if len(sweep) != 1 or int(sweep[0].get("data-points", "0")) != 6:
        fail("synthetic history: the sweep chart is missing or incomplete (%s)" % sweep)
    bad = [x for x in dom.all("section", "bad-runs")]
    if len(bad) != 1 or BAD_RUN not in data_js_of(site):
        fail("synthetic history: the bad run %s is not shown as a bad run" % BAD_RUN)
    with open(os.path.join(site, "data.js")) as f:
        if os.path.abspath(synth) in f.read():
            fail("synthetic history: data.js publishes the results folder's absolute path")
    if not dom.all("table", "plans"):
        fail("synthetic history: no table of the plans' simulated metrics")
    print("ok: synthetic history: the planted regression (%s) is flagged in the table and on its chart; "
          "the A/A pair is drift" % PLANTED)
    return 0


if __name__ == "__main__":
    sys.exit(main())
