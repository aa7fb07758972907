/* verify_case.c -- one case of the verifier (verify_internal.h): its identity as JSON, and
 * the forward's float64 reference fused with the comparison of every variant's downloaded
 * outputs, and the judgement of one: guard bands untouched, every y element and every
 * statistic within verify_check.h's tolerances. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_lnmod.h"
#include "verify_internal.h"

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *verify_case_json(const char *variant, int dir, const lnmod_desc *d, const verify_geom *g)
{
    json_t *c = json_object();
    json_object_set_new(c, "op", json_string("lnmod"));
    json_object_set_new(c, "variant", json_string(variant));
    json_object_set_new(c, "direction", json_string(verify_direction_name(dir)));
    json_object_set_new(c, "x", json_string(lnmod_dtype_name(d->x_dtype)));
    json_object_set_new(c, "mod", json_string(lnmod_dtype_name(d->mod_dtype)));
    json_object_set_new(c, "y", json_string(lnmod_dtype_name(d->y_dtype)));
    json_object_set_new(c, "layout", json_string(lnmod_layout_name(d->layout)));
    json_object_set_new(c, "D", json_integer(d->D));
    json_object_set_new(c, "rows", json_integer(d->rows));
    json_object_set_new(c, "S", json_integer(d->rows_per_sample));
    json_object_set_new(c, "frame_len", json_integer(d->frame_len));
    json_object_set_new(c, "strides", json_pack("{s:I, s:I}", "scale", (json_int_t)d->scale_stride,
                                                "shift", (json_int_t)d->shift_stride));
    json_object_set_new(c, "offsets", json_pack("{s:I, s:I, s:I, s:I}", "x", (json_int_t)g->off.x,
                                                "scale", (json_int_t)g->off.scale, "shift",
                                                (json_int_t)g->off.shift, "y", (json_int_t)g->off.y));
    json_object_set_new(c, "eps", json_real(d->eps));
    json_object_set_new(c, "stats", json_boolean(g->want_stats));
    return c;
}

/* ---- the forward's reference and comparison, fused ------------------------------------- */

typedef struct {
    const verify_setw *w;
    int nv, vi[VERIFY_MAX_VARIANTS]; /* the variants that ran */
    verify_stats *st;                /* [tid][j][3]: y, mean, rstd */
    lnmod_status ref_st[VERIFY_MAX_THREADS];
} fwd_check;

typedef struct {
    const fwd_check *f;
    int tid;
} fwd_row;

/* Row r of the reference (yr, mu, rs): keep the statistics, judge every variant's row. */
static int check_row(void *arg, int64_t r, const double *yr, double mu, double rs)
{
    const fwd_row *c = arg;
    const fwd_check *f = c->f;
    const verify_setw *w = f->w;
    const int64_t D = w->d.D;
    w->rm[r] = mu;
    w->rr[r] = rs;
    for (int j = 0; j < f->nv; j++) {
        const int vi = f->vi[j];
        verify_stats *st = &f->st[((size_t)c->tid * (size_t)f->nv + (size_t)j) * 3];
        verify_compare_y_span(&w->d, r * D, D, w->gy[vi] + VERIFY_GUARD + (size_t)w->g.off.y * w->ys, yr, &st[0]);
        if (w->g.want_stats)
            verify_compare_stats_rows(&w->d, r, r + 1, (const float *)(w->gm[vi] + VERIFY_GUARD),
                                      (const float *)(w->gr[vi] + VERIFY_GUARD), w->rm, w->rr, &st[1], &st[2]);
    }
    return 0;
}

static void check_range(void *arg, int64_t lo, int64_t hi, int tid)
{
    fwd_check *f = arg;
    const verify_setw *w = f->w;
    fwd_row c = {f, tid};
    f->ref_st[tid] = ref_lnmod_forward_visit(&w->d, lo, hi, w->hx, w->hsc, w->hsh, check_row, &c);
}

