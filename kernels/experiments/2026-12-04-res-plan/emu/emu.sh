#!/usr/bin/env bash
# emu.sh TREE BUILD -- builds and runs emu_rg.cc (the general fused forward's own source on the
# CPU under fv2_emu.h, judged by the verifier) against a tree with res-v3.patch applied (TREE:
# its kernels/ and verify/ headers) and that tree's CPU libraries (BUILD: a configured build of
# TREE; the targets ada_verify, ada_verify_grid, ada_reference, lnmod_res_desc, lnmod_desc,
# ada_common are built here), then with the planted bug LNMOD_RES_FWD_PLANT_MERGE (every warp's count taken as
# full: the merge the three D-specialized kernels may use), which must fail it. g++ -DFV2_EMU;
# the kernel headers it needs are copied beside an emulation copy of lnmod_common.cuh (its four
# asm helpers call the emulation) and a stub lnmod_bwd_common.cuh (lnmod_res_common.cuh declares
# host functions with its lnmod_bparams; the real header holds host launches g++ cannot parse).
# Exit 0: the test passed and the planted bug was caught.
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
tree=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
fv2=$here/../../2026-12-02-fwd-v2
K=$tree/kernels
[ -f "$K/lnmod_res_fwd_gen.cuh" ] || { echo "emu.sh: $K has no lnmod_res_fwd_gen.cuh (apply res-v3.patch)" >&2; exit 2; }
out=$build/emu-rg
mkdir -p "$out/inc"
awk '
  /__device__ __forceinline__ void lnmod_cp_async16\(/ { print "__device__ __forceinline__ void lnmod_cp_async16(void *smem, const void *gmem) { emu::cp_async16(smem, gmem); }"; skip = 1 }
  /__device__ __forceinline__ void lnmod_cp_commit\(\)/ { print "__device__ __forceinline__ void lnmod_cp_commit() { emu::cp_commit(); }"; next }
  /template <int N> __device__ __forceinline__ void lnmod_cp_wait\(\)/ { print "template <int N> __device__ __forceinline__ void lnmod_cp_wait() { emu::cp_wait(N); }"; skip = 1 }
  /__device__ __forceinline__ uint4 lnmod_lds16\(/ { print "__device__ __forceinline__ uint4 lnmod_lds16(const uint4 *p) { return *p; }"; skip = 1 }
  skip { if ($0 ~ /^}/) skip = 0; next }
  { print }' "$K/lnmod_common.cuh" >"$out/inc/lnmod_common.cuh"
if grep -q 'asm' "$out/inc/lnmod_common.cuh"; then echo "emu.sh: asm left in the emulation's lnmod_common.cuh" >&2; exit 1; fi
cat >"$out/inc/lnmod_bwd_common.cuh" <<'STUB'
// emu.sh's stub: lnmod_res_common.cuh only declares host functions that take lnmod_bparams.
#include "lnmod_common.cuh"
namespace lnmod_detail {
struct lnmod_bparams {
    int64_t unused;
};
} // namespace lnmod_detail
STUB
cp "$K/lnmod_res_fwd_gen.cuh" "$K/lnmod_res_common.cuh" "$K/lnmod_res_fwd_plan.h" "$out/inc/"
cmake --build "$build" -j2 --target ada_verify ada_verify_grid ada_reference lnmod_res_desc lnmod_desc ada_common >/dev/null
libs=("$build/verify/libada_verify.a" "$build/verify/libada_verify_grid.a" "$build/reference/libada_reference.a"
      "$build/kernels/liblnmod_res_desc.a" "$build/kernels/liblnmod_desc.a" "$build/common/libada_common.a")
lib=/usr/lib/x86_64-linux-gnu
for plant in "" MERGE; do
  g++ -std=c++17 -O1 -Wall -Wextra -Werror -Wno-unknown-pragmas -DFV2_EMU ${plant:+-DLNMOD_RES_FWD_PLANT_$plant} \
    -I/usr/local/cuda/include -I"$out/inc" -I"$fv2" -I"$K" -I"$tree/verify" -I"$tree/reference" -I"$tree/common" \
    "$here/emu_rg.cc" -Wl,--start-group "${libs[@]}" -Wl,--end-group \
    "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a" -lpthread -lm -lgfortran -o "$out/emu_rg$plant"
done
"$out/emu_rg" | tee "$out/emu_rg.out" | tail -5
if "$out/emu_rgMERGE" >"$out/emu_rgMERGE.out" 2>&1; then
  echo "emu.sh: the test passed with the planted bug MERGE: it cannot catch it" >&2
  exit 1
fi
echo "planted bug MERGE: caught ($(grep -c 'FAIL' "$out/emu_rgMERGE.out") failing cases; $(tail -1 "$out/emu_rgMERGE.out"))"
