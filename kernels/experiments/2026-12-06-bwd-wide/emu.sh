#!/usr/bin/env bash
# emu.sh -- dtile backward's version 1 kernel (bd_kernel, with bwd-wide.patch) and its finalize
# run on the CPU under the forward's emulation (../2026-12-02-fwd-v2/fv2_emu.h: a coroutine a
# CUDA thread, cp.async eager or lazy), checked against the float64 reference at the kernels'
# own statistics; then the planted bugs, each of which must fail. No GPU. Output in
# ${EMU_OUT:-/tmp/bwd-wide-emu} (~2 min on 2 cores). Exit 0: the cases pass and every plant fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
fwd=$here/../2026-12-02-fwd-v2
o=${EMU_OUT:-/tmp/bwd-wide-emu}
rm -rf "$o"
mkdir -p "$o/src" "$o/emu" "$o/obj"
git -C "$root" archive HEAD kernels reference verify | tar x -C "$o/src"
# The patch's sources (main has them once it lands).
grep -q lnmod_bwd_v1_shape "$o/src/kernels/lnmod_bwd_dtile.cu" ||
  (cd "$o/src" && patch -p1 -s <"$here/bwd-wide.patch")
K=$o/src/kernels R=$o/src/reference
# lnmod_common.cuh with its asm helpers calling the emulation (the rewrite the other emulations use).
awk -f "$fwd/emu_common.awk" "$K/lnmod_common.cuh" >"$o/emu/lnmod_common.cuh"
# lnmod_bwd_common.cuh up to the re-reading paths, without the finalize's launcher; its static
# shared array in the emulation's static shared memory; the 4-byte cp.async (there since the
# element path, bwd-odd) from the emulation.
awk -f "$fwd/emu_bwd_common.awk" "$K/lnmod_bwd_common.cuh" >"$o/emu/lnmod_bwd_common.cuh"
# lnmod_bwd_dtile.cu's device part (namespace { ... bd_kernel }), its shared memory and its
# 4-byte cp.async from the emulation.
awk '
  /^namespace \{/ { on = 1 }
  /^\/\/ Vectors per thread and threads per CTA for D/ { print "} // namespace"; exit }
  !on { next }
  /extern __shared__ uint4 bd_ring\[\];/ { print "    uint4 *bd_ring = emu::smem();"; next }
  /__shared__ float2 red\[2\]\[BD_MAX_T \/ 32\]\[K\];/ { print "    auto &red = *reinterpret_cast<float2 (*)[2][BD_MAX_T / 32][K]>(emu::static_smem());"; next }
  /const unsigned s = \(unsigned\)__cvta_generic_to_shared\(smem\);/ { next }
  /asm volatile\("cp.async.ca.shared.global \[%0\], \[%1\], 4;"/ { print "    emu::cp_async4(smem, gmem);"; next }
  { print }' "$K/lnmod_bwd_dtile.cu" >"$o/emu/bd_part.cuh"
for f in lnmod_common.cuh lnmod_bwd_common.cuh bd_part.cuh; do
  if grep -q 'asm\|<<<\|extern __shared__' "$o/emu/$f"; then echo "emu.sh: asm, a launch or extern shared memory left in $f" >&2; exit 1; fi
done
grep -q 'emu::cp_async4' "$o/emu/bd_part.cuh" "$o/emu/lnmod_bwd_common.cuh" || { echo "emu.sh: the 4-byte cp.async not rewritten" >&2; exit 1; }
cp "$K/lnmod_bwd_v1_shape.h" "$o/emu/"
cw=(-Wall -Wextra -Werror)
gcc -std=c11 -O2 "${cw[@]}" -c "$K/lnmod_desc.c" -o "$o/obj/lnmod_desc.o"
for f in ref_lnmod ref_convert; do
  # shellcheck disable=SC2046
  gcc -std=c11 -O2 "${cw[@]}" -ffp-contract=off -fno-fast-math $(pkg-config --cflags openblas) -I"$K" -c "$R/$f.c" -o "$o/obj/$f.o"
done
lib=/usr/lib/x86_64-linux-gnu
# The planted bugs, each a one-line change of the kernel's emulated copy: SPS reads another
# element's (1 + scale) slot; WAIT leaves one cp.async group too many in flight (a stage read
# before it has landed: caught by the lazy copies).
mkdir -p "$o/plant_SPS" "$o/plant_WAIT"
sed 's/return sps\[(q \* VEC + e) \* (int)blockDim.x + (int)threadIdx.x\];/return sps[(q * VEC + (e + 1) % VEC) * (int)blockDim.x + (int)threadIdx.x];/' \
  "$o/emu/bd_part.cuh" >"$o/plant_SPS/bd_part.cuh"
sed 's/lnmod_cp_wait<NS - 2 \* K>();/lnmod_cp_wait<NS - 2 * K + 1>();/' "$o/emu/bd_part.cuh" >"$o/plant_WAIT/bd_part.cuh"
for p in SPS WAIT; do
  cmp -s "$o/emu/bd_part.cuh" "$o/plant_$p/bd_part.cuh" && { echo "emu.sh: plant $p changed nothing" >&2; exit 1; }
done
build() { # $1: plant name or empty
  g++ -std=c++17 -O1 "${cw[@]}" -Wno-unknown-pragmas -Wno-attributes -DFV2_EMU ${1:+-I"$o/plant_$1"} -I/usr/local/cuda/include \
    -I"$o/emu" -I"$fwd" -I"$K" -I"$R" "$here/bwd_emu_test.cc" "$o/obj/"*.o \
    "$lib/openblas-pthread/libopenblas.a" -lpthread -lm -lgfortran -o "$o/bwd_emu_test$1"
}
build ""
for p in SPS WAIT; do build "$p" & done
wait
echo "== the cases"
"$o/bwd_emu_test" | tee "$o/bwd_emu_test.out"
for p in SPS WAIT; do
  if "$o/bwd_emu_test$p" >"$o/bwd_emu_test$p.out" 2>&1; then
    echo "emu.sh: planted bug $p passed every case" >&2; exit 1
  fi
  echo "planted $p: $(grep -c FAIL "$o/bwd_emu_test$p.out") case(s) fail (want > 0)"
done
