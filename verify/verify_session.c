/* verify_session.c -- one verification run (verify.h): per input set, inputs and the
 * reference once, then every variant on the backend, judged by verify_case.c. The phases
 * of a set: geometry (set_begin), reasons it cannot run (set_skip_reason), host inputs and
 * reference (set_inputs), device buffers (set_upload), one run per variant (run_variant). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ada_cuda.h"
#include "ref_lnmod.h"
#include "verify_internal.h"

#if ADALOAD_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static double elapsed(const verify_session *s) { return ada_now_s() - s->t0; }

static void progress(verify_session *s, int force)
{
    double e = elapsed(s);
    if (!force && e - s->last_progress < 5.0) return;
    s->last_progress = e;
    s->t.t_alloc = s->bk.t_alloc;
    ada_note(s->c->progress, s->c->progress_arg,
             "case %" PRId64 "/%" PRId64 ", %.0f s elapsed, %" PRId64 " failed (inputs %.0f, device %.0f, "
             "fwd check %.0f, bwd check %.0f s; of them allocating %.0f s)",
             s->t.ncases_done, s->t.ncases_total, e, s->t.failed, s->t.t_inputs, s->t.t_device, s->t.t_fwd_check,
             s->t.t_bwd_check, s->t.t_alloc);
}

verify_status verify_session_new(const verify_config *c, int64_t nsets, verify_session **out)
{
    *out = NULL;
    if (!c || c->nvariants < 1 || c->nvariants > VERIFY_MAX_VARIANTS || !c->grid || c->nres_variants < 0 ||
        c->nres_variants > VERIFY_MAX_VARIANTS)
        return VERIFY_ERR_ARG;
    verify_session *s = calloc(1, sizeof *s);
    verify_work *w = calloc(1, sizeof *w);
    json_t *cases = json_array();
    if (!s || !w || !cases) {
        free(s);
        free(w);
        json_decref(cases);
        return VERIFY_ERR_NOMEM;
    }
    s->c = c;
    s->w = w;
    s->cases = cases;
    s->bk.model = c->cpu_model;
    s->bk.reuse_dev = c->reuse_buffers;
    s->bk.threads = c->threads;
    s->rp.bk = &s->bk;
    s->per_case_lines = strcmp(c->grid, "full") != 0;
    s->directions = c->directions ? c->directions : VERIFY_DIR_BOTH;
    int64_t per_set = 0;
    for (int v = 0; v < c->nvariants; v++) {
        s->has_bwd[v] = verify_has_backward(c->cpu_model, c->variants[v]);
        per_set += ((s->directions & VERIFY_DIR_FWD) != 0) + ((s->directions & VERIFY_DIR_BWD) && s->has_bwd[v]);
    }
    s->t.ncases_total = nsets * per_set;
    s->t0 = ada_now_s();
    *out = s;
    return VERIFY_OK;
}

static void free_buffers(verify_session *s)
{
    verify_buf *hb[] = {&s->hx, &s->hscale, &s->hshift, &s->hrm, &s->hrr};
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) verify_host_free(hb[i]);
    for (int v = 0; v < VERIFY_MAX_VARIANTS; v++) {
        verify_host_free(&s->hgy[v]);
        verify_host_free(&s->hgm[v]);
        verify_host_free(&s->hgr[v]);
    }
    verify_buf *db[] = {&s->dx, &s->dscale, &s->dshift, &s->dy, &s->dm, &s->dr};
    for (size_t i = 0; i < sizeof db / sizeof db[0]; i++) verify_dev_free(&s->bk, db[i]);
    verify_bwd_pool_free(s);
    verify_res_gpu_pool_free(&s->rp);
}

void verify_session_free(verify_session *s)
{
    if (!s) return;
    free_buffers(s);
    json_decref(s->cases);
    free(s->w);
    free(s);
}

void verify_session_finish(verify_session *s)
{
    progress(s, 1);
    s->t.elapsed = elapsed(s);
    s->t.t_alloc = s->bk.t_alloc;
}

const verify_totals *verify_session_totals(const verify_session *s) { return &s->t; }

json_t *verify_session_take_cases(verify_session *s)
{
    json_t *c = s->cases;
    s->cases = json_array();
    return c;
}

json_t *verify_session_gpu_json(const verify_session *s)
{
    json_t *g = json_object();
#if ADALOAD_HAVE_CUDA
    if (!s->bk.model) {
        struct cudaDeviceProp p;
        int drv = 0, rt = 0;
        cudaDriverGetVersion(&drv);
        cudaRuntimeGetVersion(&rt);
        char buf[32];
        if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) {
            json_object_set_new(g, "name", json_string(p.name));
            json_object_set_new(g, "sm_count", json_integer(p.multiProcessorCount));
            snprintf(buf, sizeof buf, "sm_%d%d", p.major, p.minor);
            json_object_set_new(g, "arch", json_string(buf));
            json_object_set_new(g, "memory_bytes", json_integer((json_int_t)p.totalGlobalMem));
        }
        snprintf(buf, sizeof buf, "%d.%d", drv / 1000, (drv % 1000) / 10);
        json_object_set_new(g, "driver", json_string(buf));
        snprintf(buf, sizeof buf, "%d.%d", rt / 1000, (rt % 1000) / 10);
        json_object_set_new(g, "runtime", json_string(buf));
        return g;
    }
#endif
    (void)s;
    json_object_set_new(g, "name", json_string("none (cpu model)"));
    return g;
}

void verify_record_case(verify_session *s, int vi, int dir, json_t *c, int pass, int not_run,
                        const char *line, const char *detail)
{
    verify_record_op_case(s, VERIFY_OP_LNMOD, vi, dir, c, pass, not_run, line, detail);
}

void verify_record_op_case(verify_session *s, int op, int vi, int dir, json_t *c, int pass, int not_run,
                           const char *line, const char *detail)
{
    const int di = dir == VERIFY_DIR_BWD;
    int64_t(*np)[VERIFY_MAX_VARIANTS] = op == VERIFY_OP_RES ? s->t.r_not_run : s->t.v_not_run;
    int64_t(*pp)[VERIFY_MAX_VARIANTS] = op == VERIFY_OP_RES ? s->t.r_passed : s->t.v_passed;
    int64_t(*fp)[VERIFY_MAX_VARIANTS] = op == VERIFY_OP_RES ? s->t.r_failed : s->t.v_failed;
    json_array_append_new(s->cases, c);
    s->t.ncases_done++;
    if (not_run) {
        s->t.not_run++;
        const char *why = json_string_value(json_object_get(c, "not_run"));
        if (why && (strstr(why, "out of host memory") || strstr(why, "out of device memory"))) s->t.not_run_nomem++;
        np[di][vi]++;
    } else if (pass) {
        s->t.passed++;
        pp[di][vi]++;
    } else {
        s->t.failed++;
        fp[di][vi]++;
    }
    if (s->per_case_lines || !pass) {
        ada_note(s->c->note, s->c->note_arg, "%s", line);
        if (detail && *detail) {
            /* detail is lines ending in '\n': one note each */
            char buf[4096];
            snprintf(buf, sizeof buf, "%s", detail);
            for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                ada_note(s->c->note, s->c->note_arg, "%s", l);
        }
    }
    progress(s, 0);
}

