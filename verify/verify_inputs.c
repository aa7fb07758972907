/* verify_inputs.c -- case geometry and random inputs of `adaload verify` (see
 * verify_inputs.h for the row kinds and distributions). */
#include "verify_inputs.h"

#include <math.h>

#include "verify_half.h"

/* Element i of an array of dtype t := v, through fp32 (inputs only need to be some value of
 * the dtype, and the reference reads what was stored; the double rounding is harmless here
 * and the inline conversions are ~10x faster than a call per element). */
static inline void store(lnmod_dtype t, void *base, int64_t i, double v)
{
    float f = (float)v;
    switch (t) {
    case LNMOD_F32: ((float *)base)[i] = f; break;
    case LNMOD_F16: ((uint16_t *)base)[i] = verify_f32_to_f16(f); break;
    default: ((uint16_t *)base)[i] = verify_f32_to_bf16(f); break;
    }
}

uint64_t verify_hash(uint64_t h, uint64_t v)
{
    uint64_t z = h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
    return ada_splitmix64(&z);
}

verify_row_kind verify_row_kind_of(int64_t rows, int64_t r, uint64_t salt)
{
    static const verify_row_kind cycle[6] = {VROW_NORMAL,  VROW_LARGE_MEAN, VROW_CONSTANT,
                                             VROW_NORMAL,  VROW_OUTLIER,    VROW_HUGE};
    if (rows < 3) return VROW_NORMAL;
    return cycle[((uint64_t)r + salt) % 6];
}

const char *verify_row_kind_name(verify_row_kind k)
{
    switch (k) {
    case VROW_NORMAL: return "normal";
    case VROW_LARGE_MEAN: return "large-mean";
    case VROW_CONSTANT: return "constant";
    case VROW_OUTLIER: return "outlier";
    case VROW_HUGE: return "huge";
    default: return "?";
    }
}

double verify_huge_scale(lnmod_dtype x_dtype) { return x_dtype == LNMOD_F16 ? 1e4 : 1e15; }

static int64_t smallest_prime_factor(int64_t n)
{
    for (int64_t p = 2; p * p <= n; p++)
        if (n % p == 0) return p;
    return n;
}

/* A second rows_per_sample besides rows itself: Wan's 1560-token frame multiple when rows is
 * one, else rows / (its smallest prime factor). */
static int64_t other_divisor(int64_t rows)
{
    if (rows > 1560 && rows % 1560 == 0) return 1560;
    if (rows <= 1) return 1;
    return rows / smallest_prime_factor(rows);
}

/* A frame length that divides S (many frames when possible), and one that does not. */
static int64_t frame_dividing(int64_t S)
{
    if (S > 1560 && S % 1560 == 0) return 1560;
    if (S <= 1) return 1;
    return S / smallest_prime_factor(S);
}

static int64_t frame_not_dividing(int64_t S)
{
    if (S < 3) return frame_dividing(S); /* S = 1, 2: every L in [1, S] divides S */
    if (S <= 2000) return S / 2 + 1;     /* 1 < S / L < 2 */
    int64_t L = 1000;
    while (S % L == 0) L--;
    return L;
}

static int64_t pick_stride(int64_t D, unsigned sel, int allow_wide)
{
    switch (sel % 3) {
    case 0: return allow_wide ? 6 * D : 2 * D + 3;
    case 1: return D;
    default: return 2 * D + 3;
    }
}

void verify_pick_geometry(lnmod_desc *d, int64_t rows, int64_t D, uint64_t h, verify_geom *g)
{
    d->rows = rows;
    d->D = D;
    int64_t S = (h & 1) ? other_divisor(rows) : rows;
    d->rows_per_sample = S;
    d->frame_len = ((h >> 1) & 1) ? frame_not_dividing(S) : frame_dividing(S);
    if (d->layout != LNMOD_PER_FRAME) d->frame_len = S;
    /* Per-token modulation has one row per token: a 6*D stride makes the buffers 6x the size
     * of x, so it is kept for the cases up to 2^24 elements (plenty of coverage). */
    int allow_wide = !(d->layout == LNMOD_PER_TOKEN && rows * D > ((int64_t)1 << 24));
    d->scale_stride = pick_stride(D, (unsigned)((h >> 2) & 3), allow_wide);
    d->shift_stride = ((h >> 6) & 1) ? d->scale_stride
                                     : pick_stride(D, (unsigned)((h >> 4) & 3), allow_wide);
    /* Pointer offsets: a quarter of the sets misaligned (all four pointers, or x and shift, or
     * scale and y); the rest aligned, so that the vector paths (dtile's tile kernels) get most
     * of the layouts, dtypes and strides (verify/test_verify_cover.c counts what each grid
     * reaches). */
    verify_offsets off = {0, 0, 0, 0};
    if (((h >> 7) & 3) == 3) {
        if ((h >> 9) & 1) off = (verify_offsets){1, 1, 1, 1};
        else off = ((h >> 15) & 1) ? (verify_offsets){1, 0, 1, 0} : (verify_offsets){0, 1, 0, 1};
    }
    g->off = off;
    g->want_stats = ((h >> 10) & 3) != 0;
    d->eps = ((h >> 12) & 7) == 0 ? 1e-5 : 1e-6;
    g->salt = h >> 20;
}

