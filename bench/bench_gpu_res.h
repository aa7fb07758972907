/* bench_gpu_res.h -- the fused gated residual op's part of the GPU benchmarks (issue 22):
 * lnmod_res_fwd/<variant>/... times lnmod_res_forward, lnmod_res_bwd/<variant>/... times
 * lnmod_res_backward, of the registry's variants that have the fused op (lnmod.h's
 * res_forward; plug-ins have none). CUDA builds only; internal to the bench library
 * (bench_gpu.c sizes and launches res shapes through these; the timing is its own).
 *
 *   const char *why = ada_res_variant_why("dtile", &rd, 1, &ws);   // NULL: it can run
 *   ada_res_offsets o; ada_res_offsets_make(&rd, 1, ws, &o);        // one input set's layout
 *   int st = ada_res_launch("dtile", &rd, 1, &o, base, ws, stream); // lnmod_status
 *
 * One input set: r, y and a [B, 6, D] modulation table (gate = chunk 5, scale = chunk 1,
 * shift = chunk 0, at the descriptor's strides); the forward writes h (out of place, as
 * PyTorch's x = x + y * e[5]), out, mean and rstd (the training forward: the backward needs
 * them); the backward reads h, y, the table, d_out, dh, mean and rstd and writes dr, dy and
 * dgate/dscale/dshift into the same chunks of a gradient table, with its workspace.
 */
#ifndef ADALOAD_BENCH_GPU_RES_H
#define ADALOAD_BENCH_GPU_RES_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "lnmod_res_desc.h"

typedef struct {
    size_t r, y, e;              /* inputs of both directions (the backward's h is r's slot) */
    size_t out, stats;           /* the forward's out; mean, rstd (both directions) */
    size_t h;                    /* the forward's h */
    size_t dout, dh, dr, dy, de; /* the backward's */
    size_t ws;                   /* the backward's workspace */
    size_t set_bytes;            /* one input set, 256-byte aligned parts */
} ada_res_offsets;

/* Why variant cannot run the forward (bwd 0) or the backward (bwd 1) of d, or NULL; for the
 * backward *ws gets its workspace bytes. */
const char *ada_res_variant_why(const char *variant, const lnmod_res_desc *d, int bwd, size_t *ws);
void ada_res_offsets_make(const lnmod_res_desc *d, int bwd, size_t ws, ada_res_offsets *o);
/* One launch on stream of the input set at base; the raw lnmod_status. */
int ada_res_launch(const char *variant, const lnmod_res_desc *d, int bwd, const ada_res_offsets *o, char *base,
                   size_t ws, cudaStream_t stream);

#endif
