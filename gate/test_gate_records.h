/* test_gate_records.h -- the gate tests' synthetic records (test_gate_lib.c, test_gate_res.c):
 * every case of a grid for the registry's variants, lnmod's and the fused op's, built here case
 * by case from verify's sets (not from the gate's own expectation). Static helpers, for tests
 * only. */
#ifndef ADALOAD_TEST_GATE_RECORDS_H
#define ADALOAD_TEST_GATE_RECORDS_H

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "gate.h"
#include "lnmod_desc.h"
#include "verify.h"
#include "verify_res.h"

static const gate_hashes tree = {.v1 = "h1-of-this-tree", .v2 = "h2-of-this-tree"};

/* The registry's variants with the fused op, counted here. */
static inline int nres_variants(void)
{
    int nreg, n = 0;
    const char *const *reg = verify_registry_variants(&nreg);
    for (int v = 0; v < nreg; v++) n += verify_registry_has_res(reg[v]);
    return n;
}

/* The fused op's cases of grid (shard k of nk: its set j is set nsets + j of the shard rule) for
 * the registry's variants with it, both directions, appended to cases as verify writes them;
 * their number. */
static inline int64_t add_res_cases(json_t *cases, const char *grid, int k, int nk)
{
    int nreg, nls, nrs;
    const char *const *reg = verify_registry_variants(&nreg);
    verify_set *ls;
    verify_res_set *rs;
    cr_assert_eq(verify_grid_sets(grid, &ls, &nls), VERIFY_OK);
    free(ls);
    cr_assert_eq(verify_res_grid_sets(grid, &rs, &nrs), VERIFY_OK);
    int64_t m = 0;
    for (int j = 0; j < nrs; j++) {
        if (nk > 1 && (nls + j) % nk != k - 1) continue;
        for (int d = 0; d < 2; d++)
            for (int v = 0; v < nreg; v++) {
                if (!verify_registry_has_res(reg[v])) continue;
                json_t *c = verify_res_case_json(reg[v], &rs[j], d ? "bwd" : "fwd");
                cr_assert_not_null(c);
                json_object_set_new(c, "pass", json_true());
                json_object_set_new(c, "worst_ratio", json_real(0.25));
                json_array_append_new(cases, c);
                m++;
            }
    }
    free(rs);
    return m;
}

/* The sanitizer runs of a record as verify writes them now: the quick grid and the fused op's
 * res_grid, every variant of the registry, their case count; exit code 0. */
static inline json_t *sanitizer_runs(const char *grid, const char *res_grid)
{
    int nreg, nrs;
    const char *const *reg = verify_registry_variants(&nreg);
    verify_case_id *ids;
    int64_t nids;
    cr_assert_eq(verify_grid_registry_cases(grid, &ids, &nids), VERIFY_OK);
    free(ids);
    verify_res_set *rs;
    cr_assert_eq(verify_res_grid_sets(res_grid, &rs, &nrs), VERIFY_OK);
    free(rs);
    nids += 2 * (int64_t)nrs * nres_variants();
    json_t *runs = json_object(), *vs = json_array();
    for (int v = 0; v < nreg; v++) json_array_append_new(vs, json_string(reg[v]));
    for (int t = 0; t < 4; t++)
        json_object_set_new(runs, verify_sanitizer_tools[t],
                            json_pack("{s:s, s:i, s:s, s:O, s:I, s:s}", "verdict", "clean", "exit_code", 0, "grid", grid,
                                      "variants", vs, "cases", (json_int_t)nids, "res_grid", res_grid));
    json_decref(vs);
    return runs;
}

/* A record of every case of grid G for the registry's variants, built here case by case
 * from verify's sets (not from the gate's own expectation); case number `fail` fails (-1:
 * none). scheme 0 = no hash_scheme field (an older record). */
static inline int same_set(const verify_set *a, const verify_set *b)
{
    return a->layout == b->layout && a->combo == b->combo && a->D == b->D && a->rows == b->rows && a->huge == b->huge;
}

