/* bench_ref_stub.c -- TEMPORARY minimal float64 forward standing in for
 * reference/ref_lnmod.c (empty on this branch), so the bench branch links and its CPU
 * benchmarks have something real to time. Delete this file on merge: the reference
 * helper's ref_lnmod_forward replaces it (this definition is weak). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ref_lnmod.h"

static double stub_load(lnmod_dtype t, const void *base, int64_t i)
{
    if (t == LNMOD_F32) return ((const float *)base)[i];
    uint32_t u = (uint32_t)((const uint16_t *)base)[i] << 16; /* bf16 only (fp16 unused) */
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

__attribute__((weak)) lnmod_status ref_lnmod_forward(const lnmod_desc *d, const void *x,
                                                     const void *scale, const void *shift,
                                                     double *y, double *mean, double *rstd)
{
    lnmod_status st = lnmod_desc_validate(d);
    if (st != LNMOD_OK) return st;
    if (!x || !scale || !shift || !y) return LNMOD_ERR_NULL_POINTER;
    if (d->x_dtype == LNMOD_F16 || d->mod_dtype == LNMOD_F16) return LNMOD_ERR_UNSUPPORTED;
    for (int64_t r = 0; r < d->rows; r++) {
        double s = 0, m2 = 0;
        for (int64_t c = 0; c < d->D; c++) s += stub_load(d->x_dtype, x, r * d->D + c);
        double mu = s / (double)d->D;
        for (int64_t c = 0; c < d->D; c++) {
            double v = stub_load(d->x_dtype, x, r * d->D + c) - mu;
            m2 += v * v;
        }
        double rs = 1.0 / sqrt(m2 / (double)d->D + d->eps);
        int64_t k = lnmod_mod_index(d, r);
        for (int64_t c = 0; c < d->D; c++) {
            double xh = (stub_load(d->x_dtype, x, r * d->D + c) - mu) * rs;
            y[r * d->D + c] = xh * (1.0 + stub_load(d->mod_dtype, scale, k * d->scale_stride + c)) +
                              stub_load(d->mod_dtype, shift, k * d->shift_stride + c);
        }
        if (mean) mean[r] = mu;
        if (rstd) rstd[r] = rs;
    }
    return LNMOD_OK;
}
