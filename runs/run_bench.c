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

#include "ada_output.h"

static ada_bench_rec *rec_get(ada_bench_set *s, const char *name)
{
    for (int64_t i = 0; i < s->n; i++)
        if (!strcmp(s->r[i].name, name)) return &s->r[i];
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 64;
        ada_bench_rec *r = realloc(s->r, (size_t)cap * sizeof *r);
        if (!r) return NULL;
        s->r = r;
        s->cap = cap;
    }
    ada_bench_rec *r = &s->r[s->n];
    memset(r, 0, sizeof *r);
    r->name = strdup(name);
    r->time_ns = calloc(ADA_REC_MAX_REPS, sizeof *r->time_ns);
    r->bps = calloc(ADA_REC_MAX_REPS, sizeof *r->bps);
    r->pct_copy = calloc(ADA_REC_MAX_REPS, sizeof *r->pct_copy);
    r->clock_mhz = calloc(ADA_REC_MAX_REPS, sizeof *r->clock_mhz);
    s->n++;
    if (!r->name || !r->time_ns || !r->bps || !r->pct_copy || !r->clock_mhz) return NULL;
    return r;
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

int ada_bench_load_file(const char *path, ada_bench_set *s, char *err, size_t err_n)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
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
            return -1;
        }
        if (json_is_true(json_object_get(b, "error_occurred"))) {
            r->error = 1;
            const char *m = json_string_value(json_object_get(b, "error_message"));
            if (!r->error_message) r->error_message = strdup(m ? m : "error");
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
        if (!num_field(b, "sm_clock_mhz", &v)) {
            r->clock_mhz[r->n] = v;
            r->has_clock = 1;
        }
        r->n++;
    }
    json_decref(root);
    return 0;
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
    if (ada_bench_load_file(p, s, err, err_n)) return -1;
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
    }
    free(s->r);
    memset(s, 0, sizeof *s);
}

const ada_bench_rec *ada_bench_find(const ada_bench_set *s, const char *name)
{
    for (int64_t i = 0; i < s->n; i++)
        if (!strcmp(s->r[i].name, name)) return &s->r[i];
    return NULL;
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

int ada_bench_write_custom(const char *dir, const ada_bench_set *s)
{
    json_t *small = json_array(), *big = json_array();
    for (int64_t i = 0; i < s->n; i++) {
        const ada_bench_rec *r = &s->r[i];
        if (r->error || r->n == 0) continue;
        double t_us = ada_median(r->time_ns, r->n) * 1e-3;
        char extra[160];
        int w = snprintf(extra, sizeof extra, "median of %lld repetitions", (long long)r->n);
        if (r->has_clock && w > 0 && (size_t)w < sizeof extra)
            snprintf(extra + w, sizeof extra - (size_t)w, "; SM clock %.0f MHz",
                     ada_median(r->clock_mhz, r->n));
        if (isfinite(t_us) && t_us > 0) json_array_append_new(small, entry(r->name, t_us, "us", extra));
        if (r->has_bps) {
            double gbs = ada_median(r->bps, r->n) * 1e-9;
            if (isfinite(gbs)) json_array_append_new(big, entry(r->name, gbs, "GB/s", extra));
        }
    }
    char p[4096];
    int rc = 0;
    snprintf(p, sizeof p, "%s/customSmallerIsBetter.json", dir);
    rc |= ada_write_json_atomic(p, small);
    snprintf(p, sizeof p, "%s/customBiggerIsBetter.json", dir);
    rc |= ada_write_json_atomic(p, big);
    json_decref(small);
    json_decref(big);
    return rc ? -1 : 0;
}
