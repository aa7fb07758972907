#!/usr/bin/env bash
# ci/build.sh [BUILD_DIR] [extra cmake args...] -- configure and build (Release-with-debug-info).
# The CUDA toolkit is picked up when nvcc is on PATH or in /usr/local/cuda/bin.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=${1:-$root/build}
shift || true
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cmake -S "$root" -B "$bdir" "$@" >"$bdir.configure.log" 2>&1 || { cat "$bdir.configure.log"; exit 1; }
grep -E "adaload:|CMake Warning" -A2 "$bdir.configure.log" | grep -v "^--$" || true
cmake --build "$bdir" -j "$(nproc)"
