/* bench_shapes.h -- the shape sets of `adaload bench` and the stable benchmark names.
 *
 *   ada_shape shapes[ADA_MAX_SHAPES];
 *   int64_t n = ada_shape_set("wan", shapes, ADA_MAX_SHAPES);      // -1: unknown set
 *   char name[ADA_NAME_MAX];
 *   ada_shape_bench_name(&shapes[0], "dtile", name, sizeof name);
 *   // "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows1560/graph43"
 *   ada_shape_bwd_bench_name(&shapes[0], "dtile", name, sizeof name);
 *   // "lnmod_bwd/dtile/bf16-f32-bf16/sample/D1536/rows1560/graph30": the backward, whose
 *   // graph K follows its own (larger) minimal bytes
 *
 * Sets (74, 83, 17 and 3 shapes; every modulation row at Wan's 6*D stride, fp32 modulation):
 *   "wan"    Wan 2.1 1.3B/14B hidden sizes 1536 and 5120 and Wan 2.2 5B's 3072: images and
 *            17-, 33-, 81-frame clips at 480p and 720p, one sample each, bf16 x/y per sample,
 *            plus fp32 x for rows >= 32,760, and two 480p 81-frame clips in one call
 *            (".../rows65520/B2": torch.compile's gradients are wrong at one sample); per-token, per-frame (a timestep per latent
 *            frame) and fp16 shapes of 480p 81-frame clips at D 1536, 2048, 3072, 4096, 5120
 *            and of 720p 81-frame clips at the Wan widths; fp32 x at 2048 and 4096; last, 15
 *            shapes of the fused gated residual op (res = 1; fp32 residual, bf16 branch and
 *            out, per-sample fp32 gate and modulation) at the Wan widths: first issue 22's bar,
 *            9 of site 3 (32,760 and 75,600 rows and two 32,760-row samples, B2), then sites 1
 *            and 2 at one sample of 32,760 rows (6; ada_shape_make_res)
 *   "sweep"  bf16 per-sample, 32,760 rows: every multiple of 128 from 256 to 8192, then 10240,
 *            12288, 13824, 14336, 16384 and the odd widths 1000, 1537, 5119; last, the fused
 *            gated residual op at site 3 (as the wan set's, one sample of 32,760 rows) at 14
 *            widths from 1024 to 10240 (1152, 1920, 2304, 2560, 3840 among them)
 *   "models" hidden sizes of public image/video diffusion transformers at their usual token
 *            count, one sample, bf16 per-sample; each shape names its model (ada_model_shapes)
 *   "quick"  CI smoke test, seconds
 * The shape list is also printed as JSON (`adaload bench --list-shapes`) for the PyTorch peers
 * script, so both sides time exactly the same shapes under the same names.
 *
 * A shape of B >= 2 samples is named with /B<B> after its rows (the rows of the whole call).
 * Small shapes are timed by CUDA-graph replay of K launches (time / K): K depends only on the
 * shape's minimal bytes (never on the device), so names are the same on every machine.
 */
#ifndef ADALOAD_BENCH_SHAPES_H
#define ADALOAD_BENCH_SHAPES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lnmod_desc.h"
#include "lnmod_res_desc.h"

enum { ADA_MAX_SHAPES = 256, ADA_NAME_MAX = 256 };

/* Shapes whose minimal bytes are below this are timed by graph replay (about 15 us at
 * 4.3 TB/s, where launch latency and event resolution would otherwise show). */
#define ADA_GRAPH_BYTES_BELOW ((int64_t)64 << 20)

typedef struct {
    lnmod_desc desc;
    int64_t min_bytes; /* lnmod_fwd_min_bytes(desc, 0): no statistics outputs */
    int64_t graph_k;   /* launches per graph replay; 0 = plain launches */
    int64_t bwd_min_bytes; /* lnmod_bwd_min_bytes(desc): the backward's minimal bytes */
    int64_t bwd_graph_k;   /* the backward's launches per graph replay (of bwd_min_bytes) */
    const char *model; /* the model the shape stands for (the models set), else NULL */
    int res;           /* 1: a shape of the fused gated residual op (issue 22): rdesc is its
                        * descriptor, desc its map (lnmod_res_map_desc), min_bytes
                        * lnmod_res_fwd_min_bytes(rdesc, 1) and bwd_min_bytes
                        * lnmod_res_bwd_min_bytes(rdesc, 1) (ada_shape_make_res) */
    int site;          /* res: Wan 2.1's residual site, 1, 2 or 3 (its name has /site1, /site2
                        * after the layout; site 3 none); 0 for lnmod shapes */
    lnmod_res_desc rdesc;
} ada_shape;