/* ---- CPU work split over threads ------------------------------------------------------ */

static void fill_x_range(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    verify_work *w = c;
    verify_fill_x_rows(w->d, w->seed, w->salt, lo, hi, w->x);
}

static void fill_mod_range(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    verify_work *w = c;
    verify_fill_mod_rows(w->d, w->seed, lo, hi, w->scale, w->shift);
}

/* ---- the phases of one set -------------------------------------------------------------- */

/* Free host memory in bytes (MemAvailable), or -1 when unknown (verify_internal.h). */
int64_t verify_host_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char line[256];
    int64_t kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %" SCNd64 " kB", &kb) == 1) break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* The set's descriptor and geometry; returns the geometry hash. Geometry depends on the
 * case's identity only, not on the seed or the grid, so the same case looks the same in
 * every run. */
uint64_t verify_set_desc(const verify_set *sp, lnmod_desc *d, verify_geom *g)
{
    *d = lnmod_desc_default();
    verify_combo(sp->combo, &d->x_dtype, &d->mod_dtype, &d->y_dtype);
    d->layout = (lnmod_layout)sp->layout;
    const uint64_t gh = verify_hash(
        verify_hash(verify_hash(verify_hash(verify_hash(0xada10ad, (uint64_t)sp->layout), (uint64_t)sp->combo),
                                (uint64_t)sp->D),
                    (uint64_t)sp->rows),
        (uint64_t)sp->huge);
    verify_pick_geometry(d, sp->rows, sp->D, gh, g);
    if (sp->huge) {
        d->rows_per_sample = VERIFY_HUGE_S;
        d->frame_len = VERIFY_HUGE_S;
        d->scale_stride = d->shift_stride = 6 * sp->D;
        d->eps = 1e-6;
        g->off = (verify_offsets){0, 0, 0, 0};
        g->want_stats = 1;
    }
    return gh;
}

