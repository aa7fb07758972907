/* verify_par.h -- a parallel for over [0, n) with pthreads, for the verifier's CPU work
 * (input generation, reference, comparison: ~1e11 element visits on the full grid).
 *
 *   int used = verify_parallel(rows, D, threads, fn, ctx);  // fn(ctx, lo, hi, tid)
 *
 * The range is cut into `used` contiguous chunks, chunk t going to tid t (0 <= t < used), so
 * per-thread results can be merged in tid order. Small work (n * cost < 2^16) runs inline
 * as one chunk. If a thread cannot be created its chunk runs on the caller: never fails. */
#ifndef ADALOAD_VERIFY_PAR_H
#define ADALOAD_VERIFY_PAR_H

#include <stdint.h>

#define VERIFY_MAX_THREADS 256

typedef void (*verify_range_fn)(void *ctx, int64_t lo, int64_t hi, int tid);

int verify_parallel(int64_t n, int64_t cost_per_item, int threads, verify_range_fn fn, void *ctx);

#endif
