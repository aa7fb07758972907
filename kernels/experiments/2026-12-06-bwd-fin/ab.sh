#!/usr/bin/env bash
# ab.sh -- one device call: the same-lease A/B/A of two builds on a bench filter (a narrower
# form of ci/device_run.sh sweep's A/B/A): .devbundle/adaload-base (BASE_REV=<rev>
# ci/device_bundle.sh) as A, .devbundle/adaload as B, A again; first dtile's quick grid of the
# new build's backward (no record; when it fails nothing is timed). AB_SET (default wan) and AB_FILTER
# (default: dtile's backward at issue 18's bar shapes and their copies) pick the benchmarks.
# Into $OUT: ab-compare.md (A B), ab-drift.md (A A2), ab.tgz (the three run folders), logs.tgz.
set -uo pipefail
rm -f .devbundle/adaload .devbundle/adaload-base .devbundle/libadaload.so; rm -rf .devbundle/lib
. ci/device_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
set=${AB_SET:-wan}
filter=${AB_FILTER:-'^lnmod_bwd/dtile/bf16-f32-bf16/(sample|token|frame)/D(1536|3072|5120)/rows(32760|75600|65520/B2)$'}
a=.devbundle/adaload b=.devbundle/adaload-base d=/tmp/ab
rm -rf "$d" # a warm machine keeps /tmp: an earlier call's run folders would refuse the new ones
$a verify --op lnmod --direction bwd --grid quick --variant dtile --no-record >"$out/verify.log" 2>&1; v=$?; echo "verify rc=$v"; tail -2 "$out/verify.log"
[ "$v" = 0 ] || exit 1
for r in A B A2; do
  bin=$b; [ "$r" = B ] && bin=$a
  "$bin" bench --set "$set" --filter "$filter" --out "$d/$r" >"$out/bench-$r.log" 2>&1; echo "bench $r rc=$?"
done
"$a" compare "$d/A" "$d/B" >"$out/ab-compare.md" 2>&1; echo "compare A B rc=$?"; tail -1 "$out/ab-compare.md"
"$a" compare "$d/A" "$d/A2" >"$out/ab-drift.md" 2>&1; echo "compare A A2 rc=$?"; tail -1 "$out/ab-drift.md"
tar -C /tmp -czf "$out/ab.tgz" ab
tar -C "$out" -czf "$out/logs.tgz" verify.log bench-A.log bench-B.log bench-A2.log && rm -f "$out"/verify.log "$out"/bench-*.log