/* One entry of the models set: a public model at its usual resolution, and where the
 * numbers come from (the public config or code of the model). */
typedef struct {
    const char *name;   /* e.g. "flux1-1024px" */
    int64_t D;          /* hidden size: heads x head dim */
    int64_t tokens;     /* tokens of one sample (= rows of the shape) */
    const char *source;
} ada_model_shape;

/* The models set's table (n entries). */
const ada_model_shape *ada_model_shapes(int64_t *n);

/* Fills out[] with the named set; returns the count, or -1 for an unknown name or too
 * small an array. */
int64_t ada_shape_set(const char *set, ada_shape *out, int64_t cap);

/* A per-sample shape: one sample of `rows` tokens, modulation at stride 6*D. */
ada_shape ada_shape_make(int64_t D, int64_t rows, lnmod_dtype x, lnmod_dtype mod, lnmod_dtype y);
/* B samples of S tokens each, per sample (rows S*B, B modulation rows at stride 6*D). */
ada_shape ada_shape_make_batch(int64_t D, int64_t S, int64_t B, lnmod_dtype x, lnmod_dtype mod, lnmod_dtype y);
/* One sample of S tokens in any layout (frame_len: tokens per latent frame, per-frame only);
 * modulation rows at stride 6*D. */
ada_shape ada_shape_make_layout(int64_t D, int64_t S, lnmod_layout layout, int64_t frame_len,
                                lnmod_dtype x, lnmod_dtype mod, lnmod_dtype y);

/* A shape of the fused gated residual op at one of Wan 2.1's residual sites
 * (kernels/lnmod_res_design.md), B samples of S tokens, fp32 residual r/h, `branch` y, fp32
 * modulation, `out` out, per sample, table rows at stride 6*D (chunk views of e [B, 6, D]):
 *   site 1  x = x + y * e[2], then norm3(x) (affine, weight and bias [D]): LNMOD_RES_GATE,
 *           LNMOD_RES_AFFINE
 *   site 2  x = x + y, then norm2(x) * (1 + e[4]) + e[3]: LNMOD_RES_GATE_NONE, LNMOD_RES_MODULATE
 *   site 3  x = x + y * e[5], then the next block's norm1(x) * (1 + e'[1]) + e'[0]:
 *           LNMOD_RES_GATE, LNMOD_RES_MODULATE
 * (which chunk each input is: bench_gpu_res.h). Another site gives site 0 and a descriptor
 * that lnmod_res_desc_validate rejects (gate LNMOD_RES_GATE_COUNT). Its bytes (the copy
 * ceiling of both directions) are the descriptor's one owner's: the forward writes the
 * statistics (the training forward: the backward needs them), the backward has dh (h's other
 * use, the next residual); site 2 has no gate, so fewer bytes. */
ada_shape ada_shape_make_res(int64_t D, int64_t S, int64_t B, int site, lnmod_dtype branch, lnmod_dtype out);

/* K for a byte count: 0 at or above ADA_GRAPH_BYTES_BELOW, else ceil(64 MiB / bytes) in
 * [2, 64]. */
int64_t ada_graph_k(int64_t bytes);

/* "bf16-f32-bf16/sample/D5120/rows32760[/graph<K>]": the part of the name after the
 * variant. Returns 0, or -1 if buf is too small. */
int ada_shape_suffix(const ada_shape *s, char *buf, size_t n);
/* "lnmod_fwd/<variant>/<suffix>"; for a res shape "lnmod_res_fwd/<variant>/<suffix>" whose
 * suffix has four dtypes, <res>-<branch>-<mod>-<out> ("f32-bf16-f32-bf16/sample/D5120/rows32760"),
 * and at sites 1 and 2 the site after the layout ("f32-bf16-f32-bf16/sample/site1/D5120/rows32760";
 * runfiles/run_name.h reads it back). */
int ada_shape_bench_name(const ada_shape *s, const char *variant, char *buf, size_t n);
/* The backward's suffix (its own /graph<K>) and "lnmod_bwd/<variant>/<that suffix>"
 * ("lnmod_res_bwd/..." for a res shape). */
int ada_shape_bwd_suffix(const ada_shape *s, char *buf, size_t n);
int ada_shape_bwd_bench_name(const ada_shape *s, const char *variant, char *buf, size_t n);
/* "copy/bytes<N>[/graph<K>]" for the copy ceiling of N bytes moved (read + write). */
int ada_copy_bench_name(int64_t bytes, char *buf, size_t n);

/* The set as a JSON array (see bench/peers/torch_peers.py for the reader). */
json_t *ada_shapes_json(const ada_shape *s, int64_t n);

#endif
