#!/usr/bin/env bash
# explore.sh -- on the GPU machine (2026-12-05, the lag path's mbarrier): device.sh's round, then
# Nsight Compute of v2's tile kernel at one lag-path width (D 3072: C = 1, the mbarrier) and one
# cluster width (D 10240: C = 2, the cluster barrier): the first tile_kernel launch of the shape
# (v2's checked launch; matched by its mangled name: `tile_kernel` alone also matches v1's
# dtile_kernel, which is what the first round profiled), with the warp-state and source-counter sections (where the warps stall).
# Writes $OUT/table.md, $OUT/fwdv2.log (device.sh) and $OUT/ncu-D*.txt. Exit: device.sh's.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${OUT:-/tmp/fwdv2-out}
mkdir -p "$out"
FV2_BUDGET_S=${FV2_BUDGET_S:-150} "$here/device.sh"
rc=$?
command -v ncu >/dev/null || { echo "explore.sh: no ncu here"; exit "$rc"; }
bin=$(mktemp /tmp/fv2bench.XXXXXX)
xz -dc "$root/build-fwdv2/fv2bench.xz" >"$bin" && chmod +x "$bin"
for D in 3072 10240; do
  timeout 120 ncu --clock-control none --kernel-name-base mangled --kernel-name regex:3fv211tile_kernel --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SchedulerStats --section SourceCounters \
    "$bin" --shape "bf16-f32-bf16 sample D$D r32760" --reps 9 >"$out/ncu-D$D.txt" 2>&1
  echo "ncu D$D rc=$? ($(wc -l <"$out/ncu-D$D.txt") lines)"
done
rm -f "$bin"
exit "$rc"
