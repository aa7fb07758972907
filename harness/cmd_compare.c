/* cmd_compare.c -- `adaload compare A B`: two benchmark runs, like with like, a
 * noise-aware verdict each (the rules: runfiles/run_compare.h, runfiles/run_stats.h); and
 * `adaload compare --history RUN`: a run against the like-with-like history of its testbed
 * (runfiles/run_history.h: the one regression verdict, also the nightly's and the
 * dashboard's).
 *
 *   adaload compare <run-folder-or-json> <run-folder-or-json> [--threshold PCT] [--alpha A]
 *   adaload compare --history RUN [--results DIR] [--threshold PCT] [--alpha A]
 *
 * A and B are run folders (bench.json + peers.json, meta.json) or Google Benchmark JSON
 * files. Runs of different testbeds, sets or repetition counts are refused (exit 2). For
 * each benchmark name present in both: median time of A and of B, ratio B/A, the two-sided
 * Mann-Whitney U p-value over the repetition times and the verdict: "slower" only if p <
 * alpha (default 0.05) and B/A > 1 + threshold (default 5%), "faster" the mirror image,
 * "too few repetitions" when the repetitions cannot reach p < alpha (3 and 3: p >= 0.1),
 * else "same"; when both folders ran the same kernel code, a slower or faster benchmark is
 * "environment drift" (meta.json's fingerprint says whether the machine differs). Names in
 * only one side are listed; benchmarks with an error entry on either side are listed as
 * errors and never judged. Exit 1 when any benchmark is slower, else 4 when any had too few
 * repetitions to judge, 2 on bad usage or an unreadable input, else 0 (drift included).
 *
 * --history: RUN is a bench run folder results/<testbed>/bench/<run> (DIR: the results
 * folder, default the one RUN is in); the earlier bench runs of its testbed in the catalog
 * are its history, and B = RUN is judged against the newest one like it with the noise band
 * of that run's kernel code. Exit codes as above; 4 also when no earlier run is like it
 * (nothing to judge: it says why).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ada_util.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "catalog.h"
#include "run_bench.h"
#include "run_compare.h"
#include "run_history.h"
#include "run_meta.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: adaload compare A B [--threshold PCT] [--alpha A]\n"
            "       adaload compare --history RUN [--results DIR] [--threshold PCT] [--alpha A]\n"
            "  A, B: run folders (results/<testbed>/bench/<run>/) or Google Benchmark JSON files,\n"
            "  of the same testbed, set and repetition count. Per benchmark in both: median of A\n"
            "  and B, B/A, Mann-Whitney U p-value over the repetitions, verdict: slower if p <\n"
            "  alpha and B/A > 1 + PCT/100, faster if p < alpha and B/A < 1 - PCT/100, too few\n"
            "  repetitions when they cannot reach p < alpha, else same; environment drift instead\n"
            "  of slower or faster when both runs ran the same kernel code (on another machine,\n"
            "  or the same one in another state).\n"
            "  --history RUN: RUN against the earlier bench runs of its testbed (the catalog of\n"
            "  DIR, default the results folder RUN is in): against the newest one of the same set\n"
            "  and repetition count, each benchmark outside its own noise band over the earlier\n"
            "  runs of that run's kernel code (3 or more; else the pair rule above).\n"
            "  --threshold PCT  percent (default 5)\n"
            "  --alpha A        significance level in (0, 1) (default 0.05)\n"
            "  exit: 0 no regression, 1 a benchmark is slower, 4 too few repetitions to judge\n"
            "        (--history: or no earlier run like RUN), 2 bad usage or input (also: no\n"
            "        benchmark in common)\n");
}

static void fmt_time(double ns, char *buf, size_t n)
{
    if (ns >= 1e6)
        snprintf(buf, n, "%.3f ms", ns * 1e-6);
    else if (ns >= 1e3)
        snprintf(buf, n, "%.2f us", ns * 1e-3);
    else
        snprintf(buf, n, "%.1f ns", ns);
}

/* Names come from the runs' files: printed with control bytes escaped (a terminal escape in
 * a benchmark name never reaches the terminal). Longer names are cut at 1,000 bytes here. */
