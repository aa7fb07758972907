#!/usr/bin/env bash
# build.sh [OUT_DIR] -- builds round 3's harness HERE (no GPU needed; the device machine runs
# the result): OUT_DIR (default build-bwdv3/ at the repository root, ignored by git) gets
#   gen/bk_prod.cuh  the production's namespace lnmod_bulk_detail cut out of
#                    kernels/lnmod_bwd_bulk.cu (the candidates' helpers ARE the production's)
#   bv3_plan_test    the host test of round 3's index math, run here, with its five planted
#                    bugs each made to fail it
#   bv3bench         the harness, sm_90, CUDA runtime, OpenBLAS and jansson linked statically
#   bv3bench.xz      the same compressed, what device.sh unpacks (carried: well under 64 MiB)
#   ptxas.txt        registers / spills / static shared memory of every kernel of round 3 and
#                    of the production's bulk and dtile kernels
# Round 2's comparison (../2026-12-02-bwd-v2/bv2_check.cc) is compiled from its own folder.
# Every compile with the project's warnings as errors, under nice -n 10, at most two at a time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
v2=$root/kernels/experiments/2026-12-02-bwd-v2
out=${1:-$root/build-bwdv3}
t_start=$SECONDS
mkdir -p "$out/obj" "$out/gen"
export PATH=/usr/local/cuda/bin:$PATH
K=$root/kernels R=$root/reference V=$root/verify
cw=(-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wvla)
cc=(nice -n 10 gcc)
cxx=(nice -n 10 g++)
# shellcheck disable=SC2054 # the commas belong to -Xcompiler's one argument
nv=(nice -n 10 nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -Xcompiler=-Wall,-Wextra,-Werror --Werror all-warnings
    -I"$K" -I"$here" -I"$out/gen")
blas_inc=$(pkg-config --cflags openblas)
o=$out/obj

# The production's namespace, whole (from its opening line to its closing comment).
awk '/^namespace lnmod_bulk_detail \{/{f=1} f{print} /^\} \/\/ namespace lnmod_bulk_detail/{f=0}' \
  "$K/lnmod_bwd_bulk.cu" >"$out/gen/bk_prod.cuh.new"
if ! head -1 "$out/gen/bk_prod.cuh.new" | grep -q '^namespace lnmod_bulk_detail {' ||
   ! tail -1 "$out/gen/bk_prod.cuh.new" | grep -q '^} // namespace lnmod_bulk_detail'; then
  echo "build.sh: cannot cut namespace lnmod_bulk_detail out of kernels/lnmod_bwd_bulk.cu" >&2; exit 1
fi
sed -i '1i #pragma once' "$out/gen/bk_prod.cuh.new"
# Rewritten only when it changed (keeps the objects' timestamps meaningful).
cmp -s "$out/gen/bk_prod.cuh.new" "$out/gen/bk_prod.cuh" 2>/dev/null || mv "$out/gen/bk_prod.cuh.new" "$out/gen/bk_prod.cuh"
rm -f "$out/gen/bk_prod.cuh.new"

"${cc[@]}" -std=c11 -O2 "${cw[@]}" -I"$K" -I"$here" "$here/bv3_plan_test.c" -o "$out/bv3_plan_test"
"$out/bv3_plan_test"
for plant in BV3_PLANT_STEP BV3_PLANT_NS3 BV3_PLANT_OWED BV3_PLANT_TOK BV3_PLANT_SCAT; do # each must fail it
  "${cc[@]}" -std=c11 -O2 "${cw[@]}" -D$plant -I"$K" -I"$here" "$here/bv3_plan_test.c" -o "$out/bv3_plan_test_plant"
  if "$out/bv3_plan_test_plant" >/dev/null 2>&1; then echo "build.sh: bv3_plan_test passed with $plant planted" >&2; exit 1; fi
  echo "bv3_plan_test with $plant: fails, as it must"
done
rm -f "$out/bv3_plan_test_plant"

"${cc[@]}" -std=c11 -O2 "${cw[@]}" -c "$K/lnmod_desc.c" -o "$o/lnmod_desc.o"
# The fused residual op's descriptor, once kernels/ has it (the registry then references its kernels).
if [ -f "$K/lnmod_res_desc.c" ]; then "${cc[@]}" -std=c11 -O2 "${cw[@]}" -c "$K/lnmod_res_desc.c" -o "$o/lnmod_res_desc.o"; fi
for f in ref_lnmod ref_convert; do
  # shellcheck disable=SC2086
  "${cc[@]}" -std=c11 -O2 "${cw[@]}" -ffp-contract=off -fno-fast-math $blas_inc -I"$K" -c "$R/$f.c" -o "$o/$f.o"
