#!/usr/bin/env bash
# round3.sh -- res-chunk-v2's first device call (~330 s + the start), from the repository root,
# after `ci/land_patch.sh prepare kernels/experiments/2026-12-05-res-chunk/res-chunk-v2.patch
# 39a1f9064ca4cd89fda8010c4dbf9e3f8d97a434d0b7702c9efbaee47fee340c` (which bundles the patch's
# build as .devbundle/adaload and main's before it as .devbundle/adaload-base). Carry:
# .devbundle/adaload.xz, lib.tar.xz, git.env, adaload-base.xz.
#   1. device.sh: the fused op's full grid and sanitizer grid on the new build, then A/B rounds
#      base new base new over the wan set and the sweep set;
#   2. decide.sh --mean 0.995 --sweep-max 1.01: land only if no wan ratio passes 1.005, their mean
#      is <= 0.995 and no sweep row passes 1.01 (rule written 2026-12-06, before any v2 run; round
#      2's shapes predict 0.9895 / 1.000 on an H100);
#   3. when it lands: the record's first call, VERIFY_PARALLEL=1 ci/device_run.sh verify-shards 3 2 3.
# Exit 0: all ran and the patch lands (next: verify-shards 3 1, verify-shards 3 san, then
# bench-res on an H200); 1: a check failed or the rule keeps main (then `git reset --hard HEAD~1`
# here undoes prepare's commit); 3: an internal step failed.
set -uo pipefail
d=kernels/experiments/2026-12-05-res-chunk
tmp=$(mktemp -d)
OUT=$tmp "$d/device.sh" >"$tmp/device.log" 2>&1
rc=$?
tar -C "$tmp" -czf "${OUT:?}/ab.tgz" .
grep -E 'rc=|SUMMARY|^== .* compare|^lnmod_res_fwd|^new|^base|^NVIDIA|^[0-9]+ slower' "$tmp/device.log" | sed 's/   */ /g' | cut -c1-118
echo "device.sh rc=$rc"
[ "$rc" = 0 ] || exit 1
"$d/decide.sh" --mean 0.995 --sweep-max 1.01 "$tmp/device.log"
case $? in
  0) echo "landing: res-chunk-v2 ($(head -1 .devbundle/git.env))" ;;
  1) echo "not landing: main keeps res-chunk-keep"; exit 1 ;;
  *) exit 3 ;;
esac
VERIFY_PARALLEL=1 ci/device_run.sh verify-shards 3 2 3 >"$OUT/v.log" 2>&1
echo "verify-shards 3 2 3 rc=$?"
tail -12 "$OUT/v.log"