lnmod_status verify_forward_check(verify_session *s, verify_setw *w, verify_stats (*out)[3])
{
    const int threads = s->bk.threads < 1 ? 1 : (s->bk.threads > VERIFY_MAX_THREADS ? VERIFY_MAX_THREADS : s->bk.threads);
    fwd_check *f = calloc(1, sizeof *f);
    if (!f) return LNMOD_ERR_ALLOC;
    f->w = w;
    for (int v = 0; v < s->c->nvariants; v++)
        if (w->ran[v]) f->vi[f->nv++] = v;
    f->st = calloc((size_t)threads * (size_t)(f->nv > 0 ? f->nv : 1) * 3, sizeof *f->st);
    if (!f->st) {
        free(f);
        return LNMOD_ERR_ALLOC;
    }
    for (size_t i = 0; i < (size_t)threads * (size_t)f->nv * 3; i++) verify_stats_init(&f->st[i]);
    for (int t = 0; t < threads; t++) f->ref_st[t] = LNMOD_OK;
    /* per row: the reference (~3 passes over D) and a pass per variant */
    int used = verify_parallel(w->d.rows, (3 + f->nv) * w->d.D, threads, check_range, f);
    lnmod_status st = LNMOD_OK;
    for (int t = 0; t < used; t++)
        if (f->ref_st[t] != LNMOD_OK) st = f->ref_st[t];
    for (int j = 0; j < f->nv; j++)
        for (int o = 0; o < 3; o++) {
            verify_stats *m = &out[f->vi[j]][o];
            verify_stats_init(m);
            for (int t = 0; t < used; t++) verify_stats_merge(m, &f->st[((size_t)t * (size_t)f->nv + (size_t)j) * 3 + (size_t)o]);
        }
    free(f->st);
    free(f);
    return st;
}

/* Guard bands: y's front band includes the offset element(s); without stats the whole
 * stats buffers must stay untouched. */
static int guards_ok(const verify_setw *w, int vi)
{
    size_t bad = 0;
    const unsigned char *gy = w->gy[vi], *gm = w->gm[vi], *gr = w->gr[vi];
    const size_t yfront = VERIFY_GUARD + (size_t)w->g.off.y * w->ys, yend = yfront + (size_t)w->n * w->ys;
    int ok = verify_guard_ok(gy, yfront, &bad) && verify_guard_ok(gy + yend, w->ybytes - yend, &bad);
    const size_t sfront = w->g.want_stats ? VERIFY_GUARD : w->sbytes;
    const size_t send = w->g.want_stats ? VERIFY_GUARD + (size_t)w->d.rows * sizeof(float) : w->sbytes;
    return ok && verify_guard_ok(gm, sfront, NULL) && verify_guard_ok(gm + send, w->sbytes - send, NULL) &&
           verify_guard_ok(gr, sfront, NULL) && verify_guard_ok(gr + send, w->sbytes - send, NULL);
}

static void numbers_json(json_t *c, const verify_setw *w, const verify_stats *sy, const verify_stats *sm,
                         const verify_stats *sr, int guard_ok)
{
    json_object_set_new(c, "max_abs", jnum(sy->max_abs));
    json_object_set_new(c, "max_rel", jnum(sy->max_rel));
    json_object_set_new(c, "l2_rel", jnum(verify_stats_l2_rel(sy)));
    json_object_set_new(c, "worst_index", json_integer(sy->worst_index));
    json_object_set_new(c, "worst_ratio", jnum(sy->worst_ratio));
    json_object_set_new(c, "nonfinite", json_integer(sy->nonfinite));
    json_object_set_new(c, "failed", json_integer(sy->failed));
    json_object_set_new(c, "guard_ok", json_boolean(guard_ok));
    if (w->g.want_stats) {
        json_object_set_new(c, "mean", json_pack("{s:o, s:o, s:I}", "max_abs", jnum(sm->max_abs), "worst_ratio",
                                                 jnum(sm->worst_ratio), "failed", (json_int_t)sm->failed));
        json_object_set_new(c, "rstd", json_pack("{s:o, s:o, s:I}", "max_rel", jnum(sr->max_rel), "worst_ratio",
                                                 jnum(sr->worst_ratio), "failed", (json_int_t)sr->failed));
    }
}

