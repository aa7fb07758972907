/* cmd_gate.c -- `adaload gate`: CI's proof that the kernel sources in this tree were verified
 * on a real GPU. CI machines have no GPU, so the proof is a committed record:
 *
 *   adaload gate [--results DIR] [--hash H]
 *
 * scans DIR/<testbed>/<run>/verify.json (DIR defaults to <source tree>/results) and passes
 * (exit 0) when one record has kernel_source_hash == H (default: the hash embedded in this
 * build, ADALOAD_KERNEL_HASH, i.e. of kernels/ as configured), backend "cuda", grid "full",
 * all_passed true, a non-empty case list with every case passing, and every sanitizer
 * verdict "clean". Otherwise exit 1, saying why for each record of this hash, or, when none
 * has it, the hash and the command that makes one. A record that is not valid JSON or lacks
 * the fields above fails the gate too (exit 1, naming the file): a broken record in the tree
 * is a bug. Exit 2 on bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "build_info.h"
#include "cli.h"
#include "commands.h"

#define CMD "gate"

static const char *const tools[4] = {"memcheck", "racecheck", "initcheck", "synccheck"};

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Sorted names in dir (no dot entries); count in *n. NULL with *n = 0 when unreadable. */
static struct dirent **list_dir(const char *dir, int *n)
{
    struct dirent **names = NULL;
    int k = scandir(dir, &names, NULL, alphasort);
    if (k < 0) {
        *n = 0;
        return NULL;
    }
    *n = k;
    return names;
}

static void free_list(struct dirent **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

/* Judges one parsed record against hash. Returns 1 (malformed: why in msg), 0 (has the
 * hash; *pass set, why in msg when not), or -1 (another hash). */
static int judge(json_t *rec, const char *hash, int *pass, char *msg, size_t n)
{
    *pass = 0;
    msg[0] = '\0';
    if (!json_is_object(rec)) return snprintf(msg, n, "not a JSON object"), 1;
    const char *schema = json_string_value(json_object_get(rec, "schema"));
    if (!schema || strcmp(schema, "adaload.verify/1") != 0)
        return snprintf(msg, n, "schema is not \"adaload.verify/1\""), 1;
    const char *h = json_string_value(json_object_get(rec, "kernel_source_hash"));
    if (!h) return snprintf(msg, n, "no kernel_source_hash string"), 1;
    json_t *cases = json_object_get(rec, "cases");
    json_t *san = json_object_get(rec, "sanitizers");
    json_t *all = json_object_get(rec, "all_passed");
    const char *grid = json_string_value(json_object_get(rec, "grid"));
    const char *backend = json_string_value(json_object_get(rec, "backend"));
    if (!json_is_array(cases)) return snprintf(msg, n, "no cases array"), 1;
    if (!json_is_object(san)) return snprintf(msg, n, "no sanitizers object"), 1;
    if (!json_is_boolean(all)) return snprintf(msg, n, "no all_passed boolean"), 1;
    if (!grid || !backend) return snprintf(msg, n, "no grid or backend string"), 1;
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        if (!json_is_boolean(json_object_get(c, "pass")))
            return snprintf(msg, n, "case %zu has no pass boolean", i), 1;
    }
    if (strcmp(h, hash) != 0) return -1;

    if (strcmp(backend, "cuda") != 0) return snprintf(msg, n, "backend is \"%s\", not a GPU run", backend), 0;
    if (strcmp(grid, "full") != 0) return snprintf(msg, n, "grid is \"%s\", the gate needs \"full\"", grid), 0;
    if (json_array_size(cases) == 0) return snprintf(msg, n, "no cases"), 0;
    json_array_foreach(cases, i, c) {
        if (!json_is_true(json_object_get(c, "pass"))) {
            const char *nr = json_string_value(json_object_get(c, "not_run"));
            return snprintf(msg, n, "case %zu (%s %s-%s-%s %s D=%lld rows=%lld) %s", i,
                            json_string_value(json_object_get(c, "variant")),
                            json_string_value(json_object_get(c, "x")),
                            json_string_value(json_object_get(c, "mod")),
                            json_string_value(json_object_get(c, "y")),
                            json_string_value(json_object_get(c, "layout")),
                            (long long)json_integer_value(json_object_get(c, "D")),
                            (long long)json_integer_value(json_object_get(c, "rows")),
                            nr ? nr : "failed"),
                   0;
        }
    }
    if (!json_is_true(all)) return snprintf(msg, n, "all_passed is false"), 0;
    for (int t = 0; t < 4; t++) {
        const char *v = json_string_value(json_object_get(san, tools[t]));
        if (!v || strcmp(v, "clean") != 0)
            return snprintf(msg, n, "sanitizer %s is \"%s\", not \"clean\"", tools[t], v ? v : "missing"), 0;
    }
    *pass = 1;
    return 0;
}

