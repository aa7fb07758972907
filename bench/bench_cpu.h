/* bench_cpu.h -- CPU benchmarks of `adaload bench`: the float64 reference forward
 * (reported, never gated: CI machines are noisy).
 *
 *   ada_cpu_bench *c = NULL;
 *   int64_t n = ada_cpu_bench_setup("quick", match, match_arg, 3, &c);  // registers; -1 error
 *   ada_bench_run(...);
 *   ada_cpu_bench_free(c);
 *
 * Names: cpu/ref_lnmod_fwd/<x>-<mod>-<y>/<layout>/D<D>/rows<rows>. Each sample is one
 * ref_lnmod_forward call timed with CLOCK_MONOTONIC (manual time).
 */
#ifndef ADALOAD_BENCH_CPU_H
#define ADALOAD_BENCH_CPU_H

#include <stdint.h>

#include "bench_gpu.h" /* ada_name_match_fn */

typedef struct ada_cpu_bench ada_cpu_bench;

int64_t ada_cpu_bench_setup(const char *set, ada_name_match_fn match, void *match_arg,
                            int repetitions, ada_cpu_bench **out);
void ada_cpu_bench_free(ada_cpu_bench *c);

#endif
