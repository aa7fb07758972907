#!/usr/bin/env bash
# ci/layout_check.sh [ROOT] -- the project's layout rules, checked on the tracked files
# (CTest: layout_check):
#   1. no top-level folder holds more than a third of the code (lines of source files:
#      *.c *.h *.cc *.cu *.cuh *.py *.sh *.cmake CMakeLists.txt; data -- datasets' CSV,
#      goldens, results/ -- is not code);
#   2. no source file over 600 lines;
#   3. no function over 150 lines in the libraries and the harness (C/C++/CUDA files whose
#      function bodies open with '{' and close with '}' in column 0, the project's style);
#   4. no libFuzzer artifact (crash-*, leak-*, timeout-*, oom-*, slow-unit-*) outside a seed
#      corpus fuzz/corpus/<target>/ (where one is kept under a name that says what it is).
# Prints every violation and exits 1 if there is one, else prints the table and exits 0.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
max_file=600
max_func=150
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files -co --exclude-standard)
else
  files=$(find . -type f | sed 's|^\./||')
fi
src=$(printf '%s\n' "$files" | grep -E '(\.(c|h|cc|cu|cuh|py|sh|cmake)|(^|/)CMakeLists\.txt)$' \
      | grep -vE '^(results|build[^/]*|\.devbundle|\.devlibs)/' || true)
fail=0
total=0
declare -A per
while IFS= read -r f; do
  [ -f "$f" ] || continue
  n=$(wc -l <"$f")
  total=$((total + n))
  top=${f%%/*}
  [ "$top" = "$f" ] && top=.
  per[$top]=$(( ${per[$top]:-0} + n ))
  if [ "$n" -gt "$max_file" ]; then
    echo "layout: $f has $n lines (limit $max_file)"
    fail=1
  fi
  case "$f" in
    kernels/*|reference/*|planner/*|verify/*|bench/*|runs/*|common/*|harness/*)
      case "$f" in
        *.c|*.cc|*.cu|*.cuh|*.h)
          awk -v F="$f" -v M="$max_func" '/^\{/{s=NR} /^\}/{ if (s) { if (NR - s - 1 > M) printf "layout: %s:%d: a function of %d lines (limit %d)\n", F, s, NR - s - 1, M; s = 0 } }' "$f" \
            | { if grep .; then exit 1; fi; } || fail=1 ;;
      esac ;;
  esac
done <<<"$src"
while IFS= read -r f; do
  case "$f" in fuzz/corpus/*) continue ;; esac
  case "${f##*/}" in
    crash-*|leak-*|timeout-*|oom-*|slow-unit-*)
      echo "layout: $f is a libFuzzer artifact: reproduce it, keep it as a named seed in fuzz/corpus/<target>/ or delete it"
      fail=1 ;;
  esac
done <<<"$files"
echo "lines of code per folder (total $total):"
for k in "${!per[@]}"; do
  awk -v k="$k" -v n="${per[$k]}" -v t="$total" 'BEGIN { printf "  %-12s %6d  %5.1f%%\n", k, n, 100 * n / t }'
done | sort -k2 -n -r
for k in "${!per[@]}"; do
  if [ $((3 * per[$k])) -gt "$total" ]; then
    echo "layout: $k/ holds ${per[$k]} of $total lines, more than a third"
    fail=1
  fi
done
if [ "$fail" -ne 0 ]; then
  echo "layout: FAILED"
  exit 1
fi
echo "layout: ok"
