#!/usr/bin/env bash
# land2.sh -- the ticket order's landing (2026-12-06): the A/B against main and the full-grid
# shards in one device call from the repository root (device time was short: one start saved; a
# first version with the A/B alone, never run, was dropped). Carry: .devbundle/adaload.xz (main
# with res-chunk-v2 + the ticket order + the forward workspace API), .devbundle/adaload-base.xz
# (main before it: kernel sources e3e078a6), .devbundle/lib.tar.xz, .devbundle/git.env. In order:
#   1. ../2026-12-05-res-chunk/device.sh with RC_TIMING_ONLY=1 (the A/B rounds base new base new
#      against main, no checks: step 3 is them) and the landing rule written before the call:
#      decide.sh --mean 0.995 --sweep-max 1.01;
#   2. (whatever the rule says) VERIFY_PARALLEL=1 ci/device_run.sh verify-shards 3 1 2 3: the full
#      grid's three shards at once, the records the gate joins -> $OUT/results.tgz;
#   the logs packed: $OUT/ab.tgz, $OUT/shards.tgz (the device tool brings back 8 files).
# The sanitizer record is the next call: ci/device_run.sh verify-shards 3 san.
set -uo pipefail
o=${OUT:?}
tmp=$(mktemp -d) tmp2=$(mktemp -d)
RC_TIMING_ONLY=1 RC_NEW=.devbundle/adaload.xz RC_BASE=.devbundle/adaload-base.xz OUT=$tmp \
  kernels/experiments/2026-12-05-res-chunk/device.sh >"$tmp/device.log" 2>&1
rc=$?
grep -E 'rc=|^== .* compare|^lnmod_res_fwd|^new|^base|^NVIDIA|^[0-9]+ slower' "$tmp/device.log" | sed 's/   */ /g' | sed 's/lnmod_res_fwd.dtile.f32-bf16-f32-bf16.sample.//' | cut -c1-90
echo "device.sh rc=$rc"
tar -C "$tmp" -czf "$o/ab.tgz" --exclude=ab.tgz .
if [ "$rc" = 0 ]; then
  kernels/experiments/2026-12-05-res-chunk/decide.sh --mean 0.995 --sweep-max 1.01 "$tmp/device.log"
  echo "decide rc=$? (0: land; 1: main keeps its forward)"
fi
OUT=$tmp2 VERIFY_PARALLEL=1 ci/device_run.sh verify-shards 3 1 2 3 >"$tmp2/device_run.log" 2>&1
echo "verify-shards rc=$?"
cat "$tmp2"/verify-*.rc 2>/dev/null
tail -2 "$tmp2"/verify-*.log 2>/dev/null | cut -c1-160
[ -f "$tmp2/results.tgz" ] && mv "$tmp2/results.tgz" "$o/results.tgz"
tar -C "$tmp2" -czf "$o/shards.tgz" .
