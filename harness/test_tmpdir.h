/* test_tmpdir.h -- a scratch folder per Criterion test, for the tests that run the adaload
 * program (test_bench_cli.c, test_compare.c). Header-only, test code only:
 *   TestSuite(x, .fini = test_tmp_remove);
 *   Test(x, y) { test_tmp_make("bench"); ... test_tmpdir ... }
 */
#ifndef ADALOAD_TEST_TMPDIR_H
#define ADALOAD_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

static char test_tmpdir[64];

/* Each test's scratch folder goes when the test ends (rm -rf: a run folder is a tree). */
static void test_tmp_remove(void)
{
    if (!test_tmpdir[0]) return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", test_tmpdir);
    test_tmpdir[0] = '\0';
}

/* Creates /tmp/adaload-test-<tag>-XXXXXX into test_tmpdir. */
static void test_tmp_make(const char *tag)
{
    snprintf(test_tmpdir, sizeof test_tmpdir, "/tmp/adaload-test-%.16s-XXXXXX", tag);
    cr_assert_not_null(mkdtemp(test_tmpdir));
}

#endif
