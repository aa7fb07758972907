/* bench_gpu.c -- GPU benchmarks of `adaload bench` (bench_gpu.h): the LayerNorm-Modulate
 * variants and the device-to-device copy ceiling, one timing method for all of them.
 *
 * Timing method (the README states it; the PyTorch peers script follows it too):
 *   - One sample = one kernel launch, or for small shapes (minimal bytes < 64 MiB) one
 *     CUDA-graph replay of K launches reported as time / K (the name ends in /graph<K>),
 *     bracketed by two CUDA events on a non-default stream; Google Benchmark's manual time.
 *   - Before every sample, outside the events, a cudaMemsetAsync of 2x the L2 size evicts
 *     whatever the last sample left in L2; it also keeps the GPU busy while the host enqueues
 *     the events and the launch, so launch latency never falls between the events. In a graph
 *     the K launches rotate among input sets covering >= 2x L2 (no launch reads what the
 *     previous one left in L2).
 *   - 3 warm-ups a repetition, then the samples the minimum time asks (mean); >= 9 reps: median.
 *   - lnmod_fwd/<variant>/... times lnmod_forward (no statistics outputs); lnmod_bwd/<variant>/...
 *     times lnmod_backward (x, scale, dy, mean, rstd in; dx, and dscale/dshift written into
 *     chunks 1 and 0 of a [B, 6, D] gradient table; its workspace in the same input set) for
 *     every variant that has a backward, each with its own graph K and copy ceiling;
 *     lnmod_res_fwd/ and lnmod_res_bwd/ time the fused gated residual op the same way
 *     (bench_gpu_res.h: its inputs at each of Wan's three residual sites, launches and bytes,
 *     lnmod_res_*_min_bytes).
 *   - Counters: bytes_per_second from the shape's minimal bytes (lnmod_fwd_min_bytes: read x
 *     and the modulation rows once, write y; lnmod_bwd_min_bytes for the backward: read x, dy,
 *     8 B a row of statistics and each scale row, write dx, dscale and dshift; saved_bytes:
 *     the 8 B a row the forward keeps for it), pct_copy_bw = 100 * this bandwidth / the median
 *     bandwidth of copy/bytes<N> measured earlier in the same run (N = the same minimal bytes;
 *     the copy moves N/2 bytes, counted as read + write), sm_clock_mhz (bench_clock.c), min_bytes.
 *   - Inputs: random values (never zeros) written once over the whole arena (every part of
 *     every input set: fill_arena); `adaload verify` checks results. */
#include "bench_gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ada_cuda.h"
#include "bench_shim.h"
#include "build_info.h"

/* The variants the project ships: named in skip lines where the build has none. */
static const char *const shipped_variants[] = {"naive", "row_per_warp", "dtile"};
enum { N_SHIPPED = 3 };

/* Whether the filter selects a variant benchmark of shape s in direction bwd. */
static int selects(const ada_shape *s, int bwd, const char *const *variants, int64_t nvariants,
                   ada_name_match_fn match, void *match_arg)
{
    char name[ADA_NAME_MAX];
    for (int64_t v = 0; v < nvariants; v++)
        if (!(bwd ? ada_shape_bwd_bench_name : ada_shape_bench_name)(s, variants[v], name, sizeof name) &&
            match(name, match_arg))
            return 1;
    return 0;
}

/* Prints a skip line for every benchmark the user selected: the names stay visible (and
 * greppable in CI logs) even where nothing runs. Copies first, as they would run first:
 * those the filter names and those a selected variant benchmark needs as its ceiling. */
