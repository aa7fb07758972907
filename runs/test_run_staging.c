/* test_run_staging.c -- Criterion tests of staged run folders (run_folder.h): a run killed
 * with SIGKILL leaves no visible run folder, only its staging folder, which the next
 * ada_run_new in that parent removes; a staging folder of a live process survives; publish
 * gives the final name with meta.json intact and never replaces a folder; a signal removes
 * an unfinished staging folder; the catalog ignores staging folders. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "ada_output.h"
#include "catalog.h"
#include "run_folder.h"

static char root[256], parent[512];

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/adaload_test_staging_XXXXXX");
    cr_assert_not_null(mkdtemp(root));
    snprintf(parent, sizeof parent, "%s/results/tb/bench", root);
    setenv("ADALOAD_GIT_SHA", "0123456789abcdef0123456789abcdef01234567", 1);
    setenv("ADALOAD_GIT_DIRTY", "0", 1);
}

static void teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(staging, .init = setup, .fini = teardown);

/* Entries of parent: how many are visible (no leading '.'), how many hidden; the first
 * visible / hidden name into vis / hid. */
static void count(int *visible, int *hidden, char *vis, char *hid)
{
    *visible = *hidden = 0;
    DIR *d = opendir(parent);
    cr_assert_not_null(d, "%s: %s", parent, strerror(errno));
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        int h = e->d_name[0] == '.';
        char *into = h ? hid : vis;
        if (into && (h ? *hidden : *visible) == 0) snprintf(into, 256, "%s", e->d_name);
        if (h) (*hidden)++;
        else (*visible)++;
    }
    closedir(d);
}

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* A child that creates a run folder, with write_more a file of its own in it, and dies by
 * sig; its pid. */
static pid_t run_and_die(int sig, int write_more)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        char dir[1024], p[1100];
        if (ada_run_new(root, "tb", "bench", "child", dir, sizeof dir) != 0) _exit(3);
        snprintf(p, sizeof p, "%s/bench.json", dir);
        FILE *f = write_more ? fopen(p, "w") : NULL;
        if (f) fclose(f);
        raise(sig);
        _exit(4);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == sig, "the child died by signal %d (status %d)", sig, st);
    return pid;
}

Test(staging, sigkill_leaves_only_a_staging_folder_which_the_next_run_sweeps)
{
    pid_t pid = run_and_die(SIGKILL, 1);
    int vis, hid;
    char hname[256] = "";
    count(&vis, &hid, NULL, hname);
    cr_assert_eq(vis, 0, "no visible run folder after kill -9");
    cr_assert_eq(hid, 1, "its staging folder is there");
    char want[64];
    snprintf(want, sizeof want, ".partial.%ld", (long)pid);
    cr_expect(strstr(hname, want) != NULL, "%s names the dead pid %ld", hname, (long)pid);

    /* The next run in that parent removes it (its process is gone). */
    char dir[1024], stale[1024];
    snprintf(stale, sizeof stale, "%s/%s", parent, hname);
    cr_assert_eq(ada_run_new(root, "tb", "bench", "next", dir, sizeof dir), 0, "errno %d", errno);
    cr_expect(!exists(stale), "the stale staging folder %s is swept", stale);
    cr_expect(exists(dir), "the new staging folder %s", dir);
    cr_expect_eq(ada_run_discard(dir), 0);
    count(&vis, &hid, NULL, NULL);
    cr_expect_eq(vis + hid, 0, "discard leaves nothing");
}

Test(staging, a_live_processes_staging_folder_survives_the_sweep)
{
    pid_t live = fork();
    cr_assert(live >= 0);
    if (live == 0) {
        pause();
        _exit(0);
    }
    char mine[1024], meta[1100], dir[1024];
    cr_assert_eq(ada_mkdirs(parent), 0);
    snprintf(mine, sizeof mine, "%s/.2026-01-01T000000Z_0123456.partial.%ld", parent, (long)live);
    cr_assert_eq(mkdir(mine, 0777), 0);
    snprintf(meta, sizeof meta, "%s/meta.json", mine);
    FILE *f = fopen(meta, "w");
    cr_assert_not_null(f);
    fputs("{}\n", f);
    fclose(f);
    cr_assert_eq(ada_run_new(root, "tb", "bench", "x", dir, sizeof dir), 0);
    int alive = exists(meta);
    kill(live, SIGKILL);
    waitpid(live, NULL, 0);
    cr_expect(alive, "the staging folder of live pid %ld was removed", (long)live);
    /* Once that process is gone, the next run removes it. */
    char dir2[1024];
    cr_assert_eq(ada_run_new(root, "tb", "bench", "y", dir2, sizeof dir2), 0);
    cr_expect(!exists(mine), "swept once its process is gone");
    cr_expect(exists(dir), "this process's own staging folder is never swept");
}

