// bwd_emu_check.h -- what the backward emulations share (../2026-12-06-bwd-wide/bwd_emu_test.cc,
// ../2026-12-06-bwd-odd/odd_emu_test.cc): a case's inputs and the check of a kernel's outputs
// against the float64 backward (reference/ref_lnmod.h) at the kernels' own fp32 statistics, and
// the descriptor of a case.
// Tolerances: dx within 4 units of its dtype's roundoff of the row's scale (|dx_ref| + rstd *
// (sum |g| + sum |g xhat|)); dscale / dshift within 1e-4 of the sums of their terms' magnitudes
// (fp32 modulation), 4 units of roundoff (16-bit).
#ifndef ADALOAD_BWD_EMU_CHECK_H
#define ADALOAD_BWD_EMU_CHECK_H

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

extern "C" {
#include "ref_lnmod.h"
}

namespace bwd_emu {

// A case's descriptor: modulation rows of Wan's [B, 6, D] table (strides 6 D), eps 1e-6.
inline lnmod_desc wan_desc(lnmod_dtype x, lnmod_dtype m, lnmod_dtype y, lnmod_layout layout, int64_t D, int64_t rows,
                           int64_t S, int64_t L)
{
    lnmod_desc d{};
    d.rows = rows;
    d.D = D;
    d.rows_per_sample = S;
    d.frame_len = L;
    d.x_dtype = x;
    d.mod_dtype = m;
    d.y_dtype = y;
    d.layout = layout;
    d.scale_stride = 6 * D;
    d.shift_stride = 6 * D;
    d.eps = 1e-6;
    return d;
}

inline double tol_of(lnmod_dtype t) { return t == LNMOD_F32 ? 0x1p-23 : t == LNMOD_F16 ? 0x1p-10 : 0x1p-7; }

// x and dy (rows x D elements of d's dtypes), the modulation table (mod_elems of d's modulation
// dtype), from one stream seeded by D and rows; then the forward's fp32 statistics (what
// lnmod_forward writes) from the reference's doubles.
inline void fill(const lnmod_desc &d, void *x, void *dy, void *scale, int64_t mod_elems, std::vector<float> &mean,
                 std::vector<float> &rstd)
{
    const int64_t n = d.rows * d.D;
    std::mt19937_64 rng(0x5eed ^ (uint64_t)d.D ^ ((uint64_t)d.rows << 20));
    std::normal_distribution<double> nd(0.0, 1.0);
    for (int64_t i = 0; i < n; i++) {
        ref_store(d.x_dtype, x, i, 0.5 + 2.0 * nd(rng) + (i % 7 == 0 ? 3.0 : 0.0));
        ref_store(d.y_dtype, dy, i, nd(rng));
    }
    for (int64_t i = 0; i < mod_elems; i++) ref_store(d.mod_dtype, scale, i, 0.3 * nd(rng));
    mean.assign((size_t)d.rows, 0.0f);
    rstd.assign((size_t)d.rows, 0.0f);
    for (int64_t r = 0; r < d.rows; r++) {
        double s = 0, q = 0;
        for (int64_t j = 0; j < d.D; j++) s += ref_load(d.x_dtype, x, r * d.D + j);
        const double mu = s / (double)d.D;
        for (int64_t j = 0; j < d.D; j++) {
            const double v = ref_load(d.x_dtype, x, r * d.D + j) - mu;
            q += v * v;
        }
        mean[(size_t)r] = (float)mu;
        rstd[(size_t)r] = (float)(1.0 / std::sqrt(q / (double)d.D + d.eps));
    }
}

// dx (every row) and dscale / dshift (every modulation row's columns) against float64; the first
// failures printed under `name`, each counted in *fails; the worst errors (dx in units of its
// roundoff) in *worst_dx, *worst_s.
inline void check(const char *name, const lnmod_desc &d, const void *x, const void *scale, const void *dy,
                  const float *mean, const float *rstd, const void *dx, const void *dscale, const void *dshift,
                  int *fails, double *worst_dx, double *worst_s)
{
    const int64_t D = d.D;
    std::vector<double> rdx((size_t)D), g((size_t)D), xh((size_t)D);
    double worst = 0;
    for (int64_t r = 0; r < d.rows; r++) {
        ref_bwd_row info;
        ref_lnmod_backward_row(&d, r, x, scale, dy, mean, rstd, rdx.data(), g.data(), xh.data(), &info);
        const double scl = (double)rstd[r] * (info.abs_g + info.abs_gx) + 1e-30;
        for (int64_t j = 0; j < D; j++) {
            const double got = ref_load(d.x_dtype, dx, r * D + j);
            const double e = std::fabs(got - rdx[(size_t)j]) / (std::fabs(rdx[(size_t)j]) + scl);
            if (!(e <= 4 * tol_of(d.x_dtype))) {
                if (*fails < 3)
                    std::printf("FAIL %s: dx row %lld col %lld: %g, want %g\n", name, (long long)r, (long long)j, got,
                                rdx[(size_t)j]);
                ++*fails;
            }
            worst = std::fmax(worst, e);
        }
    }
    *worst_dx = worst / tol_of(d.x_dtype);
    std::vector<double> rs((size_t)D), rh((size_t)D), as((size_t)D), ah((size_t)D);
    const double lim = d.mod_dtype == LNMOD_F32 ? 1e-4 : 4 * tol_of(d.mod_dtype);
    *worst_s = 0;
    for (int64_t k = 0; k < lnmod_mod_rows(&d); k++) {
        ref_lnmod_backward_colsums(&d, k, 0, D, x, dy, mean, rstd, rs.data(), rh.data(), as.data(), ah.data());
        for (int64_t j = 0; j < D; j++) {
            const double s = ref_load(d.mod_dtype, dscale, k * d.scale_stride + j);
            const double h = ref_load(d.mod_dtype, dshift, k * d.shift_stride + j);
            const double es = std::fabs(s - rs[(size_t)j]) / (as[(size_t)j] + 1e-30);
            const double eh = std::fabs(h - rh[(size_t)j]) / (ah[(size_t)j] + 1e-30);
            if (!(es <= lim) || !(eh <= lim)) {
                if (*fails < 3)
                    std::printf("FAIL %s: dscale/dshift row %lld col %lld: %g %g, want %g %g\n", name, (long long)k,
                                (long long)j, s, h, rs[(size_t)j], rh[(size_t)j]);
                ++*fails;
            }
            *worst_s = std::fmax(*worst_s, std::fmax(es, eh));
        }
    }
}

} // namespace bwd_emu

#endif
