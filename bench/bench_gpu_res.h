/* bench_gpu_res.h -- the fused gated residual op's part of the GPU benchmarks (issue 22):
 * lnmod_res_fwd/<variant>/... times lnmod_res_forward, lnmod_res_bwd/<variant>/... times
 * lnmod_res_backward, of the registry's variants that have the fused op (lnmod.h's
 * res_forward; plug-ins have none). CUDA builds only; internal to the bench library
 * (bench_gpu.c sizes and launches res shapes through these; the timing is its own).
 *
 *   const char *why = ada_res_variant_why("dtile", &rd, 1, &ws);   // NULL: it can run
 *   ada_res_offsets o; ada_res_offsets_make(&rd, 1, ws, &o);        // one input set's layout
 *   int st = ada_res_launch("dtile", &rd, 1, &o, base, ws, fws, stream); // lnmod_status
 *
 * One input set: r, y and a [B, 6, D] modulation table e (the strides of ada_shape_make_res:
 * 6*D), whose chunks are Wan 2.1's at the descriptor's site (kernels/lnmod_res_design.md):
 *   site 3 (gate, MODULATE)       gate chunk 5, scale chunk 1, shift chunk 0 (one table
 *                                 stands for the block's e and the next block's e')
 *   site 1 (gate, AFFINE)         gate chunk 2; weight and bias [D] each in a region of their
 *                                 own (wb: 2*D elements of the modulation dtype)
 *   site 2 (no gate, MODULATE)    no gate (NULL), scale chunk 4, shift chunk 3
 * (AFFINE without a gate, no site of Wan's, would take the weight region and no gate.) The
 * forward writes h (out of place, as PyTorch's x = x + y * e[k]), out, mean and rstd (the
 * training forward: the backward needs them); the backward reads h, y, the table (or the
 * weight), d_out, dh, mean and rstd and writes dr, dy and dgate/dscale/dshift into the same
 * chunks of a gradient table de (dweight/dbias into their own region dwb), with its workspace.
 * Every part lies inside set_bytes, which bench_gpu.c fills with random values before any
 * launch (nothing is read uninitialised). The forward's workspace is state (lnmod_res.h: zero
 * on entry, left zero), so it is no part of a set: bench_gpu.c keeps one zeroed buffer of
 * ADA_RES_FWD_WS bytes for every forward (its launches run one after another on one stream).
 */
#ifndef ADALOAD_BENCH_GPU_RES_H
#define ADALOAD_BENCH_GPU_RES_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "lnmod_res_desc.h"

typedef struct {
    size_t r, y, e;              /* inputs of both directions (the backward's h is r's slot) */
    size_t wb;                   /* AFFINE: weight, bias (2*D, mod dtype); else 0 bytes */
    size_t out, stats;           /* the forward's out; mean, rstd (both directions) */
    size_t h;                    /* the forward's h */
    size_t dout, dh, dr, dy, de; /* the backward's */
    size_t dwb;                  /* the backward's dweight, dbias (AFFINE) */
    size_t ws;                   /* the backward's workspace */
    int has_gate;                /* whether gate/dgate are passed (else NULL) */
    size_t gate, scale, shift;   /* where the op's gate, scale and shift rows start */
    size_t dgate, dscale, dshift; /* the backward's: where its gradients go */
    size_t set_bytes;            /* one input set, 256-byte aligned parts */
} ada_res_offsets;

/* The bytes of the one forward workspace the bench keeps (dtile's need 16). */
#define ADA_RES_FWD_WS 256

/* Why variant cannot run the forward (bwd 0) or the backward (bwd 1) of d, or NULL; *ws gets
 * that direction's workspace bytes (the forward's at most ADA_RES_FWD_WS). */
const char *ada_res_variant_why(const char *variant, const lnmod_res_desc *d, int bwd, size_t *ws);
/* One input set's layout for d (its site's chunks, above); byte offsets from the set's base. */
void ada_res_offsets_make(const lnmod_res_desc *d, int bwd, size_t ws, ada_res_offsets *o);
/* One launch on stream of the input set at base (the forward's workspace: fwd_ws, ws bytes of
 * it used; the backward's: ws bytes in the set); the raw lnmod_status. */
int ada_res_launch(const char *variant, const lnmod_res_desc *d, int bwd, const ada_res_offsets *o, char *base,
                   size_t ws, void *fwd_ws, cudaStream_t stream);

#endif
