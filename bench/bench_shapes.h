/* bench_shapes.h -- the shape sets of `adaload bench` and the stable benchmark names.
 *
 *   ada_shape shapes[ADA_MAX_SHAPES];
 *   int64_t n = ada_shape_set("wan", shapes, ADA_MAX_SHAPES);      // -1: unknown set
 *   char name[ADA_NAME_MAX];
 *   ada_shape_bench_name(&shapes[0], "dtile", name, sizeof name);
 *   // "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows1560/graph43"
 *
 * Sets: "wan" (Wan 2.1 1.3B/14B hidden sizes 1536 and 5120 and Wan 2.2 5B's 3072; images and
 * 17-, 33-, 81-frame clips at 480p and 720p, one sample each; bf16 x/y with fp32 per-sample
 * modulation at Wan's 6*D stride, plus fp32 x for rows >= 32,760), "sweep" (D = 256..16384,
 * powers of two and the Wan sizes, 32,760 rows), "quick" (CI smoke test, seconds).
 * The shape list is also printed as JSON (`adaload bench --list-shapes`) for the PyTorch peers
 * script, so both sides time exactly the same shapes under the same names.
 *
 * Small shapes are timed by CUDA-graph replay of K launches (time / K): K depends only on the
 * shape's minimal bytes (never on the device), so names are the same on every machine.
 */
#ifndef ADALOAD_BENCH_SHAPES_H
#define ADALOAD_BENCH_SHAPES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lnmod_desc.h"

enum { ADA_MAX_SHAPES = 128, ADA_NAME_MAX = 256 };

/* Shapes whose minimal bytes are below this are timed by graph replay (about 15 us at
 * 4.3 TB/s, where launch latency and event resolution would otherwise show). */
#define ADA_GRAPH_BYTES_BELOW ((int64_t)64 << 20)

typedef struct {
    lnmod_desc desc;
    int64_t min_bytes; /* lnmod_fwd_min_bytes(desc, 0): no statistics outputs */
    int64_t graph_k;   /* launches per graph replay; 0 = plain launches */
} ada_shape;

/* Fills out[] with the named set; returns the count, or -1 for an unknown name or too
 * small an array. */
int64_t ada_shape_set(const char *set, ada_shape *out, int64_t cap);

/* A per-sample shape: one sample of `rows` tokens, modulation at stride 6*D. */
ada_shape ada_shape_make(int64_t D, int64_t rows, lnmod_dtype x, lnmod_dtype mod, lnmod_dtype y);

/* K for a byte count: 0 at or above ADA_GRAPH_BYTES_BELOW, else ceil(64 MiB / bytes) in
 * [2, 64]. */
int64_t ada_graph_k(int64_t bytes);

/* "bf16-f32-bf16/sample/D5120/rows32760[/graph<K>]": the part of the name after the
 * variant. Returns 0, or -1 if buf is too small. */
int ada_shape_suffix(const ada_shape *s, char *buf, size_t n);
/* "lnmod_fwd/<variant>/<suffix>". */
int ada_shape_bench_name(const ada_shape *s, const char *variant, char *buf, size_t n);
/* "copy/bytes<N>[/graph<K>]" for the copy ceiling of N bytes moved (read + write). */
int ada_copy_bench_name(int64_t bytes, char *buf, size_t n);

/* The set as a JSON array (see bench/peers/torch_peers.py for the reader). */
json_t *ada_shapes_json(const ada_shape *s, int64_t n);

#endif
