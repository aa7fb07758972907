/* verify_span_cuda.h -- the checks of verify_span.h on device memory (verify_span_cuda.cu),
 * for verify_backend.c: the buffers stay on the GPU, only two counters come back.
 *
 *   unsigned long long bad[2];
 *   verify_cuda_span_check(&sp, buf, ref, poison, dcount, bad);
 *   bad[0]: bytes outside the rows (front band, gaps, rest) that are not `poison`
 *   bad[1]: bytes inside the rows that differ from ref's (0 when ref is NULL)
 *
 * buf and ref are device buffers of sp.bytes laid out alike; dcount is a device array of two
 * unsigned long long the call may overwrite. Returns 0, or the CUDA error code (a launch
 * or a copy failed). Waits for the device. */
#ifndef ADALOAD_VERIFY_SPAN_CUDA_H
#define ADALOAD_VERIFY_SPAN_CUDA_H

#include "verify_span.h"

#ifdef __cplusplus
extern "C" {
#endif

int verify_cuda_span_check(const verify_span *sp, const unsigned char *buf, const unsigned char *ref,
                           unsigned char poison, unsigned long long *dcount, unsigned long long bad[2]);

#ifdef __cplusplus
}
#endif

#endif
