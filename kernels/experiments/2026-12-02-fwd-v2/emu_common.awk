# emu_common.awk -- kernels/lnmod_common.cuh -> the emulations' copy (fv2_emu.h): its four asm
# helpers (cp.async, its commit and wait, ld.shared) call the emulation instead. Used by
# build.sh here, ../2026-12-02-bwd-v3/build.sh and ../2026-12-06-bwd-wide/emu.sh:
#   awk -f emu_common.awk kernels/lnmod_common.cuh >OUT/lnmod_common.cuh
/__device__ __forceinline__ void lnmod_cp_async16\(/ { print "__device__ __forceinline__ void lnmod_cp_async16(void *smem, const void *gmem) { emu::cp_async16(smem, gmem); }"; skip = 1 }
/__device__ __forceinline__ void lnmod_cp_commit\(\)/ { print "__device__ __forceinline__ void lnmod_cp_commit() { emu::cp_commit(); }"; next }
/template <int N> __device__ __forceinline__ void lnmod_cp_wait\(\)/ { print "template <int N> __device__ __forceinline__ void lnmod_cp_wait() { emu::cp_wait(N); }"; skip = 1 }
/__device__ __forceinline__ uint4 lnmod_lds16\(/ { print "__device__ __forceinline__ uint4 lnmod_lds16(const uint4 *p) { return *p; }"; skip = 1 }
skip { if ($0 ~ /^}/) skip = 0; next }
{ print }
