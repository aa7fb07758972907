/* run_folder.c -- run folders under results/<testbed>/<UTC time>_<sha7>/ (see run_folder.h).
 *
 * A run folder is created once, with its meta.json (git sha and dirty flag, date, the
 * machine from ada_sysinfo(), the command line), and the command that made it then drops its
 * own files in (verify.json, bench.json, ...). Nothing here edits an existing folder: when
 * two runs start in the same second the second one gets a "-2" suffix instead.
 *
 * Git facts come from ADALOAD_GIT_SHA (and ADALOAD_GIT_DIRTY=0/1) when the caller exports
 * them (ci/device_run.sh does: the device machine's copy of the tree has no .git, or a .git
 * of an older commit), else from `git -C <root>` when <root>/.git exists (a directory, or a
 * file in a worktree); without either, the sha is "unknown" and the folder suffix "nogit".
 */
#define _GNU_SOURCE /* renameat2 (RENAME_NOREPLACE): publishing never replaces a folder */
#include "run_folder.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ada_cuda.h"
#include "ada_output.h"
#include "ada_util.h"
#include "build_info.h"
#include "catalog.h"
#include "kernel_hash_v2.h"
#include "run_meta.h"
#include "run_sysinfo.h"

#if ADALOAD_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* Lower-case ASCII slug: runs of anything but [a-z0-9] become one '-', no '-' at the ends.
 * Returns 0, or -1 when it does not fit (or would be empty). */
static int slugify(const char *in, char *out, size_t n)
{
    size_t k = 0;
    int dash = 0;
    for (const char *p = in; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c)) {
            if (dash && k > 0) {
                if (k + 1 >= n) return -1;
                out[k++] = '-';
            }
            dash = 0;
            if (k + 1 >= n) return -1;
            out[k++] = (char)tolower(c);
        } else {
            dash = 1;
        }
    }
    if (k == 0 || k >= n) return -1;
    out[k] = '\0';
    return 0;
}

int ada_run_testbed(char *buf, size_t n)
{
    if (!buf || n == 0) return -1;
#if ADALOAD_HAVE_CUDA
    if (ada_cuda_device_count() > 0) {
        struct cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) return slugify(p.name, buf, n);
        (void)cudaGetLastError();
    }
#endif
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0 || !host[0]) strcpy(host, "unknown");
    char slug[256];
    if (slugify(host, slug, sizeof slug) != 0) strcpy(slug, "unknown");
    int w = snprintf(buf, n, "cpu-%s", slug);
    return (w < 0 || (size_t)w >= n) ? -1 : 0;
}

/* Single-quotes s for /bin/sh into out ('\'' for an embedded quote). -1 if it does not fit. */
static int shell_quote(const char *s, char *out, size_t n)
{
    size_t k = 0;
    if (n < 3) return -1;
    out[k++] = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            if (k + 4 >= n) return -1;
            memcpy(out + k, "'\\''", 4);
            k += 4;
        } else {
            if (k + 1 >= n) return -1;
            out[k++] = *p;
        }
    }
    if (k + 2 > n) return -1;
    out[k++] = '\'';
    out[k] = '\0';
    return 0;
}

/* Runs `git -C <root> <args>` and returns the first line of its output in out (trailing
 * newline removed), and in *any_output whether it printed anything. -1 if git failed. */
