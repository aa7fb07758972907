/* verify_session_res.c -- the fused residual op's sets in verify's session (verify_res.h):
 * each set on every res variant's runner (the CPU models, or the GPU runner of
 * verify_res_gpu.c), its case records and counts beside lnmod's. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ada_rng.h"
#include "verify_internal.h"
#include "verify_model_res.h"
#include "verify_res.h"

void verify_session_plan_res(verify_session *s, int64_t nres_sets)
{
    const int ndirs = ((s->directions & VERIFY_DIR_FWD) != 0) + ((s->directions & VERIFY_DIR_BWD) != 0);
    s->t.ncases_total += nres_sets * ndirs * s->c->nres_variants;
}

/* The case line (one per case on the small grids, failures always). */
static void line_of(char *line, size_t n, const json_t *c, const char *tail)
{
    snprintf(line, n, "%-14s %-3s %-5s %-19s %-6s %6" JSON_INTEGER_FORMAT " %7" JSON_INTEGER_FORMAT " %-7s %-5s %s",
             json_string_value(json_object_get(c, "variant")), json_string_value(json_object_get(c, "direction")),
             json_string_value(json_object_get(c, "site")), json_string_value(json_object_get(c, "dtypes")),
             json_string_value(json_object_get(c, "layout")), json_integer_value(json_object_get(c, "D")),
             json_integer_value(json_object_get(c, "rows")),
             json_is_true(json_object_get(c, "inplace")) ? "inplace" : "-",
             json_is_true(json_object_get(c, "dh")) ? "dh" : "no-dh", tail);
}

/* Records one case of res variant vi (c: a case record of verify_res_run, or an identity). */
static void record(verify_session *s, int vi, json_t *c, const char *not_run)
{
    const int dir = !strcmp(json_string_value(json_object_get(c, "direction")), "bwd") ? VERIFY_DIR_BWD : VERIFY_DIR_FWD;
    char line[512], tail[256];
    if (not_run) {
        json_object_set_new(c, "pass", json_false());
        json_object_set_new(c, "not_run", json_string(not_run));
        snprintf(tail, sizeof tail, "not run: %.200s", not_run);
    } else {
        const char *key;
        json_t *v;
        size_t k = (size_t)snprintf(tail, sizeof tail, "lnmod_res worst %.3g %s",
                                    json_real_value(json_object_get(c, "worst_ratio")),
                                    json_is_true(json_object_get(c, "pass")) ? "ok" : "FAIL");
        json_object_foreach(json_object_get(c, "fails"), key, v) {
            if (k >= sizeof tail - 64) break;
            k += (size_t)snprintf(tail + k, sizeof tail - k, " %s %" JSON_INTEGER_FORMAT, key, json_integer_value(v));
        }
    }
    line_of(line, sizeof line, c, tail);
    verify_record_op_case(s, VERIFY_OP_RES, vi, dir, c, json_is_true(json_object_get(c, "pass")), not_run != NULL,
                          line, NULL);
}

/* The runner of res variant vi into rn; 0, or -1 with why in err. */
static int runner_of(verify_session *s, int vi, verify_res_runner *rn, char *err, size_t errn)
{
    const char *name = s->c->res_variants[vi];
    const int ok = s->c->cpu_model ? verify_res_cpu_runner(verify_res_model_find(name), s->c->threads, rn) == 0
                                   : verify_res_gpu_runner(name, &s->rp, rn) == 0;
    if (!ok) return snprintf(err, errn, "no %s runner for %s", s->c->cpu_model ? "CPU model" : "GPU", name), -1;
    rn->threads = s->c->threads;
    return 0;
}

void verify_session_run_res_set(verify_session *s, const verify_res_set *set, int64_t j)
{
    /* The inputs of set j: the run's seed and j, the same for every variant. */
    uint64_t z = s->c->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(j + 1));
    const uint64_t seed = ada_splitmix64(&z) >> 1;
    for (int vi = 0; vi < s->c->nres_variants; vi++) {
        json_t *cases = json_array();
        int64_t failed = 0;
        char err[256] = "out of host memory";
        verify_res_runner rn;
        const double t0 = ada_now_s(), c0 = verify_cpu_s();
        int rc = !cases ? -1 : runner_of(s, vi, &rn, err, sizeof err);
        if (rc == 0) rc = verify_res_run(&rn, set, seed, s->c->threads, cases, &failed, err, sizeof err);
        s->t.t_res += ada_now_s() - t0; /* the runner's and its checks' time, together */
        s->t.c_res += verify_cpu_s() - c0;
        if (rc != 0) { /* the identities of the set's cases, not run */
            json_array_clear(cases);
            for (int dir = VERIFY_DIR_FWD; cases && dir <= VERIFY_DIR_BWD; dir <<= 1) {
                json_t *c = verify_res_case_json(s->c->res_variants[vi], set, verify_direction_name(dir));
                if (c) json_array_append_new(cases, c);
            }
        }
        size_t k;
        json_t *c;
        json_array_foreach(cases, k, c) {
            const char *d = json_string_value(json_object_get(c, "direction"));
            const int dir = d && !strcmp(d, "bwd") ? VERIFY_DIR_BWD : VERIFY_DIR_FWD;
            if (s->directions & dir) record(s, vi, json_incref(c), rc != 0 ? err : NULL);
        }
        json_decref(cases);
    }
}
