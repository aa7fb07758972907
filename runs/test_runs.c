/* test_runs.c -- Criterion tests of the run folders (run_folder.c): the testbed slug, a new
 * run folder with its meta.json (git facts from the environment when the tree has no .git),
 * two runs in the same second getting distinct folders, and refusal of bad arguments. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "ada_output.h"
#include "run_folder.h"

static char root[256];

static void make_root(void)
{
    snprintf(root, sizeof root, "/tmp/adaload_test_results_XXXXXX");
    cr_assert_not_null(mkdtemp(root));
}

static void remove_root(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(results, .init = make_root, .fini = remove_root);

Test(results, testbed_is_a_slug)
{
    char tb[128];
    cr_assert_eq(ada_run_testbed(tb, sizeof tb), 0);
    cr_expect(strlen(tb) > 0);
    for (const char *p = tb; *p; p++)
        cr_expect((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-',
                  "'%c' in testbed '%s'", *p, tb);
    cr_expect(tb[0] != '-' && tb[strlen(tb) - 1] != '-');
    char tiny[3];
    cr_expect_eq(ada_run_testbed(tiny, sizeof tiny), -1, "too small a buffer is an error");
}

/* meta.json of run folder dir, parsed (fails the test when it cannot be read). */
static json_t *load_meta(const char *dir)
{
    char mp[1500];
    snprintf(mp, sizeof mp, "%s/meta.json", dir);
    json_error_t e;
    json_t *m = json_load_file(mp, 0, &e);
    cr_assert_not_null(m, "%s: %s", mp, e.text);
    return m;
}

Test(results, new_run_writes_meta_from_env_without_git)
{
    setenv("ADALOAD_GIT_SHA", "0123456789abcdef0123456789abcdef01234567", 1);
    setenv("ADALOAD_GIT_DIRTY", "1", 1);
    char dir[1024], dir2[1024];
    cr_assert_eq(ada_run_new(root, "nvidia-test", "bench", "adaload test --x", dir, sizeof dir), 0,
                 "errno %d", errno);
    cr_expect(strstr(dir, "/results/nvidia-test/bench/") != NULL, "%s", dir);
    cr_expect(strstr(dir, "_0123456") != NULL, "sha7 in the folder name: %s", dir);
    json_t *m = load_meta(dir);
    cr_expect_str_eq(json_string_value(json_object_get(m, "git_sha")),
                     "0123456789abcdef0123456789abcdef01234567");
    cr_expect(json_is_true(json_object_get(m, "git_dirty")));
    cr_expect_str_eq(json_string_value(json_object_get(m, "command_line")), "adaload test --x");
    cr_expect(json_is_object(json_object_get(m, "sysinfo")));
    cr_expect(json_is_string(json_object_get(m, "date")));
    cr_expect_eq(strlen(json_string_value(json_object_get(m, "kernel_hash_v2"))), 64);
    cr_expect_eq(strlen(json_string_value(json_object_get(m, "kernel_hash_v1"))), 64);
    json_decref(m);
    /* Finished (its bench.json written) and published, it goes into results/index.jsonl
     * once; a staging folder or a folder outside the layout does not. */
    char err[512], bj[1200];
    snprintf(bj, sizeof bj, "%s/bench.json", dir);
    FILE *f = fopen(bj, "w");
    cr_assert_not_null(f);
    fputs("{\"benchmarks\": []}\n", f);
    fclose(f);
    cr_expect_eq(ada_run_index(root, dir, err, sizeof err), -1, "a staging folder is not a run");
    cr_assert_eq(ada_run_publish(dir, dir, sizeof dir), 0, "errno %d", errno);
    cr_assert_eq(ada_run_index(root, dir, err, sizeof err), 0, "%s", err);
    cr_expect_eq(ada_run_index(root, dir, err, sizeof err), -1, "indexed twice");
    cr_expect_eq(ada_run_index(root, root, err, sizeof err), 1, "not a run folder of the layout");
    char idx[1200];
    snprintf(idx, sizeof idx, "%s/results/index.jsonl", root);
    json_t *lines = json_load_file(idx, JSON_DISABLE_EOF_CHECK, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(lines, "kind")), "bench");
    json_decref(lines);
    /* A second run right away gets its own folder: a run folder is never reused. */
    cr_assert_eq(ada_run_new(root, "nvidia-test", "bench", "again", dir2, sizeof dir2), 0);
    cr_assert_eq(ada_run_publish(dir2, dir2, sizeof dir2), 0, "errno %d", errno);
    cr_expect_str_neq(dir, dir2);
    unsetenv("ADALOAD_GIT_SHA");
    unsetenv("ADALOAD_GIT_DIRTY");
}

/* The device machine's copy of the tree can hold a .git of an older commit: an exported
 * ADALOAD_GIT_SHA must win over what git says there. */
