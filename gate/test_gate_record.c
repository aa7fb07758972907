/* test_gate_record.c -- a test-only tool (never part of adaload) that writes a synthetic
 * verification record with every case of a grid, for the gate's end-to-end test
 * (kernels/test_gate.cmake), which cannot run a real full grid without a GPU:
 *
 *   test_gate_record OUT.json HASH SCHEME BACKEND GRID CASE2_PASS MEMCHECK
 *
 * SCHEME 2 (hash_scheme 2, sanitizer runs that name their grid) or 0 (an older record: no
 * hash_scheme, no sanitizer runs); the cases are verify's sets of GRID for the registry's
 * variants, built here one by one; CASE2_PASS 0 makes the second case fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lnmod_desc.h"
#include "verify.h"

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
    json_t *r = json_pack("{s:s, s:s, s:s, s:{s:s}, s:i, s:s, s:o, s:{s:s, s:s, s:s, s:s}, s:{s:I}, s:b}", "schema",
                          "adaload.verify/1", "kernel_source_hash", argv[2], "backend", argv[4], "gpu", "name",
                          "NVIDIA Test", "seed", 1, "grid", argv[5], "cases", cases, "sanitizers", "memcheck", argv[7],
                          "racecheck", "clean", "initcheck", "clean", "synccheck", "clean", "summary", "cases",
                          (json_int_t)k, "all_passed", ok2 != 0);
    if (scheme) {
        json_object_set_new(r, "hash_scheme", json_integer(scheme));
        const char *sg = verify_sanitizer_grid(argv[5]);
        if (verify_grid_registry_cases(sg, &ids, &nids) != VERIFY_OK) return 2;
        free(ids);
        json_t *runs = json_object();
        for (int t = 0; t < 4; t++)
            json_object_set_new(runs, verify_sanitizer_tools[t],
                                json_pack("{s:s, s:i, s:s, s:O, s:I}", "verdict", t ? "clean" : argv[7], "exit_code",
                                          t || !strcmp(argv[7], "clean") ? 0 : 1, "grid", sg, "variants", vs, "cases",
                                          (json_int_t)nids));
        json_object_set_new(r, "sanitizer_runs", runs);
    }
    json_decref(vs);
    int rc = json_dump_file(r, argv[1], JSON_INDENT(1)) == 0 ? 0 : 1;
    json_decref(r);
    return rc;
}
