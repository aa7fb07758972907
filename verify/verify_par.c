/* verify_par.c -- pthread parallel for of the verifier (see verify_par.h). */
#include "verify_par.h"

#include <pthread.h>

typedef struct {
    verify_range_fn fn;
    void *ctx;
    int64_t lo, hi;
    int tid;
} chunk;

static void *run_chunk(void *p)
{
    chunk *c = p;
    c->fn(c->ctx, c->lo, c->hi, c->tid);
    return NULL;
}

int verify_parallel(int64_t n, int64_t cost_per_item, int threads, verify_range_fn fn, void *ctx)
{
    if (n <= 0) return 0;
    if (threads > VERIFY_MAX_THREADS) threads = VERIFY_MAX_THREADS;
    if (threads < 1) threads = 1;
    if (cost_per_item < 1) cost_per_item = 1;
    /* Below ~64k element visits a thread costs more than it saves. */
    if (n < threads || n * cost_per_item < ((int64_t)1 << 16)) threads = n < threads ? (int)n : threads;
    if (n * cost_per_item < ((int64_t)1 << 16)) threads = 1;
    if (threads == 1) {
        fn(ctx, 0, n, 0);
        return 1;
    }
    chunk ch[VERIFY_MAX_THREADS];
    pthread_t th[VERIFY_MAX_THREADS];
    int started[VERIFY_MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        ch[t] = (chunk){fn, ctx, n * t / threads, n * (t + 1) / threads, t};
        started[t] = pthread_create(&th[t], NULL, run_chunk, &ch[t]) == 0;
    }
    for (int t = 0; t < threads; t++) {
        if (started[t]) pthread_join(th[t], NULL);
        else run_chunk(&ch[t]);
    }
    return threads;
}
