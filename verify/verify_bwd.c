/* verify_bwd.c -- the backward cases of one input set (verify_internal.h). The forward's
 * inputs (x, scale, already on the device) are reused; dy is drawn per row like x; mean and
 * rstd are the float64 reference's statistics rounded to fp32, so the comparison measures the
 * backward's own error. Each variant with a backward runs twice:
 *   1. outputs (dx, dscale, dshift with their guard bands and the gaps between strided
 *      modulation rows) poisoned with 0xFF (NaN), workspace poisoned too; downloaded;
 *   2. into a second set of device outputs, poisoned with VERIFY_POISON2_BYTE, workspace
 *      filled with random bytes; the guards and gaps must hold the new poison and the data
 *      must equal launch 1's bit for bit. Both launches' guards, gaps and this equality are
 *      checked where the buffers are (verify_dev_span_check: on the GPU, nothing more crosses
 *      the bus than launch 1's download).
 * Then one pass over threads computes the reference (ref_lnmod_backward_row per token row,
 * ref_lnmod_backward_colsums per modulation row and block of columns) and compares every
 * variant's launch-1 outputs with it (verify_check.h's backward allowances), so the float64
 * work is done once per set whatever the number of variants. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_lnmod.h"
#include "verify_half.h"
#include "verify_internal.h"
#include "verify_span.h"

#define COLS 512 /* columns per block of the column-sum check */

typedef struct {
    const verify_setw *w;
    int nv, vi[VERIFY_MAX_VARIANTS];
    int64_t nmod, nblk;
    size_t gxb, gscb, gshb, dyb, sb;
    verify_span span[3]; /* dx, dscale, dshift: guards, gaps, data (verify_span.h) */
    void *hdy;
    float *hmean, *hrstd;
    unsigned char *ddy, *dmean, *drstd, *dgx, *dgsc, *dgsh; /* launch 1's outputs */
    unsigned char *dgx2, *dgsc2, *dgsh2, *dcnt;             /* launch 2's; the check's counters */
    unsigned char *gx[VERIFY_MAX_VARIANTS], *gsc[VERIFY_MAX_VARIANTS], *gsh[VERIFY_MAX_VARIANTS];
    size_t ws[VERIFY_MAX_VARIANTS];
    int ran[VERIFY_MAX_VARIANTS], guard[VERIFY_MAX_VARIANTS], same[VERIFY_MAX_VARIANTS];
    int no_memory[VERIFY_MAX_VARIANTS]; /* not run: the workspace could not be had */
    char err[VERIFY_MAX_VARIANTS][512];
    verify_stats *st; /* [tid][variant][3]: dx, dscale, dshift */
    int threads;
    uint64_t seed;
    lnmod_status ref_st[VERIFY_MAX_THREADS];
} bwd_set;

static verify_stats *stat_of(bwd_set *b, int tid, int j, int o) { return &b->st[((size_t)tid * b->nv + j) * 3 + o]; }

void verify_bwd_pool_free(verify_session *s)
{
    verify_bwd_pool *p = &s->bp;
    verify_buf *hb[] = {&p->hdy, &p->hmean, &p->hrstd, &p->hws};
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) verify_host_free(hb[i]);
    for (int v = 0; v < VERIFY_MAX_VARIANTS; v++) {
        verify_host_free(&p->hgx[v]);
        verify_host_free(&p->hgsc[v]);
        verify_host_free(&p->hgsh[v]);
    }
    verify_buf *db[] = {&p->ddy, &p->dmean, &p->drstd, &p->dgx, &p->dgsc, &p->dgsh,
                        &p->dgx2, &p->dgsc2, &p->dgsh2, &p->dcnt, &p->dws};
    for (size_t i = 0; i < sizeof db / sizeof db[0]; i++) verify_dev_free(&s->bk, db[i]);
}

static inline double ld(lnmod_dtype t, const void *base, int64_t i)
{
    switch (t) {
    case LNMOD_F32: return (double)((const float *)base)[i];
    case LNMOD_F16: return (double)verify_f16_to_f32(((const uint16_t *)base)[i]);
    default: return (double)verify_bf16_to_f32(((const uint16_t *)base)[i]);
    }
}

