/* run_history.c -- a run judged against the like-with-like history of its testbed
 * (run_history.h). */
#include "run_history.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The earlier runs of one set and repetition count: the newest (the baseline of the next
 * run like them) in full, and the medians of the newest ADA_BAND_RUNS runs of its code. */
typedef struct {
    char *set;
    char *plugins;        /* the runs' plug-in file hashes ("" none): a researcher's runs are
                             their own history, never adaload's baseline */
    int64_t reps, runs;   /* repetitions; runs added */
    ada_bench_set last;
    ada_run_meta meta;
    int has_meta;
    int64_t id;
    char *label;
    json_t *band[ADA_BAND_RUNS]; /* name -> median ns, oldest first, all of last's code */
    int64_t nband;
} hist_group;

struct ada_history {
    hist_group *g;
    int64_t n;
};

ada_history *ada_history_new(void) { return calloc(1, sizeof(ada_history)); }

static void group_free(hist_group *g)
{
    free(g->set);
    free(g->plugins);
    free(g->label);
    ada_bench_set_free(&g->last);
    if (g->has_meta) ada_run_meta_free(&g->meta);
    for (int64_t k = 0; k < g->nband; k++) json_decref(g->band[k]);
}

void ada_history_free(ada_history *h)
{
    if (!h) return;
    for (int64_t i = 0; i < h->n; i++) group_free(&h->g[i]);
    free(h->g);
    free(h);
}

static const char *plugins_of(const ada_run_meta *m) { return m && m->plugin_hashes ? m->plugin_hashes : ""; }

static hist_group *group_of(const ada_history *h, const char *set, int64_t reps, const char *plugins)
{
    for (int64_t i = 0; i < h->n; i++)
        if (h->g[i].reps == reps && !strcmp(h->g[i].set, set) && !strcmp(h->g[i].plugins, plugins)) return &h->g[i];
    return NULL;
}

