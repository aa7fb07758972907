/* verify_model_res.c -- the fp32 CPU models of the fused gated residual + LayerNorm-Modulate op
 * and their planted bugs (verify_model_res.h). The backward runs in three phases like
 * verify_model_bwd.c's: (1) per norm row, fp32 partials of dout*xhat and dout over chunks
 * of VERIFY_MODEL_CHUNK rows (they read h and dout only); (2) per gate chunk (per token row
 * without a gate), t, dr, dy and the chunk's partial of t*y in one pass, so dr may overwrite
 * dh; (3) the partials summed in chunk order, rounded once into the strided outputs. The chunking
 * is a function of the descriptor only: the same bits for any thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_lnmod_res.h"
#include "verify_model_internal.h"
#include "verify_model_res.h"
#include "verify_par.h"

enum { R_OK, R_NO_GATE, R_NO_H, R_BWD_NO_DH, R_BWD_DGATE_DH };

const verify_model_info verify_res_models[] = {
    {"res_model", "fp32 model of the fused residual + LayerNorm-Modulate (must pass)"},
    {"res_no_gate", "planted: the forward ignores the gate (must fail h, out)"},
    {"res_no_h", "planted: the forward leaves h unwritten (must fail h)"},
    {"res_bwd_no_dh", "planted: the backward drops dh (must fail dr, dy, dgate)"},
    {"res_bwd_dgate_dh", "planted: dgate sums dh*y only (must fail dgate)"},
    {NULL, NULL},
};

int verify_res_model_find(const char *name)
{
    for (int i = 0; name && verify_res_models[i].name; i++)
        if (!strcmp(verify_res_models[i].name, name)) return i;
    return -1;
}

static inline float ldf(lnmod_dtype t, const void *p, int64_t i) { return (float)ref_load(t, p, i); }

/* a = 1 + scale (MODULATE) or weight (AFFINE) at column j of token row i's norm row. */
static inline float norm_a(const lnmod_res_desc *d, const void *scale, int64_t i, int64_t j)
{
    if (d->norm == LNMOD_RES_AFFINE) return ldf(d->mod_dtype, scale, j);
    return 1.0f + ldf(d->mod_dtype, scale, lnmod_res_norm_index(d, i) * d->scale_stride + j);
}

static inline float gate_f(const lnmod_res_desc *d, const void *gate, int64_t i, int64_t j)
{
    if (d->gate == LNMOD_RES_GATE_NONE) return 1.0f;
    return ldf(d->mod_dtype, gate, lnmod_res_mod_index(d, i) * d->gate_stride + j);
}

/* ---- forward -------------------------------------------------------------------------------- */

typedef struct {
    int which, failed;
    const lnmod_res_desc *d;
    const lnmod_res_fwd_in *in;
    const lnmod_res_fwd_out *out;
} fwd_ctx;

static void fwd_rows(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    fwd_ctx *f = c;
    const lnmod_res_desc *d = f->d;
    const int64_t D = d->D;
    float *hs = malloc((size_t)(2 * D) * sizeof *hs);
    if (!hs) {
        f->failed = 1; /* a benign race: every writer stores 1 */
        return;
    }
    float *dev = hs + D;
    for (int64_t i = lo; i < hi; i++) {
        for (int64_t j = 0; j < D; j++) {
            const float g = f->which == R_NO_GATE ? 1.0f : gate_f(d, f->in->gate, i, j);
            const float hv = fmaf(g, ldf(d->branch_dtype, f->in->y, i * D + j), ldf(d->res_dtype, f->in->r, i * D + j));
            hs[j] = (float)ref_round_to(d->res_dtype, hv);
            if (f->which != R_NO_H) ref_store(d->res_dtype, f->out->h, i * D + j, hv);
        }
        const float mu = psum(hs, D) / (float)D;
        for (int64_t j = 0; j < D; j++) dev[j] = (hs[j] - mu) * (hs[j] - mu);
        const float rs = 1.0f / sqrtf(psum(dev, D) / (float)D + (float)d->eps);
        const int64_t kn = lnmod_res_norm_index(d, i);
        const int64_t oh = d->norm == LNMOD_RES_AFFINE ? 0 : kn * d->shift_stride;
        for (int64_t j = 0; j < D; j++) {
            const float o = fmaf((hs[j] - mu) * rs, norm_a(d, f->in->scale, i, j), ldf(d->mod_dtype, f->in->shift, oh + j));
            ref_store(d->out_dtype, f->out->out, i * D + j, (double)o);
        }
        if (f->out->mean) f->out->mean[i] = mu;
        if (f->out->rstd) f->out->rstd[i] = rs;
    }
    free(hs);
}

