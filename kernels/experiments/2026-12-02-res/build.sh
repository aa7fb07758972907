#!/usr/bin/env bash
# build.sh [OUT_DIR] -- builds resbench HERE (no GPU needed; the device machine runs the
# result): OUT_DIR (default build-res/ at the repository root, ignored by git) gets
#   resbench      the harness, sm_90, CUDA runtime, OpenBLAS and jansson linked statically
#                 (the device machine has the driver, glibc and libstdc++ only)
#   resbench.xz   the same compressed: what device.sh unpacks (the device call carries it)
#   ptxas.txt     registers / spills / stack of every kernel of this experiment
#   gen/bk_prod.cuh  the production's namespace lnmod_bulk_detail cut out of
#                 kernels/lnmod_bwd_bulk.cu (its PTX helpers, used by res_dtile_bulk.cu)
# res_bulk_plan_test (dtile_bulk's index math) runs first, then once with each planted bug,
# each of which must fail it.
# Every compile nice -n 10, at most 2 at a time (RES_JOBS), warnings as errors (nvcc:
# --Werror all-warnings), and then resbench --self-test and --model-test run here (no GPU).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-$root/build-res}
jobs=${RES_JOBS:-2}
mkdir -p "$out/obj" "$out/gen"
export PATH=/usr/local/cuda/bin:$PATH
K=$root/kernels P=$root/kernels R=$root/reference V=$root/verify
o=$out/obj
cw=(-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wvla)
# shellcheck disable=SC2054 # the commas belong to -Xcompiler's one argument
nv=(nice -n 10 nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -Xcompiler=-Wall,-Wextra,-Werror --Werror all-warnings
    -I"$K" -I"$P" -I"$R" -I"$V" -I"$here" -I"$out/gen")
read -r -a blas_inc <<<"$(pkg-config --cflags openblas)"

# The production's namespace, whole (from its opening line to its closing comment), as the
# bwd-v3 experiment cuts it; rewritten only when it changed.
awk '/^namespace lnmod_bulk_detail \{/{f=1} f{print} /^\} \/\/ namespace lnmod_bulk_detail/{f=0}' \
  "$K/lnmod_bwd_bulk.cu" >"$out/gen/bk_prod.cuh.new"
if ! head -1 "$out/gen/bk_prod.cuh.new" | grep -q '^namespace lnmod_bulk_detail {' ||
   ! tail -1 "$out/gen/bk_prod.cuh.new" | grep -q '^} // namespace lnmod_bulk_detail'; then
  echo "build.sh: cannot cut namespace lnmod_bulk_detail out of kernels/lnmod_bwd_bulk.cu" >&2; exit 1
fi
sed -i '1i #pragma once' "$out/gen/bk_prod.cuh.new"
cmp -s "$out/gen/bk_prod.cuh.new" "$out/gen/bk_prod.cuh" 2>/dev/null || mv "$out/gen/bk_prod.cuh.new" "$out/gen/bk_prod.cuh"
rm -f "$out/gen/bk_prod.cuh.new"

# dtile_bulk's index math: the host test, then each planted bug must fail it.
cc=(nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -I"$here")
"${cc[@]}" "$here/res_bulk_plan_test.c" -o "$o/res_bulk_plan_test"
"$o/res_bulk_plan_test"
for plant in RES_BULK_PLANT_GROUPS RES_BULK_PLANT_SHARE RES_BULK_PLANT_STAGE; do
  "${cc[@]}" -D$plant "$here/res_bulk_plan_test.c" -o "$o/res_bulk_plan_test_plant"
  if "$o/res_bulk_plan_test_plant" >/dev/null 2>&1; then echo "build.sh: res_bulk_plan_test passed with $plant planted" >&2; exit 1; fi
  echo "res_bulk_plan_test with $plant: fails, as it must"
done
rm -f "$o/res_bulk_plan_test_plant"

pids=()
names=()
# spawn NAME CMD...: runs CMD in the background (output into $o/NAME.log), at most $jobs at once.
spawn() {
  local name=$1; shift
  "$@" >"$o/$name.log" 2>&1 &
  pids+=($!)
  names+=("$name")
  if [ "${#pids[@]}" -ge "$jobs" ]; then reap_one; fi
}
reap_one() {
  if ! wait "${pids[0]}"; then
    echo "build.sh: ${names[0]} failed:" >&2
    grep -vE '^ptxas info|^    [0-9]+ bytes stack' "$o/${names[0]}.log" | head -30 >&2
    exit 1
  fi
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
}

spawn lnmod_desc nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -I"$K" -c "$K/lnmod_desc.c" -o "$o/lnmod_desc.o"
spawn lnmod_res_desc nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -I"$K" -c "$P/lnmod_res_desc.c" -o "$o/lnmod_res_desc.o"
for f in ref_lnmod ref_convert ref_lnmod_res; do
  spawn "$f" nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -ffp-contract=off -fno-fast-math "${blas_inc[@]}" -I"$K" -I"$P" \
    -c "$R/$f.c" -o "$o/$f.o"
done
spawn verify_check nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -D_POSIX_C_SOURCE=200809L -I"$K" -I"$R" \
  -c "$V/verify_check.c" -o "$o/verify_check.o"
for f in verify_model_res verify_par; do
  spawn "$f" nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -ffp-contract=off -D_POSIX_C_SOURCE=200809L -I"$K" -I"$P" -I"$R" \
    -c "$V/$f.c" -o "$o/$f.o"
done
for f in res_check res_inputs res_shapes res_model_test; do
  spawn "$f" nice -n 10 g++ -std=c++17 -O2 -Wall -Wextra -Werror -Wshadow -I"$K" -I"$P" -I"$R" -I"$V" -I"$here" \
    -c "$here/$f.cc" -o "$o/$f.o"
