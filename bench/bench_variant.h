/* bench_variant.h -- a variant of the GPU benchmarks by name: a built-in of the kernel
 * registry (kernels/lnmod.h) or a loaded plug-in's "plugin:<name>" (plugin/ada_plugin.h),
 * both timed by the same code (bench_gpu.c). CUDA builds only; internal to the bench library.
 *
 *   if (!ada_bench_variant_exists(name)) -> "no such variant in this build"
 *   const char *why = ada_bench_variant_why(name, &d, bwd, &ws);   // NULL: it can run
 *   int st = ada_bench_variant_forward(name, &d, x, scale, shift, y, fws, stream);
 *   if (st != LNMOD_OK) ada_plugin_status_text(st, buf, n);        // also "unknown status N"
 */
#ifndef ADALOAD_BENCH_VARIANT_H
#define ADALOAD_BENCH_VARIANT_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "lnmod_desc.h"

int ada_bench_variant_exists(const char *name);
/* Why name cannot run the forward (bwd 0) or the backward (bwd 1) of d, or NULL; for the
 * backward *ws gets its workspace bytes. */
const char *ada_bench_variant_why(const char *name, const lnmod_desc *d, int bwd, size_t *ws);
/* The bytes of the forward workspace the bench keeps (state: zeroed once, left zero; dtile: 16). */
#define ADA_BENCH_FWD_WS 256
/* One launch on stream (no statistics outputs for the forward; fwd_ws: ADA_BENCH_FWD_WS zeroed
 * bytes, the same for every launch on the stream); the raw status. */
int ada_bench_variant_forward(const char *name, const lnmod_desc *d, const void *x, const void *scale,
                              const void *shift, void *y, void *fwd_ws, cudaStream_t stream);
int ada_bench_variant_backward(const char *name, const lnmod_desc *d, const void *x, const void *scale,
                               const void *dy, const float *mean, const float *rstd, void *dx, void *dscale,
                               void *dshift, void *ws, size_t ws_bytes, cudaStream_t stream);

#endif
