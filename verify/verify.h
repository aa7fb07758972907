/* verify.h -- the verifier library: every LayerNorm-Modulate kernel variant against the
 * float64 CPU reference over a grid of dtypes x layouts x shapes, with fresh random and
 * adversarial inputs, the compute-sanitizer runs, and the record (verify.json) that CI's
 * gate reads. `adaload verify` (harness/cmd_verify.c) is a thin layer over this.
 *
 *   verify_set *sets; int nsets;
 *   verify_grid_sets("quick", &sets, &nsets);                 // the grid's input sets
 *   verify_config c = {.grid = "quick", .seed = 42, .threads = 8, .nvariants = 1,
 *                      .variants = {"dtile"}, .note = print_line, .progress = print_err};
 *   verify_session *s; verify_session_new(&c, &s);
 *   for (int i = 0; i < nsets; i++) verify_session_run_set(s, &sets[i]);
 *   verify_session_finish(s);                                  // final progress line
 *   const verify_totals *t = verify_session_totals(s);         // passed / failed / not run
 *   json_t *rec = verify_record_new(&c, t, verify_session_take_cases(s), verdicts, details,
 *                                   date, cmdline, meta);      // the verify.json object
 *   verify_session_free(s); free(sets);
 *
 * Per input set (dtypes, layout, D, rows; geometry from verify_inputs.h): inputs are drawn
 * once, the reference is computed once, then for each variant: y, mean and rstd and their
 * 256-byte guard bands before and after are poisoned (0xFF, a NaN), the kernel runs, the
 * guards must be untouched and every output element must pass verify_check.h's tolerance
 * table. Inputs sit between NaN guard bands too, and every device buffer is allocated at
 * exactly guards + data, so memcheck sees any access beyond the bands. A sticky CUDA error
 * ends the GPU work: the remaining cases are recorded as not run.
 *
 * The backward of each variant that has one (config.directions, default both; verify_bwd.c):
 * dy drawn per row, mean and rstd the reference's statistics rounded to fp32, dx/dscale/dshift
 * and their guard bands and the gaps between strided modulation rows poisoned, two launches
 * (the second with another poison and a random workspace) that must be bit-identical, every
 * element within verify_check.h's backward allowances. Each case record says
 * "direction": "fwd" or "bwd"; verify_grid_cases lists a grid's cases in record order.
 *
 * The fused gated residual + LayerNorm-Modulate op ("op": "lnmod_res", verify_res.h) runs in
 * the same session after lnmod's sets: verify_session_run_res_set for each set of its own grid
 * (verify_res_grid_sets of the same name; config.res_variants), its case records beside lnmod's
 * (lnmod's say "op": "lnmod"; a record made before the fused op has no "op": lnmod's), and the
 * record lists "ops". The gate expects both ops' cases (verify_grid_keys).
 *
 * Grids: smoke (the verifier's own tests), quick (D 1, 33, 1536, 1537, 2048, 5120; rows 1, 3, 1560),
 * full (D 1 ... 12288, 14 sizes; rows 1, 3, 1560, 32760; plus one rows*D > 2^31 case per
 * variant: bf16 x/y, fp32 per-sample modulation, D 4096, 524,800 rows). All 9 dtype
 * combinations and the 3 layouts in every grid.
 *
 * The library never prints and never exits: case lines go to config.note (stdout in the
 * CLI), progress lines to config.progress (stderr). Functions return verify_status.
 */
#ifndef ADALOAD_VERIFY_H
#define ADALOAD_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ada_util.h"
#include "lnmod_desc.h"
#include "verify_tools.h"

typedef enum {
    VERIFY_OK = 0,
    VERIFY_ERR_ARG = 1,   /* a bad argument (unknown grid, too many variants, ...) */
    VERIFY_ERR_NOMEM = 2, /* out of host memory */
} verify_status;

#define VERIFY_MAX_VARIANTS 32
#define VERIFY_MAX_PLUGINS 8 /* plug-in libraries (plugin/ada_plugin.h: ADA_PLUGIN_MAX_LIBS) */

/* One input set of the grid. */
typedef struct {
    int layout, combo; /* lnmod_layout; index into the dtype combinations */
    int64_t D, rows;
    int huge;          /* the rows*D > 2^31 case */
} verify_set;

