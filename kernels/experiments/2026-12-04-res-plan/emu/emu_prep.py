#!/usr/bin/env python3
"""emu_prep.py TREE OUT -- the fused op's kernel sources of TREE (res-v3.patch applied) rewritten
for g++ under the CUDA emulation (../../2026-12-02-fwd-v2/fv2_emu.h plus emu_bulk.h), into OUT:

  lnmod_common.cuh       its four asm helpers (cp.async, commit, wait, ld.shared) call the emulation
  lnmod_bwd_common.cuh   without its three host launchers (lnmod_bwd_finalize, _columns,
                         _reread_run: `<<<` is not C++)
  lnmod_bulk_ptx.cuh     replaced by emu_bulk.h's mbarrier / named-barrier emulation
  lnmod_res_common.cuh, lnmod_res_fwd_gen.cuh, lnmod_res_fwd_plan.h, lnmod_res_bwd_bulk_plan.h,
  lnmod_chunk_ring.cuh, lnmod_res_fwd_chunk.cuh, lnmod_res_fwd_chunk_plan.h  as they are (the chunk
                         ring's bulk copies and mbarriers: fv2_emu.h's, under FV2_EMU)
  res_common_emu.inc     lnmod_res_common.cu without res_finalize and the byte counts; res_fin_kernel's
                         __shared__ array in the emulated CTA's static memory; its file-local al16
                         renamed res_al16 (one unit holds both .cu files here)
  res_bulk_emu.inc       lnmod_res_bwd_bulk.cu without its launches (rk_go, rk_stages, res_bwd_bulk):
                         the five inline-PTX helpers call the emulation, rk_kernel's shared arrays
                         in the emulated CTA's dynamic and static memory

Every rewrite must find exactly what it replaces (else exit 1: the sources moved on), so the
emulated code is the tree's own code but for the lines named here."""
import os
import re
import shutil
import sys


def sub1(s, old, new, what):
    if s.count(old) != 1:
        sys.exit("emu_prep.py: %s: found %d times: %r" % (what, s.count(old), old[:80]))
    return s.replace(old, new)


def cut_fn(s, header_re, what):
    """Removes the function whose first line matches header_re (with a template line before it)
    through its closing brace at column 0."""
    m = re.search(r"(template <[^\n]*>\n)?" + header_re + r"[^\n]*\n", s)
    if not m:
        sys.exit("emu_prep.py: %s: not found" % what)
    end = s.index("\n}\n", m.end()) + 3
    return s[:m.start()] + s[end:]


