/* run_bench.c -- Google Benchmark JSON read back per benchmark, and the
 * github-action-benchmark custom files (run_bench.h). */
#include "run_bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>


const char *const ada_bench_extra_names[ADA_BENCH_EXTRAS] = {"seconds_per_10M", "bytes_per_sample"};

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot of name in the open-addressing index (its record index + 1, or 0 if free). */
static int64_t *slot_of(const ada_bench_set *s, const char *name)
{
    uint64_t mask = (uint64_t)s->hcap - 1, i = name_hash(name) & mask;
    while (s->hash[i] && strcmp(s->r[s->hash[i] - 1].name, name)) i = (i + 1) & mask;
    return &s->hash[i];
}

/* Rebuilds the index at twice the records' count (a power of two >= 64). */
static int rehash(ada_bench_set *s, int64_t want)
{
    int64_t cap = 64;
    while (cap < 2 * want) cap *= 2;
    int64_t *h = calloc((size_t)cap, sizeof *h);
    if (!h) return -1;
    free(s->hash);
    s->hash = h;
    s->hcap = cap;
    for (int64_t i = 0; i < s->n; i++) *slot_of(s, s->r[i].name) = i + 1;
    return 0;
}

static ada_bench_rec *rec_get(ada_bench_set *s, const char *name)
{
    if (s->hcap && *slot_of(s, name)) return &s->r[*slot_of(s, name) - 1];
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 64;
        ada_bench_rec *r = realloc(s->r, (size_t)cap * sizeof *r);
        if (!r) return NULL;
        s->r = r;
        s->cap = cap;
    }
    if (2 * (s->n + 1) > s->hcap && rehash(s, s->n + 1)) return NULL;
    ada_bench_rec *r = &s->r[s->n];
    memset(r, 0, sizeof *r);
    r->name = strdup(name);
    if (!r->name) return NULL;
    s->n++;
    *slot_of(s, name) = s->n;
    return r;
}

/* Room for one more repetition (the arrays grow by doubling). 0, or -1 out of memory. */
static int rec_grow(ada_bench_rec *r)
{
    if (r->n < r->cap) return 0;
    int64_t cap = r->cap ? 2 * r->cap : 8;
    double **arrs[4 + ADA_BENCH_EXTRAS] = {&r->time_ns, &r->bps, &r->pct_copy, &r->clock_mhz};
    for (int k = 0; k < ADA_BENCH_EXTRAS; k++) arrs[4 + k] = &r->extra[k];
    for (int k = 0; k < 4 + ADA_BENCH_EXTRAS; k++) {
        double *p = realloc(*arrs[k], (size_t)cap * sizeof **arrs[k]);
        if (!p) return -1;
        *arrs[k] = p;
    }
    r->cap = cap;
    return 0;
}

static double unit_ns(const char *u)
{
    if (!u || !strcmp(u, "ns")) return 1.0;
    if (!strcmp(u, "us")) return 1e3;
    if (!strcmp(u, "ms")) return 1e6;
    if (!strcmp(u, "s")) return 1e9;
    return -1.0;
}

/* A finite number field, or -1 when absent / not a number. */
static int num_field(json_t *o, const char *key, double *out)
{
    json_t *v = json_object_get(o, key);
    if (!v || !json_is_number(v)) return -1;
    double d = json_number_value(v);
    if (!isfinite(d)) return -1;
    *out = d;
    return 0;
}

