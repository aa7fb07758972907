/* bench_planner.h -- the planner's CPU benchmarks for `adaload bench` (bench_planner.c).
 *
 *   int n = ada_bench_register_planner("quick");   // before ada_bench_run(...)
 *
 * Sets: "quick" plans a generated 100,000-sample manifest; "wan" and "full" add a
 * 10,000,000-sample one. Each size is planned under equal-token and dual (random
 * assignment), named cpu/planner/<policy>/samples<N>. The timed region is reading the CSV
 * (parsing included) and planning + simulating; generating the manifest is not timed.
 * Counters: samples, seconds_per_10M (the measured time scaled to 10 M samples), and
 * bytes_per_sample: the high-water mark of the planner's own heap (manifest + plan, as
 * counted by its allocator wrapper, deterministic) divided by the samples.
 * Returns the number of benchmarks registered (0 for a set without planner benchmarks), or
 * -1 when registration failed.
 */
#ifndef ADALOAD_BENCH_PLANNER_H
#define ADALOAD_BENCH_PLANNER_H
int ada_bench_register_planner(const char *set);
#endif