static const char *esc(const char *s, char *buf, size_t n) { return ada_escape(s, buf, n); }

/* The table of c; a and b (NULL in --history mode: counts only) for the names in one side
 * only; band: a column with the change each verdict needed. */
static void print_table(const char *const paths[2], const ada_bench_set *a, const ada_bench_set *b, const ada_cmp *c,
                        int band)
{
    char nb[1024], eb[1024];
    size_t w = strlen("benchmark");
    for (int64_t i = 0; i < c->n; i++)
        if (strlen(esc(c->row[i].name, nb, sizeof nb)) > w) w = strlen(nb);
    printf("A: %s\nB: %s\n", esc(paths[0], nb, sizeof nb), esc(paths[1], eb, sizeof eb));
    printf("%-*s  %12s  %12s  %7s  %8s  %s%s\n", (int)w, "benchmark", "A median", "B median", "B/A", "p",
           band ? "needed          " : "", "verdict");
    for (int64_t i = 0; i < c->n; i++) {
        const ada_cmp_row *r = &c->row[i];
        esc(r->name, nb, sizeof nb);
        if (r->error) {
            printf("%-*s  %12s  %12s  %7s  %8s  %serror (%s)\n", (int)w, nb, "-", "-", "-", "-", band ? "-               " : "",
                   esc(r->error, eb, sizeof eb));
            continue;
        }
        char ta[32], tb[32], need[32] = "";
        fmt_time(r->a_ns, ta, sizeof ta);
        fmt_time(r->b_ns, tb, sizeof tb);
        if (band) snprintf(need, sizeof need, "%5.1f%% %-9s", 100 * r->band, r->banded ? "band" : "threshold");
        printf("%-*s  %12s  %12s  %7.3f  %8.2g  %s%s%s\n", (int)w, nb, ta, tb, r->ratio, r->p, need, band ? " " : "",
               ada_verdict_name(r->v));
    }
    if (!a || !b) {
        if (c->only_a || c->only_b)
            printf("only in A: %lld benchmark(s); only in B: %lld\n", (long long)c->only_a, (long long)c->only_b);
        return;
    }
    for (int64_t i = 0; i < a->n; i++)
        if (!ada_bench_find(b, a->r[i].name)) printf("only in A: %s\n", esc(a->r[i].name, nb, sizeof nb));
    for (int64_t i = 0; i < b->n; i++)
        if (!ada_bench_find(a, b->r[i].name)) printf("only in B: %s\n", esc(b->r[i].name, nb, sizeof nb));
}

/* The summary lines and the exit code of a comparison. */
static int verdict_of(const ada_cmp *c, const char *const paths[2], double threshold_pct, double alpha)
{
    if (c->drift)
        printf("machine: %s, with the same kernel code: %lld benchmark(s) moved with the machine, not the code\n",
               c->machine, (long long)c->drift);
    printf("%lld slower, %lld faster, %lld same, %lld too few repetitions, %lld environment drift, %lld with "
           "errors (threshold %g%%, alpha %g, two-sided Mann-Whitney U over repetitions)\n",
           (long long)c->slower, (long long)c->faster, (long long)c->same, (long long)c->too_few, (long long)c->drift,
           (long long)c->errors, threshold_pct, alpha);
    if (c->n == 0) { /* nothing was compared: not a pass */
        ada_msg("compare", "%s and %s have no benchmark in common: nothing to compare", paths[0], paths[1]);
        return ADA_EXIT_USAGE;
    }
    return c->slower > 0 ? ADA_EXIT_FAIL : c->too_few > 0 ? ADA_EXIT_UNDECIDED : ADA_EXIT_OK;
}

/* A run's meta.json into m; 1 when there is one that reads. */
static int load_meta(const char *dir, ada_run_meta *m)
{
    char mp[PATH_MAX + 16], err[512];
    struct stat st;
    memset(m, 0, sizeof *m);
    const int k = snprintf(mp, sizeof mp, "%s/meta.json", dir);
    if (k < 0 || (size_t)k >= sizeof mp) return 0; /* a path too long for the system has no meta.json */
    return stat(mp, &st) == 0 && ada_run_meta_load(mp, m, err, sizeof err) == ADA_RUNS_OK;
}

