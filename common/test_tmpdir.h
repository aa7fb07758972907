/* test_tmpdir.h -- a scratch folder per Criterion test, for every test that writes files
 * (the CLI tests, the catalog, dashboard and gate libraries). Header-only, test code only:
 *   static void mk(void) { test_tmp_make("catalog"); }
 *   TestSuite(x, .init = mk, .fini = test_tmp_remove);
 *   Test(x, y) { test_tmp_put("a/b/meta.json", "{}"); ... test_tmpdir ... }
 */
#ifndef ADALOAD_TEST_TMPDIR_H
#define ADALOAD_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

static char test_tmpdir[64];

/* Each test's scratch folder goes when the test ends (rm -rf: a run folder is a tree). */
static inline void test_tmp_remove(void)
{
    if (!test_tmpdir[0]) return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", test_tmpdir);
    test_tmpdir[0] = '\0';
}

/* Creates /tmp/adaload-test-<tag>-XXXXXX into test_tmpdir. */
static inline void test_tmp_make(const char *tag)
{
    snprintf(test_tmpdir, sizeof test_tmpdir, "/tmp/adaload-test-%.16s-XXXXXX", tag);
    cr_assert_not_null(mkdtemp(test_tmpdir));
}

/* test_tmpdir/rel into p (n bytes), with every folder above it created. */
static inline void test_tmp_prepare(const char *rel, char *p, size_t n)
{
    char cmd[700];
    snprintf(p, n, "%s/%s", test_tmpdir, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", p);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* Writes text to test_tmpdir/rel (folders created as needed). */
static inline void test_tmp_put(const char *rel, const char *text)
{
    char p[512];
    test_tmp_prepare(rel, p, sizeof p);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "%s", p);
    fputs(text, f);
    fclose(f);
}

#endif