/* ---- inputs -------------------------------------------------------------------------------- */

typedef struct {
    const lnmod_desc *d;
    uint64_t seed;
    void *dy;
    float *mean, *rstd;
    const double *rm, *rr;
} dy_ctx;

/* dy ~ the near-normal g of verify_inputs.h, one PRNG stream per row; the statistics. */
static void dy_rows(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    dy_ctx *k = c;
    verify_fill_dy_rows(k->d, k->seed, lo, hi, k->dy);
    for (int64_t r = lo; r < hi; r++) {
        k->mean[r] = ref_f64_to_f32(k->rm[r]);
        k->rstd[r] = ref_f64_to_f32(k->rr[r]);
    }
}

/* Host dy and statistics, device inputs and output buffers. NULL, or why not. */
static const char *prepare(verify_session *s, bwd_set *b, char *buf, size_t n)
{
    const verify_setw *w = b->w;
    const lnmod_desc *d = &w->d;
    const verify_offsets *o = &w->g.off;
    verify_backend *bk = &s->bk;
    verify_bwd_pool *p = &s->bp;
    b->nmod = lnmod_mod_rows(d);
    b->nblk = (d->D + COLS - 1) / COLS;
    b->dyb = 2 * VERIFY_GUARD + (size_t)(o->y + w->n) * w->ys;
    b->sb = 2 * VERIFY_GUARD + (size_t)d->rows * sizeof(float);
    b->gxb = 2 * VERIFY_GUARD + (size_t)(o->x + w->n) * w->xs;
    b->gscb = 2 * VERIFY_GUARD + (size_t)(o->scale + w->nsc) * w->ms;
    b->gshb = 2 * VERIFY_GUARD + (size_t)(o->shift + w->nsh) * w->ms;
    /* dx as its rows of D (no gaps): the same bytes as one span of n, split for threads */
    b->span[0] = (verify_span){b->gxb, VERIFY_GUARD + (size_t)o->x * w->xs, w->xs, d->rows, d->D, d->D};
    b->span[1] = (verify_span){b->gscb, VERIFY_GUARD + (size_t)o->scale * w->ms, w->ms, b->nmod, d->D, d->scale_stride};
    b->span[2] = (verify_span){b->gshb, VERIFY_GUARD + (size_t)o->shift * w->ms, w->ms, b->nmod, d->D, d->shift_stride};
    if (w->n > ((int64_t)1 << 28)) {
        int64_t need = w->n * (int64_t)(w->ys + (size_t)b->nv * w->xs) + ((int64_t)1 << 28);
        int64_t avail = verify_host_mem_available();
        if (avail >= 0 && avail < need) {
            snprintf(buf, n, "not run: the backward needs %.1f GB more host memory, %.1f GB available",
                     (double)need / 1e9, (double)avail / 1e9);
            return buf;
        }
    }
    b->hdy = verify_host_get_xfer(bk, &p->hdy, (size_t)w->n * w->ys);
    b->hmean = verify_host_get_xfer(bk, &p->hmean, (size_t)d->rows * sizeof(float));
    b->hrstd = verify_host_get_xfer(bk, &p->hrstd, (size_t)d->rows * sizeof(float));
    int ok = b->hdy && b->hmean && b->hrstd;
    for (int j = 0; j < b->nv && ok; j++) {
        b->gx[j] = verify_host_get_xfer(bk, &p->hgx[j], b->gxb);
        b->gsc[j] = verify_host_get_xfer(bk, &p->hgsc[j], b->gscb);
        b->gsh[j] = verify_host_get_xfer(bk, &p->hgsh[j], b->gshb);
        ok = b->gx[j] && b->gsc[j] && b->gsh[j];
    }
    if (!ok) return "not run: out of host memory";
    double t0 = ada_now_s(), c0 = verify_cpu_s();
    dy_ctx k = {d, b->seed, b->hdy, b->hmean, b->hrstd, w->rm, w->rr};
    verify_parallel(d->rows, d->D, s->bk.threads, dy_rows, &k);
    double t1 = ada_now_s();
    s->t.t_inputs += t1 - t0;
    s->t.c_inputs += verify_cpu_s() - c0;
    b->ddy = verify_dev_get(bk, &p->ddy, b->dyb);
    b->dmean = verify_dev_get(bk, &p->dmean, b->sb);
    b->drstd = verify_dev_get(bk, &p->drstd, b->sb);
    b->dgx = verify_dev_get(bk, &p->dgx, b->gxb);
    b->dgsc = verify_dev_get(bk, &p->dgsc, b->gscb);
    b->dgsh = verify_dev_get(bk, &p->dgsh, b->gshb);
    b->dgx2 = verify_dev_get(bk, &p->dgx2, b->gxb);
    b->dgsc2 = verify_dev_get(bk, &p->dgsc2, b->gscb);
    b->dgsh2 = verify_dev_get(bk, &p->dgsh2, b->gshb);
    b->dcnt = verify_dev_get(bk, &p->dcnt, 2 * sizeof(unsigned long long));
    const char *why = NULL;
    if (!b->ddy || !b->dmean || !b->drstd || !b->dgx || !b->dgsc || !b->dgsh || !b->dgx2 || !b->dgsc2 || !b->dgsh2 ||
        !b->dcnt)
        why = "not run: out of device memory";
    else if (verify_dev_poison(bk, b->ddy, b->dyb) || verify_dev_poison(bk, b->dmean, b->sb) ||
             verify_dev_poison(bk, b->drstd, b->sb) ||
             verify_dev_upload(bk, b->ddy + VERIFY_GUARD + o->y * w->ys, b->hdy, (size_t)w->n * w->ys) ||
             verify_dev_upload(bk, b->dmean + VERIFY_GUARD, b->hmean, (size_t)d->rows * sizeof(float)) ||
             verify_dev_upload(bk, b->drstd + VERIFY_GUARD, b->hrstd, (size_t)d->rows * sizeof(float)))
        why = "not run: copying the backward's inputs to the device failed";
    s->t.t_device += ada_now_s() - t1;
    return why;
}

