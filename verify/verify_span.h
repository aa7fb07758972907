/* verify_span.h -- the byte checks of a downloaded strided buffer, over threads:
 *
 *   front bytes | row 0: D elements | gap | row 1 | gap | ... | row nrows-1 | rest
 *
 * rows k at front + k*stride*es, D elements of es bytes each; the gaps (stride - D elements)
 * and the rest up to `bytes`. A contiguous buffer of n elements is nrows rows of D with
 * stride D (no gaps): split that way it can be checked over threads.
 *
 *   verify_span_outside_ok(&sp, buf, poison, threads)  1 when the front band, every gap and
 *                                                      the rest hold `poison` in every byte
 *   verify_span_same(&sp, a, c, threads)               1 when the rows of a and c are the
 *                                                      same bit for bit (gaps not compared)
 *
 * The answer does not depend on threads. */
#ifndef ADALOAD_VERIFY_SPAN_H
#define ADALOAD_VERIFY_SPAN_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t bytes, front, es;
    int64_t nrows, D, stride;
} verify_span;

int verify_span_outside_ok(const verify_span *sp, const unsigned char *buf, unsigned char poison, int threads);
int verify_span_same(const verify_span *sp, const unsigned char *a, const unsigned char *c, int threads);

#endif
