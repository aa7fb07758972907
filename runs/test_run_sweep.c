/* test_run_sweep.c -- Criterion tests of the sweep view (run_sweep.c) on synthetic
 * Google Benchmark JSON: the table's values and order, missing points (errors, no counter)
 * shown as gaps and never as 0, the slice chosen by default, given or unknown, the variant
 * filter, the SVG's series, gaps, legend and escaping, the error for a run without
 * lnmod_fwd benchmarks, and issue 21's width bar (its classes, its verdict, only on its slice). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "run_bench.h"
#include "run_sweep.h"

static char path[64];

static void cleanup(void)
{
    if (path[0]) unlink(path);
}

TestSuite(sweep, .fini = cleanup);

/* One benchmark with 3 repetitions whose pct_copy_bw is pct-1, pct, pct+1 (median pct);
 * pct < 0: no counter; err: an error entry. */
static void bench(FILE *f, int *first, const char *name, double pct, int err)
{
    for (int i = 0; i < 3; i++) {
        fprintf(f, "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                   "\"repetitions\": 3, \"repetition_index\": %d, \"iterations\": 10, "
                   "\"real_time\": 10.0, \"cpu_time\": 1.0, \"time_unit\": \"us\"",
                *first ? "" : ",", name, name, i);
        if (err) fprintf(f, ", \"error_occurred\": true, \"error_message\": \"boom\"");
        else if (pct >= 0) fprintf(f, ", \"pct_copy_bw\": %.3f", pct - 1 + i);
        fprintf(f, "}\n");
        *first = 0;
    }
}

static void load(ada_bench_set *s, void (*fill)(FILE *, int *))
{
    snprintf(path, sizeof path, "/tmp/adaload-sweep-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    int first = 1;
    fprintf(f, "{\"context\": {}, \"benchmarks\": [\n");
    fill(f, &first);
    fprintf(f, "]}\n");
    fclose(f);
    char err[256];
    cr_assert_eq(ada_bench_load_file(path, s, err, sizeof err), 0, "%s", err);
}

static void sweep_run(FILE *f, int *first)
{
    /* Out of order on purpose: the table sorts by D. */
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D2048/rows32760", 95, 0);
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D256/rows32760/graph8", 49, 0);
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1000/rows32760", -1, 0);
    bench(f, first, "lnmod_fwd/naive/bf16-f32-bf16/sample/D2048/rows32760", 40, 0);
    bench(f, first, "lnmod_fwd/naive/bf16-f32-bf16/sample/D256/rows32760/graph8", 20, 1);
    bench(f, first, "lnmod_fwd/naive/bf16-f32-bf16/sample/D1000/rows32760", 30, 0);
    bench(f, first, "copy/bytes1000", 100, 0);
    bench(f, first, "cpu/planner/dual/samples100000", 1, 0);
}

static char *render(const ada_sweep *w, int svg)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    cr_assert_not_null(m);
    if (svg) cr_assert_eq(ada_sweep_svg(m, w, "a <title> & more"), 0);
    else ada_sweep_print(m, w);
    fclose(m);
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int c = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) c++;
    return c;
}

Test(sweep, table_sorted_with_gaps)
{
    ada_bench_set s = {0};
    load(&s, sweep_run);
    ada_sweep w;
    char err[256];
    cr_assert_eq(ada_sweep_build(&s, NULL, 0, NULL, &w, err, sizeof err), 0, "%s", err);
    cr_assert_eq(w.nD, 3);
    cr_assert_eq(w.D[0], 256);
    cr_assert_eq(w.D[1], 1000);
    cr_assert_eq(w.D[2], 2048);
    cr_assert_eq(w.ns, 2);
    char *t = render(&w, 0);
    cr_assert(strstr(t, "| D | dtile | naive |"), "%s", t);
    cr_assert(strstr(t, "| 256 | 49.0% | — |"), "%s", t);   /* naive errored there */
    cr_assert(strstr(t, "| 1000 | — | 30.0% |"), "%s", t);  /* dtile had no counter */
    cr_assert(strstr(t, "| 2048 | 95.0% | 40.0% |"), "%s", t);
    cr_assert(strstr(t, "Sweep of bf16-f32-bf16/sample/rows32760"), "%s", t);
    cr_assert_null(strstr(t, "other shapes"), "%s", t);
    cr_assert_null(strstr(t, "| 0.0%"), "a missing point must not print as 0: %s", t);
    free(t);
    ada_sweep_free(&w);
    ada_bench_set_free(&s);
}

