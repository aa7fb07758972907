/* test_ada_output_many.c -- transactions of many outputs (ada_output.h; adaload plan
 * --per-rank writes a file per rank): 1,024 outputs committed with only a few descriptors
 * held at once (the first ADA_OUT_OPEN_FILES, then one at a time through ada_out_close); a
 * refusal in the middle leaves every old file as it was and no temporary or new file; a
 * dropped output's name may be added again while the others stay refused as duplicates;
 * SIGTERM removes the temporaries of more outputs than one block of the handler's list. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "ada_output.h"
#include "test_tmpdir.h"

enum { N = 1024 };

static void mk(void) { test_tmp_make("many"); }
TestSuite(many, .init = mk, .fini = test_tmp_remove);

static const char *path_of(int i)
{
    static char p[8][256];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/rank%d.jsonl", test_tmpdir, i);
    return p[k];
}

/* Entries of a folder: all, and those named like a temporary. */
static int entries(const char *d, int *tmps)
{
    DIR *h = opendir(d);
    cr_assert_not_null(h);
    int n = 0;
    *tmps = 0;
    for (struct dirent *e; (e = readdir(h));) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, ".."))) continue;
        n++;
        *tmps += strstr(e->d_name, ".adaload") != NULL;
    }
    closedir(h);
    return n;
}

static int open_fds(void)
{
    int tmps;
    return entries("/proc/self/fd", &tmps);
}

static void old_files(void)
{
    for (int i = 1; i < N; i += 2) {
        FILE *f = fopen(path_of(i), "w");
        cr_assert_not_null(f);
        fprintf(f, "old %d\n", i);
        fclose(f);
    }
}

/* The odd files hold "old i", no even file exists, no temporary is left. */
static void unchanged(void)
{
    for (int i = 0; i < N; i++) {
        FILE *f = fopen(path_of(i), "r");
        if (i % 2 == 0) {
            cr_assert_null(f, "rank %d: a new file appeared though the transaction failed", i);
            continue;
        }
        char got[64] = "", want[64];
        cr_assert(f && fgets(got, sizeof got, f));
        fclose(f);
        snprintf(want, sizeof want, "old %d\n", i);
        cr_assert_str_eq(got, want, "rank %d", i);
    }
    int tmps, n = entries(test_tmpdir, &tmps);
    cr_assert_eq(tmps, 0, "a temporary was left behind");
    cr_assert_eq(n, N / 2);
}

Test(many, thousand_outputs_few_descriptors)
{
    old_files();
    int base = open_fds();
    char err[512];
    ada_outset *t = ada_outset_new("test");
    ada_out *o[N];
    for (int i = 0; i < N; i++) cr_assert_not_null(o[i] = ada_outset_add(t, path_of(i), "rank", err, sizeof err), "%s", err);
    cr_assert_leq(open_fds(), base + ADA_OUT_OPEN_FILES, "every output holds a descriptor");
    for (int i = 0; i < N; i++) {
        FILE *f = ada_out_file(o[i]);
        cr_assert_not_null(f, "rank %d", i);
        fprintf(f, "new %d\n", i);
        cr_assert_eq(ada_out_close(o[i], err, sizeof err), ADA_OUT_OK, "%s", err);
        cr_assert_null(ada_out_file(o[i]), "closed: no stream any more");
        cr_assert_leq(open_fds(), base + ADA_OUT_OPEN_FILES);
    }
    cr_assert_eq(open_fds(), base, "closed outputs hold no descriptor");
    cr_assert_eq(ada_outset_commit(t, err, sizeof err), ADA_OUT_OK, "%s", err);
    ada_outset_free(t);
    for (int i = 0; i < N; i++) {
        FILE *f = fopen(path_of(i), "r");
        char got[64] = "", want[64];
        cr_assert(f && fgets(got, sizeof got, f), "rank %d", i);
        fclose(f);
        snprintf(want, sizeof want, "new %d\n", i);
        cr_assert_str_eq(got, want);
    }
    int tmps;
    cr_assert_eq(entries(test_tmpdir, &tmps), N);
    cr_assert_eq(tmps, 0);
}

Test(many, refusal_in_the_middle_changes_nothing)
{
    old_files();
    cr_assert_eq(mkdir(path_of(700), 0777), 0);
    char err[512];
    ada_outset *t = ada_outset_new("test");
    int i;
    for (i = 0; i < N; i++)
        if (!ada_outset_add(t, path_of(i), "rank", err, sizeof err)) break;
    cr_assert_eq(i, 700);
    cr_assert_eq(ada_outset_status(t), ADA_OUT_EUSAGE);
    cr_assert(strstr(err, "is a directory"), "%s", err);
    ada_outset_free(t);
    cr_assert_eq(rmdir(path_of(700)), 0);
    unchanged();
}

Test(many, dropped_names_can_return)
{
    char err[512];
    ada_outset *t = ada_outset_new("test");
    ada_out *o[200];
    for (int i = 0; i < 200; i++) cr_assert_not_null(o[i] = ada_outset_add(t, path_of(i), "first", err, sizeof err), "%s", err);
    for (int i = 0; i < 200; i += 3) ada_out_drop(o[i]);
    for (int i = 0; i < 200; i++) {
        ada_out *again = ada_outset_add(t, path_of(i), "second", err, sizeof err);
        if (i % 3 == 0) {
            cr_assert_not_null(again, "rank %d was dropped: %s", i, err);
            continue;
        }
        cr_assert_null(again, "rank %d is still an output", i);
        cr_assert(strstr(err, "the same file as first"), "%s", err);
    }
    ada_outset_free(t);
    int tmps;
    cr_assert_eq(entries(test_tmpdir, &tmps), 0);
}

Test(many, sigterm_removes_every_temporary)
{
    int pipefd[2];
    cr_assert_eq(pipe(pipefd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        char err[512];
        ada_outset *t = ada_outset_new("test");
        for (int i = 0; i < 300; i++)
            if (!ada_outset_add(t, path_of(i), "rank", err, sizeof err)) _exit(3);
        if (write(pipefd[1], "r", 1) != 1) _exit(4);
        for (;;) pause();
    }
    char c;
    cr_assert_eq(read(pipefd[0], &c, 1), 1);
    int tmps;
    cr_assert_eq(entries(test_tmpdir, &tmps), 300);
    cr_assert_eq(tmps, 300, "the temporaries exist while the child writes");
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    cr_assert_eq(entries(test_tmpdir, &tmps), 0, "a temporary was left behind");
}
