/* cmd_compare.c -- `adaload compare A B`: two benchmark runs, a noise-aware verdict each.
 *
 *   adaload compare <run-folder-or-json> <run-folder-or-json> [--threshold PCT] [--alpha A]
 *
 * A and B are run folders (bench.json + peers.json) or Google Benchmark JSON files. For each
 * benchmark name present in both: median time of A and of B, ratio B/A, the two-sided
 * Mann-Whitney U p-value over the repetition times and the verdict (run_stats.h): "slower"
 * only if p < alpha (default 0.05) and B/A > 1 + threshold (default 5%), "faster" the mirror
 * image, else "same". Names in only one side are listed; benchmarks with an error entry on
 * either side are listed as errors and never judged. Exit 1 when any benchmark is slower,
 * 2 on bad usage or an unreadable input, else 0.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run_stats.h"
#include "cli.h"
#include "cli_opts.h"
#include "run_bench.h"
#include "commands.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: adaload compare A B [--threshold PCT] [--alpha A]\n"
            "  A, B: run folders (results/<testbed>/bench/<run>/) or Google Benchmark JSON files.\n"
            "  Per benchmark in both: median of A and B, B/A, Mann-Whitney U p-value over the\n"
            "  repetitions, verdict: slower if p < alpha and B/A > 1 + PCT/100, faster if\n"
            "  p < alpha and B/A < 1 - PCT/100, else same.\n"
            "  --threshold PCT  percent (default 5)\n"
            "  --alpha A        significance level in (0, 1) (default 0.05)\n"
            "  exit: 0 no regression, 1 a benchmark is slower, 2 bad usage or input\n");
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

    double thr = threshold_pct / 100.0;
    int64_t n_slow = 0, n_fast = 0, n_same = 0, n_err = 0;
    size_t w = strlen("benchmark");
    for (int64_t i = 0; i < s[0].n; i++)
        if (ada_bench_find(&s[1], s[0].r[i].name) && strlen(s[0].r[i].name) > w) w = strlen(s[0].r[i].name);
    printf("A: %s\nB: %s\n", paths[0], paths[1]);
    printf("%-*s  %12s  %12s  %7s  %8s  %s\n", (int)w, "benchmark", "A median", "B median", "B/A",
           "p", "verdict");
    for (int64_t i = 0; i < s[0].n; i++) {
        const ada_bench_rec *a = &s[0].r[i];
        const ada_bench_rec *b = ada_bench_find(&s[1], a->name);
        if (!b) continue;
        if (a->error || b->error || a->n == 0 || b->n == 0) {
            printf("%-*s  %12s  %12s  %7s  %8s  error (%s)\n", (int)w, a->name, "-", "-", "-", "-",
                   a->error ? "in A" : b->error ? "in B" : "no repetitions");
            n_err++;
            continue;
        }
        double ratio = 1;
        ada_mwu t;
        ada_verdict v = ada_compare_samples(a->time_ns, a->n, b->time_ns, b->n, thr, alpha, &ratio, &t);
        char ta[32], tb[32];
        fmt_time(ada_median(a->time_ns, a->n), ta, sizeof ta);
        fmt_time(ada_median(b->time_ns, b->n), tb, sizeof tb);
        printf("%-*s  %12s  %12s  %7.3f  %8.2g  %s\n", (int)w, a->name, ta, tb, ratio, t.p,
               ada_verdict_name(v));
        n_slow += v == ADA_SLOWER;
        n_fast += v == ADA_FASTER;
        n_same += v == ADA_SAME;
    }
    for (int64_t i = 0; i < s[0].n; i++)
        if (!ada_bench_find(&s[1], s[0].r[i].name)) printf("only in A: %s\n", s[0].r[i].name);
    for (int64_t i = 0; i < s[1].n; i++)
        if (!ada_bench_find(&s[0], s[1].r[i].name)) printf("only in B: %s\n", s[1].r[i].name);
    printf("%lld slower, %lld faster, %lld same, %lld with errors (threshold %g%%, alpha %g, "
           "two-sided Mann-Whitney U over repetitions)\n",
           (long long)n_slow, (long long)n_fast, (long long)n_same, (long long)n_err, threshold_pct, alpha);
    ada_bench_set_free(&s[0]);
    ada_bench_set_free(&s[1]);
    return n_slow > 0 ? ADA_EXIT_FAIL : ADA_EXIT_OK;
}