/* ---- launches -------------------------------------------------------------------------------- */

/* Guards, gaps (every byte the launch's poison) and, with ref, the data of the three outputs
 * against ref's (launch 1's), where they live (verify_dev_span_check): 0, or -1 on an error. */
static int check_outputs(verify_session *s, bwd_set *b, unsigned char *const out[3], unsigned char *const ref[3],
                         unsigned char poison, int *outside_ok, int *same)
{
    *outside_ok = *same = 1;
    for (int o = 0; o < 3; o++) {
        int ok_o, same_o;
        if (verify_dev_span_check(&s->bk, &b->span[o], out[o], ref ? ref[o] : NULL, poison, b->dcnt, &ok_o, &same_o))
            return -1;
        *outside_ok = *outside_ok && ok_o;
        *same = *same && same_o;
    }
    return 0;
}

/* Poison (and the workspace), run into the launch's device outputs (launch 1: dgx/dgsc/dgsh,
 * downloaded into gx/gsc/gsh[j]; launch 2: dgx2/dgsc2/dgsh2, checked on the device). 0, or -1
 * with b->err[j]. */
static int launch_once(verify_session *s, bwd_set *b, int j, int second, unsigned char *ws)
{
    unsigned char *const ox = second ? b->dgx2 : b->dgx, *const osc = second ? b->dgsc2 : b->dgsc,
                         *const osh = second ? b->dgsh2 : b->dgsh;
    verify_backend *bk = &s->bk;
    const verify_setw *w = b->w;
    const verify_offsets *o = &w->g.off;
    const unsigned char poison = second ? VERIFY_POISON2_BYTE : VERIFY_POISON_BYTE;
    char *err = b->err[j];
    const size_t en = sizeof b->err[j];
    int bad = verify_dev_fill(bk, ox, poison, b->gxb) || verify_dev_fill(bk, osc, poison, b->gscb) ||
              verify_dev_fill(bk, osh, poison, b->gshb);
    if (!bad && b->ws[j] && !second) bad = verify_dev_poison(bk, ws, b->ws[j]);
    if (!bad && b->ws[j] && second) {
        /* random bytes, from the case's seed: the kernel must not read its workspace first */
        unsigned char *h = verify_host_get_xfer(bk, &s->bp.hws, b->ws[j]);
        if (!h) {
            snprintf(err, en, "out of host memory for the workspace");
            return -1;
        }
        ada_rng rng;
        ada_rng_seed(&rng, verify_hash(b->seed, 0x7773));
        for (size_t i = 0; i < b->ws[j]; i += 8) {
            uint64_t v = ada_rng_u64(&rng);
            memcpy(h + i, &v, b->ws[j] - i < 8 ? b->ws[j] - i : 8);
        }
        bad = verify_dev_upload(bk, ws, h, b->ws[j]);
    }
    if (bad) {
        snprintf(err, en, "poisoning the backward's outputs failed");
        return -1;
    }
    if (verify_backend_run_bwd(bk, s->c->variants[b->vi[j]], &w->d, w->dx + VERIFY_GUARD + o->x * w->xs,
                               w->dsc + VERIFY_GUARD + o->scale * w->ms, b->ddy + VERIFY_GUARD + o->y * w->ys,
                               (const float *)(b->dmean + VERIFY_GUARD), (const float *)(b->drstd + VERIFY_GUARD),
                               ox + VERIFY_GUARD + o->x * w->xs, osc + VERIFY_GUARD + o->scale * w->ms,
                               osh + VERIFY_GUARD + o->shift * w->ms, b->ws[j] ? ws : NULL, b->ws[j], err, en))
        return -1;
    if (second) return 0;
    if (verify_dev_download(bk, b->gx[j], ox, b->gxb) || verify_dev_download(bk, b->gsc[j], osc, b->gscb) ||
        verify_dev_download(bk, b->gsh[j], osh, b->gshb)) {
        snprintf(err, en, "copying the backward's outputs back failed");
        return -1;
    }
    return 0;
}

