/* dashboard.c -- the data of the results site (see dashboard.h for what each part holds).
 * Runs come from the catalog; timings from bench_json.h (the same reader as `adaload
 * compare`), verdicts from run_history.h (the one regression rule), gate status from gate.h.
 */
#include "dashboard.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "run_bench.h"
#include "run_compare.h"
#include "run_history.h"
#include "run_meta.h"
#include "run_name.h"
#include "catalog.h"
#include "dashboard_internal.h"
#include "gate.h"

dash_status dash__fail(dash_status s, char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return s;
}

static json_t *run_head(const cat_run *r)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:s}", "run", r->run, "path", r->path, "time",
                     r->time, "git_sha", r->git_sha, "git_dirty",
                     r->git_dirty < 0 ? json_null() : json_boolean(r->git_dirty), "kernel_hash_v1",
                     r->kernel_hash_v1, "kernel_hash_v2",
                     r->kernel_hash_v2 ? json_string(r->kernel_hash_v2) : json_null(), "measured",
                     r->measured);
}

static double median_of(const double *v, int64_t n) { return n ? ada_median(v, n) : 0; }

/* The parts of a kernel benchmark's name into names and shapes (the page reads these, it
 * does not parse names: run_name.h is the one parser). */
static int add_name(json_t *names, json_t *shapes, const char *name)
{
    ada_bench_name b;
    if (json_object_get(names, name) || ada_bench_name_parse(name, &b)) return 0;
    json_t *n = json_pack("{s:s, s:s, s:s, s:s}", "op", b.op, "dir", b.dir, "variant", b.variant, "shape", b.shape);
    if (!n || json_object_set_new(names, name, n)) return -1;
    if (json_object_get(shapes, b.shape)) return 0;
    json_t *sh = json_pack("{s:s, s:s, s:I, s:I, s:I, s:s}", "dtypes", b.dtypes, "layout", b.layout, "D", (json_int_t)b.D,
                           "rows", (json_int_t)b.rows, "graph", (json_int_t)b.graph, "slice", b.slice);
    return (!sh || json_object_set_new(shapes, b.shape, sh)) ? -1 : 0;
}

/* Appends run index i of set s to the series object (name -> [[i, us, pct|null, reps]]). */
static int add_series(json_t *series, json_t *names, json_t *shapes, const ada_bench_set *s, int64_t i)
{
    for (int64_t k = 0; k < s->n; k++) {
        const ada_bench_rec *b = &s->r[k];
        if (b->error || b->n == 0) continue;
        if (add_name(names, shapes, b->name)) return -1;
        json_t *arr = json_object_get(series, b->name);
        if (!arr) {
            arr = json_array();
            if (!arr || json_object_set_new(series, b->name, arr)) return -1;
        }
        /* A run without a copy benchmark of the same bytes has no % of copy (0 in the JSON). */
        double pct = b->has_pct ? median_of(b->pct_copy, b->n) : 0;
        json_t *pt = json_pack("[I, f, o, I]", (json_int_t)i, median_of(b->time_ns, b->n) * 1e-3,
                               pct > 0 ? json_real(pct) : json_null(),
                               (json_int_t)b->n);
        if (!pt || json_array_append_new(arr, pt)) return -1;
    }
    return 0;
}

typedef struct {
    json_t *tb;             /* the testbed object */
    json_t *names, *shapes; /* the data's name and shape tables */
    ada_history *hist;      /* the testbed's bench runs so far (run_history.h) */
    int64_t nbench;
    int gate_joined; /* the gate passes by joining this many shards (gate_scan's joined) */
} tb_state;

static json_t *row_json(const ada_cmp_row *r, int64_t ia, int64_t ib)
{
    return json_pack("{s:I, s:I, s:s, s:f, s:f, s:f, s:f, s:f, s:b}", "run", (json_int_t)ib, "prev", (json_int_t)ia,
                     "name", r->name, "before_us", r->a_ns * 1e-3, "after_us", r->b_ns * 1e-3, "ratio", r->ratio, "p",
                     r->p, "band", r->band, "banded", r->banded);
}

/* Run i against its history by the one regression rule (run_history.h, what `adaload
 * compare --history` and the nightly apply): regressions and drift go to their own lists. */