static int git_line(const char *root, const char *args, char *out, size_t n, int *any_output)
{
    char q[4200], cmd[4400];
    if (shell_quote(root, q, sizeof q) != 0) return -1;
    snprintf(cmd, sizeof cmd, "git -C %s %s 2>/dev/null", q, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    out[0] = '\0';
    int any = 0;
    char line[512];
    while (fgets(line, sizeof line, p)) {
        if (!any) {
            snprintf(out, n, "%s", line);
            out[strcspn(out, "\r\n")] = '\0';
        }
        any = 1;
    }
    int st = pclose(p);
    if (any_output) *any_output = any;
    return st == 0 ? 0 : -1;
}

typedef struct {
    char sha[64];    /* full sha or "unknown" */
    int dirty;       /* 1, 0, or -1 unknown */
    const char *source; /* "git", "env", "none" */
} git_facts;

static void git_info(const char *root, git_facts *g)
{
    strcpy(g->sha, "unknown");
    g->dirty = -1;
    g->source = "none";
    /* An explicit ADALOAD_GIT_SHA wins: the device machine's copy of the tree may carry a
     * .git of an older commit (the one its session started from), whose HEAD and status
     * would name the wrong code. */
    const char *e = getenv("ADALOAD_GIT_SHA");
    if (e && strlen(e) >= 7) {
        snprintf(g->sha, sizeof g->sha, "%.63s", e);
        g->source = "env";
        const char *dty = getenv("ADALOAD_GIT_DIRTY");
        if (dty && (!strcmp(dty, "1") || !strcmp(dty, "true"))) g->dirty = 1;
        else if (dty && (!strcmp(dty, "0") || !strcmp(dty, "false"))) g->dirty = 0;
        return;
    }
    char dotgit[4200];
    snprintf(dotgit, sizeof dotgit, "%s/.git", root);
    struct stat st;
    if (stat(dotgit, &st) == 0) {
        char sha[128];
        if (git_line(root, "rev-parse HEAD", sha, sizeof sha, NULL) == 0 && strlen(sha) >= 7) {
            snprintf(g->sha, sizeof g->sha, "%.63s", sha);
            g->source = "git";
            char first[512];
            int any = 0;
            /* The index is the tool's own ledger (every run appends to it): a line added
             * tonight does not make the next run of the night "dirty". */
            if (git_line(root, "status --porcelain --untracked-files=no -- . "
                               "':(exclude)results/index.jsonl'", first, sizeof first, &any) == 0)
                g->dirty = any;
        }
    }
}

static json_t *meta_object(const char *root, const char *cmdline, const char *testbed, const char *kind)
{
    git_facts g;
    git_info(root, &g);
    char date[32];
    ada_utc_iso(date, sizeof date);
    json_t *m = json_object();
    json_object_set_new(m, "schema", json_string("adaload.meta/1"));
    json_object_set_new(m, "date", json_string(date));
    json_object_set_new(m, "git_sha", json_string(g.sha));
    json_object_set_new(m, "git_dirty", g.dirty < 0 ? json_null() : json_boolean(g.dirty));
    json_object_set_new(m, "git_source", json_string(g.source));
    if (testbed) json_object_set_new(m, "testbed", json_string(testbed));
    if (kind) json_object_set_new(m, "kind", json_string(kind));
    json_object_set_new(m, "command_line", json_string(cmdline ? cmdline : ""));
    json_object_set_new(m, "kernel_hash_v1", json_string(ADALOAD_KERNEL_HASH));
    json_object_set_new(m, "kernel_hash_v2", json_string(ADALOAD_KERNEL_HASH_V2));
    json_t *sys = ada_sysinfo();
    json_object_set_new(m, "fingerprint", ada_run_fp_json(sys)); /* the machine (run_meta.h) */
    json_object_set_new(m, "sysinfo", sys);
    return m;
}

int ada_run_write_meta(const char *dir, const char *root, const char *cmdline)
{
    if (!dir || !root) {
        errno = EINVAL;
        return -1;
    }
    char tb[128];
    if (ada_run_testbed(tb, sizeof tb) != 0) strcpy(tb, "unknown");
    json_t *m = meta_object(root, cmdline, tb, NULL);
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    int rc = ada_write_json_atomic(path, m);
    json_decref(m);
    return rc;
}

/* The pid of a staging folder's name ".<name>.partial.<pid>", or -1 when name is not one;
 * *stem_len gets the length of <name>. */
static long staging_pid(const char *name, size_t *stem_len)
{
    static const char mark[] = ".partial.";
    const char *m = name[0] == '.' ? strstr(name + 1, mark) : NULL;
    if (!m || m == name + 1) return -1;
    for (const char *q; (q = strstr(m + 1, mark));) m = q; /* the last one */
    const char *d = m + sizeof mark - 1;
    if (!*d || strspn(d, "0123456789") != strlen(d) || strlen(d) > 9) return -1;
    if (stem_len) *stem_len = (size_t)(m - name - 1);
    return strtol(d, NULL, 10);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Removes the folder dir and everything in it (links are removed, not followed). */
static int remove_tree(const char *dir) { return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* Removes the staging folders in parent whose process no longer exists (kill -9); a live
 * one, this process's own, or one whose pid cannot be judged (EPERM) is left alone. */
static void sweep_staging(const char *parent)
{
    DIR *d = opendir(parent);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        long pid = staging_pid(e->d_name, NULL);
        if (pid <= 0 || pid > INT_MAX || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char full[4600];
        if (snprintf(full, sizeof full, "%s/%s", parent, e->d_name) < (int)sizeof full) remove_tree(full);
    }
    closedir(d);
}

int ada_run_new(const char *root, const char *testbed, const char *kind, const char *cmdline,
                char *dir_out, size_t n)
{
    ada_run_spec sp = {.source = root, .testbed = testbed, .kind = kind, .cmdline = cmdline};
    return ada_run_stage(&sp, dir_out, n);
}

int ada_run_stage(const ada_run_spec *sp, char *dir_out, size_t n)
{
    const char *root = sp ? sp->source : NULL, *testbed = sp ? sp->testbed : NULL, *kind = sp ? sp->kind : NULL;
    if (!root || !testbed || !kind || !dir_out || n == 0 || !*testbed || strchr(testbed, '/') || testbed[0] == '.' ||
        !cat_is_kind(kind) || sp->owner_pid < 0 || sp->owner_pid > INT_MAX) {
        errno = EINVAL;
        return -1;
    }
    long owner = sp->owner_pid ? sp->owner_pid : (long)getpid();
    git_facts g;
    git_info(root, &g);
    char sha7[8];
    if (strcmp(g.sha, "unknown") != 0) snprintf(sha7, sizeof sha7, "%.7s", g.sha);
    else strcpy(sha7, "nogit");

    char parent[4200];
    int pw = sp->results ? snprintf(parent, sizeof parent, "%s/%s/%s", sp->results, testbed, kind)
                         : snprintf(parent, sizeof parent, "%s/results/%s/%s", root, testbed, kind);
    if (pw < 0 || pw >= (int)sizeof parent) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (ada_mkdirs(parent) != 0) return -1;
    sweep_staging(parent);

    /* The folder name is the UTC time without ':' (portable file names). */
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H%M%SZ", &tm);

    /* A name neither published nor staged yet; the staging folder holds it until publish. */
    char name[64], dir[4400];
    int made = 0;
    for (int k = 1; k <= 99 && !made; k++) {
        if (k == 1) snprintf(name, sizeof name, "%s_%s", stamp, sha7);
        else snprintf(name, sizeof name, "%s_%s-%d", stamp, sha7, k);
        int w = snprintf(dir, sizeof dir, "%s/%s", parent, name);
        struct stat st;
        if (w > 0 && (size_t)w < sizeof dir && lstat(dir, &st) == 0) continue;
        w = snprintf(dir, sizeof dir, "%s/.%s.partial.%ld", parent, name, owner);
        if (w < 0 || (size_t)w >= sizeof dir || (size_t)w >= n) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (mkdir(dir, 0777) == 0) made = 1;
        else if (errno != EEXIST) return -1;
    }
    if (!made) {
        errno = EEXIST;
        return -1;
    }
    if (owner == (long)getpid()) ada_output_own_dir(dir); /* a signal removes it while it is unfinished */

    json_t *m = meta_object(root, sp->cmdline, testbed, kind);
    char path[4500];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    int rc = ada_write_json_atomic(path, m);
    json_decref(m);
    if (rc != 0) {
        int e = errno;
        ada_run_discard(dir); /* never leave a folder without its meta.json */
        errno = e;
        return -1;
    }
    snprintf(dir_out, n, "%s", dir);
    return 0;
}

int ada_run_publish(const char *staging, char *dir_out, size_t n)
{
    char from[4400];
    size_t stem = 0;
    const char *slash = staging ? strrchr(staging, '/') : NULL;
    if (!slash || snprintf(from, sizeof from, "%s", staging) >= (int)sizeof from || staging_pid(slash + 1, &stem) < 0 ||
        !dir_out || n == 0) {
        errno = EINVAL;
        return -1;
    }
    int plen = (int)(slash - staging);
    const char *name = from + plen + 2;
    char to[4400];
    for (int k = 1; k <= 99; k++) {
        int w = (k == 1) ? snprintf(to, sizeof to, "%.*s/%.*s", plen, from, (int)stem, name)
                         : snprintf(to, sizeof to, "%.*s/%.*s-%d", plen, from, (int)stem, name, k);
        if (w < 0 || (size_t)w >= sizeof to || (size_t)w >= n) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int r = renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
        if (r != 0 && errno == EINVAL) { /* a file system without the flag: look, then rename */
            struct stat st;
            if (lstat(to, &st) == 0) errno = EEXIST;
            else r = rename(from, to);
        }
        if (r == 0) {
            ada_output_disown_dir(from);
            snprintf(dir_out, n, "%s", to);
            return 0;
        }
        if (errno != EEXIST && errno != ENOTEMPTY) return -1;
    }
    errno = EEXIST;
    return -1;
}

int ada_run_discard(const char *staging)
{
    const char *slash = staging ? strrchr(staging, '/') : NULL;
    if (!slash || staging_pid(slash + 1, NULL) < 0) {
        errno = EINVAL;
        return -1;
    }
    int rc = remove_tree(staging);
    int e = errno;
    ada_output_disown_dir(staging);
    if (rc != 0 && e == ENOENT) return 0; /* already gone */
    errno = e;
    return rc == 0 ? 0 : -1;
}

int ada_run_index(const char *root, const char *dir, char *err, size_t n)
{
    char results[4200];
    snprintf(results, sizeof results, "%s/results", root);
    return ada_run_index_in(results, dir, err, n);
}

int ada_run_index_in(const char *results, const char *dir, char *err, size_t n)
{
    char rel[4200];
    if (cat_relpath(results, dir, rel, sizeof rel) != CAT_OK) return 1;
    return cat_append(results, rel, err, n) == CAT_OK ? 0 : -1;
}

int ada_run_finish(const char *results, char *dir, size_t n, char *err, size_t en)
{
    char staging[4400];
    snprintf(staging, sizeof staging, "%s", dir);
    if (ada_run_publish(staging, dir, n) != 0) {
        int e = errno;
        snprintf(err, en, "%s: cannot publish the run: %s", staging, strerror(e));
        if (e != EINVAL) ada_run_discard(staging);
        errno = e;
        return -1;
    }
    char ierr[1024] = "";
    if (ada_run_index_in(results, dir, ierr, sizeof ierr) < 0) {
        snprintf(err, en, "%s: the run is written but not indexed: %s (adaload results index rebuilds it)", dir, ierr);
        return 1;
    }
    return 0;
}

json_t *ada_run_meta_with_copy(const char *dir, const ada_bench_set *s)
{
    ada_run_fp fp = {0};
    ada_run_fp_copy(&fp, s);
    if (!(fp.copy_gbps > 0)) return NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    json_t *m = json_load_file(path, 0, NULL);
    json_t *f = json_object_get(m, "fingerprint");
    if (!json_is_object(f) || json_object_set_new(f, "copy_gbps", json_real(fp.copy_gbps))) {
        json_decref(m);
        return NULL;
    }
    return m;
}