Test(staging, publish_gives_the_final_name_with_meta_intact)
{
    char dir[1024], staged[1024], bj[1100];
    cr_assert_eq(ada_run_new(root, "tb", "bench", "adaload bench --x", dir, sizeof dir), 0);
    snprintf(staged, sizeof staged, "%s", dir);
    const char *base = strrchr(dir, '/') + 1;
    cr_expect_eq(base[0], '.', "staged under a hidden name: %s", base);
    cr_expect(strstr(base, ".partial.") != NULL, "%s", base);
    snprintf(bj, sizeof bj, "%s/bench.json", dir);
    FILE *f = fopen(bj, "w");
    cr_assert_not_null(f);
    fputs("{\"benchmarks\": []}\n", f);
    fclose(f);
    int vis, hid;
    count(&vis, &hid, NULL, NULL);
    cr_expect_eq(vis, 0, "nothing visible before publish");

    cr_assert_eq(ada_run_publish(dir, dir, sizeof dir), 0, "errno %d", errno);
    cr_expect(!exists(staged), "the staging name is gone");
    base = strrchr(dir, '/') + 1;
    cr_expect_neq(base[0], '.', "%s", base);
    cr_expect(strstr(base, ".partial") == NULL, "%s", base);
    cr_expect(strstr(base, "_0123456") != NULL && strlen(base) == strlen("2026-01-01T000000Z_0123456"), "%s", base);
    char mp[1100];
    snprintf(mp, sizeof mp, "%s/meta.json", dir);
    json_error_t e;
    json_t *m = json_load_file(mp, 0, &e);
    cr_assert_not_null(m, "%s: %s", mp, e.text);
    cr_expect_str_eq(json_string_value(json_object_get(m, "command_line")), "adaload bench --x");
    cr_expect_str_eq(json_string_value(json_object_get(m, "git_sha")), "0123456789abcdef0123456789abcdef01234567");
    json_decref(m);
    snprintf(bj, sizeof bj, "%s/bench.json", dir);
    cr_expect(exists(bj));
    count(&vis, &hid, NULL, NULL);
    cr_expect_eq(vis, 1);
    cr_expect_eq(hid, 0);
    /* Not a staging folder: refused, left as it is. */
    errno = 0;
    cr_expect_eq(ada_run_publish(dir, dir, sizeof dir), -1);
    cr_expect_eq(errno, EINVAL);
    cr_expect_eq(ada_run_discard(dir), -1, "discard refuses a published run folder");
    cr_expect(exists(bj));
}

Test(staging, publish_never_replaces_a_folder_not_even_an_empty_one)
{
    char dir[1024], taken[1100];
    cr_assert_eq(ada_run_new(root, "tb", "bench", "x", dir, sizeof dir), 0);
    /* The final name, taken meanwhile by an empty folder. */
    const char *base = strrchr(dir, '/') + 2;
    snprintf(taken, sizeof taken, "%s/%.*s", parent, (int)(strstr(base, ".partial.") - base), base);
    cr_assert_eq(mkdir(taken, 0777), 0, "%s", taken);
    cr_assert_eq(ada_run_publish(dir, dir, sizeof dir), 0, "errno %d", errno);
    char want[1200];
    snprintf(want, sizeof want, "%s-2", taken);
    cr_expect_str_eq(dir, want);
    char mp[1300];
    snprintf(mp, sizeof mp, "%s/meta.json", taken);
    cr_expect(!exists(mp), "the folder that was there is untouched (still empty)");
    cr_expect_eq(rmdir(taken), 0, "and still empty");
}

Test(staging, a_signal_removes_the_unfinished_staging_folder)
{
    run_and_die(SIGTERM, 0);
    int vis, hid;
    count(&vis, &hid, NULL, NULL);
    cr_expect_eq(vis, 0, "no run folder");
    cr_expect_eq(hid, 0, "no staging folder either");
}

Test(staging, the_catalog_ignores_staging_folders)
{
    char dir[1024], err[512], bj[1100];
    cr_assert_eq(ada_run_new(root, "tb", "bench", "done", dir, sizeof dir), 0);
    snprintf(bj, sizeof bj, "%s/bench.json", dir);
    FILE *f = fopen(bj, "w");
    cr_assert_not_null(f);
    fputs("{\"benchmarks\": []}\n", f);
    fclose(f);
    cr_assert_eq(ada_run_publish(dir, dir, sizeof dir), 0);
    cr_assert_eq(ada_run_index(root, dir, err, sizeof err), 0, "%s", err);
    char live[1024];
    cr_assert_eq(ada_run_new(root, "tb", "bench", "running", live, sizeof live), 0); /* this process: live */
    run_and_die(SIGKILL, 1);                                                         /* a stale one */
    int vis, hid;
    count(&vis, &hid, NULL, NULL);
    cr_assert_eq(vis, 1);
    cr_assert_eq(hid, 2, "a live and a stale staging folder");

    char results[600];
    snprintf(results, sizeof results, "%s/results", root);
    cat_catalog c = {0};
    cr_assert_eq(cat_scan(results, &c, err, sizeof err), CAT_OK, "%s", err);
    cr_expect_eq(c.n, 1, "only the published run is a run");
    cat_free(&c);
    char *report = NULL;
    cat_status s = cat_check(results, &report, err, sizeof err);
    cr_expect_eq(s, CAT_OK, "check: %s %s", err, report ? report : "");
    free(report);
    cr_expect_eq(ada_run_discard(live), 0);
}