done
"${cc[@]}" -std=c11 -O2 "${cw[@]}" -D_POSIX_C_SOURCE=200809L -I"$K" -I"$R" -c "$V/verify_check.c" -o "$o/verify_check.o"
"${cxx[@]}" -std=c++17 -O2 -Wall -Wextra -Werror -I"$K" -I"$R" -I"$V" -I"$v2" -c "$v2/bv2_check.cc" -o "$o/bv2_check.o"

# The kernels' own source on the CPU (bv3_emu.h over ../2026-12-02-fwd-v2/fv2_emu.h): emulation
# copies of lnmod_common.cuh (the forward experiment's rewrite: its asm helpers call the
# emulation), lnmod_bwd_common.cuh (its <<<>>> launchers and the finalize's launch left out) and the production's
# namespace up to and with its kernel bk_kernel (the asm helpers -- mbarrier init/wait, the
# issue, the proxy fence, the named barrier -- call the emulation; the kernel's shared arrays
# come from the emulation's per-CTA memory, the same layout as bv3_kernel's under BV3_EMU);
# g++ -DBV3_EMU; then the test, and the two planted bugs of bv3_plan.h that it must catch.
fv2=$root/kernels/experiments/2026-12-02-fwd-v2
mkdir -p "$out/emu"
awk -f "$fv2/emu_common.awk" "$K/lnmod_common.cuh" >"$out/emu/lnmod_common.cuh"
awk '
  /^template / { held = $0; next }
  /^static inline lnmod_status lnmod_bwd_(columns|reread_run|finalize)\(/ { held = ""; skip = 1; next }
  skip { if ($0 ~ /^}/) skip = 0; next }
  { if (held != "") { print held; held = "" } print }' "$K/lnmod_bwd_common.cuh" >"$out/emu/lnmod_bwd_common.cuh"
