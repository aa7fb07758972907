/* verify_res.c -- see verify_res.h: the run of one set of the fused op (inputs, runner, checks,
 * case records) and the CPU runner; the grid and the case identity are verify_res_grid.c's. */
#include "verify_res.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ada_rng.h"
#include "ref_lnmod_res.h"
#include "verify_check_res.h"
#include "verify_inputs.h"
#include "verify_model_res.h"
#include "verify_par.h"

/* One set's host buffers (storage dtypes; 4 bytes an element whatever the dtype). */
typedef struct {
    void *r, *r0, *y, *e, *dout, *dh, *dh0, *h, *out, *hs, *dr, *dy, *de, *ws;
    float *mean, *rstd, *smean, *srstd;
} bufs;

static void bufs_free(bufs *b)
{
    void *all[] = {b->r, b->r0, b->y, b->e, b->dout, b->dh, b->dh0, b->h, b->out, b->hs, b->dr, b->dy,
                   b->de, b->ws, b->mean, b->rstd, b->smean, b->srstd};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

static void *nan_buf(int64_t elems)
{
    void *p = malloc((size_t)(elems > 0 ? elems : 1) * 4);
    if (p) memset(p, 0xff, (size_t)(elems > 0 ? elems : 1) * 4);
    return p;
}

/* Elements [i0, i1) of b from rng. */
static void draw(lnmod_dtype t, void *b, int64_t i0, int64_t i1, ada_rng *rng, double mu, double sd)
{
    for (int64_t i = i0; i < i1; i++) ref_store(t, b, i, mu + sd * ada_rng_normal(rng));
}

typedef struct {
    const lnmod_res_desc *d;
    uint64_t seed;
    bufs *b;
} rows_ctx;

/* Rows [lo, hi) of r, y, d_out and dh, each row of each tensor from its own stream (seed, the
 * tensor, the row): the same inputs at any thread count. Every 29th row from row 5 has a
 * constant h (r = 3.25, y = 0). */
static void input_rows(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    const rows_ctx *c = ctx;
    const lnmod_res_desc *d = c->d;
    const int64_t D = d->D;
    const struct {
        lnmod_dtype t;
        void *buf;
        double mu, sd;
    } ts[4] = {{d->res_dtype, c->b->r, 1.5, 2.0},
               {d->branch_dtype, c->b->y, 0.0, 1.0},
               {d->out_dtype, c->b->dout, 0.0, 1.0},
               {d->res_dtype, c->b->dh, 0.0, 1.0}};
    for (int64_t r = lo; r < hi; r++)
        for (int k = 0; k < 4; k++) {
            ada_rng rng;
            ada_rng_seed(&rng, verify_hash(verify_hash(c->seed, 0x726573 + (uint64_t)k), (uint64_t)r));
            if (r % 29 == 5 && k < 2)
                for (int64_t j = 0; j < D; j++) ref_store(ts[k].t, ts[k].buf, r * D + j, k == 0 ? 3.25 : 0.0);
            else
                draw(ts[k].t, ts[k].buf, r * D, (r + 1) * D, &rng, ts[k].mu, ts[k].sd);
        }
}

/* The inputs of verify_res.h, the rows on `threads` threads; 0 or -1 (out of memory). */
static int make_inputs(const lnmod_res_desc *d, uint64_t seed, int threads, bufs *b)
{
    const int64_t D = d->D, n = d->rows * D, me = lnmod_res_mod_rows(d) * 6 * D;
    b->r = nan_buf(n), b->r0 = nan_buf(n), b->y = nan_buf(n), b->e = nan_buf(me), b->dout = nan_buf(n);
    b->dh = nan_buf(n), b->dh0 = nan_buf(n);
    if (!b->r || !b->r0 || !b->y || !b->e || !b->dout || !b->dh || !b->dh0) return -1;
    rows_ctx c = {d, seed, b};
    verify_parallel(d->rows, 4 * D, threads < 1 ? 1 : threads, input_rows, &c);
    ada_rng rng;
    ada_rng_seed(&rng, verify_hash(seed, 0x6d6f64));
    for (int64_t k = 0; k < lnmod_res_mod_rows(d); k++) /* shift, scale, gate; chunks 3-5 stay NaN */
        for (int64_t j = 0; j < 3; j++)
            draw(d->mod_dtype, (char *)b->e + (k * 6 + j) * D * (int64_t)lnmod_dtype_size(d->mod_dtype), 0, D, &rng,
                 0.0, j == 1 ? 0.3 : 0.5);
    memcpy(b->r0, b->r, (size_t)n * 4);
    memcpy(b->dh0, b->dh, (size_t)n * 4);
    return 0;
}

/* Appends the case record of one direction. */
static int record(json_t *cases, const char *name, const verify_res_set *s, const char *dir,
                  const verify_res_verdict *v, int64_t guard_bad, int64_t nondet, int64_t *failed)
{
    const int passed = verify_res_verdict_fails(v) == 0 && guard_bad == 0 && nondet == 0;
    json_t *fails = json_object();
    for (int k = 0; fails && k < VERIFY_RES_NOUT; k++)
        if (v->fails[k]) json_object_set_new(fails, verify_res_output_name(k), json_integer(v->fails[k]));
    if (fails && guard_bad) json_object_set_new(fails, "guard", json_integer(guard_bad));
    if (fails && nondet) json_object_set_new(fails, "det", json_integer(nondet));
    json_t *c = verify_res_case_json(name, s, dir);
    if (c && (json_object_set_new(c, "pass", json_boolean(passed)) ||
              json_object_set_new(c, "worst_ratio", json_real(isfinite(v->worst) ? v->worst : 1e300)) ||
              json_object_set_new(c, "worst_output", json_string(verify_res_output_name(v->worst_of))) ||
              json_object_set_new(c, "fails", fails))) {
        json_decref(c);
        return -1;
    }
    if (!c) json_decref(fails);
    if (!c || json_array_append_new(cases, c) != 0) return -1;
    if (!passed) (*failed)++;
    return 0;
}

/* Models in verify_res_models. */
static int nmodels(void)
{
    int n = 0;
    while (verify_res_models[n].name) n++;
    return n;
}

typedef struct {
    const lnmod_res_desc *d;
    const lnmod_res_fwd_in *in;
    bufs *b;
    double *rh, *ro, *rm, *rr; /* the reference's h, out, mean, rstd of all rows */
    int bad[VERIFY_MAX_THREADS];
} bwd_ctx;

/* Rows [lo, hi): the reference forward, its h rounded to res_dtype, its statistics to fp32. */
static void bwd_rows(void *ctx, int64_t lo, int64_t hi, int tid)
{
    bwd_ctx *c = ctx;
    const int64_t D = c->d->D;
    if (ref_lnmod_res_forward_rows(c->d, lo, hi, c->in, c->rh, c->ro, c->rm, c->rr) != LNMOD_OK) {
        c->bad[tid] = 1;
        return;
    }
    for (int64_t i = lo * D; i < hi * D; i++) ref_store(c->d->res_dtype, c->b->hs, i, ref_round_to(c->d->res_dtype, c->rh[i]));
    for (int64_t r = lo; r < hi; r++) c->b->smean[r] = (float)c->rm[r], c->b->srstd[r] = (float)c->rr[r];
}

/* The backward's inputs from the reference: its h rounded to res_dtype into b->hs, its
 * statistics rounded to fp32 into b->smean / b->srstd, the rows on `threads` threads. 0 or -1. */
static int bwd_inputs(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, int threads, bufs *b)
{
    const int64_t n = d->rows * d->D;
    const int nt = threads < 1 ? 1 : threads > VERIFY_MAX_THREADS ? VERIFY_MAX_THREADS : threads;
    bwd_ctx *c = calloc(1, sizeof *c);
    b->hs = nan_buf(n), b->smean = nan_buf(d->rows), b->srstd = nan_buf(d->rows);
    int rc = -1;
    if (c) {
        c->d = d, c->in = in, c->b = b;
        c->rh = malloc((size_t)n * sizeof *c->rh), c->ro = malloc((size_t)n * sizeof *c->ro);
        c->rm = malloc((size_t)d->rows * sizeof *c->rm), c->rr = malloc((size_t)d->rows * sizeof *c->rr);
        if (c->rh && c->ro && c->rm && c->rr && b->hs && b->smean && b->srstd) {
            const int used = verify_parallel(d->rows, 4 * d->D, nt, bwd_rows, c);
            rc = 0;
            for (int t = 0; t < used; t++) rc |= -c->bad[t];
        }
        free(c->rh), free(c->ro), free(c->rm), free(c->rr);
    }
    free(c);
    return rc;
}

int verify_res_run(verify_res_runner *rn, const verify_res_set *s, uint64_t seed, int threads, json_t *cases,
                   int64_t *failed, char *err, size_t errn)
{
    snprintf(err, errn, "out of host memory, or the reference refused");
    const lnmod_res_desc d = verify_res_set_desc(s);
    if (lnmod_res_desc_validate(&d) != LNMOD_OK) return snprintf(err, errn, "an invalid set"), -1;
    const int64_t D = d.D, n = d.rows * D, me = lnmod_res_mod_rows(&d) * 6 * D;
    const int64_t msz = (int64_t)lnmod_dtype_size(d.mod_dtype);
    bufs b;
    memset(&b, 0, sizeof b);
    int rc = -1;
    verify_res_verdict vf, vb;
    int64_t fguard = 0, fdet = 0;
    if (make_inputs(&d, seed, threads, &b) != 0) goto done;
    /* the forward (h over r in place) */
    b.h = nan_buf(n), b.out = nan_buf(n), b.mean = nan_buf(d.rows), b.rstd = nan_buf(d.rows);
    if (!b.h || !b.out || !b.mean || !b.rstd) goto done;
    char *e = b.e;
    const lnmod_res_fwd_in in = {b.r, b.y, e + 2 * D * msz, e + D * msz, e};
    const lnmod_res_fwd_out fo = {s->inplace ? b.r : b.h, b.out, b.mean, b.rstd};
    rn->mod_in = b.e;
    rn->mod_out = NULL;
    rn->mod_elems = me;
    if (rn->forward(rn, &d, &in, &fo, err, errn) != 0) goto done;
    fguard = rn->guard_bad, fdet = rn->nondet;
    lnmod_res_fwd_in cin = in; /* the inputs as they were before an in-place forward */
    cin.r = b.r0;
    snprintf(err, errn, "out of host memory, or the reference refused");
    if (verify_res_check_fwd(&d, &cin, &fo, threads, &vf) != 0 || bwd_inputs(&d, &cin, threads, &b) != 0) goto done;
    /* the backward (dr over dh in place) */
    const int dr_over_dh = s->inplace && !s->no_dh;
    b.dr = nan_buf(n), b.dy = nan_buf(n), b.de = nan_buf(me);
    if (!b.dr || !b.dy || !b.de) goto done;
    char *de = b.de;
    const lnmod_res_bwd_in bi = {b.hs, b.y, in.gate, in.scale, b.dout, s->no_dh ? NULL : b.dh, b.smean, b.srstd};
    const lnmod_res_bwd_out bo = {dr_over_dh ? b.dh : b.dr, b.dy, de + 2 * D * msz, de + D * msz, de};
    rn->mod_out = b.de;
    if (rn->backward(rn, &d, &bi, &bo, err, errn) != 0) goto done;
    lnmod_res_bwd_in cbi = bi;
    if (!s->no_dh) cbi.dh = b.dh0;
    snprintf(err, errn, "out of host memory, or the reference refused");
    if (verify_res_check_bwd(&d, &cbi, &bo, threads, &vb) != 0) goto done;
    if (record(cases, rn->name, s, "fwd", &vf, fguard, fdet, failed) == 0 &&
        record(cases, rn->name, s, "bwd", &vb, rn->guard_bad, rn->nondet, failed) == 0)
        rc = 0;
done:
    bufs_free(&b);
    return rc;
}

/* ---- the CPU runner: the models of verify_model_res.h ---- */

static int cpu_fwd(verify_res_runner *rn, const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                   const lnmod_res_fwd_out *out, char *err, size_t errn)
{
    const int model = rn->index;
    rn->guard_bad = rn->nondet = 0;
    if (verify_res_model_forward(model, d, in, out, rn->threads) == LNMOD_OK) return 0;
    snprintf(err, errn, "the model's forward refused");
    return -1;
}

static int cpu_bwd(verify_res_runner *rn, const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                   const lnmod_res_bwd_out *out, char *err, size_t errn)
{
    const int model = rn->index;
    rn->guard_bad = rn->nondet = 0;
    const int64_t wsb = verify_res_model_bwd_workspace(d);
    void *ws = malloc((size_t)(wsb > 0 ? wsb : 1));
    const int ok = ws && verify_res_model_backward(model, d, in, out, ws, rn->threads) == LNMOD_OK;
    free(ws);
    if (ok) return 0;
    snprintf(err, errn, "the model's backward refused, or out of memory");
    return -1;
}

int verify_res_cpu_runner(int model, int threads, verify_res_runner *rn)
{
    if (model < 0 || model >= nmodels() || !rn) return -1;
    memset(rn, 0, sizeof *rn);
    rn->name = verify_res_models[model].name;
    rn->forward = cpu_fwd;
    rn->backward = cpu_bwd;
    rn->threads = threads;
    rn->index = model;
    return 0;
}

int verify_res_run_cpu(int model, const verify_res_set *s, uint64_t seed, int threads, json_t *cases,
                       int64_t *failed)
{
    verify_res_runner rn;
    if (!s || !cases || !failed || verify_res_cpu_runner(model, threads, &rn) != 0) return -1;
    char err[160];
    return verify_res_run(&rn, s, seed, threads, cases, failed, err, sizeof err);
}