/* The sets of grid "smoke", "quick" or "full" in a new malloc'd array. */
verify_status verify_grid_sets(const char *grid, verify_set **sets, int *nsets);
/* The rule of --shard K/N (verify_config.shard): 1 when set i of the grid (its index in
 * verify_grid_sets' order) belongs to shard K of N; with nshards <= 1, every set does. */
int verify_set_in_shard(int64_t i, int shard, int nshards);
/* Reorders sets[0..n) by rows*D, largest first (ties keep their order; the rows*D > 2^31
 * set stays last): the verifier's buffer pools then grow a few times at the start instead
 * of at every larger D (pinned host memory is slow to get). A record's cases are a multiset
 * (the gate compares keys), so the order is the run's own business. 0, or -1 out of memory. */
int verify_sets_largest_first(verify_set *sets, int n);
/* Dtype combination k (0 <= k < verify_ncombos()). */
void verify_combo(int k, lnmod_dtype *x, lnmod_dtype *mod, lnmod_dtype *y);
int verify_ncombos(void);
/* "x-mod-y" of the set's dtype combination ("bf16-f32-bf16"). */
void verify_set_dtypes(const verify_set *s, char *buf, size_t n);
/* The grid the sanitizer runs of a session over grid use ("quick"; "smoke" for smoke). */
const char *verify_sanitizer_grid(const char *grid);

/* ---- the identity of a case: what the gate compares (gate/gate.h) ---------------------
 * A case is named by "variant x-mod-y layout direction D=<D> rows=<rows>". The gate passes
 * a record only when the multiset of its case keys equals verify_grid_keys of its grid for
 * the registry's variants: a new kind of case (another direction, another set) shows up
 * here by being in verify_grid_cases (the one enumeration), and in the case records. */
/* The key of one case into buf; -1 when a field is missing or buf is too small. */
int verify_case_key(const char *variant, const char *dtypes, const char *layout, const char *direction,
                    int64_t D, int64_t rows, char *buf, size_t n);
/* The key of a case record (verify.json's "cases"); a record without "direction" (made
 * before the backward cases existed) is a forward case. -1 when a field is missing. */
int verify_case_key_json(const json_t *c, char *buf, size_t n);
/* The sorted keys of every case grid G runs for variants[0..nvariants), both directions (the
 * backward for the variants verify_registry_has_backward says have one): verify_grid_cases'
 * list as keys, then the fused op's cases of its grid G (verify_res.h: verify_res_case_key) for
 * the variants verify_registry_has_res says have it; a new malloc'd array of *nkeys strings (one
 * allocation: free(*keys)). The case key of a record's case (verify_case_key_json) is lnmod's or
 * the fused op's by its "op". */
verify_status verify_grid_keys(const char *grid, const char *const *variants, int nvariants, char ***keys,
                               int64_t *nkeys);
/* The same for shard K of N of the grid (verify_set_in_shard); shard 0 of 0 is the whole. The
 * fused op's sets follow lnmod's in the shard rule: its set j (verify_res_grid_sets' order) is
 * set nsets + j, nsets = the count of verify_grid_sets of the same grid. */
verify_status verify_grid_keys_shard(const char *grid, const char *const *variants, int nvariants, int shard,
                                     int nshards, char ***keys, int64_t *nkeys);
/* The ops of a record's cases: LayerNorm-Modulate ("lnmod") and the fused residual op
 * ("lnmod_res"). */
#define VERIFY_OP_LNMOD 1
#define VERIFY_OP_RES 2
#define VERIFY_OP_ALL 3
/* verify_grid_keys_shard for the ops asked (VERIFY_OP_* bits): the gate judges a record made
 * before the fused op was verified (no "ops") on lnmod's cases alone. */
verify_status verify_grid_keys_ops(const char *grid, const char *const *variants, int nvariants, int ops, int shard,
                                   int nshards, char ***keys, int64_t *nkeys);
/* 1 when the registry's entry for variant has the fused residual op (res_forward; read from its
 * source as the names are). */