awk '
  BEGIN { print "#pragma once" }
  /^namespace lnmod_bulk_detail \{/ { f = 1 }
  !f { next }
  /^template <typename TX, typename TM, typename TY, int NS, int G>$/ { held = $0; next }
  /bk_kernel\(bk_kp k\)$/ { print held; held = ""; print; inkern = 1; next }
  inkern && /^    extern __shared__ uint4 bk_smem\[\];$/ { print "    uint4 *bk_smem = emu::smem();"; next }
  inkern && /^    __shared__ float2 red\[2\]\[G\]\[BK_MAX_NW\];$/ {
    print "    auto &red = *reinterpret_cast<float2(*)[2][G][BK_MAX_NW]>(emu::static_smem());"; nsub++; next }
  inkern && /^    __shared__ uint64_t full\[G \* NS\];/ {
    print "    auto &full = *reinterpret_cast<uint64_t(*)[G * NS]>(reinterpret_cast<char *>(emu::static_smem()) +"
    print "                                                         sizeof(float2) * 2 * G * BK_MAX_NW + sizeof(float4) * 2 * G * BK_MAX_NW);"
    nsub++; next }
  inkern && /cudaTriggerProgrammaticLaunchCompletion\(\);/ { nsub++; next }
  inkern && /^}/ { print; print "} // namespace lnmod_bulk_detail (emulation copy: up to bk_kernel, shared memory from the emulation)"; if (nsub != 3) print "#error bk_kernel: the emulation rewrite missed a line"; exit }
  /^__device__ __forceinline__ void bk_mbar_init\(/ { print "__device__ __forceinline__ void bk_mbar_init(uint64_t *bar, unsigned count) { emu::mbar_init(bar, (int)count); }"; skip = 1; next }
  /^__device__ __forceinline__ void bk_fence_proxy_async\(/ { print "__device__ __forceinline__ void bk_fence_proxy_async() {}"; skip = 1; next }
  /^__device__ __forceinline__ void bk_mbar_wait\(/ { print "__device__ __forceinline__ void bk_mbar_wait(uint64_t *bar, uint32_t parity) { emu::mbar_wait(bar, parity); }"; skip = 1; next }
  /^__device__ __forceinline__ void bk_group_sync\(/ { print "__device__ __forceinline__ void bk_group_sync(int gq, int T) { emu::named_sync(gq + 1, T); }"; skip = 1; next }
  /^__device__ __forceinline__ void bk_issue\(/ {
    print "__device__ __forceinline__ void bk_issue(const bk_kp &k, uint4 *ring, float2 *stats, uint64_t *bar, int s, int32_t r, int T)"
    print "{"
    print "    using C = bk_cfg<TX, TY>;"
    print "    uint4 *st = ring + s * C::SLOTS * T;"
    print "    const unsigned xb = (unsigned)k.nv * 16u, yb = xb * (unsigned)C::DYW;"
    print "    emu::mbar_expect_tx(bar + s, xb + yb);"
    print "    emu::bulk_copy(st, static_cast<const TX *>(k.p.x) + (int64_t)r * k.D, xb, bar + s);"
    print "    emu::bulk_copy(st + BK_VPT * T, static_cast<const TY *>(k.p.dy) + (int64_t)r * k.D, yb, bar + s);"
    print "    emu::cp_async4(&stats[s].x, k.p.mean + r);"
    print "    emu::cp_async4(&stats[s].y, k.p.rstd + r);"
    print "    emu::cp_arrive_noinc(bar + s);"
    print "}"
    skip = 1; next }
  skip { if ($0 ~ /^}/) skip = 0; next }
  { if (held != "") { print held; held = "" } print }' "$K/lnmod_bwd_bulk.cu" >"$out/emu/bk_prod.cuh"
for f in lnmod_common.cuh lnmod_bwd_common.cuh bk_prod.cuh; do
  if grep -q 'asm\|<<<' "$out/emu/$f"; then echo "build.sh: asm or <<< left in the emulation's $f" >&2; exit 1; fi
done
grep -q 'void bk_issue(const bk_kp &k' "$out/emu/bk_prod.cuh" || { echo "build.sh: bk_issue not replaced in the emulation copy" >&2; exit 1; }
lib=/usr/lib/x86_64-linux-gnu
emu_objs=("$o/bv2_check.o" "$o/ref_lnmod.o" "$o/ref_convert.o" "$o/verify_check.o" "$o/lnmod_desc.o"
          "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a")
for plant in "" OWED SCAT; do
  nice -n 10 g++ -std=c++17 -O1 -Wall -Wextra -Werror -Wno-unknown-pragmas -Wno-unused-function -DBV3_EMU \
    ${plant:+-DBV3_PLANT_$plant} -I/usr/local/cuda/include -I"$out/emu" -I"$here" -I"$fv2" -I"$v2" -I"$K" -I"$R" \
    "$here/bv3_emu_test.cc" "${emu_objs[@]}" -lpthread -lm -o "$out/bv3_emu_test$plant" &
  if [ "$plant" = OWED ]; then wait; fi
done
wait
"$out/bv3_emu_test" >"$out/bv3_emu_test.out" 2>&1 || { cat "$out/bv3_emu_test.out"; echo "build.sh: bv3_emu_test failed" >&2; exit 1; }
tail -1 "$out/bv3_emu_test.out"
for plant in OWED SCAT; do
  if "$out/bv3_emu_test$plant" >"$out/bv3_emu_test$plant.out" 2>&1; then
    echo "build.sh: bv3_emu_test passed with BV3_PLANT_$plant planted: it cannot catch it" >&2; exit 1
  fi
  echo "bv3_emu_test with BV3_PLANT_$plant: fails, as it must ($(grep -c FAIL "$out/bv3_emu_test$plant.out") FAIL lines; $(grep -m1 -o 'emu: .*' "$out/bv3_emu_test$plant.out" || true))"
done

# CUDA, two at a time: the built kernels (the registry and the variant files, as
# kernels/CMakeLists.txt lists them), round 3's candidates (bv3_bulk.cu three times), the
# harness. Each job: "object source [defines...]".
jobs=()
for b in lnmod_bwd_bulk lnmod_bwd_dtile lnmod_registry lnmod_fwd_naive lnmod_fwd_row_per_warp lnmod_fwd_dtile \
         lnmod_bwd_naive lnmod_bwd_row_per_warp; do
  jobs+=("$b $K/$b.cu")
done
for f in "$K"/lnmod_res_*.cu; do # the fused residual op's kernels, once kernels/ has them
  if [ -e "$f" ]; then jobs+=("$(basename "$f" .cu) $f"); fi
done
jobs+=("bv3_h1k0 $here/bv3_bulk.cu -DBV3_OPT_HALF=1 -DBV3_OPT_K2=0"
       "bv3_h0k1 $here/bv3_bulk.cu -DBV3_OPT_HALF=0 -DBV3_OPT_K2=1"
       "bv3_h1k1 $here/bv3_bulk.cu -DBV3_OPT_HALF=1 -DBV3_OPT_K2=1"
       "bv3_tok $here/bv3_tok.cu" "bv3 $here/bv3.cu" "bv3_main $here/bv3_main.cu -I$v2")
pids=()
fail_out() { grep -hE 'error|warning' "$o"/*.ptxas | head -20; exit 1; }
for j in "${jobs[@]}"; do
  read -r b src defs <<<"$j"
  # shellcheck disable=SC2086 # defs: zero or more words
  "${nv[@]}" -I"$R" $defs -Xptxas -v -c "$src" -o "$o/$b.o" >"$o/$b.ptxas" 2>&1 &
  pids+=($!)
  if [ "${#pids[@]}" -ge 2 ]; then wait "${pids[0]}" || fail_out; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || fail_out; done

# The three builds of bv3_bulk.cu are linked into one binary: a weak symbol defined by more
# than one of them (a template instantiated under the same name) would be kept once, and the
# other builds would run its code. None may be shared.
shared=$(for b in bv3_h1k0 bv3_h0k1 bv3_h1k1; do nm --defined-only "$o/$b.o" | awk '$2 ~ /^[TWVtwv]$/ && $3 ~ /bv3/ {print $3}' | sort -u; done | sort | uniq -d)
if [ -n "$shared" ]; then
  echo "build.sh: symbols defined by more than one build of bv3_bulk.cu (the linker keeps one):" >&2
  echo "$shared" | c++filt | head -10 >&2
  exit 1
fi
echo "the three builds of bv3_bulk.cu share no defined symbol"

# ptxas.txt: one line a kernel (registers, spill stores/loads, static shared memory, name).
ptxsum() {
  awk '/Compiling entry function/ {match($0, /'"'"'[^'"'"']+'"'"'/); n=substr($0, RSTART+1, RLENGTH-2)}
       /spill stores/ {ss=$5; sl=$9}
       /Used [0-9]+ registers/ {r=$5; sm=$0; sub(/ bytes smem.*/, "", sm); sub(/.* /, "", sm); if (n != "") print r, ss, sl, sm, n; n=""}' "$@" |
  while read -r r ss sl sm n; do
    printf '%3s regs  spill %3s/%3s B  smem %5s  %s\n' "$r" "$ss" "$sl" "$sm" "$(echo "$n" | c++filt)"
  done | sed 's/lnmod_bulk_detail:://g; s/__nv_bfloat16/bf16/g'
}
{
  for b in bv3_h1k0 bv3_h0k1 bv3_h1k1 bv3_tok lnmod_bwd_bulk; do
    echo "== $b"
    ptxsum "$o/$b.ptxas" | grep -v bwd_fin_kernel
  done
} >"$out/ptxas.txt"

lib=/usr/lib/x86_64-linux-gnu
nice -n 10 nvcc -arch=sm_90 -o "$out/bv3bench" "$o"/bv3_main.o "$o"/bv3.o "$o"/bv3_h1k0.o "$o"/bv3_h0k1.o \
  "$o"/bv3_h1k1.o "$o"/bv3_tok.o "$o"/bv2_check.o "$o"/lnmod_*.o "$o"/ref_*.o "$o"/verify_check.o \
  "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a" -cudart static -lpthread -lm
strip "$out/bv3bench"
nice -n 10 xz -T2 -6 -kf "$out/bv3bench"
ls -la "$out/bv3bench" "$out/bv3bench.xz"
# The shared libraries it still needs: glibc, libstdc++ and libgcc only (the device has them).
ldd "$out/bv3bench" | awk '{print "  " $1}'
"$out/bv3bench" --self-test --threads 2 | tail -1
rc=0; "$out/bv3bench" --quick >/dev/null 2>&1 || rc=$?
[ "$rc" = 77 ] || { echo "build.sh: bv3bench without a GPU exited $rc, not 77" >&2; exit 1; }
echo "build.sh: done in $((SECONDS - t_start)) s"
