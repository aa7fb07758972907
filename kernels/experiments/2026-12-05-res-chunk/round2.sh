#!/usr/bin/env bash
# round2.sh -- one device call (~330 s + the start), from the repository root: the round on the
# lent GPU and the landing's first record call together. Carry: .devbundle/ of res-chunk-keep's
# landing commit (adaload.xz, lib.tar.xz, git.env), build-rcbundle/adaload-rcland.xz and
# build-rcbundle/git-rcland.env (res-chunk's landing commit, built the same way).
#   1. device.sh with base = keep and new = res-chunk: at the sweep's 11 other widths both run
#      the chunk ring (a control: want B/A ~1), at the Wan widths the row kernels against the
#      chunk ring -- the question of the round, asked on whatever GPU came;
#   2. decide.sh picks the landing from the wan rows: res-chunk (the carried binary and its
#      git.env become .devbundle's) or res-chunk-keep (as carried);
#   3. the first record call of that landing: VERIFY_PARALLEL=1 ci/device_run.sh verify-shards 3 2 3.
# $OUT: ab.tgz (device.sh's logs, reports and run folders), v.log, and device_run.sh's files.
set -uo pipefail
d=kernels/experiments/2026-12-05-res-chunk
tmp=$(mktemp -d)
rm -f .devbundle/adaload .devbundle/adaload-rcland
OUT=$tmp RC_NEW=build-rcbundle/adaload-rcland.xz RC_BASE=.devbundle/adaload "$d/device.sh" >"$tmp/device.log" 2>&1
rc=$?
tar -C "$tmp" -czf "${OUT:?}/ab.tgz" .
grep -E 'rc=|SUMMARY|^== .* compare|^lnmod_res_fwd|^new|^base|^NVIDIA|^[0-9]+ slower' "$tmp/device.log" | sed 's/   */ /g' | cut -c1-118
echo "device.sh rc=$rc"
[ "$rc" = 0 ] || exit 1
"$d/decide.sh" "$tmp/device.log"
case $? in
  0) cp build-rcbundle/git-rcland.env .devbundle/git.env && cp .devbundle/adaload-rcland .devbundle/adaload || exit 3
     echo "landing: res-chunk ($(head -1 .devbundle/git.env))" ;;
  1) echo "landing: res-chunk-keep ($(head -1 .devbundle/git.env))" ;;
  *) exit 1 ;;
esac
VERIFY_PARALLEL=1 ci/device_run.sh verify-shards 3 2 3 >"$OUT/v.log" 2>&1
echo "verify-shards 3 2 3 rc=$?"
tail -12 "$OUT/v.log"
