#!/usr/bin/env bash
# device.sh [--dry-run] -- on the GPU machine: the built dtile against round 3's candidates
# (README.md beside this; round 2's device.sh with round 3's binary, shapes and budget).
# Builds nothing there: build.sh here makes build-bwdv3/bv3bench.xz, which the device call
# carries.
#   0. bv3bench --self-test: the check passes the reference and fails planted errors;
#   1. the check-only shapes in one process (bv3bench --quick): every kernel against the
#      float64 reference, guards, determinism, bits against the built dtile;
#   2. each timed shape of round 3 (bv3bench --list: the shape and its kernels) in its own
#      process (a crash or hang costs that shape only, and `timeout` ends it), while the time
#      used stays under BV3_BUDGET_S (default 150 s; with the last shape's 50 s timeout at most ~200 s);
#   3. the table of every shape into $OUT/table.md, the whole log into $OUT/bwdv3.log, with
#      the seconds each step took.
# Exit: 0 every check passed, 1 a check failed or a shape did not finish, 2 no binary, 77 no
# CUDA device.
# --dry-run (here): unpacks the binary to a temporary file, lists what would run, runs
# nothing on a GPU.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dry=0
[ "${1:-}" = --dry-run ] && dry=1
xzbin=${BV3_BIN:-$root/build-bwdv3/bv3bench.xz}
budget=${BV3_BUDGET_S:-150}
reps=${BV3_REPS:-11}
per_shape=${BV3_SHAPE_TIMEOUT_S:-50}
out=${OUT:-/tmp/bwdv3-out}
if [ ! -f "$xzbin" ]; then
  echo "device.sh: no $xzbin: run kernels/experiments/2026-12-02-bwd-v3/build.sh here first and carry build-bwdv3/bv3bench.xz" >&2
  exit 2
fi
bin=$(mktemp /tmp/bv3bench.XXXXXX)
trap 'rm -f "$bin"' EXIT
if ! xz -dc "$xzbin" >"$bin" || ! chmod +x "$bin"; then
  echo "device.sh: cannot unpack $xzbin" >&2
  exit 2
fi
mapfile -t shapes < <("$bin" --list)
[ "${#shapes[@]}" -gt 0 ] || { echo "device.sh: bv3bench --list printed nothing" >&2; exit 2; }
if [ "$dry" = 1 ]; then
  echo "would run: bv3bench --self-test   (timeout 30 s; the check against planted errors)"
  echo "would run: bv3bench --quick --reps $reps   (timeout $((2 * per_shape)) s; the check-only shapes:)"
  for s in "${shapes[@]}"; do
    IFS=$'\t' read -r kind name kernels <<<"$s"
    [ "$kind" = check ] && echo "    $name   (kernels: $kernels)"
  done
  for s in "${shapes[@]}"; do
    IFS=$'\t' read -r kind name kernels <<<"$s"
    [ "$kind" = timed ] && echo "would run: bv3bench --shape '$name' --reps $reps   (timeout $per_shape s; kernels $kernels)"
  done
  echo "then: the table into \$OUT/table.md, the log into \$OUT/bwdv3.log; budget $budget s"
  exit 0
fi
mkdir -p "$out"
log=$out/bwdv3.log
rows=$(mktemp)
: >"$rows.head"
status=0
last_rc=0
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$log"
run() { # run TIMEOUT ARGS...: one bv3bench process, its lines into the log, its table rows kept
  local t=$1 t0=$SECONDS; shift
  timeout "$t" "$bin" "$@" >"$rows.one" 2>&1
  local rc=$?
  cat "$rows.one" >>"$log"
  grep '^| ' "$rows.one" | grep -v '^| shape |' >>"$rows"
  [ -s "$rows.head" ] || grep -A1 -m1 '^| shape |' "$rows.one" >"$rows.head"
  echo "bv3bench $* rc=$rc ($((SECONDS - t0)) s)" | tee -a "$log"
  grep -E '^(==|  [a-z0-9]+ )' "$rows.one" | grep -E 'FAIL|^==' | head -40
  [ "$rc" = 0 ] || status=1
  last_rc=$rc
}
run 30 --self-test
run $((2 * per_shape)) --quick --reps "$reps"
[ "$last_rc" = 77 ] && { echo "device.sh: no CUDA device here"; exit 77; }
for s in "${shapes[@]}"; do
  IFS=$'\t' read -r kind name _ <<<"$s"
  [ "$kind" = timed ] || continue
  if [ $((SECONDS - start)) -ge "$budget" ]; then
    echo "skipped (budget $budget s used): $name" | tee -a "$log"
    status=1
    continue
  fi
  run "$per_shape" --shape "$name" --reps "$reps"
done
{
  echo "% of copy (median of $reps, L2 flushed; '=dtile': the candidate ran the built dtile); check-only shapes: one row each"
  cat "$rows.head" "$rows"
} >"$out/table.md"
rm -f "$rows" "$rows.one" "$rows.head"
cat "$out/table.md"
echo "device.sh: $((SECONDS - start)) s, status $status"
exit "$status"
