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
 *   model_bwd_drop   backward: the column sums skip the last row of every modulation row
 *                    that has more than one (must fail dscale/dshift: the tolerances catch one
 *                    missing term)
 *   model_bwd_gap    backward: writes a zero just past each dscale/dshift row (into the gap
 *                    between strided rows, or the guard band): must fail the gap/guard check
 *   model_bwd_accum  backward: adds into dscale/dshift instead of overwriting (NaN poison)
 *   model_bwd_ws     backward: the finalize's order depends on the workspace's content on
 *                    entry (like reading stale workspace): must fail the determinism check
 * Every model has a backward (verify_model_backward, verify_model_bwd.c): the correct fp32
 * one (per-row mg and mgx by pairwise sums; column sums as per-chunk partials of
 * VERIFY_MODEL_CHUNK rows in the workspace, then a finalize over the chunks in order), except
 * the four above; the forward of the model_bwd_* models is the correct one.
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

/* Rows per chunk of the backward models' column sums. */
#define VERIFY_MODEL_CHUNK 16

/* Workspace bytes of model which's backward for d (a function of d only). */
int64_t verify_model_bwd_workspace(int which, const lnmod_desc *d);

/* The backward of model which (an index from verify_model_find) on host memory, spread over
 * threads; ws holds verify_model_bwd_workspace bytes (its content on entry is ignored, except
 * by model_bwd_ws). Without memory for its scratch it writes nothing (the NaN poison fails). */
void verify_model_backward(int which, const lnmod_desc *d, const void *x, const void *scale,
                           const void *dy, const float *mean, const float *rstd, void *dx,
                           void *dscale, void *dshift, void *ws, int threads);

#endif
