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

/* Through the one reader of bench.json (run_bench.h; the planner's counters are its extras:
 * seconds_per_10M, bytes_per_sample). NULL out of memory; a run without cpu/planner/
 * benchmarks gives an empty array. */
static json_t *planner_benchmarks(const char *dir)
{
    char p[PATH_MAX + 16], err[600];
    snprintf(p, sizeof p, "%s/bench.json", dir);
    ada_bench_set b = {0};
    json_t *out = json_array();
    if (!out || ada_bench_load_file(p, &b, err, sizeof err)) {
        ada_bench_set_free(&b);
        return out;
    }
    for (int64_t k = 0; out && k < b.n; k++) {
        const ada_bench_rec *r = &b.r[k];
        if (strncmp(r->name, "cpu/planner/", 12) || r->error || r->n == 0) continue;
        const char *pol = r->name + 12;
        const char *slash = strchr(pol, '/');
        char policy[64];
        snprintf(policy, sizeof policy, "%.*s", slash ? (int)(slash - pol) : (int)strlen(pol), pol);
        json_t *o = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:I}", "name", r->name, "policy", policy,
                              "samples", slash ? slash + 1 : "", "median_s", ada_median(r->time_ns, r->n) * 1e-9,
                              "seconds_per_10M", ada_median(r->extra[0], r->n), "bytes_per_sample",
                              ada_median(r->extra[1], r->n), "repetitions", (json_int_t)r->n);
        if (!o || json_array_append_new(out, o)) {
            json_decref(out);
            out = NULL;
        }
    }
    ada_bench_set_free(&b);
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
