/* verify_res.h -- "op": "lnmod_res" cases: the fused gated residual + LayerNorm-Modulate op's
 * grid (its own enumeration: Wan 2.1's three residual sites x layouts x dtype combinations x
 * shapes, and in-place / no-dh sets) and the run of one set on the CPU models
 * (verify_model_res.h), every output against the float64 reference with the allowances of
 * verify_check_res.h, into case records with "op": "lnmod_res" and "direction".
 *
 *   verify_res_set *sets; int n;
 *   verify_res_grid_sets("quick", &sets, &n);
 *   json_t *cases = json_array(); int64_t failed = 0;
 *   for (int i = 0; i < n; i++)
 *       verify_res_run_cpu(verify_res_model_find("res_model"), &sets[i], 42, 8, cases, &failed);
 *
 * Inputs (a PRNG stream per (seed, tensor, row), drawn on the session's threads: the same at any
 * thread count; one more for the modulation): r ~ N(1.5, 2), y, d_out, dh ~ N(0, 1), the modulation as
 * chunk views of a [mod_rows, 6, D] tensor (shift, scale, gate, then three chunks of NaN: the
 * gaps between strided rows must never be read); every 29th row has a constant h (y = 0, r = c:
 * M2 = 0 exactly, the eps path). The backward is given the reference's h rounded to res_dtype
 * and the reference's statistics rounded to fp32 (as verify's lnmod backward: its own error
 * is measured, not the forward's). In-place sets run h over r and dr over dh.
 *
 * Wired into verify's session and record (verify.h, "ops"): `adaload verify` runs these cases
 * beside lnmod's for every registry variant with the fused op (verify_registry_has_res; on the
 * CPU models: verify_res_models), sharded with them, and the gate expects them (verify_grid_keys,
 * and the sanitizer runs over verify_res_sanitizer_grid). `adaload verify --op lnmod_res` runs
 * them alone and prints them, writing no record (harness/cmd_verify_res.c). The grids and the
 * case identity are verify_res_grid.c's (library ada_verify_grid, which the gate links). The GPU
 * runner is verify_res_gpu.c (first run on the H200: 2026-12-04). */
#ifndef ADALOAD_VERIFY_RES_H
#define ADALOAD_VERIFY_RES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lnmod_res_desc.h"
#include "verify.h"
#include "verify_backend.h"

enum { VERIFY_RES_SITE_ATTN, VERIFY_RES_SITE_CROSS, VERIFY_RES_SITE_FFN, VERIFY_RES_NSITES };

/* One input set of the fused op's grid. */
typedef struct {
    int site;   /* VERIFY_RES_SITE_*: ATTN gate + affine (norm3), CROSS no gate + modulate
                 * (norm2), FFN gate + modulate (the next block's norm1) */
    int layout; /* lnmod_layout of the gate and the modulation */
    int combo;  /* index of verify_res_combo */
    int64_t D, rows;
    int inplace; /* h over r, dr over dh */
    int no_dh;   /* the backward without dh (NULL: zero) */
} verify_res_set;

/* The dtypes of combination k (0 <= k < verify_res_ncombos()): res, branch, mod, out. */
void verify_res_combo(int k, lnmod_dtype *res, lnmod_dtype *branch, lnmod_dtype *mod, lnmod_dtype *out);
int verify_res_ncombos(void);
/* "attn", "cross", "ffn". */
const char *verify_res_site_name(int site);

/* The sets of grid "smoke", "quick", "full" or "sanitizer" (the compute-sanitizer runs' subset:
 * verify_res_grid.c says why it is sized so) in a new malloc'd array (free it). */
verify_status verify_res_grid_sets(const char *grid, verify_res_set **sets, int *nsets);
/* The fused op's grid of the sanitizer runs of a session over grid ("sanitizer"; "smoke" for
 * smoke): its counterpart of verify_sanitizer_grid. */
const char *verify_res_sanitizer_grid(const char *grid);
/* "res-branch-mod-out" of the set's dtypes ("f32-bf16-f32-bf16"). */
void verify_res_set_dtypes(const verify_res_set *s, char *buf, size_t n);
/* The identity of a case (a new object): {"op": "lnmod_res", "variant", "direction", "site",
 * "dtypes", "layout", "D", "rows", "inplace", "dh"}; NULL out of memory. */
json_t *verify_res_case_json(const char *variant, const verify_res_set *s, const char *direction);
/* The key of a fused-op case, what the gate compares (verify.h: verify_case_key is lnmod's):
 * "lnmod_res variant site dtypes layout direction D=<D> rows=<rows> inplace=<0|1> dh=<0|1>";
 * -1 when a field is missing or buf is too small. */
int verify_res_case_key(const char *variant, const char *site, const char *dtypes, const char *layout,
                        const char *direction, int64_t D, int64_t rows, int inplace, int dh, char *buf, size_t n);
