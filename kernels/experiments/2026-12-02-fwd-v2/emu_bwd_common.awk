# emu_bwd_common.awk -- kernels/lnmod_bwd_common.cuh for the backward emulations: up to the
# re-reading paths, without the finalize's launcher, the finalize's static shared array in the
# emulation's static shared memory, the 4-byte cp.async from the emulation.
/^\/\/ ---- the paths that re-read rows/ { exit }
/^\/\/ Launches the finalize when the plan has partials/ { skip = 1 }
skip { if ($0 ~ /^}/) skip = 0; next }
/__shared__ float part\[2\]\[BWD_FIN_WARPS\]\[32\];/ { print "    auto &part = *reinterpret_cast<float (*)[2][BWD_FIN_WARPS][32]>(emu::static_smem());"; next }
/const unsigned s = \(unsigned\)__cvta_generic_to_shared\(smem\);/ { next }
/asm volatile\("cp.async.ca.shared.global \[%0\], \[%1\], 4;"/ { print "    emu::cp_async4(smem, gmem);"; next }
{ print }
END { print "} // namespace lnmod_detail"; print "#endif" }