lnmod_status verify_res_model_forward(int which, const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                      const lnmod_res_fwd_out *out, int threads)
{
    lnmod_status st = lnmod_res_check_fwd_in(d, in);
    if (st == LNMOD_OK) st = lnmod_res_check_fwd_out(d, out);
    if (st != LNMOD_OK) return st;
    fwd_ctx f = {which, 0, d, in, out};
    verify_parallel(d->rows, 8 * d->D, threads, fwd_rows, &f);
    return f.failed ? LNMOD_ERR_ALLOC : LNMOD_OK;
}

/* ---- backward ------------------------------------------------------------------------------- */

/* Token rows of norm row k (all of them under AFFINE) and of gate row k. */
static void norm_range(const lnmod_res_desc *d, int64_t k, int64_t *i0, int64_t *i1)
{
    const lnmod_desc g = lnmod_res_map_desc(d);
    if (d->norm == LNMOD_RES_AFFINE) *i0 = 0, *i1 = d->rows;
    else ref_mod_row_range(&g, k, i0, i1);
}
static void gate_range(const lnmod_res_desc *d, int64_t k, int64_t *i0, int64_t *i1)
{
    const lnmod_desc g = lnmod_res_map_desc(d);
    ref_mod_row_range(&g, k, i0, i1);
}

static int64_t nchunks(int64_t i0, int64_t i1) { return (i1 - i0 + VERIFY_MODEL_CHUNK - 1) / VERIFY_MODEL_CHUNK; }

/* Chunks of all norm rows and of all gate rows. */
static void chunk_totals(const lnmod_res_desc *d, int64_t *norm, int64_t *gate)
{
    int64_t i0, i1;
    *norm = *gate = 0;
    for (int64_t k = 0; k < lnmod_res_norm_rows(d); k++) norm_range(d, k, &i0, &i1), *norm += nchunks(i0, i1);
    if (d->gate == LNMOD_RES_GATE)
        for (int64_t k = 0; k < lnmod_res_mod_rows(d); k++) gate_range(d, k, &i0, &i1), *gate += nchunks(i0, i1);
}

int64_t verify_res_model_bwd_workspace(const lnmod_res_desc *d)
{
    int64_t cn, cg;
    chunk_totals(d, &cn, &cg);
    return (2 * cn + cg) * d->D * (int64_t)sizeof(float) + 16;
}

typedef struct {
    int which, failed;
    const lnmod_res_desc *d;
    const lnmod_res_bwd_in *in;
    const lnmod_res_bwd_out *out;
    float *pn, *pg;             /* norm partials [chunk][2][D], gate partials [chunk][D] */
    int64_t *first_n, *first_g; /* first chunk of each norm / gate row */
    int64_t cg;                 /* gate chunks */
} bwd_ctx;

static inline float xhat_f(const bwd_ctx *b, int64_t i, int64_t j)
{
    return (ldf(b->d->res_dtype, b->in->h, i * b->d->D + j) - b->in->mean[i]) * b->in->rstd[i];
}

/* Row i: t = dh + rstd*(gm - mg - xhat*mgx) in fp32, dr = t and dy = g*t rounded once, and,
 * when part is not NULL, part[j] += t*y (the gate's chunk partial). Each element of dh is read
 * before dr's is written, so dr may be dh itself. gm, gx: scratch of D floats each. */