/* The same of a case record (verify_res_case_json's fields); -1 when one is missing. */
int verify_res_case_key_json(const json_t *c, char *buf, size_t n);
/* The descriptor of set s (strides 6*D: chunk views of Wan's [B, 6, D] modulation). */
lnmod_res_desc verify_res_set_desc(const verify_res_set *s);

/* Where a set runs: host pointers in and out (a GPU runner moves the data and launches; the
 * in-place aliasing of lnmod_res.h is kept: out->h may be in->r, out->dr may be in->dh). Each
 * returns 0, or -1 with err set (then the set is not recorded). guard_bad / nondet: set by a
 * runner that checks guard bands and gaps / two launches (a failed case, counted in "fails"
 * as "guard" / "det"). */
typedef struct verify_res_runner {
    const char *name; /* the records' "variant" */
    int (*forward)(struct verify_res_runner *rn, const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                   const lnmod_res_fwd_out *out, char *err, size_t errn);
    int (*backward)(struct verify_res_runner *rn, const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                    const lnmod_res_bwd_out *out, char *err, size_t errn);
    void *arg;
    int threads;
    int index;                 /* the CPU runner's model (verify_res_models) */
    int64_t guard_bad, nondet; /* of the last call */
    /* set by verify_res_run before each call: the modulation buffer the inputs' shift, scale and
     * gate point into (mod_elems elements of mod_dtype from mod_in), and the one the backward's
     * dshift, dscale and dgate point into (the same size, from mod_out) */
    const void *mod_in;
    void *mod_out;
    int64_t mod_elems;
} verify_res_runner;

/* Runs set s on rn (inputs from seed), checks every output (verify_check_res.h, over threads
 * host threads) and appends one case record a direction to cases (as verify_res_run_cpu's); *failed += the cases that
 * failed. 0, or -1 (err says why; nothing appended). */
int verify_res_run(verify_res_runner *rn, const verify_res_set *s, uint64_t seed, int threads, json_t *cases,
                   int64_t *failed, char *err, size_t errn);

/* The CPU runner of model `model` (an index of verify_res_models): 0, or -1 for a bad index. */
int verify_res_cpu_runner(int model, int threads, verify_res_runner *rn);

/* The GPU runner's buffers, kept from call to call (the full grid's sets would otherwise pay
 * ~20 cudaMalloc/cudaFree pairs and fresh pageable host pages each): every device buffer of
 * exactly the size asked (reused when the size repeats, as verify_dev_get's, so memcheck still
 * sees an access beyond the guard bands), the host copies page-locked and grow-only. Zero it,
 * set bk (the session's GPU backend: its t_alloc counts the (re)allocations), and free it with
 * verify_res_gpu_pool_free. */
enum { VERIFY_RES_GPU_NBUF = 14 };
typedef struct verify_res_gpu_pool {
    verify_backend *bk;
    verify_buf dev[VERIFY_RES_GPU_NBUF], host[VERIFY_RES_GPU_NBUF][2], mask;
} verify_res_gpu_pool;
void verify_res_gpu_pool_free(verify_res_gpu_pool *pool);

/* The GPU runner of kernel variant `variant` (lnmod_res_forward / _backward on device buffers
 * with 256-byte guard bands on every output, the gaps of the strided dgate/dscale/dshift rows
 * poisoned, each direction launched twice -- the second time with another poison and a
 * workspace of other bytes -- the two results bit-identical): verify_res_gpu.c, built with
 * CUDA only. 0, or -1 (no CUDA in this build). */
int verify_res_gpu_runner(const char *variant, verify_res_gpu_pool *pool, verify_res_runner *rn);

/* Runs CPU model `model` (an index of verify_res_models) over set s, forward then backward,
 * and appends one case record a direction to cases: verify_res_case_json's identity plus
 * "pass", "worst_ratio": error / allowance, "worst_output", "fails": {output: elements}
 * (verify_res_run's records); *failed += the cases that failed. 0, or -1 when host memory
 * ran out or the model or the reference refused (nothing appended then). */
int verify_res_run_cpu(int model, const verify_res_set *s, uint64_t seed, int threads, json_t *cases,
                       int64_t *failed);

/* ---- in verify's session (verify.h; verify_session_res.c) ------------------------------ */

/* nres_sets more sets of the fused op will run (adds their cases to the totals' ncases_total;
 * call once, before them). */
void verify_session_plan_res(verify_session *s, int64_t nres_sets);
/* Runs set j of the fused op's grid (verify_res_grid_sets of config.res_grid, else of grid: *set)
 * on each of config.res_variants (the CPU models, or the GPU runner), inputs from config.seed
 * and j, and records its cases of the asked directions in the session (totals r_passed ...); a
 * variant's set that cannot run is recorded as not run ("pass": false, "not_run": why). */
void verify_session_run_res_set(verify_session *s, const verify_res_set *set, int64_t j);

#endif
