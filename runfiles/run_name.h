/* run_name.h -- the one parser of benchmark names (bench/bench_shapes.c makes them):
 *
 *   lnmod_fwd/<variant>/<x>-<mod>-<y>/<layout>/D<D>/rows<R>[/B<B>][/graph<K>]
 *   lnmod_bwd/...                       (the backward kernels: same form, direction bwd)
 *   lnmod_res_fwd/<variant>/<res>-<branch>-<mod>-<out>/<layout>[/site<N>]/D<D>/rows<R>[/B<B>][/graph<K>]
 *   lnmod_res_bwd/...                   (the fused gated residual op, issue 22: four dtypes;
 *                                        res 1, x = res, branch, mod, y = out)
 *
 * /site<N> names Wan 2.1's residual site of a fused-op name (kernels/lnmod_res_design.md):
 * site1 (x + y*e[2], then the affine norm3) or site2 (x + y, then norm2 modulated by e[4],
 * e[3]); a name without it is site 3 (x + y*e[5], then the next block's modulated norm1), so
 * the names of the runs before the sites stay what they were. site3, site0, site4, siteX and
 * a site part in an lnmod_fwd/lnmod_bwd name are rejected (-1).
 *
 * R is the rows of the whole call; /B<B> says they are B samples of R/B rows each (B >= 2;
 * without it the call is one sample).
 *
 * where a variant may be a PyTorch peer (torch_eager, torch_compile, ...). Report, sweep,
 * compare and the dashboard (which hands the parts to its page) all read names here.
 *
 *   ada_bench_name b;
 *   if (ada_bench_name_parse("lnmod_fwd/dtile/bf16-f32-bf16/sample/D3072/rows32760", &b) == 0)
 *       b.op "lnmod_fwd", b.dir "fwd", b.variant "dtile", b.D 3072, b.shape "bf16-f32-bf16/sample/D3072/rows32760"
 */
#ifndef ADALOAD_RUN_NAME_H
#define ADALOAD_RUN_NAME_H

#include <stdint.h>

typedef struct {
    char op[16];      /* "lnmod_fwd", "lnmod_bwd", "lnmod_res_fwd" or "lnmod_res_bwd" */
    int res;          /* 1 for the fused residual op's names (lnmod_res_*) */
    char branch[8];   /* its branch dtype (y's); "" for lnmod names */
    char dir[4];      /* "fwd" or "bwd" */
    char variant[64];
    char x[8], mod[8], y[8]; /* the dtypes */
    char dtypes[24];  /* "<x>-<mod>-<y>" (res: "<res>-<branch>-<mod>-<out>") */
    char layout[16];  /* sample, token, frame */
    int site;         /* res: Wan's residual site, 1 or 2 from /site<N>, else 3; 0 for lnmod names */
    int64_t D, rows;
    int64_t batch;    /* samples: B of /B<B> after rows (B >= 2, dividing rows), 1 when none */
    int64_t graph;    /* K of /graph<K>, 0 when the name has none */
    char shape[128];  /* everything after the variant */
    char slice[96];   /* "<x>-<mod>-<y>/<layout>[/site<N>]/rows<R>[/B<B>]": a sweep's slice (every
                       * D); the site part only where the name has it */
} ada_bench_name;

/* 0 when name has the form above (out filled), -1 otherwise (copy/..., cpu/..., bad parts). */
int ada_bench_name_parse(const char *name, ada_bench_name *out);

/* 1 when the variant is a PyTorch peer ("torch...", "liger...", a --peer's "peer:<name>"). */
int ada_bench_name_is_peer(const char *variant);

#endif
