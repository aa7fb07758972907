#!/usr/bin/env bash
# ci/test_pack_runs.sh [WORK] -- ci/pack_runs.sh in a throw-away checkout-like folder (CTest;
# tar only): packs exactly the run folders made since BEFORE (not older ones, not a hidden
# staging folder, not a folder without meta.json), EXTRA_DIR when present, and the index; a
# second pack after another run folder ended holds both (what a killed call keeps); a failed
# pack leaves the previous results.tgz as it was; bad usage exits 2.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
pack=$here/pack_runs.sh
mkrun() { mkdir -p "$1" && echo '{}' >"$1/meta.json" && echo "$2" >"$1/verify-summary.json"; }
mkdir -p results out
echo '{"run": "old"}' >results/index.jsonl
mkrun results/gpu/verify/T1_old old
find results -name meta.json ! -path "*/.*" | sort >before.txt
mkrun results/gpu/verify/T2_shard2 shard2
mkdir -p results/gpu/verify/.T3.partial.99 && echo '{}' >results/gpu/verify/.T3.partial.99/meta.json
mkdir -p results/gpu/verify/T4_nometa && echo x >results/gpu/verify/T4_nometa/verify.json
"$pack" out before.txt >pack1.log 2>&1 || fail "first pack exited $?: $(cat pack1.log)"
got=$(tar tzf out/results.tgz | grep -v '/$' | sort | tr '\n' ' ')
want="results/gpu/verify/T2_shard2/meta.json results/gpu/verify/T2_shard2/verify-summary.json results/index.jsonl "
[ "$got" = "$want" ] || fail "first pack holds [$got], want [$want]"
[ "$(cat out/new_runs.list)" = results/gpu/verify/T2_shard2 ] || fail "new_runs.list: $(cat out/new_runs.list)"
# another step ends; a staged extra folder (the regression check's) is named
mkrun results/gpu/verify/T5_shard1 shard1
mkdir -p results/gpu/regression-check/R1 && echo r >results/gpu/regression-check/R1/summary.txt
"$pack" out before.txt results/gpu/regression-check/R1 >pack2.log 2>&1 || fail "second pack exited $?"
# (the listing into a file first: `tar tzf | grep -q` fails under pipefail when grep stops early)
tar tzf out/results.tgz >list2.txt || fail "second pack unreadable"
for f in T2_shard2/verify-summary.json T5_shard1/verify-summary.json; do
  grep -qx "results/gpu/verify/$f" list2.txt || fail "second pack lacks $f"
done
grep -q '^results/gpu/regression-check/R1/summary.txt$' list2.txt || fail "second pack lacks EXTRA_DIR"
grep -q 'T1_old\|partial\|T4_nometa' list2.txt && fail "second pack holds an old, staged or meta-less folder"
[ "$(wc -l <out/new_runs.list)" = 3 ] || fail "new_runs.list: $(wc -l <out/new_runs.list) lines, want 3"
# an EXTRA_DIR that is not there (a staging that failed) is left out, not an error
"$pack" out before.txt /nonexistent >pack3.log 2>&1 || fail "a missing EXTRA_DIR made the pack fail"
# a pack whose tar fails (a tar that writes half a file, then exits 2) keeps the previous
# results.tgz whole and exits 1
cp out/results.tgz prev.tgz
mkrun results/gpu/verify/T6_late late
mkdir -p fakebin
# shellcheck disable=SC2016 # the stand-in's own $2
printf '#!/bin/sh\n# tar czf FILE ...: half a file, then failure\necho half >"$2"; exit 2\n' >fakebin/tar
chmod +x fakebin/tar
PATH=$work/fakebin:$PATH "$pack" out before.txt >pack4.log 2>&1; rc=$?
[ "$rc" = 1 ] || fail "a failing tar: exit $rc, want 1"
cmp -s prev.tgz out/results.tgz || fail "a failed pack changed results.tgz"
for f in out/.results.tgz.* out/.new_runs.list.*; do [ -e "$f" ] && fail "a temporary file left in OUT: $f"; done
# bad usage
"$pack" out >/dev/null 2>&1; [ $? = 2 ] || fail "one argument: want exit 2"
"$pack" nowhere before.txt >/dev/null 2>&1; [ $? = 2 ] || fail "OUT not a folder: want exit 2"
"$pack" out missing.txt >/dev/null 2>&1; [ $? = 2 ] || fail "BEFORE missing: want exit 2"
(cd out && "$pack" . ../before.txt >/dev/null 2>&1); [ $? = 2 ] || fail "no results/ here: want exit 2"
echo "pack_runs: ok"