/* The earlier bench runs of run rel's testbed in c (catalog order: time, then path) into h;
 * runs whose files cannot be read are left out and counted in *bad. 0, or -1 out of memory. */
static int load_history(const char *results, const cat_catalog *c, const char *rel, ada_history *h, int64_t *bad)
{
    int64_t me = -1;
    for (int64_t i = 0; i < c->n && me < 0; i++)
        if (!strcmp(c->run[i].path, rel)) me = i;
    *bad = 0;
    for (int64_t i = 0; i < me; i++) {
        const cat_run *r = &c->run[i];
        if (strcmp(r->kind, "bench") || strcmp(r->testbed, c->run[me].testbed)) continue;
        char dir[PATH_MAX + 8], err[512];
        snprintf(dir, sizeof dir, "%s/%s", results, r->path);
        ada_bench_set s = {0};
        ada_run_meta m;
        int lrc = ada_bench_load(dir, &s, err, sizeof err);
        if (lrc) {
            ada_bench_set_free(&s);
            if (lrc == ADA_RUNS_ENOMEM) return -1;
            (*bad)++;
            continue;
        }
        int hm = load_meta(dir, &m);
        if (ada_history_add(h, &s, hm ? &m : NULL, i, r->path)) return -1;
    }
    return 0;
}