static int judge_run(tb_state *st, const ada_bench_set *s, const ada_run_meta *m, int64_t i, const dash_opts *o)
{
    ada_cmp_opts co = {.threshold = o->threshold, .alpha = o->alpha, .skip_peers = 1};
    ada_hist_verdict v;
    char err[256];
    if (ada_history_judge(st->hist, s, m, &co, &v, err, sizeof err)) {
        ada_hist_verdict_free(&v);
        return strstr(err, "out of memory") ? -1 : 0; /* not alike (another testbed's run): no comparison */
    }
    if (!v.judged) return 0; /* the first run of its set and repetitions */
    const ada_cmp *c = &v.cmp;
    json_t *regs = json_object_get(st->tb, "regressions"), *drift = json_object_get(st->tb, "drift");
    int rc = 0;
    for (int64_t k = 0; k < c->n && !rc; k++) {
        const ada_cmp_row *r = &c->row[k];
        json_t *into = r->v == ADA_SLOWER ? regs : r->v == ADA_DRIFT ? drift : NULL;
        json_t *x = into ? row_json(r, v.baseline_id, i) : NULL;
        if (into && (!x || json_array_append_new(into, x))) rc = -1;
    }
    json_t *cj = json_pack("{s:I, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:s}", "run", (json_int_t)i, "prev",
                           (json_int_t)v.baseline_id, "set", s->set ? s->set : "", "slower", (json_int_t)c->slower,
                           "faster", (json_int_t)c->faster, "same", (json_int_t)c->same, "too_few",
                           (json_int_t)c->too_few, "drift", (json_int_t)c->drift, "band_runs", (json_int_t)v.band_runs,
                           "other_machine", c->same_code && c->other_machine, "machine", c->machine);
    if (!rc && (!cj || json_array_append_new(json_object_get(st->tb, "compares"), cj))) rc = -1;
    ada_hist_verdict_free(&v);
    return rc;
}