/* Both launches of variant j: sets ran, guard and same. */
static void launch_variant(verify_session *s, bwd_set *b, int j)
{
    verify_backend *bk = &s->bk;
    const verify_setw *w = b->w;
    const lnmod_desc *d = &w->d;
    if (bk->context_lost) {
        snprintf(b->err[j], sizeof b->err[j], "CUDA context lost earlier (%.200s)", bk->lost_why);
        return;
    }
    if (verify_backend_bwd_workspace(bk, s->c->variants[b->vi[j]], d, &b->ws[j], b->err[j], sizeof b->err[j]))
        return;
    unsigned char *ws = NULL;
    if (b->ws[j] && !(ws = verify_dev_get(bk, &s->bp.dws, b->ws[j]))) {
        snprintf(b->err[j], sizeof b->err[j], "not run: out of device memory for a %zu-byte workspace", b->ws[j]);
        b->no_memory[j] = 1;
        return;
    }
    if (launch_once(s, b, j, 0, ws) || launch_once(s, b, j, 1, ws)) return;
    unsigned char *const one[3] = {b->dgx, b->dgsc, b->dgsh}, *const two[3] = {b->dgx2, b->dgsc2, b->dgsh2};
    int ok1, ok2, same, unused;
    if (check_outputs(s, b, one, NULL, VERIFY_POISON_BYTE, &ok1, &unused) ||
        check_outputs(s, b, two, one, VERIFY_POISON2_BYTE, &ok2, &same)) {
        snprintf(b->err[j], sizeof b->err[j], "checking the backward's outputs on the device failed");
        return;
    }
    b->ran[j] = 1;
    b->guard[j] = ok1 && ok2;
    b->same[j] = same;
}

