#!/usr/bin/env bash
# call.sh -- one device call (2026-12-06, H200): the stream probe (probe.cu, built here with
# `nvcc -O3 -std=c++17 -arch=sm_90 -o kernels/experiments/2026-12-06-stream-probe/probe probe.cu`,
# carried), then main's build (.devbundle/adaload = kernel sources e3e078a6) through
# `ci/device_run.sh sweep` (issue 21's sweep with lnmod's chunk forward, never timed on an H200)
# and `ci/device_run.sh bench-res` (issue 22's bar), each into its own folder of $OUT.
set -uo pipefail
d=kernels/experiments/2026-12-06-stream-probe
o=${OUT:?}
"$d/probe" 21 >"$o/probe.txt" 2>&1; echo "probe rc=$?"; cat "$o/probe.txt"
mkdir -p "$o/sweep" "$o/res"
OUT=$o/sweep ci/device_run.sh sweep >"$o/sweep.log" 2>&1; echo "sweep rc=$?"; grep -E 'rc=|verdict|meet' "$o/sweep.log" | tail -8
OUT=$o/res ci/device_run.sh bench-res >"$o/res.log" 2>&1; echo "bench-res rc=$?"; grep -E 'rc=' "$o/res.log" | tail -6
tail -4 "$o/res/report-res.md" 2>/dev/null
