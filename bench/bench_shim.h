/* bench_shim.h -- Google Benchmark behind a small C API. bench_shim.cc is the only file of
 * the project that includes benchmark/benchmark.h; everything else registers and runs
 * benchmarks through these functions.
 *
 *   static void bm(ada_bench_state *st, void *arg) {
 *       while (ada_bench_keep_running(st)) {
 *           double s = time_one(arg);                 // e.g. CUDA events around the kernel
 *           ada_bench_set_iteration_time(st, s);      // manual time, always
 *       }
 *       ada_bench_set_bytes_processed(st, bytes_per_iteration * ada_bench_iterations(st));
 *       ada_bench_counter(st, "pct_copy_bw", pct);
 *   }
 *   ada_bench_register("lnmod_fwd/dtile/bf16-f32-bf16/sample/D5120/rows32760", bm, arg, 9);
 *   ada_bench_add_context("gpu", "NVIDIA H200");
 *   int rc = ada_bench_run("out/bench.json", filter_regex_or_NULL, min_time_s);
 *
 * Every benchmark uses manual time (UseManualTime) and reports median/mean/stddev/cv
 * aggregates over its repetitions, keeping the individual repetitions in the JSON too
 * (compare's Mann-Whitney U test needs them). Written against Debian 12's 1.7.1
 * (SkipWithError; no SkipWithMessage).
 */
#ifndef ADALOAD_BENCH_SHIM_H
#define ADALOAD_BENCH_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ada_bench_state ada_bench_state; /* a benchmark::State, opaque */
typedef void (*ada_bench_fn)(ada_bench_state *st, void *arg);

/* Registers a benchmark with a stable name; arg is passed through untouched and must
 * outlive ada_bench_run. repetitions >= 1. Returns 0, or -1 on a bad argument. */
int ada_bench_register(const char *name, ada_bench_fn fn, void *arg, int repetitions);

int ada_bench_keep_running(ada_bench_state *st);       /* the `for (auto _ : state)` loop */
int64_t ada_bench_iterations(const ada_bench_state *st);
void ada_bench_set_iteration_time(ada_bench_state *st, double seconds);
void ada_bench_set_bytes_processed(ada_bench_state *st, int64_t bytes);
/* A user counter (averaged per iteration only when per_iteration is non-zero). The value
 * must be finite: NaN or Inf is replaced by 0 and the benchmark marked as failed. */
void ada_bench_counter(ada_bench_state *st, const char *name, double value);
/* Marks the benchmark as failed/skipped with a message (SkipWithError in 1.7.1). */
void ada_bench_skip(ada_bench_state *st, const char *message);

/* Adds a key/value to the JSON "context" object. */
void ada_bench_add_context(const char *key, const char *value);

/* Runs every registered benchmark whose name matches filter (a regex; NULL = all), printing
 * the console table to stdout and writing Google Benchmark JSON to json_path.
 * min_time_s > 0 sets the minimum time per repetition. Returns the number of benchmarks
 * run (>= 0) or -1 on error. The registry is cleared afterwards. */
int ada_bench_run(const char *json_path, const char *filter, double min_time_s);

#ifdef __cplusplus
}
#endif
#endif