/* ---- the reference and the comparison, fused ------------------------------------------------ */

/* verify_stats_add, with the forward's fast path: an element that passes and sets no new
 * maximum only adds to the sums (the result equals verify_stats_add on every element). */
static inline void add(verify_stats *s, int64_t idx, double got, double ref, double allow)
{
    const double err = fabs(got - ref), aref = fabs(ref);
    if (s->worst_index >= 0 && err <= s->max_abs && err <= s->max_rel * aref &&
        err <= (s->worst_ratio < 1.0 ? s->worst_ratio : 1.0) * allow) {
        s->n++;
        s->sum_sq_err += err * err;
        s->sum_sq_ref += ref * ref;
        return;
    }
    verify_stats_add(s, idx, got, ref, allow, 0.0);
}

/* add() over the n elements [i0, i0 + n) of got against ref[0..n) and allow[0..n), with the
 * running limits and sums in locals (the loop the full grid spends its time in). */
static void add_row(verify_stats *s, int64_t i0, int64_t n, lnmod_dtype t, const void *got, const double *ref,
                    const double *allow)
{
    double sse = 0.0, ssr = 0.0;
    int64_t nfast = 0;
    double lim_abs = s->max_abs, lim_rel = s->max_rel, lim_ratio = s->worst_ratio < 1.0 ? s->worst_ratio : 1.0;
    int have = s->worst_index >= 0;
    for (int64_t i = 0; i < n; i++) {
        const double gv = ld(t, got, i0 + i), rv = ref[i];
        const double err = fabs(gv - rv), aref = fabs(rv);
        if (have && err <= lim_abs && err <= lim_rel * aref && err <= lim_ratio * allow[i]) {
            sse += err * err;
            ssr += rv * rv;
            nfast++;
            continue;
        }
        verify_stats_add(s, i0 + i, gv, rv, allow[i], 0.0);
        have = 1;
        lim_abs = s->max_abs;
        lim_rel = s->max_rel;
        lim_ratio = s->worst_ratio < 1.0 ? s->worst_ratio : 1.0;
    }
    s->n += nfast;
    s->sum_sq_err += sse;
    s->sum_sq_ref += ssr;
}

static void dx_check(void *c, int64_t lo, int64_t hi, int tid)
{
    bwd_set *b = c;
    const verify_setw *w = b->w;
    const lnmod_desc *d = &w->d;
    const int64_t D = d->D;
    double *buf = malloc((size_t)(3 * D) * sizeof *buf);
    if (!buf) {
        b->ref_st[tid] = LNMOD_ERR_ALLOC;
        return;
    }
    double *ref = buf, *g = buf + D, *xh = buf + 2 * D;
    const unsigned char *got[VERIFY_MAX_VARIANTS];
    for (int j = 0; j < b->nv; j++) got[j] = b->gx[j] + VERIFY_GUARD + (size_t)w->g.off.x * w->xs;
    for (int64_t r = lo; r < hi; r++) {
        ref_bwd_row info;
        lnmod_status st = ref_lnmod_backward_row(d, r, w->hx, w->hsc, b->hdy, b->hmean, b->hrstd, ref, g, xh, &info);
        if (st != LNMOD_OK) {
            b->ref_st[tid] = st;
            break;
        }
        const verify_dx_row R = {b->hrstd[r], info.mg, info.mgx, info.abs_g, info.abs_gx, D, d->x_dtype};
        const verify_dx_coef cf = verify_dx_coef_of(&R);
        for (int64_t i = 0; i < D; i++) g[i] = verify_dx_allow_c(&cf, ref[i], g[i], xh[i]); /* g: the allowances */
        for (int j = 0; j < b->nv; j++) {
            if (!b->ran[j]) continue;
            add_row(stat_of(b, tid, j, 0), r * D, D, d->x_dtype, got[j], ref, g);
        }
    }
    free(buf);
}

