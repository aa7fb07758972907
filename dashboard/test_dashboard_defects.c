/* test_dashboard_defects.c -- the site writer on a filling disk (issue 17: ENOSPC read past a
 * heap buffer in dash_write_site and left an empty site folder behind). Linked with the
 * write shim (common/test_failwrite.h): every write of the site's files fails with ENOSPC
 * after a byte budget. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "dashboard.h"
#include "test_failwrite.h"
#include "test_tmpdir.h"

static void mk_tmp(void) { test_tmp_make("dashdef"); }
TestSuite(dashboard_defects, .init = mk_tmp, .fini = test_tmp_remove);

static json_t *some_data(void)
{
    json_t *d = json_pack("{s:s, s:[]}", "generated", "2026-01-01T00:00:00Z", "testbeds");
    json_t *big = json_array();
    for (int i = 0; i < 300000; i++) json_array_append_new(big, json_real(i * 0.5)); /* data.js > 1 MiB: written past the stream buffer */
    json_object_set_new(d, "filler", big);
    return d;
}

static char *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    char *b = malloc(1 << 22);
    *n = fread(b, 1, 1 << 22, f);
    fclose(f);
    return b;
}

/* A new site folder on a disk that fills up after `budget` bytes: an error naming the
 * cause, and no folder left behind. Every budget from 0 to past the data.js header. */
Test(dashboard_defects, new_site_on_a_full_disk_leaves_nothing)
{
    json_t *d = some_data();
    long long budgets[] = {0, 1, 100, 4096, 50000, 100000};
    for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
        char dir[200], err[1024] = "";
        snprintf(dir, sizeof dir, "%s/site%zu", test_tmpdir, b);
        test_failwrite_budget(budgets[b]);
        dash_status s = dash_write_site(dir, d, err, sizeof err);
        test_failwrite_budget(-1);
        cr_assert_eq(s, DASH_BAD_OUTPUT, "budget %lld: status %d (%s)", budgets[b], s, err);
        cr_assert(strstr(err, "No space left"), "budget %lld: %s", budgets[b], err);
        struct stat st;
        cr_assert_neq(stat(dir, &st), 0, "budget %lld: the site folder it made is left behind", budgets[b]);
    }
    json_decref(d);
}

/* An existing site keeps every file as it was when the disk fills up during the update. */
Test(dashboard_defects, old_site_survives_a_full_disk)
{
    char dir[200], err[1024] = "";
    snprintf(dir, sizeof dir, "%s/site", test_tmpdir);
    json_t *d = some_data();
    test_failwrite_budget(1LL << 40);
    cr_assert_eq(dash_write_site(dir, d, err, sizeof err), DASH_OK, "%s", err);
    long long total = test_failwrite_written();
    test_failwrite_budget(-1);
    const char *files[] = {"index.html", "app.js", "style.css", "data.js"};
    char *old[4];
    size_t oldn[4];
    for (int i = 0; i < 4; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        old[i] = slurp(p, &oldn[i]);
        cr_assert_not_null(old[i], "%s", p);
    }
    json_object_set_new(d, "generated", json_string("2026-01-02T00:00:00Z"));
    for (long long budget = 0; budget < total; budget += total / 7) {
        test_failwrite_budget(budget);
        dash_status s = dash_write_site(dir, d, err, sizeof err);
        test_failwrite_budget(-1);
        cr_assert_eq(s, DASH_BAD_OUTPUT, "budget %lld: %s", budget, err);
        cr_assert(strstr(err, "No space left"), "budget %lld: %s", budget, err);
        for (int i = 0; i < 4; i++) {
            char p[300];
            size_t n;
            snprintf(p, sizeof p, "%s/%s", dir, files[i]);
            char *now = slurp(p, &n);
            cr_assert(now && n == oldn[i] && !memcmp(now, old[i], n), "budget %lld: %s changed", budget, files[i]);
            free(now);
        }
    }
    for (int i = 0; i < 4; i++) free(old[i]);
    json_decref(d);
}
