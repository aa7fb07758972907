#!/usr/bin/env bash
# emu.sh -- dtile backward's element path (bo_kernel, kernels/lnmod_bwd_odd.cu) and the finalize
# run on the CPU under the forward's emulation (../2026-12-02-fwd-v2/fv2_emu.h: a coroutine a CUDA
# thread, cp.async performed at issue or only at the issuing thread's wait), checked against the
# float64 reference at the kernels' own statistics; then the planted bugs, each of which must
# fail. No GPU. Output in ${EMU_OUT:-/tmp/bwd-odd-emu} (~2 min on 2 cores). Exit 0: the cases
# pass and every plant fails. The sources: HEAD's kernels/ and reference/, with bwd-odd.patch
# applied where HEAD does not have it yet.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
fwd=$here/../2026-12-02-fwd-v2
o=${EMU_OUT:-/tmp/bwd-odd-emu}
rm -rf "$o"
mkdir -p "$o/src" "$o/emu" "$o/obj"
git -C "$root" archive HEAD kernels reference verify | tar x -C "$o/src"
[ -f "$o/src/kernels/lnmod_bwd_odd.cu" ] || (cd "$o/src" && patch -p1 -s <"$here/bwd-odd.patch")
K=$o/src/kernels R=$o/src/reference
awk -f "$fwd/emu_common.awk" "$K/lnmod_common.cuh" >"$o/emu/lnmod_common.cuh"
# lnmod_bwd_common.cuh up to the re-reading paths, without the finalize's launcher; its static
# shared array in the emulation's static shared memory; the 4-byte cp.async from the emulation.
awk -f "$fwd/emu_bwd_common.awk" "$K/lnmod_bwd_common.cuh" >"$o/emu/lnmod_bwd_common.cuh"
# lnmod_bwd_odd.cu's device part (namespace lnmod_bodd_detail up to the host side).
awk '
  /^namespace lnmod_bodd_detail \{/ { on = 1 }
  /^\/\/ ---- host side/ { print "} // namespace lnmod_bodd_detail"; exit }
  !on { next }
  /extern __shared__ uint4 bo_ring\[\];/ { print "    uint4 *bo_ring = emu::smem();"; next }
  /__shared__ float2 red\[BO_MAX_T \/ 32\];/ { print "    auto &red = *reinterpret_cast<float2 (*)[BO_MAX_T / 32]>(emu::static_smem());"; next }
  { print }' "$K/lnmod_bwd_odd.cu" >"$o/emu/bo_part.cuh"
for f in lnmod_common.cuh lnmod_bwd_common.cuh bo_part.cuh; do
  if grep -q 'asm\|<<<\|extern __shared__' "$o/emu/$f"; then echo "emu.sh: asm, a launch or extern shared memory left in $f" >&2; exit 1; fi
done
grep -q 'emu::cp_async4' "$o/emu/lnmod_bwd_common.cuh" || { echo "emu.sh: lnmod_bwd_cp_async4 not rewritten" >&2; exit 1; }
grep -q 'bo_kernel' "$o/emu/bo_part.cuh" || { echo "emu.sh: no bo_kernel in the extracted part" >&2; exit 1; }
cp "$K/lnmod_bwd_odd_shape.h" "$o/emu/"
cw=(-Wall -Wextra -Werror)
gcc -std=c11 -O2 "${cw[@]}" -c "$K/lnmod_desc.c" -o "$o/obj/lnmod_desc.o"
for f in ref_lnmod ref_convert; do
  # shellcheck disable=SC2046
  gcc -std=c11 -O2 "${cw[@]}" -ffp-contract=off -fno-fast-math $(pkg-config --cflags openblas) -I"$K" -c "$R/$f.c" -o "$o/obj/$f.o"
done
lib=/usr/lib/x86_64-linux-gnu
# The planted bugs, each a one-line change of the kernel's emulated copy: BARRIER drops the
# barrier after the wait (a thread reads windows another thread's copies have not filled: the
# lazy copies catch it); PHASE reads dy at x's phase; WAIT leaves one copy group too many in
# flight (a stage read before it has landed).
plant() { # name, sed program
  mkdir -p "$o/plant_$1"
  sed "$2" "$o/emu/bo_part.cuh" >"$o/plant_$1/bo_part.cuh"
  cmp -s "$o/emu/bo_part.cuh" "$o/plant_$1/bo_part.cuh" && { echo "emu.sh: plant $1 changed nothing" >&2; exit 1; }
  return 0
}
plant BARRIER 's|^        __syncthreads();    // everyone.s; and every thread is done with the previous row|        /* planted */|'
plant PHASE 's|reinterpret_cast<const TY \*>(st + gm.xw) + phy;|reinterpret_cast<const TY *>(st + gm.xw) + phx;|'
plant WAIT 's|bo_wait(gm.ns - 2);|bo_wait(gm.ns - 1);|'
build() { # $1: plant name or empty
  g++ -std=c++17 -O1 "${cw[@]}" -Wno-unknown-pragmas -Wno-attributes -DFV2_EMU ${1:+-I"$o/plant_$1"} -I/usr/local/cuda/include \
    -I"$o/emu" -I"$fwd" -I"$K" -I"$R" "$here/odd_emu_test.cc" "$o/obj/"*.o \
    "$lib/openblas-pthread/libopenblas.a" -lpthread -lm -lgfortran -o "$o/odd_emu_test$1"
}
build ""
for p in BARRIER PHASE WAIT; do build "$p" & done
wait
echo "== the cases"
"$o/odd_emu_test" | tee "$o/odd_emu_test.out"
for p in BARRIER PHASE WAIT; do
  if "$o/odd_emu_test$p" >"$o/odd_emu_test$p.out" 2>&1; then
    echo "emu.sh: planted bug $p passed every case" >&2; exit 1
  fi
  echo "planted $p: $(grep -c FAIL "$o/odd_emu_test$p.out") line(s) FAIL (want > 0)"
done