/* Descriptor, geometry and sizes of the set (verify_set_desc). */
static void set_begin(verify_session *s, const verify_set *sp, verify_setw *w)
{
    memset(w, 0, sizeof *w);
    lnmod_desc *d = &w->d;
    w->gh = verify_set_desc(sp, d, &w->g);
    /* Start the huge case from empty pools: the biggest grid buffers (~13 GB host, ~10 GB
     * device) would otherwise sit beside this case's ~30 GB. */
    if (sp->huge) free_buffers(s);
    snprintf(w->dts, sizeof w->dts, "%s-%s-%s", lnmod_dtype_name(d->x_dtype), lnmod_dtype_name(d->mod_dtype),
             lnmod_dtype_name(d->y_dtype));
    w->n = d->rows * d->D;
    w->xs = lnmod_dtype_size(d->x_dtype);
    w->ms = lnmod_dtype_size(d->mod_dtype);
    w->ys = lnmod_dtype_size(d->y_dtype);
    w->nsc = verify_mod_elems(d, d->scale_stride);
    w->nsh = verify_mod_elems(d, d->shift_stride);
    w->ybytes = 2 * VERIFY_GUARD + (size_t)(w->g.off.y + w->n) * w->ys;
    w->sbytes = 2 * VERIFY_GUARD + (size_t)d->rows * sizeof(float);
}

/* Why the set cannot run (into buf), or NULL. */
static const char *set_skip_reason(verify_session *s, const verify_set *sp, const verify_setw *w,
                                   char *buf, size_t n)
{
    lnmod_status vs = lnmod_desc_validate(&w->d);
    if (vs != LNMOD_OK) {
        snprintf(buf, n, "verifier bug: invalid descriptor (%s)", lnmod_strerror(vs));
        return buf;
    }
    if (s->bk.context_lost) {
        snprintf(buf, n, "not run: CUDA context lost earlier (%.200s)", s->bk.lost_why);
        return buf;
    }
    if (!sp->huge) return NULL;
    if (s->bk.model) return "not run: the rows*D > 2^31 case needs the GPU";
    int64_t need_host = w->n * (int64_t)(w->xs + (size_t)s->c->nvariants * w->ys) + ((int64_t)1 << 28);
    int64_t avail = verify_host_mem_available();
    if (avail >= 0 && avail < need_host) {
        snprintf(buf, n, "not run: needs %.1f GB of host memory, %.1f GB available", (double)need_host / 1e9,
                 (double)avail / 1e9);
        return buf;
    }
    int64_t need_dev = w->n * (int64_t)(w->xs + w->ys) + ((int64_t)1 << 28);
    long long fr = verify_backend_free_device_bytes(&s->bk);
    if (fr >= 0 && fr < need_dev) {
        snprintf(buf, n, "not run: needs %.1f GB of device memory, %.1f GB free", (double)need_dev / 1e9,
                 (double)fr / 1e9);
        return buf;
    }
    return NULL;
}

