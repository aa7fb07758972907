/* bench_planner.h -- the planner's CPU benchmarks for `adaload bench` (bench_planner.c).
 *
 *   ada_planner_bench *pb = NULL;
 *   int n = ada_planner_bench_setup("quick", "datasets/models/wan2.1-14b.json", match, arg, &pb);
 *   ada_bench_run(...);                 // registered before; pb must outlive the run
 *   ada_planner_bench_free(pb);         // closes the generated manifests
 *
 * Sets: "quick" plans a generated 100,000-sample manifest; "wan" and "full" add a
 * 10,000,000-sample one. Each size is planned under equal-token and dual with random
 * assignment, named cpu/planner/<policy>/samples<N>, and under dual with each cost-aware
 * assignment, cpu/planner/dual-<assign>/samples<N> (sorted-window, lpt, kk). The timed region is reading the CSV
 * (parsing included) and planning + simulating; generating the manifest is not timed.
 * Counters: samples, seconds_per_10M (the measured time scaled to 10 M samples), and
 * bytes_per_sample: the high-water mark of the planner's own heap (manifest + plan, as
 * counted by its allocator wrapper, deterministic) divided by the samples.
 * Only the names match accepts (NULL: all) are registered. Returns the number registered
 * (0 for a set without planner benchmarks), or -1 when registration failed (free *out
 * anyway).
 */
#ifndef ADALOAD_BENCH_PLANNER_H
#define ADALOAD_BENCH_PLANNER_H

#include "bench_gpu.h" /* ada_name_match_fn */

typedef struct ada_planner_bench ada_planner_bench;

int ada_planner_bench_setup(const char *set, const char *model_path, ada_name_match_fn match, void *match_arg,
                            ada_planner_bench **out);
void ada_planner_bench_free(ada_planner_bench *b);

#endif
