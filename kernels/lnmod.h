/* lnmod.h -- C API of the LayerNorm-Modulate forward CUDA kernels.
 *
 * Any C program can call it: the kernels live in liblnmod_cuda (CUDA C), this header needs
 * only cuda_runtime_api.h. Pick a variant by name from the registry (`adaload verify --list`
 * prints it), fill an lnmod_desc (lnmod_desc.h), pass device pointers and a stream:
 *
 *   lnmod_desc d = lnmod_desc_default();
 *   d.rows = B*S; d.D = 5120; d.rows_per_sample = S; d.scale_stride = d.shift_stride = 6*5120;
 *   lnmod_status st = lnmod_forward("dtile", &d, x, scale, shift, y, mean, rstd, stream);
 *
 * mean and rstd (fp32, [rows]) are optional outputs for a later backward: pass NULL to skip.
 * Every call validates the descriptor and pointers on the host before touching the GPU and
 * returns a status; it never aborts. A launch error is reported as LNMOD_ERR_CUDA (the
 * launch is asynchronous: errors of the running kernel surface at the next synchronization).
 */
#ifndef ADALOAD_LNMOD_H
#define ADALOAD_LNMOD_H

#include <cuda_runtime_api.h>

#include "lnmod_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef lnmod_status (*lnmod_launch_fn)(const lnmod_desc *d, const void *x, const void *scale,
                                        const void *shift, void *y, float *mean, float *rstd,
                                        cudaStream_t stream);

typedef struct {
    const char *name;        /* stable: benchmark history is keyed by it */
    const char *description; /* one line */
    /* Non-zero when the variant handles d (every valid descriptor, for the shipped ones). */
    int (*supports)(const lnmod_desc *d);
    lnmod_launch_fn launch;  /* called only after validation */
    /* Bytes this variant really moves through device memory (>= lnmod_fwd_min_bytes),
     * counting its re-reads; for the kernel notes. */
    int64_t (*bytes_moved)(const lnmod_desc *d, int want_stats);
} lnmod_variant;

/* The registry: a table ended by an entry whose name is NULL. */
extern const lnmod_variant lnmod_variants[];

/* The variant called name, or NULL. */
const lnmod_variant *lnmod_find_variant(const char *name);

/* Validates (descriptor, pointers, variant) and launches the forward on stream. */
lnmod_status lnmod_forward(const char *variant, const lnmod_desc *d, const void *x,
                           const void *scale, const void *shift, void *y, float *mean,
                           float *rstd, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
