/* lnmod_desc.h -- the LayerNorm-Modulate problem descriptor, shared by the CUDA kernels,
 * the float64 CPU reference and the harness. Pure C11, no CUDA needed.
 *
 * The op (see README "What the op computes"), for each row r of x[rows, D]:
 *   mean_r = (1/D) sum_d x[r,d];   var_r = (1/D) sum_d (x[r,d] - mean_r)^2   (biased)
 *   rstd_r = 1 / sqrt(var_r + eps); xhat = (x - mean_r) * rstd_r
 *   y[r,d] = xhat * (1 + scale[m(r), d]) + shift[m(r), d]
 * The modulation row m(r) depends on the layout:
 *   LNMOD_PER_SAMPLE  m(r) = r / S                       (Wan 2.1; scale/shift [B,1,D], stride 6*D)
 *   LNMOD_PER_TOKEN   m(r) = r                           (Wan 2.2 TI2V-5B; [B,S,D] view, stride 6*D)
 *   LNMOD_PER_FRAME   m(r) = (r / S) * F + (r % S) / L   (a timestep per latent frame; [B,F,D])
 * with S = rows_per_sample, L = frame_len, F = ceil(S / L) frames per sample.
 * Modulation row k of scale starts at element k * scale_stride (likewise shift), and is
 * contiguous in D. x and y are contiguous [rows, D].
 *
 * Usage:
 *   lnmod_desc d = lnmod_desc_default();   // fills eps = 1e-6, bf16 x/y, fp32 modulation
 *   d.rows = 32760; d.D = 5120; d.rows_per_sample = 32760; d.scale_stride = d.shift_stride = 6*5120;
 *   lnmod_status st = lnmod_desc_validate(&d);
 *   if (st != LNMOD_OK) fprintf(stderr, "%s\n", lnmod_strerror(st));
 *
 * Every size is int64_t; the validation also proves that every element offset the op can
 * form (rows*D, the last modulation row's end) fits in int64_t.
 */
#ifndef ADALOAD_LNMOD_DESC_H
#define ADALOAD_LNMOD_DESC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    LNMOD_OK = 0,
    LNMOD_ERR_NULL_POINTER,      /* a required pointer (descriptor, x, scale, shift, y) is NULL */
    LNMOD_ERR_ZERO_DIM,          /* rows, D, rows_per_sample or frame_len is <= 0 */
    LNMOD_ERR_DTYPE,             /* a dtype is not one of the enum values */
    LNMOD_ERR_DTYPE_COMBO,       /* dtypes are valid but this combination is not supported */
    LNMOD_ERR_LAYOUT,            /* layout is not one of the enum values */
    LNMOD_ERR_OVERFLOW,          /* rows*D or a modulation offset overflows int64_t */
    LNMOD_ERR_STRIDE,            /* a modulation stride < D (rows would overlap) or < 0 */
    LNMOD_ERR_SHAPE,             /* rows is not a multiple of rows_per_sample, or frame_len > S */
    LNMOD_ERR_EPS,               /* eps is not a finite number > 0 */
    LNMOD_ERR_UNKNOWN_VARIANT,   /* no kernel variant has this name */
    LNMOD_ERR_UNSUPPORTED,       /* the variant does not support this descriptor */
    LNMOD_ERR_NO_DEVICE,         /* no CUDA device, or the GPU parts were not built */
    LNMOD_ERR_CUDA,              /* a CUDA runtime call or a launch failed */
    LNMOD_ERR_ALLOC,             /* host memory allocation failed */
    LNMOD_ERR_WORKSPACE,         /* the backward's workspace is too small or not 16-byte aligned */
    LNMOD_STATUS_COUNT
} lnmod_status;

typedef enum { LNMOD_F32 = 0, LNMOD_F16 = 1, LNMOD_BF16 = 2, LNMOD_DTYPE_COUNT } lnmod_dtype;

typedef enum {
    LNMOD_PER_SAMPLE = 0,
    LNMOD_PER_TOKEN = 1,
    LNMOD_PER_FRAME = 2,
    LNMOD_LAYOUT_COUNT
} lnmod_layout;