done
for f in res_common res_naive res_dtile res_dtile_bwd res_dtile_bulk res_api res_plan_test res_bench; do
  spawn "$f" "${nv[@]}" -Xptxas -v -c "$here/$f.cu" -o "$o/$f.o"
done
while [ "${#pids[@]}" -gt 0 ]; do reap_one; done
# Registers, spills and stack of every kernel (demangled names).
for f in res_common res_naive res_dtile res_dtile_bwd res_dtile_bulk; do
  { grep -E "Compiling entry|registers|spill|stack frame" "$o/$f.log" || true; } | sed 's/ptxas info    : //' | c++filt
done >"$out/ptxas.txt"
if grep -E '[1-9][0-9]* bytes spill' "$out/ptxas.txt"; then echo "build.sh: a kernel spills (ptxas.txt)" >&2; fi

lib=/usr/lib/x86_64-linux-gnu
nice -n 10 nvcc -arch=sm_90 -o "$out/resbench" "$o"/res_*.o "$o"/lnmod_desc.o "$o"/lnmod_res_desc.o "$o"/ref_*.o \
  "$o"/verify_check.o "$o"/verify_model_res.o "$o"/verify_par.o "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a" -cudart static -lpthread -lm
strip "$out/resbench"
nice -n 10 xz -T2 -6 -kf "$out/resbench"
ls -la "$out/resbench" "$out/resbench.xz"
# The shared libraries it still needs: glibc, libstdc++ and libgcc only (the device has them).
ldd "$out/resbench" | awk '{print "  " $1}'
"$out/resbench" --plan-test
"$out/resbench" --self-test --threads 2
"$out/resbench" --model-test --threads 2

# dtile_bulk's own kernel source on the CPU (res_emu_test.cc, g++ -DRES_EMU) over the bwd-v3
# experiment's emulation (bv3_emu.h over fv2_emu.h), against emulation copies of
# lnmod_common.cuh (its asm helpers call the emulation) and lnmod_bwd_common.cuh (its <<<>>>
# launchers left out), made as the bwd-v3 build makes them; then with two planted bugs of
# res_bulk_plan.h, each of which it must catch.
mkdir -p "$out/emu"
awk '
  /__device__ __forceinline__ void lnmod_cp_async16\(/ { print "__device__ __forceinline__ void lnmod_cp_async16(void *smem, const void *gmem) { emu::cp_async16(smem, gmem); }"; skip = 1 }
  /__device__ __forceinline__ void lnmod_cp_commit\(\)/ { print "__device__ __forceinline__ void lnmod_cp_commit() { emu::cp_commit(); }"; next }
  /template <int N> __device__ __forceinline__ void lnmod_cp_wait\(\)/ { print "template <int N> __device__ __forceinline__ void lnmod_cp_wait() { emu::cp_wait(N); }"; skip = 1 }
  /__device__ __forceinline__ uint4 lnmod_lds16\(/ { print "__device__ __forceinline__ uint4 lnmod_lds16(const uint4 *p) { return *p; }"; skip = 1 }
  skip { if ($0 ~ /^}/) skip = 0; next }
  { print }' "$K/lnmod_common.cuh" >"$out/emu/lnmod_common.cuh"
awk '
  /^template / { held = $0; next }
  /^static inline lnmod_status lnmod_bwd_(columns|reread_run|finalize)\(/ { held = ""; skip = 1; next }
  skip { if ($0 ~ /^}/) skip = 0; next }
  { if (held != "") { print held; held = "" } print }' "$K/lnmod_bwd_common.cuh" >"$out/emu/lnmod_bwd_common.cuh"
for f in lnmod_common.cuh lnmod_bwd_common.cuh; do
  if grep -q 'asm\|<<<' "$out/emu/$f"; then echo "build.sh: asm or <<< left in the emulation's $f" >&2; exit 1; fi
done
emu_objs=("$o/res_check.o" "$o/res_inputs.o" "$o/lnmod_desc.o" "$o/lnmod_res_desc.o" "$o"/ref_*.o "$o/verify_check.o"
          "$o/verify_par.o" "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a")
for plant in "" SHARE STAGE; do
  nice -n 10 g++ -std=c++17 -O1 -Wall -Wextra -Werror -Wno-unknown-pragmas -Wno-unused-function \
    ${plant:+-DRES_BULK_PLANT_$plant} -I/usr/local/cuda/include -I"$out/emu" -I"$here" \
    -I"$K/experiments/2026-12-02-bwd-v3" -I"$K/experiments/2026-12-02-fwd-v2" -I"$K" -I"$P" -I"$R" -I"$V" \
    "$here/res_emu_test.cc" "${emu_objs[@]}" -lpthread -lm -o "$o/res_emu_test$plant" &
  if [ "$plant" = SHARE ]; then wait; fi
done
wait
"$o/res_emu_test" >"$out/res_emu_test.out" 2>&1 || { cat "$out/res_emu_test.out"; echo "build.sh: res_emu_test failed" >&2; exit 1; }
tail -1 "$out/res_emu_test.out"
for plant in SHARE STAGE; do
  if "$o/res_emu_test$plant" >"$out/res_emu_test$plant.out" 2>&1; then
    echo "build.sh: res_emu_test passed with RES_BULK_PLANT_$plant planted: it cannot catch it" >&2; exit 1
  fi
  echo "res_emu_test with RES_BULK_PLANT_$plant: fails, as it must ($(tail -1 "$out/res_emu_test$plant.out"))"
done
