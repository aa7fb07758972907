/* verify_model.h -- CPU stand-ins for the GPU kernels, so `adaload verify --cpu-model` can
 * exercise the whole verifier (inputs, poisoning, guard bands, comparison, record) on a
 * machine without a GPU, and so the test suite can show that the verifier catches wrong
 * kernels. They are never used for a record the gate accepts (backend "cpu-model").
 *
 *   model          the kernels' algorithm in fp32 (corrected two-pass statistics, pairwise
 *                  sums, one FMA, one final rounding): must pass
 *   model_onepass  var = E[x^2] - E[x]^2 with a plain fp32 mean: fails on large-mean rows
 *   model_eps      eps hard-coded to 1e-5: fails on constant rows (rstd, y when eps matters)
 *   model_oob      writes one element past the end of y: fails the guard band
 *   model_lazy     leaves the last row of y unwritten: fails on the NaN poison
 *   model_pivot    dtile's one-pass pivot statistics in fp32 (must pass, like model)
 *
 * Pointers are host memory laid out as the device buffers would be (same offsets).
 */
#ifndef ADALOAD_VERIFY_MODEL_H
#define ADALOAD_VERIFY_MODEL_H

#include "lnmod_desc.h"

typedef struct {
    const char *name;
    const char *description;
} verify_model_info;

/* Table ended by a NULL name. */
extern const verify_model_info verify_models[];

/* Index into verify_models, or -1. */
int verify_model_find(const char *name);

/* Rows [r0, r1) of model `which` (an index from verify_model_find). Threads may run
 * disjoint row ranges concurrently. The model_oob extra write happens in the range that
 * holds the last row. */
void verify_model_rows(int which, const lnmod_desc *d, int64_t r0, int64_t r1, const void *x,
                       const void *scale, const void *shift, void *y, float *mean, float *rstd);

#endif
