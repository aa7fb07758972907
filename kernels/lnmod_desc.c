/* lnmod_desc.c -- validation and helpers for lnmod_desc (see lnmod_desc.h). Pure C. */
#include "lnmod_desc.h"

#include <math.h>
#include <string.h>

lnmod_desc lnmod_desc_default(void)
{
    lnmod_desc d;
    memset(&d, 0, sizeof d);
    d.x_dtype = LNMOD_BF16;
    d.mod_dtype = LNMOD_F32;
    d.y_dtype = LNMOD_BF16;
    d.layout = LNMOD_PER_SAMPLE;
    d.eps = 1e-6;
    return d;
}

static int valid_dtype(lnmod_dtype t) { return (int)t >= 0 && t < LNMOD_DTYPE_COUNT; }

/* a*b + c without overflow, all non-negative; returns 0 and sets *out, or -1. */
static int mul_add_ok(int64_t a, int64_t b, int64_t c, int64_t *out)
{
    if (a < 0 || b < 0 || c < 0) return -1;
    if (a != 0 && b > (INT64_MAX - c) / a) return -1;
    *out = a * b + c;
    return 0;
}

int64_t lnmod_frames_per_sample(const lnmod_desc *d)
{
    if (d->layout != LNMOD_PER_FRAME) return 1;
    return (d->rows_per_sample + d->frame_len - 1) / d->frame_len;
}

int64_t lnmod_mod_rows(const lnmod_desc *d)
{
    switch (d->layout) {
    case LNMOD_PER_TOKEN: return d->rows;
    case LNMOD_PER_FRAME: return (d->rows / d->rows_per_sample) * lnmod_frames_per_sample(d);
    case LNMOD_PER_SAMPLE:
    default: return d->rows / d->rows_per_sample;
    }
}

lnmod_status lnmod_desc_validate(const lnmod_desc *d)
{
    if (!d) return LNMOD_ERR_NULL_POINTER;
    if (d->rows <= 0 || d->D <= 0) return LNMOD_ERR_ZERO_DIM;
    if (!valid_dtype(d->x_dtype) || !valid_dtype(d->mod_dtype) || !valid_dtype(d->y_dtype))
        return LNMOD_ERR_DTYPE;
    if (d->mod_dtype != LNMOD_F32 && d->mod_dtype != d->x_dtype) return LNMOD_ERR_DTYPE_COMBO;
    if (d->y_dtype != LNMOD_F32 && d->y_dtype != d->x_dtype) return LNMOD_ERR_DTYPE_COMBO;
    if ((int)d->layout < 0 || d->layout >= LNMOD_LAYOUT_COUNT) return LNMOD_ERR_LAYOUT;
    if (!(d->eps > 0.0) || !isfinite(d->eps)) return LNMOD_ERR_EPS;
    if (d->layout != LNMOD_PER_TOKEN) {
        if (d->rows_per_sample <= 0) return LNMOD_ERR_ZERO_DIM;
        if (d->rows % d->rows_per_sample != 0) return LNMOD_ERR_SHAPE;
    }
    if (d->layout == LNMOD_PER_FRAME) {
        if (d->frame_len <= 0) return LNMOD_ERR_ZERO_DIM;
        if (d->frame_len > d->rows_per_sample) return LNMOD_ERR_SHAPE;
    }
    int64_t total;
    if (mul_add_ok(d->rows, d->D, 0, &total)) return LNMOD_ERR_OVERFLOW;
    /* Byte offsets must fit too (fp32 is the widest element). */
    if (mul_add_ok(total, 4, 0, &total)) return LNMOD_ERR_OVERFLOW;
    if (d->scale_stride < 0 || d->shift_stride < 0) return LNMOD_ERR_STRIDE;
    int64_t nmod = lnmod_mod_rows(d);
    const int64_t strides[2] = {d->scale_stride, d->shift_stride};
    for (int i = 0; i < 2; i++) {
        /* One modulation row may have any stride; several must not overlap. */
        if (nmod > 1 && strides[i] < d->D) return LNMOD_ERR_STRIDE;
        int64_t end;
        if (mul_add_ok(nmod - 1, strides[i], d->D, &end)) return LNMOD_ERR_OVERFLOW;
        if (mul_add_ok(end, 4, 0, &end)) return LNMOD_ERR_OVERFLOW;
    }
    return LNMOD_OK;
}

