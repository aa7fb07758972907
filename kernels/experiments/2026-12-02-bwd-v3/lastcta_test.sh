#!/usr/bin/env bash
# lastcta_test.sh [TREE] -- builds and runs lastcta_test.c against TREE's kernels/ (a checkout
# with explore-lastcta.patch applied; default: HEAD's kernels/ exported to a temporary folder
# (git archive, no worktree) with the patch applied there), then each planted bug, which must
# fail it. CPU only, a few seconds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel)"
tree="${1:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ -z "$tree" ]]; then
  mkdir "$tmp/tree"
  git -C "$repo" archive HEAD kernels | tar -x -C "$tmp/tree"
  (cd "$tmp/tree" && git apply "$here/explore-lastcta.patch")
  tree="$tmp/tree"
fi
cc=(${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wvla -I"$tree/kernels")
"${cc[@]}" "$here/lastcta_test.c" -o "$tmp/lastcta_test"
"$tmp/lastcta_test"
for plant in LASTWAIT LASTORDER LASTALL; do # each must fail it
  "${cc[@]}" -DLNMOD_BULK_PLANT_$plant "$here/lastcta_test.c" -o "$tmp/lastcta_test_plant"
  if "$tmp/lastcta_test_plant" >"$tmp/plant.log" 2>&1; then
    echo "lastcta_test.sh: lastcta_test passed with LNMOD_BULK_PLANT_$plant planted" >&2
    exit 1
  fi
  echo "lastcta_test with LNMOD_BULK_PLANT_$plant: fails, as it must ($(tail -1 "$tmp/plant.log"))"
done