static int load_into(const char *path, ada_bench_set *s, char *err, size_t err_n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_n, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadf(f, 0, &je);
    fclose(f);
    if (!root) {
        snprintf(err, err_n, "%s:%d: not valid JSON: %s", path, je.line, je.text);
        return -1;
    }
    json_t *arr = json_object_get(root, "benchmarks");
    if (!json_is_array(arr)) {
        snprintf(err, err_n, "%s: no \"benchmarks\" array (not Google Benchmark JSON)", path);
        json_decref(root);
        return -1;
    }
    size_t i;
    json_t *b;
    json_array_foreach(arr, i, b) {
        const char *run_type = json_string_value(json_object_get(b, "run_type"));
        if (run_type && strcmp(run_type, "iteration")) continue; /* aggregates: recomputed */
        const char *name = json_string_value(json_object_get(b, "run_name"));
        if (!name) name = json_string_value(json_object_get(b, "name"));
        if (!name) {
            snprintf(err, err_n, "%s: benchmarks[%zu] has no name", path, i);
            json_decref(root);
            return -1;
        }
        ada_bench_rec *r = rec_get(s, name);
        if (!r) {
            snprintf(err, err_n, "%s: out of memory", path);
            json_decref(root);
            return ADA_RUNS_ENOMEM;
        }
        if (json_is_true(json_object_get(b, "error_occurred"))) {
            r->error = 1;
            r->nerr++;
            const char *m = json_string_value(json_object_get(b, "error_message"));
            if (!r->error_message) r->error_message = strdup(m ? m : "error");
            r->wrong = r->error_message && !strncmp(r->error_message, ADA_WRONG_RESULT, strlen(ADA_WRONG_RESULT));
            continue;
        }
        double t, scale = unit_ns(json_string_value(json_object_get(b, "time_unit")));
        if (num_field(b, "real_time", &t) || scale < 0 || !(t > 0)) {
            snprintf(err, err_n, "%s: benchmarks[%zu] (%s): real_time or time_unit missing or bad",
                     path, i, name);
            json_decref(root);
            return -1;
        }
        if (r->n >= ADA_REC_MAX_REPS) continue;
        if (rec_grow(r)) {
            snprintf(err, err_n, "%s: out of memory", path);
            json_decref(root);
            return ADA_RUNS_ENOMEM;
        }
        double v;
        r->time_ns[r->n] = t * scale;
        if (!num_field(b, "bytes_per_second", &v)) {
            r->bps[r->n] = v;
            r->has_bps = 1;
        }
        if (!num_field(b, "pct_copy_bw", &v)) {
            r->pct_copy[r->n] = v;
            r->has_pct = 1;
        }
        if (!r->has_saved && !num_field(b, "saved_bytes", &v)) {
            r->saved_bytes = v;
            r->has_saved = 1;
        }
        if (!num_field(b, "sm_clock_mhz", &v)) {
            r->clock_mhz[r->n] = v;
            r->has_clock = 1;
        }
        for (int k = 0; k < ADA_BENCH_EXTRAS; k++) {
            r->extra[k][r->n] = num_field(b, ada_bench_extra_names[k], &v) ? 0 : v;
            if (r->extra[k][r->n] != 0) r->has_extra[k] = 1;
        }
        r->n++;
    }
    json_t *ctx = json_object_get(root, "context");
    const char *set = json_string_value(json_object_get(ctx, "adaload_set"));
    const char *reps = json_string_value(json_object_get(ctx, "adaload_repetitions"));
    if ((set && !(s->set = strdup(set))) || (reps && !(s->repetitions = strdup(reps)))) {
        snprintf(err, err_n, "%s: out of memory", path);
        json_decref(root);
        return ADA_RUNS_ENOMEM;
    }
    json_decref(root);
    return 0;
}

/* Moves the records of src into s (repetitions of a name already in s are appended); the
 * first file's context (bench.json's, before peers.json) stays. */
static int merge(ada_bench_set *s, ada_bench_set *src)
{
    if (!s->set && src->set) s->set = src->set, src->set = NULL;
    if (!s->repetitions && src->repetitions) s->repetitions = src->repetitions, src->repetitions = NULL;
    for (int64_t i = 0; i < src->n; i++) {
        ada_bench_rec *from = &src->r[i];
        ada_bench_rec *to = rec_get(s, from->name);
        if (!to) return -1;
        for (int64_t k = 0; k < from->n && to->n < ADA_REC_MAX_REPS; k++) {
            if (rec_grow(to)) return -1;
            to->time_ns[to->n] = from->time_ns[k];
            to->bps[to->n] = from->bps[k];
            to->pct_copy[to->n] = from->pct_copy[k];
            to->clock_mhz[to->n] = from->clock_mhz[k];
            for (int e = 0; e < ADA_BENCH_EXTRAS; e++) to->extra[e][to->n] = from->extra[e][k];
            to->n++;
        }
        for (int e = 0; e < ADA_BENCH_EXTRAS; e++) to->has_extra[e] |= from->has_extra[e];
        to->nerr += from->nerr;
        to->has_bps |= from->has_bps;
        to->has_pct |= from->has_pct;
        to->has_clock |= from->has_clock;
        if (from->has_saved && !to->has_saved) {
            to->saved_bytes = from->saved_bytes;
            to->has_saved = 1;
        }
        if (from->error && !to->error) {
            to->error = 1;
            to->wrong = from->wrong;
            to->error_message = from->error_message;
            from->error_message = NULL;
        }
    }
    return 0;
}

