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
#include "run_folder.h"

#include <ctype.h>
#include <errno.h>
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
            if (git_line(root, "status --porcelain --untracked-files=no", first, sizeof first,
                         &any) == 0)
                g->dirty = any;
        }
    }
}

static json_t *meta_object(const char *root, const char *cmdline, const char *testbed)
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
    json_object_set_new(m, "command_line", json_string(cmdline ? cmdline : ""));
    json_object_set_new(m, "kernel_source_hash", json_string(ADALOAD_KERNEL_HASH));
    json_object_set_new(m, "kernel_source_hash_v2", json_string(ADALOAD_KERNEL_HASH_V2));
    json_object_set_new(m, "sysinfo", ada_sysinfo());
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
    json_t *m = meta_object(root, cmdline, tb);
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    int rc = ada_write_json_atomic(path, m);
    json_decref(m);
    return rc;
}

int ada_run_new(const char *root, const char *testbed, const char *kind, const char *cmdline,
                char *dir_out, size_t n)
{
    if (!root || !testbed || !kind || !dir_out || n == 0 || !*testbed || strchr(testbed, '/') ||
        !cat_is_kind(kind)) {
        errno = EINVAL;
        return -1;
    }
    git_facts g;
    git_info(root, &g);
    char sha7[8];
    if (strcmp(g.sha, "unknown") != 0) snprintf(sha7, sizeof sha7, "%.7s", g.sha);
    else strcpy(sha7, "nogit");

    char parent[4200];
    if (snprintf(parent, sizeof parent, "%s/results/%s/%s", root, testbed, kind) >= (int)sizeof parent) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (ada_mkdirs(parent) != 0) return -1;

    /* The folder name is the UTC time without ':' (portable file names). */
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H%M%SZ", &tm);

    char dir[4400];
    int made = 0;
    for (int k = 1; k <= 99 && !made; k++) {
        int w = (k == 1) ? snprintf(dir, sizeof dir, "%s/%s_%s", parent, stamp, sha7)
                         : snprintf(dir, sizeof dir, "%s/%s_%s-%d", parent, stamp, sha7, k);
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

    json_t *m = meta_object(root, cmdline, testbed);
    char path[4500];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    int rc = ada_write_json_atomic(path, m);
    json_decref(m);
    if (rc != 0) {
        int e = errno;
        rmdir(dir); /* never leave a folder without its meta.json */
        errno = e;
        return -1;
    }
    snprintf(dir_out, n, "%s", dir);
    return 0;
}

int ada_run_index(const char *root, const char *dir, char *err, size_t n)
{
    char results[4200], rel[4200];
    snprintf(results, sizeof results, "%s/results", root);
    if (cat_relpath(results, dir, rel, sizeof rel) != CAT_OK) return 1;
    return cat_append(results, rel, err, n) == CAT_OK ? 0 : -1;
}
