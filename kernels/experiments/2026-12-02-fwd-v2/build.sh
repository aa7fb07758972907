#!/usr/bin/env bash
# build.sh [OUT_DIR] -- builds the forward v2 harness HERE (no GPU needed; the device machine
# runs the result): OUT_DIR (default build-fwdv2/ at the repository root, ignored by git) gets
#   fv2bench         the harness, sm_90, CUDA runtime, OpenBLAS and jansson linked statically
#                    (the device machine has the driver, glibc and libstdc++ only)
#   fv2bench.xz      the same compressed: what device.sh unpacks (carried: a few MB)
#   ptxas.txt        registers / spills of every kernel of fv2_inst.cu and fv2_odd3_inst.cu (the
#                    built chunk kernel; all instantiations)
#   fv2_emu_test     the built kernels' source (kernels/lnmod_fwd_v2_kern.cuh, _odd.cuh, _chunk.cuh,
#                    _plan.h, _chunk_plan.h, lnmod_chunk_ring.cuh) and the experiment's odd kernel (fv2_odd2.cuh) run on
#                    the CPU (fv2_emu.h) against the reference, run here, and its planted bugs
#                    (-DFV2_EMU_PLANT_LAG / _WAIT / _NBAR / _ODD2PD / _ODD2Y / _CHUNKEDGE /
#                    _CHUNKRING / _CHUNKBAR / _CHUNKFAR / _CHUNKMEAN / _CHUNKTICK / _CHUNKGROUP / _RCRESET), which must fail it
# FV2_EMU_ONLY=1: the emulation test and its planted bugs only (~7 minutes on 2 cores; no CUDA
# compile, no harness, no ptxas table) -- a kernel change's CPU check before any device call.
# (The rule's host test is the project's: ctest lnmod_fwd_v2_plan, with its planted bugs.)
# Every compile with the project's warnings as errors (nvcc: --Werror all-warnings), under
# `nice -n 10`, at most FV2_JOBS (default 2) at a time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-$root/build-fwdv2}
mkdir -p "$out/obj"
export PATH=/usr/local/cuda/bin:$PATH
K=$root/kernels R=$root/reference V=$root/verify
cw=(-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wvla)
# shellcheck disable=SC2054 # the commas belong to -Xcompiler's one argument
nv=(nice -n 10 nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -Xcompiler=-Wall,-Wextra,-Werror --Werror all-warnings
    -I"$K" -I"$R" -I"$here")
o=$out/obj
jobs=${FV2_JOBS:-2}

blas_inc=$(pkg-config --cflags openblas)
nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -c "$K/lnmod_desc.c" -o "$o/lnmod_desc.o"
# The fused residual op's descriptor, once kernels/ has it (the glob below then links its kernels).
if [ -f "$K/lnmod_res_desc.c" ]; then nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -c "$K/lnmod_res_desc.c" -o "$o/lnmod_res_desc.o"; fi
for f in ref_lnmod ref_convert; do
  # shellcheck disable=SC2086
  nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -ffp-contract=off -fno-fast-math $blas_inc -I"$K" -c "$R/$f.c" -o "$o/$f.o"
done
nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -D_POSIX_C_SOURCE=200809L -I"$K" -I"$R" -c "$V/verify_check.c" -o "$o/verify_check.o"
nice -n 10 g++ -std=c++17 -O2 -Wall -Wextra -Werror -I"$K" -I"$R" -I"$V" -c "$here/fv2_check.cc" -o "$o/fv2_check.o"

if [ "${FV2_EMU_ONLY:-0}" != 1 ]; then
# CUDA: the built kernels (every kernels/lnmod_*.cu: the registry and the variant files it
# links -- a glob, so a file the kernels gain is linked too; the list written out by hand
# missed lnmod_bwd_bulk.cu once it landed), v2 (three x dtypes), the harness; at most $jobs
# at a time.
units=()
for f in "$K"/lnmod_*.cu; do units+=("$f:$(basename "$f" .cu)"); done
units+=("$here/fv2_inst.cu:fv2_inst_bf16:-DFV2_XT=2"
        "$here/fv2_inst.cu:fv2_inst_f16:-DFV2_XT=1" "$here/fv2_inst.cu:fv2_inst_f32:-DFV2_XT=0"
        "$here/fv2_odd3_inst.cu:fv2_odd3_bf16:-DFV2_XT=2" "$here/fv2_odd3_inst.cu:fv2_odd3_f16:-DFV2_XT=1"
        "$here/fv2.cu:fv2" "$here/fv2_main.cu:fv2_main")
pids=()
for u in "${units[@]}"; do
  IFS=: read -r src name def <<<"$u"
  # shellcheck disable=SC2086 # def is empty or one -D flag
  "${nv[@]}" $def -Xptxas -v -c "$src" -o "$o/$name.o" >"$o/$name.ptxas" 2>&1 &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}" || { grep -hE 'error|warning' "$o"/*.ptxas | head; exit 1; }
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || { grep -hE 'error|warning' "$o"/*.ptxas | head; exit 1; }; done
# Registers and spills per kernel, demangled: "kernel regs spill-stores spill-loads".
for name in fv2_inst_bf16 fv2_inst_f16 fv2_inst_f32 fv2_odd3_bf16 fv2_odd3_f16; do
  awk '/Compiling entry function/ {match($0, /_Z[A-Za-z0-9_]*/); n = substr($0, RSTART, RLENGTH)}
       /spill stores/ {ss = $5; sl = $9}
       /Used [0-9]+ registers/ {print n, "regs", $5, "spill_stores", ss, "spill_loads", sl}' "$o/$name.ptxas"
