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
// (lnmod_bwd_v1_shape.h) on an H200's 227 KB opt-in. Tolerances: dx within 4 units of its
// dtype's roundoff of the row's scale (|dx_ref| + rstd * mean |g|), dscale / dshift within 1e-4
// of the sums of the terms' absolute values (fp32 accumulation of up to ~100 rows).
#include "fv2_emu.h"

#include "lnmod_bwd_common.cuh"
#include "lnmod_bwd_v1_shape.h"

#include "bd_part.cuh"

extern "C" {
#include "ref_lnmod.h"
}

#include <random>
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

double tol_of(lnmod_dtype t) { return t == LNMOD_F32 ? 0x1p-23 : t == LNMOD_F16 ? 0x1p-10 : 0x1p-7; }

template <typename TX, typename TM, typename TY> int run_spec(const spec &c)
{
    lnmod_desc d{};
    d.rows = c.rows;
    d.D = c.D;
    d.rows_per_sample = c.S;
    d.frame_len = c.L;
    d.x_dtype = c.x;
    d.mod_dtype = c.m;
    d.y_dtype = c.y;
    d.layout = c.layout;
    d.scale_stride = 6 * c.D; // Wan's [B, 6, D] table
    d.shift_stride = 6 * c.D;
    d.eps = 1e-6;
    if (lnmod_desc_validate(&d) != LNMOD_OK) {
        std::printf("FAIL %s: invalid descriptor\n", c.name);
        return 1;
    }
    const int64_t n = c.rows * c.D, mrows = lnmod_mod_rows(&d);
    std::mt19937_64 rng(0x5eed ^ (uint64_t)c.D ^ ((uint64_t)c.rows << 20));
    std::normal_distribution<double> nd(0.0, 1.0);
    std::vector<TX> x((size_t)n);
    std::vector<TY> dy((size_t)n);
    std::vector<TM> scale((size_t)(mrows * d.scale_stride));
    for (int64_t i = 0; i < n; i++) {
        ref_store(c.x, x.data(), i, 0.5 + 2.0 * nd(rng) + (i % 7 == 0 ? 3.0 : 0.0));
        ref_store(c.y, dy.data(), i, nd(rng));
    }
    for (int64_t i = 0; i < mrows * d.scale_stride; i++) ref_store(c.m, scale.data(), i, 0.3 * nd(rng));
    // The forward's fp32 statistics (what lnmod_forward writes), from the reference's doubles.
    std::vector<float> mean((size_t)c.rows), rstd((size_t)c.rows);
    for (int64_t r = 0; r < c.rows; r++) {
        double s = 0, q = 0;
        for (int64_t j = 0; j < c.D; j++) s += ref_load(c.x, x.data(), r * c.D + j);
        const double mu = s / (double)c.D;
        for (int64_t j = 0; j < c.D; j++) {
            const double v = ref_load(c.x, x.data(), r * c.D + j) - mu;
            q += v * v;
        }
        mean[(size_t)r] = (float)mu;
        rstd[(size_t)r] = (float)(1.0 / std::sqrt(q / (double)c.D + d.eps));
    }
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
        // dx, every row against the float64 backward at these statistics
        std::vector<double> rdx((size_t)c.D), g((size_t)c.D), xh((size_t)c.D);
        double worst = 0;
        for (int64_t r = 0; r < c.rows; r++) {
            ref_bwd_row info;
            ref_lnmod_backward_row(&d, r, x.data(), scale.data(), dy.data(), mean.data(), rstd.data(), rdx.data(),
                                   g.data(), xh.data(), &info);
            const double scl = (double)rstd[(size_t)r] * (info.abs_g + info.abs_gx) + 1e-30;
            for (int64_t j = 0; j < c.D; j++) {
                const double e = std::fabs(ref_load(c.x, dx.data(), r * c.D + j) - rdx[(size_t)j]) /
                                 (std::fabs(rdx[(size_t)j]) + scl);
                if (!(e <= 4 * tol_of(c.x))) {
                    if (fails < 3)
                        std::printf("FAIL %s: dx row %lld col %lld: %g, want %g\n", c.name, (long long)r,
                                    (long long)j, ref_load(c.x, dx.data(), r * c.D + j), rdx[(size_t)j]);
                    fails++;
                }
                worst = std::fmax(worst, e);
            }
        }
        // dscale, dshift: every modulation row's columns
        std::vector<double> rs((size_t)c.D), rh((size_t)c.D), as((size_t)c.D), ah((size_t)c.D);
        double worst_s = 0;
        for (int64_t k = 0; k < mrows; k++) {
            ref_lnmod_backward_colsums(&d, k, 0, c.D, x.data(), dy.data(), mean.data(), rstd.data(), rs.data(),
                                       rh.data(), as.data(), ah.data());
            for (int64_t j = 0; j < c.D; j++) {
                const double es = std::fabs(ref_load(c.m, dscale.data(), k * d.scale_stride + j) - rs[(size_t)j]) /
                                  (as[(size_t)j] + 1e-30);
                const double eh = std::fabs(ref_load(c.m, dshift.data(), k * d.shift_stride + j) - rh[(size_t)j]) /
                                  (ah[(size_t)j] + 1e-30);
                const double lim = c.m == LNMOD_F32 ? 1e-4 : 4 * tol_of(c.m);
                if (!(es <= lim) || !(eh <= lim)) {
                    if (fails < 3)
                        std::printf("FAIL %s: dscale/dshift row %lld col %lld: %g %g, want %g %g\n", c.name,
                                    (long long)k, (long long)j, ref_load(c.m, dscale.data(), k * d.scale_stride + j),
                                    ref_load(c.m, dshift.data(), k * d.shift_stride + j), rs[(size_t)j], rh[(size_t)j]);
                    fails++;
                }
                worst_s = std::fmax(worst_s, std::fmax(es, eh));
            }
        }
        std::printf("%s %s: VPT %d ring %d, %lld chunks (cpg %lld): dx worst %.3g of its roundoff scale, "
                    "dscale/dshift worst %.3g\n",
                    fails ? "FAIL" : "ok  ", c.name, vpt, ns,
                    (long long)(ng * cpg), (long long)cpg, worst / tol_of(c.x), worst_s);
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
