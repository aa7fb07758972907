#!/usr/bin/env bash
# emu_landed.sh TREE [OUT] -- dtile's forward v2 as landed in TREE/kernels (lnmod_fwd_v2_kern.cuh,
# _odd.cuh, _plan.h: a tree with fwd-v2-land.patch applied) run from its own source on the CPU by
# the fwd-v2 experiment's emulation test (../2026-12-02-fwd-v2/fv2_emu_test.cc: 42 cases through
# every path, both cp.async models, against the float64 reference with the verifier's
# tolerances), then with its two planted bugs (FV2_EMU_PLANT_LAG, FV2_EMU_PLANT_WAIT), which must
# fail it. Shims named like the experiment's headers include the landed ones, so the test runs
# the landed source, not the experiment's copy. OUT defaults to TREE/build-fwdland.
# Exit 0: passed and both planted bugs caught; 1 otherwise; 2 bad usage. ~3-4 min on 2 cores.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; fi
tree=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
fv2=$(cd "$here/../2026-12-02-fwd-v2" && pwd)
K=$tree/kernels R=$tree/reference V=$tree/verify
[ -f "$K/lnmod_fwd_v2_kern.cuh" ] || { echo "emu_landed.sh: $K has no lnmod_fwd_v2_kern.cuh (apply fwd-v2-land.patch)" >&2; exit 2; }
out=${2:-$tree/build-fwdland}
mkdir -p "$out/obj" "$out/shim"
o=$out/obj
cw=(-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wvla)
# The shims: the experiment's names, the landed source. A quoted include is looked up beside
# the including file first, so the test's own files and the landed kernel headers (byte for
# byte) are copied next to the shims and the emulation's lnmod_common.cuh.
cp "$fv2/fv2_emu_test.cc" "$fv2/fv2_emu.h" "$fv2/fv2_check.h" "$fv2/fv2_rows.h" "$out/shim/"
cp "$K/lnmod_fwd_v2_kern.cuh" "$K/lnmod_fwd_v2_odd.cuh" "$K/lnmod_fwd_v2_plan.h" "$out/shim/"
printf '#include "lnmod_fwd_v2_kern.cuh"\n' >"$out/shim/fv2_kern.cuh"
printf '#include "lnmod_fwd_v2_plan.h"\n' >"$out/shim/fv2_plan.h"
# lnmod_common.cuh with its four asm helpers calling the emulation (as the experiment's build.sh).
awk '
  /__device__ __forceinline__ void lnmod_cp_async16\(/ { print "__device__ __forceinline__ void lnmod_cp_async16(void *smem, const void *gmem) { emu::cp_async16(smem, gmem); }"; skip = 1 }
  /__device__ __forceinline__ void lnmod_cp_commit\(\)/ { print "__device__ __forceinline__ void lnmod_cp_commit() { emu::cp_commit(); }"; next }
  /template <int N> __device__ __forceinline__ void lnmod_cp_wait\(\)/ { print "template <int N> __device__ __forceinline__ void lnmod_cp_wait() { emu::cp_wait(N); }"; skip = 1 }
  /__device__ __forceinline__ uint4 lnmod_lds16\(/ { print "__device__ __forceinline__ uint4 lnmod_lds16(const uint4 *p) { return *p; }"; skip = 1 }
  skip { if ($0 ~ /^}/) skip = 0; next }
  { print }' "$K/lnmod_common.cuh" >"$out/shim/lnmod_common.cuh"
if grep -q 'asm' "$out/shim/lnmod_common.cuh"; then echo "emu_landed.sh: asm left in the emulation's lnmod_common.cuh" >&2; exit 1; fi
blas_inc=$(pkg-config --cflags openblas)
nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -c "$K/lnmod_desc.c" -o "$o/lnmod_desc.o"
for f in ref_lnmod ref_convert; do
  # shellcheck disable=SC2086
  nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -ffp-contract=off -fno-fast-math $blas_inc -I"$K" -c "$R/$f.c" -o "$o/$f.o"
done
nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -D_POSIX_C_SOURCE=200809L -I"$K" -I"$R" -c "$V/verify_check.c" -o "$o/verify_check.o"
nice -n 10 g++ -std=c++17 -O2 -Wall -Wextra -Werror -I"$K" -I"$R" -I"$V" -c "$fv2/fv2_check.cc" -o "$o/fv2_check.o"
lib=/usr/lib/x86_64-linux-gnu
objs=("$o/fv2_check.o" "$o/ref_lnmod.o" "$o/ref_convert.o" "$o/verify_check.o" "$o/lnmod_desc.o"
      "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a")
# Include order: the shim directory (the test, fv2_kern.cuh, fv2_plan.h, the emulation's
# lnmod_common.cuh), then the tree's kernels/ (never the experiment's kernel copies).
pids=()
for plant in "" LAG WAIT; do
  nice -n 10 g++ -std=c++17 -O1 -Wall -Wextra -Werror -Wno-unknown-pragmas -DFV2_EMU ${plant:+-DFV2_EMU_PLANT_$plant} \
    -I/usr/local/cuda/include -I"$out/shim" -I"$K" -I"$R" "$out/shim/fv2_emu_test.cc" "${objs[@]}" \
    -lpthread -lm -lgfortran -o "$out/emu_landed$plant" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
# The test must have compiled the landed source, not the experiment's copy: its include chain.
g++ -std=c++17 -DFV2_EMU -I/usr/local/cuda/include -I"$out/shim" -I"$K" -I"$R" -M "$out/shim/fv2_emu_test.cc" \
  | tr ' ' '\n' | tr -d '\134' | grep -E 'fv2_kern|fv2_odd|fv2_plan|lnmod_fwd_v2|lnmod_common' | sort -u >"$out/emu_landed.deps"
if grep -q "$fv2/fv2_kern.cuh\|$fv2/fv2_odd.cuh\|$fv2/fv2_plan.h" "$out/emu_landed.deps" ||
   ! grep -q "$out/shim/lnmod_fwd_v2_kern.cuh" "$out/emu_landed.deps" ||
   ! grep -q "$out/shim/lnmod_common.cuh" "$out/emu_landed.deps"; then
  echo "emu_landed.sh: the test would not compile the landed source:" >&2; cat "$out/emu_landed.deps" >&2; exit 1
fi
rc=0
"$out/emu_landed" >"$out/emu_landed.out" 2>&1 || rc=1
grep -m5 FAIL "$out/emu_landed.out" || true
tail -2 "$out/emu_landed.out"
for plant in LAG WAIT; do
  if "$out/emu_landed$plant" >"$out/emu_landed$plant.out" 2>&1; then
    echo "emu_landed.sh: the emulation test passed with the planted bug $plant: it cannot catch it" >&2
    rc=1
  else
    echo "planted bug $plant: caught ($(grep -c FAIL "$out/emu_landed$plant.out") cases fail)"
  fi
done
exit $rc