/* name -> median ns of every benchmark of b with repetitions and no error. */
static json_t *medians_of(const ada_bench_set *b)
{
    json_t *o = json_object();
    for (int64_t k = 0; o && k < b->n; k++) {
        const ada_bench_rec *r = &b->r[k];
        if (r->error || r->n == 0) continue;
        double v = ada_median(r->time_ns, r->n);
        if (v > 0 && isfinite(v) && json_object_set_new(o, r->name, json_real(v))) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

int ada_history_add(ada_history *h, ada_bench_set *b, ada_run_meta *m, int64_t id, const char *label)
{
    const char *set = b->set ? b->set : "";
    int64_t reps = ada_bench_repetitions(b);
    hist_group *g = group_of(h, set, reps, plugins_of(m));
    json_t *med = medians_of(b);
    char *lab = strdup(label ? label : "");
    if (!g && med && lab) {
        hist_group *n = realloc(h->g, (size_t)(h->n + 1) * sizeof *n);
        if (n) {
            h->g = n;
            g = &n[h->n];
            memset(g, 0, sizeof *g);
            g->reps = reps;
            g->set = strdup(set);
            g->plugins = strdup(plugins_of(m));
            if (g->set && g->plugins) {
                h->n++;
            } else {
                free(g->set);
                free(g->plugins);
                g = NULL;
            }
        }
    }
    if (!g || !med || !lab) {
        json_decref(med);
        free(lab);
        ada_bench_set_free(b);
        if (m) ada_run_meta_free(m);
        return -1;
    }
    /* The band is of the newest run's code: another code starts it afresh. Without both
     * meta.json files the code cannot be told apart and counts as the same. */
    if (g->runs > 0 && m && g->has_meta && !ada_run_same_code(&g->meta, m)) {
        for (int64_t k = 0; k < g->nband; k++) json_decref(g->band[k]);
        g->nband = 0;
    }
    if (g->nband == ADA_BAND_RUNS) {
        json_decref(g->band[0]);
        memmove(g->band, g->band + 1, (ADA_BAND_RUNS - 1) * sizeof *g->band);
        g->nband--;
    }
    g->band[g->nband++] = med;
    ada_bench_set_free(&g->last);
    g->last = *b;
    memset(b, 0, sizeof *b);
    if (g->has_meta) ada_run_meta_free(&g->meta);
    g->has_meta = m != NULL;
    if (m) {
        g->meta = *m;
        memset(m, 0, sizeof *m);
    }
    free(g->label);
    g->label = lab;
    g->id = id;
    g->runs++;
    return 0;
}

/* "3 (2 runs), 5 (1 run)": the other repetition counts of set among h's groups; their runs. */
static int64_t unlike_of(const ada_history *h, const char *set, int64_t reps, char *out, size_t n)
{
    int64_t runs = 0;
    size_t w = 0;
    out[0] = '\0';
    for (int64_t i = 0; i < h->n; i++) {
        const hist_group *g = &h->g[i];
        if (strcmp(g->set, set) || g->reps == reps) continue;
        runs += g->runs;
        if (w < n)
            w += (size_t)snprintf(out + w, n - w, "%s%lld (%lld run%s)", w ? ", " : "", (long long)g->reps,
                                  (long long)g->runs, g->runs == 1 ? "" : "s");
    }
    return runs;
}

/* name -> [medians of the band's runs, oldest first]: ada_cmp_opts.history. */
static json_t *band_json(const hist_group *g)
{
    json_t *hist = json_object();
    for (int64_t k = 0; hist && k < g->nband; k++) {
        const char *name;
        json_t *v;
        json_object_foreach(g->band[k], name, v) {
            json_t *arr = json_object_get(hist, name);
            if ((!arr && (!(arr = json_array()) || json_object_set_new(hist, name, arr))) ||
                json_array_append(arr, v)) {
                json_decref(hist);
                return NULL;
            }
        }
    }
    return hist;
}

int ada_history_judge(const ada_history *h, const ada_bench_set *b, const ada_run_meta *m, const ada_cmp_opts *o,
                      ada_hist_verdict *v, char *err, size_t en)
{
    memset(v, 0, sizeof *v);
    v->baseline_id = -1;
    const char *set = b->set ? b->set : "";
    int64_t reps = ada_bench_repetitions(b);
    char others[256];
    v->unlike = unlike_of(h, set, reps, others, sizeof others);
    const hist_group *g = group_of(h, set, reps, plugins_of(m));
    if (!g) {
        snprintf(v->why, sizeof v->why, "no earlier run of set %s with %lld repetitions%s: nothing to judge against%s%s%s",
                 *set ? set : "(none)", (long long)reps, *plugins_of(m) ? " and these plug-ins" : "",
                 v->unlike ? " (earlier runs of the set with other repetition counts are not comparable: " : "",
                 others, v->unlike ? ")" : "");
        return 0;
    }
    if (v->unlike)
        snprintf(v->why, sizeof v->why, "left out, not comparable: earlier runs of set %s with %s repetitions",
                 *set ? set : "(none)", others);
    json_t *hist = band_json(g);
    if (!hist) return snprintf(err, en, "out of memory"), -1;
    ada_cmp_opts co = *o;
    co.history = hist;
    int both = m && g->has_meta;
    int rc = ada_compare_runs(&g->last, b, both ? &g->meta : NULL, both ? m : NULL, &co, &v->cmp, err, en);
    json_decref(hist);
    if (rc) return ada_cmp_free(&v->cmp), -1;
    v->judged = 1;
    v->baseline_id = g->id;
    snprintf(v->baseline, sizeof v->baseline, "%s", g->label);
    v->band_runs = g->nband >= ADA_BAND_MIN ? g->nband : 0;
    return 0;
}

void ada_hist_verdict_free(ada_hist_verdict *v)
{
    ada_cmp_free(&v->cmp);
    memset(v, 0, sizeof *v);
    v->baseline_id = -1;
}