static int64_t print_skips(const char *reason, const ada_shape *shapes, int64_t nshapes,
                           const char *const *variants, int64_t nvariants,
                           ada_name_match_fn match, void *match_arg, ada_note_fn note, void *note_arg)
{
    int64_t count = 0;
    char name[ADA_NAME_MAX];
    for (int64_t i = 0; i < 2 * nshapes; i++) {
        int64_t b = i % 2 ? shapes[i / 2].bwd_min_bytes : shapes[i / 2].min_bytes;
        int dup = 0;
        for (int64_t j = 0; j < i; j++) dup |= (j % 2 ? shapes[j / 2].bwd_min_bytes : shapes[j / 2].min_bytes) == b;
        if (dup || ada_copy_bench_name(b, name, sizeof name)) continue;
        int needed = match(name, match_arg);
        for (int64_t j = 0; j < 2 * nshapes && !needed; j++)
            needed = (j % 2 ? shapes[j / 2].bwd_min_bytes : shapes[j / 2].min_bytes) == b &&
                     selects(&shapes[j / 2], j % 2, variants, nvariants, match, match_arg);
        if (needed) {
            ada_note(note, note_arg, "skipped (%s): %s", reason, name);
            count++;
        }
    }
    for (int64_t i = 0; i < nshapes; i++)
        for (int bwd = 0; bwd < 2; bwd++)
            for (int64_t v = 0; v < nvariants; v++) {
                if ((bwd ? ada_shape_bwd_bench_name : ada_shape_bench_name)(&shapes[i], variants[v], name, sizeof name))
                    continue;
                if (match(name, match_arg)) {
                    ada_note(note, note_arg, "skipped (%s): %s", reason, name);
                    count++;
                }
            }
    return count;
}

#if !ADALOAD_HAVE_CUDA

struct ada_gpu_bench {
    int unused;
};

int64_t ada_gpu_default_variants(const char **out, int64_t cap)
{
    int64_t n = 0;
    for (; n < N_SHIPPED && n < cap; n++) out[n] = shipped_variants[n];
    return n;
}

int ada_gpu_variant_known(const char *name) { return name && *name; }

int ada_gpu_bench_setup(const ada_shape *shapes, int64_t nshapes, const char *const *variants,
                        int64_t nvariants, ada_name_match_fn match, void *match_arg,
                        int repetitions, ada_note_fn note, void *note_arg, ada_gpu_bench **out,
                        int64_t *registered, int64_t *skipped, char *msg, size_t msg_n)
{
    (void)repetitions;
    *out = NULL;
    *registered = 0;
    *skipped = print_skips("GPU kernels not built", shapes, nshapes, variants, nvariants, match, match_arg, note, note_arg);
    snprintf(msg, msg_n, "GPU kernels not built (no CUDA toolkit)");
    return ADA_GPU_NONE;
}

void ada_gpu_bench_free(ada_gpu_bench *g) { (void)g; }

#else /* ADALOAD_HAVE_CUDA */

#include <cuda_runtime_api.h>

#include "ada_rng.h"
#include "bench_clock.h"
#include "bench_data.h"
#include "ada_plugin.h"
#include "bench_gpu_res.h"
#include "bench_variant.h"
#include "lnmod.h"

/* The copy ceiling of one byte count: bandwidths of the repetitions seen so far, with their
 * iteration counts (Google Benchmark's shorter iteration-count probes are left out). */
typedef struct {
    int64_t bytes;
    double bw[64];
    int64_t iters[64];
    int64_t n;
} copy_stat;

typedef struct {
    char name[ADA_NAME_MAX];
    struct ada_gpu_bench *g;
    int is_copy;
    int bwd;         /* the backward of the variant (lnmod_backward) */
    const char *vname; /* a registry variant or a plug-in's "plugin:<name>" (bench_variant.h) */
    ada_shape shape;
    int64_t bytes;   /* minimal bytes of the op (copy: bytes moved, read + write) */
    size_t ws;       /* the backward's workspace bytes (a res forward's: of g->fwd_ws) */
    size_t off_d, off_e, off_s, off_w; /* backward: dy, the modulation's gradient, mean/rstd, workspace */
    int64_t k;       /* launches per graph replay, 0 = plain launches */
    int64_t nsets;   /* input sets rotated through */
    size_t set_bytes;
    size_t off_a, off_b, off_c; /* lnmod: x, y, modulation; copy: src, dst */
    cudaGraphExec_t *graphs;
    int64_t ngraphs;
    int64_t next; /* samples taken: picks the set or graph */
    int prepared;
    char failed[256]; /* set when preparing failed: every later repetition reports it */
    copy_stat *copy;
    ada_res_offsets ro; /* a res shape's input set (bench_gpu_res.h) */
} gpu_case;

struct ada_gpu_bench {
    int device;
    cudaStream_t stream;
    cudaEvent_t e0, e1;
    int64_t l2;
    char *arena;
    size_t arena_bytes;
    void *flush;
    size_t flush_bytes;
    void *fwd_ws; /* the forwards' workspace, lnmod's and the res op's (ADA_RES_FWD_WS = ADA_BENCH_FWD_WS bytes, zeroed once, left zero) */
    gpu_case *cases;
    int64_t ncases;
    copy_stat *copies;
    int64_t ncopies;
    ada_sm_clock clock;
};

