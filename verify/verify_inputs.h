/* verify_inputs.h -- the inputs of `adaload verify`: case geometry (samples, frames,
 * strides, pointer offsets, eps) and fresh random x / scale / shift with adversarial rows.
 * Pure C; every function is deterministic in its arguments, so `--seed N` reproduces a run
 * and the result does not depend on how rows are split over threads (each row, and each
 * modulation row, has its own PRNG stream derived from the case seed and its index).
 *
 *   verify_geom g; verify_pick_geometry(layout, rows, D, geom_hash, &d, &g);
 *   verify_fill_x_rows(&d, seed, g.salt, r0, r1, x_host);           // any row split
 *   verify_fill_mod_rows(&d, seed, k0, k1, scale_host, shift_host); // modulation rows
 *   verify_fill_dy_rows(&d, seed, r0, r1, dy_host);                  // the backward's dy
 *
 * Row kinds (rows >= 3 cycle through N, M, C, N, O, H starting at a per-case salt, so any
 * three consecutive rows hold at least two adversarial ones; rows < 3 are all N):
 *   N  normal:     x ~ g                      (g: near-normal, below)
 *   M  large mean: x = 1e4 + 1e-2 g           (catastrophic cancellation for E[x^2]-E[x]^2
 *                                              and for a plain fp32 mean)
 *   C  constant:   x = c for the whole row    (var = 0: xhat = 0, y = shift, rstd = eps^-1/2)
 *   O  outlier:    x ~ g with one column x1e3 (one channel dominates the variance)
 *   H  huge:       x = H g, H = 1e15 for f32/bf16 x, 1e4 for f16 x (the dtype's range: f16
 *                  tops out at 65504, and H * max|g| ~ 3.5e4 stays inside it)
 * Modulation: scale = 0.5 g, shift = g (Wan-like magnitudes). Elements of a modulation buffer
 * between rows (stride > D) are NaN, so a kernel that reads the wrong place fails.
 *
 * g is Irwin-Hall with 4 terms (sum of four 32-bit uniforms, centred, scaled to unit
 * variance): close to N(0,1) in the bulk, bounded by +-3.46, and ~10x cheaper than
 * Box-Muller -- the full grid draws ~1e11 values. The extremes are covered by the
 * adversarial rows instead of by normal tails.
 */
#ifndef ADALOAD_VERIFY_INPUTS_H
#define ADALOAD_VERIFY_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "ada_rng.h"
#include "lnmod_desc.h"

typedef enum { VROW_NORMAL, VROW_LARGE_MEAN, VROW_CONSTANT, VROW_OUTLIER, VROW_HUGE } verify_row_kind;

/* Pointer offsets in elements from a 256-byte aligned address (0 or 1): 1 defeats the
 * 16-byte vector paths. */
typedef struct {
    int64_t x, scale, shift, y;
} verify_offsets;

typedef struct {
    verify_offsets off;
    int want_stats;  /* pass mean/rstd outputs (else NULL: the kernels' other path) */
    uint64_t salt;   /* row-kind phase and PRNG salt */
} verify_geom;

/* Near-normal draw (Irwin-Hall 4, unit variance, |g| <= 2*sqrt(3)). */
static inline double verify_gauss(ada_rng *r)
{
    uint64_t a = ada_rng_u64(r), b = ada_rng_u64(r);
    double s = (double)(a >> 32) + (double)(a & 0xFFFFFFFFu) + (double)(b >> 32) +
               (double)(b & 0xFFFFFFFFu);
    return (s * 0x1p-32 - 2.0) * 1.7320508075688772;
}

/* The same distribution from one 64-bit draw: four 16-bit uniforms, so a grid of 2^-16 of the
 * spread. Enough for values stored in fp16/bf16 (<= 11 significant bits) and half the PRNG
 * work; fp32 inputs keep verify_gauss's finer grid. */
static inline double verify_gauss16(ada_rng *r)
{
    const uint64_t u = ada_rng_u64(r);
    const double s = (double)(u & 0xFFFF) + (double)((u >> 16) & 0xFFFF) + (double)((u >> 32) & 0xFFFF) +
                     (double)(u >> 48);
    return (s * 0x1p-16 - 2.0) * 1.7320508075688772;
}

/* verify_gauss for fp32 storage, verify_gauss16 for the 16-bit dtypes. */
static inline double verify_gauss_for(lnmod_dtype t, ada_rng *r)
{
    return t == LNMOD_F32 ? verify_gauss(r) : verify_gauss16(r);
}

verify_row_kind verify_row_kind_of(int64_t rows, int64_t r, uint64_t salt);
const char *verify_row_kind_name(verify_row_kind k);
/* H for the huge rows of x_dtype. */
double verify_huge_scale(lnmod_dtype x_dtype);

/* Mixes words into a 64-bit hash (SplitMix64 finalizer over each). */
uint64_t verify_hash(uint64_t h, uint64_t v);

/* Fills the geometry of a case from its shape and a hash of its identity: rows_per_sample S
 * (rows or a divisor), frame_len (dividing S or not), strides (6*D as Wan's [B,6,D] chunk
 * view, D, or 2D+3), pointer offsets, whether stats are wanted, eps (1e-6 mostly, 1e-5 in
 * 1/8 of the cases so a hard-coded eps fails). d's dtypes and layout must be set; rows and
 * D are set here. */
void verify_pick_geometry(lnmod_desc *d, int64_t rows, int64_t D, uint64_t h, verify_geom *g);

/* Elements of a modulation buffer: (mod_rows - 1) * stride + D. */
int64_t verify_mod_elems(const lnmod_desc *d, int64_t stride);

/* x rows [r0, r1) (x indexed from row 0, in d->x_dtype). */
void verify_fill_x_rows(const lnmod_desc *d, uint64_t seed, uint64_t salt, int64_t r0,
                        int64_t r1, void *x);
/* Modulation rows [k0, k1) of scale and shift (in d->mod_dtype), plus the gap after each
 * row up to the next one (NaN). */
void verify_fill_mod_rows(const lnmod_desc *d, uint64_t seed, int64_t k0, int64_t k1,
                          void *scale, void *shift);

/* The backward's dy, rows [r0, r1) (in d->y_dtype, indexed from row 0): near-normal per
 * element (Irwin-Hall 4 of 16-bit uniforms, unit variance), one PRNG stream per row (the
 * adversarial rows are x's: they set xhat and rstd). */
void verify_fill_dy_rows(const lnmod_desc *d, uint64_t seed, int64_t r0, int64_t r1, void *dy);

#endif
