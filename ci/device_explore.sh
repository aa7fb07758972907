#!/usr/bin/env bash
# ci/device_explore.sh -- kernel experiments on a GPU machine (exploration, not the gate):
# (Experiment builds may travel xz-compressed, .devbundle/adaload-<tag>.xz, to stay inside
# the device tool's 64 MiB.)
#   1. each experiment build .devbundle/adaload-<tag> (EXTRA_BUILDS of ci/device_bundle.sh)
#      checks dtile on the quick verification grid (printed, no record; EXPLORE_VERIFY=0 skips
#      it, for a second call of the same builds);
#      EXPLORE_TAGS="base tag ..." times only those builds (default: base and every carried one);
#   2. A/B timing: the normal build and every experiment build on the benchmarks that
#      EXPLORE_FILTER selects (default: dtile at the speed bar's shapes) in the shape set
#      EXPLORE_SET (default wan; sweep: every multiple of 128 to D8192, bf16 per sample, 32,760
#      rows), two rounds in the order a b c .. a b c .., so drift between builds shows as a
#      difference between rounds;
#      the run folders go to $OUT/explore.tgz (exp-<round>-<tag>/);
#   3. Nsight Compute (clocks left alone) on one launch of each "build:kernel:benchmark" in
#      EXPLORE_NCU (speed of light, memory, scheduler, warp stalls, occupancy) into
#      $OUT/ncu.txt.
# Then, here: tar xzf explore.tgz; .devbundle/adaload compare exp-1-base exp-1-<tag>. To
# keep it: unpack into results/<testbed>/explore/<UTC time>/ (beside explore.log, ncu.txt)
# and `adaload results add` that folder (results/index.jsonl).
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
set=${EXPLORE_SET:-wan}
filter=${EXPLORE_FILTER:-'^lnmod_fwd/dtile/(bf16-f32-bf16/sample/D(1536|3072|5120)|f32-f32-f32/sample/D1536)/rows(32760|75600)$'}
# (ci/device_env.sh has unpacked every carried .devbundle/<program>.xz already.)
tags=(base)
for b in .devbundle/adaload-*; do
  case $b in *.xz|'.devbundle/adaload-*') continue ;; esac
  t=${b#.devbundle/adaload-}
  [ "$t" = slow ] || tags+=("$t")
done
if [ -n "${EXPLORE_TAGS:-}" ]; then
  read -r -a want <<<"$EXPLORE_TAGS"
  for t in "${want[@]}"; do
    [ "$t" = base ] || [ -e ".devbundle/adaload-$t" ] || { echo "EXPLORE_TAGS: no build .devbundle/adaload-$t" >&2; exit 2; }
  done
  tags=("${want[@]}")
fi
bin() { if [ "$1" = base ]; then echo .devbundle/adaload; else echo ".devbundle/adaload-$1"; fi; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
for t in "${tags[@]}"; do
  [ "$t" = base ] || [ "${EXPLORE_VERIFY:-1}" = 0 ] && continue
  log "verify quick dtile: $t"
  "$(bin "$t")" verify --grid quick --variant dtile --no-record | tail -3; echo "verify $t rc=${PIPESTATUS[0]}"
done
exp=$(mktemp -d)
for round in 1 2; do
  for t in "${tags[@]}"; do
    log "bench round $round: $t"
    "$(bin "$t")" bench --set "$set" --filter "$filter" --out "$exp/exp-$round-$t" >/dev/null 2>"$exp/exp-$round-$t.err"
    echo "bench $t rc=$?"
  done
done
for t in "${tags[@]}"; do
  [ "$t" = base ] && continue
  log "compare base -> $t (round 1, round 2)"
  .devbundle/adaload compare "$exp/exp-1-base" "$exp/exp-1-$t" | tail -n +1
  .devbundle/adaload compare "$exp/exp-2-base" "$exp/exp-2-$t" | tail -n +1
done
tar -C "$exp" -czf "$out/explore.tgz" .
: >"$out/ncu.txt"
IFS=' ' read -r -a profiles <<<"${EXPLORE_NCU:-}"
for spec in "${profiles[@]}"; do
  IFS=: read -r t kern bname <<<"$spec"
  log "ncu $t $kern $bname" | tee -a "$out/ncu.txt"
  ncu --clock-control none -k "regex:$kern" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats \
    --section WarpStateStats --section Occupancy --section LaunchStats \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_op_read.sum \
    "$(bin "$t")" bench --set "$set" --filter "^$bname\$" --repetitions 1 --out "$(mktemp -u)" \
    >>"$out/ncu.txt" 2>&1
  echo "ncu rc=$?" | tee -a "$out/ncu.txt"
done
log done