/* Host inputs (the reference runs with the comparison: verify_forward_check). */
static const char *set_inputs(verify_session *s, verify_setw *w)
{
    const lnmod_desc *d = &w->d;
    w->hx = verify_host_get_xfer(&s->bk, &s->hx, (size_t)w->n * w->xs);
    w->hsc = verify_host_get_xfer(&s->bk, &s->hscale, (size_t)w->nsc * w->ms);
    w->hsh = verify_host_get_xfer(&s->bk, &s->hshift, (size_t)w->nsh * w->ms);
    w->rm = verify_host_get(&s->hrm, (size_t)d->rows * sizeof(double));
    w->rr = verify_host_get(&s->hrr, (size_t)d->rows * sizeof(double));
    if (!w->hx || !w->hsc || !w->hsh || !w->rm || !w->rr) return "not run: out of host memory";
    verify_work *k = s->w;
    k->d = d;
    k->seed = verify_hash(s->c->seed, w->gh);
    k->salt = w->g.salt;
    k->x = w->hx;
    k->scale = w->hsc;
    k->shift = w->hsh;
    double t0 = ada_now_s(), c0 = verify_cpu_s();
    verify_parallel(d->rows, d->D, s->bk.threads, fill_x_range, k);
    int64_t stride = d->scale_stride > d->shift_stride ? d->scale_stride : d->shift_stride;
    verify_parallel(lnmod_mod_rows(d), d->D + stride, s->bk.threads, fill_mod_range, k);
    s->t.t_inputs += ada_now_s() - t0;
    s->t.c_inputs += verify_cpu_s() - c0;
    return NULL;
}

/* Device inputs: poisoned guard bands around each, then the data at its offset; device
 * outputs; host buffers for the outputs. */
static const char *set_upload(verify_session *s, verify_setw *w)
{
    const verify_offsets *o = &w->g.off;
    const size_t xb = 2 * VERIFY_GUARD + (size_t)(o->x + w->n) * w->xs;
    const size_t scb = 2 * VERIFY_GUARD + (size_t)(o->scale + w->nsc) * w->ms;
    const size_t shb = 2 * VERIFY_GUARD + (size_t)(o->shift + w->nsh) * w->ms;
    verify_backend *bk = &s->bk;
    double t0 = ada_now_s();
    const char *why = NULL;
    w->dx = verify_dev_get(bk, &s->dx, xb);
    w->dsc = verify_dev_get(bk, &s->dscale, scb);
    w->dsh = verify_dev_get(bk, &s->dshift, shb);
    w->dy = verify_dev_get(bk, &s->dy, w->ybytes);
    w->dm = verify_dev_get(bk, &s->dm, w->sbytes);
    w->dr = verify_dev_get(bk, &s->dr, w->sbytes);
    if (!w->dx || !w->dsc || !w->dsh || !w->dy || !w->dm || !w->dr) {
        why = "not run: out of device memory";
    } else if (verify_dev_poison(bk, w->dx, xb) || verify_dev_poison(bk, w->dsc, scb) ||
               verify_dev_poison(bk, w->dsh, shb) ||
               verify_dev_upload(bk, w->dx + VERIFY_GUARD + o->x * w->xs, w->hx, (size_t)w->n * w->xs) ||
               verify_dev_upload(bk, w->dsc + VERIFY_GUARD + o->scale * w->ms, w->hsc, (size_t)w->nsc * w->ms) ||
               verify_dev_upload(bk, w->dsh + VERIFY_GUARD + o->shift * w->ms, w->hsh, (size_t)w->nsh * w->ms)) {
        why = "not run: copying the inputs to the device failed";
    }
    s->t.t_device += ada_now_s() - t0;
    return why;
}

