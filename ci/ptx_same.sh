#!/usr/bin/env bash
# ci/ptx_same.sh [--kernels] REV [FILE.cu...] -- did a change move kernels it did not mean to? Compiles each
# FILE (default: every kernels/lnmod_*.cu but the fused op's lnmod_res_* and the registry) at REV
# and in this tree to PTX for sm_90, with the build's defines, and compares them after blanking
# the anonymous namespace's per-file hashes (_GLOBAL__N__xxxxxxxx_<n>_<file>_cu_yyyyyyyy, both
# -> 00000000, the mangled names' lengths kept: they follow the path and the file's bytes --
# a comment changes them -- not the code). Identical PTX means identical machine code from the same ptxas: such a kernel's speed
# cannot have moved with the change, at any width or layout. Needs nvcc (no GPU).
# Prints a line a file; --kernels adds, under a file that differs, a line a kernel
# (ci/ptx_entries.py: same, same-body -- only its parameter declarations changed -- or DIFFERS,
# registers and labels renumbered by first use; 2026-12-06: the 40 static chunk kernels of
# lnmod-ticket round 4 same-body, the 72 ticket ones DIFFERS). Exit 0 all identical, 1 some
# differ, 2 bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kernels=0; [ "${1:-}" = --kernels ] && { kernels=1; shift; }
[ $# -ge 1 ] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
rev=$1; shift
git -C "$root" rev-parse --verify -q "$rev^{commit}" >/dev/null || { echo "ptx_same.sh: no commit $rev" >&2; exit 2; }
export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "ptx_same.sh: no nvcc here" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive "$rev" kernels reference | tar x -C "$tmp"
mkdir "$tmp/new" && cp -r "$root/kernels" "$root/reference" "$tmp/new/"
if [ $# -eq 0 ]; then
  for p in "$root"/kernels/lnmod_*.cu; do
    f=${p##*/}
    case $f in lnmod_res_* | lnmod_registry.cu) ;; *) set -- "$@" "$f" ;; esac
  done
fi
ptx() { # ptx TREE FILE OUT
  nvcc -O3 -DNDEBUG -DADALOAD_KERNEL_BACKWARD=1 -arch=compute_90 -std=c++17 -I"$1/kernels" -I"$1/reference" \
    -ptx "$1/kernels/$2" -o - | sed -E 's/(_GLOBAL__N__)[0-9a-f]{8}(_[0-9]+_[A-Za-z0-9_]*_cu_)[0-9a-f]{8}/\100000000\200000000/g; s/_GLOBAL__N__[0-9a-f]{8}/_GLOBAL__N__00000000/g' >"$3"
}
rc=0
for f in "$@"; do
  if [ ! -f "$tmp/kernels/$f" ]; then echo "$f: not at $rev"; rc=1; continue; fi
  if ! { ptx "$tmp" "$f" "$tmp/old.ptx" && ptx "$tmp/new" "$f" "$tmp/new.ptx"; }; then
    echo "$f: does not compile"; rc=1; continue
  fi
  if cmp -s "$tmp/old.ptx" "$tmp/new.ptx"; then
    echo "$f: identical PTX ($(grep -c '\.entry ' "$tmp/new.ptx") kernels)"
  else
    echo "$f: DIFFERS ($(diff "$tmp/old.ptx" "$tmp/new.ptx" | grep -c '^[<>]') lines)"; rc=1
    [ "$kernels" = 1 ] && { python3 "$root/ci/ptx_entries.py" "$tmp/old.ptx" "$tmp/new.ptx" | sed 's/^/  /' || true; }
  fi
done
exit $rc
