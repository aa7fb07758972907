#!/usr/bin/env bash
# land.sh prepare | collect DIR... -- brings integration-v3.patch (README "Integration v3") onto
# main with its verification record, in the steps around the device calls:
#   prepare       on a clean main: git apply the patch, check that the kernel sources hash to
#                 f719ea9e... (the sources of the committed shards 2/3 and 3/3), commit,
#                 ci/device_bundle.sh --no-slow, ci/device_tree.sh lean; prints the calls to make
#   collect DIR.. after the calls: ci/device_tree.sh restore, each DIR/results.tgz unpacked
#                 (without verify.json and results/index.jsonl), `adaload results add` of each
#                 run folder in it, `adaload results check`, `adaload gate`; commits nothing
# Exit: 0 done; 1 a step failed (it says which; nothing is undone); 2 bad usage or state.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"
want=f719ea9ec42ff01f90fcf115457141a2faa217a49b7697a786f826e9938822f5
patch=kernels/experiments/2026-12-02-res/integration-v3.patch
die() { echo "land.sh: $*" >&2; exit "${2:-1}"; }
carry='[".devbundle/adaload.xz", ".devbundle/lib.tar.xz", ".devbundle/git.env"]'
case "${1:-}" in
  prepare)
    [ -z "$(git status --porcelain --untracked-files=no)" ] || die "the tree has changes: commit or stash them first" 2
    [ -f "$patch" ] || die "no $patch: landed already?" 2
    git apply --index "$patch" || die "the patch does not apply to $(git rev-parse --short HEAD)" 2
    got=$(cmake -DDIR="$root/kernels" -P kernels/source_hash.cmake)
    if [ "$got" != "$want" ]; then
      git reset -q --hard HEAD
      die "kernel sources hash to $got, not $want: the committed shards would not count (patch undone)"
    fi
    git commit -q -m "Fused residual op (issue 22) in kernels/, verify, gate, bench, python and e2e: kernels/experiments/2026-12-02-res/integration-v3.patch applied (README 'Integration v3')"
    echo "committed $(git rev-parse --short HEAD); kernel sources $got"
    ci/device_bundle.sh --no-slow >/tmp/land-bundle.log 2>&1 || die "ci/device_bundle.sh failed: /tmp/land-bundle.log"
    ci/device_tree.sh lean
    cat <<EOF
Device calls (then: $0 collect <files_at of each call>):
  run(command="ci/device_run.sh verify-shards 3 1", carry=$carry, timeout_s=600)      (~200 s)
  run(command="ci/device_run.sh verify-shards 3 san", carry=$carry, timeout_s=600)    (~360 s)
  run(command="ci/device_run.sh bench-res", carry=$carry, timeout_s=400)              (~100-150 s)
(Shard 1 and san at once, VERIFY_PARALLEL=1, would save ~150 s but puts racecheck's child,
357 s alone, near verify's 420 s --sanitizer-timeout on a loaded host.)
EOF
    ;;
  collect)
    shift
    [ $# -ge 1 ] || die "collect: name the device calls' folders (files_at)" 2
    ci/device_tree.sh restore
    ada=build-device/adaload
    [ -x "$ada" ] || die "no $ada (prepare builds it)" 2
    for d in "$@"; do
      [ -f "$d/results.tgz" ] || { echo "$d: no results.tgz (skipped)"; continue; }
      tar xzf "$d/results.tgz" --exclude='*/verify.json' --exclude='results/index.jsonl'
      tar tzf "$d/results.tgz" | sed -n 's|/meta.json$||p' | awk -F/ 'NF == 4' | while read -r run; do
        # (a run already in the index -- collect run twice -- is fine)
        "$ada" results add "$run" 2>/tmp/land-add.err || grep -q 'is already in' /tmp/land-add.err ||
          die "results add $run: $(cat /tmp/land-add.err)"
      done
    done
    "$ada" results check || die "results check"
    "$ada" gate || die "the gate does not pass yet: see above (a missing shard or sanitizer record?)"
    echo "next: ctest -LE gpu in build-device (170 pass or skip), commit the records, then git rm $patch and the res_*.cu copies the built kernels replace"
    ;;
  *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
