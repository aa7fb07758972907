/* test_gate_record.c -- a test-only tool (never part of adaload) that writes a synthetic
 * verification record with every case of a grid, for the gate's end-to-end test
 * (kernels/test_gate.cmake), which cannot run a real full grid without a GPU:
 *
 *   test_gate_record OUT.json HASH SCHEME BACKEND GRID CASE2_PASS MEMCHECK
 *
 * SCHEME 2 (hash_scheme 2, sanitizer runs that name their grid) or 0 (an older record: no
 * hash_scheme, no sanitizer runs); the cases are verify's sets of GRID for the registry's
 * variants, built here one by one, then the fused residual op's cases of GRID (verify_res.h) for
 * the registry's variants with it; CASE2_PASS 0 makes the second case fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lnmod_desc.h"
#include "verify.h"
#include "verify_res.h"

/* The fused op's cases of grid for the registry's variants with it, appended; their number. */
static long long res_cases(json_t *cases, const char *grid, const char *const *reg, int nreg)
{
    verify_res_set *rs;
    int nrs;
    long long m = 0;
    if (verify_res_grid_sets(grid, &rs, &nrs) != VERIFY_OK) return -1;
    for (int j = 0; j < nrs; j++)
        for (int d = 0; d < 2; d++)
            for (int v = 0; v < nreg; v++) {
                if (!verify_registry_has_res(reg[v])) continue;
                json_t *c = verify_res_case_json(reg[v], &rs[j], d ? "bwd" : "fwd");
                json_object_set_new(c, "pass", json_true());
                json_array_append_new(cases, c);
                m++;
            }
    free(rs);
    return m;
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: test_gate_record OUT HASH SCHEME BACKEND GRID CASE2_PASS MEMCHECK\n");
        return 2;
    }
    int scheme = atoi(argv[3]), ok2 = atoi(argv[6]);
    int nreg;
    const char *const *reg = verify_registry_variants(&nreg);
    verify_case_id *ids;
    int64_t nids;
    if (verify_grid_registry_cases(argv[5], &ids, &nids) != VERIFY_OK) return 2;
    json_t *cases = json_array(), *vs = json_array();
    for (int v = 0; v < nreg; v++) json_array_append_new(vs, json_string(reg[v]));
    long long k = 0;
    for (; k < nids; k++) {
        lnmod_dtype x, m, y;
        const verify_set *st = &ids[k].set;
        verify_combo(st->combo, &x, &m, &y);
        json_array_append_new(cases, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:b}", "variant",
                                               ids[k].variant, "x", lnmod_dtype_name(x), "mod", lnmod_dtype_name(m),
                                               "y", lnmod_dtype_name(y), "layout",
                                               lnmod_layout_name((lnmod_layout)st->layout), "direction",
                                               verify_direction_name(ids[k].direction), "D", (json_int_t)st->D,
                                               "rows", (json_int_t)st->rows, "pass", k != 1 || ok2));
    }
    free(ids);
    const long long nres = res_cases(cases, argv[5], reg, nreg);
    if (nres < 0) return 2;
    k += nres;
    json_t *r = json_pack("{s:s, s:s, s:s, s:{s:s}, s:i, s:s, s:o, s:{s:s, s:s, s:s, s:s}, s:{s:I}, s:b}", "schema",
                          "adaload.verify/1", "kernel_source_hash", argv[2], "backend", argv[4], "gpu", "name",
                          "NVIDIA Test", "seed", 1, "grid", argv[5], "cases", cases, "sanitizers", "memcheck", argv[7],
                          "racecheck", "clean", "initcheck", "clean", "synccheck", "clean", "summary", "cases",
                          (json_int_t)k, "all_passed", ok2 != 0);
    json_object_set_new(r, "ops", json_pack("[s, s]", "lnmod", "lnmod_res"));
    if (scheme) {
        json_object_set_new(r, "hash_scheme", json_integer(scheme));
        const char *sg = verify_sanitizer_grid(argv[5]);
        if (verify_grid_registry_cases(sg, &ids, &nids) != VERIFY_OK) return 2;
        free(ids);
        json_t *scratch = json_array();
        const char *rg = verify_res_sanitizer_grid(argv[5]);
        nids += res_cases(scratch, rg, reg, nreg);
        json_decref(scratch);
        json_t *runs = json_object();
        for (int t = 0; t < 4; t++)
            json_object_set_new(runs, verify_sanitizer_tools[t],
                                json_pack("{s:s, s:i, s:s, s:O, s:I, s:s}", "verdict", t ? "clean" : argv[7],
                                          "exit_code", t || !strcmp(argv[7], "clean") ? 0 : 1, "grid", sg, "variants",
                                          vs, "cases", (json_int_t)nids, "res_grid", rg));
        json_object_set_new(r, "sanitizer_runs", runs);
    }
    json_decref(vs);
    int rc = json_dump_file(r, argv[1], JSON_INDENT(1)) == 0 ? 0 : 1;
    json_decref(r);
    return rc;
}
