/* test_bench_shim.c -- Criterion tests of the Google Benchmark C shim (bench_shim.cc):
 * manual time drives the times and bytes_per_second, names stay bare (no "/manual_time"
 * decorations), repetitions and aggregates are written, the JSON is strict even when an
 * aggregate would be 0/0, non-finite counters fail the benchmark, the filter applies to the
 * bare names, and an empty run still writes a valid document. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "bench_shim.h"

static char path[64];

static void make_path(void)
{
    snprintf(path, sizeof path, "/tmp/adaload-test-shim-%ld.json", (long)getpid());
}

static void cleanup(void) { remove(path); }

TestSuite(shim, .init = make_path, .fini = cleanup);

typedef struct {
    double seconds;  /* manual time per iteration */
    double counter;  /* value of the "c" counter */
    int calls;
} fake;

static void bm_fake(ada_bench_state *st, void *arg)
{
    fake *f = arg;
    f->calls++;
    while (ada_bench_keep_running(st)) ada_bench_set_iteration_time(st, f->seconds);
    ada_bench_set_bytes_processed(st, 1000 * ada_bench_iterations(st));
    ada_bench_counter(st, "c", f->counter);
}

static json_t *load(void)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e); /* strict: NaN/Infinity would fail here */
    cr_assert_not_null(j, "%s: %s", path, e.text);
    return j;
}

Test(shim, manual_time_bare_names_and_aggregates)
{
    fake f = {2e-6, 0.0, 0}; /* a counter that is 0 everywhere: its cv would be 0/0 */
    cr_assert_eq(ada_bench_register("t/fake/D8/rows4", bm_fake, &f, 3), 0);
    ada_bench_add_context("adaload_test", "yes");
    cr_assert_eq(ada_bench_run(path, NULL, 0.001), 1);
    cr_assert(f.calls >= 3);
    json_t *j = load();
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "context"), "adaload_test")), "yes");
    json_t *b = json_object_get(j, "benchmarks");
    int iterations = 0, aggregates = 0;
    size_t i;
    json_t *e;
    json_array_foreach(b, i, e) {
        const char *run_name = json_string_value(json_object_get(e, "run_name"));
        cr_assert_str_eq(run_name, "t/fake/D8/rows4");
        const char *type = json_string_value(json_object_get(e, "run_type"));
        if (!strcmp(type, "iteration")) {
            iterations++;
            cr_assert_str_eq(json_string_value(json_object_get(e, "name")), "t/fake/D8/rows4");
            /* 2 us per iteration of manual time, in microseconds. */
            cr_assert_float_eq(json_number_value(json_object_get(e, "real_time")), 2.0, 1e-9);
            cr_assert_str_eq(json_string_value(json_object_get(e, "time_unit")), "us");
            /* bytes_per_second from the manual time: 1000 bytes / 2 us. */
            cr_assert_float_eq(json_number_value(json_object_get(e, "bytes_per_second")), 5e8, 1.0);
        } else {
            aggregates++;
            cr_assert(isfinite(json_number_value(json_object_get(e, "c"))));
        }
    }
    cr_assert_eq(iterations, 3);
    cr_assert(aggregates >= 3); /* mean, median, stddev (and cv in 1.7) */
    json_decref(j);
}

Test(shim, filter_on_bare_names)
{
    fake a = {1e-6, 1.0, 0}, b = {1e-6, 1.0, 0};
    ada_bench_register("lnmod_fwd/x/D8", bm_fake, &a, 1);
    ada_bench_register("copy/bytes8", bm_fake, &b, 1);
    /* "$" only matches if the decorations are gone from the names filtered. */
    cr_assert_eq(ada_bench_run(path, "D8$", 0.001), 1);
    cr_assert(a.calls > 0);
    cr_assert_eq(b.calls, 0);
    json_t *j = load();
    cr_assert_eq(json_array_size(json_object_get(j, "benchmarks")), 1);
    json_decref(j);
    /* The registry was cleared: a new run with nothing registered writes an empty list. */
    cr_assert_eq(ada_bench_run(path, NULL, 0.001), 0);
    j = load();
    cr_assert_eq(json_array_size(json_object_get(j, "benchmarks")), 0);
    json_decref(j);
}

Test(shim, bad_arguments)
{
    fake a = {1e-6, 1.0, 0};
    cr_assert_eq(ada_bench_register(NULL, bm_fake, &a, 1), -1);
    cr_assert_eq(ada_bench_register("x", NULL, &a, 1), -1);
    cr_assert_eq(ada_bench_register("x", bm_fake, &a, 0), -1);
    ada_bench_register("x", bm_fake, &a, 1);
    cr_assert_eq(ada_bench_run(path, "(", 0.001), -1); /* bad regex */
    cr_assert_eq(a.calls, 0);
}

Test(shim, non_finite_counter_fails_the_benchmark)
{
    fake f = {1e-6, NAN, 0};
    ada_bench_register("t/nan", bm_fake, &f, 1);
    cr_assert_eq(ada_bench_run(path, NULL, 0.001), 1);
    json_t *j = load();
    json_t *e = json_array_get(json_object_get(j, "benchmarks"), 0);
    cr_assert(json_is_true(json_object_get(e, "error_occurred")));
    cr_assert_not_null(strstr(json_string_value(json_object_get(e, "error_message")), "not finite"));
    json_decref(j);
}
