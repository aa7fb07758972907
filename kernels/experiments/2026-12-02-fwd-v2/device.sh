#!/usr/bin/env bash
# device.sh [--dry-run] -- on the GPU machine: v1 (dtile, row_per_warp) against v2 (the rule
# and its three alternatives; since the chunk class landed, v2 runs round 5's flat chunk kernel
# where it is eligible and v2c the odd kernel there, the class it replaced); README.md beside this.
# Round 5's call: FV2_ORDER=odd3 (the odd widths 777, 1537, 3001, 5119, 16383 and 1536, 5120). Builds nothing there: build.sh here makes
# build-fwdv2/fv2bench.xz, which the device call carries.
#   0. fv2bench --self-test: the check passes the reference and fails planted errors;
#   1. the check-only shapes (group "check"): every kernel against the float64 reference,
#      guards, two launches bit-identical;
#   2. each timed group in its own process (a crash or hang costs that group only, and
#      `timeout` ends it), in the order of ORDER below, while the time used stays under
#      FV2_BUDGET_S (default 240 s: the whole call stays under ~300 s with the start); FV2_ORDER
#      names other groups or another order;
#   3. the table of every shape into $OUT/table.md, the whole log into $OUT/fwdv2.log.
# Exit: 0 every check passed, 1 a check failed or a group did not run or finish, 2 no binary,
# 77 no CUDA device.
# --dry-run (here): unpacks the binary to a temporary file, lists what would run, runs
# nothing on a GPU.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dry=0
[ "${1:-}" = --dry-run ] && dry=1
xzbin=${FV2_BIN:-$root/build-fwdv2/fv2bench.xz}
budget=${FV2_BUDGET_S:-240}
reps=${FV2_REPS:-11}
per_group=${FV2_GROUP_TIMEOUT_S:-90}
out=${OUT:-/tmp/fwdv2-out}
ORDER=(sweep0 sweep1 sweep2 sweep3 sweep4 sweep5 dtype token frame mult64 image odd mult8 odd3)
# FV2_ORDER: the timed groups and their order, when a round needs only some (space-separated)
if [ -n "${FV2_ORDER:-}" ]; then read -r -a ORDER <<<"$FV2_ORDER"; fi
if [ ! -f "$xzbin" ]; then
  echo "device.sh: no $xzbin: run kernels/experiments/2026-12-02-fwd-v2/build.sh here first and carry build-fwdv2/fv2bench.xz" >&2
  exit 2
fi
bin=$(mktemp /tmp/fv2bench.XXXXXX)
trap 'rm -f "$bin"' EXIT
if ! xz -dc "$xzbin" >"$bin" || ! chmod +x "$bin"; then
  echo "device.sh: cannot unpack $xzbin" >&2
  exit 2
fi
mapfile -t shapes < <("$bin" --list)
[ "${#shapes[@]}" -gt 0 ] || { echo "device.sh: fv2bench --list printed nothing" >&2; exit 2; }
if [ "$dry" = 1 ]; then
  echo "would run: fv2bench --self-test   (timeout 60 s; the check against planted errors)"
  echo "would run: fv2bench --group check --reps $reps   (timeout $per_group s; check-only shapes:)"
  for s in "${shapes[@]}"; do [ "${s%%$'\t'*}" = check ] && echo "    ${s##*$'\t'}"; done
  for g in "${ORDER[@]}"; do
    n=$(printf '%s\n' "${shapes[@]}" | awk -F'\t' -v g="$g" '$1 == g' | wc -l)
    echo "would run: fv2bench --group $g --reps $reps   (timeout $per_group s; $n timed shapes)"
  done
  echo "then: the table into \$OUT/table.md, the log into \$OUT/fwdv2.log; budget $budget s"
  exit 0
fi
mkdir -p "$out"
log=$out/fwdv2.log
rows=$(mktemp)
: >"$rows.head"
status=0
last_rc=0
start=$SECONDS
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$log"
else
  echo "no nvidia-smi" | tee "$log"
fi
run() { # run TIMEOUT ARGS...: one fv2bench process, its lines into the log, its table rows kept
  local t=$1; shift
  timeout "$t" "$bin" "$@" >"$rows.one" 2>&1
  local rc=$?
  cat "$rows.one" >>"$log"
  grep '^| ' "$rows.one" | grep -v '^| shape |' >>"$rows"
  [ -s "$rows.head" ] || grep -A1 -m1 '^| shape |' "$rows.one" >"$rows.head"
  echo "fv2bench $* rc=$rc ($((SECONDS - start)) s)" | tee -a "$log"
  grep -E 'FAIL|^fv2bench:' "$rows.one" | head -20
  [ "$rc" = 0 ] || status=1
  last_rc=$rc
}
run 60 --self-test
[ "$last_rc" = 0 ] || echo "device.sh: the self-test failed: the check cannot be trusted" | tee -a "$log"
run "$per_group" --group check --reps "$reps"
[ "$last_rc" = 77 ] && { echo "device.sh: no CUDA device here"; exit 77; }
for g in "${ORDER[@]}"; do
  if [ $((SECONDS - start)) -ge "$budget" ]; then
    echo "skipped (budget $budget s used): group $g" | tee -a "$log"
    status=1
    continue
  fi
  run "$per_group" --group "$g" --reps "$reps"
done
{
  echo "% of copy (median of $reps, L2 flushed; ' g': graph-timed; '=v1': fell back to v1; '=v2': the alternative is the rule's); check-only shapes: ok/FAIL"
  cat "$rows.head" "$rows"
} >"$out/table.md"
rm -f "$rows" "$rows.one" "$rows.head"
cat "$out/table.md"
echo "device.sh: $((SECONDS - start)) s, status $status" | tee -a "$log"
exit "$status"
