/* test_catalog_defects.c -- the catalog on hostile input (issue 17): index.jsonl lines whose
 * path is longer than any buffer (4,400 characters read past a stack buffer, 50,000
 * crashed `results check`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "catalog.h"
#include "test_tmpdir.h"

static char err[1024];

static void tree_make(void) { test_tmp_make("catdef"); }
TestSuite(catalog_defects, .init = tree_make, .fini = test_tmp_remove);

static void long_path_line(size_t n)
{
    char *p = malloc(n + 1), *line = malloc(n + 64);
    cr_assert(p && line);
    memset(p, 'x', n);
    p[n] = '\0';
    snprintf(line, n + 64, "{\"path\": \"%s\"}\n", p);
    test_tmp_put("r/index.jsonl", line);
    char *rep = NULL, root[128];
    snprintf(root, sizeof root, "%s/r", test_tmpdir);
    cr_assert_eq(cat_check(root, &rep, err, sizeof err), CAT_MISMATCH, "%s", err);
    cr_assert_not_null(rep);
    char *at = strstr(rep, "in the index but not in the tree: ");
    cr_assert_not_null(at, "%.200s", rep);
    at += strlen("in the index but not in the tree: ");
    cr_assert_eq(strspn(at, "x"), n, "the whole path is named");
    cr_assert_str_eq(at + n, "\n");
    free(rep);
    free(line);
    free(p);
}

Test(catalog_defects, index_path_of_4400_characters) { long_path_line(4400); }
Test(catalog_defects, index_path_of_50000_characters) { long_path_line(50000); }