/* A file is read into a set of its own and merged only when all of it is good, so a bad
 * file leaves s as it was (and leaks nothing). */
int ada_bench_load_file(const char *path, ada_bench_set *s, char *err, size_t err_n)
{
    ada_bench_set tmp = {0};
    int rc = load_into(path, &tmp, err, err_n);
    if (rc == 0 && merge(s, &tmp)) {
        snprintf(err, err_n, "%s: out of memory", path);
        rc = ADA_RUNS_ENOMEM;
    }
    ada_bench_set_free(&tmp);
    return rc;
}

int ada_bench_load(const char *path, ada_bench_set *s, char *err, size_t err_n)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, err_n, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return ada_bench_load_file(path, s, err, err_n);
    char p[4096];
    snprintf(p, sizeof p, "%s/bench.json", path);
    int rc = ada_bench_load_file(p, s, err, err_n);
    if (rc) return rc;
    snprintf(p, sizeof p, "%s/peers.json", path);
    if (stat(p, &st) == 0) return ada_bench_load_file(p, s, err, err_n);
    return 0;
}

void ada_bench_set_free(ada_bench_set *s)
{
    for (int64_t i = 0; i < s->n; i++) {
        free(s->r[i].name);
        free(s->r[i].time_ns);
        free(s->r[i].bps);
        free(s->r[i].pct_copy);
        free(s->r[i].clock_mhz);
        free(s->r[i].error_message);
        for (int k = 0; k < ADA_BENCH_EXTRAS; k++) free(s->r[i].extra[k]);
    }
    free(s->set);
    free(s->repetitions);
    free(s->r);
    free(s->hash);
    memset(s, 0, sizeof *s);
}

const ada_bench_rec *ada_bench_find(const ada_bench_set *s, const char *name)
{
    if (!s->hcap) return NULL;
    int64_t k = *slot_of(s, name);
    return k ? &s->r[k - 1] : NULL;
}

int64_t ada_bench_repetitions(const ada_bench_set *s)
{
    const char *r = s->repetitions;
    if (r && *r && strspn(r, "0123456789") == strlen(r) && strlen(r) < 10) return strtoll(r, NULL, 10);
    int64_t most = 0;
    for (int64_t i = 0; i < s->n; i++)
        if (!s->r[i].error && s->r[i].n > most) most = s->r[i].n;
    return most;
}

double ada_bench_copy_ceiling(const ada_bench_set *s, const char *copy_name)
{
    const ada_bench_rec *r = copy_name ? ada_bench_find(s, copy_name) : NULL;
    if (!r || r->error || r->n == 0 || !r->has_bps) return 0;
    double bw = ada_median(r->bps, r->n);
    return isfinite(bw) && bw > 0 ? bw : 0;
}

static json_t *entry(const char *name, double value, const char *unit, const char *extra)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "value", json_real(value));
    json_object_set_new(o, "unit", json_string(unit));
    if (extra) json_object_set_new(o, "extra", json_string(extra));
    return o;
}

int ada_bench_custom_json(const ada_bench_set *s, json_t **smaller, json_t **bigger)
{
    json_t *small = json_array(), *big = json_array();
    *smaller = *bigger = NULL;
    if (!small || !big) {
        json_decref(small);
        json_decref(big);
        return -1;
    }
    for (int64_t i = 0; i < s->n; i++) {
        const ada_bench_rec *r = &s->r[i];
        if (r->error || r->n == 0) continue;
        double t_us = ada_median(r->time_ns, r->n) * 1e-3;
        char extra[160];
        int w = snprintf(extra, sizeof extra, "median of %lld repetitions", (long long)r->n);
        if (r->has_clock && w > 0 && (size_t)w < sizeof extra)
            snprintf(extra + w, sizeof extra - (size_t)w, "; SM clock %.0f MHz", ada_median(r->clock_mhz, r->n));
        if (isfinite(t_us) && t_us > 0) json_array_append_new(small, entry(r->name, t_us, "us", extra));
        if (r->has_bps) {
            double gbs = ada_median(r->bps, r->n) * 1e-9;
            if (isfinite(gbs)) json_array_append_new(big, entry(r->name, gbs, "GB/s", extra));
        }
    }
    *smaller = small;
    *bigger = big;
    return 0;
}
