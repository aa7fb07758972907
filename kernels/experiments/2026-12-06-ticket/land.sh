#!/usr/bin/env bash
# land.sh -- the ticket order's landing A/B (2026-12-06), one device call from the repository root,
# before the landing's full record (ci/device_run.sh verify-shards 3 1 2 3, then san). Carry:
# .devbundle/adaload.xz (main with res-chunk-v2 + the ticket order + the forward workspace API),
# .devbundle/adaload-base.xz (main before it: kernel sources e3e078a6, res-chunk-keep),
# .devbundle/lib.tar.xz, .devbundle/git.env.
#   1. ../2026-12-05-res-chunk/device.sh with RC_NEW = the landing build, RC_BASE = main: the fused
#      op's full grid on dtile (verify's GPU runner now also checks that each call leaves the
#      forward workspace zero, and its second launch runs on the workspace the first left),
#      racecheck and memcheck, A/B rounds base new base new over the wan set's 15 fused shapes
#      and the sweep's 14 widths;
#   2. the landing rule, written before the call (README "The form that lands"): against main,
#      decide.sh --mean 0.995 --sweep-max 1.01 (round 3's rule for v2 against main).
set -uo pipefail
o=${OUT:?}
tmp=$(mktemp -d)
RC_NEW=.devbundle/adaload.xz RC_BASE=.devbundle/adaload-base.xz OUT=$tmp \
  kernels/experiments/2026-12-05-res-chunk/device.sh >"$tmp/device.log" 2>&1
rc=$?
tar -C "$tmp" -czf "$o/ab.tgz" --exclude=ab.tgz .
grep -E 'rc=|SUMMARY|^== .* compare|^lnmod_res_fwd|^new|^base|^NVIDIA|^[0-9]+ slower|passed' "$tmp/device.log" | sed 's/   */ /g' | sed 's/lnmod_res_fwd.dtile.f32-bf16-f32-bf16.sample.//' | cut -c1-100
echo "device.sh rc=$rc"
[ "$rc" = 0 ] || exit 1
kernels/experiments/2026-12-05-res-chunk/decide.sh --mean 0.995 --sweep-max 1.01 "$tmp/device.log"
echo "decide rc=$? (0: land; 1: main keeps its forward)"
