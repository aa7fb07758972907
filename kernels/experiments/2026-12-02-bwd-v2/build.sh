#!/usr/bin/env bash
# build.sh [OUT_DIR] -- builds the v2 harness HERE (no GPU needed; the device machine runs
# the result): OUT_DIR (default build-bwdv2/ at the repository root, ignored by git) gets
#   bv2bench         the harness, sm_90, CUDA runtime, OpenBLAS and jansson linked
#                    statically (the device machine has the driver, glibc and libstdc++ only)
#   bv2bench.xz      the same compressed, what device.sh unpacks (carried: well under 64 MiB)
#   bv2_plan_test    the host test of v2's index math, run here by this script
#   ptxas.txt        registers / spills of every kernel in bv2.cu, bv2_r2.cu and
#                    kernels/lnmod_bwd_dtile.cu
# Every compile with the project's warnings as errors (nvcc: --Werror all-warnings), under
# nice -n 10, at most two at a time (the build machine's two cores are shared).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-$root/build-bwdv2}
mkdir -p "$out/obj"
export PATH=/usr/local/cuda/bin:$PATH
K=$root/kernels R=$root/reference V=$root/verify
cw=(-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wvla)
cc=(nice -n 10 gcc)
cxx=(nice -n 10 g++)
# shellcheck disable=SC2054 # the commas belong to -Xcompiler's one argument
nv=(nice -n 10 nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -Xcompiler=-Wall,-Wextra,-Werror --Werror all-warnings
    -I"$K" -I"$here")
blas_inc=$(pkg-config --cflags openblas)
o=$out/obj

"${cc[@]}" -std=c11 -O2 "${cw[@]}" -I"$K" "$here/bv2_plan_test.c" "$K/lnmod_desc.c" -lm -o "$out/bv2_plan_test"
"$out/bv2_plan_test"
for plant in BV2_PLANT_CEIL BV2_PLANT_SHARE BV2_PLANT_MINV; do # each planted bug must fail the test
  "${cc[@]}" -std=c11 -O2 "${cw[@]}" -D$plant -I"$K" "$here/bv2_plan_test.c" "$K/lnmod_desc.c" -lm -o "$out/bv2_plan_test_plant"
  if "$out/bv2_plan_test_plant" 2>/dev/null; then echo "build.sh: bv2_plan_test passed with $plant planted" >&2; exit 1; fi
  echo "bv2_plan_test with $plant: fails, as it must"
done

"${cc[@]}" -std=c11 -O2 "${cw[@]}" -c "$K/lnmod_desc.c" -o "$o/lnmod_desc.o"
for f in ref_lnmod ref_convert; do
  # shellcheck disable=SC2086
  "${cc[@]}" -std=c11 -O2 "${cw[@]}" -ffp-contract=off -fno-fast-math $blas_inc -I"$K" -c "$R/$f.c" -o "$o/$f.o"
done
"${cc[@]}" -std=c11 -O2 "${cw[@]}" -D_POSIX_C_SOURCE=200809L -I"$K" -I"$R" -c "$V/verify_check.c" -o "$o/verify_check.o"
"${cxx[@]}" -std=c++17 -O2 -Wall -Wextra -Werror -I"$K" -I"$R" -I"$V" -c "$here/bv2_check.cc" -o "$o/bv2_check.o"

# CUDA: v1's kernels (the registry and all six variant files) and v2, two at a time.
srcs=("$K"/lnmod_registry.cu "$K"/lnmod_fwd_naive.cu "$K"/lnmod_fwd_row_per_warp.cu
      "$K"/lnmod_fwd_dtile.cu "$K"/lnmod_bwd_naive.cu "$K"/lnmod_bwd_row_per_warp.cu
      "$K"/lnmod_bwd_dtile.cu "$here"/bv2.cu "$here"/bv2_r2.cu "$here"/bv2_main.cu)
pids=()
for s in "${srcs[@]}"; do
  b=$(basename "$s" .cu)
  "${nv[@]}" -I"$R" -Xptxas -v -c "$s" -o "$o/$b.o" >"$o/$b.ptxas" 2>&1 &
  pids+=($!)
  if [ "${#pids[@]}" -ge 2 ]; then wait "${pids[0]}" || { cat "$o"/*.ptxas | grep -E 'error|warning' | head; exit 1; }; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || { grep -hE 'error|warning' "$o"/*.ptxas | head; exit 1; }; done
cat "$o/bv2.ptxas" "$o/bv2_r2.ptxas" "$o/lnmod_bwd_dtile.ptxas" >"$out/ptxas.txt"

lib=/usr/lib/x86_64-linux-gnu
nice -n 10 nvcc -arch=sm_90 -o "$out/bv2bench" "$o"/bv2_main.o "$o"/bv2.o "$o"/bv2_r2.o "$o"/bv2_check.o "$o"/lnmod_*.o \
  "$o"/ref_*.o "$o"/verify_check.o "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a" \
  -cudart static -lpthread -lm
strip "$out/bv2bench"
nice -n 10 xz -T2 -6 -kf "$out/bv2bench"
ls -la "$out/bv2bench" "$out/bv2bench.xz"
# The shared libraries it still needs: glibc, libstdc++ and libgcc only (the device has them).
ldd "$out/bv2bench" | awk '{print "  " $1}'