def body(s, header_re, new_body, what):
    """Replaces the body of the function whose header matches header_re (its braces at column 0)."""
    m = re.search(header_re + r"[^\n]*\n(?:[^\n]*\n)*?\{\n", s)
    if not m:
        sys.exit("emu_prep.py: %s: not found" % what)
    end = s.index("\n}\n", m.end()) + 3
    return s[:m.end()] + new_body + "\n}\n" + s[end:]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    K = os.path.join(sys.argv[1], "kernels")
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rd = lambda f: open(os.path.join(K, f)).read()

    c = rd("lnmod_common.cuh")
    c = body(c, r"__device__ __forceinline__ void lnmod_cp_async16\(", "    emu::cp_async16(smem, gmem);", "cp.async")
    c = body(c, r"template <int N> __device__ __forceinline__ void lnmod_cp_wait\(", "    emu::cp_wait(N);", "cp wait")
    c = body(c, r"__device__ __forceinline__ uint4 lnmod_lds16\(", "    return *p;", "lds16")
    c = sub1(c, '__device__ __forceinline__ void lnmod_cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }',
             "__device__ __forceinline__ void lnmod_cp_commit() { emu::cp_commit(); }", "commit")
    if "asm" in re.sub(r"//[^\n]*", "", c):
        sys.exit("emu_prep.py: asm left in lnmod_common.cuh")
    open(os.path.join(out, "lnmod_common.cuh"), "w").write(c)

    b = rd("lnmod_bwd_common.cuh")
    for name in ("lnmod_bwd_finalize", "lnmod_bwd_columns", "lnmod_bwd_reread_run"):
        b = cut_fn(b, r"static inline lnmod_status " + name + r"\(", name)
    if "<<<" in b:
        sys.exit("emu_prep.py: a launch left in lnmod_bwd_common.cuh")
    open(os.path.join(out, "lnmod_bwd_common.cuh"), "w").write(b)

    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "emu_bulk.h"),
                os.path.join(out, "lnmod_bulk_ptx.cuh"))
    for f in ("lnmod_res_common.cuh", "lnmod_res_fwd_gen.cuh", "lnmod_res_fwd_plan.h", "lnmod_res_bwd_bulk_plan.h",
              "lnmod_chunk_ring.cuh", "lnmod_res_fwd_chunk.cuh", "lnmod_res_fwd_chunk_plan.h"):
        shutil.copy(os.path.join(K, f), os.path.join(out, f))

    r = rd("lnmod_res_common.cu")
    r = cut_fn(r, r"lnmod_status res_finalize\(", "res_finalize")
    r = r[:r.index("// ---- the registry's workspace and byte counts")]
    # its file-local al16(int64_t) would hide lnmod_res_bwd_bulk.cu's al16(const void *) in one unit
    if len(re.findall(r"\bal16\(", r)) < 2:
        sys.exit("emu_prep.py: lnmod_res_common.cu's al16 not found")
    r = re.sub(r"\bal16\(", "res_al16(", r)
    r = sub1(r, "    __shared__ float part[NS][BWD_FIN_WARPS][32];",
             "    float(&part)[NS][BWD_FIN_WARPS][32] = *reinterpret_cast<float(*)[NS][BWD_FIN_WARPS][32]>(emu::static_smem());",
             "fin part")
    open(os.path.join(out, "res_common_emu.inc"), "w").write(r)

    k = rd("lnmod_res_bwd_bulk.cu")
    k = body(k, r"__device__ __forceinline__ void rk_bulk\(", "    emu_bulk::bulk(dst, src, bytes, bar);", "rk_bulk")
    k = body(k, r"__device__ __forceinline__ void rk_expect_tx\(", "    emu_bulk::expect_tx(bar, bytes);", "rk_expect_tx")
    k = body(k, r"__device__ __forceinline__ void rk_cp4\(", "    memcpy(dst, src, 4);", "rk_cp4")
    k = body(k, r"__device__ __forceinline__ void rk_arrive_noinc\(", "    emu_bulk::arrive(bar);", "rk_arrive_noinc")
    k = body(k, r"__device__ __forceinline__ void rk_b4\(",
             "    unsigned x, y;\n    memcpy(&x, p, 4);\n    memcpy(&y, p + 4, 4);\n"
             "    f[0] = __uint_as_float(x << 16);\n    f[1] = __uint_as_float(x & 0xffff0000u);\n"
             "    f[2] = __uint_as_float(y << 16);\n    f[3] = __uint_as_float(y & 0xffff0000u);", "rk_b4")
    k = sub1(k, "    extern __shared__ uint4 rk_smem[];\n    __shared__ float2 red[2][G][MAXW];\n"
             "    __shared__ float2 stats0[G * NS];\n    __shared__ uint64_t full[G * NS]; // one mbarrier per group and stage\n",
             "    uint4 *rk_smem = emu::smem();\n"
             "    char *st_ = reinterpret_cast<char *>(emu::static_smem());\n"
             "    float2(&red)[2][G][MAXW] = *reinterpret_cast<float2(*)[2][G][MAXW]>(st_);\n"
             "    float2 *stats0 = reinterpret_cast<float2 *>(st_ + 1024);\n"
             "    uint64_t *full = reinterpret_cast<uint64_t *>(st_ + 2048);\n", "rk shared")
    i = k.index("bool al16(const void *x)")
    j = k.index("} // namespace lnmod_res_bulk_detail")
    k = k[:i] + "bool al16(const void *x) { return ((uintptr_t)x & 15u) == 0; }\n\n" + k[j:]
    k = cut_fn(k, r"lnmod_status res_bwd_bulk\(", "res_bwd_bulk")
    if "asm" in re.sub(r"//[^\n]*", "", k) or "<<<" in k:
        sys.exit("emu_prep.py: asm or a launch left in lnmod_res_bwd_bulk.cu")
    open(os.path.join(out, "res_bulk_emu.inc"), "w").write(k)


main()
