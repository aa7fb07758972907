/* catalog_measure.c -- "what the run measured": one line per run, derived only from the
 * files of its folder, so the index can always be rebuilt and checked.
 *
 *   verify            "grid full, 4539/4539 cases passed, sanitizers clean" (from the compact
 *                     verify-summary.json when present, else verify.json)
 *   bench, planner    "set wan, 132 benchmarks x 9 repetitions, with peers"
 *   regression-check  the closing line of each compare-*.txt
 *   explore           "N benchmark runs (experiment builds and the shipped build)"
 *   e2e               "N configurations" (e2e.json)
 */
#include "catalog_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "gate.h"
#include "run_bench.h"
#include "verify_tools.h"

#define tools verify_sanitizer_tools /* the list's owner is verify/ */

static int exists(const char *dir, const char *name)
{
    char p[PATH_MAX];
    cat__join(p, sizeof p, dir, name);
    struct stat st;
    return stat(p, &st) == 0;
}

static cat_status set_measured(cat_run *r, const char *text, char *err, size_t en)
{
    r->measured = cat__strdup(text);
    return r->measured ? CAT_OK : cat__fail(CAT_NOMEM, err, en, "out of memory");
}

/* "clean", "not run", or "<tool> <verdict>" of the first unclean tool. */
static void sanitizer_text(json_t *san, char *out, size_t n, int *clean)
{
    int all_clean = 1, none = 1;
    const char *bad = NULL, *badv = NULL;
    for (int t = 0; t < 4; t++) {
        const char *v = json_string_value(json_object_get(san, tools[t]));
        if (!v) v = "missing";
        if (strcmp(v, "clean")) {
            all_clean = 0;
            if (strncmp(v, "not run", 7) && !bad) bad = tools[t], badv = v;
        } else {
            none = 0;
        }
    }
    *clean = all_clean;
    if (all_clean) snprintf(out, n, "sanitizers clean");
    else if (bad) snprintf(out, n, "sanitizer %s: %.60s", bad, badv);
    else if (none) snprintf(out, n, "sanitizers not run");
    else snprintf(out, n, "sanitizers partly run");
}

/* The record is read and judged by the gate (gate.h), the pass rule's one owner; what is
 * listed here is only the record's own counts. */
static cat_status measure_verify(const char *dir, cat_run *r, char *err, size_t en)
{
    char p[PATH_MAX], why[600];
    json_t *v = gate_read_record(dir, p, sizeof p, why, sizeof why);
    if (!json_is_object(v)) {
        json_decref(v);
        return cat__fail(CAT_BAD_TREE, err, en, "%s: a verify run needs a readable record (%s)", p, why);
    }
    const char *grid = json_string_value(json_object_get(v, "grid"));
    const char *backend = json_string_value(json_object_get(v, "backend"));
    json_t *sum = json_object_get(v, "summary");
    json_int_t cases = json_integer_value(json_object_get(sum, "cases"));
    json_int_t passed = json_integer_value(json_object_get(sum, "passed"));
    int clean = 0, passes = 0;
    char st[128];
    sanitizer_text(json_object_get(v, "sanitizers"), st, sizeof st, &clean);
    r->verify_grid = cat__strdup(grid ? grid : "unknown");
    r->verify_backend = cat__strdup(backend ? backend : "unknown");
    r->verify_cases_passed = json_is_true(json_object_get(v, "all_passed")) && cases > 0 && passed == cases;
    r->verify_passed = gate_record_passes(v, &passes, why, sizeof why) == GATE_OK && passes;
    r->verify_plugins = gate_record_has_plugins(v);
    (void)gate_record_shard(v, &r->verify_shard, &r->verify_nshards);
    char text[320], shard[48] = "";
    if (r->verify_nshards) snprintf(shard, sizeof shard, " shard %d/%d", r->verify_shard, r->verify_nshards);
    snprintf(text, sizeof text, "%s%sgrid %s%s, %lld/%lld cases passed, %s%s",
             backend && strcmp(backend, "cuda") ? backend : "",
             backend && strcmp(backend, "cuda") ? " backend, " : "", grid ? grid : "unknown", shard,
             (long long)passed, (long long)cases, st, r->verify_plugins ? ", with plug-ins" : "");
    json_decref(v);
    if (!r->verify_grid || !r->verify_backend) return cat__fail(CAT_NOMEM, err, en, "out of memory");
    return set_measured(r, text, err, en);
}