int verify_registry_has_res(const char *variant);
/* The cases the sanitizer runs of a session over grid check for the registry's variants, of the
 * ops asked: lnmod's of verify_sanitizer_grid (verify_grid_registry_cases) plus the fused op's
 * of verify_res_sanitizer_grid, both directions. */
verify_status verify_sanitizer_registry_ncases(const char *grid, int ops, int64_t *n);
/* The kernel registry's variant names (kernels/lnmod_registry.cu's table, in its order),
 * known to every build, with or without CUDA: read from the registry's source when the
 * build is configured (verify/registry_names.cmake; with CUDA, test_verify.c checks them
 * against lnmod_variants). NULL-terminated; *n = how many. */
const char *const *verify_registry_variants(int *n);
/* 1 when the registry's entry for variant has a backward (read from the same source); 0 for
 * a name the registry does not have. */
int verify_registry_has_backward(const char *variant);

/* Directions of a case: the forward (y, mean, rstd) or the backward (dx, dscale, dshift). */
#define VERIFY_DIR_FWD 1
#define VERIFY_DIR_BWD 2
#define VERIFY_DIR_BOTH 3
/* "fwd" or "bwd" (one direction bit). */
const char *verify_direction_name(int dir);

/* 1 when variant has a backward: the kernel registry's entry has one (GPU), or the CPU model
 * exists (every model has one). */
int verify_has_backward(int cpu_model, const char *variant);

/* One case of a grid: what the record's case identity says. */
typedef struct {
    const char *variant;
    int direction; /* VERIFY_DIR_FWD or VERIFY_DIR_BWD */
    verify_set set;
} verify_case_id;

/* Every case of a grid in the order a session records them: per input set, the forward of
 * each variant, then the backward of each variant that has one (has_bwd[i]), for the
 * directions asked (VERIFY_DIR_* bits). *cases is malloc'd (free it). The one enumeration of
 * the grid: the session runs exactly these, and the gate can expect exactly these. */
verify_status verify_grid_cases(const char *grid, const char *const *variants, const int *has_bwd,
                                int nvariants, int directions, verify_case_id **cases, int64_t *n);
/* verify_grid_cases for the registry's variants (verify_registry_variants) in both
 * directions: the case set of a record the gate passes (and of its sanitizer runs, over
 * verify_sanitizer_grid). */
verify_status verify_grid_registry_cases(const char *grid, verify_case_id **cases, int64_t *n);

typedef struct {
    const char *grid;          /* "smoke", "quick" or "full" */
    int directions;            /* VERIFY_DIR_* bits; 0 means both */
    uint64_t seed;             /* < 2^63 */
    int threads;               /* CPU threads, 1..VERIFY_MAX_THREADS */
    int cpu_model;             /* CPU models instead of the GPU (verify_model.h) */
    int reuse_buffers;         /* device buffers grow-only (no cudaMalloc per input set); then an
                                * access past a case's guard bands may land in a leftover, so
                                * never under compute-sanitizer: the sanitizer runs use exact
                                * sizes whatever this says (the record says "reuse_buffers") */
    const char *variants[VERIFY_MAX_VARIANTS]; /* kernel names; "plugin:<name>" of a loaded plug-in */
    int nvariants;
    /* The plug-in libraries this process loaded (plugin/ada_plugin.h), passed on to the
     * sanitizer runs as --plugin PATH so that they load the same ones. */
    const char *plugins[VERIFY_MAX_PLUGINS];
    int nplugins;
    int64_t sanitizer_timeout; /* seconds per sanitizer run */
    /* The fused residual op's variants (verify_res.h): registry variants with res_forward, or
     * CPU models of verify_res_models (--cpu-model); none: no "op": "lnmod_res" cases. Its grid
     * is res_grid when set (a sanitizer child's: verify_res_sanitizer_grid), else grid. */
    const char *res_variants[VERIFY_MAX_VARIANTS];
    int nres_variants;
    const char *res_grid;
    /* One shard of the grid (--shard K/N): the input sets i with i % nshards == shard - 1,
     * so records of the same sources that together hold every shard cover the grid (the gate
     * joins them). 0/0: the whole grid. */
    int shard, nshards;
    ada_note_fn note;          /* case lines and the sanitizer verdicts */
    void *note_arg;
    ada_note_fn progress;      /* progress lines */
    void *progress_arg;
} verify_config;