/* Items q = k * nblk + block: modulation row k, columns of one block. */
static void colsum_check(void *c, int64_t lo, int64_t hi, int tid)
{
    bwd_set *b = c;
    const verify_setw *w = b->w;
    const lnmod_desc *d = &w->d;
    double rs[COLS], rh[COLS], as[COLS], ah[COLS];
    for (int64_t q = lo; q < hi; q++) {
        const int64_t k = q / b->nblk, j0 = (q % b->nblk) * COLS, j1 = j0 + COLS < d->D ? j0 + COLS : d->D;
        int64_t r0, r1;
        ref_mod_row_range(d, k, &r0, &r1);
        lnmod_status st = ref_lnmod_backward_colsums(d, k, j0, j1, w->hx, b->hdy, b->hmean, b->hrstd, rs, rh, as, ah);
        if (st != LNMOD_OK) {
            b->ref_st[tid] = st;
            break;
        }
        const verify_colsum_coef cf = verify_colsum_coef_of(d->mod_dtype, r1 - r0);
        for (int64_t i = 0; i < j1 - j0; i++) {
            as[i] = verify_colsum_allow_c(&cf, rs[i], as[i]); /* as, ah: the allowances */
            ah[i] = verify_colsum_allow_c(&cf, rh[i], ah[i]);
        }
        for (int j = 0; j < b->nv; j++) {
            if (!b->ran[j]) continue;
            const unsigned char *gs = b->gsc[j] + VERIFY_GUARD + (size_t)w->g.off.scale * w->ms;
            const unsigned char *gh = b->gsh[j] + VERIFY_GUARD + (size_t)w->g.off.shift * w->ms;
            verify_stats *ss = stat_of(b, tid, j, 1), *sh = stat_of(b, tid, j, 2);
            for (int64_t i = j0; i < j1; i++) {
                add(ss, k * d->D + i, ld(d->mod_dtype, gs, k * d->scale_stride + i), rs[i - j0], as[i - j0]);
                add(sh, k * d->D + i, ld(d->mod_dtype, gh, k * d->shift_stride + i), rh[i - j0], ah[i - j0]);
            }
        }
    }
}

/* Runs both checks; merged stats into out[j][3]. Returns the reference's status. */
static lnmod_status check_all(verify_session *s, bwd_set *b, verify_stats out[][3])
{
    const lnmod_desc *d = &b->w->d;
    for (int t = 0; t < b->threads; t++) {
        b->ref_st[t] = LNMOD_OK;
        for (int j = 0; j < b->nv; j++)
            for (int o = 0; o < 3; o++) verify_stats_init(stat_of(b, t, j, o));
    }
    int u1 = verify_parallel(d->rows, 8 * d->D + 2 * b->nv * d->D, s->bk.threads, dx_check, b);
    int u2 = verify_parallel(b->nmod * b->nblk, (d->rows / b->nmod) * COLS * 4, s->bk.threads, colsum_check, b);
    const int used = u1 > u2 ? u1 : u2;
    lnmod_status st = LNMOD_OK;
    for (int j = 0; j < b->nv; j++)
        for (int o = 0; o < 3; o++) {
            verify_stats_init(&out[j][o]);
            for (int t = 0; t < used; t++) verify_stats_merge(&out[j][o], stat_of(b, t, j, o));
        }
    for (int t = 0; t < used; t++)
        if (b->ref_st[t] != LNMOD_OK) st = b->ref_st[t];
    return st;
}

/* ---- records --------------------------------------------------------------------------------- */

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *out_json(const verify_stats *st)
{
    return json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:I}", "n", (json_int_t)st->n, "failed",
                     (json_int_t)st->failed, "nonfinite", (json_int_t)st->nonfinite, "max_abs", jnum(st->max_abs),
                     "max_rel", jnum(st->max_rel), "l2_rel", jnum(verify_stats_l2_rel(st)), "worst_ratio",
                     jnum(st->worst_ratio), "worst_index", (json_int_t)st->worst_index);
}

static const char *const out_names[3] = {"dx", "dscale", "dshift"};

