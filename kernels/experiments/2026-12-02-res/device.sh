#!/usr/bin/env bash
# device.sh [--dry-run] -- on the GPU machine: the fused residual + LN-modulate kernels of this
# experiment (README.md beside this). Builds nothing there: build.sh here makes
# build-res/resbench.xz, which the device call carries.
#   0. resbench --self-test: the check passes the reference and fails planted errors (CPU);
#   1. each check-only shape in its own process (resbench --shape; a crash or hang costs that
#      shape only, and `timeout` ends it): every variant against the float64 reference,
#      guards, two launches bit-identical;
#   2. each timed shape in its own process, while the time used stays under RES_BUDGET_S
#      (default 165 s; a shape started before it may run its 60 s: at most ~230 s in all);
#   3. the table of every shape into $OUT/table.md, the whole log into $OUT/res.log.
# Exit: 0 every check passed, 1 a check failed or a shape did not finish, 2 no binary, 77 no
# CUDA device.
# --dry-run (here): unpacks the binary to a temporary file, lists what would run, runs
# nothing on a GPU.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dry=0
[ "${1:-}" = --dry-run ] && dry=1
xzbin=${RES_BIN:-$root/build-res/resbench.xz}
budget=${RES_BUDGET_S:-165}
reps=${RES_REPS:-11}
per_shape=${RES_SHAPE_TIMEOUT_S:-60}
threads=$(nproc 2>/dev/null || echo 16)
[ "$threads" -gt 64 ] && threads=64
out=${OUT:-/tmp/res-out}
if [ ! -f "$xzbin" ]; then
  echo "device.sh: no $xzbin: run kernels/experiments/2026-12-02-res/build.sh here first and carry build-res/resbench.xz" >&2
  exit 2
fi
bin=$(mktemp /tmp/resbench.XXXXXX)
trap 'rm -f "$bin"' EXIT
if ! xz -dc "$xzbin" >"$bin" || ! chmod +x "$bin"; then
  echo "device.sh: cannot unpack $xzbin" >&2
  exit 2
fi
mapfile -t shapes < <("$bin" --list)
[ "${#shapes[@]}" -gt 0 ] || { echo "device.sh: resbench --list printed nothing" >&2; exit 2; }
if [ "$dry" = 1 ]; then
  echo "would run: resbench --self-test --threads $threads   (timeout 60 s; the check against planted errors)"
  for s in "${shapes[@]}"; do
    [ "${s%%$'\t'*}" = check ] && echo "would run: resbench --shape '${s#*$'\t'}' --reps $reps --threads $threads   (timeout $per_shape s; check only)"
  done
  for s in "${shapes[@]}"; do
    [ "${s%%$'\t'*}" = timed ] && echo "would run: resbench --shape '${s#*$'\t'}' --reps $reps --threads $threads   (timeout $per_shape s; timed, while under the budget)"
  done
  echo "then: the table into \$OUT/table.md, the log into \$OUT/res.log; budget $budget s"
  exit 0
fi
mkdir -p "$out"
log=$out/res.log
rows=$(mktemp)
: >"$rows.head"
status=0
last_rc=0
start=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv || echo "no nvidia-smi"; } | tee "$log"
run() { # run TIMEOUT ARGS...: one resbench process, its lines into the log, its table rows kept
  local t=$1; shift
  timeout "$t" "$bin" "$@" >"$rows.one" 2>&1
  local rc=$?
  cat "$rows.one" >>"$log"
  grep '^| ' "$rows.one" | grep -v '^| shape |' >>"$rows"
  [ -s "$rows.head" ] || grep -A1 -m1 '^| shape |' "$rows.one" >"$rows.head"
  echo "resbench $* rc=$rc" | tee -a "$log"
  grep -E '^(==|  (fwd|bwd) |      [a-z]+: )|WRONG|FAILED|resbench:' "$rows.one" | grep -E 'FAIL|WRONG|BAD|NO |elements|resbench:' | head -40
  [ "$rc" = 0 ] || status=1
  last_rc=$rc
}
run 60 --self-test --threads "$threads"
for s in "${shapes[@]}"; do
  [ "${s%%$'\t'*}" = check ] || continue
  run "$per_shape" --shape "${s#*$'\t'}" --reps "$reps" --threads "$threads"
  [ "$last_rc" = 77 ] && { echo "device.sh: no CUDA device here"; exit 77; }
done
for s in "${shapes[@]}"; do
  [ "${s%%$'\t'*}" = timed ] || continue
  name=${s#*$'\t'}
  if [ $((SECONDS - start)) -ge "$budget" ]; then
    echo "skipped (budget $budget s used): $name" | tee -a "$log"
    status=1
    continue
  fi
  run "$per_shape" --shape "$name" --reps "$reps" --threads "$threads"
done
{
  echo "% of copy (median of $reps, L2 flushed; '=naive': dtile ran naive's path); check-only shapes: ok/FAIL"
  cat "$rows.head" "$rows"
} >"$out/table.md"
rm -f "$rows" "$rows.one" "$rows.head"
cat "$out/table.md"
echo "device.sh: $((SECONDS - start)) s, status $status"
exit "$status"