/* grid_record's work for shard k of nk of case_grid (0, 0: all of it): the input sets are
 * counted here as the cases go by (a set's cases are consecutive in verify's order). */
static inline json_t *shard_grid_record(const char *hash, int scheme, const char *grid, const char *case_grid, int k,
                                 int nk, int64_t fail, const char *memcheck)
{
    int nreg;
    (void)verify_registry_variants(&nreg);
    cr_assert_geq(nreg, 1);
    verify_case_id *ids;
    int64_t nids;
    cr_assert_eq(verify_grid_registry_cases(case_grid, &ids, &nids), VERIFY_OK);
    json_t *cases = json_array();
    int64_t set = -1, kept = 0;
    for (int64_t q = 0; q < nids; q++) {
        if (q == 0 || !same_set(&ids[q].set, &ids[q - 1].set)) set++;
        if (nk > 1 && set % nk != k - 1) continue;
        const int64_t c = kept++;
        lnmod_dtype x, m, y;
        const verify_set *st = &ids[q].set;
        verify_combo(st->combo, &x, &m, &y);
        json_array_append_new(cases, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:f, s:b}", "variant",
                                               ids[q].variant, "x", lnmod_dtype_name(x), "mod", lnmod_dtype_name(m),
                                               "y", lnmod_dtype_name(y), "layout",
                                               lnmod_layout_name((lnmod_layout)st->layout), "direction",
                                               verify_direction_name(ids[q].direction), "D", (json_int_t)st->D,
                                               "rows", (json_int_t)st->rows, "worst_ratio", c == fail ? 3.0 : 0.5,
                                               "pass", c != fail));
    }
    free(ids);
    const int64_t kk = kept + add_res_cases(cases, case_grid, k, nk);
    json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:o, s:{s:s, s:s, s:s, s:s}, s:o, s:{s:I, s:I}, s:b}", "schema",
                          "adaload.verify/1", "kernel_source_hash", hash, "backend", "cuda", "grid", grid, "cases",
                          cases, "sanitizers", "memcheck", memcheck, "racecheck", "clean", "initcheck", "clean",
                          "synccheck", "clean", "sanitizer_runs",
                          sanitizer_runs(verify_sanitizer_grid(grid), verify_res_sanitizer_grid(grid)),
                          "summary", "cases", (json_int_t)kk, "passed", (json_int_t)(fail >= 0 ? kk - 1 : kk),
                          "all_passed", fail < 0);
    cr_assert_not_null(r);
    if (scheme) json_object_set_new(r, "hash_scheme", json_integer(scheme));
    json_object_set_new(r, "ops", json_pack("[s, s]", "lnmod", "lnmod_res"));
    if (nk > 1) json_object_set_new(r, "shard", json_pack("{s:i, s:i}", "index", k, "count", nk));
    return r;
}

static inline json_t *grid_record(const char *hash, int scheme, const char *grid, const char *case_grid, int64_t fail,
                           const char *memcheck)
{
    return shard_grid_record(hash, scheme, grid, case_grid, 0, 0, fail, memcheck);
}

/* Shard k of nk of the full grid as verify --shard writes it: no sanitizer runs. */
static inline json_t *shard_record(const char *hash, int k, int nk, int64_t fail)
{
    json_t *r = shard_grid_record(hash, 2, "full", "full", k, nk, fail, "clean");
    json_t *san = json_object_get(r, "sanitizers");
    for (int t = 0; t < 4; t++)
        json_object_set_new(san, verify_sanitizer_tools[t], json_string("not run: --sanitizers not given"));
    json_object_del(r, "sanitizer_runs");
    return r;
}

static inline json_t *full_record(const char *hash, int scheme, int ok, const char *grid, const char *memcheck)
{
    return grid_record(hash, scheme, grid, grid, ok ? -1 : 7, memcheck);
}

static inline gate_verdict judge(json_t *rec, gate_status want)
{
    gate_verdict v;
    char msg[600];
    cr_assert_eq(gate_judge(rec, &tree, &v, msg, sizeof msg), want, "%s", msg);
    return v;
}

#endif
