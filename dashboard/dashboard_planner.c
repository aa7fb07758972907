/* dashboard_planner.c -- the planner part of the site's data: the medians of the
 * cpu/planner/<policy>/samples<N> benchmarks (time, seconds_per_10M, bytes_per_sample) and
 * the simulated metrics of each plan summary (a JSON object with "policy" and "metrics",
 * as `adaload plan --summary-json` writes) found in the run folder.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "run_bench.h"
#include "dashboard_internal.h"

typedef struct {
    char name[160];
    double t[64], s10[64], bps[64];
    int64_t n;
} pl_acc;

static double unit_s(const char *u)
{
    if (!u || !strcmp(u, "ns")) return 1e-9;
    if (!strcmp(u, "us")) return 1e-6;
    if (!strcmp(u, "ms")) return 1e-3;
    return 1.0;
}

static json_t *planner_benchmarks(const char *dir)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/bench.json", dir);
    json_t *b = json_load_file(p, 0, NULL);
    json_t *list = json_object_get(b, "benchmarks");
    pl_acc acc[16];
    int na = 0;
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        const char *rt = json_string_value(json_object_get(e, "run_type"));
        const char *nm = json_string_value(json_object_get(e, "run_name"));
        if (!nm || strncmp(nm, "cpu/planner/", 12) || (rt && strcmp(rt, "iteration"))) continue;
        if (json_is_true(json_object_get(e, "error_occurred"))) continue;
        int k = 0;
        while (k < na && strcmp(acc[k].name, nm)) k++;
        if (k == na) {
            if (na == 16) continue;
            snprintf(acc[na].name, sizeof acc[na].name, "%s", nm);
            acc[na++].n = 0;
        }
        if (acc[k].n == 64) continue;
        double u = unit_s(json_string_value(json_object_get(e, "time_unit")));
        acc[k].t[acc[k].n] = json_number_value(json_object_get(e, "real_time")) * u;
        acc[k].s10[acc[k].n] = json_number_value(json_object_get(e, "seconds_per_10M"));
        acc[k].bps[acc[k].n] = json_number_value(json_object_get(e, "bytes_per_sample"));
        acc[k].n++;
    }
    json_decref(b);
    json_t *out = json_array();
    for (int k = 0; out && k < na; k++) {
        const char *pol = acc[k].name + 12;
        const char *slash = strchr(pol, '/');
        char policy[64];
        snprintf(policy, sizeof policy, "%.*s", slash ? (int)(slash - pol) : (int)strlen(pol), pol);
        json_t *o = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:I}", "name", acc[k].name, "policy", policy,
                              "samples", slash ? slash + 1 : "", "median_s", ada_median(acc[k].t, acc[k].n),
                              "seconds_per_10M", ada_median(acc[k].s10, acc[k].n), "bytes_per_sample",
                              ada_median(acc[k].bps, acc[k].n), "repetitions", (json_int_t)acc[k].n);
        if (!o || json_array_append_new(out, o)) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static int skip_names(const char *n)
{
    static const char *const not_plans[] = {"bench.json", "peers.json", "meta.json", "customSmallerIsBetter.json",
                                            "customBiggerIsBetter.json", NULL};
    for (int i = 0; not_plans[i]; i++)
        if (!strcmp(n, not_plans[i])) return 1;
    size_t k = strlen(n);
    return k < 5 || strcmp(n + k - 5, ".json") != 0;
}

static json_t *plan_summaries(const char *dir)
{
    json_t *out = json_array();
    struct dirent **e = NULL;
    int k = scandir(dir, &e, NULL, alphasort);
    for (int i = 0; i < k; i++) {
        if (out && !skip_names(e[i]->d_name)) {
            char p[PATH_MAX + 256];
            snprintf(p, sizeof p, "%s/%s", dir, e[i]->d_name);
            json_t *s = json_load_file(p, 0, NULL);
            json_t *m = json_object_get(s, "metrics");
            if (json_is_object(m) && json_is_string(json_object_get(s, "policy"))) {
                json_t *o = json_pack("{s:s, s:O, s:O?, s:O?, s:O?, s:O}", "file", e[i]->d_name, "policy",
                                      json_object_get(s, "policy"), "assign", json_object_get(s, "assign"),
                                      "model", json_object_get(s, "model"), "gpus", json_object_get(s, "gpus"),
                                      "metrics", m);
                if (!o || json_array_append_new(out, o)) {
                    json_decref(out);
                    out = NULL;
                }
            }
            json_decref(s);
        }
        free(e[i]);
    }
    free(e);
    return out;
}

dash_status dash__add_planner(const char *results, const cat_run *r, json_t *planner, char *err, size_t en)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", results, r->path);
    json_t *bm = planner_benchmarks(dir);
    json_t *plans = plan_summaries(dir);
    if (!bm || !plans) {
        json_decref(bm);
        json_decref(plans);
        return dash__fail(DASH_NOMEM, err, en, "out of memory");
    }
    if (json_array_size(bm) == 0 && json_array_size(plans) == 0) {
        json_decref(bm);
        json_decref(plans);
        return DASH_OK;
    }
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o}", "run", r->run, "path", r->path, "kind", r->kind,
                          "time", r->time, "git_sha", r->git_sha, "benchmarks", bm, "plans", plans);
    if (!o || json_array_append_new(planner, o)) return dash__fail(DASH_NOMEM, err, en, "out of memory");
    return DASH_OK;
}