Test(sweep, svg_series_gaps_and_escaping)
{
    ada_bench_set s = {0};
    load(&s, sweep_run);
    ada_sweep w;
    char err[256];
    cr_assert_eq(ada_sweep_build(&s, NULL, 0, NULL, &w, err, sizeof err), 0);
    char *g = render(&w, 1);
    cr_assert(!strncmp(g, "<?xml", 5));
    cr_assert(strstr(g, "</svg>\n"));
    /* dtile: 256 and 2048 around a gap at 1000 -> two polylines; naive: 1000-2048 -> one. */
    cr_assert_eq(count(g, "<polyline"), 3, "%s", g);
    cr_assert_eq(count(g, "<circle"), 4);
    cr_assert(strstr(g, "<title>D 2048: 95.0%</title>"));
    cr_assert(strstr(g, ">dtile</text>") && strstr(g, ">naive</text>"));
    cr_assert(strstr(g, "a &lt;title&gt; &amp; more"));
    cr_assert_null(strstr(g, "<title> &"));
    free(g);
    ada_sweep_free(&w);
    ada_bench_set_free(&s);
}

static void mixed_run(FILE *f, int *first)
{
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760", 99, 0);
    bench(f, first, "lnmod_fwd/dtile/f32-f32-f32/sample/D1536/rows32760", 93, 0);
    bench(f, first, "lnmod_fwd/torch_compile/bf16-f32-bf16/sample/D1536/rows32760", 40, 0);
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/token/D3072/rows75600", 88, 0);
}

Test(sweep, slices_default_given_unknown_and_filter)
{
    ada_bench_set s = {0};
    load(&s, mixed_run);
    ada_sweep w;
    char err[512];
    /* Every slice has one D: the first in run order, with both of its variants. */
    cr_assert_eq(ada_sweep_build(&s, NULL, 0, NULL, &w, err, sizeof err), 0);
    cr_assert_str_eq(w.shape, "bf16-f32-bf16/sample/rows32760");
    cr_assert_eq(w.nshapes, 3);
    cr_assert_eq(w.ns, 2);
    char *t = render(&w, 0);
    cr_assert(strstr(t, "| D | dtile | torch_compile |"), "%s", t);
    cr_assert(strstr(t, "| 1536 | 99.0% | 40.0% |"), "%s", t);
    cr_assert(strstr(t, "2 other shapes in this run"), "%s", t);
    free(t);
    ada_sweep_free(&w);
    cr_assert_eq(ada_sweep_build(&s, NULL, 0, "bf16-f32-bf16/token/rows75600", &w, err, sizeof err), 0);
    cr_assert_eq(w.ns, 1);
    cr_assert_eq(w.D[0], 3072);
    cr_assert_float_eq(w.s[0].pct[0], 88.0, 1e-9);
    ada_sweep_free(&w);
    cr_assert_eq(ada_sweep_build(&s, NULL, 0, "f16-f32-f16/sample/rows1", &w, err, sizeof err), -1);
    cr_assert(strstr(err, "no benchmarks of shape f16-f32-f16/sample/rows1"), "%s", err);
    cr_assert(strstr(err, "f32-f32-f32/sample/rows32760"), "%s", err);
    const char *want[] = {"torch_compile"};
    cr_assert_eq(ada_sweep_build(&s, want, 1, NULL, &w, err, sizeof err), 0);
    cr_assert_eq(w.ns, 1);
    cr_assert_eq(w.nshapes, 1);
    cr_assert_str_eq(w.s[0].variant, "torch_compile");
    ada_sweep_free(&w);
    const char *none[] = {"nope"};
    cr_assert_eq(ada_sweep_build(&s, none, 1, NULL, &w, err, sizeof err), -1);
    cr_assert(strstr(err, "no lnmod_fwd benchmarks of those variants"), "%s", err);
    ada_bench_set_free(&s);
}

static void sweep_beats_first(FILE *f, int *first)
{
    bench(f, first, "lnmod_fwd/dtile/f32-f32-f32/sample/D1536/rows32760", 90, 0);
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760", 99, 0);
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D3072/rows32760", 98, 0);
}

Test(sweep, default_slice_has_the_most_D)
{
    ada_bench_set s = {0};
    load(&s, sweep_beats_first);
    ada_sweep w;
    char err[256];
    cr_assert_eq(ada_sweep_build(&s, NULL, 0, NULL, &w, err, sizeof err), 0);
    cr_assert_str_eq(w.shape, "bf16-f32-bf16/sample/rows32760");
    cr_assert_eq(w.nD, 2);
    ada_sweep_free(&w);
    ada_bench_set_free(&s);
}

