/* bench_cpu.c -- the float64 reference forward as CPU benchmarks (bench_cpu.h).
 *
 * A few rows of the Wan hidden sizes: the reference is for checking, so its speed only tells
 * how long verification takes; the numbers are reported and never gated. Inputs are random
 * (seeded, never zeros) in the storage dtypes; buffers are made once per shape, outside the
 * timed call.
 */
#include "bench_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ada_rng.h"
#include "ada_util.h"
#include "bench_data.h"
#include "bench_shapes.h"
#include "bench_shim.h"
#include "ref_lnmod.h"

typedef struct {
    char name[ADA_NAME_MAX];
    ada_shape shape;
    void *x, *mod;
    double *y, *mean, *rstd;
} cpu_case;

struct ada_cpu_bench {
    cpu_case cases[8];
    int64_t n;
};

static void bm_ref(ada_bench_state *st, void *arg)
{
    cpu_case *c = arg;
    const lnmod_desc *d = &c->shape.desc;
    const char *shift = c->mod;
    const char *scale = shift + (size_t)d->D * lnmod_dtype_size(d->mod_dtype);
    while (ada_bench_keep_running(st)) {
        double t0 = ada_now_s();
        lnmod_status s = ref_lnmod_forward(d, c->x, scale, shift, c->y, c->mean, c->rstd);
        double t1 = ada_now_s();
        if (s != LNMOD_OK) {
            char msg[160];
            snprintf(msg, sizeof msg, "ref_lnmod_forward: %s", lnmod_status_name(s));
            ada_bench_skip(st, msg);
            return;
        }
        ada_bench_set_iteration_time(st, t1 - t0 > 0 ? t1 - t0 : 1e-9);
    }
    ada_bench_set_bytes_processed(st, c->shape.min_bytes * ada_bench_iterations(st));
    ada_bench_counter(st, "min_bytes", (double)c->shape.min_bytes);
}

void ada_cpu_bench_free(ada_cpu_bench *b)
{
    if (!b) return;
    for (int64_t i = 0; i < b->n; i++) {
        free(b->cases[i].x);
        free(b->cases[i].mod);
        free(b->cases[i].y);
        free(b->cases[i].mean);
        free(b->cases[i].rstd);
    }
    free(b);
}

int64_t ada_cpu_bench_setup(const char *set, ada_name_match_fn match, void *match_arg,
                            int repetitions, ada_cpu_bench **out)
{
    ada_shape shapes[8];
    int64_t ns = 0;
    if (!strcmp(set, "quick")) {
        shapes[ns++] = ada_shape_make(1536, 64, LNMOD_BF16, LNMOD_F32, LNMOD_BF16);
    } else {
        shapes[ns++] = ada_shape_make(1536, 256, LNMOD_BF16, LNMOD_F32, LNMOD_BF16);
        shapes[ns++] = ada_shape_make(3072, 256, LNMOD_BF16, LNMOD_F32, LNMOD_BF16);
        shapes[ns++] = ada_shape_make(5120, 256, LNMOD_BF16, LNMOD_F32, LNMOD_BF16);
        shapes[ns++] = ada_shape_make(5120, 256, LNMOD_F32, LNMOD_F32, LNMOD_F32);
    }
    ada_cpu_bench *b = calloc(1, sizeof *b);
    *out = b;
    if (!b) return -1;
    ada_rng r;
    ada_rng_seed(&r, 20261129);
    for (int64_t i = 0; i < ns; i++) {
        cpu_case *c = &b->cases[b->n];
        c->shape = shapes[i];
        c->shape.graph_k = 0; /* CPU names never carry a graph suffix */
        char suffix[ADA_NAME_MAX - 32];
        if (ada_shape_suffix(&c->shape, suffix, sizeof suffix)) return -1;
        snprintf(c->name, sizeof c->name, "cpu/ref_lnmod_fwd/%s", suffix);
        if (!match(c->name, match_arg)) continue;
        const lnmod_desc *d = &c->shape.desc;
        int64_t elems = d->rows * d->D;
        int64_t mod_elems = lnmod_mod_rows(d) * d->scale_stride;
        b->n++;
        c->x = malloc((size_t)elems * lnmod_dtype_size(d->x_dtype));
        c->mod = malloc((size_t)mod_elems * lnmod_dtype_size(d->mod_dtype));
        c->y = malloc((size_t)elems * sizeof *c->y);
        c->mean = malloc((size_t)d->rows * sizeof *c->mean);
        c->rstd = malloc((size_t)d->rows * sizeof *c->rstd);
        if (!c->x || !c->mod || !c->y || !c->mean || !c->rstd) return -1;
        ada_bench_fill(c->x, d->x_dtype, elems, 0.25, 1.0, &r);
        ada_bench_fill(c->mod, d->mod_dtype, mod_elems, 0.0, 0.1, &r);
        if (ada_bench_register(c->name, bm_ref, c, repetitions)) return -1;
    }
    return b->n;
}
