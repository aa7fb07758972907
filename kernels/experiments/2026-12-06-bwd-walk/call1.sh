#!/usr/bin/env bash
# call1.sh -- one device call: the backward walk probe (its binary carried: built here with
# `nvcc -O3 -std=c++17 -arch=sm_90 -o probe probe.cu`), then, on an H200 only, issue 22's bar
# run of main's build (ci/device_run.sh bench-res; the bar is the H200's -- on another card the
# landing's A/B already timed these shapes).
set -uo pipefail
d=kernels/experiments/2026-12-06-bwd-walk
o=${OUT:?}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
"$d/probe" 15 >"$o/bwd-probe.txt" 2>&1; echo "probe rc=$?"; cat "$o/bwd-probe.txt"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  mkdir -p "$o/res"
  OUT=$o/res ci/device_run.sh bench-res >"$o/res.log" 2>&1; echo "bench-res rc=$?"; grep -E 'rc=' "$o/res.log" | tail -6
  tail -14 "$o/res/report-res.md" 2>/dev/null
  mv "$o"/res/* "$o"/ 2>/dev/null; rmdir "$o/res" 2>/dev/null
fi