static void no_kernels(FILE *f, int *first)
{
    bench(f, first, "copy/bytes1000", 100, 0);
    bench(f, first, "lnmod_fwd/dtile/garbage", 50, 0);
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D0/rows5", 50, 0);
}

Test(sweep, nothing_to_sweep_is_an_error)
{
    ada_bench_set s = {0};
    load(&s, no_kernels);
    ada_sweep w;
    char err[256] = "";
    cr_assert_eq(ada_sweep_build(&s, NULL, 0, NULL, &w, err, sizeof err), -1);
    cr_assert(strstr(err, "no lnmod_fwd benchmarks"), "%s", err);
    ada_bench_set_free(&s);
}

Test(sweep, width_bar_classes)
{
    /* 90 at multiples of 64 from 1024 to 16384, 85 at the other multiples of 8 there, 80 at even
     * widths from 256 to 1023, 60 at odd D, nothing elsewhere */
    const int64_t D[] = {1024, 1088, 16384, 16320, 1032, 9000, 16376, 256, 264, 1000, 1022, 1002,
                         255, 1, 16383, 16385, 254, 16392, 16448, 1026, 0};
    const double need[] = {90, 90, 90, 90, 85, 85, 85, 80, 80, 80, 80, 80,
                           60, 60, 60, 60, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < sizeof D / sizeof *D; i++)
        cr_expect_eq(ada_sweep_width_need(D[i]), need[i], "D %lld", (long long)D[i]);
}

static void bar_run(FILE *f, int *first)
{
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1024/rows32760", 91, 0);  /* 90: met */
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1088/rows32760", 89, 0);  /* 90: missed */
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1032/rows32760", 86, 0);  /* 85: met */
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D520/rows32760/graph2", 79, 0); /* 80: missed */
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D255/rows32760/graph2", 61, 0); /* 60: met */
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1026/rows32760", 10, 0);  /* no bar */
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D2048/rows32760", 99, 1);  /* 90: no point */
    bench(f, first, "lnmod_fwd/row_per_warp/bf16-f32-bf16/sample/D1024/rows32760", 50, 0);
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1024/rows1560/graph4", 95, 0);
    bench(f, first, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1024/rows65520/B2", 95, 0);
}

Test(sweep, width_bar_verdict_on_its_slice_only)
{
    ada_bench_set s = {0};
    load(&s, bar_run);
    ada_sweep w;
    char err[256];
    cr_assert_eq(ada_sweep_build(&s, NULL, 0, "bf16-f32-bf16/sample/rows32760", &w, err, sizeof err), 0, "%s", err);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cr_assert_eq(ada_sweep_bar_print(m, &w, "dtile"), 0);
    fclose(m);
    cr_expect(strstr(buf, "- width bar missed: D 1088: 89.0% of copy (needs 90%)"), "%s", buf);
    cr_expect(strstr(buf, "- width bar missed: D 520: 79.0% of copy (needs 80%)"), "%s", buf);
    cr_expect(strstr(buf, "- width bar missed: D 2048: no point in this run (needs 90%)"), "%s", buf);
    cr_expect_eq(count(buf, "width bar missed"), 3, "%s", buf);
    cr_expect(strstr(buf, "3 of 6 widths meet it (multiples of 64 1/3, other multiples of 8 1/1, 256-1023 0/1, "
                          "odd 1/1)."), "%s", buf);
    free(buf);
    /* the bar's slice but a variant the run lacks, and a slice not the bar's: nothing */
    m = open_memstream(&buf, &len);
    cr_expect_eq(ada_sweep_bar_print(m, &w, "nope"), 1);
    ada_sweep_free(&w);
    cr_assert_eq(ada_sweep_build(&s, NULL, 0, "bf16-f32-bf16/sample/rows1560", &w, err, sizeof err), 0, "%s", err);
    cr_expect_eq(ada_sweep_bar_print(m, &w, "dtile"), 1);
    ada_sweep_free(&w); /* two samples in one call: not the bar's slice either */
    cr_assert_eq(ada_sweep_build(&s, NULL, 0, "bf16-f32-bf16/sample/rows65520/B2", &w, err, sizeof err), 0, "%s", err);
    cr_expect_eq(ada_sweep_bar_print(m, &w, "dtile"), 1);
    fclose(m);
    cr_expect_eq(len, 0, "printed: %s", buf);
    free(buf);
    ada_sweep_free(&w);
    ada_bench_set_free(&s);
}