done | c++filt | sed 's/(lnmod_detail::lnmod_kparams, fv2::kcfg)//; s/(lnmod_detail::lnmod_kparams, fv2::chunk_args)//' >"$out/ptxas.txt"
spills=$(awk '$(NF-2) != 0 || $NF != 0' "$out/ptxas.txt" | wc -l)
echo "ptxas: $(wc -l <"$out/ptxas.txt") kernels, $spills with spills (build-fwdv2/ptxas.txt)"
fi

# The kernels' own source on the CPU (fv2_emu.h): a copy of lnmod_common.cuh whose four asm
# helpers (cp.async, commit, wait, ld.shared) call the emulation, g++ -DFV2_EMU (g++ does not
# know `#pragma unroll`: that one warning is off), then the test and its two planted bugs.
lib=/usr/lib/x86_64-linux-gnu
mkdir -p "$out/emu"
awk -f "$here/emu_common.awk" "$K/lnmod_common.cuh" >"$out/emu/lnmod_common.cuh"
# A quoted include is looked up beside the including file first: the built kernel headers are
# copied (byte for byte) next to the emulation's lnmod_common.cuh, so that they include it and
# not kernels/'s (whose asm the CPU cannot run).
cp "$K/lnmod_fwd_v2_kern.cuh" "$K/lnmod_fwd_v2_odd.cuh" "$K/lnmod_fwd_v2_chunk.cuh" "$K/lnmod_fwd_v2_plan.h" \
  "$K/lnmod_fwd_v2_chunk_plan.h" "$K/lnmod_chunk_ring.cuh" "$out/emu/"
if grep -q 'asm' "$out/emu/lnmod_common.cuh"; then echo "build.sh: asm left in the emulation's lnmod_common.cuh" >&2; exit 1; fi
emu_objs=("$o/fv2_check.o" "$o/ref_lnmod.o" "$o/ref_convert.o" "$o/verify_check.o" "$o/lnmod_desc.o"
          "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a")
plants=(LAG WAIT NBAR ODD2PD ODD2Y CHUNKEDGE CHUNKRING CHUNKBAR CHUNKFAR CHUNKMEAN CHUNKTICK CHUNKGROUP RCRESET)
pids=()
for plant in "" "${plants[@]}"; do # ~50 s each: $jobs at a time
  nice -n 10 g++ -std=c++17 -O1 -Wall -Wextra -Werror -Wno-unknown-pragmas -DFV2_EMU ${plant:+-DFV2_EMU_PLANT_$plant} \
    -I/usr/local/cuda/include -I"$out/emu" -I"$here" -I"$K" -I"$R" "$here/fv2_emu_test.cc" "${emu_objs[@]}" \
    -lpthread -lm -o "$out/fv2_emu_test$plant" &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
# The test must have compiled the built kernels through the emulation's copies (never kernels/'s
# headers directly, whose asm would not run, nor an older copy of the kernels).
deps=$(g++ -std=c++17 -DFV2_EMU -I/usr/local/cuda/include -I"$out/emu" -I"$here" -I"$K" -I"$R" -M "$here/fv2_emu_test.cc" \
  | tr ' ' '\n' | tr -d '\134' | grep -E 'lnmod_fwd_v2|lnmod_common|lnmod_chunk_ring' | sort -u)
if [ "$(grep -c "^$out/emu/" <<<"$deps")" -ne 7 ] || grep -q "^$K/" <<<"$deps"; then
  echo "build.sh: the emulation did not include the seven emulation copies only:" >&2; echo "$deps" >&2; exit 1
fi
"$out/fv2_emu_test"
for plant in "${plants[@]}"; do
  if "$out/fv2_emu_test$plant" >"$out/fv2_emu_test$plant.out" 2>&1; then
    echo "build.sh: the emulation test passed with the planted bug $plant: it cannot catch it" >&2
    exit 1
  fi
  echo "planted bug $plant: caught ($(grep -c FAIL "$out/fv2_emu_test$plant.out") cases fail$(grep -m1 '^fv2 emu:' "$out/fv2_emu_test$plant.out" | sed 's/^/; stopped: /'))"
done

[ "${FV2_EMU_ONLY:-0}" = 1 ] && exit 0
nice -n 10 nvcc -arch=sm_90 -o "$out/fv2bench" "$o"/fv2_main.o "$o"/fv2.o "$o"/fv2_inst_*.o "$o"/fv2_odd3_*.o "$o"/fv2_check.o \
  "$o"/lnmod_*.o "$o"/ref_*.o "$o"/verify_check.o "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a" \
  -cudart static -lpthread -lm
strip "$out/fv2bench"
nice -n 10 xz -T2 -6 -kf "$out/fv2bench"
ls -la "$out/fv2bench" "$out/fv2bench.xz"
# The shared libraries it still needs: glibc, libstdc++ and libgcc only (the device has them).
ldd "$out/fv2bench" | awk '{print "  " $1}'
