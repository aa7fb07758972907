/* test_ada_output_enospc.c -- the output writer on a filling disk, through the write shim
 * (test_failwrite.h): a write that fails is never counted as written (glibc took the -1 of a
 * failed cookie write as bytes, so fwrite reported 8,191 bytes written of which none were,
 * and could read past the caller's buffer), the commit names the cause, the old target keeps
 * its content and no temporary is left. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "ada_output.h"
#include "test_failwrite.h"
#include "test_tmpdir.h"

static void mk(void) { test_tmp_make("enospc"); }
TestSuite(ada_output_enospc, .init = mk, .fini = test_tmp_remove);

static int entries(void)
{
    DIR *d = opendir(test_tmpdir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

Test(ada_output_enospc, failed_writes_are_not_counted)
{
    char p[200];
    snprintf(p, sizeof p, "%s/out.txt", test_tmpdir);
    test_tmp_put("out.txt", "old content\n");
    size_t sizes[] = {100, 8192, 20000, (1 << 20) + 1, 3000000};
    long long budgets[] = {0, 10, 4096, 8192, 16384, 1 << 20}; /* multiples of the stream buffer too */
    char *buf = malloc(3000000);
    memset(buf, 'a', 3000000);
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
        for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
            if ((long long)sizes[a] <= budgets[b]) continue; /* fits: nothing fails */
            ada_outset *t = ada_outset_new("test");
            char err[512] = "";
            ada_out *o = ada_outset_add(t, p, "out", err, sizeof err);
            cr_assert_not_null(o, "%s", err);
            test_failwrite_budget(budgets[b]);
            size_t w = fwrite(buf, 1, sizes[a], ada_out_file(o));
            ada_out_status st = ada_outset_commit(t, err, sizeof err);
            long long really = test_failwrite_written();
            test_failwrite_budget(-1);
            ada_outset_free(t);
            cr_assert_eq(st, ADA_OUT_EIO, "size %zu budget %lld", sizes[a], budgets[b]);
            cr_assert(strstr(err, "No space left on device"), "%s", err);
            cr_assert(w <= sizes[a], "fwrite says %zu of %zu", w, sizes[a]);
            /* Past the stream's buffer fwrite writes through: it may not claim more than the
             * disk took (at most one stream buffer of it may be held back). */
            cr_assert_leq((long long)w, really + 8192, "fwrite says %zu of %zu written, the disk took %lld", w,
                          sizes[a], really);
            FILE *f = fopen(p, "r");
            char got[64] = "";
            cr_assert(f && fgets(got, sizeof got, f));
            fclose(f);
            cr_assert_str_eq(got, "old content\n");
            cr_assert_eq(entries(), 1, "a temporary was left behind");
        }
    free(buf);
}

/* A transaction of 1,024 outputs (half of them replacing old files), written one after
 * the other with ada_out_close, the disk full in the middle (at output 600): the close
 * says so, the commit refuses, and every old file stays, no new file and no temporary. */
Test(ada_output_enospc, full_in_the_middle_of_many)
{
    enum { N = 1024, SIZE = 1000 };
    char p[N][200], line[SIZE + 1];
    for (int i = 0; i < N; i++) {
        snprintf(p[i], sizeof p[i], "%s/rank%d.jsonl", test_tmpdir, i);
        if (i % 2) {
            FILE *f = fopen(p[i], "w");
            cr_assert_not_null(f);
            fputs("old content\n", f);
            fclose(f);
        }
    }
    memset(line, 'x', SIZE);
    line[SIZE] = '\0';
    char err[512] = "";
    ada_outset *t = ada_outset_new("test");
    ada_out *o[N];
    for (int i = 0; i < N; i++) cr_assert_not_null(o[i] = ada_outset_add(t, p[i], "rank", err, sizeof err), "%s", err);
    test_failwrite_budget(600LL * SIZE + SIZE / 2);
    int failed_at = -1;
    for (int i = 0; i < N && failed_at < 0; i++) {
        FILE *f = ada_out_file(o[i]);
        cr_assert_not_null(f);
        fputs(line, f);
        if (ada_out_close(o[i], err, sizeof err) != ADA_OUT_OK) failed_at = i;
    }
    cr_assert_eq(failed_at, 600);
    cr_assert(strstr(err, "No space left on device"), "%s", err);
    test_failwrite_budget(-1); /* space again: the failed close alone must stop the commit */
    cr_assert_eq(ada_outset_commit(t, err, sizeof err), ADA_OUT_EIO, "a failed close fails the commit");
    cr_assert(strstr(err, "rank") && strstr(err, "No space left on device"), "%s", err);
    ada_outset_free(t);
    for (int i = 0; i < N; i++) {
        FILE *f = fopen(p[i], "r");
        if (i % 2 == 0) {
            cr_assert_null(f, "rank %d: a new file appeared", i);
            continue;
        }
        char got[64] = "";
        cr_assert(f && fgets(got, sizeof got, f));
        fclose(f);
        cr_assert_str_eq(got, "old content\n", "rank %d", i);
    }
    cr_assert_eq(entries(), N / 2, "a temporary was left behind");
}
