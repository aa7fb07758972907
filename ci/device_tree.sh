#!/usr/bin/env bash
# ci/device_tree.sh lean [KEEP...] [--also DIR...] [--carry P...] | restore | status [--carry P...]
# -- keeps a device call under the device tool's 64 MiB. The tool copies the checkout's
# tracked files, its untracked files that git does not ignore and the call's `carry` paths;
# results/ (committed run folders, ~40 MB and growing) is most of the tracked tree. Run it in
# the checkout the call copies (any folder of it):
#   lean     untracks results/ in the index only (one `git rm --cached`; no file on disk is
#            read, changed or removed, nothing is committed) and ignores it through a marked
#            pair of lines in .git/info/exclude, so neither its tracked nor its untracked
#            files travel. Stays tracked (and travels): results/index.jsonl -- every device
#            mode appends its new runs to it and results.tgz brings it back to overwrite the
#            one here, so it must be the full index (appending never looks at the folders
#            the older lines name) -- and each KEEP, a path under results/ with tracked files
#            that a mode reads: `device_run.sh aa LEASE1_RUN` reads LEASE1_RUN, and its
#            `compare --history` judges against the bench runs present there (keep
#            results/<gpu>/bench for the full history, else LEASE1_RUN is the history). No
#            other mode reads older run folders. An untracked KEEP cannot travel while lean:
#            name it in the call's carry instead. Refuses (exit 2) when the index has staged
#            changes under results/ (restore could not give them back) or is already lean.
#            --also DIR: a tracked folder outside results/ that the call does not need
#            (kernels/experiments/, 4 MB, when two 25 MB builds travel) is untracked and
#            ignored the same way, and restore gives it back with results/; refused when DIR
#            has no tracked file, has staged changes, or its name has characters other than
#            letters, digits, '.', '_', '-' and '/'.
#            Prints the size that will travel. Run ci/device_bundle.sh BEFORE lean: its
#            git.env takes the dirty flag from `git status`, which sees the untracked
#            results/ as deletions. Do not commit while lean (the commit would delete
#            results/).
#   restore  undoes lean: the index entries under results/ that lean removed come back from
#            HEAD (one `git reset`; whatever else is staged stays), then the marked lines
#            leave .git/info/exclude. Idempotent: when not lean it says so and exits 0.
#   status   lean or not, and the travelling size: tracked + untracked-not-ignored files, and
#            the --carry paths when given (each file counted once), against 64 MiB.
# .git/info/exclude is shared by all worktrees of a repository: while one is lean, the
# others' untracked files under results/ are ignored too (their tracked files are not).
# Exit: 0 done; 1 a git command failed (nothing half-done: the index is written by one
# command, the exclude file replaced whole); 2 refused or bad usage.
set -euo pipefail
limit=$((64 * 1024 * 1024))
usage() { sed -n '2p' "$0" | sed 's/^# //' >&2; echo '(--help: what each does)' >&2; exit 2; }
die() { echo "ci/device_tree.sh: $*" >&2; exit 2; }
[ $# -ge 1 ] || usage
cmd=$1; shift
case "$cmd" in lean|restore|status) ;; -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; *) usage ;; esac
top=$(git rev-parse --show-toplevel 2>/dev/null) || die "not inside a git checkout"
cd "$top"
git rev-parse -q --verify HEAD >/dev/null || die "no commit yet: nothing to make lean"
excl=$(git rev-parse --git-path info/exclude)
case "$excl" in /*) ;; *) excl=$top/$excl ;; esac
# The marker names this checkout, so each worktree's lean is its own.
tag="# adaload ci/device_tree.sh lean: $top "
export DT_TAG=$tag
g() { git --literal-pathspecs "$@"; }

keeps=() carry=() also=()
into=keep
for a in "$@"; do
  case "$a" in
    --carry) into=carry ;;
    --also) into=also ;;
    -*) die "unknown option $a" ;;
    *) case "$into" in carry) carry+=("$a") ;; also) also+=("$a") ;; *) keeps+=("$a") ;; esac ;;
  esac
done
[ "$cmd" = lean ] || [ ${#keeps[@]} -eq 0 ] || die "$cmd takes no KEEP paths (only --carry P...)"
[ "$cmd" = lean ] || [ ${#also[@]} -eq 0 ] || die "$cmd takes no --also (lean's folders come back with restore)"
[ "$cmd" != restore ] || [ ${#carry[@]} -eq 0 ] || die "restore takes no arguments"

marker() { [ -f "$excl" ] && awk 'index($0, ENVIRON["DT_TAG"]) == 1 { f = 1 } END { exit !f }' "$excl"; }
marker_line() { awk 'index($0, ENVIRON["DT_TAG"]) == 1' "$excl" | head -1; }
since() { marker_line | sed 's/.*head=/head=/; s/ (ci.*//'; } # "head=<sha> at=<time>[ also=..]" of the lean
marker_also() { marker_line | sed -n 's/.* also=\([^ ]*\) (ci.*/\1/p' | tr ',' '\n'; } # lean's --also folders
# Replaces the exclude file whole (a temporary beside it, renamed): never half-written.
write_excl() { # write_excl add|drop
  local d tmp
  d=$(dirname "$excl"); mkdir -p "$d"
  tmp=$(mktemp "$d/.exclude.device_tree.XXXXXX")
  if [ -f "$excl" ]; then chmod --reference="$excl" "$tmp"; else chmod 644 "$tmp"; fi
  if [ "$1" = add ]; then
    { [ -f "$excl" ] && cat "$excl"
      if [ ${#also[@]} -eq 0 ]; then
        printf '%shead=%s at=%s (ci/device_tree.sh restore removes this line and the next)\n' \
          "$tag" "$(git rev-parse HEAD)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
      else
        printf '%shead=%s at=%s also=%s (ci/device_tree.sh restore removes this line and the ones it wrote after it)\n' \
          "$tag" "$(git rev-parse HEAD)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(IFS=,; echo "${also[*]}")"
      fi
      echo /results/
      for d in "${also[@]}"; do echo "/$d/"; done; } >"$tmp"
  else # the marker, the /results/ line and its also lines after it; nothing else
    awk 'skip { if ($0 == "/results/" || ($0 in mine)) next; skip = 0 }
         index($0, ENVIRON["DT_TAG"]) == 1 {
           skip = 1; delete mine
           if (match($0, / also=[^ ]*/)) { n = split(substr($0, RSTART + 6, RLENGTH - 6), a, ","); for (i = 1; i <= n; i++) mine["/" a[i] "/"] = 1 }
           next }
         { print }' "$excl" >"$tmp"
  fi || { rm -f "$tmp"; return 1; }
  mv -f "$tmp" "$excl"
}

sum_sizes() { # NUL-separated paths on stdin -> bytes of those that exist (links: their own size)
  xargs -0 -r stat -c %s -- 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }' || true
}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
carry_files() { # the files under the carry paths, NUL-separated
  local p
  for p in "${carry[@]}"; do
    p=${p%/}; p=${p#./}
    [ -e "$p" ] || [ -L "$p" ] || continue
    find "$p" \( -type f -o -type l \) -print0
  done
}
estimate() { # prints the travelling sizes
  local tr un ca all p
  tr=$(git ls-files -z | sum_sizes)
  un=$(git ls-files -z -o --exclude-standard | sum_sizes)
  echo "  tracked files:             $tr bytes ($(mib "$tr"))"
  echo "  untracked, not ignored:    $un bytes ($(mib "$un"))"
  for p in "${carry[@]}"; do
    if [ -e "$p" ] || [ -L "$p" ]; then
      ca=$(find "${p%/}" \( -type f -o -type l \) -print0 | sum_sizes)
      echo "  carry $p: $ca bytes ($(mib "$ca"))"
    else
      echo "  carry $p: not here (the device tool removes it there)"
    fi
  done
  all=$({ git ls-files -z; git ls-files -z -o --exclude-standard; carry_files; } | sort -zu | sum_sizes)
  if [ "$all" -le "$limit" ]; then
    echo "  travels: $all bytes ($(mib "$all")) of 64 MiB: fits, $(mib $((limit - all))) to spare"
  else
    echo "  travels: $all bytes ($(mib "$all")) of 64 MiB: OVER by $(mib $((all - limit)))"
  fi
}

case "$cmd" in
status)
  if marker; then
    n=$(git diff --cached --diff-filter=D --name-only -z HEAD -- results | tr -cd '\0' | wc -c)
    echo "lean: results/ untracked in the index ($n entries), ignored by $excl"
    echo "  since: $(since)"
    a=$(marker_also | tr '\n' ' '); [ -z "$a" ] || echo "  also untracked (--also): $a"
    echo "  still tracked under results/: $(git ls-files -- results | wc -l) files"
  else
    echo "not lean: results/ tracked as in HEAD ($(git ls-files -- results | wc -l) files)"
  fi
  estimate ;;
lean)
  marker && die "already lean ($(since)): ci/device_tree.sh restore first"
  if ! git diff --cached --quiet HEAD -- results; then
    git diff --cached --name-status HEAD -- results | head -5 >&2
    die "the index has staged changes under results/ (above): commit or unstage them first (restore could not give them back)"
  fi
  [ -n "$(git ls-files -- results | head -1)" ] || die "nothing under results/ is tracked: nothing to make lean"
  for i in "${!also[@]}"; do
    d=${also[$i]#./}
    while [ "$d" != "${d%/}" ]; do d=${d%/}; done
    [[ "$d" =~ ^[A-Za-z0-9._/-]+$ ]] || die "--also ${also[$i]}: only letters, digits, '.', '_', '-' and '/' in its name"
    case "/$d/" in */../*|*/./*|//) die "--also ${also[$i]}: give it without . or .. parts" ;; esac
    case "$d/" in results/*) die "--also $d: results/ is lean's own (KEEP paths under it stay)" ;; esac
    [ -n "$(g ls-files -- "$d" | head -1)" ] || die "--also $d: no tracked file there"
    g diff --cached --quiet HEAD -- "$d" || die "--also $d: the index has staged changes there: commit or unstage them first"
    also[i]=$d
  done
  keepspecs=()
  [ -n "$(git ls-files -- results/index.jsonl)" ] && keepspecs+=(results/index.jsonl)
  for k in "${keeps[@]}"; do
    k=${k#./}
    while [ "$k" != "${k%/}" ]; do k=${k%/}; done
    case "$k" in results/?*) ;; *) die "KEEP $k: not a path under results/ (everything else stays tracked anyway)" ;; esac
    case "/$k/" in */../*|*/./*) die "KEEP $k: give it without . or .. parts" ;; esac
    [ -n "$(g ls-files -- "$k" | head -1)" ] ||
      die "KEEP $k: no tracked file there; an untracked path cannot travel while results/ is ignored: name it in the call's carry instead (or commit it first)"
    u=$(g ls-files -o --exclude-standard -- "$k" | wc -l)
    [ "$u" = 0 ] || echo "note: KEEP $k holds $u untracked file(s): they will not travel while lean (name them in carry)"
    keepspecs+=("$k")
  done
  list=$(mktemp); trap 'rm -f "$list"' EXIT
  # Every tracked file under results/ but those kept (HEAD's entries: nothing is staged there).
  g ls-files -z -- results | if [ ${#keepspecs[@]} -gt 0 ]; then
    awk -v RS='\0' -v ORS='\0' -v K="$(printf '%s\n' "${keepspecs[@]}")" \
      'BEGIN { n = split(K, k, "\n") } { for (i = 1; i <= n; i++) if (k[i] != "" && ($0 == k[i] || index($0, k[i] "/") == 1)) next; print }'
  else cat; fi >"$list"
  n=$(tr -cd '\0' <"$list" | wc -c)
  [ "$n" -gt 0 ] || die "the KEEP paths are all of results/: nothing to untrack"
  na=0
  if [ ${#also[@]} -gt 0 ]; then
    na=$(g ls-files -z -- "${also[@]}" | tee -a "$list" | tr -cd '\0' | wc -c)
  fi
  untr=$(g ls-files -o --exclude-standard -- results | wc -l)
  # The marker first: if this is cut short after it, status says lean and restore undoes it.
  write_excl add || { echo "ci/device_tree.sh: cannot write $excl" >&2; exit 1; }
  if ! g rm -q -r --cached --pathspec-from-file="$list" --pathspec-file-nul; then
    write_excl drop || true
    echo "ci/device_tree.sh: git rm --cached failed: nothing changed (the exclude lines taken back)" >&2
    exit 1
  fi
  echo "lean: $n files under results/ untracked in the index (on disk as they were), results/ ignored by $excl"
  [ ${#also[@]} -eq 0 ] || echo "  and $na files under ${also[*]} (--also), ignored the same way"
  echo "  still tracked (travel): ${keepspecs[*]:-nothing}"
  [ "$untr" = 0 ] || echo "  $untr untracked file(s) under results/ no longer travel either (name one in carry if a mode needs it)"
  estimate
  echo "after the call: ci/device_tree.sh restore (and do not commit before it)" ;;
restore)
  if ! marker; then
    echo "not lean: nothing to restore"
    if [ -f "$excl" ] && grep -qx '/results/' "$excl"; then
      echo "note: $excl has a /results/ line that ci/device_tree.sh did not write: left alone"
    fi
    exit 0
  fi
  was=$(marker_line | sed -n 's/.*head=\([0-9a-f]*\).*/\1/p')
  list=$(mktemp); trap 'rm -f "$list"' EXIT
  mapfile -t mine < <(marker_also)
  g diff --cached --diff-filter=D --name-only -z HEAD -- results "${mine[@]}" >"$list"
  n=$(tr -cd '\0' <"$list" | wc -c)
  if [ "$n" -gt 0 ] && ! g reset -q HEAD --pathspec-from-file="$list" --pathspec-file-nul; then
    echo "ci/device_tree.sh: git reset failed: still lean (run restore again)" >&2
    exit 1
  fi
  write_excl drop || { echo "ci/device_tree.sh: the index is restored but $excl could not be rewritten: run restore again" >&2; exit 1; }
  echo "restored: $n index entries under results/${mine[*]:+ and ${mine[*]}} back from HEAD (files on disk untouched), the lean lines removed from $excl"
  if [ -n "$was" ] && [ "$was" != "$(git rev-parse HEAD)" ]; then
    echo "warning: HEAD moved since lean (${was:0:12} -> $(git rev-parse --short=12 HEAD)): a commit made while lean may record results/ as deleted -- check: git diff --stat $was HEAD -- results"
  fi ;;
esac
