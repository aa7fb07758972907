#!/usr/bin/env bash
# call2.sh -- the probe again with its two scheduling variants (res4 persist ticket / blocked),
# built here as before and carried; on an H200 also main's bench-res (issue 22's bar, another
# sample of torch.compile beside the 2026-12-05 run).
set -uo pipefail
d=kernels/experiments/2026-12-06-stream-probe
o=${OUT:?}
"$d/probe" 21 >"$o/probe.txt" 2>&1; echo "probe rc=$?"; cat "$o/probe.txt"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  mkdir -p "$o/res"
  OUT=$o/res ci/device_run.sh bench-res >"$o/res.log" 2>&1; echo "bench-res rc=$?"; grep -E 'rc=' "$o/res.log" | tail -6
  tail -4 "$o/res/report-res.md" 2>/dev/null
fi
