#!/usr/bin/env bash
# ci/test_device_tree.sh [WORK] -- ci/device_tree.sh in a throw-away git repository (CTest:
# device_tree; no network, no build): lean untracks results/ but keeps every file on disk
# as it was, keeps results/index.jsonl and the KEEP paths tracked, stops results/ from
# travelling; a second lean, staged changes under results/, a KEEP outside results/ or
# untracked, are refused (exit 2) with the index and the exclude file untouched; restore
# gives back `git status --porcelain` and .git/info/exclude exactly; restore when not lean is
# a no-op (exit 0); status's size counts the --carry paths; a linked worktree's lean is its
# own. Prints PASS, or FAIL and what differed.
# fail exits, so `A && B || fail ...` is meant; the output is indented with sed on purpose.
# shellcheck disable=SC2015,SC2001
set -uo pipefail
tool=$(cd "$(dirname "$0")" && pwd)/device_tree.sh
work=${1:-}
if [ -z "$work" ]; then work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; else rm -rf "$work"; mkdir -p "$work"; fi
fail() { echo "FAIL: $*"; exit 1; }
repo=$work/repo
mkdir -p "$repo" && cd "$repo" || exit 1
export GIT_CONFIG_NOSYSTEM=1 HOME=$work GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
git init -q -b main . || fail "git init"
mk() { mkdir -p "$(dirname "$1")"; head -c "$2" /dev/zero | tr '\0' "${3:-x}" >"$1"; }
mk src/a.c 100
mk exp/a.txt 3000
mk exp/sub/b.txt 2000
mk results/index.jsonl 50
mk results/gpu/bench/r1/meta.json 1000
mk results/gpu/bench/r1/bench.json 2000
mk results/gpu/bench/r2/bench.json 3000
mk "results/gpu/verify/v 1/summary.json" 4000   # a space in a name
mk results/gpu/verify/v2/verify.json 500        # ignored, as the project ignores full records
printf '/results/*/verify/*/verify.json\n/.devbundle/\n' >.gitignore
git add . && git commit -qm init || fail "commit"
# What a checkout holds between sessions: an unstaged edit (under results/ too), a staged one
# outside results/, untracked files, a user's own exclude line.
echo more >>results/index.jsonl
echo more >>results/gpu/bench/r2/bench.json
echo edit >>src/a.c && git add src/a.c
mk src/new.c 10
mk results/gpu/bench/r3/meta.json 700
mk .devbundle/adaload.xz 5000
excl=.git/info/exclude
echo '/my-own-scratch/' >>"$excl"
sums() { find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum; }
porc0=$(git status --porcelain) sums0=$(sums) excl0=$(cat "$excl") index0=$(git ls-files -s)

# restore when not lean: a no-op, exit 0
out=$("$tool" restore 2>&1) || fail "restore when not lean: exit $? ($out)"
grep -q "not lean" <<<"$out" || fail "restore when not lean says: $out"
[ "$(git status --porcelain)" = "$porc0" ] && [ "$(cat "$excl")" = "$excl0" ] || fail "restore when not lean changed something"
out=$("$tool" status --carry .devbundle/adaload.xz) || fail "status: exit $?"
grep -q "^not lean" <<<"$out" || fail "status before lean: $out"
before=$(sed -n 's/.*travels: \([0-9]*\) bytes.*/\1/p' <<<"$out")
out=$("$tool" status) || fail "status: exit $?"
nocarry=$(sed -n 's/.*travels: \([0-9]*\) bytes.*/\1/p' <<<"$out")
[ "$((before - nocarry))" = 5000 ] || fail "status: --carry of a 5000-byte file added $((before - nocarry)) bytes"

# refusals: exit 2, nothing changed
refused() { # refused WHAT ARGS... -- exit 2 and index + exclude as they were
  local what=$1 rc; shift
  out=$("$tool" "$@" 2>&1); rc=$?
  [ "$rc" = 2 ] || fail "$what: exit $rc, want 2 ($out)"
  [ "$(git ls-files -s)" = "$index0" ] && [ "$(cat "$excl")" = "$excl0" ] || fail "$what: changed the index or $excl"
}
refused "KEEP outside results/" lean src
refused "KEEP untracked" lean results/gpu/bench/r3
refused "KEEP missing" lean results/gpu/bench/nope
refused "unknown command" bogus
refused "--also with staged changes" lean --also src
refused "--also under results/" lean --also results/gpu
refused "--also untracked" lean --also nope
refused "--also an odd name" lean --also 'e xp'
refused "--also with .." lean --also exp/../src
refused "restore --also" restore --also exp
git add results/gpu/bench/r3/meta.json
index_staged=$(git ls-files -s)
out=$("$tool" lean 2>&1); rc=$?
[ "$rc" = 2 ] && grep -q "staged changes under results/" <<<"$out" || fail "lean with a staged results file: exit $rc ($out)"
[ "$(git ls-files -s)" = "$index_staged" ] && [ "$(cat "$excl")" = "$excl0" ] || fail "the refused lean changed something"
git reset -q HEAD -- results/gpu/bench/r3/meta.json
[ "$(git status --porcelain)" = "$porc0" ] || fail "test set-up: unstaging r3"