int cmd_gate(int argc, char **argv)
{
    const char *results = NULL, *hash = ADALOAD_KERNEL_HASH;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: adaload gate [--results DIR] [--hash H]\n"
                   "  Passes when DIR/<testbed>/<run>/verify.json holds a passing full-grid GPU record\n"
                   "  (every case passed, every sanitizer clean) for kernel source hash H.\n"
                   "  DIR defaults to <source tree>/results, H to this build's kernel hash.\n"
                   "exit: 0 a record passes, 1 none does (or a record is malformed), 2 bad usage\n");
            return ADA_EXIT_OK;
        } else if (!strcmp(argv[i], "--results") && i + 1 < argc) {
            results = argv[++i];
        } else if (!strcmp(argv[i], "--hash") && i + 1 < argc) {
            hash = argv[++i];
            if (strlen(hash) != 64 || strspn(hash, "0123456789abcdef") != 64)
                return ada_usage_error(CMD, "--hash needs 64 lower-case hex digits (a SHA-256), not '%s'", hash);
        } else if (!strcmp(argv[i], "--results") || !strcmp(argv[i], "--hash")) {
            return ada_usage_error(CMD, "option %s needs a value", argv[i]);
        } else {
            return ada_usage_error(CMD, "unknown argument '%s' (adaload gate --help)", argv[i]);
        }
    }
    char def[4200];
    if (!results) {
        snprintf(def, sizeof def, "%s/results", ada_source_dir());
        results = def;
    }

    int nrec = 0, nmatch = 0, passed = 0, malformed = 0;
    char pass_path[8600] = "";
    if (is_dir(results)) {
        int ntb = 0;
        struct dirent **tbs = list_dir(results, &ntb);
        for (int a = 0; a < ntb; a++) {
            if (tbs[a]->d_name[0] == '.') continue;
            char tbdir[4400];
            snprintf(tbdir, sizeof tbdir, "%.4000s/%.255s", results, tbs[a]->d_name);
            if (!is_dir(tbdir)) continue;
            int nrun = 0;
            struct dirent **runs = list_dir(tbdir, &nrun);
            for (int b = 0; b < nrun; b++) {
                if (runs[b]->d_name[0] == '.') continue;
                char path[8600];
                snprintf(path, sizeof path, "%.4400s/%.200s/verify.json", tbdir, runs[b]->d_name);
                struct stat st;
                if (stat(path, &st) != 0) continue;
                nrec++;
                json_error_t jerr;
                json_t *rec = json_load_file(path, 0, &jerr);
                char msg[512];
                if (!rec) {
                    ada_msg(CMD, "%s: malformed record: %s (line %d)", path, jerr.text, jerr.line);
                    malformed++;
                    continue;
                }
                int pass = 0;
                int r = judge(rec, hash, &pass, msg, sizeof msg);
                json_decref(rec);
                if (r == 1) {
                    ada_msg(CMD, "%s: malformed record: %s", path, msg);
                    malformed++;
                } else if (r == 0) {
                    nmatch++;
                    if (pass) {
                        passed++;
                        if (!pass_path[0]) snprintf(pass_path, sizeof pass_path, "%s", path);
                    } else {
                        ada_msg(CMD, "%s: same kernel sources, not counted: %s", path, msg);
                    }
                }
            }
            free_list(runs, nrun);
        }
        free_list(tbs, ntb);
    }

    if (malformed) {
        ada_msg(CMD, "FAIL: %d malformed verification record(s) under %s", malformed, results);
        return ADA_EXIT_FAIL;
    }
    if (passed) {
        printf("adaload gate: ok: %s is a passing GPU verification of kernel sources %s\n", pass_path, hash);
        return ADA_EXIT_OK;
    }
    if (nmatch == 0) {
        ada_msg(CMD,
                "FAIL: no verification record for kernel sources %s (%d record(s) under %s, none for "
                "this hash). Make one on a GPU machine: ./ci/build.sh build && ./build/adaload verify "
                "--grid full --sanitizers, then commit the new results/<gpu>/<run>/ folder.",
                hash, nrec, results);
    } else {
        ada_msg(CMD, "FAIL: %d record(s) for kernel sources %s, none passing (see above)", nmatch, hash);
    }
    return ADA_EXIT_FAIL;
}