static dash_status add_bench(const char *results, const cat_run *r, tb_state *st, const dash_opts *o,
                             char *err, size_t en)
{
    char dir[PATH_MAX], mp[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/%s", results, r->path);
    ada_bench_set s = {0};
    char e2[512];
    if (ada_bench_load(dir, &s, e2, sizeof e2)) {
        ada_bench_set_free(&s);
        return dash__fail(DASH_BAD_INPUT, err, en, "%s", e2);
    }
    ada_run_meta m;
    snprintf(mp, sizeof mp, "%s/meta.json", dir);
    int has_meta = ada_run_meta_load(mp, &m, e2, sizeof e2) == ADA_RUNS_OK;
    int64_t i = st->nbench++;
    json_t *head = run_head(r);
    const char *set = s.set ? s.set : "";
    struct stat sb;
    char pj[PATH_MAX + 16];
    snprintf(pj, sizeof pj, "%s/peers.json", dir);
    int ok = head && !json_object_set_new(head, "set", json_string(set)) &&
             !json_object_set_new(head, "with_peers", json_boolean(stat(pj, &sb) == 0)) &&
             !json_array_append_new(json_object_get(st->tb, "bench_runs"), head);
    ok = ok && add_series(json_object_get(st->tb, "series"), st->names, st->shapes, &s, i) == 0;
    ok = ok && judge_run(st, &s, has_meta ? &m : NULL, i, o) == 0;
    if (ok) {
        json_object_set_new(st->tb, "latest", json_integer(i));
        if (!strcmp(set, "sweep")) json_object_set_new(st->tb, "sweep", json_integer(i));
    }
    /* The run joins the history (which takes s and m). */
    if (ok) return ada_history_add(st->hist, &s, has_meta ? &m : NULL, i, r->path) ? dash__fail(DASH_NOMEM, err, en, "out of memory") : DASH_OK;
    ada_bench_set_free(&s);
    if (has_meta) ada_run_meta_free(&m);
    return dash__fail(DASH_NOMEM, err, en, "out of memory");
}

static dash_status add_verify(const char *results, const cat_run *r, tb_state *st, const dash_opts *o,
                              char *err, size_t en)
{
    char dir[PATH_MAX], p[PATH_MAX + 32], why[600];
    snprintf(dir, sizeof dir, "%s/%s", results, r->path);
    json_t *rec = gate_read_record(dir, p, sizeof p, why, sizeof why); /* the records' one reader */
    gate_hashes h = {.v1 = o->hash_v1, .v2 = o->hash_v2};
    gate_verdict v = GATE_OTHER_SOURCES;
    char msg[600] = "";
    gate_status gs = rec ? gate_judge(rec, &h, &v, msg, sizeof msg) : GATE_MALFORMED;
    json_t *sch = json_object_get(rec, "kernel_hash_v2") ? NULL : json_object_get(rec, "hash_scheme");
    json_t *head = run_head(r);
    /* A shard or the sanitizer record of the gate's passing join counts as the gate's too. */
    const int joined = st->gate_joined && (v == GATE_PART || v == GATE_SANITIZERS);
    const char *status = gs != GATE_OK ? "malformed"
                         : v == GATE_PASS ? "passes the gate for this tree"
                         : joined && v == GATE_PART ? "passes the gate for this tree (a shard of the join)"
                         : joined ? "passes the gate for this tree (the sanitizer record of the join)"
                         : v == GATE_PART ? "a passing shard of this tree's sources (the join is incomplete)"
                         : v == GATE_SANITIZERS ? "this tree's sanitizer record (no complete set of shards)"
                         : v == GATE_NOT_COUNTED ? "this tree's sources, not counted"
                         : !r->verify_cases_passed ? "did not pass"
                         : r->verify_grid && strcmp(r->verify_grid, "full") ? "all cases passed (not a full-grid record)"
                         : r->verify_passed ? "passed (other kernel sources)"
                                            : "all cases passed, sanitizers not clean";
    int ok = head && !json_object_set_new(head, "grid", json_string(r->verify_grid ? r->verify_grid : "")) &&
             !json_object_set_new(head, "backend", json_string(r->verify_backend ? r->verify_backend : "")) &&
             !json_object_set_new(head, "hash_scheme", json_integer(json_object_get(rec, "kernel_hash_v2") ? 2 : json_is_integer(sch) ? json_integer_value(sch) : 1)) &&
             !json_object_set_new(head, "passed", json_boolean(r->verify_passed)) &&
             !json_object_set_new(head, "gate", json_boolean(gs == GATE_OK && (v == GATE_PASS || joined))) &&
             !json_object_set_new(head, "status", json_string(status)) &&
             !json_object_set_new(head, "why", json_string(msg)) &&
             !json_array_append_new(json_object_get(st->tb, "verify"), head);
    json_decref(rec);
    return ok ? DASH_OK : dash__fail(DASH_NOMEM, err, en, "out of memory");
}

static dash_status add_other(const cat_run *r, tb_state *st, char *err, size_t en)
{
    json_t *head = run_head(r);
    if (!head || json_object_set_new(head, "kind", json_string(r->kind)) ||
        json_array_append_new(json_object_get(st->tb, "other"), head))
        return dash__fail(DASH_NOMEM, err, en, "out of memory");
    return DASH_OK;
}

static json_t *new_testbed(const char *name)
{
    return json_pack("{s:s, s:[], s:{}, s:[], s:[], s:[], s:I, s:I, s:[], s:[], s:[]}", "name", name, "bench_runs",
                     "series", "compares", "regressions", "drift", "latest", (json_int_t)-1, "sweep",
                     (json_int_t)-1, "verify", "planner", "other");
}

/* The bad runs' messages name files under the results folder: drop its path (the site
 * publishes no path of the machine that built it). */
static void strip_root(json_t *bad, const char *root)
{
    size_t rl = strlen(root), i;
    json_t *b;
    json_array_foreach(bad, i, b) {
        const char *why = json_string_value(json_object_get(b, "why"));
        const char *at = why ? strstr(why, root) : NULL;
        if (!at || at[rl] != '/') continue;
        size_t n = strlen(why) + 1;
        char *t = malloc(n);
        if (!t) continue;
        snprintf(t, n, "%.*s%s", (int)(at - why), why, at + rl + 1);
        json_object_set_new(b, "why", json_string(t));
        free(t);
    }
}

dash_status dash_collect(const char *results, const dash_opts *oin, json_t **data, char *err, size_t en)
{
    *data = NULL;
    dash_opts o = *oin;
    if (o.threshold <= 0) o.threshold = 0.05;
    if (o.alpha <= 0) o.alpha = 0.05;
    cat_catalog c;
    /* A run folder whose files cannot be read is shown as a bad run; the rest is rendered. */
    json_t *bad = json_array();
    if (!bad) return dash__fail(DASH_NOMEM, err, en, "out of memory");
    cat_status cs = cat_scan_lenient(results, &c, bad, err, en);
    if (cs != CAT_OK) {
        json_decref(bad);
        return cs == CAT_NOMEM ? DASH_NOMEM : DASH_BAD_INPUT;
    }
    strip_root(bad, results);
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* The site names the results folder by its last component only: a published page must
     * not carry the build machine's absolute paths. */
    char label[256];
    size_t rl = strlen(results);
    while (rl > 1 && results[rl - 1] == '/') rl--;
    size_t rb = rl;
    while (rb > 0 && results[rb - 1] != '/') rb--;
    snprintf(label, sizeof label, "%.*s", (int)(rl - rb), results + rb);
    json_t *d = json_pack("{s:s, s:s, s:{s:s?, s:s?}, s:f, s:f, s:[], s:{}, s:{}}", "generated", now, "results",
                          label, "tree", "kernel_hash_v1", o.hash_v1, "kernel_hash_v2", o.hash_v2, "threshold",
                          o.threshold, "alpha", o.alpha, "testbeds", "names", "shapes");
    if (!d || json_object_set_new(d, "bad_runs", bad)) {
        json_decref(d);
        cat_free(&c);
        return dash__fail(DASH_NOMEM, err, en, "out of memory");
    }
    dash_status s = DASH_OK;
    /* Whether the gate passes by a join of shards: their records are then marked as the gate's. */
    gate_hashes gh = {.v1 = o.hash_v1, .v2 = o.hash_v2};
    gate_scan_result gsr;
    int gate_joined = 0;
    if (gate_scan(results, &gh, &gsr) == GATE_OK) gate_joined = gsr.joined;
    gate_scan_free(&gsr);
    /* One testbed at a time, in name order; runs in catalog (time) order within it. */
    char **names = calloc((size_t)c.n + 1, sizeof *names);
    int64_t nn = 0;
    for (int64_t i = 0; names && i < c.n; i++) {
        int64_t k = 0;
        while (k < nn && strcmp(names[k], c.run[i].testbed)) k++;
        if (k == nn) names[nn++] = c.run[i].testbed;
    }
    for (int64_t a = 0; a < nn; a++)
        for (int64_t b = a + 1; b < nn; b++)
            if (strcmp(names[b], names[a]) < 0) {
                char *x = names[a];
                names[a] = names[b];
                names[b] = x;
            }
    if (!names) s = dash__fail(DASH_NOMEM, err, en, "out of memory");
    for (int64_t k = 0; k < nn && s == DASH_OK; k++) {
        tb_state st = {.tb = new_testbed(names[k]), .names = json_object_get(d, "names"),
                       .shapes = json_object_get(d, "shapes"), .hist = ada_history_new(), .gate_joined = gate_joined};
        if (!st.tb || !st.hist || json_array_append_new(json_object_get(d, "testbeds"), st.tb)) {
            ada_history_free(st.hist);
            s = dash__fail(DASH_NOMEM, err, en, "out of memory");
            break;
        }
        for (int64_t i = 0; i < c.n && s == DASH_OK; i++) {
            const cat_run *r = &c.run[i];
            if (strcmp(r->testbed, names[k])) continue;
            if (!strcmp(r->kind, "bench")) s = add_bench(results, r, &st, &o, err, en);
            else if (!strcmp(r->kind, "verify")) s = add_verify(results, r, &st, &o, err, en);
            else if (!strcmp(r->kind, "planner")) s = dash__add_planner(results, r, json_object_get(st.tb, "planner"), err, en);
            else s = add_other(r, &st, err, en);
            if (s == DASH_OK && !strcmp(r->kind, "bench"))
                s = dash__add_planner(results, r, json_object_get(st.tb, "planner"), err, en);
        }
        ada_history_free(st.hist);
    }
    free(names);
    cat_free(&c);
    if (s != DASH_OK) {
        json_decref(d);
        return s;
    }
    *data = d;
    return DASH_OK;
}