typedef struct {
    int64_t ncases_total, ncases_done, passed, failed, not_run;
    int64_t not_run_nomem; /* of not_run: for want of host or device memory (exit 3) */
    /* per direction (0 fwd, 1 bwd) and variant */
    int64_t v_passed[2][VERIFY_MAX_VARIANTS], v_failed[2][VERIFY_MAX_VARIANTS], v_not_run[2][VERIFY_MAX_VARIANTS];
    /* the fused op's, per direction and res variant (config.res_variants) */
    int64_t r_passed[2][VERIFY_MAX_VARIANTS], r_failed[2][VERIFY_MAX_VARIANTS], r_not_run[2][VERIFY_MAX_VARIANTS];
    double elapsed; /* seconds since the session started, at verify_session_finish */
    /* where the time went: inputs, device (copies, poison, kernel), the forward's float64
     * reference and comparison (fused), the backward's (fused) */
    double t_inputs, t_device, t_fwd_check, t_bwd_check;
    double t_alloc; /* of the above: (re)allocating pinned host and device buffers */
    /* process CPU seconds (every thread) of the same host phases: the host work, whatever
     * the wall clock of a loaded machine says */
    double c_inputs, c_fwd_check, c_bwd_check;
    /* the fused op's sets, all phases together: wall and process CPU seconds */
    double t_res, c_res;
} verify_totals;

typedef struct verify_session verify_session;

/* A session over the nsets input sets of c->grid (ncases_total: verify_grid_cases' count);
 * c must outlive it. */
verify_status verify_session_new(const verify_config *c, int64_t nsets, verify_session **out);
/* Draws the set's inputs, computes the reference and checks every variant against it. */
void verify_session_run_set(verify_session *s, const verify_set *set);
/* The fused op's sets: verify_session_plan_res and verify_session_run_res_set (verify_res.h). */
void verify_session_finish(verify_session *s);
const verify_totals *verify_session_totals(const verify_session *s);
/* The case records (a JSON array) so far; the caller owns it, the session starts a new one. */
json_t *verify_session_take_cases(verify_session *s);
/* {name, sm_count, arch, memory_bytes, driver, runtime} of device 0, or the CPU model's. */
json_t *verify_session_gpu_json(const verify_session *s);
void verify_session_free(verify_session *s);

/* ---- compute-sanitizer (verify_sanitizers.c) ------------------------------------------ */

/* The four tools, in record order: verify_sanitizer_tools (verify_tools.h). */

/* Re-runs this program (`self verify --grid quick|smoke --no-record ...` with c's seed,
 * variants and backend, and --res-grid verify_res_sanitizer_grid for the fused op's cases
 * when c has res variants, else --op lnmod) under compute-sanitizer memcheck, racecheck,
 * initcheck and synccheck at once, each with a quarter of the threads, tool t logging into logs[t] (the
 * caller's path: a temporary of its output transaction, named sanitizer_<tool>.log in the
 * record), and sets verdicts[tool] to "clean", "errors" or "not run: <why>" and
 * details[tool] to {verdict, exit_code, seconds, log, grid, variants, cases, res_grid}: the
 * grid (verify_sanitizer_grid of c's), the variants, the number of cases the run checked (both
 * ops'), and the fused op's grid (only with res variants).
 * compute-sanitizer is $ADALOAD_COMPUTE_SANITIZER, else found in PATH, else
 * /usr/local/cuda/bin. Runs longer than c->sanitizer_timeout are killed. */
void verify_run_sanitizers(const verify_config *c, const char *self, const char *const logs[4],
                           json_t *verdicts, json_t *details);


/* ---- the record (verify_record.c) ----------------------------------------------------- */

/* The verify.json object (schema adaload.verify/1). Takes ownership of cases, verdicts and
 * details; meta is the run folder's meta.json (git facts; may be NULL). NULL when out of
 * memory. */
json_t *verify_record_new(const verify_config *c, const verify_totals *t, json_t *gpu,
                          json_t *cases, json_t *verdicts, json_t *details, const char *date,
                          const char *cmdline, const json_t *meta);

#endif