int64_t verify_mod_elems(const lnmod_desc *d, int64_t stride)
{
    return (lnmod_mod_rows(d) - 1) * stride + d->D;
}

void verify_fill_x_rows(const lnmod_desc *d, uint64_t seed, uint64_t salt, int64_t r0,
                        int64_t r1, void *x)
{
    const int64_t D = d->D;
    const lnmod_dtype t = d->x_dtype;
    const double H = verify_huge_scale(t);
    for (int64_t r = r0; r < r1; r++) {
        ada_rng rng;
        ada_rng_seed(&rng, verify_hash(verify_hash(seed, 0x78), (uint64_t)r));
        const int64_t base = r * D;
        switch (verify_row_kind_of(d->rows, r, salt)) {
        case VROW_LARGE_MEAN:
            for (int64_t j = 0; j < D; j++) store(t, x, base + j, 1e4 + 1e-2 * verify_gauss_for(t, &rng));
            break;
        case VROW_CONSTANT: {
            double c = 2.0 * verify_gauss_for(t, &rng);
            for (int64_t j = 0; j < D; j++) store(t, x, base + j, c);
            break;
        }
        case VROW_OUTLIER: {
            int64_t col = (int64_t)ada_rng_below(&rng, (uint64_t)D);
            for (int64_t j = 0; j < D; j++)
                store(t, x, base + j, (j == col ? 1e3 : 1.0) * verify_gauss_for(t, &rng));
            break;
        }
        case VROW_HUGE:
            for (int64_t j = 0; j < D; j++) store(t, x, base + j, H * verify_gauss_for(t, &rng));
            break;
        case VROW_NORMAL:
        default:
            for (int64_t j = 0; j < D; j++) store(t, x, base + j, verify_gauss_for(t, &rng));
            break;
        }
    }
}

void verify_fill_mod_rows(const lnmod_desc *d, uint64_t seed, int64_t k0, int64_t k1,
                          void *scale, void *shift)
{
    const int64_t D = d->D, nmod = lnmod_mod_rows(d);
    const lnmod_dtype t = d->mod_dtype;
    for (int64_t k = k0; k < k1; k++) {
        ada_rng rng;
        ada_rng_seed(&rng, verify_hash(verify_hash(seed, 0x6d6f64), (uint64_t)k));
        const int64_t bs = k * d->scale_stride, bh = k * d->shift_stride;
        for (int64_t j = 0; j < D; j++) {
            store(t, scale, bs + j, 0.5 * verify_gauss_for(t, &rng));
            store(t, shift, bh + j, verify_gauss_for(t, &rng));
        }
        if (k + 1 < nmod) {
            for (int64_t j = bs + D; j < bs + d->scale_stride; j++) store(t, scale, j, NAN);
            for (int64_t j = bh + D; j < bh + d->shift_stride; j++) store(t, shift, j, NAN);
        }
    }
}

void verify_fill_dy_rows(const lnmod_desc *d, uint64_t seed, int64_t r0, int64_t r1, void *dy)
{
    const int64_t D = d->D;
    for (int64_t r = r0; r < r1; r++) {
        ada_rng rng;
        ada_rng_seed(&rng, verify_hash(verify_hash(seed, 0x6479), (uint64_t)r));
        /* verify_gauss16 whatever dy's dtype: dy needs no finer grid than 2^-16 of its spread */
        for (int64_t j = 0; j < D; j++) store(d->y_dtype, dy, r * D + j, verify_gauss16(&rng));
    }
}
