/* lnmod_res_desc.c -- validation, maps and byte counts of lnmod_res_desc (lnmod_res_desc.h).
 * The geometry rules are lnmod_desc_validate's: each use of the map (the gate, the modulation)
 * is checked as an lnmod_desc with fp32 dtypes (the widest element, so the byte offsets of
 * every dtype fit) and that use's strides. */
#include "lnmod_res_desc.h"

#include <string.h>

lnmod_res_desc lnmod_res_desc_default(void)
{
    lnmod_res_desc d;
    memset(&d, 0, sizeof d);
    d.layout = LNMOD_PER_SAMPLE;
    d.gate = LNMOD_RES_GATE;
    d.norm = LNMOD_RES_MODULATE;
    d.res_dtype = LNMOD_F32;
    d.branch_dtype = LNMOD_BF16;
    d.mod_dtype = LNMOD_F32;
    d.out_dtype = LNMOD_BF16;
    d.eps = 1e-6;
    return d;
}

static int valid_dtype(lnmod_dtype t) { return (int)t >= 0 && t < LNMOD_DTYPE_COUNT; }

/* The map as an lnmod_desc with the given strides (both) and layout. */
static lnmod_desc geometry(const lnmod_res_desc *d, lnmod_layout layout, int64_t s1, int64_t s2)
{
    lnmod_desc g = lnmod_desc_default();
    g.rows = d->rows;
    g.D = d->D;
    g.rows_per_sample = d->rows_per_sample;
    g.frame_len = d->frame_len;
    g.x_dtype = g.mod_dtype = g.y_dtype = LNMOD_F32;
    g.layout = layout;
    g.scale_stride = s1;
    g.shift_stride = s2;
    g.eps = d->eps;
    return g;
}

lnmod_desc lnmod_res_map_desc(const lnmod_res_desc *d)
{
    return geometry(d, d->layout, d->D, d->D);
}

lnmod_status lnmod_res_desc_validate(const lnmod_res_desc *d)
{
    if (!d) return LNMOD_ERR_NULL_POINTER;
    if ((int)d->layout < 0 || d->layout >= LNMOD_LAYOUT_COUNT || (int)d->gate < 0 ||
        d->gate >= LNMOD_RES_GATE_COUNT || (int)d->norm < 0 || d->norm >= LNMOD_RES_NORM_COUNT)
        return LNMOD_ERR_LAYOUT;
    if (!valid_dtype(d->res_dtype) || !valid_dtype(d->branch_dtype) || !valid_dtype(d->mod_dtype) ||
        !valid_dtype(d->out_dtype))
        return LNMOD_ERR_DTYPE;
    const lnmod_dtype b = d->branch_dtype;
    if ((d->res_dtype != LNMOD_F32 && d->res_dtype != b) || (d->mod_dtype != LNMOD_F32 && d->mod_dtype != b) ||
        (d->out_dtype != LNMOD_F32 && d->out_dtype != b))
        return LNMOD_ERR_DTYPE_COMBO;
    lnmod_desc g;
    lnmod_status st;
    if (d->gate == LNMOD_RES_GATE_NONE && d->norm == LNMOD_RES_AFFINE) {
        /* No map: rows, D, eps and the overflow of rows*D alone (per-token with stride D). */
        g = geometry(d, LNMOD_PER_TOKEN, d->D, d->D);
        return lnmod_desc_validate(&g);
    }
    if (d->gate == LNMOD_RES_GATE) {
        g = geometry(d, d->layout, d->gate_stride, d->gate_stride);
        if ((st = lnmod_desc_validate(&g)) != LNMOD_OK) return st;
    }
    if (d->norm == LNMOD_RES_MODULATE) {
        g = geometry(d, d->layout, d->scale_stride, d->shift_stride);
        if ((st = lnmod_desc_validate(&g)) != LNMOD_OK) return st;
    }
    return LNMOD_OK;
}

int64_t lnmod_res_mod_rows(const lnmod_res_desc *d)
{
    const lnmod_desc g = lnmod_res_map_desc(d);
    return lnmod_mod_rows(&g);
}

int64_t lnmod_res_norm_rows(const lnmod_res_desc *d)
{
    return d->norm == LNMOD_RES_AFFINE ? 1 : lnmod_res_mod_rows(d);
}

