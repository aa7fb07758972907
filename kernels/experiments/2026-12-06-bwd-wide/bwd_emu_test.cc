// bwd_emu_test.cc -- dtile backward's version 1 kernel (bd_kernel, lnmod_bwd_dtile.cu with
// bwd-wide.patch) and the finalize (bwd_fin_kernel) run on the CPU (emu.sh builds it against the
// emulation copies of their sources and ../2026-12-02-fwd-v2/fv2_emu.h), each case against the
// float64 backward at the kernels' own fp32 statistics (ref_lnmod_backward_row / _colsums):
//   * the wide shapes (16-bit x above D 8192: 24 elements a thread, or 32 above D 12288, with
//     (1 + scale) in shared memory) with a ring of 4, 3 and 2 stages, per sample and per frame,
//     several groups and chunks (so partials and the finalize), last vector rows that are
//     partial (D 9000: T 384, 1125 vectors; D 13000), bf16 and fp16, fp32 and 16-bit dy;
//   * the narrow shape at D 4096 and 8192 as the control (main's kernels);
//   * each case with cp.async performed at issue ("eager") and only at its wait ("lazy"), and
//     on two grid sizes whose outputs must be bit-identical (the determinism the API promises).
// The host side (shape, ring depth, shared memory) is the launcher's own rule
// (lnmod_bwd_v1_shape.h) on an H200's 227 KB opt-in. Inputs and tolerances:
// ../2026-12-02-fwd-v2/bwd_emu_check.h.
#include "fv2_emu.h"

#include "lnmod_bwd_common.cuh"
#include "lnmod_bwd_v1_shape.h"

#include "bd_part.cuh"

#include "bwd_emu_check.h" // bwd_emu::fill, bwd_emu::check

#include <string>

#include "fv2_emu_launch.h" // emu::launch

namespace {

using namespace lnmod_detail;

constexpr size_t OPTIN = 232448; // the H100's and H200's per-CTA opt-in

struct outputs {
    std::vector<unsigned char> dx, dscale, dshift;
};

template <typename TX, typename TM, typename TY, int VPT, int NS>
void run_bd(const lnmod_bparams &p, int T, int grid)
{
    using C = bd_cfg<TX, TM, TY, VPT, false>;
    const size_t stage = (size_t)T * (16 * C::SLOTS + 8);
    const size_t sps = C::SPS ? (size_t)T * VPT * C::VEC * sizeof(float) : 0;
    emu::launch((unsigned)grid, (unsigned)T, 1, NS * stage + sps, sizeof(float2) * 2 * (BD_MAX_T / 32),
                [&] { bd_kernel<TX, TM, TY, VPT, false, NS, 1>(p); });
}

// The launcher's choice (bd_shape / bd_run): VPT and T from the shape rule, the ring from the
// wide rule (wide) or 8 / 4 stages (narrow, as bd_run on these sizes); then the finalize.
template <typename TX, typename TM, typename TY>
std::string run_case(const lnmod_bparams &p, int grid, int *ns_out)
{
    constexpr int VEC = dt<TX>::VEC;
    int T = 0;
    const int vpt = lnmod_bv1_shape(p.D / VEC, VEC, 0, &T);
    int ns = 0;
    if (vpt == 3 || vpt == 4) {
        const int slots = vpt * (1 + VEC * (int)sizeof(TY) / 16); // bd_cfg::SLOTS
        ns = lnmod_bv1_wide_stages((size_t)T * (16 * slots + 8), (size_t)T * vpt * VEC * sizeof(float), OPTIN);
        if (ns < 2) return "no ring fits";
        if (vpt == 3) {
            if (ns == 4) run_bd<TX, TM, TY, 3, 4>(p, T, grid);
            else if (ns == 3) run_bd<TX, TM, TY, 3, 3>(p, T, grid);
            else run_bd<TX, TM, TY, 3, 2>(p, T, grid);
        } else {
            if (ns == 4) run_bd<TX, TM, TY, 4, 4>(p, T, grid);
            else if (ns == 3) run_bd<TX, TM, TY, 4, 3>(p, T, grid);
            else run_bd<TX, TM, TY, 4, 2>(p, T, grid);
        }
    } else if (vpt == 1 || vpt == 2) {
        ns = 4;
        if (vpt == 1) run_bd<TX, TM, TY, 1, 4>(p, T, grid);
        else run_bd<TX, TM, TY, 2, 4>(p, T, grid);
    } else {
        return "no shape";
    }
    *ns_out = ns;
    if (p.cpg > 1) {
        const int fw = lnmod_bwd_fin_warps(p.cpg);
        emu::launch(3, (unsigned)(32 * fw), 1, 0, sizeof(float) * 2 * BWD_FIN_WARPS * 32,
                    [&] { bwd_fin_kernel<TM>(p); });
    }
    return "";
}

struct spec {
    const char *name;
    lnmod_dtype x, m, y;
    lnmod_layout layout;
    int64_t D, rows, S, L;
    int want_vpt, want_ns; // the shape the rule must pick here
};

template <typename TX, typename TM, typename TY> int run_spec(const spec &c)
{
    const lnmod_desc d = bwd_emu::wan_desc(c.x, c.m, c.y, c.layout, c.D, c.rows, c.S, c.L);
    if (lnmod_desc_validate(&d) != LNMOD_OK) {
        std::printf("FAIL %s: invalid descriptor\n", c.name);
        return 1;
    }
    const int64_t n = c.rows * c.D, mrows = lnmod_mod_rows(&d);
    std::vector<TX> x((size_t)n);
    std::vector<TY> dy((size_t)n);
    std::vector<TM> scale((size_t)(mrows * d.scale_stride));
    std::vector<float> mean, rstd;
    bwd_emu::fill(d, x.data(), dy.data(), scale.data(), mrows * d.scale_stride, mean, rstd);
    int64_t glen = 0, cpg = 0, ng = 0;
    const int64_t wsb = lnmod_bwd_plan(&d, &glen, &cpg, &ng);
    int fails = 0;
    outputs first;
    for (int mode = 0; mode < 4; mode++) { // eager / lazy copies x two grid sizes
        emu::S().eager = mode % 2 == 0;
        const int grid = mode < 2 ? 2 : 5;
        std::vector<TX> dx((size_t)n);
        std::vector<TM> dscale((size_t)(mrows * d.scale_stride)), dshift((size_t)(mrows * d.shift_stride));
        std::vector<float> ws((size_t)(wsb > 0 ? wsb / 4 : 1), std::nanf(""));
        memset((void *)dx.data(), 0xff, dx.size() * sizeof(TX));
        memset((void *)dscale.data(), 0xff, dscale.size() * sizeof(TM));
        memset((void *)dshift.data(), 0xff, dshift.size() * sizeof(TM));
        const lnmod_bparams p = lnmod_make_bparams(&d, x.data(), scale.data(), dy.data(), mean.data(), rstd.data(),
                                                   dx.data(), dscale.data(), dshift.data(), ws.data());
        int ns = 0;
        const std::string err = run_case<TX, TM, TY>(p, grid, &ns);
        if (!err.empty() || ns != c.want_ns) {
            std::printf("FAIL %s: %s (ring %d, want %d)\n", c.name, err.c_str(), ns, c.want_ns);
            return 1;
        }
        outputs o;
        o.dx.assign((unsigned char *)dx.data(), (unsigned char *)(dx.data() + dx.size()));
        o.dscale.assign((unsigned char *)dscale.data(), (unsigned char *)(dscale.data() + dscale.size()));
        o.dshift.assign((unsigned char *)dshift.data(), (unsigned char *)(dshift.data() + dshift.size()));
        if (mode == 0) {
            first = o;
        } else if (o.dx != first.dx || o.dscale != first.dscale || o.dshift != first.dshift) {
            std::printf("FAIL %s: mode %d (grid %d, %s) not bit-identical to mode 0\n", c.name, mode, grid,
                        emu::S().eager ? "eager" : "lazy");
            fails++;
            continue;
        }
        if (mode) continue; // identical bits: checked once against the reference
        int tt = 0;
        const int vpt = lnmod_bv1_shape(c.D / dt<TX>::VEC, dt<TX>::VEC, 0, &tt);
        if (vpt != c.want_vpt) {
            std::printf("FAIL %s: VPT %d, want %d\n", c.name, vpt, c.want_vpt);
            fails++;
        }
        double worst = 0, worst_s = 0;
        bwd_emu::check(c.name, d, x.data(), scale.data(), dy.data(), mean.data(), rstd.data(), dx.data(),
                       dscale.data(), dshift.data(), &fails, &worst, &worst_s);
        std::printf("%s %s: VPT %d ring %d, %lld chunks (cpg %lld): dx worst %.3g of its roundoff scale, "
                    "dscale/dshift worst %.3g\n",
                    fails ? "FAIL" : "ok  ", c.name, vpt, ns,
                    (long long)(ng * cpg), (long long)cpg, worst, worst_s);
    }
    return fails ? 1 : 0;
}

} // namespace