static void bwd_row(const bwd_ctx *b, int64_t i, float *gm, float *gx, float *part)
{
    const lnmod_res_desc *d = b->d;
    const int64_t D = d->D;
    for (int64_t j = 0; j < D; j++) {
        gm[j] = ldf(d->out_dtype, b->in->dout, i * D + j) * norm_a(d, b->in->scale, i, j);
        gx[j] = gm[j] * xhat_f(b, i, j);
    }
    const float mg = psum(gm, D) / (float)D, mgx = psum(gx, D) / (float)D, rs = b->in->rstd[i];
    for (int64_t j = 0; j < D; j++) {
        const float dh = b->in->dh ? ldf(d->res_dtype, b->in->dh, i * D + j) : 0.0f;
        const float t = (b->which == R_BWD_NO_DH ? 0.0f : dh) + rs * (gm[j] - mg - xhat_f(b, i, j) * mgx);
        if (part) part[j] += (b->which == R_BWD_DGATE_DH ? dh : t) * ldf(d->branch_dtype, b->in->y, i * D + j);
        ref_store(d->res_dtype, b->out->dr, i * D + j, (double)t);
        ref_store(d->branch_dtype, b->out->dy, i * D + j, (double)(gate_f(d, b->in->gate, i, j) * t));
    }
}

/* Phase 1 without a gate: token rows [lo, hi). */
static void bwd_rows(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    bwd_ctx *b = c;
    float *gm = malloc((size_t)(2 * b->d->D) * sizeof *gm);
    if (!gm) {
        b->failed = 1; /* a benign race: every writer stores 1 */
        return;
    }
    for (int64_t i = lo; i < hi; i++) bwd_row(b, i, gm, gm + b->d->D, NULL);
    free(gm);
}

/* Phase 1 with a gate: gate chunks [lo, hi) (every token row is in exactly one), each chunk's
 * rows in order, the chunk's partial of t*y beside dr and dy. */
static void bwd_gate_chunks(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    bwd_ctx *b = c;
    const int64_t D = b->d->D, nm = lnmod_res_mod_rows(b->d);
    float *gm = malloc((size_t)(2 * D) * sizeof *gm);
    if (!gm) {
        b->failed = 1;
        return;
    }
    int64_t k = 0;
    for (int64_t q = lo; q < hi; q++) {
        int64_t a = 0, z = nm - 1; /* the gate row of chunk q: the last k with first_g[k] <= q */
        while (a < z) {
            const int64_t mid = (a + z + 1) / 2;
            if (b->first_g[mid] <= q) a = mid;
            else z = mid - 1;
        }
        k = a;
        int64_t i0, i1;
        gate_range(b->d, k, &i0, &i1);
        const int64_t r0 = i0 + (q - b->first_g[k]) * VERIFY_MODEL_CHUNK;
        const int64_t r1 = r0 + VERIFY_MODEL_CHUNK < i1 ? r0 + VERIFY_MODEL_CHUNK : i1;
        float *part = b->pg + q * D;
        memset(part, 0, (size_t)D * sizeof *part);
        for (int64_t i = r0; i < r1; i++) bwd_row(b, i, gm, gm + D, part);
    }
    free(gm);
}

