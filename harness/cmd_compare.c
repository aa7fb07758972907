/* cmd_compare.c -- `adaload compare A B`: two benchmark runs, like with like, a
 * noise-aware verdict each (the rules: runfiles/run_compare.h, runfiles/run_stats.h).
 *
 *   adaload compare <run-folder-or-json> <run-folder-or-json> [--threshold PCT] [--alpha A]
 *
 * A and B are run folders (bench.json + peers.json, meta.json) or Google Benchmark JSON
 * files. Runs of different testbeds or sets are refused (exit 2). For each benchmark name
 * present in both: median time of A and of B, ratio B/A, the two-sided Mann-Whitney U
 * p-value over the repetition times and the verdict: "slower" only if p < alpha (default
 * 0.05) and B/A > 1 + threshold (default 5%), "faster" the mirror image, "too few
 * repetitions" when the repetitions cannot reach p < alpha (3 and 3: p >= 0.1), else "same";
 * when both folders ran the same kernel code on different machines (meta.json's
 * fingerprint), a slower or faster benchmark is "environment drift". Names in only one side
 * are listed; benchmarks with an error entry on either side are listed as errors and never
 * judged. Exit 1 when any benchmark is slower, else 4 when any had too few repetitions to
 * judge, 2 on bad usage or an unreadable input, else 0 (drift included).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ada_util.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "run_bench.h"
#include "run_compare.h"
#include "run_meta.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: adaload compare A B [--threshold PCT] [--alpha A]\n"
            "  A, B: run folders (results/<testbed>/bench/<run>/) or Google Benchmark JSON files,\n"
            "  of the same testbed and set. Per benchmark in both: median of A and B, B/A,\n"
            "  Mann-Whitney U p-value over the repetitions, verdict: slower if p < alpha and\n"
            "  B/A > 1 + PCT/100, faster if p < alpha and B/A < 1 - PCT/100, too few repetitions\n"
            "  when they cannot reach p < alpha, else same; environment drift instead of slower\n"
            "  or faster when both runs ran the same kernel code on different machines.\n"
            "  --threshold PCT  percent (default 5)\n"
            "  --alpha A        significance level in (0, 1) (default 0.05)\n"
            "  exit: 0 no regression, 1 a benchmark is slower, 4 too few repetitions to judge,\n"
            "        2 bad usage or input (also: no benchmark in common)\n");
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

static void print_table(const char *const paths[2], const ada_bench_set *a, const ada_bench_set *b, const ada_cmp *c)
{
    char nb[1024], eb[1024];
    size_t w = strlen("benchmark");
    for (int64_t i = 0; i < c->n; i++)
        if (strlen(esc(c->row[i].name, nb, sizeof nb)) > w) w = strlen(nb);
    printf("A: %s\nB: %s\n", esc(paths[0], nb, sizeof nb), esc(paths[1], eb, sizeof eb));
    printf("%-*s  %12s  %12s  %7s  %8s  %s\n", (int)w, "benchmark", "A median", "B median", "B/A", "p", "verdict");
    for (int64_t i = 0; i < c->n; i++) {
        const ada_cmp_row *r = &c->row[i];
        esc(r->name, nb, sizeof nb);
        if (r->error) {
            printf("%-*s  %12s  %12s  %7s  %8s  error (%s)\n", (int)w, nb, "-", "-", "-", "-", esc(r->error, eb, sizeof eb));
            continue;
        }
        char ta[32], tb[32];
        fmt_time(r->a_ns, ta, sizeof ta);
        fmt_time(r->b_ns, tb, sizeof tb);
        printf("%-*s  %12s  %12s  %7.3f  %8.2g  %s\n", (int)w, nb, ta, tb, r->ratio, r->p, ada_verdict_name(r->v));
    }
    for (int64_t i = 0; i < a->n; i++)
        if (!ada_bench_find(b, a->r[i].name)) printf("only in A: %s\n", esc(a->r[i].name, nb, sizeof nb));
    for (int64_t i = 0; i < b->n; i++)
        if (!ada_bench_find(a, b->r[i].name)) printf("only in B: %s\n", esc(b->r[i].name, nb, sizeof nb));
}

int cmd_compare(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int npaths = 0;
    double threshold_pct = 5.0, alpha = 0.05;
    const cli_opt opts[] = {
        {.name = "--threshold", .kind = CLI_KIND_F64, .dst = &threshold_pct, .flo = 0, .fhi = 99.999999,
         .what = "a percentage in [0, 100)", .meta = "PCT", .help = "percent (default 5)"},
        {.name = "--alpha", .kind = CLI_KIND_F64, .dst = &alpha, .flo = 0, .fhi = 0.999999999, .flo_open = 1,
         .what = "a number in (0, 1)", .meta = "A", .help = "significance level in (0, 1) (default 0.05)"},
        CLI_END};
    int r = cli_parse("compare", opts, argc, argv, paths, 2, &npaths);
    if (r == CLI_HELP) {
        usage(stdout);
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
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
    int have_meta = 1;
    for (int k = 0; k < 2; k++) {
        char mp[4200];
        struct stat st;
        snprintf(mp, sizeof mp, "%s/meta.json", paths[k]);
        memset(&m[k], 0, sizeof m[k]);
        if (stat(mp, &st) != 0 || ada_run_meta_load(mp, &m[k], err, sizeof err) != ADA_RUNS_OK) have_meta = 0;
    }
    ada_cmp_opts co = {.threshold = threshold_pct / 100.0, .alpha = alpha};
    ada_cmp c;
    int crc = ada_compare_runs(&s[0], &s[1], have_meta ? &m[0] : NULL, have_meta ? &m[1] : NULL, &co, &c, err, sizeof err);
    int rc = ADA_EXIT_OK;
    if (crc) {
        rc = strstr(err, "out of memory") ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
        ada_msg("compare", "%s and %s: %s", paths[0], paths[1], err);
    } else {
        print_table(paths, &s[0], &s[1], &c);
        if (c.drift)
            printf("machine: %s, with the same kernel code: %lld benchmark(s) moved with the machine, not the code\n",
                   c.machine, (long long)c.drift);
        printf("%lld slower, %lld faster, %lld same, %lld too few repetitions, %lld environment drift, %lld with "
               "errors (threshold %g%%, alpha %g, two-sided Mann-Whitney U over repetitions)\n",
               (long long)c.slower, (long long)c.faster, (long long)c.same, (long long)c.too_few,
               (long long)c.drift, (long long)c.errors, threshold_pct, alpha);
        rc = c.slower > 0 ? ADA_EXIT_FAIL : c.too_few > 0 ? ADA_EXIT_UNDECIDED : ADA_EXIT_OK;
        if (c.n == 0) { /* nothing was compared: not a pass */
            ada_msg("compare", "%s and %s have no benchmark in common: nothing to compare", paths[0], paths[1]);
            rc = ADA_EXIT_USAGE;
        }
    }
    ada_cmp_free(&c);
    for (int k = 0; k < 2; k++) ada_run_meta_free(&m[k]);
    ada_bench_set_free(&s[0]);
    ada_bench_set_free(&s[1]);
    return rc;
}
