#!/usr/bin/env bash
# ci/kernel_barriers.sh [BUILD_DIR] -- the hardware barriers each built CUDA kernel reserves
# (EIATTR_NUM_BARRIERS of its cubin, read with cuobjdump -elf), against ci/kernel_barriers.allow.
#
# Why: a kernel that names a barrier (bar.sync / bar.arrive ID, count) reserves barriers up to
# that ID for every CTA of every launch -- all 16 when the ID is a run-time value -- whatever
# path the launch takes. On an H100 (2026-12-05) the forward v2 tile kernel gained run-time
# named barriers for its lag path, and its warp-a-row launches (small CTAs, many a SM, same
# kernel) ran up to 2.5x slower at unchanged registers: kernels/NOTES.md. __syncthreads is
# barrier 0 (one reserved). A kernel may reserve more than one only where the allow file names
# it (a pattern on its mangled name, with the reason).
#
# Prints "barriers kernel" for every kernel with more than one. Exit: 0 none outside the allow
# file; 1 one is (named); 2 no built objects in BUILD_DIR (default build-device); 77 no
# cuobjdump (the NVIDIA CUDA toolkit's, or `pip install nvidia-cuda-cuobjdump`; set CUOBJDUMP
# to its path): nothing checked.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=${1:-$root/build-device}
allow=$root/ci/kernel_barriers.allow
co=${CUOBJDUMP:-$(command -v cuobjdump || true)}
if [ -z "$co" ] && [ -x /usr/local/cuda/bin/cuobjdump ]; then co=/usr/local/cuda/bin/cuobjdump; fi
if [ -z "$co" ] || [ ! -x "$co" ]; then
  echo "kernel_barriers.sh: no cuobjdump (PATH, /usr/local/cuda/bin, \$CUOBJDUMP): barriers not checked" >&2
  exit 77
fi
shopt -s nullglob
objs=("$bdir"/kernels/CMakeFiles/*.dir/*.cu.o)
[ ${#objs[@]} -gt 0 ] || { echo "kernel_barriers.sh: no CUDA objects under $bdir/kernels" >&2; exit 2; }
pats=()
while read -r pat _; do
  case $pat in ''|'#'*) ;; *) pats+=("$pat") ;; esac
done <"$allow"
# "barriers mangled-name" for each kernel reserving more than one (the value is hex).
many=$(for o in "${objs[@]}"; do "$co" -elf "$o" 2>/dev/null; done | awk '
  /^\.nv\.info\./ { fn = substr($1, 10) }
  /EIATTR_NUM_BARRIERS/ { want = 2; next }
  want && /Value:/ { if ($2 != "0x0" && $2 != "0x1") print $2, fn; want = 0; next }
  want { want-- }' | sort -u)
bad=0 count=0
while read -r v fn; do
  [ -n "$fn" ] || continue
  count=$((count + 1))
  ok=0
  for pat in "${pats[@]}"; do [[ "$fn" == *"$pat"* ]] && ok=1; done
  echo "$((v)) $(c++filt "$fn")$([ $ok = 1 ] && echo "  (allowed)")"
  [ $ok = 1 ] || bad=1
done <<<"$many"
if [ $bad = 1 ]; then
  echo "kernel_barriers.sh: a kernel above reserves more than one barrier and ci/kernel_barriers.allow does not name it" >&2
  exit 1
fi
echo "kernel_barriers.sh: $count kernel(s) with more than one barrier, all allowed (${#objs[@]} objects)"