int64_t lnmod_res_mod_index(const lnmod_res_desc *d, int64_t i)
{
    const lnmod_desc g = lnmod_res_map_desc(d);
    return lnmod_mod_index(&g, i);
}

int64_t lnmod_res_norm_index(const lnmod_res_desc *d, int64_t i)
{
    return d->norm == LNMOD_RES_AFFINE ? 0 : lnmod_res_mod_index(d, i);
}

lnmod_status lnmod_res_check_fwd_in(const lnmod_res_desc *d, const lnmod_res_fwd_in *in)
{
    if (!d || !in || !in->r || !in->y || !in->scale || !in->shift) return LNMOD_ERR_NULL_POINTER;
    if (d->gate == LNMOD_RES_GATE && !in->gate) return LNMOD_ERR_NULL_POINTER;
    return lnmod_res_desc_validate(d);
}

lnmod_status lnmod_res_check_bwd_in(const lnmod_res_desc *d, const lnmod_res_bwd_in *in)
{
    if (!d || !in || !in->h || !in->scale || !in->dout || !in->mean || !in->rstd)
        return LNMOD_ERR_NULL_POINTER;
    if (d->gate == LNMOD_RES_GATE && (!in->gate || !in->y)) return LNMOD_ERR_NULL_POINTER;
    return lnmod_res_desc_validate(d);
}

lnmod_status lnmod_res_check_fwd_out(const lnmod_res_desc *d, const lnmod_res_fwd_out *out)
{
    if (!d || !out || !out->h || !out->out) return LNMOD_ERR_NULL_POINTER;
    return LNMOD_OK;
}

lnmod_status lnmod_res_check_bwd_out(const lnmod_res_desc *d, const lnmod_res_bwd_out *out)
{
    if (!d || !out || !out->dr || !out->dy || !out->dscale || !out->dshift) return LNMOD_ERR_NULL_POINTER;
    if (d->gate == LNMOD_RES_GATE && !out->dgate) return LNMOD_ERR_NULL_POINTER;
    return LNMOD_OK;
}

/* ---- byte counts: sums of count * size saturating at INT64_MAX ----------------------------- */

static void add_bytes(int64_t *total, int64_t count, int64_t size)
{
    if (*total == INT64_MAX || count < 0 || size < 0) {
        *total = INT64_MAX;
        return;
    }
    if (count != 0 && size > INT64_MAX / count) {
        *total = INT64_MAX;
        return;
    }
    const int64_t t = count * size;
    *total = t > INT64_MAX - *total ? INT64_MAX : *total + t;
}

static int64_t dsz(lnmod_dtype t) { return (int64_t)lnmod_dtype_size(t); }

int64_t lnmod_res_fwd_min_bytes(const lnmod_res_desc *d, int want_stats)
{
    int64_t s = 0;
    const int64_t n = d->rows * d->D; /* fits: validated */
    add_bytes(&s, n, 2 * dsz(d->res_dtype) + dsz(d->branch_dtype) + dsz(d->out_dtype));
    if (d->gate == LNMOD_RES_GATE) add_bytes(&s, lnmod_res_mod_rows(d) * d->D, dsz(d->mod_dtype));
    add_bytes(&s, lnmod_res_norm_rows(d) * d->D, 2 * dsz(d->mod_dtype));
    if (want_stats) add_bytes(&s, d->rows, 8);
    return s;
}

int64_t lnmod_res_bwd_min_bytes(const lnmod_res_desc *d, int has_dh)
{
    int64_t s = 0;
    const int64_t n = d->rows * d->D;
    /* h, dr, d_out, dy; dh; y (for dgate) */
    add_bytes(&s, n, 2 * dsz(d->res_dtype) + dsz(d->out_dtype) + dsz(d->branch_dtype));
    if (has_dh) add_bytes(&s, n, dsz(d->res_dtype));
    add_bytes(&s, d->rows, 8);
    /* scale read, dscale and dshift written */
    add_bytes(&s, lnmod_res_norm_rows(d) * d->D, 3 * dsz(d->mod_dtype));
    if (d->gate == LNMOD_RES_GATE) {
        add_bytes(&s, n, dsz(d->branch_dtype));
        add_bytes(&s, lnmod_res_mod_rows(d) * d->D, 2 * dsz(d->mod_dtype)); /* gate, dgate */
    }
    return s;
}