void verify_line_of(char *line, size_t n, const char *variant, int dir, const verify_setw *w, const char *tail)
{
    snprintf(line, n, "%-14s %-3s %-14s %-6s %6" PRId64 " %7" PRId64 " %10s %10s %10s  %s", variant,
             verify_direction_name(dir), w->dts,
             lnmod_layout_name(w->d.layout), w->d.D, w->d.rows, "-", "-", "-", tail);
}

/* Poison, launch, download into variant vi's host buffers: 0, or -1 with w->err[vi] set. */
static int launch(verify_session *s, int vi, verify_setw *w)
{
    verify_backend *bk = &s->bk;
    const verify_offsets *o = &w->g.off;
    char *err = w->err[vi];
    const size_t en = sizeof w->err[vi];
    w->gy[vi] = verify_host_get_xfer(bk, &s->hgy[vi], w->ybytes);
    w->gm[vi] = verify_host_get(&s->hgm[vi], w->sbytes);
    w->gr[vi] = verify_host_get(&s->hgr[vi], w->sbytes);
    if (!w->gy[vi] || !w->gm[vi] || !w->gr[vi]) {
        snprintf(err, en, "out of host memory for the outputs");
        return -1;
    }
    if (verify_dev_poison(bk, w->dy, w->ybytes) || verify_dev_poison(bk, w->dm, w->sbytes) ||
        verify_dev_poison(bk, w->dr, w->sbytes)) {
        snprintf(err, en, "poisoning the outputs failed");
        return -1;
    }
    float *pm = w->g.want_stats ? (float *)(w->dm + VERIFY_GUARD) : NULL;
    float *pr = w->g.want_stats ? (float *)(w->dr + VERIFY_GUARD) : NULL;
    if (verify_backend_run(bk, s->c->variants[vi], &w->d, w->dx + VERIFY_GUARD + o->x * w->xs,
                           w->dsc + VERIFY_GUARD + o->scale * w->ms, w->dsh + VERIFY_GUARD + o->shift * w->ms,
                           w->dy + VERIFY_GUARD + o->y * w->ys, pm, pr, err, en))
        return -1;
    if (verify_dev_download(bk, w->gy[vi], w->dy, w->ybytes) || verify_dev_download(bk, w->gm[vi], w->dm, w->sbytes) ||
        verify_dev_download(bk, w->gr[vi], w->dr, w->sbytes)) {
        snprintf(err, en, "copying the outputs back failed");
        return -1;
    }
    return 0;
}

/* A forward case that produced no numbers: not run (skip) or failed with w->err[vi]. */
static void record_no_numbers(verify_session *s, int vi, const verify_setw *w, const char *skip, const char *err)
{
    const char *variant = s->c->variants[vi];
    json_t *c = verify_case_json(variant, VERIFY_DIR_FWD, &w->d, &w->g);
    char line[1024], tail[600];
    json_object_set_new(c, "pass", json_false());
    if (skip) {
        json_object_set_new(c, "not_run", json_string(skip));
        verify_line_of(line, sizeof line, variant, VERIFY_DIR_FWD, w, skip);
    } else {
        snprintf(tail, sizeof tail, "FAIL: %.400s", err);
        json_object_set_new(c, "error", json_string(err));
        verify_line_of(line, sizeof line, variant, VERIFY_DIR_FWD, w, tail);
    }
    verify_record_case(s, vi, VERIFY_DIR_FWD, c, 0, skip != NULL, line, NULL);
}

/* The judged forward case of variant vi (its statistics st from verify_forward_check). */
static void record_forward(verify_session *s, int vi, const verify_setw *w, const verify_stats st[3])
{
    const char *variant = s->c->variants[vi];
    json_t *c = verify_case_json(variant, VERIFY_DIR_FWD, &w->d, &w->g);
    char line[1024], detail[2048] = "", verdict[128];
    int pass = verify_judge_outputs(w, vi, st, c, verdict, sizeof verdict, detail, sizeof detail);
    snprintf(line, sizeof line, "%-14s fwd %-14s %-6s %6" PRId64 " %7" PRId64 " %10.3g %10.3g %10.3g  %s", variant,
             w->dts, lnmod_layout_name(w->d.layout), w->d.D, w->d.rows, st[0].max_abs, st[0].max_rel,
             verify_stats_l2_rel(&st[0]), verdict);
    verify_record_case(s, vi, VERIFY_DIR_FWD, c, pass, 0, line, detail);
}

