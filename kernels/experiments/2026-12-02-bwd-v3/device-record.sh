#!/usr/bin/env bash
# device-record.sh -- on the GPU machine (2026-12-02, one call): version 3's record with a
# fallback. Carried: .devbundle/ (main: the halved combine buffer + the equalized group
# barriers) and .devbundle-alt/ (version 2's full combine buffer + per token on the ring),
# each with its own git.env. racecheck over dtile's backward on the quick grid first (the
# tool and grid that reported hazards on the halved buffer, record 2026-12-02T095819Z_684f071);
# the first build it passes becomes .devbundle/adaload, then `ci/device_run.sh verify-shards
# 3 san 3` records it (the sanitizers over every variant decide, not this pre-check).
set -uo pipefail
o=${OUT:-/tmp/adaload-out}
mkdir -p "$o"
tar -C .devbundle -xJf .devbundle/lib.tar.xz || exit 2
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
pre() { # pre NAME: racecheck over dtile's backward, quick grid
  local t0=$SECONDS
  timeout 200 "$cs" --tool racecheck --error-exitcode 1 .devbundle/adaload verify --grid quick --variant dtile \
    --direction bwd --no-record --seed 7 >"$o/pre-$1.log" 2>&1
  local rc=$?
  echo "pre-check $1: rc=$rc ($((SECONDS - t0)) s), $(grep -c 'Error: Race' "$o/pre-$1.log") race reports"
  return $rc
}
xz -dc .devbundle/adaload.xz >.devbundle/adaload && chmod +x .devbundle/adaload || exit 2
if ! pre main; then
  xz -dc .devbundle-alt/adaload.xz >.devbundle/adaload && cp .devbundle-alt/git.env .devbundle/git.env || exit 2
  pre alt || echo "both builds drew racecheck reports: recording the alternative anyway (its sanitizer run decides)"
fi
echo "recording: $(tr '\n' ' ' <.devbundle/git.env)"
VERIFY_BUDGET_S=$((575 - SECONDS)) OUT=$o ci/device_run.sh verify-shards 3 san 3 >"$o/vs.log" 2>&1
echo "verify-shards rc=$?"
grep -E '^verify .* rc=|sanitizer (memcheck|racecheck|initcheck|synccheck)|total:' "$o/vs.log"
