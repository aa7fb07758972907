#!/usr/bin/env bash
# ci/land_patch.sh -- brings a kernel experiment's patch onto main with its GPU record, in the
# steps around the device calls (kernel sources change only with a passing record):
#   prepare PATCH HASH   on a clean tree: git apply --index PATCH, check that kernels/ then
#                        hashes to HASH (kernels/source_hash.cmake; undone when it does not),
#                        commit, ci/device_bundle.sh --no-slow with BASE_REV = the commit
#                        before the patch (.devbundle/adaload-base: the sweep's same-lease
#                        baseline), ci/kernel_barriers.sh (stops on
#                        a kernel reserving barriers it does not allow; without cuobjdump it
#                        says so and goes on), ci/device_tree.sh lean; prints the device
#                        calls: the sweep (its A/B/A verdict) first, then a full record
#   collect DIR...       after the calls: ci/device_tree.sh restore, each DIR/results.tgz
#                        unpacked (without verify.json and results/index.jsonl), `adaload
#                        results add` of each run folder in it, `adaload results check`,
#                        `adaload gate`; commits nothing
#   --dry-run            (before prepare's PATCH) checks that PATCH applies and says what
#                        prepare would do; changes nothing
# Exit: 0 done; 1 a step failed (it says which; nothing is undone); 2 bad usage or state.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
die() { echo "land_patch.sh: $*" >&2; exit "${2:-1}"; }
usage() { sed -n '2,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
carry='[".devbundle/adaload.xz", ".devbundle/lib.tar.xz", ".devbundle/git.env"]'
carry_sweep='[".devbundle/adaload.xz", ".devbundle/lib.tar.xz", ".devbundle/git.env", ".devbundle/adaload-base.xz"]'
case "${1:-}" in
  prepare)
    shift
    dry=0
    [ "${1:-}" = --dry-run ] && { dry=1; shift; }
    [ $# -eq 2 ] || usage
    patch=$1 want=$2
    [ -f "$patch" ] || die "no patch $patch" 2
    [[ "$want" =~ ^[0-9a-f]{64}$ ]] || die "HASH must be the 64 hex digits of kernels/source_hash.cmake (got '$want')" 2
    if [ "$dry" = 1 ]; then
      git apply --check "$patch" || die "$patch does not apply to $(git rev-parse --short HEAD)" 2
      echo "$patch applies to $(git rev-parse --short HEAD): prepare would commit it, check kernels/ hashes to $want, bundle and lean"
      exit 0
    fi
    [ -z "$(git status --porcelain --untracked-files=no)" ] || die "the tree has changes: commit or stash them first" 2
    git apply --index "$patch" || die "$patch does not apply to $(git rev-parse --short HEAD)" 2
    got=$(cmake -DDIR="$root/kernels" -P kernels/source_hash.cmake)
    if [ "$got" != "$want" ]; then
      git reset -q --hard HEAD
      die "kernel sources hash to $got, not $want (patch undone)"
    fi
    git commit -q -m "$(basename "$patch") applied (kernel sources ${want:0:8}; its record follows)"
    echo "committed $(git rev-parse --short HEAD); kernel sources $got"
    BASE_REV=$(git rev-parse HEAD~1) ci/device_bundle.sh --no-slow >/tmp/land-bundle.log 2>&1 || die "ci/device_bundle.sh failed: /tmp/land-bundle.log"
    # The barriers each kernel reserves (a named barrier in a shared kernel cost the warp-a-row
    # plans up to 2.5x, 2026-12-05): a kernel the allow file does not name stops the landing.
    if ci/kernel_barriers.sh build-device >/tmp/land-barriers.log 2>&1; then
      tail -1 /tmp/land-barriers.log
    else
      rc=$?
      grep -v '(allowed)' /tmp/land-barriers.log | head -20 || true
      [ "$rc" = 77 ] || die "ci/kernel_barriers.sh: a kernel reserves barriers ci/kernel_barriers.allow does not name"
    fi
    ci/device_tree.sh lean
    cat <<EOF
Device calls: first the sweep, which decides (its verdict, \$OUT/sweep-compare.md: the patch
against the commit before it, timed in the same lease -- want nothing slower where that one is
fast), then those of a full record (then: $0 collect <files_at of each call>):
  run(command="ci/device_run.sh sweep", carry=$carry_sweep, timeout_s=600)  (~370 s on an H100: the sweep, then A/B/A)
  run(command="VERIFY_PARALLEL=1 ci/device_run.sh verify-shards 3 2 3", carry=$carry, timeout_s=600)  (~220 s)
  run(command="ci/device_run.sh verify-shards 3 1", carry=$carry, timeout_s=600)                      (~390 s)
  run(command="ci/device_run.sh verify-shards 3 san", carry=$carry, timeout_s=600)                    (~380 s)
(racecheck's child beside a shard would near verify's 420 s --sanitizer-timeout: san alone.)
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
    echo "next: ctest -LE gpu in build-device, commit the records with the README and kernels/NOTES.md"
    ;;
  *) usage ;;
esac
