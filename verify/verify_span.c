/* verify_span.c -- poison and bit-equality checks of strided buffers over threads
 * (verify_span.h). */
#include "verify_span.h"

#include <string.h>

#include "verify_par.h"

/* Every byte of p[0, n) is byte (memcmp against a block of it). */
static int all_bytes(const unsigned char *p, size_t n, unsigned char byte)
{
    unsigned char blk[4096];
    memset(blk, byte, sizeof blk);
    for (size_t i = 0; i < n; i += sizeof blk)
        if (memcmp(p + i, blk, n - i < sizeof blk ? n - i : sizeof blk) != 0) return 0;
    return 1;
}

typedef struct {
    const verify_span *sp;
    const unsigned char *a, *c;
    unsigned char poison;
    int ok[VERIFY_MAX_THREADS];
} span_ctx;

static void gaps_range(void *p, int64_t lo, int64_t hi, int tid)
{
    span_ctx *k = p;
    const verify_span *s = k->sp;
    const size_t gap = (size_t)(s->stride - s->D) * s->es;
    int ok = 1;
    for (int64_t r = lo; r < hi && ok; r++)
        if (r + 1 < s->nrows) ok = all_bytes(k->a + s->front + (size_t)(r * s->stride + s->D) * s->es, gap, k->poison);
    k->ok[tid] = ok;
}

static void same_range(void *p, int64_t lo, int64_t hi, int tid)
{
    span_ctx *k = p;
    const verify_span *s = k->sp;
    int ok = 1;
    for (int64_t r = lo; r < hi && ok; r++) {
        const size_t off = s->front + (size_t)(r * s->stride) * s->es;
        ok = memcmp(k->a + off, k->c + off, (size_t)s->D * s->es) == 0;
    }
    k->ok[tid] = ok;
}

static int all_ok(const span_ctx *k, int used)
{
    for (int t = 0; t < used; t++)
        if (!k->ok[t]) return 0;
    return 1;
}

int verify_span_outside_ok(const verify_span *sp, const unsigned char *buf, unsigned char poison, int threads)
{
    if (sp->nrows < 1) return all_bytes(buf, sp->bytes, poison);
    const size_t end = sp->front + (size_t)((sp->nrows - 1) * sp->stride + sp->D) * sp->es;
    if (!all_bytes(buf, sp->front, poison) || !all_bytes(buf + end, sp->bytes - end, poison)) return 0;
    if (sp->stride == sp->D) return 1;
    span_ctx k = {.sp = sp, .a = buf, .poison = poison};
    int used = verify_parallel(sp->nrows, (sp->stride - sp->D) * (int64_t)sp->es / 8 + 1, threads, gaps_range, &k);
    return all_ok(&k, used);
}

int verify_span_same(const verify_span *sp, const unsigned char *a, const unsigned char *c, int threads)
{
    span_ctx k = {.sp = sp, .a = a, .c = c};
    int used = verify_parallel(sp->nrows, sp->D * (int64_t)sp->es / 8 + 1, threads, same_range, &k);
    return all_ok(&k, used);
}
