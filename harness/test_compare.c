/* test_compare.c -- Criterion tests of `adaload compare` (cmd_compare.c, called directly
 * from adaload_cli) on synthetic Google Benchmark JSON files: same -> exit 0, 2x slower ->
 * exit 1, output free of NaN, unreadable input -> exit 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "cli.h"
#include "commands.h"
#include "test_tmpdir.h"

/* Synthetic Google Benchmark JSON: one benchmark, n repetitions at base*(1 + i/100) us. */
static void write_gbench(const char *path, const char *name, double base, int n)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"context\": {\"date\": \"x\"}, \"benchmarks\": [\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                   "\"repetitions\": %d, \"repetition_index\": %d, \"iterations\": 10, "
                   "\"real_time\": %.6f, \"cpu_time\": 1.0, \"time_unit\": \"us\", "
                   "\"bytes_per_second\": 1e12}\n",
                i ? "," : "", name, name, n, i, base * (1 + i / 100.0));
    /* An aggregate the reader must ignore (it would skew the sample). */
    fprintf(f, ",{\"name\": \"%s_median\", \"run_name\": \"%s\", \"run_type\": \"aggregate\", "
               "\"aggregate_name\": \"median\", \"real_time\": 1e9, \"time_unit\": \"us\"}\n",
            name, name);
    fprintf(f, "]}\n");
    fclose(f);
}


TestSuite(compare_cmd, .fini = test_tmp_remove);

/* Everything the test printed so far (stdout redirected by Criterion). */
static char *captured(void)
{
    fflush(stdout);
    FILE *f = cr_get_redirected_stdout();
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    return buf;
}

static void assert_finite_text(const char *s)
{
    /* Numbers are printed after spaces; the paths in the header have none. */
    const char *bad[] = {" nan", " inf", "-nan", "-inf", "NaN", "Inf"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) cr_assert_null(strstr(s, bad[i]), "%s", s);
}

static int compare(const char *a, const char *b)
{
    char *argv[] = {"compare", (char *)a, (char *)b, NULL};
    return cmd_compare(3, argv);
}

Test(compare_cmd, same_is_exit_0, .init = cr_redirect_stdout)
{
    test_tmp_make("compare");
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.json", test_tmpdir);
    snprintf(b, sizeof b, "%s/b.json", test_tmpdir);
    write_gbench(a, "lnmod_fwd/dtile/x", 100, 9);
    write_gbench(b, "lnmod_fwd/dtile/x", 100, 9);
    cr_assert_eq(compare(a, b), ADA_EXIT_OK);
    char *out = captured();
    cr_assert_not_null(strstr(out, "lnmod_fwd/dtile/x"), "%s", out);
    cr_assert_not_null(strstr(out, "1.000"), "%s", out);
    cr_assert_not_null(strstr(out, "0 slower, 0 faster, 1 same"), "%s", out);
    assert_finite_text(out);
}

Test(compare_cmd, twice_slower_is_exit_1_and_finite, .init = cr_redirect_stdout)
{
    test_tmp_make("compare");
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.json", test_tmpdir);
    snprintf(b, sizeof b, "%s/b.json", test_tmpdir);
    write_gbench(a, "lnmod_fwd/dtile/x", 100, 9);
    write_gbench(b, "lnmod_fwd/dtile/x", 200, 9);
    cr_assert_eq(compare(a, b), ADA_EXIT_FAIL);
    /* Faster in the other direction: not a regression. */
    cr_assert_eq(compare(b, a), ADA_EXIT_OK);
    char *out = captured();
    cr_assert_not_null(strstr(out, "2.000"), "%s", out);
    cr_assert_not_null(strstr(out, "slower"), "%s", out);
    cr_assert_not_null(strstr(out, "1 slower, 0 faster"), "%s", out);
    cr_assert_not_null(strstr(out, "0 slower, 1 faster"), "%s", out);
    assert_finite_text(out);
}

Test(compare_cmd, bad_input_is_usage_error)
{
    test_tmp_make("compare");
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.json", test_tmpdir);
    snprintf(b, sizeof b, "%s/missing.json", test_tmpdir);
    write_gbench(a, "n", 100, 3);
    cr_assert_eq(compare(a, b), ADA_EXIT_USAGE);
    FILE *f = fopen(b, "w");
    fprintf(f, "{\"benchmarks\": [{\"name\": \"n\", \"real_time\": NaN}]}");
    fclose(f);
    cr_assert_eq(compare(a, b), ADA_EXIT_USAGE); /* strict JSON: NaN is not a number */
    char *argv[] = {"compare", a, NULL};
    cr_assert_eq(cmd_compare(2, argv), ADA_EXIT_USAGE);
}
