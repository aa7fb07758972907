/* results_stub.c -- TEMPORARY stand-in for harness/results.c (the verify helper's), so the
 * bench branch links on its own. Delete this file on merge. The definitions are weak: a
 * real results.c in the same program replaces them without a link error.
 * Minimal: testbed "cpu-<host>" or the GPU name slug; folder <root>/results/<testbed>/
 * <UTC time>_<sha7 or nogit>/ with a meta.json of ada_sysinfo() and the command line. */
#include "results.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

__attribute__((weak)) int ada_results_testbed(char *buf, size_t n)
{
    json_t *info = ada_sysinfo();
    json_t *dev = json_array_get(json_object_get(json_object_get(info, "cuda"), "devices"), 0);
    const char *name = json_string_value(json_object_get(dev, "name"));
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    char raw[256];
    snprintf(raw, sizeof raw, name ? "%s" : "cpu-%s", name ? name : host);
    json_decref(info);
    size_t k = 0;
    for (const char *p = raw; *p && k + 1 < n; p++)
        buf[k++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '-';
    if (k == 0 || k + 1 >= n) return -1;
    buf[k] = '\0';
    return 0;
}

__attribute__((weak)) int ada_results_write_meta(const char *dir, const char *cmdline)
{
    json_t *m = json_object();
    char date[32], p[4096];
    ada_utc_iso(date, sizeof date);
    const char *sha = getenv("ADALOAD_GIT_SHA");
    json_object_set_new(m, "git_sha", json_string(sha ? sha : "unknown"));
    json_object_set_new(m, "date", json_string(date));
    json_object_set_new(m, "command_line", json_string(cmdline ? cmdline : ""));
    json_object_set_new(m, "machine", ada_sysinfo());
    snprintf(p, sizeof p, "%s/meta.json", dir);
    int rc = ada_write_json_atomic(p, m);
    json_decref(m);
    return rc;
}

__attribute__((weak)) int ada_results_new_run(const char *root, const char *testbed,
                                              const char *cmdline, char *dir_out, size_t n)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H%M%SZ", &tm);
    const char *sha = getenv("ADALOAD_GIT_SHA");
    int w = snprintf(dir_out, n, "%s/results/%s/%s_%.7s", root, testbed, stamp, sha ? sha : "nogit");
    if (w < 0 || (size_t)w >= n || ada_mkdirs(dir_out)) return -1;
    return ada_results_write_meta(dir_out, cmdline);
}