Test(results, exported_sha_wins_over_a_git_checkout)
{
    char repo[1100], cmd[3400];
    snprintf(repo, sizeof repo, "%s/repo", root);
    snprintf(cmd, sizeof cmd,
             "git init -q '%s' && git -C '%s' -c user.name=t -c user.email=t@t "
             "commit -q --allow-empty -m old >/dev/null 2>&1",
             repo, repo);
    if (system(cmd) != 0) cr_skip_test("git is not usable here");
    setenv("ADALOAD_GIT_SHA", "fedcba9876543210fedcba9876543210fedcba98", 1);
    setenv("ADALOAD_GIT_DIRTY", "0", 1);
    char dir[1400];
    cr_assert_eq(ada_run_new(repo, "nvidia-test", "bench", "x", dir, sizeof dir), 0);
    cr_expect(strstr(dir, "_fedcba9") != NULL, "the exported sha names the folder: %s", dir);
    json_t *m = load_meta(dir);
    cr_expect_str_eq(json_string_value(json_object_get(m, "git_sha")),
                     "fedcba9876543210fedcba9876543210fedcba98");
    cr_expect_str_eq(json_string_value(json_object_get(m, "git_source")), "env");
    cr_expect(json_is_false(json_object_get(m, "git_dirty")));
    json_decref(m);
    unsetenv("ADALOAD_GIT_SHA");
    unsetenv("ADALOAD_GIT_DIRTY");
    /* Without the variable the checkout's own HEAD is used. */
    cr_assert_eq(ada_run_new(repo, "nvidia-test", "bench", "y", dir, sizeof dir), 0);
    m = load_meta(dir);
    cr_expect_str_eq(json_string_value(json_object_get(m, "git_source")), "git");
    cr_expect_str_neq(json_string_value(json_object_get(m, "git_sha")),
                      "fedcba9876543210fedcba9876543210fedcba98");
    json_decref(m);
}

Test(results, bad_arguments_fail_cleanly)
{
    char dir[1024];
    cr_expect_eq(ada_run_new(root, "a/b", "bench", "", dir, sizeof dir), -1, "testbed with '/'");
    cr_expect_eq(ada_run_new(root, "", "bench", "", dir, sizeof dir), -1, "empty testbed");
    cr_expect_eq(ada_run_new(root, "tb", "benchmarks", "", dir, sizeof dir), -1, "not a kind of run");
    char small[8];
    cr_expect_eq(ada_run_new(root, "tb", "bench", "", small, sizeof small), -1, "dir_out too small");
    cr_expect_eq(ada_run_new("/proc/definitely/not/writable", "tb", "bench", "", dir, sizeof dir), -1);
}

/* The tool's own append to the tracked results/index.jsonl is not a change of the code: a
 * run after it is not git_dirty; an edit of another tracked file is. */
Test(results, index_append_is_not_dirt)
{
    unsetenv("ADALOAD_GIT_SHA");
    unsetenv("ADALOAD_GIT_DIRTY");
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && git init -q . && mkdir -p results && echo '{}' > results/index.jsonl && echo a > code.c && "
             "git add . && git -c user.name=t -c user.email=t@t commit -qm init && echo '{\"x\":1}' >> results/index.jsonl",
             root);
    cr_assert_eq(system(cmd), 0, "git set-up failed");
    char dir[1024];
    ada_run_spec sp = {.source = root, .testbed = "tb", .kind = "bench", .cmdline = "t"};
    cr_assert_eq(ada_run_stage(&sp, dir, sizeof dir), 0, "errno %d", errno);
    json_t *m = load_meta(dir);
    cr_expect(json_is_false(json_object_get(m, "git_dirty")), "an appended index line made the run dirty");
    cr_expect_str_eq(json_string_value(json_object_get(m, "kind")), "bench");
    json_decref(m);
    cr_expect_eq(ada_run_discard(dir), 0);
    snprintf(cmd, sizeof cmd, "echo b >> '%s/code.c'", root);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(ada_run_stage(&sp, dir, sizeof dir), 0, "errno %d", errno);
    m = load_meta(dir);
    cr_expect(json_is_true(json_object_get(m, "git_dirty")), "an edited tracked file must make the run dirty");
    json_decref(m);
    cr_expect_eq(ada_run_discard(dir), 0);
}

/* A staging folder of another live process (a script's, `adaload results new --owner-pid`)
 * carries that pid and is not swept while it lives; results= puts it where asked. */
Test(results, staged_for_an_owner_elsewhere)
{
    setenv("ADALOAD_GIT_SHA", "0123456789abcdef0123456789abcdef01234567", 1);
    char res[600], dir[1024], other[1024];
    snprintf(res, sizeof res, "%s/elsewhere", root);
    cr_assert_eq(mkdir(res, 0777), 0);
    ada_run_spec sp = {.source = root, .results = res, .testbed = "tb", .kind = "planner", .cmdline = "t",
                       .owner_pid = (long)getppid()};
    cr_assert_eq(ada_run_stage(&sp, dir, sizeof dir), 0, "errno %d", errno);
    char want[700];
    snprintf(want, sizeof want, "%s/tb/planner/.", res);
    cr_expect(!strncmp(dir, want, strlen(want)), "%s", dir);
    char pid[32];
    snprintf(pid, sizeof pid, ".partial.%ld", (long)getppid());
    cr_expect(strstr(dir, pid) != NULL, "%s", dir);
    sp.owner_pid = 0;
    cr_assert_eq(ada_run_stage(&sp, other, sizeof other), 0); /* sweeps the parent */
    struct stat st;
    cr_expect_eq(stat(dir, &st), 0, "a live owner's staging folder was swept");
    char err[1500], bj[1100];
    snprintf(bj, sizeof bj, "%s/bench.json", dir);
    FILE *f = fopen(bj, "w");
    cr_assert_not_null(f);
    fputs("{\"context\": {}, \"benchmarks\": []}\n", f);
    fclose(f);
    cr_expect_eq(ada_run_finish(res, dir, sizeof dir, err, sizeof err), 0, "%s", err);
    cr_expect(strstr(dir, "/.") == NULL, "published: %s", dir);
    cr_expect_eq(ada_run_discard(other), 0);
    sp.owner_pid = -3;
    cr_expect_eq(ada_run_stage(&sp, other, sizeof other), -1);
}
