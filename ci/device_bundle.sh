#!/usr/bin/env bash
# ci/device_bundle.sh [--no-slow] -- build, here, what a lent GPU machine needs (it has the
# CUDA driver but none of the Debian libraries) into .devbundle/:
#   adaload        Release build for sm_90 (build-device/)
#   adaload-slow   the same with ADALOAD_SLOW_VARIANT=ON (build-device-slow/), for the
#                  regression check of `adaload compare` (skipped with --no-slow)
#   lib.tar.xz     the shared libraries adaload loads beyond glibc/libstdc++, compressed to
#                  fit the device tool's 64 MiB carry limit; device_run.sh unpacks them into
#                  lib/ (found through RPATH $ORIGIN/lib, so python3 keeps its own)
#   adaload-<tag>  extra experiment builds: EXTRA_BUILDS="tag:cmake-args;..." (optional)
#   adaload-base   with BASE_REV=<rev> (optional): adaload built from that revision (a worktree
#                  in build-base/src, built in build-base/build), the same-lease baseline of
#                  ci/device_run.sh sweep; base.env says its commit and kernel sources
#                  (ci/land_patch.sh prepare sets BASE_REV to the commit before the patch)
#   plugins/       the example plug-in and its planted-bug build (kernels/plugin/), for MODE plugin
#   libadaload.so  the Python package's library (kernels + planner), for MODE e2e's adaload kernel
#   git.env        ADALOAD_GIT_SHA / ADALOAD_GIT_DIRTY: the device copy of the tree has no .git
#   <program>.xz   adaload, adaload-*, libadaload.so compressed: a call carries these (the
#                  tracked tree + the bare adaload pass 64 MiB); ci/device_env.sh unpacks them
# Then, on the GPU machine with .devbundle carried: ci/device_run.sh quick|full.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH=/usr/local/cuda/bin:$PATH
archs=${CUDA_ARCHS:-90}
builds=(device device-slow)
[ "${1:-}" = "--no-slow" ] && builds=(device)
IFS=';' read -r -a extra_builds <<<"${EXTRA_BUILDS:-}"
for e in "${extra_builds[@]}"; do [ -n "$e" ] && builds+=("exp-${e%%:*}"); done
bundle=$root/.devbundle
rm -rf "$bundle"
mkdir -p "$bundle/lib"
for variant in "${builds[@]}"; do
  bdir=$root/build-$variant
  extra=()
  [ "$variant" = device-slow ] && extra=(-DADALOAD_SLOW_VARIANT=ON)
  for e in "${extra_builds[@]}"; do
    [ "exp-${e%%:*}" = "$variant" ] && read -r -a extra <<<"${e#*:}"
  done
  cmake -S "$root" -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    '-DCMAKE_BUILD_RPATH=$ORIGIN/lib' "${extra[@]}" >"$bdir.configure.log" 2>&1 \
    || { cat "$bdir.configure.log"; exit 1; }
  targets=(adaload)
  [ "$variant" = device ] && targets+=(adaload_shared adaload_example_rowblock adaload_example_rowblock_noeps)
  cmake --build "$bdir" --target "${targets[@]}" -j "$(nproc)"
  if [ "$variant" = device ]; then
    mkdir -p "$bundle/plugins"
    for p in "$bdir"/plugins/*.so; do strip -o "$bundle/plugins/$(basename "$p")" "$p"; done
    strip -o "$bundle/libadaload.so" "$bdir/libadaload.so"
  fi
  name=adaload; [ "$variant" = device-slow ] && name=adaload-slow
  case "$variant" in exp-*) name=adaload-${variant#exp-} ;; esac
  strip -o "$bundle/$name" "$bdir/adaload"
  ldd "$bdir/adaload" | awk '/=>/ {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
      *) cp -L "$lib" "$bundle/lib/" ;;
    esac
  done
done
if [ -n "${BASE_REV:-}" ]; then
  rev=$(git -C "$root" rev-parse --verify -q "$BASE_REV^{commit}") || { echo "device_bundle.sh: BASE_REV $BASE_REV is no commit" >&2; exit 2; }
  src=$root/build-base/src bdir=$root/build-base/build
  if [ -e "$src/.git" ]; then git -C "$src" checkout -q --detach "$rev"
  else rm -rf "$src"; mkdir -p "$root/build-base"; git -C "$root" worktree add -q --detach "$src" "$rev"; fi
  # shellcheck disable=SC2016 # $ORIGIN is the loader's, not the shell's
  cmake -S "$src" -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    '-DCMAKE_BUILD_RPATH=$ORIGIN/lib' >"$root/build-base.configure.log" 2>&1 \
    || { cat "$root/build-base.configure.log"; exit 1; }
  cmake --build "$bdir" --target adaload -j "$(nproc)"
  strip -o "$bundle/adaload-base" "$bdir/adaload"
  { echo "ADALOAD_BASE_SHA=$rev"
    echo "ADALOAD_BASE_KERNELS=$(cmake -DDIR="$src/kernels" -P "$src/kernels/source_hash.cmake")"
  } >"$bundle/base.env"
fi
{ echo "ADALOAD_GIT_SHA=$(git -C "$root" rev-parse HEAD)"
  if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then echo "ADALOAD_GIT_DIRTY=1"; else echo "ADALOAD_GIT_DIRTY=0"; fi
} >"$bundle/git.env"
tar -C "$bundle" -cJf "$bundle/lib.tar.xz" lib && rm -rf "$bundle/lib"
# Each program and library also as <name>.xz (about a fifth of the size): the tracked tree and
# the uncompressed adaload no longer fit the 64 MiB carry together, so a call carries the .xz
# files and ci/device_env.sh unpacks them there.
for f in "$bundle"/adaload* "$bundle"/libadaload.so; do
  [ -f "$f" ] && [ "${f%.xz}" = "$f" ] && xz -T0 -6 -kf "$f"
done
du -sh "$bundle"