/* The failure detail of variant j (lines ending in '\n'). */
static void bwd_detail(const bwd_set *b, int j, const verify_stats st[3], char *detail, size_t dn)
{
    const int64_t D = b->w->d.D;
    size_t k = 0;
    detail[0] = '\0';
    for (int o = 0; o < 3 && k + 300 < dn; o++) {
        if (verify_stats_pass(&st[o])) continue;
        k += (size_t)snprintf(detail + k, dn - k,
                              "    %s: %" PRId64 " of %" PRId64 " elements fail (%" PRId64 " non-finite); worst at %s %" PRId64
                              " col %" PRId64 ": got %.9g, ref %.9g (%.3g x allowed)\n",
                              out_names[o], st[o].failed, st[o].n, st[o].nonfinite, o ? "modulation row" : "row",
                              st[o].worst_index / D, st[o].worst_index % D, st[o].worst_got, st[o].worst_ref,
                              st[o].worst_ratio);
        for (int i = 0; i < st[o].nfirst && k + 200 < dn; i++)
            k += (size_t)snprintf(detail + k, dn - k, "      first: %s %" PRId64 " col %" PRId64 " got %.9g ref %.9g\n",
                                  o ? "modulation row" : "row", st[o].first_index[i] / D, st[o].first_index[i] % D,
                                  st[o].first_got[i], st[o].first_ref[i]);
    }
    if (!b->guard[j] && k + 200 < dn)
        k += (size_t)snprintf(detail + k, dn - k,
                              "    guard band or gap between modulation rows written (dx, dscale or dshift)\n");
    if (!b->same[j] && k + 200 < dn)
        snprintf(detail + k, dn - k,
                 "    not deterministic: the second launch (other poison, random workspace) differs\n");
}

static void record_variant(verify_session *s, bwd_set *b, int j, const verify_stats st[3], const char *ref_err)
{
    const verify_setw *w = b->w;
    const char *variant = s->c->variants[b->vi[j]];
    json_t *c = verify_case_json(variant, VERIFY_DIR_BWD, &w->d, &w->g);
    char line[1024], detail[2048] = "", tail[700];
    if (!b->ran[j] && b->no_memory[j] && !ref_err) { /* like every other allocation failure: not run */
        json_object_set_new(c, "pass", json_false());
        json_object_set_new(c, "not_run", json_string(b->err[j]));
        verify_line_of(line, sizeof line, variant, VERIFY_DIR_BWD, w, b->err[j]);
        verify_record_case(s, b->vi[j], VERIFY_DIR_BWD, c, 0, 1, line, NULL);
        return;
    }
    if (!b->ran[j] || ref_err) {
        snprintf(tail, sizeof tail, "FAIL: %.400s", ref_err ? ref_err : b->err[j]);
        json_object_set_new(c, "pass", json_false());
        json_object_set_new(c, "error", json_string(ref_err ? ref_err : b->err[j]));
        verify_line_of(line, sizeof line, variant, VERIFY_DIR_BWD, w, tail);
        verify_record_case(s, b->vi[j], VERIFY_DIR_BWD, c, 0, 0, line, NULL);
        return;
    }
    int pass_o[3], pass = b->guard[j] && b->same[j];
    double worst = 0.0;
    for (int o = 0; o < 3; o++) {
        pass_o[o] = verify_stats_pass(&st[o]);
        pass = pass && pass_o[o];
        json_object_set_new(c, out_names[o], out_json(&st[o]));
        if (!(st[o].worst_ratio <= worst)) worst = st[o].worst_ratio; /* NaN/Inf propagate */
    }
    json_object_set_new(c, "worst_ratio", jnum(worst));
    json_object_set_new(c, "max_abs", jnum(st[0].max_abs));
    json_object_set_new(c, "guard_ok", json_boolean(b->guard[j]));
    json_object_set_new(c, "deterministic", json_boolean(b->same[j]));
    json_object_set_new(c, "workspace_bytes", json_integer((json_int_t)b->ws[j]));
    json_object_set_new(c, "pass", json_boolean(pass));
    char verdict[128];
    if (pass) {
        snprintf(verdict, sizeof verdict, "ok");
    } else {
        snprintf(verdict, sizeof verdict, "FAIL%s%s%s%s%s", pass_o[0] ? "" : " dx", pass_o[1] ? "" : " dscale",
                 pass_o[2] ? "" : " dshift", b->guard[j] ? "" : " guard", b->same[j] ? "" : " nondeterministic");
        bwd_detail(b, j, st, detail, sizeof detail);
    }
    snprintf(line, sizeof line, "%-14s bwd %-14s %-6s %6" PRId64 " %7" PRId64 " %10.3g %10.3g %10.3g  %s", variant,
             w->dts, lnmod_layout_name(w->d.layout), w->d.D, w->d.rows, st[0].max_abs, st[0].max_rel,
             verify_stats_l2_rel(&st[0]), verdict);
    verify_record_case(s, b->vi[j], VERIFY_DIR_BWD, c, pass, 0, line, detail);
}