static int compare_history(const char *run, const char *results_opt, double threshold_pct, double alpha)
{
    char abs[PATH_MAX], results[PATH_MAX], rel[PATH_MAX], err[1024];
    if (!realpath(run, abs)) return ada_usage_error("compare", "--history %s: no such run folder", run);
    if (results_opt) {
        snprintf(results, sizeof results, "%s", results_opt);
    } else { /* results/<testbed>/bench/<run>: three levels up */
        snprintf(results, sizeof results, "%s", abs);
        for (int k = 0; k < 3; k++) {
            char *sl = strrchr(results, '/');
            if (sl && sl != results) *sl = '\0';
        }
    }
    if (cat_relpath(results, abs, rel, sizeof rel) != CAT_OK || !strstr(rel, "/bench/"))
        return ada_usage_error("compare", "--history %s: not a bench run folder <testbed>/bench/<run> of %s", run, results);
    cat_catalog c;
    json_t *badruns = json_array();
    cat_status cs = badruns ? cat_scan_lenient(results, &c, badruns, err, sizeof err) : CAT_NOMEM;
    json_decref(badruns);
    if (cs != CAT_OK) {
        ada_msg("compare", "--history: %s", cs == CAT_NOMEM ? "out of memory" : err);
        return cs == CAT_NOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
    }
    ada_bench_set b = {0};
    ada_run_meta m;
    int lrc = ada_bench_load(abs, &b, err, sizeof err), hm = 0, rc = ADA_EXIT_OK;
    int64_t bad = 0;
    ada_history *h = lrc ? NULL : ada_history_new();
    if (lrc) {
        ada_msg("compare", "%s", err);
        rc = lrc == ADA_RUNS_ENOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
    } else if (!h || load_history(results, &c, rel, h, &bad)) {
        ada_msg("compare", "out of memory");
        rc = ADA_EXIT_INTERNAL;
    }
    ada_hist_verdict v = {0};
    ada_cmp_opts co = {.threshold = threshold_pct / 100.0, .alpha = alpha};
    if (rc == ADA_EXIT_OK) {
        hm = load_meta(abs, &m);
        if (ada_history_judge(h, &b, hm ? &m : NULL, &co, &v, err, sizeof err)) {
            ada_msg("compare", "--history %s: %s", run, err);
            rc = strstr(err, "out of memory") ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
        }
    }
    char eb[1024];
    if (rc == ADA_EXIT_OK && bad) printf("history: %lld earlier run(s) whose files cannot be read were left out\n", (long long)bad);
    if (rc == ADA_EXIT_OK && !v.judged) {
        printf("%s: %s\n", esc(rel, eb, sizeof eb), v.why);
        rc = ADA_EXIT_UNDECIDED;
    } else if (rc == ADA_EXIT_OK) {
        const char *paths[2] = {v.baseline, rel};
        print_table(paths, NULL, NULL, &v.cmp, 1);
        if (v.band_runs) printf("history: A is the newest earlier run like B; noise band over the %lld newest runs of A's kernel code\n", (long long)v.band_runs);
        else printf("history: A is the newest earlier run like B; fewer than %d runs of A's kernel code: the pair rule (threshold)\n", ADA_BAND_MIN);
        if (v.unlike) printf("history: %s\n", v.why);
        rc = verdict_of(&v.cmp, paths, threshold_pct, alpha);
    }
    ada_hist_verdict_free(&v);
    if (hm) ada_run_meta_free(&m);
    ada_history_free(h);
    ada_bench_set_free(&b);
    cat_free(&c);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL}, *history = NULL, *results = NULL;
    int npaths = 0;
    double threshold_pct = 5.0, alpha = 0.05;
    const cli_opt opts[] = {
        {.name = "--threshold", .kind = CLI_KIND_F64, .dst = &threshold_pct, .flo = 0, .fhi = 99.999999,
         .what = "a percentage in [0, 100)", .meta = "PCT", .help = "percent (default 5)"},
        {.name = "--alpha", .kind = CLI_KIND_F64, .dst = &alpha, .flo = 0, .fhi = 0.999999999, .flo_open = 1,
         .what = "a number in (0, 1)", .meta = "A", .help = "significance level in (0, 1) (default 0.05)"},
        CLI_STR("--history", &history, "RUN", "judge RUN against the earlier runs of its testbed"),
        CLI_STR("--results", &results, "DIR", "the results folder of --history (default: the one RUN is in)"),
        CLI_END};
    int r = cli_parse("compare", opts, argc, argv, paths, 2, &npaths);
    if (r == CLI_HELP) {
        usage(stdout);
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    if (history && npaths) return ada_usage_error("compare", "--history takes one run and no other");
    if (results && !history) return ada_usage_error("compare", "--results goes with --history");
    if (history) return compare_history(history, results, threshold_pct, alpha);
    if (npaths != 2) return ada_usage_error("compare", "give two runs (folders or JSON files)");

    ada_bench_set s[2] = {{0}, {0}};
    char err[512];
    for (int k = 0; k < 2; k++) {
        int lrc = ada_bench_load(paths[k], &s[k], err, sizeof err);
        if (lrc) {
            ada_bench_set_free(&s[0]);
            ada_bench_set_free(&s[1]);
            ada_msg("compare", "%s", err);
            return lrc == ADA_RUNS_ENOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
        }
    }
    ada_run_meta m[2];
    int have_meta = load_meta(paths[0], &m[0]);
    if (!load_meta(paths[1], &m[1]) && have_meta) {
        ada_run_meta_free(&m[0]);
        have_meta = 0;
    } else if (!have_meta) {
        ada_run_meta_free(&m[1]);
    }
    ada_cmp_opts co = {.threshold = threshold_pct / 100.0, .alpha = alpha};
    ada_cmp c;
    int crc = ada_compare_runs(&s[0], &s[1], have_meta ? &m[0] : NULL, have_meta ? &m[1] : NULL, &co, &c, err, sizeof err);
    int rc = ADA_EXIT_OK;
    if (crc) {
        rc = strstr(err, "out of memory") ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
        ada_msg("compare", "%s and %s: %s", paths[0], paths[1], err);
    } else {
        print_table(paths, &s[0], &s[1], &c, 0);
        rc = verdict_of(&c, paths, threshold_pct, alpha);
    }
    ada_cmp_free(&c);
    if (have_meta)
        for (int k = 0; k < 2; k++) ada_run_meta_free(&m[k]);
    ada_bench_set_free(&s[0]);
    ada_bench_set_free(&s[1]);
    return rc;
}