typedef struct {
    int64_t rows;            /* token rows of x: B * S */
    int64_t D;               /* hidden size, elements per row */
    int64_t rows_per_sample; /* S; rows must be a multiple of it (per-sample, per-frame) */
    int64_t frame_len;       /* L, tokens per latent frame (per-frame layout only) */
    lnmod_dtype x_dtype;     /* fp32, fp16 or bf16 */
    lnmod_dtype mod_dtype;   /* scale and shift: fp32 or x_dtype */
    lnmod_dtype y_dtype;     /* x_dtype or fp32 */
    lnmod_layout layout;
    int64_t scale_stride;    /* elements between modulation rows k and k+1 of scale */
    int64_t shift_stride;    /* same for shift */
    double eps;              /* added to the variance; Wan uses 1e-6 */
} lnmod_desc;

/* A descriptor with eps = 1e-6, bf16 x and y, fp32 per-sample modulation, all sizes 0
 * (so it does not validate until the caller sets rows, D, rows_per_sample and strides). */
lnmod_desc lnmod_desc_default(void);

/* Checks every field; never touches memory other than *d. LNMOD_OK or the first error. */
lnmod_status lnmod_desc_validate(const lnmod_desc *d);

/* Human string for a status ("D must be >= 1" style); never NULL. */
const char *lnmod_strerror(lnmod_status st);
/* Short stable name of a status, e.g. "LNMOD_ERR_STRIDE". */
const char *lnmod_status_name(lnmod_status st);

/* Bytes of one element; 0 for an invalid dtype. */
size_t lnmod_dtype_size(lnmod_dtype t);
/* "f32", "f16", "bf16"; "?" for an invalid value. */
const char *lnmod_dtype_name(lnmod_dtype t);
/* Parses "f32"/"fp32", "f16"/"fp16", "bf16"; returns 0 on success, -1 otherwise. */
int lnmod_dtype_parse(const char *s, lnmod_dtype *out);
/* "sample", "token", "frame"; "?" for an invalid value. */
const char *lnmod_layout_name(lnmod_layout l);
int lnmod_layout_parse(const char *s, lnmod_layout *out);

/* Frames per sample F = ceil(S / L) for the per-frame layout, 1 otherwise. */
int64_t lnmod_frames_per_sample(const lnmod_desc *d);
/* Number of distinct modulation rows: B (per-sample), rows (per-token), B*F (per-frame). */
int64_t lnmod_mod_rows(const lnmod_desc *d);
/* The modulation row m(r) of token row r (0 <= r < rows). */
static inline int64_t lnmod_mod_index(const lnmod_desc *d, int64_t r)
{
    switch (d->layout) {
    case LNMOD_PER_TOKEN: return r;
    case LNMOD_PER_FRAME: {
        int64_t S = d->rows_per_sample, L = d->frame_len;
        int64_t F = (S + L - 1) / L;
        return (r / S) * F + (r % S) / L;
    }
    case LNMOD_PER_SAMPLE:
    default: return r / d->rows_per_sample;
    }
}

/* The fewest bytes any forward implementation must move through device memory:
 * read x once, write y once, read each distinct modulation row of scale and shift once,
 * plus 4 bytes each for mean and rstd per row when want_stats is non-zero. */
int64_t lnmod_fwd_min_bytes(const lnmod_desc *d, int want_stats);

/* The bytes a forward moves when it reads x three times (statistics, deviations, output)
 * and reads the modulation row again for every row (naive, row_per_warp, dtile's generic
 * path), plus 8 bytes per row for mean and rstd when want_stats is non-zero. */
int64_t lnmod_fwd_reread_bytes(const lnmod_desc *d, int want_stats);

/* The fewest bytes any backward must move: read x and dy, write dx (each rows*D elements),
 * read mean and rstd (8 bytes per row), read each distinct modulation row of scale and write
 * that of dscale and dshift once. */
int64_t lnmod_bwd_min_bytes(const lnmod_desc *d);

/* The three byte counts above saturate at INT64_MAX instead of overflowing: a descriptor
 * that lnmod_desc_validate accepts may have rows*D up to 2^61, where 8 bytes an element do
 * not fit in int64_t. */

#ifdef __cplusplus
}
#endif
#endif
