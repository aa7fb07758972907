#!/usr/bin/env bash
# ci/device_bundle.sh [--no-slow] -- build, here, what a lent GPU machine needs (it has the
# CUDA driver but none of the Debian libraries) into .devbundle/:
#   adaload        Release build for sm_90 (build-device/)
#   adaload-slow   the same with ADALOAD_SLOW_VARIANT=ON (build-device-slow/), for the
#                  regression check of `adaload compare` (skipped with --no-slow)
#   lib/           the shared libraries adaload loads beyond glibc/libstdc++ (found through
#                  RPATH $ORIGIN/lib, so child processes such as python3 keep their own)
#   git.env        ADALOAD_GIT_SHA / ADALOAD_GIT_DIRTY: the device copy of the tree has no .git
# Then, on the GPU machine with .devbundle carried: ci/device_run.sh quick|full.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH=/usr/local/cuda/bin:$PATH
archs=${CUDA_ARCHS:-90}
builds=(device device-slow)
[ "${1:-}" = "--no-slow" ] && builds=(device)
bundle=$root/.devbundle
rm -rf "$bundle"
mkdir -p "$bundle/lib"
for variant in "${builds[@]}"; do
  bdir=$root/build-$variant
  extra=()
  [ "$variant" = device-slow ] && extra=(-DADALOAD_SLOW_VARIANT=ON)
  cmake -S "$root" -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    '-DCMAKE_BUILD_RPATH=$ORIGIN/lib' "${extra[@]}" >"$bdir.configure.log" 2>&1 \
    || { cat "$bdir.configure.log"; exit 1; }
  cmake --build "$bdir" --target adaload -j "$(nproc)"
  name=adaload; [ "$variant" = device-slow ] && name=adaload-slow
  strip -o "$bundle/$name" "$bdir/adaload"
  ldd "$bdir/adaload" | awk '/=>/ {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
      *) cp -L "$lib" "$bundle/lib/" ;;
    esac
  done
done
{ echo "ADALOAD_GIT_SHA=$(git -C "$root" rev-parse HEAD)"
  if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then echo "ADALOAD_GIT_DIRTY=1"; else echo "ADALOAD_GIT_DIRTY=0"; fi
} >"$bundle/git.env"
du -sh "$bundle"
