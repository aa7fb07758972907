/* test_plan_per_rank.c -- `adaload plan --per-rank DIR` at 1,024 ranks (cmd_plan called
 * in-process, linked with the write shim of common/test_failwrite.h): every rank's file is
 * written with its own end record (rank, gpus, one plan_id) and no temporary stays; the disk
 * full in the middle of the ranks, or a target in the middle that is a folder or cannot be
 * created, fails with exit 2 and leaves every old file byte for byte (a rewrite) or no
 * folder at all (a new one), and no temporary. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "commands.h"
#include "test_failwrite.h"
#include "test_tmpdir.h"

enum { R = 1024 };

static char pr[128];

static void mk(void)
{
    test_tmp_make("per-rank");
    snprintf(pr, sizeof pr, "%s/pr", test_tmpdir);
    cr_redirect_stdout(); /* the summary table */
}
TestSuite(per_rank, .init = mk, .fini = test_tmp_remove);

static int plan(const char *seed, long long budget)
{
    char *argv[] = {"plan", "--gpus", "1024", "--no-baselines", "--seed", (char *)seed, "--per-rank", pr, NULL};
    test_failwrite_budget(budget);
    int rc = cmd_plan(8, argv);
    test_failwrite_budget(-1);
    return rc;
}

static char *rank_path(int r)
{
    static char p[200];
    snprintf(p, sizeof p, "%s/rank%d.jsonl", pr, r);
    return p;
}

static char *slurp(const char *p, long *n)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)*n + 1);
    cr_assert_eq(fread(b, 1, (size_t)*n, f), (size_t)*n);
    b[*n] = '\0';
    fclose(f);
    return b;
}

/* Entries of DIR (-1 when it does not exist), and those named like a temporary. */
static int entries(int *tmps)
{
    DIR *d = opendir(pr);
    *tmps = 0;
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, ".."))) continue;
        n++;
        *tmps += strstr(e->d_name, ".adaload") != NULL;
    }
    closedir(d);
    return n;
}

/* Every rank's file, checked (end record with its rank, 1,024 gpus, the same plan_id);
 * their total size in *total. */
static char **written(long *total)
{
    char **f = calloc(R, sizeof *f), id[40] = "";
    *total = 0;
    for (int r = 0; r < R; r++) {
        long n;
        cr_assert_not_null(f[r] = slurp(rank_path(r), &n), "rank %d: no file", r);
        *total += n;
        const char *end = strstr(f[r], "{\"end\":true");
        char want[64];
        snprintf(want, sizeof want, ",\"rank\":%d,\"plan_id\":\"", r);
        cr_assert(end && strstr(end, "\"gpus\":1024,") && strstr(end, want), "rank %d: %s", r, end ? end : "no end");
        const char *pid = strstr(end, "\"plan_id\":\"") + 11;
        if (!r) snprintf(id, sizeof id, "%.16s", pid);
        cr_assert(!strncmp(pid, id, 16), "rank %d: another plan_id", r);
    }
    int tmps;
    cr_assert_eq(entries(&tmps), R);
    cr_assert_eq(tmps, 0, "a temporary was left behind");
    return f;
}

static void same_as(char **old)
{
    for (int r = 0; r < R; r++) {
        long n;
        char *now = slurp(rank_path(r), &n);
        cr_assert(now && !strcmp(now, old[r]), "rank %d: the old file was changed", r);
        free(now);
    }
    int tmps;
    cr_assert_eq(entries(&tmps), R);
    cr_assert_eq(tmps, 0, "a temporary was left behind");
}

static void free_all(char **f)
{
    for (int r = 0; r < R; r++) free(f[r]);
    free(f);
}

Test(per_rank, thousand_ranks_written_disk_full_in_the_middle)
{
    cr_assert_eq(plan("0", -1), 0);
    long total;
    char **old = written(&total);
    /* a rewrite of another plan (seed 1) that runs out of space halfway through the ranks */
    cr_assert_eq(plan("1", total / 2), 2);
    same_as(old);
    cr_assert_eq(plan("1", -1), 0);
    long total1;
    char **now = written(&total1);
    cr_assert(strcmp(now[5], old[5]), "seed 1 gives another plan");
    free_all(now);
    free_all(old);
    /* a new folder: it goes again */
    snprintf(pr, sizeof pr, "%s/fresh", test_tmpdir);
    cr_assert_eq(plan("0", total / 2), 2);
    int tmps;
    cr_assert_eq(entries(&tmps), -1, "the folder made by the failed command stays");
}

Test(per_rank, a_target_in_the_middle_cannot_be_written)
{
    cr_assert_eq(plan("0", -1), 0);
    long total;
    char **old = written(&total);
    /* rank 700 a folder: refused before any work */
    char keep[200];
    snprintf(keep, sizeof keep, "%s/rank700.keep", test_tmpdir);
    cr_assert_eq(rename(rank_path(700), keep), 0);
    cr_assert_eq(mkdir(rank_path(700), 0777), 0);
    cr_assert_eq(plan("1", -1), 2);
    cr_assert_eq(rmdir(rank_path(700)), 0);
    cr_assert_eq(rename(keep, rank_path(700)), 0);
    same_as(old);
    /* rank 900 a link to a file whose folder takes no new file (/proc, even for root) */
    if (access("/proc/version", R_OK) == 0) {
        cr_assert_eq(rename(rank_path(900), keep), 0);
        cr_assert_eq(symlink("/proc/version", rank_path(900)), 0);
        cr_assert_eq(plan("1", -1), 2);
        cr_assert_eq(unlink(rank_path(900)), 0);
        cr_assert_eq(rename(keep, rank_path(900)), 0);
        same_as(old);
    }
    free_all(old);
}