static const char *const status_text[LNMOD_STATUS_COUNT][2] = {
    [LNMOD_OK] = {"LNMOD_OK", "ok"},
    [LNMOD_ERR_NULL_POINTER] = {"LNMOD_ERR_NULL_POINTER", "a required pointer is NULL"},
    [LNMOD_ERR_ZERO_DIM] = {"LNMOD_ERR_ZERO_DIM",
                            "rows, D, rows_per_sample and frame_len must be >= 1"},
    [LNMOD_ERR_DTYPE] = {"LNMOD_ERR_DTYPE", "a dtype is not f32, f16 or bf16"},
    [LNMOD_ERR_DTYPE_COMBO] = {"LNMOD_ERR_DTYPE_COMBO",
                               "unsupported dtype combination (scale/shift must be f32 or x's "
                               "dtype; y must be x's dtype or f32)"},
    [LNMOD_ERR_LAYOUT] = {"LNMOD_ERR_LAYOUT",
                          "layout is not sample, token or frame (fused op: or a bad gate or norm)"},
    [LNMOD_ERR_OVERFLOW] = {"LNMOD_ERR_OVERFLOW", "a size or offset overflows 64 bits"},
    [LNMOD_ERR_STRIDE] = {"LNMOD_ERR_STRIDE",
                          "modulation stride must be >= D (rows would overlap) and >= 0"},
    [LNMOD_ERR_SHAPE] = {"LNMOD_ERR_SHAPE",
                         "rows must be a multiple of rows_per_sample, and frame_len <= "
                         "rows_per_sample"},
    [LNMOD_ERR_EPS] = {"LNMOD_ERR_EPS", "eps must be a finite number > 0"},
    [LNMOD_ERR_UNKNOWN_VARIANT] = {"LNMOD_ERR_UNKNOWN_VARIANT", "no kernel variant of that name"},
    [LNMOD_ERR_UNSUPPORTED] = {"LNMOD_ERR_UNSUPPORTED",
                               "the variant does not support this descriptor"},
    [LNMOD_ERR_NO_DEVICE] = {"LNMOD_ERR_NO_DEVICE",
                             "no CUDA device (or the GPU kernels were not built)"},
    [LNMOD_ERR_CUDA] = {"LNMOD_ERR_CUDA", "a CUDA call or kernel launch failed"},
    [LNMOD_ERR_ALLOC] = {"LNMOD_ERR_ALLOC", "out of host memory"},
    [LNMOD_ERR_WORKSPACE] = {"LNMOD_ERR_WORKSPACE",
                             "the backward's workspace is smaller than "
                             "lnmod_backward_workspace says, or not 16-byte aligned"},
};

const char *lnmod_strerror(lnmod_status st)
{
    if ((int)st < 0 || st >= LNMOD_STATUS_COUNT) return "unknown status";
    return status_text[st][1];
}

const char *lnmod_status_name(lnmod_status st)
{
    if ((int)st < 0 || st >= LNMOD_STATUS_COUNT) return "LNMOD_UNKNOWN";
    return status_text[st][0];
}

size_t lnmod_dtype_size(lnmod_dtype t)
{
    switch (t) {
    case LNMOD_F32: return 4;
    case LNMOD_F16:
    case LNMOD_BF16: return 2;
    default: return 0;
    }
}

const char *lnmod_dtype_name(lnmod_dtype t)
{
    switch (t) {
    case LNMOD_F32: return "f32";
    case LNMOD_F16: return "f16";
    case LNMOD_BF16: return "bf16";
    default: return "?";
    }
}

int lnmod_dtype_parse(const char *s, lnmod_dtype *out)
{
    if (!s || !out) return -1;
    if (!strcmp(s, "f32") || !strcmp(s, "fp32")) *out = LNMOD_F32;
    else if (!strcmp(s, "f16") || !strcmp(s, "fp16")) *out = LNMOD_F16;
    else if (!strcmp(s, "bf16")) *out = LNMOD_BF16;
    else return -1;
    return 0;
}

const char *lnmod_layout_name(lnmod_layout l)
{
    switch (l) {
    case LNMOD_PER_SAMPLE: return "sample";
    case LNMOD_PER_TOKEN: return "token";
    case LNMOD_PER_FRAME: return "frame";
    default: return "?";
    }
}

int lnmod_layout_parse(const char *s, lnmod_layout *out)
{
    if (!s || !out) return -1;
    if (!strcmp(s, "sample")) *out = LNMOD_PER_SAMPLE;
    else if (!strcmp(s, "token")) *out = LNMOD_PER_TOKEN;
    else if (!strcmp(s, "frame")) *out = LNMOD_PER_FRAME;
    else return -1;
    return 0;
}

/* Byte counts as a sum of terms count*size, saturating at INT64_MAX: a descriptor that
 * lnmod_desc_validate accepts may have rows*D near 2^61, where 8 bytes an element overflow. */
typedef struct {
    int64_t total;
} byte_sum;

static void add_terms(byte_sum *s, int64_t count, int64_t size)
{
    int64_t t;
    if (s->total == INT64_MAX || mul_add_ok(count, size, 0, &t) || t > INT64_MAX - s->total)
        s->total = INT64_MAX;
    else
        s->total += t;
}

static int64_t dsz(lnmod_dtype t) { return (int64_t)lnmod_dtype_size(t); }

int64_t lnmod_fwd_min_bytes(const lnmod_desc *d, int want_stats)
{
    byte_sum s = {0};
    const int64_t n = d->rows * d->D; /* fits: validated */
    add_terms(&s, n, dsz(d->x_dtype) + dsz(d->y_dtype));
    add_terms(&s, lnmod_mod_rows(d) * d->D, 2 * dsz(d->mod_dtype));
    if (want_stats) add_terms(&s, d->rows, 8);
    return s.total;
}

int64_t lnmod_fwd_reread_bytes(const lnmod_desc *d, int want_stats)
{
    byte_sum s = {0};
    const int64_t n = d->rows * d->D;
    add_terms(&s, n, 3 * dsz(d->x_dtype) + dsz(d->y_dtype));
    add_terms(&s, n, 2 * dsz(d->mod_dtype));
    if (want_stats) add_terms(&s, d->rows, 8);
    return s.total;
}

int64_t lnmod_bwd_min_bytes(const lnmod_desc *d)
{
    byte_sum s = {0};
    const int64_t n = d->rows * d->D;
    add_terms(&s, n, 2 * dsz(d->x_dtype) + dsz(d->y_dtype));
    add_terms(&s, d->rows, 8);
    add_terms(&s, lnmod_mod_rows(d) * d->D, 3 * dsz(d->mod_dtype));
    return s.total;
}
