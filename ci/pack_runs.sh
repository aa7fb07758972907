#!/usr/bin/env bash
# ci/pack_runs.sh OUT BEFORE [EXTRA_DIR] -- on the device machine, in the checkout: packs every
# run folder under results/ made since BEFORE was listed (a run folder is a folder with a
# meta.json; BEFORE: the sorted meta.json paths there were, `find results -name meta.json !
# -path "*/.*" | sort`), EXTRA_DIR when given and present (a run folder staged another way),
# and results/index.jsonl into OUT/results.tgz; the folders' list into OUT/new_runs.list.
# ci/device_run.sh calls it after each verify step and once at the end, so a call that its
# time limit kills keeps what ended before (2026-12-06: a killed call had packed nothing; the
# next call's copy of the tree removed the finished shards' meta.json and verify-summary.json,
# which the repository's .gitignore does not ignore). Each file is replaced whole: written
# beside its place, then renamed (a kill mid-pack leaves the previous pack).
# Exit: 0 packed (also when nothing is new: then only the index); 1 tar failed; 2 bad usage.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; fi
out=$1 before=$2 extra=${3:-}
[ -d "$out" ] || { echo "pack_runs.sh: OUT $out is not a folder" >&2; exit 2; }
[ -f "$before" ] || { echo "pack_runs.sh: BEFORE $before is not a file" >&2; exit 2; }
[ -d results ] || { echo "pack_runs.sh: no results/ in $PWD (run it in the checkout)" >&2; exit 2; }
list=$out/.new_runs.list.$$ tgz=$out/.results.tgz.$$
trap 'rm -f "$list" "$list.tar" "$tgz"' EXIT
find results -name meta.json ! -path "*/.*" | sort | comm -13 "$before" - | xargs -r -n1 dirname >"$list"
[ -n "$extra" ] && [ -d "$extra" ] && echo "$extra" >>"$list"
cp "$list" "$list.tar"
[ -f results/index.jsonl ] && echo results/index.jsonl >>"$list.tar"
# (tar exits 1 when a file changed while read -- the index, appended by a step still running:
# once more then; run folders themselves appear whole, renamed from their staging folder)
tar czf "$tgz" -T "$list.tar" 2>/dev/null || tar czf "$tgz" -T "$list.tar" || { echo "pack_runs.sh: tar failed" >&2; exit 1; }
mv -f "$tgz" "$out/results.tgz"
mv -f "$list" "$out/new_runs.list"
echo "packed $(wc -l <"$out/new_runs.list") run folders into $out/results.tgz"
