/* test_ref_helpers.h -- the independent helpers of the reference's tests (test_reference.c,
 * test_ref_backward.c, test_ref_convert.c): they decode fp16/bf16 with ldexp of the fields,
 * compute m(r) by counting frames, and sum in long double -- none of them call the code
 * under test, except ref_store to round inputs into their storage dtype. Test code only. */
#ifndef ADALOAD_TEST_REF_HELPERS_H
#define ADALOAD_TEST_REF_HELPERS_H

#include <criterion/criterion.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ada_rng.h"
#include "lnmod_desc.h"
#include "ref_lnmod.h"

/* ---- independent helpers ---------------------------------------------------------------- */

/* Value of a binary16-style pattern with `eb` exponent bits and `mb` fraction bits from its
 * fields: (-1)^s * 2^(e-bias) * (1 + m/2^mb), or 2^(1-bias) * m/2^mb when e == 0. */
static inline double dec_fields(uint16_t h, int eb, int mb)
{
    int s = (h >> (eb + mb)) & 1;
    int e = (h >> mb) & ((1 << eb) - 1);
    int m = h & ((1 << mb) - 1);
    int bias = (1 << (eb - 1)) - 1;
    double v;
    if (e == (1 << eb) - 1) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double)m, 1 - bias - mb);
    else v = ldexp((double)((1 << mb) + m), e - bias - mb);
    return s ? -v : v;
}
static inline double dec_bf16(uint16_t h) { return dec_fields(h, 8, 7); }
static inline double dec_f16(uint16_t h) { return dec_fields(h, 5, 10); }
static inline int is_nan16(uint16_t h, int eb, int mb)
{
    return ((h >> mb) & ((1 << eb) - 1)) == (1 << eb) - 1 && (h & ((1 << mb) - 1)) != 0;
}

static inline double load_indep(lnmod_dtype t, const void *base, int64_t i)
{
    if (t == LNMOD_F32) {
        float f;
        memcpy(&f, (const char *)base + 4 * i, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, (const char *)base + 2 * i, 2);
    return t == LNMOD_F16 ? dec_f16(h) : dec_bf16(h);
}

/* m(r) from first principles: count the frames of a sample, then find r's frame. */
static inline int64_t naive_mod_row(const lnmod_desc *d, int64_t r)
{
    if (d->layout == LNMOD_PER_TOKEN) return r;
    int64_t S = d->rows_per_sample, b = r / S, t = r - b * S;
    if (d->layout == LNMOD_PER_SAMPLE) return b;
    int64_t F = 0;
    for (int64_t start = 0; start < S; start += d->frame_len) F++;
    return b * F + t / d->frame_len;
}

/* The op evaluated directly in long double, written differently from the reference:
 * y = shift + (x - mean) * rstd * (1 + scale). */
static inline void naive_forward(const lnmod_desc *d, const void *x, const void *scale,
                          const void *shift, long double *y, long double *mean,
                          long double *rstd)
{
    for (int64_t r = 0; r < d->rows; r++) {
        long double s = 0;
        for (int64_t i = 0; i < d->D; i++) s += load_indep(d->x_dtype, x, r * d->D + i);
        long double mu = s / d->D, ss = 0;
        for (int64_t i = 0; i < d->D; i++) {
            long double dv = load_indep(d->x_dtype, x, r * d->D + i) - mu;
            ss += dv * dv;
        }
        long double rs = 1.0L / sqrtl(ss / d->D + d->eps);
        int64_t k = naive_mod_row(d, r);
        for (int64_t i = 0; i < d->D; i++) {
            long double sc = load_indep(d->mod_dtype, scale, k * d->scale_stride + i);
            long double sh = load_indep(d->mod_dtype, shift, k * d->shift_stride + i);
            y[r * d->D + i] =
                sh + (load_indep(d->x_dtype, x, r * d->D + i) - mu) * rs * (1.0L + sc);
        }
        mean[r] = mu;
        rstd[r] = rs;
    }
}

static inline lnmod_desc make_desc(lnmod_layout layout, lnmod_dtype xt, lnmod_dtype mt, int64_t rows,
                            int64_t D, int64_t S, int64_t L, int64_t stride)
{
    lnmod_desc d = lnmod_desc_default();
    d.layout = layout;
    d.x_dtype = xt;
    d.y_dtype = xt;
    d.mod_dtype = mt;
    d.rows = rows;
    d.D = D;
    d.rows_per_sample = S;
    d.frame_len = L;
    d.scale_stride = d.shift_stride = stride;
    return d;
}

/* A modulation buffer laid out like Wan's e = [nmod, 6, D] chunk view: shift is chunk 0
 * and scale chunk 1 of each group of six rows, so both have stride 6*D; every other element
 * is NaN, so reading a wrong element poisons the result. */
typedef struct {
    void *buf;
    const void *scale, *shift;
} wan_mod;

static inline wan_mod make_wan_mod(const lnmod_desc *d, ada_rng *rng, double scale_sd)
{
    int64_t nmod = lnmod_mod_rows(d), n = nmod * 6 * d->D;
    size_t es = lnmod_dtype_size(d->mod_dtype);
    wan_mod w;
    w.buf = malloc((size_t)n * es);
    cr_assert_not_null(w.buf);
    for (int64_t i = 0; i < n; i++) ref_store(d->mod_dtype, w.buf, i, NAN);
    for (int64_t k = 0; k < nmod; k++)
        for (int64_t i = 0; i < d->D; i++) {
            ref_store(d->mod_dtype, w.buf, k * 6 * d->D + i, ada_rng_normal(rng));
            ref_store(d->mod_dtype, w.buf, k * 6 * d->D + d->D + i,
                      scale_sd * ada_rng_normal(rng));
        }
    w.shift = w.buf;
    w.scale = (const char *)w.buf + (size_t)d->D * es;
    return w;
}

/* x rows with their own mean and spread, rounded into x's dtype. */
static inline void *make_x(const lnmod_desc *d, ada_rng *rng)
{
    void *x = malloc((size_t)(d->rows * d->D) * lnmod_dtype_size(d->x_dtype));
    cr_assert_not_null(x);
    for (int64_t r = 0; r < d->rows; r++) {
        double mu = 6.0 * ada_rng_uniform(rng) - 3.0, sd = 0.1 + 4.0 * ada_rng_uniform(rng);
        for (int64_t i = 0; i < d->D; i++)
            ref_store(d->x_dtype, x, r * d->D + i, mu + sd * ada_rng_normal(rng));
    }
    return x;
}


#endif
