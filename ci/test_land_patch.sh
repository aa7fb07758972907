#!/usr/bin/env bash
# ci/test_land_patch.sh [WORK] -- ci/land_patch.sh prepare in a throw-away git repository
# (CTest: land_patch; git and cmake only, the bundle and lean steps stand-ins that log their
# call): usage, a malformed HASH, a dirty tree and a patch that does not apply are refused
# (exit 2) with HEAD and the tree untouched; --dry-run changes nothing; a patch whose kernel
# sources hash to another HASH is undone (exit 1, HEAD and `git status` as before); the right
# HASH commits the patch and runs the bundle (its baseline BASE_REV the commit before the
# patch), the barrier check (its failure stops before lean,
# exit 1; its 77, no cuobjdump, does not), then lean. Prints PASS, or FAIL and what differed.
# shellcheck disable=SC2015
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-}
if [ -z "$work" ]; then work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; else rm -rf "$work"; mkdir -p "$work"; fi
fail() { echo "FAIL: $*"; exit 1; }
repo=$work/repo
mkdir -p "$repo/ci" "$repo/kernels" && cd "$repo" || exit 1
export GIT_CONFIG_NOSYSTEM=1 HOME=$work GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
git init -q -b main . || fail "git init"
cp "$src/ci/land_patch.sh" ci/ && cp "$src/kernels/source_hash.cmake" kernels/ || fail "copy"
# shellcheck disable=SC2016 # the stand-in's own ${BASE_REV}, expanded when it runs
printf '#!/usr/bin/env bash\necho "bundle base=${BASE_REV:-none}" >>"%s/calls"\n' "$work" >ci/device_bundle.sh
printf '#!/usr/bin/env bash\necho "tree $*" >>"%s/calls"\n' "$work" >ci/device_tree.sh
# the barrier check's stand-in: logs its call, exits with the code in $work/barriers_rc
# shellcheck disable=SC2016 # the stand-in's own $(...), expanded when it runs
printf '#!/usr/bin/env bash\necho barriers >>"%s/calls"\nexit "$(cat "%s/barriers_rc")"\n' "$work" "$work" >ci/kernel_barriers.sh
echo 0 >"$work/barriers_rc"
chmod +x ci/*.sh
printf '__global__ void k() {}\n' >kernels/a.cu
git add . && git commit -qm init || fail "commit"
head0=$(git rev-parse HEAD)
printf '__global__ void k() { /* v2 */ }\n' >kernels/a.cu
git diff >"$work/good.patch" && git checkout -q kernels/a.cu
want=$(git apply "$work/good.patch" && cmake -DDIR="$repo/kernels" -P kernels/source_hash.cmake; git checkout -q kernels/a.cu)
[[ "$want" =~ ^[0-9a-f]{64}$ ]] || fail "no hash of the patched tree: '$want'"
other=$(printf '%064d' 0)
printf -- '--- a/kernels/none.cu\n+++ b/kernels/none.cu\n@@ -1 +1 @@\n-x\n+y\n' >"$work/bad.patch"
same() { [ "$(git rev-parse HEAD)" = "$head0" ] && [ -z "$(git status --porcelain)" ] && [ ! -e "$work/calls" ]; }
expect() { # expect RC WHAT -- ci/land_patch.sh ARGS...
  local rc=$1 what=$2; shift 3
  ci/land_patch.sh "$@" >"$work/out" 2>&1; local got=$?
  [ "$got" = "$rc" ] || { sed 's/^/  /' "$work/out"; fail "$what: exit $got, want $rc"; }
}
expect 2 "no arguments" --
same || fail "usage changed the tree"
expect 2 "malformed hash" -- prepare "$work/good.patch" abc
same || fail "a malformed hash changed the tree"
expect 2 "patch that does not apply" -- prepare "$work/bad.patch" "$want"
same || fail "a patch that does not apply changed the tree"
expect 0 "--dry-run" -- prepare --dry-run "$work/good.patch" "$want"
same || fail "--dry-run changed the tree"
expect 2 "--dry-run of a patch that does not apply" -- prepare --dry-run "$work/bad.patch" "$want"
printf 'dirty\n' >>kernels/source_hash.cmake
expect 2 "dirty tree" -- prepare "$work/good.patch" "$want"
git checkout -q kernels/source_hash.cmake
same || fail "a dirty tree was changed"
expect 1 "wrong hash" -- prepare "$work/good.patch" "$other"
grep -q "not $other" "$work/out" || fail "the wrong hash's message does not name it: $(cat "$work/out")"
same || fail "a wrong hash left the patch applied or committed"
# a kernel reserving barriers the allow file does not name: stopped before lean (exit 1)
echo 1 >"$work/barriers_rc"
expect 1 "barrier check failing" -- prepare "$work/good.patch" "$want"
grep -q 'kernel_barriers.sh' "$work/out" || fail "the barrier failure's message does not name the check: $(cat "$work/out")"
[ "$(tr '\n' ' ' <"$work/calls")" = "bundle base=$head0 barriers " ] || fail "calls after a failing barrier check: $(cat "$work/calls")"
git reset -q --hard "$head0" && rm -f "$work/calls"
# no cuobjdump (77): said, and the landing goes on
echo 77 >"$work/barriers_rc"
expect 0 "right hash" -- prepare "$work/good.patch" "$want"
[ "$(git rev-parse HEAD~1)" = "$head0" ] || fail "the patch was not committed on HEAD"
git log -1 --format=%s | grep -q "good.patch applied (kernel sources ${want:0:8}" || fail "commit message: $(git log -1 --format=%s)"
grep -q 'v2' kernels/a.cu || fail "the patch's change is not in the tree"
[ "$(tr '\n' ' ' <"$work/calls")" = "bundle base=$head0 barriers tree lean " ] || fail "calls after the commit: $(cat "$work/calls")"
echo PASS