/* The failure detail: where y fails worst, its first failures, the statistics, guards. */
static void failure_detail(json_t *c, const verify_setw *w, const verify_stats *sy, const verify_stats *sm,
                           const verify_stats *sr, int pass_y, int guard_ok, char *detail, size_t dn)
{
    const int64_t D = w->d.D, rows = w->d.rows;
    size_t k = 0;
    detail[0] = '\0';
    if (!pass_y && sy->worst_index >= 0) {
        json_t *sj = verify_stats_json(sy);
        json_object_set(c, "first_failures", json_object_get(sj, "first_failures"));
        json_decref(sj);
        k += (size_t)snprintf(detail + k, dn - k,
                              "    y: %" PRId64 " of %" PRId64 " elements fail (%" PRId64 " non-finite); worst at row %" PRId64
                              " col %" PRId64 ": got %.9g, ref %.9g (%.3g x allowed)\n",
                              sy->failed, sy->n, sy->nonfinite, sy->worst_index / D, sy->worst_index % D,
                              sy->worst_got, sy->worst_ref, sy->worst_ratio);
        for (int i = 0; i < sy->nfirst && k < dn - 200; i++)
            k += (size_t)snprintf(detail + k, dn - k, "      first: row %" PRId64 " col %" PRId64 " (%s row) got %.9g ref %.9g\n",
                                  sy->first_index[i] / D, sy->first_index[i] % D,
                                  verify_row_kind_name(verify_row_kind_of(rows, sy->first_index[i] / D, w->g.salt)),
                                  sy->first_got[i], sy->first_ref[i]);
    }
    const verify_stats *ss[2] = {sm, sr};
    const char *sn[2] = {"mean", "rstd"};
    for (int q = 0; q < 2 && w->g.want_stats; q++)
        if (!verify_stats_pass(ss[q]) && k < dn - 200)
            k += (size_t)snprintf(detail + k, dn - k,
                                  "    %s: %" PRId64 " of %" PRId64 " rows fail; worst row %" PRId64 " (%s): got %.9g, ref %.9g\n",
                                  sn[q], ss[q]->failed, ss[q]->n, ss[q]->worst_index,
                                  verify_row_kind_name(verify_row_kind_of(rows, ss[q]->worst_index, w->g.salt)),
                                  ss[q]->worst_got, ss[q]->worst_ref);
    if (!guard_ok && k < dn - 200)
        snprintf(detail + k, dn - k, "    guard band written (y or mean/rstd outside their extent)\n");
}

int verify_judge_outputs(const verify_setw *w, int vi, const verify_stats st[3], json_t *c, char *verdict,
                         size_t vn, char *detail, size_t dn)
{
    const verify_stats *sy = &st[0], *sm = &st[1], *sr = &st[2];
    int guard_ok = guards_ok(w, vi);
    int pass_y = verify_stats_pass(sy);
    int pass_m = !w->g.want_stats || verify_stats_pass(sm);
    int pass_r = !w->g.want_stats || verify_stats_pass(sr);
    int pass = pass_y && pass_m && pass_r && guard_ok;
    numbers_json(c, w, sy, sm, sr, guard_ok);
    json_object_set_new(c, "pass", json_boolean(pass));
    detail[0] = '\0';
    if (pass) {
        snprintf(verdict, vn, "ok");
        return 1;
    }
    snprintf(verdict, vn, "FAIL%s%s%s%s", pass_y ? "" : " y", pass_m ? "" : " mean", pass_r ? "" : " rstd",
             guard_ok ? "" : " guard");
    failure_detail(c, w, sy, sm, sr, pass_y, guard_ok, detail, dn);
    return 0;
}