int main()
{
    const lnmod_dtype B = LNMOD_BF16, H = LNMOD_F16, F = LNMOD_F32;
    const lnmod_layout SMP = LNMOD_PER_SAMPLE, FRM = LNMOD_PER_FRAME;
    int bad = 0;
    // name, x, mod, y, layout, D, rows, S, L, want VPT, want ring
    bad += run_spec<__nv_bfloat16, float, __nv_bfloat16>({"wide bf16 D8704 2 samples", B, F, B, SMP, 8704, 100, 50, 1, 3, 4});
    bad += run_spec<__nv_bfloat16, float, float>({"wide bf16/f32 dy D8704 per frame", B, F, F, FRM, 8704, 96, 48, 16, 3, 3});
    bad += run_spec<__half, float, __half>({"wide fp16 D9000 (partial last vector row)", H, F, H, SMP, 9000, 70, 70, 1, 3, 4});
    bad += run_spec<__nv_bfloat16, float, __nv_bfloat16>({"wide bf16 D12288", B, F, B, SMP, 12288, 66, 66, 1, 3, 3});
    bad += run_spec<__nv_bfloat16, __nv_bfloat16, float>({"wide bf16/bf16 mod/f32 dy D12288", B, B, F, SMP, 12288, 40, 40, 1, 3, 2});
    bad += run_spec<__nv_bfloat16, float, __nv_bfloat16>({"32 a thread bf16 D16384 2 samples", B, F, B, SMP, 16384, 44, 22, 1, 4, 2});
    bad += run_spec<__half, float, __half>({"32 a thread fp16 D12800", H, F, H, SMP, 12800, 70, 70, 1, 4, 3});
    bad += run_spec<__nv_bfloat16, float, __nv_bfloat16>({"32 a thread bf16 D13000 per frame (partial vector row)", B, F, B, FRM, 13000, 66, 66, 22, 4, 3});
    bad += run_spec<__nv_bfloat16, float, __nv_bfloat16>({"narrow bf16 D8192 (main's kernel)", B, F, B, SMP, 8192, 70, 35, 1, 2, 4});
    bad += run_spec<__half, float, __half>({"narrow fp16 D4096 per frame (main's kernel)", H, F, H, FRM, 4096, 64, 32, 8, 1, 4});
    std::printf("%s: %d case(s) failed\n", bad ? "FAIL" : "ok", bad);
    return bad ? 1 : 0;
}