/* The forward cases of the prepared set: every variant launched and downloaded, then one
 * fused reference-and-comparison pass (which also leaves the statistics for the backward),
 * then one record per variant. Returns the reason the backward cannot run, or NULL. */
static const char *run_forward(verify_session *s, verify_setw *w, int fwd, char *buf, size_t n)
{
    const int nv = s->c->nvariants;
    double tv = ada_now_s();
    for (int vi = 0; vi < nv && fwd; vi++) {
        if (s->bk.context_lost) {
            snprintf(w->err[vi], sizeof w->err[vi], "CUDA context lost earlier (%.200s)", s->bk.lost_why);
            continue;
        }
        w->ran[vi] = launch(s, vi, w) == 0;
    }
    double tc = ada_now_s(), cc = verify_cpu_s();
    s->t.t_device += tc - tv;
    verify_stats (*st)[3] = calloc((size_t)nv, sizeof *st);
    lnmod_status rs = st ? verify_forward_check(s, w, st) : LNMOD_ERR_ALLOC;
    s->t.t_fwd_check += ada_now_s() - tc;
    s->t.c_fwd_check += verify_cpu_s() - cc;
    const char *bwd_skip = NULL;
    if (rs != LNMOD_OK) {
        snprintf(buf, n, "not run: the float64 reference returned %s", lnmod_status_name(rs));
        bwd_skip = buf;
    }
    for (int vi = 0; vi < nv && fwd; vi++) {
        if (rs != LNMOD_OK) {
            char e[200];
            snprintf(e, sizeof e, "verifier: the reference returned %s", lnmod_status_name(rs));
            record_no_numbers(s, vi, w, NULL, e);
        } else if (!w->ran[vi]) {
            record_no_numbers(s, vi, w, NULL, w->err[vi]);
        } else {
            record_forward(s, vi, w, st[vi]);
        }
    }
    free(st);
    return bwd_skip;
}

void verify_session_run_set(verify_session *s, const verify_set *sp)
{
    verify_setw *w = calloc(1, sizeof *w);
    if (!w) {
        for (int dir = VERIFY_DIR_FWD; dir <= VERIFY_DIR_BWD; dir <<= 1)
            for (int vi = 0; vi < s->c->nvariants; vi++) {
                if (!(s->directions & dir) || (dir == VERIFY_DIR_BWD && !s->has_bwd[vi])) continue;
                json_t *c = json_object();
                json_object_set_new(c, "variant", json_string(s->c->variants[vi]));
                json_object_set_new(c, "direction", json_string(verify_direction_name(dir)));
                json_object_set_new(c, "pass", json_false());
                json_object_set_new(c, "not_run", json_string("not run: out of host memory"));
                verify_record_case(s, vi, dir, c, 0, 1, "not run: out of host memory", NULL);
            }
        return;
    }
    set_begin(s, sp, w);
    char buf[256], rbuf[256];
    const char *skip = set_skip_reason(s, sp, w, buf, sizeof buf);
    if (!skip) skip = set_inputs(s, w);
    if (!skip) skip = set_upload(s, w);
    const int fwd = (s->directions & VERIFY_DIR_FWD) != 0;
    if (skip) {
        for (int vi = 0; vi < s->c->nvariants && fwd; vi++) record_no_numbers(s, vi, w, skip, NULL);
    } else {
        skip = run_forward(s, w, fwd, rbuf, sizeof rbuf);
    }
    if (s->directions & VERIFY_DIR_BWD) verify_run_backward(s, w, skip);
    if (sp->huge) free_buffers(s); /* give the gigabytes back before anything else runs */
    free(w);
}