static void record_not_run(verify_session *s, const bwd_set *b, const char *why)
{
    for (int j = 0; j < b->nv; j++) {
        const char *variant = s->c->variants[b->vi[j]];
        json_t *c = verify_case_json(variant, VERIFY_DIR_BWD, &b->w->d, &b->w->g);
        json_object_set_new(c, "pass", json_false());
        json_object_set_new(c, "not_run", json_string(why));
        char line[1024];
        verify_line_of(line, sizeof line, variant, VERIFY_DIR_BWD, b->w, why);
        verify_record_case(s, b->vi[j], VERIFY_DIR_BWD, c, 0, 1, line, NULL);
    }
}

void verify_run_backward(verify_session *s, const verify_setw *w, const char *skip)
{
    bwd_set *b = calloc(1, sizeof *b);
    int nv = 0, vi[VERIFY_MAX_VARIANTS];
    for (int v = 0; v < s->c->nvariants; v++)
        if (s->has_bwd[v]) vi[nv++] = v;
    if (nv == 0) {
        free(b);
        return;
    }
    const int threads = s->bk.threads < 1 ? 1 : (s->bk.threads > VERIFY_MAX_THREADS ? VERIFY_MAX_THREADS : s->bk.threads);
    verify_stats *st = b ? calloc((size_t)threads * (size_t)nv * 3, sizeof *st) : NULL;
    verify_stats (*out)[3] = st ? calloc((size_t)nv, sizeof *out) : NULL;
    if (!out) {
        bwd_set tmp = {.w = w, .nv = nv};
        memcpy(tmp.vi, vi, sizeof vi);
        record_not_run(s, &tmp, "not run: out of host memory");
        free(b), free(st);
        return;
    }
    b->w = w;
    b->nv = nv;
    memcpy(b->vi, vi, sizeof vi);
    b->st = st;
    b->threads = threads;
    b->seed = verify_hash(verify_hash(s->c->seed, w->gh), 0x627764);
    char buf[256];
    if (!skip && s->bk.context_lost) {
        snprintf(buf, sizeof buf, "not run: CUDA context lost earlier (%.200s)", s->bk.lost_why);
        skip = buf;
    }
    if (!skip) skip = prepare(s, b, buf, sizeof buf);
    if (skip) {
        record_not_run(s, b, skip);
    } else {
        double t0 = ada_now_s();
        for (int j = 0; j < nv; j++) launch_variant(s, b, j);
        double t1 = ada_now_s(), c1 = verify_cpu_s();
        s->t.t_device += t1 - t0;
        lnmod_status rs = check_all(s, b, out);
        s->t.t_bwd_check += ada_now_s() - t1;
        s->t.c_bwd_check += verify_cpu_s() - c1;
        char rerr[160];
        snprintf(rerr, sizeof rerr, "verifier: the reference returned %s", lnmod_status_name(rs));
        for (int j = 0; j < nv; j++) record_variant(s, b, j, out[j], rs == LNMOD_OK ? NULL : rerr);
    }
    free(out);
    free(st);
    free(b);
}
