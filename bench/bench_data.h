/* bench_data.h -- random benchmark inputs (never zeros) in the kernels' storage dtypes.
 *
 *   ada_rng r; ada_rng_seed(&r, 42);
 *   ada_bench_fill(buf, LNMOD_BF16, n, 0.5, 1.0, &r);   // n values ~ N(0.5, 1), rounded
 *
 * The benchmarks never check results (verify does), so the values only need to be ordinary
 * finite numbers: no zeros, NaNs or subnormals that could change a kernel's speed.
 */
#ifndef ADALOAD_BENCH_DATA_H
#define ADALOAD_BENCH_DATA_H

#include <stdint.h>

#include "ada_rng.h"
#include "lnmod_desc.h"

/* fp32 -> bf16 bits, round to nearest even (finite inputs). */
uint16_t ada_bench_f32_to_bf16(float f);
/* fp32 -> fp16 bits, round to nearest even for values in fp16's normal range. */
uint16_t ada_bench_f32_to_f16(float f);

/* n values of N(mean, sd) stored in dtype t at buf; a value that would round to zero is
 * replaced by sd/8 (same sign convention: positive). */
void ada_bench_fill(void *buf, lnmod_dtype t, int64_t n, double mean, double sd, ada_rng *r);

#endif
