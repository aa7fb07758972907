/* verify_model_internal.h -- the model indices shared by verify_model.c (forward) and
 * verify_model_bwd.c (backward); the order of verify_models[]. */
#ifndef ADALOAD_VERIFY_MODEL_INTERNAL_H
#define ADALOAD_VERIFY_MODEL_INTERNAL_H

enum { M_OK, M_ONEPASS, M_EPS, M_OOB, M_LAZY, M_PIVOT, M_BWD_DROP, M_BWD_GAP, M_BWD_ACCUM, M_BWD_WS };

#include <stdint.h>

/* Pairwise fp32 sum of v[0..n). */
static inline float psum(const float *v, int64_t n)
{
    if (n <= 32) {
        float s = 0.0f;
        for (int64_t i = 0; i < n; i++) s += v[i];
        return s;
    }
    int64_t h = n / 2;
    return psum(v, h) + psum(v + h, n - h);
}

#endif