/* Through the one reader of bench.json (run_bench.h). */
static cat_status measure_bench(const char *dir, cat_run *r, char *err, size_t en)
{
    char p[PATH_MAX], why[600];
    cat__join(p, sizeof p, dir, "bench.json");
    ada_bench_set b = {0};
    int rc = ada_bench_load_file(p, &b, why, sizeof why);
    if (rc) {
        ada_bench_set_free(&b);
        return rc == ADA_RUNS_ENOMEM ? cat__fail(CAT_NOMEM, err, en, "out of memory")
                                     : cat__fail(CAT_BAD_TREE, err, en, "a %s run needs a Google Benchmark JSON: %s",
                                                 r->kind, why);
    }
    int64_t errors = 0;
    for (int64_t i = 0; i < b.n; i++) errors += b.r[i].nerr;
    char text[256], e_text[64] = "";
    if (errors) snprintf(e_text, sizeof e_text, ", %lld repetitions with errors", (long long)errors);
    snprintf(text, sizeof text, "set %s, %lld benchmarks x %s repetitions%s%s", b.set ? b.set : "?", (long long)b.n,
             b.repetitions ? b.repetitions : "?", exists(dir, "peers.json") ? ", with peers" : "", e_text);
    ada_bench_set_free(&b);
    return set_measured(r, text, err, en);
}

/* The closing line of a compare table: "N slower, N faster, N same, N with errors (...)",
 * shortened to what precedes the parenthesis. */
static int compare_tail(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[1024];
    out[0] = '\0';
    while (fgets(line, sizeof line, f))
        if (strstr(line, " slower, ")) {
            line[strcspn(line, "(\r\n")] = '\0';
            size_t k = strlen(line);
            while (k && line[k - 1] == ' ') line[--k] = '\0';
            snprintf(out, n, "%s", line);
        }
    fclose(f);
    return out[0] ? 0 : -1;
}

static cat_status measure_regression(const char *dir, cat_run *r, char *err, size_t en)
{
    int64_t n;
    char **l = cat__list(dir, &n);
    if (!l) return cat__fail(CAT_IO, err, en, "%s: %s", dir, strerror(errno));
    char text[1024] = "";
    size_t used = 0;
    for (int64_t i = 0; i < n; i++) {
        size_t k = strlen(l[i]);
        if (strncmp(l[i], "compare-", 8) || k < 4 || strcmp(l[i] + k - 4, ".txt")) continue;
        char p[PATH_MAX], tail[256];
        cat__join(p, sizeof p, dir, l[i]);
        if (compare_tail(p, tail, sizeof tail) != 0) snprintf(tail, sizeof tail, "no verdict line");
        int w = snprintf(text + used, sizeof text - used, "%s%.*s: %s", used ? "; " : "",
                         (int)(k - 12), l[i] + 8, tail);
        if (w > 0 && (size_t)w < sizeof text - used) used += (size_t)w;
    }
    cat__list_free(l, n);
    return set_measured(r, used ? text : "no compare-*.txt", err, en);
}

static cat_status measure_explore(const char *dir, cat_run *r, char *err, size_t en)
{
    int64_t n;
    char **l = cat__list(dir, &n);
    if (!l) return cat__fail(CAT_IO, err, en, "%s: %s", dir, strerror(errno));
    int64_t runs = 0;
    for (int64_t i = 0; i < n; i++) {
        char p[PATH_MAX];
        cat__join(p, sizeof p, dir, l[i]);
        if (cat__is_dir(p) && exists(p, "bench.json")) runs++;
    }
    cat__list_free(l, n);
    char text[128];
    snprintf(text, sizeof text, "%lld benchmark runs of experiment builds and the shipped build",
             (long long)runs);
    return set_measured(r, text, err, en);
}

static cat_status measure_e2e(const char *dir, cat_run *r, char *err, size_t en)
{
    char p[PATH_MAX];
    cat__join(p, sizeof p, dir, "e2e.json");
    json_t *e = json_load_file(p, 0, NULL);
    char text[128];
    json_t *cfg = json_object_get(e, "configs");
    if (json_is_array(cfg)) snprintf(text, sizeof text, "%zu configurations", json_array_size(cfg));
    else snprintf(text, sizeof text, "no e2e.json configurations");
    json_decref(e);
    return set_measured(r, text, err, en);
}

cat_status cat__measure(const char *dir, cat_run *r, char *err, size_t en)
{
    if (!strcmp(r->kind, "verify")) return measure_verify(dir, r, err, en);
    if (!strcmp(r->kind, "bench") || !strcmp(r->kind, "planner")) return measure_bench(dir, r, err, en);
    if (!strcmp(r->kind, "regression-check")) return measure_regression(dir, r, err, en);
    if (!strcmp(r->kind, "explore")) return measure_explore(dir, r, err, en);
    return measure_e2e(dir, r, err, en);
}
