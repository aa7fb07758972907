/* test_verify_res_grid.c -- "op": "lnmod_res" cases on the CPU (verify_res.h): the grid's sets
 * are valid descriptors and cover every site, layout and dtype combination; res_model passes
 * every case of the smoke grid (and of the quick grid's in-place and no-dh sets); each planted
 * model fails the cases of the direction its bug is in, at the sites it can show, and the
 * records say "op": "lnmod_res" and "direction". */
#include <criterion/criterion.h>
#include <string.h>

#include "verify_check_res.h"
#include "verify_model_res.h"
#include "verify_res.h"

Test(verify_res_grid, sets_are_valid_and_cover_the_grid)
{
    static const char *const grids[] = {"smoke", "quick", "full"};
    for (int g = 0; g < 3; g++) {
        verify_res_set *s = NULL;
        int n = 0;
        cr_assert_eq(verify_res_grid_sets(grids[g], &s, &n), VERIFY_OK);
        int seen[VERIFY_RES_NSITES][LNMOD_LAYOUT_COUNT] = {{0}}, inplace = 0, no_dh = 0;
        for (int i = 0; i < n; i++) {
            const lnmod_res_desc d = verify_res_set_desc(&s[i]);
            cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_OK, "%s set %d", grids[g], i);
            seen[s[i].site][s[i].layout]++;
            inplace += s[i].inplace;
            no_dh += s[i].no_dh;
        }
        for (int a = 0; a < VERIFY_RES_NSITES; a++)
            for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++) cr_assert_gt(seen[a][l], 0, "%s: %d %d", grids[g], a, l);
        cr_assert(inplace >= 2 && no_dh >= 1);
        free(s);
    }
    verify_res_set *s = NULL;
    int n = 0;
    cr_assert_eq(verify_res_grid_sets("nope", &s, &n), VERIFY_ERR_ARG);
}

/* Runs model `name` over grid `grid` (only the in-place and no-dh sets when extras_only);
 * returns the failed cases, and per direction and site the cases that failed. */
static int64_t run(const char *name, const char *grid, int extras_only, int bad[2][VERIFY_RES_NSITES])
{
    const int model = verify_res_model_find(name);
    cr_assert_geq(model, 0, "%s", name);
    verify_res_set *s = NULL;
    int n = 0;
    cr_assert_eq(verify_res_grid_sets(grid, &s, &n), VERIFY_OK);
    json_t *cases = json_array();
    int64_t failed = 0, want_cases = 0;
    for (int i = 0; i < n; i++) {
        if (extras_only && !s[i].inplace && !s[i].no_dh) continue;
        cr_assert_eq(verify_res_run_cpu(model, &s[i], 2250 + (uint64_t)i, 2, cases, &failed), 0, "%s set %d", name, i);
        want_cases += 2;
    }
    cr_assert_eq((int64_t)json_array_size(cases), want_cases);
    memset(bad, 0, sizeof(int[2][VERIFY_RES_NSITES]));
    size_t k;
    json_t *c;
    json_array_foreach(cases, k, c) {
        cr_assert_str_eq(json_string_value(json_object_get(c, "op")), "lnmod_res");
        cr_assert_str_eq(json_string_value(json_object_get(c, "variant")), name);
        const char *dir = json_string_value(json_object_get(c, "direction")), *site = json_string_value(json_object_get(c, "site"));
        cr_assert(dir && site && (!strcmp(dir, "fwd") || !strcmp(dir, "bwd")));
        int a = 0;
        while (a < VERIFY_RES_NSITES && strcmp(verify_res_site_name(a), site)) a++;
        cr_assert_lt(a, VERIFY_RES_NSITES);
        if (!json_is_true(json_object_get(c, "pass"))) bad[strcmp(dir, "fwd") ? 1 : 0][a]++;
        else cr_assert_leq(json_real_value(json_object_get(c, "worst_ratio")), 1.0);
    }
    json_decref(cases);
    free(s);
    return failed;
}

Test(verify_res_grid, res_model_passes_every_case)
{
    int bad[2][VERIFY_RES_NSITES];
    cr_assert_eq(run("res_model", "smoke", 0, bad), 0);
    cr_assert_eq(run("res_model", "quick", 1, bad), 0);
}

/* Every planted model fails: the forward's bugs the forward cases of the gated sites (or all),
 * the backward's the backward cases, never the other direction. */
Test(verify_res_grid, planted_models_fail)
{
    static const struct {
        const char *name;
        int dir;       /* 0 fwd, 1 bwd */
        int all_sites; /* else only the gated sites (attn, ffn) */
    } planted[] = {{"res_no_gate", 0, 0}, {"res_no_h", 0, 1}, {"res_bwd_no_dh", 1, 1}, {"res_bwd_dgate_dh", 1, 0}};
    for (size_t p = 0; p < sizeof planted / sizeof planted[0]; p++) {
        int bad[2][VERIFY_RES_NSITES];
        cr_assert_gt(run(planted[p].name, "smoke", 0, bad), 0, "%s passed", planted[p].name);
        for (int a = 0; a < VERIFY_RES_NSITES; a++) {
            const int shows = planted[p].all_sites || a != VERIFY_RES_SITE_CROSS;
            cr_assert_eq(bad[1 - planted[p].dir][a], 0, "%s: the other direction failed", planted[p].name);
            if (shows)
                cr_assert_gt(bad[planted[p].dir][a], 0, "%s: site %s passed", planted[p].name, verify_res_site_name(a));
            else
                cr_assert_eq(bad[planted[p].dir][a], 0, "%s: site %s failed", planted[p].name, verify_res_site_name(a));
        }
    }
}

/* The inputs are drawn a row at a time from streams of (seed, tensor, row), so a set's case
 * records -- every error and ratio, which follow the inputs -- are the same at 1 and 3
 * threads, and differ with the seed. */
Test(verify_res_grid, inputs_do_not_depend_on_threads)
{
    const int model = verify_res_model_find("res_model");
    cr_assert_geq(model, 0);
    const verify_res_set sets[] = {{VERIFY_RES_SITE_FFN, LNMOD_PER_FRAME, 0, 264, 161, 0, 0},
                                   {VERIFY_RES_SITE_ATTN, LNMOD_PER_SAMPLE, 3, 33, 160, 1, 0}};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        json_t *c[3];
        const int threads[3] = {1, 3, 3};
        const uint64_t seeds[3] = {77, 77, 78};
        for (int k = 0; k < 3; k++) {
            int64_t failed = 0;
            c[k] = json_array();
            cr_assert_eq(verify_res_run_cpu(model, &sets[i], seeds[k], threads[k], c[k], &failed), 0);
            cr_assert_eq(failed, 0);
        }
        cr_assert(json_equal(c[0], c[1]), "set %zu: the records differ between 1 and 3 threads", i);
        cr_assert(!json_equal(c[1], c[2]), "set %zu: another seed gave the same records", i);
        for (int k = 0; k < 3; k++) json_decref(c[k]);
    }
}