/* Phase 2 over norm rows [lo, hi) (reads h and dout only). */
static void norm_partials(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    const bwd_ctx *b = c;
    const int64_t D = b->d->D;
    for (int64_t k = lo; k < hi; k++) {
        int64_t i0, i1;
        norm_range(b->d, k, &i0, &i1);
        for (int64_t q = 0; q < nchunks(i0, i1); q++) {
            float *s = b->pn + (b->first_n[k] + q) * 2 * D, *h = s + D;
            memset(s, 0, (size_t)(2 * D) * sizeof *s);
            const int64_t e = i0 + (q + 1) * VERIFY_MODEL_CHUNK < i1 ? i0 + (q + 1) * VERIFY_MODEL_CHUNK : i1;
            for (int64_t i = i0 + q * VERIFY_MODEL_CHUNK; i < e; i++)
                for (int64_t j = 0; j < D; j++) {
                    const float go = ldf(b->d->out_dtype, b->in->dout, i * D + j);
                    s[j] += go * xhat_f(b, i, j);
                    h[j] += go;
                }
        }
    }
}
/* Phase 3: the partials of norm rows (which 0) or gate rows (1) in chunk order. */
static void finalize(const bwd_ctx *b, int gate)
{
    const lnmod_res_desc *d = b->d;
    const int64_t D = d->D, n = gate ? lnmod_res_mod_rows(d) : lnmod_res_norm_rows(d);
    const int affine = d->norm == LNMOD_RES_AFFINE;
    for (int64_t k = 0; k < n; k++) {
        int64_t i0, i1;
        if (gate) gate_range(d, k, &i0, &i1);
        else norm_range(d, k, &i0, &i1);
        for (int64_t j = 0; j < D; j++) {
            float s = 0.0f, h = 0.0f;
            for (int64_t q = 0; q < nchunks(i0, i1); q++) {
                if (gate) {
                    s += b->pg[(b->first_g[k] + q) * D + j];
                    continue;
                }
                s += b->pn[(b->first_n[k] + q) * 2 * D + j];
                h += b->pn[(b->first_n[k] + q) * 2 * D + D + j];
            }
            if (gate) {
                ref_store(d->mod_dtype, b->out->dgate, k * d->gate_stride + j, (double)s);
                continue;
            }
            ref_store(d->mod_dtype, b->out->dscale, (affine ? 0 : k * d->scale_stride) + j, (double)s);
            ref_store(d->mod_dtype, b->out->dshift, (affine ? 0 : k * d->shift_stride) + j, (double)h);
        }
    }
}

lnmod_status verify_res_model_backward(int which, const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                                       const lnmod_res_bwd_out *out, void *ws, int threads)
{
    lnmod_status st = lnmod_res_check_bwd_in(d, in);
    if (st == LNMOD_OK) st = lnmod_res_check_bwd_out(d, out);
    if (st != LNMOD_OK) return st;
    if (!ws) return LNMOD_ERR_NULL_POINTER;
    const int64_t nn = lnmod_res_norm_rows(d), nm = lnmod_res_mod_rows(d);
    int64_t cn, cg;
    chunk_totals(d, &cn, &cg);
    int64_t *first = malloc((size_t)(nn + nm) * sizeof *first);
    if (!first) return LNMOD_ERR_ALLOC;
    bwd_ctx b = {which, 0, d, in, out, (float *)ws, (float *)ws + 2 * cn * d->D, first, first + nn, cg};
    int64_t acc = 0, i0, i1;
    for (int64_t k = 0; k < nn; k++) first[k] = acc, norm_range(d, k, &i0, &i1), acc += nchunks(i0, i1);
    acc = 0;
    for (int64_t k = 0; k < nm; k++) b.first_g[k] = acc, gate_range(d, k, &i0, &i1), acc += nchunks(i0, i1);
    /* the norm's partials first: they read h and dout, which dr and dy do not overwrite, and
     * phase 1 may write dr over dh */
    verify_parallel(nn, 3 * d->D * (d->rows / nn), threads, norm_partials, &b);
    if (d->gate == LNMOD_RES_GATE) verify_parallel(cg, 10 * d->D * VERIFY_MODEL_CHUNK, threads, bwd_gate_chunks, &b);
    else verify_parallel(d->rows, 10 * d->D, threads, bwd_rows, &b);
    finalize(&b, 0);
    if (d->gate == LNMOD_RES_GATE) finalize(&b, 1);
    free(first);
    return b.failed ? LNMOD_ERR_ALLOC : LNMOD_OK;
}