int64_t ada_gpu_default_variants(const char **out, int64_t cap)
{
    int64_t n = 0;
    for (const lnmod_variant *v = lnmod_variants; v->name && n < cap; v++) out[n++] = v->name;
    /* An empty registry (a build without kernels) still names the shipped variants, so
     * every benchmark that cannot run is reported by name. */
    if (n == 0)
        for (; n < N_SHIPPED && n < cap; n++) out[n] = shipped_variants[n];
    return n;
}

int ada_gpu_variant_known(const char *name) { return ada_bench_variant_exists(name); }

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* 0, or -1 with msg (when not NULL) saying what failed; a non-sticky error is cleared so
 * later calls can still run (a sticky one comes back from every call). */
static int cuda_ok(cudaError_t e, const char *what, char *msg, size_t n)
{
    if (ADA_CUDA_CHECK(e, what, msg, n) == cudaSuccess) return 0;
    (void)cudaGetLastError();
    return -1;
}

static copy_stat *copy_for(struct ada_gpu_bench *g, int64_t bytes)
{
    for (int64_t i = 0; i < g->ncopies; i++)
        if (g->copies[i].bytes == bytes) return &g->copies[i];
    return NULL;
}

static void copy_push(copy_stat *c, int64_t iters, double bw)
{
    if (c->n < 64) {
        c->bw[c->n] = bw;
        c->iters[c->n] = iters;
        c->n++;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median bandwidth of the repetitions run with the final (largest) iteration count. */
static double copy_median(const copy_stat *c)
{
    if (!c || c->n == 0) return 0;
    int64_t top = 0, m = 0;
    double v[64];
    for (int64_t i = 0; i < c->n; i++)
        if (c->iters[i] > top) top = c->iters[i];
    for (int64_t i = 0; i < c->n; i++)
        if (c->iters[i] == top) v[m++] = c->bw[i];
    qsort(v, (size_t)m, sizeof *v, cmp_double);
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

static int launch_set(gpu_case *c, int64_t set, char *msg, size_t n)
{
    struct ada_gpu_bench *g = c->g;
    char *base = g->arena + (size_t)set * c->set_bytes;
    if (c->is_copy)
        return cuda_ok(cudaMemcpyAsync(base + c->off_b, base + c->off_a, (size_t)(c->bytes / 2),
                                       cudaMemcpyDeviceToDevice, g->stream),
                       "cudaMemcpyAsync", msg, n);
    const lnmod_desc *d = &c->shape.desc;
    /* scale and shift are chunks 1 and 0 of Wan's [B, 6, D] modulation tensor (e[1], e[0]);
     * the backward writes dscale and dshift into the same chunks of its gradient. */
    const size_t chunk = (size_t)d->D * lnmod_dtype_size(d->mod_dtype);
    char *shift = base + c->off_c, *scale = shift + chunk;
    int st;
    if (c->shape.res) {
        st = ada_res_launch(c->vname, &c->shape.rdesc, c->bwd, &c->ro, base, c->ws, g->fwd_ws, g->stream);
    } else if (c->bwd) {
        float *mean = (float *)(base + c->off_s), *rstd = mean + d->rows;
        char *dsh = base + c->off_e;
        st = ada_bench_variant_backward(c->vname, d, base + c->off_a, scale, base + c->off_d, mean, rstd,
                                        base + c->off_b, dsh + chunk, dsh, c->ws ? base + c->off_w : NULL, c->ws,
                                        g->stream);
    } else {
        st = ada_bench_variant_forward(c->vname, d, base + c->off_a, scale, shift, base + c->off_b, g->fwd_ws,
                                       g->stream);
    }
    if (st != LNMOD_OK) {
        char text[200];
        ada_plugin_status_text(st, text, sizeof text);
        snprintf(msg, n, "%s's %s: %s", c->vname, c->bwd ? "backward" : "forward", text);
        (void)cudaGetLastError();
        return -1;
    }
    return 0;
}

/* Graphs for small shapes: graph j launches sets (j*K + i) mod nsets, i < K. */
static int prepare(gpu_case *c, char *msg, size_t n)
{
    struct ada_gpu_bench *g = c->g;
    c->prepared = 1;
    if (c->k == 0) return 0;
    c->ngraphs = (c->nsets + c->k - 1) / c->k;
    c->graphs = calloc((size_t)c->ngraphs, sizeof *c->graphs);
    if (!c->graphs) {
        snprintf(msg, n, "out of host memory");
        return -1;
    }
    for (int64_t j = 0; j < c->ngraphs; j++) {
        cudaGraph_t graph = NULL;
        if (cuda_ok(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal),
                    "cudaStreamBeginCapture", msg, n))
            return -1;
        int bad = 0;
        for (int64_t i = 0; i < c->k && !bad; i++) bad = launch_set(c, (j * c->k + i) % c->nsets, msg, n);
        cudaError_t e = cudaStreamEndCapture(g->stream, &graph);
        if (bad || cuda_ok(e, "cudaStreamEndCapture", bad ? NULL : msg, n)) {
            if (graph) cudaGraphDestroy(graph);
            return -1;
        }
        e = cudaGraphInstantiate(&c->graphs[j], graph, 0);
        cudaGraphDestroy(graph);
        if (cuda_ok(e, "cudaGraphInstantiate", msg, n)) return -1;
    }
    return 0;
}

/* One sample: flush L2 (untimed), events around one launch or one graph replay. */
static int sample(gpu_case *c, double *seconds, char *msg, size_t n)
{
    struct ada_gpu_bench *g = c->g;
    int64_t s = c->next++;
    if (cuda_ok(cudaMemsetAsync(g->flush, (int)(s & 0x7F) | 1, g->flush_bytes, g->stream),
                "cudaMemsetAsync (L2 flush)", msg, n) ||
        cuda_ok(cudaEventRecord(g->e0, g->stream), "cudaEventRecord", msg, n))
        return -1;
    if (c->k > 0) {
        if (cuda_ok(cudaGraphLaunch(c->graphs[s % c->ngraphs], g->stream), "cudaGraphLaunch", msg, n))
            return -1;
    } else if (launch_set(c, s % c->nsets, msg, n)) {
        return -1;
    }
    float ms = 0;
    if (cuda_ok(cudaEventRecord(g->e1, g->stream), "cudaEventRecord", msg, n) ||
        cuda_ok(cudaEventSynchronize(g->e1), "kernel execution", msg, n) ||
        cuda_ok(cudaEventElapsedTime(&ms, g->e0, g->e1), "cudaEventElapsedTime", msg, n))
        return -1;
    *seconds = (double)ms * 1e-3 / (double)(c->k > 0 ? c->k : 1);
    if (!(*seconds > 0)) *seconds = 1e-9; /* below the events' resolution: keep rates finite */
    return 0;
}

static void bm_gpu(ada_bench_state *st, void *arg)
{
    gpu_case *c = arg;
    char msg[256];
    double s = 0, sum = 0;
    if (!c->prepared && prepare(c, msg, sizeof msg)) snprintf(c->failed, sizeof c->failed, "%s", msg);
    if (c->failed[0]) {
        ada_bench_skip(st, c->failed);
        return;
    }
    for (int w = 0; w < 3; w++)
        if (sample(c, &s, msg, sizeof msg)) {
            ada_bench_skip(st, msg);
            return;
        }
    while (ada_bench_keep_running(st)) {
        if (sample(c, &s, msg, sizeof msg)) {
            ada_bench_skip(st, msg);
            return;
        }
        ada_bench_set_iteration_time(st, s);
        sum += s;
    }
    int64_t it = ada_bench_iterations(st);
    double bw = (it > 0 && sum > 0) ? (double)c->bytes * (double)it / sum : 0;
    if (c->is_copy) copy_push(c->copy, it, bw);
    double ceiling = copy_median(c->copy);
    ada_bench_set_bytes_processed(st, c->bytes * it);
    ada_bench_counter(st, "pct_copy_bw", ceiling > 0 ? 100.0 * bw / ceiling : 0.0);
    ada_bench_counter(st, "sm_clock_mhz", ada_sm_clock_mhz(&c->g->clock));
    ada_bench_counter(st, "min_bytes", (double)c->bytes);
    /* What the forward keeps for this backward beyond its inputs: mean and rstd. */
    if (c->bwd) ada_bench_counter(st, "saved_bytes", 8.0 * (double)c->shape.desc.rows);
}

void ada_gpu_bench_free(ada_gpu_bench *g)
{
    if (!g) return;
    for (int64_t i = 0; i < g->ncases; i++) {
        for (int64_t j = 0; j < g->cases[i].ngraphs; j++)
            if (g->cases[i].graphs && g->cases[i].graphs[j]) cudaGraphExecDestroy(g->cases[i].graphs[j]);
        free(g->cases[i].graphs);
    }
    free(g->cases);
    free(g->copies);
    if (g->arena) cudaFree(g->arena);
    if (g->flush) cudaFree(g->flush);
    if (g->fwd_ws) cudaFree(g->fwd_ws);
    if (g->e0) cudaEventDestroy(g->e0);
    if (g->e1) cudaEventDestroy(g->e1);
    if (g->stream) cudaStreamDestroy(g->stream);
    ada_sm_clock_close(&g->clock);
    free(g);
}

/* Random bf16 values over the whole arena: a 1 MiB tile made on the host, then doubled on
 * the device. bf16 pairs read as fp32 are ordinary finite numbers too (the high half is the
 * bf16 value), so one fill serves every dtype. */
static int fill_arena(struct ada_gpu_bench *g, char *msg, size_t n)
{
    const size_t tile = (size_t)1 << 20;
    uint16_t *h = malloc(tile);
    if (!h) {
        snprintf(msg, n, "out of host memory");
        return -1;
    }
    ada_rng r;
    ada_rng_seed(&r, 0x6164616C6F6164ull);
    ada_bench_fill(h, LNMOD_BF16, (int64_t)(tile / 2), 0.25, 1.0, &r);
    size_t first = tile < g->arena_bytes ? tile : g->arena_bytes;
    int bad = cuda_ok(cudaMemcpy(g->arena, h, first, cudaMemcpyHostToDevice), "cudaMemcpy", msg, n);
    free(h);
    for (size_t done = first; !bad && done < g->arena_bytes;) {
        size_t len = done < g->arena_bytes - done ? done : g->arena_bytes - done;
        bad = cuda_ok(cudaMemcpy(g->arena + done, g->arena, len, cudaMemcpyDeviceToDevice),
                      "cudaMemcpy", msg, n);
        done += len;
    }
    return bad;
}

static void size_case(gpu_case *c, int64_t l2)
{
    if (c->is_copy) {
        size_t half = align256((size_t)(c->bytes / 2));
        c->off_a = 0;
        c->off_b = half;
        c->set_bytes = 2 * half;
    } else if (c->shape.res) {
        ada_res_offsets_make(&c->shape.rdesc, c->bwd, c->ws, &c->ro);
        c->set_bytes = c->ro.set_bytes;
    } else {
        const lnmod_desc *d = &c->shape.desc;
        size_t elems = (size_t)(d->rows * d->D);
        size_t xb = align256(elems * lnmod_dtype_size(d->x_dtype));
        size_t yb = align256(elems * lnmod_dtype_size(d->y_dtype));
        /* Room for the whole [B, 6, D] modulation tensor the strides point into. */
        size_t mb = align256((size_t)(lnmod_mod_rows(d) * d->scale_stride) * lnmod_dtype_size(d->mod_dtype));
        c->off_a = 0;
        c->off_b = xb; /* y, or the backward's dx (x's dtype: xb <= yb or it is x's size) */
        c->off_c = xb + (c->bwd ? xb : yb);
        c->set_bytes = c->off_c + mb;
        if (c->bwd) {
            c->off_d = c->set_bytes;                  /* dy (y's dtype) */
            c->off_e = c->off_d + yb;                 /* the [B, 6, D] gradient table */
            c->off_s = c->off_e + mb;                 /* mean, rstd */
            c->off_w = c->off_s + align256((size_t)(8 * d->rows));
            c->set_bytes = c->off_w + align256(c->ws);
        }
    }
    int64_t need = 2 * l2;
    c->nsets = (need + (int64_t)c->set_bytes - 1) / (int64_t)c->set_bytes;
    if (c->nsets < 1) c->nsets = 1;
}

/* The variant benchmarks the filter selects into out[] (per shape: the forwards, then the
 * backwards of the variants that have one), each skip said through note; their count. */
static int64_t add_variants(struct ada_gpu_bench *g, gpu_case *out, const ada_shape *shapes, int64_t nshapes,
                            const char *const *variants, int64_t nvariants, ada_name_match_fn match,
                            void *match_arg, ada_note_fn note, void *note_arg, int64_t *skipped)
{
    int64_t n = 0;
    for (int64_t i = 0; i < nshapes; i++)
        for (int bwd = 0; bwd < 2; bwd++)
            for (int64_t v = 0; v < nvariants; v++) {
                gpu_case *c = &out[n];
                memset(c, 0, sizeof *c);
                if ((bwd ? ada_shape_bwd_bench_name : ada_shape_bench_name)(&shapes[i], variants[v], c->name,
                                                                              sizeof c->name) ||
                    !match(c->name, match_arg))
                    continue;
                size_t ws = 0;
                const char *why = shapes[i].res ? ada_res_variant_why(variants[v], &shapes[i].rdesc, bwd, &ws)
                                                : ada_bench_variant_why(variants[v], &shapes[i].desc, bwd, &ws);
                if (why) {
                    ada_note(note, note_arg, "skipped (%s %s): %s", variants[v], why, c->name);
                    (*skipped)++;
                    continue;
                }
                c->vname = variants[v];
                c->g = g;
                c->bwd = bwd;
                c->ws = ws;
                c->shape = shapes[i];
                c->bytes = bwd ? shapes[i].bwd_min_bytes : shapes[i].min_bytes;
                c->k = bwd ? shapes[i].bwd_graph_k : shapes[i].graph_k;
                n++;
            }
    return n;
}

int ada_gpu_bench_setup(const ada_shape *shapes, int64_t nshapes, const char *const *variants,
                        int64_t nvariants, ada_name_match_fn match, void *match_arg,
                        int repetitions, ada_note_fn note, void *note_arg, ada_gpu_bench **out,
                        int64_t *registered, int64_t *skipped, char *msg, size_t msg_n)
{
    *out = NULL;
    *registered = 0;
    *skipped = 0;
    if (ada_cuda_device_count() < 1) {
        *skipped = print_skips("no CUDA device", shapes, nshapes, variants, nvariants, match, match_arg, note, note_arg);
        snprintf(msg, msg_n, "no CUDA device");
        return ADA_GPU_NONE;
    }
    struct ada_gpu_bench *g = calloc(1, sizeof *g);
    int64_t cap = 2 * nshapes * (nvariants + 1);
    if (!g || !(g->cases = calloc((size_t)(cap > 0 ? cap : 1), sizeof *g->cases)) ||
        !(g->copies = calloc((size_t)(nshapes > 0 ? 2 * nshapes : 1), sizeof *g->copies))) {
        snprintf(msg, msg_n, "out of host memory");
        ada_gpu_bench_free(g);
        return ADA_GPU_ERROR;
    }
    int l2 = 0, clock_khz = 0;
    if (cuda_ok(cudaGetDevice(&g->device), "cudaGetDevice", msg, msg_n) ||
        cuda_ok(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, g->device), "cudaDeviceGetAttribute", msg, msg_n) ||
        cuda_ok(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, g->device), "cudaDeviceGetAttribute", msg, msg_n) ||
        cuda_ok(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking), "cudaStreamCreate", msg, msg_n) ||
        cuda_ok(cudaEventCreate(&g->e0), "cudaEventCreate", msg, msg_n) ||
        cuda_ok(cudaEventCreate(&g->e1), "cudaEventCreate", msg, msg_n)) {
        ada_gpu_bench_free(g);
        return ADA_GPU_ERROR;
    }
    g->l2 = l2 > 0 ? l2 : (50 << 20);
    char bus[64];
    int have_bus = cudaDeviceGetPCIBusId(bus, sizeof bus, g->device) == cudaSuccess;
    ada_sm_clock_open(&g->clock, have_bus ? bus : NULL, clock_khz / 1000.0);

    /* Variant benchmarks first (into the table, not yet registered), so the copy ceilings
     * needed are known; then copies are registered before every variant. */
    gpu_case *lnmod_cases = g->cases + 2 * nshapes; /* copies take the first 2*nshapes slots */
    int64_t nlnmod = add_variants(g, lnmod_cases, shapes, nshapes, variants, nvariants, match, match_arg,
                                  note, note_arg, skipped);
    int64_t ncopy = 0;
    for (int64_t i = 0; i < 2 * nshapes; i++) {
        int64_t bytes = i % 2 ? shapes[i / 2].bwd_min_bytes : shapes[i / 2].min_bytes;
        if (copy_for(g, bytes)) continue;
        char name[ADA_NAME_MAX];
        if (ada_copy_bench_name(bytes, name, sizeof name)) continue;
        int needed = match(name, match_arg);
        for (int64_t j = 0; j < nlnmod && !needed; j++) needed = lnmod_cases[j].bytes == bytes;
        if (!needed) continue;
        copy_stat *cs = &g->copies[g->ncopies++];
        cs->bytes = bytes;
        gpu_case *c = &g->cases[ncopy++];
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "%s", name);
        c->g = g;
        c->is_copy = 1;
        c->bytes = bytes;
        c->k = ada_graph_k(bytes);
        c->copy = cs;
    }
    /* Close the gap between the copies and the variants, then size everything. */
    memmove(g->cases + ncopy, lnmod_cases, (size_t)nlnmod * sizeof *g->cases);
    g->ncases = ncopy + nlnmod;
    for (int64_t i = 0; i < g->ncases; i++) {
        gpu_case *c = &g->cases[i];
        if (!c->is_copy) c->copy = copy_for(g, c->bytes);
        size_case(c, g->l2);
        size_t total = (size_t)c->nsets * c->set_bytes;
        if (total > g->arena_bytes) g->arena_bytes = total;
    }
    if (g->ncases == 0) {
        *out = g;
        return ADA_GPU_OK;
    }
    g->flush_bytes = (size_t)(2 * g->l2);
    if (cuda_ok(cudaMalloc((void **)&g->arena, g->arena_bytes), "cudaMalloc (inputs)", msg, msg_n) ||
        cuda_ok(cudaMalloc(&g->flush, g->flush_bytes), "cudaMalloc (L2 flush buffer)", msg, msg_n) ||
        cuda_ok(cudaMalloc(&g->fwd_ws, ADA_RES_FWD_WS), "cudaMalloc (forward workspace)", msg, msg_n) ||
        cuda_ok(cudaMemset(g->fwd_ws, 0, ADA_RES_FWD_WS), "cudaMemset (forward workspace)", msg, msg_n) ||
        fill_arena(g, msg, msg_n)) {
        ada_gpu_bench_free(g);
        return ADA_GPU_ERROR;
    }

    struct cudaDeviceProp p;
    char buf[128];
    if (cudaGetDeviceProperties(&p, g->device) == cudaSuccess) {
        ada_bench_add_context("gpu_name", p.name);
        snprintf(buf, sizeof buf, "%d", p.multiProcessorCount);
        ada_bench_add_context("gpu_sm_count", buf);
    }
    snprintf(buf, sizeof buf, "%lld", (long long)g->l2);
    ada_bench_add_context("gpu_l2_bytes", buf);
    ada_bench_add_context("sm_clock_source", ada_sm_clock_measured(&g->clock) ? "nvml (measured after each repetition)"
                                                         : "cudaDevAttrClockRate (maximum, not measured)");
    snprintf(buf, sizeof buf, "%.0f", ada_sm_clock_mhz(&g->clock));
    ada_bench_add_context("sm_clock_mhz_at_start", buf);
    ada_bench_add_context("gpu_timing", "CUDA events around one launch or one CUDA-graph replay "
                                        "(/graph<K>: time/K) on a non-default stream; L2 flushed "
                                        "by a 2xL2 memset before each sample; input sets rotated "
                                        ">= 2xL2 inside graphs; 3 warm-up samples per repetition");

    for (int64_t i = 0; i < g->ncases; i++)
        if (ada_bench_register(g->cases[i].name, bm_gpu, &g->cases[i], repetitions)) {
            snprintf(msg, msg_n, "cannot register %s", g->cases[i].name);
            ada_gpu_bench_free(g);
            return ADA_GPU_ERROR;
        }
    *registered = g->ncases;
    *out = g;
    return ADA_GPU_OK;
}

#endif /* ADALOAD_HAVE_CUDA */
