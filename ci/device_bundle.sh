#!/usr/bin/env bash
# ci/device_bundle.sh -- build what a GPU machine needs, here, for a lent GPU machine that has
# the CUDA driver but none of the Debian libraries: build-device/ (Release, sm_90) and
# build-device-slow/ (the same with ADALOAD_SLOW_VARIANT=ON, for the regression check), each
# with the shared libraries adaload needs copied into build-*/lib (found through RPATH
# $ORIGIN/lib, so child processes such as python3 keep their own libraries).
# Then run ci/device_run.sh on the GPU machine with build-device and build-device-slow carried.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH=/usr/local/cuda/bin:$PATH
archs=${CUDA_ARCHS:-90}
for variant in device device-slow; do
  bdir=$root/build-$variant
  extra=()
  [ "$variant" = device-slow ] && extra=(-DADALOAD_SLOW_VARIANT=ON)
  cmake -S "$root" -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    '-DCMAKE_BUILD_RPATH=$ORIGIN/lib' "${extra[@]}" >"$bdir.configure.log" 2>&1 \
    || { cat "$bdir.configure.log"; exit 1; }
  cmake --build "$bdir" --target adaload -j "$(nproc)"
  mkdir -p "$bdir/lib"
  # Every non-glibc library the binary loads (glibc, libstdc++ and libgcc come from the host).
  ldd "$bdir/adaload" | awk '/=>/ {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
      *) cp -L "$lib" "$bdir/lib/" ;;
    esac
  done
done
# The git state travels as a file: the device copy of the tree has no .git.
{ echo "ADALOAD_GIT_SHA=$(git -C "$root" rev-parse HEAD)"
  if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then echo "ADALOAD_GIT_DIRTY=1"; else echo "ADALOAD_GIT_DIRTY=0"; fi
} >"$root/build-device/git.env"
du -sh "$root/build-device" "$root/build-device-slow"