# lean, keeping one run folder (given with a trailing slash)
out=$("$tool" lean results/gpu/bench/r1/ 2>&1) || fail "lean: exit $? ($out)"
echo "$out" | sed 's/^/  | /'
want=$(printf '%s\n' results/gpu/bench/r1/bench.json results/gpu/bench/r1/meta.json results/index.jsonl)
[ "$(git ls-files -- results)" = "$want" ] || fail "tracked under results/ after lean: $(git ls-files -- results)"
[ "$(sums)" = "$sums0" ] || fail "lean changed a file on disk"
[ "$(git diff --cached --name-only HEAD -- src)" = src/a.c ] || fail "lean touched what was staged outside results/"
git ls-files -o --exclude-standard | grep -q '^results/' && fail "untracked results files still travel: $(git ls-files -o --exclude-standard)"
git ls-files -o --exclude-standard | grep -qx src/new.c || fail "lean hid an untracked file outside results/"
git status --porcelain | grep -q '^D  results/gpu/bench/r2/bench.json$' || fail "r2 not untracked: $(git status --porcelain)"
lean=$(sed -n 's/.*travels: \([0-9]*\) bytes.*/\1/p' <<<"$out")
[ -n "$lean" ] && [ "$lean" -lt "$nocarry" ] || fail "lean's travelling size $lean is not below $nocarry"
out=$("$tool" status) || fail "status when lean: exit $?"
grep -q "^lean" <<<"$out" || fail "status when lean: $out"
# a linked worktree of the same repository is not lean (the exclude file is shared)
git worktree add -q "$work/wt" HEAD 2>/dev/null || fail "git worktree add"
out=$(cd "$work/wt" && "$tool" status) || fail "status in the worktree: exit $?"
grep -q "^not lean" <<<"$out" || fail "a linked worktree reads as lean: $out"
out=$(cd "$work/wt" && "$tool" restore) || fail "restore in the worktree: exit $?"
grep -q "not lean" <<<"$out" || fail "restore in the worktree: $out"
git worktree remove --force "$work/wt" || fail "git worktree remove"

# a second lean is refused
index_lean=$(git ls-files -s) excl_lean=$(cat "$excl")
out=$("$tool" lean 2>&1); rc=$?
[ "$rc" = 2 ] && grep -q "already lean" <<<"$out" || fail "second lean: exit $rc ($out)"
[ "$(git ls-files -s)" = "$index_lean" ] && [ "$(cat "$excl")" = "$excl_lean" ] || fail "the second lean changed something"

# restore gives everything back; a second restore is a no-op
out=$("$tool" restore 2>&1) || fail "restore: exit $? ($out)"
echo "$out" | sed 's/^/  | /'
[ "$(git status --porcelain)" = "$porc0" ] || fail "restore: git status --porcelain differs:
$(diff <(echo "$porc0") <(git status --porcelain))"
[ "$(git ls-files -s)" = "$index0" ] || fail "restore: the index differs"
[ "$(cat "$excl")" = "$excl0" ] || fail "restore: $excl differs"
[ "$(sums)" = "$sums0" ] || fail "restore changed a file on disk"
out=$("$tool" restore 2>&1) || fail "second restore: exit $?"
grep -q "not lean" <<<"$out" || fail "second restore says: $out"
[ "$(git status --porcelain)" = "$porc0" ] || fail "second restore changed the status"

# lean without KEEP keeps the index only
"$tool" lean >/dev/null || fail "lean without KEEP: exit $?"
[ "$(git ls-files -- results)" = results/index.jsonl ] || fail "lean without KEEP tracks: $(git ls-files -- results)"
"$tool" restore >/dev/null || fail "restore: exit $?"
[ "$(git status --porcelain)" = "$porc0" ] && [ "$(cat "$excl")" = "$excl0" ] || fail "second round: not restored"
# a lean cut short after its exclude lines (the index as it was): restore still cleans up
"$tool" lean >/dev/null && git reset -q HEAD -- results || fail "lean, then the index by hand"
out=$("$tool" restore) || fail "restore of a cut-short lean: exit $?"
grep -q "restored: 0 index entries" <<<"$out" || fail "restore of a cut-short lean says: $out"
[ "$(git status --porcelain)" = "$porc0" ] && [ "$(cat "$excl")" = "$excl0" ] || fail "cut-short lean: not restored"
# --also: a tracked folder outside results/ untracked and ignored with it, given back by restore
out=$("$tool" lean --also exp/ 2>&1) || fail "lean --also: exit $? ($out)"
echo "$out" | sed 's/^/  | /'
[ -z "$(git ls-files -- exp)" ] || fail "lean --also left tracked: $(git ls-files -- exp)"
git ls-files -o --exclude-standard | grep -q '^exp/' && fail "--also's files still travel: $(git ls-files -o --exclude-standard)"
[ "$(sums)" = "$sums0" ] || fail "lean --also changed a file on disk"
[ "$(git diff --cached --name-only HEAD -- src)" = src/a.c ] || fail "lean --also touched what was staged outside"
also=$(sed -n 's/.*travels: \([0-9]*\) bytes.*/\1/p' <<<"$out")
[ -n "$also" ] && [ "$((lean - also))" -ge 5000 ] || fail "lean --also travels $also bytes, not 5000 below lean's $lean"
out=$("$tool" status) || fail "status when lean --also: exit $?"
grep -q "also untracked (--also): exp" <<<"$out" || fail "status when lean --also: $out"
out=$("$tool" restore 2>&1) || fail "restore after --also: exit $? ($out)"
grep -q "and exp back" <<<"$out" || fail "restore after --also says: $out"
[ "$(git status --porcelain)" = "$porc0" ] && [ "$(git ls-files -s)" = "$index0" ] || fail "--also: not restored
$(diff <(echo "$porc0") <(git status --porcelain))"
[ "$(cat "$excl")" = "$excl0" ] || fail "--also: $excl differs after restore"
git log --oneline | wc -l | grep -qx 1 || fail "a commit was made"
echo PASS
