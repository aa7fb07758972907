/* planner.h -- the dual-constraint batch planner of AdaptiveLoad, its simulator and metrics.
 *
 * Pipeline (every step returns a plan_status and fills a one-line plan_error on failure;
 * the library never exits, never prints unless handed a FILE, and keeps no global state):
 *
 *   plan_model m;       plan_model_load("datasets/models/wan2.1-14b.json", &m, &err);
 *   plan_manifest *mf;  plan_manifest_read("datasets/default.csv", &m, keep_ids, &mf, &err);
 *   plan_config cfg;    plan_config_default(&cfg);          // dual, sorted-window, H200 x 16
 *   plan_result *r;     plan_build(mf, &m, &cfg, &r, &err);
 *   plan_baselines bl;  plan_build_baselines(mf, &m, &cfg, r, &bl, &err);   // optional
 *   json_t *j = plan_summary_json(r, &bl);      // the --summary-json document
 *   plan_print_summary(stdout, r, &bl);         // the human table
 *   plan_write_plan(r, mf, file, 0, -1);        // one JSON line per step (--plan-out)
 *   plan_baselines_free(&bl); plan_result_free(r); plan_manifest_free(mf);
 *
 * Manifest: CSV with a header; width,height,frames required; id, fps, weight optional; any
 * order; unknown columns ignored. Read in one streaming pass; per sample only a bucket index
 * (and the id when keep_ids is set) is stored. Samples snap to the model's legal shapes
 * (frames 1 + 4k, sides multiples of VAE stride x patch, both rounded down) and are grouped in
 * buckets = distinct snapped (frames, height, width). Token count per sample:
 *   S = ceil((1 + (F - 1)/st) / pt) * (H / (ss*ph)) * (W / (ss*pw)).
 *
 * Cost of one sample (seconds on one GPU): C(S) = alpha*S + beta*S^2 + gamma, from the model's
 * FLOP count at a FLOP rate, or fitted to a measured profile (which may add a per-micro-batch
 * overhead t0: a micro-batch of B samples takes t0 + B*C(S)).
 * Memory: fixed bytes (model state, sharded or not, + a reserve) plus bytes per token of the
 * chosen activation setup (or of the profile); usable = capacity * (1 - margin);
 * M_mem = floor((usable - fixed) / bytes per token).
 * Batch size per bucket:
 *   equal-token  B = max(1, floor(M_tok / S)),   M_tok default: the longest sample's S;
 *   dual         B = max(1, min(floor(M_mem / S), floor(M_comp / C(S))))      (cost model)
 *                or  max(1, min(floor(M_mem / S), floor(M_comp / S^p)))       (power model)
 *                M_comp default: the compute of one memory-full micro-batch of the reference
 *                sample S_ref (the comp_ref_pct percentile of the samples' tokens).
 * Micro-batches: each bucket's samples in a seeded shuffle, cut in B-sized pieces (the last
 * one may be smaller: an explicit tail). The random sequence of all micro-batches (each draw
 * a bucket in proportion to what it has left) is the baseline order; assignments to ranks:
 *   random         dealt in that order, gpus per step;
 *   same-bucket    one bucket per step for every rank (Lhotse/NeMo);
 *   sorted-window  each window of W*gpus consecutive micro-batches sorted by cost and dealt
 *                  gpus per step: ranks synchronize every step (FSDP-safe), and a window is
 *                  the same set of samples as under random (gradient accumulation over W);
 *   lpt, kk        each window's micro-batches partitioned over the ranks by longest
 *                  processing time first or Karmarkar-Karp differencing: ranks run different
 *                  micro-batch counts and synchronize once per window (DDP with no_sync).
 *   verl-kk        (baseline) verl's balancer: each window partitioned into gpus parts of
 *                  equal micro-batch counts by equal-size Karmarkar-Karp over its stock
 *                  workload 24576 S + S^2 per sample; each part in workload order; a sync
 *                  every step.
 *   sort-by-length (baseline) each window sorted by tokens per sample, dealt gpus per step.
 * Every sample is used exactly once.
 */
#ifndef ADALOAD_PLANNER_H
#define ADALOAD_PLANNER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PLAN_OK = 0,
    PLAN_ERR_USAGE,    /* an option value is out of range (the message names the option) */
    PLAN_ERR_INPUT,    /* a bad input file: manifest, model file, profile (file, line, column) */
    PLAN_ERR_IO,       /* an input cannot be opened or read */
    PLAN_ERR_OVERSIZE, /* a sample needs more than the memory budget (and --oversize=error) */
    PLAN_ERR_WRITE,    /* an output cannot be written */
    PLAN_ERR_NOMEM     /* out of memory */
} plan_status;

/* A short text for a status (the Python package's messages use it when a call fails
 * without one). */
const char *plan_strerror(plan_status s);

/* One line, no trailing newline, no control bytes: names the file and line/column, or the
 * option. */
typedef struct {
    char msg[512];
} plan_error;

/* ---- the model ------------------------------------------------------------------------ */
#define PLAN_MAX_ACT 8
/* A named activation setup: bytes per token of a micro-batch (datasets/models/README.md). */
typedef struct {
    char name[32];
    int64_t bytes_per_token;
    int measured; /* 0: estimated by counting tensors, not yet measured; 1: measured */
} plan_act_setup;

typedef struct {
    char name[64];
    int64_t hidden_size, layers, heads, ffn_size, text_len;
    int64_t vae_stride[3]; /* t, h, w */
    int64_t patch[3];      /* t, h, w */
    double params;                /* parameter count */
    double state_bytes_per_param; /* weights + grads + optimizer state, bytes per parameter */
    int shard_states;             /* 1: that state is sharded over the data-parallel ranks */
    int64_t reserve_bytes;        /* CUDA context, communication buffers, allocator slack */
    double train_flop_factor;     /* training FLOPs per sample / forward FLOPs */
    int nact;                     /* activation setups, 1..PLAN_MAX_ACT */
    plan_act_setup act[PLAN_MAX_ACT];
    int default_act;              /* index into act */
} plan_model;

/* Loads a model JSON (datasets/models/NAME.json format, see datasets/models/README.md). */
plan_status plan_model_load(const char *path, plan_model *m, plan_error *err);
/* The activation setup called `name` (NULL: the model's default), or NULL if there is none. */
const plan_act_setup *plan_model_act(const plan_model *m, const char *name);

/* The snapping rule: frames down to 1 + qt*k (qt = vae_stride[0]), sides down to a multiple of
 * q = vae_stride * patch, each at least one quantum. Inputs must be >= 1. */
void plan_snap(const plan_model *m, int64_t *frames, int64_t *height, int64_t *width);
/* Tokens of a snapped shape. */
int64_t plan_tokens(const plan_model *m, int64_t frames, int64_t height, int64_t width);

/* Forward FLOPs per sample of S tokens split as a1*S + b1*S^2 + g1 (all layers):
 *   a1 = L*(12 D^2 + 4 D F + 4 D Ltext)   linear layers and cross-attention scores,
 *   b1 = 4 L D                            self-attention scores and values,
 *   g1 = 4 L Ltext D^2                    cross-attention K/V projections of the text. */
void plan_model_flops(const plan_model *m, double *a1, double *b1, double *g1);
/* Fixed bytes on each GPU for `gpus` data-parallel ranks. */
double plan_model_fixed_bytes(const plan_model *m, int64_t gpus);

/* ---- GPU presets ---------------------------------------------------------------------- */
typedef struct {
    const char *name;   /* h200, h100-80gb, a100-80gb, a100-40gb, b200 */
    double bytes;       /* capacity the planner assumes */
    const char *source; /* where that number comes from */
} plan_gpu;

/* The preset called `name`, or NULL. */
const plan_gpu *plan_gpu_find(const char *name);
/* Preset i (0, 1, ...), NULL past the last. */
const plan_gpu *plan_gpu_at(size_t i);

/* ---- the cost model ------------------------------------------------------------------- */
typedef struct {
    double alpha, beta, gamma; /* C(S) = alpha*S + beta*S^2 + gamma, seconds per sample */
    double overhead;           /* t0, seconds per micro-batch: it takes t0 + B*C(S) */
    int from_profile;          /* 0: FLOP model at a rate, 1: fitted to a measured profile */
    int64_t profile_points;
    int64_t mem_bytes_per_token; /* profile's measured activation bytes per token; 0: none */
    double mem_intercept_bytes;  /* the intercept of that fit: added to the fixed bytes when > 0 */
    double mem_bytes_per_sample; /* per sample of a micro-batch (text context, modulation) */
    double mem_bytes_per_token_sq; /* per S^2 of each sample (attention that is not linear) */
    double mem_fit_rms_rel, mem_fit_max_rel; /* residuals of the peak fit, relative to the peak */
    double time_fit_rms_rel, time_fit_max_rel; /* residuals of the seconds fit */
    /* the measured range of the memory model (a profile with peak_bytes): tokens per sample,
     * batch, tokens per micro-batch (B S); 0 when there is none */
    int64_t range_s_min, range_s_max, range_batch_max, range_tokens_max;
    double seconds_cv;           /* median of the rows' seconds_cv (measured jitter); 0: none */
} plan_cost;

/* From the FLOP model: training FLOPs (train_flop_factor x forward) at `flops` FLOP/s. */
void plan_cost_from_flops(const plan_model *m, double flops, plan_cost *c);
/* Reads a profile CSV (plan_profile.c; format in planner/README.md): header with tokens and
 * seconds, optional batch and peak_bytes; least-squares fit of t0 + B*(alpha S + beta S^2 +
 * gamma) (t0 = 0 unless the batch sizes differ) and of peak_bytes = c0 + bytes/token * B*S. */
plan_status plan_cost_from_profile(const char *path, plan_cost *c, plan_error *err);
double plan_cost_eval(const plan_cost *c, double S);
/* p fitted by least squares in log space to C over 65 log-spaced points in [smin, smax];
 * the local slope dlnC/dlnS when smin == smax. */
double plan_fit_p(const plan_cost *c, int64_t smin, int64_t smax);

/* ---- the manifest --------------------------------------------------------------------- */
typedef struct {
    int64_t frames, height, width; /* snapped */
    int64_t tokens;
    int64_t samples;
    uint64_t first_line; /* the manifest line of its first sample, for messages */
} plan_bucket_shape;

typedef struct plan_manifest plan_manifest;

/* Streams the CSV; buckets come out sorted by (tokens, frames, height, width). keep_ids: keep
 * each sample's id (the id column, or the line number when there is none) for plan_write_plan.
 * An id that is not valid UTF-8 is bad input (the plan is JSON). */
plan_status plan_manifest_read(const char *path, const plan_model *m, int keep_ids,
                               plan_manifest **out, plan_error *err);
void plan_manifest_free(plan_manifest *mf);
int64_t plan_manifest_samples(const plan_manifest *mf);
int64_t plan_manifest_nbuckets(const plan_manifest *mf);
const plan_bucket_shape *plan_manifest_bucket(const plan_manifest *mf, int64_t i);
/* Bucket index of sample i (0-based, manifest order). */
uint32_t plan_manifest_sample_bucket(const plan_manifest *mf, int64_t i);
/* Bytes the manifest holds on the heap (for the bytes-per-sample benchmark counter). */
size_t plan_manifest_bytes(const plan_manifest *mf);

/* ---- configuration -------------------------------------------------------------------- */
typedef enum { PLAN_POLICY_EQUAL_TOKEN = 0, PLAN_POLICY_DUAL = 1 } plan_policy;
typedef enum {
    PLAN_ASSIGN_RANDOM = 0,
    PLAN_ASSIGN_SAME_BUCKET,
    PLAN_ASSIGN_SORTED_WINDOW,
    PLAN_ASSIGN_LPT,
    PLAN_ASSIGN_KK,
    PLAN_ASSIGN_VERL_KK,    /* baseline: verl's equal-size Karmarkar-Karp, sync every step */
    PLAN_ASSIGN_SORT_LENGTH /* baseline: each window sorted by sample length, sync every step */
} plan_assign;
#define PLAN_NASSIGN 7
typedef enum { PLAN_COMP_COST = 0, PLAN_COMP_POWER = 1 } plan_comp_model;
/* Which model states each rank keeps (weights 2 B, gradients 2 B, the rest of
 * state_bytes_per_param the optimizer's, per parameter): ddp all of them; zero1 shards the
 * optimizer; zero2 also the gradients; zero3 (FSDP full sharding) also the weights.
 * PLAN_PARALLEL_MODEL: the model file's shard_states (true: zero3, false: ddp). */
typedef enum {
    PLAN_PARALLEL_MODEL = 0,
    PLAN_PARALLEL_DDP,
    PLAN_PARALLEL_ZERO1,
    PLAN_PARALLEL_ZERO2,
    PLAN_PARALLEL_ZERO3
} plan_parallel;
const char *plan_parallel_name(plan_parallel p);
/* Model-state bytes per GPU under `par` for `gpus` ranks; unsharded_grads: the gradients are
 * kept whole on every rank (accumulation without a sync, lpt/kk under zero2/zero3). */
double plan_state_bytes(const plan_model *m, int64_t gpus, plan_parallel par, int unsharded_grads);
typedef enum {
    PLAN_BIND_MEMORY = 0, /* B = floor(M_mem / S) */
    PLAN_BIND_COMPUTE,    /* B = floor(M_comp / C(S)) (or / S^p) */
    PLAN_BIND_TOKENS,     /* equal-token: B = floor(M_tok / S) */
    PLAN_BIND_FLOOR,      /* every cap below one sample: B = 1 */
    PLAN_BIND_RANGE,      /* clamped to the profile's measured range (batch, B S) */
    PLAN_NBIND
} plan_binding;

const char *plan_policy_name(plan_policy p);
const char *plan_assign_name(plan_assign a);
const char *plan_comp_model_name(plan_comp_model c);
const char *plan_binding_name(plan_binding b);
/* 1: the assignment synchronizes the ranks once per window, not once per step. */
int plan_assign_per_window(plan_assign a);
/* 1: the assignment works window by window (sorted-window, lpt, kk, verl-kk, sort-by-length). */
int plan_assign_windowed(plan_assign a);
/* verl's stock workload of a sample of S tokens (verl/utils/seqlen_balancing.py,
 * calculate_workload): 24576 S + S^2, the proxy its balancer partitions by. */
double plan_verl_workload(int64_t S);

#define PLAN_DEFAULT_WINDOW 64     /* steps per window: see planner/README.md */
#define PLAN_DEFAULT_MARGIN 0.05   /* share of the GPU memory kept free */
#define PLAN_DEFAULT_REF_PCT 50.0  /* percentile of the samples' tokens for the reference */
#define PLAN_DEFAULT_JITTER_CV 0.05 /* assumed per-micro-batch noise (planner/README.md) */
#define PLAN_JITTER_REPS 8         /* Monte Carlo epochs of the jitter-aware idle */

typedef struct {
    plan_policy policy;
    plan_assign assign;
    int64_t window;         /* steps per window for sorted-window, lpt, kk (>= 1) */
    int64_t gpus;           /* data-parallel ranks, >= 1 (default 16) */
    double gpu_mem_bytes;   /* capacity per GPU (default: the h200 preset) */
    const char *gpu_name;   /* for the outputs: the preset's name; NULL: given in GiB */
    double mem_margin;      /* share of the capacity kept free, [0, 0.9] */
    const char *act;        /* activation setup; NULL: the model's default */
    int64_t mem_tokens;     /* M_mem in tokens; 0: from the memory model */
    int force;              /* 1: accept mem_tokens above what the memory model allows */
    int64_t tok_budget;     /* equal-token M_tok; 0: the longest sample's tokens */
    plan_comp_model comp_model;
    double comp_budget;     /* M_comp in the compute model's units (seconds, or tokens^p);
                               0: one memory-full micro-batch of the reference sample */
    double comp_ref_pct;    /* the reference sample's percentile, (0, 100] */
    double p;               /* exponent of the power model in (0, 3]; 0: auto */
    uint64_t seed;          /* shuffles and draws (default 0) */
    uint64_t epoch;         /* 0, 1, ...: each epoch reshuffles with a seed derived from
                               (seed, epoch); epoch 0 uses the seed itself (default 0) */
    double flops;           /* sustained FLOP/s per GPU for the FLOP model (default 4e14) */
    int oversize_drop;      /* 1: drop samples over M_mem and report them; 0: an error */
    double jitter_cv;       /* per-micro-batch coefficient of variation of real step times
                               for the jitter-aware idle; < 0 (default): the profile's
                               measured seconds_cv, else PLAN_DEFAULT_JITTER_CV; 0: none */
    plan_parallel parallel; /* which states each rank keeps (default: the model file's) */
    int64_t grad_accum;     /* steps per optimizer step (gradient accumulation); 0: 1, or
                               the window for lpt/kk (which step the optimizer once per
                               window; another value is a usage error) */
    int extrapolate;        /* 1: use a profile's memory model outside its measured range
                               (a warning); 0: clamp batches to the range */
    int metrics_only;       /* 1: no per-sample order (baselines); plan_write_plan refuses */
    const plan_cost *cost;  /* NULL: the FLOP model of the plan_model at `flops` */
    const char *model_name; /* for the outputs; NULL: the plan_model's name */
    const char *manifest_name; /* for the outputs (a base name, so outputs compare across
                                  machines); NULL: none */
} plan_config;

void plan_config_default(plan_config *c);

/* ---- the plan and its simulation ------------------------------------------------------ */
typedef struct {
    plan_bucket_shape shape;
    int64_t batch_size;
    plan_binding binding;
    int64_t b_mem;         /* floor(M_mem / S) */
    int64_t b_comp;        /* floor(M_comp / C(S)) or floor(M_comp / S^p); -1 for equal-token */
    int64_t b_tok;         /* floor(M_tok / S) for equal-token; -1 for dual */
    int64_t microbatches;
    int dropped;           /* 1: over the memory budget, dropped (--oversize=drop) */
} plan_bucket;

typedef struct {
    uint32_t bucket;
    uint32_t count; /* samples in it: batch_size, or fewer for the bucket's tail */
    uint64_t start; /* into plan_result.order */
} plan_microbatch;

/* A sync group is what the ranks wait for each other at the end of: one step, or one window
 * for lpt and kk. Loads are sums of micro-batch costs (t0 + count * C(S)) per rank and group. */
typedef struct {
    double epoch_idle_fraction;     /* sum_groups (max - mean) / sum_groups max (primary) */
    double mean_step_idle_fraction; /* mean over groups of (max - mean) / max */
    double max_over_mean_minus_1;   /* mean over groups of max/mean - 1 */
    double cv;                      /* mean over groups of stddev/mean (population stddev) */
    double spread;                  /* mean over groups of (max - min) / max */
    double vram_util_mean;          /* mean over micro-batches of (fixed + tokens*bpt)/capacity */
    double vram_util_max;           /* max of the same: the peak */
    double vram_time_mean;          /* time-weighted over ranks and the epoch; an idle or
                                       waiting rank holds the fixed bytes only */
    double rank_idle_min, rank_idle_max; /* per rank: sum_groups (max - load) / sum_groups max */
    int64_t over_memory_microbatches; /* micro-batches with more tokens than the memory model
                                         allows (M_mem before any --mem-tokens) */
    double samples_per_s;           /* planned samples / sum_groups max */
    double tokens_per_s;
    double epoch_seconds;           /* sum_groups max: predicted time of the epoch */
    int64_t sync_groups;
    /* Under per-micro-batch jitter (each micro-batch's time times an independent lognormal
     * of mean 1 and CV jitter_cv), PLAN_JITTER_REPS epochs with a seed derived from the
     * plan's: the epoch idle fraction and samples/s (NaN when jitter_cv is 0). */
    double jitter_epoch_idle_fraction;
    double jitter_samples_per_s;
    /* What the optimizer steps see (an optimizer step = grad_accum consecutive steps, or an
     * lpt/kk window): how many there are, the CV of their sample counts and the mean number
     * of distinct shapes (buckets) in one. Reordering inside a window longer than the
     * accumulation changes both against the random order. */
    int64_t optimizer_steps;
    double opt_samples_cv;
    double opt_distinct_shapes;
} plan_metrics;

#define PLAN_WARN_ONE_SHAPE 1u    /* every planned sample has the same shape */
#define PLAN_WARN_P_ZERO_RANGE 2u /* p auto over one token count: a local slope, not a fit */
#define PLAN_WARN_FORCED_MEM 4u   /* mem_tokens above what the memory model allows (force) */
#define PLAN_WARN_UNSHARDED_GRADS 8u /* lpt/kk under zero2/zero3: gradients kept whole */
#define PLAN_WARN_RANGE_CLAMPED 16u  /* batches clamped to the profile's measured range */
#define PLAN_WARN_EXTRAPOLATED 32u   /* micro-batches outside the measured range (extrapolate,
                                        or samples longer than any measured) */
#define PLAN_NWARN 6
/* The text of warning bit `bit` (one of PLAN_WARN_*). */
const char *plan_warning_text(unsigned bit);

typedef struct {
    plan_config cfg;
    char model[64];
    char manifest[256];
    char gpu[32];
    char act[32];
    int act_measured;        /* bytes per token measured (profile or a measured setup) */
    int bpt_from_profile;    /* bytes per token from the profile's peak_bytes */
    plan_cost cost;
    double p;
    int p_auto;
    double mem_usable;       /* capacity * (1 - margin) */
    double fixed_bytes;
    int64_t bytes_per_token;
    double bytes_per_sample; /* memory per sample of a micro-batch */
    double bytes_per_token_sq; /* memory per S^2 of each sample */
    double mem_room;         /* usable - fixed: what activations may take */
    plan_parallel parallel;  /* resolved (never PLAN_PARALLEL_MODEL) */
    int unsharded_grads;     /* lpt/kk under zero2/zero3 */
    double jitter_cv;        /* resolved */
    int64_t grad_accum;      /* resolved: steps per optimizer step */
    int jitter_measured;     /* 1: from the profile's seconds_cv */
    int64_t m_mem_model;     /* what the memory model allows */
    int64_t m_mem_tokens, m_tok;
    double m_comp;
    int64_t s_ref, b_ref;    /* reference sample's tokens, its memory-full batch */
    int64_t smin, smax;
    int64_t samples_total, samples_planned, samples_dropped;
    int64_t tokens_planned;
    int64_t nbuckets;
    plan_bucket *buckets;
    int64_t n_bind[PLAN_NBIND]; /* planned buckets per binding constraint */
    int64_t nmicro;
    plan_microbatch *micro;
    int64_t tail_microbatches;
    uint32_t *order;   /* sample indices, grouped by bucket, shuffled inside each bucket
                          (NULL with metrics_only) */
    int64_t steps;
    uint32_t *slots;   /* steps x gpus micro-batch indices; PLAN_IDLE where a rank idles */
    int64_t ngroups;
    uint64_t *group_first; /* ngroups + 1 step indices; NULL when every step is a group */
    double *rank_idle;     /* gpus entries */
    unsigned warnings;     /* PLAN_WARN_* bits */
    plan_metrics metrics;
    size_t peak_bytes; /* high-water mark of the heap this result held while it was built */
} plan_result;

#define PLAN_IDLE UINT32_MAX

plan_status plan_build(const plan_manifest *mf, const plan_model *m, const plan_config *cfg,
                       plan_result **out, plan_error *err);
void plan_result_free(plan_result *r);
/* Predicted seconds of micro-batch k: t0 + count * C(S). */
double plan_microbatch_cost(const plan_result *r, int64_t k);
/* Predicted activation bytes of a micro-batch of B samples of S tokens (the memory model
 * above the fixed bytes): B (S bytes_per_token + bytes_per_sample + S^2 bytes_per_token_sq). */
double plan_microbatch_bytes(const plan_result *r, int64_t B, int64_t S);
/* The largest B whose micro-batch fits the memory budget (may be 0). */
int64_t plan_memory_batch(const plan_result *r, int64_t S);

/* The baselines a plan is reported against, with the same seed: equal-token with M_tok =
 * S_max, equal-token with M_tok = M_mem and the plan's own policy, all with random
 * assignment; and two strong public ones over equal-token micro-batches at M_mem with the
 * plan's window: verl's balancer (verl-kk: equal-size Karmarkar-Karp over its stock workload
 * 24576 S + S^2, equal micro-batch counts per rank, a sync every step) and sort-by-length.
 * The strongest (highest samples/s) is what the summary's headline compares with. */
enum {
    PLAN_BASE_TOK_SMAX = 0,
    PLAN_BASE_TOK_MMEM,
    PLAN_BASE_RANDOM,
    PLAN_BASE_VERL_KK,
    PLAN_BASE_SORT_LENGTH,
    PLAN_NBASE
};
typedef struct {
    plan_result *r[PLAN_NBASE];
} plan_baselines;
plan_status plan_build_baselines(const plan_manifest *mf, const plan_model *m,
                                 const plan_config *cfg, const plan_result *plan,
                                 plan_baselines *out, plan_error *err);
void plan_baselines_free(plan_baselines *b);
const char *plan_baseline_name(int which);
/* The baseline with the highest samples/s (-1 when there is none). */
int plan_baseline_strongest(const plan_baselines *b);

/* ---- outputs -------------------------------------------------------------------------- */
/* The summary document (keys in a fixed order; see planner/README.md); baselines may be
 * NULL. New reference. */
json_t *plan_summary_json(const plan_result *r, const plan_baselines *b);
/* Human-readable summary of one plan (and its baselines, when given). */
void plan_print_summary(FILE *f, const plan_result *r, const plan_baselines *b);
/* Two plans of the same manifest side by side (a column per policy). */
void plan_print_side_by_side(FILE *f, const plan_result *a, const plan_result *b);
/* Steps [first, first + count) of the plan (count < 0: to the end), one JSON line each:
 * {"step":k,"window":w,"sync":true,"group_samples":n,"group_tokens":t,
 *  "ranks":[{"rank":r,"bucket":b,"cost":c,"tokens":t,"ids":[...]}]}
 * (group_*: the totals over all ranks of the sync group the step belongs to: the step, or
 * the lpt/kk window), then one end record
 * {"end":true,"first_step":F,"steps":K,"plan_steps":T,"gpus":R,"assign":"..","window":W,
 *  "seed":S,"epoch":E,"samples":N}
 * so that a reader can refuse a file cut at a line boundary. Step numbers are those of the
 * whole plan, so the step lines of a prefix and of the remainder written from the same
 * inputs concatenate to those of the whole plan byte for byte. Needs a manifest read with
 * keep_ids and a result built without metrics_only (else PLAN_ERR_USAGE); first beyond the
 * last step is PLAN_ERR_USAGE; PLAN_ERR_WRITE on an I/O error. */
plan_status plan_write_plan(const plan_result *r, const plan_manifest *mf, FILE *f,
                            int64_t first, int64_t count);
/* One rank's part of plan_write_plan's output (--per-rank): the same step lines with only
 * that rank's entry in "ranks" (sync marks and group totals as in the whole plan), and an
 * end record that adds "rank":r,"plan_id":"<16 hex of plan_id>", so that the files of
 * different plans cannot be mixed unnoticed. plan_id must be plan_identity(r), computed
 * once for all ranks (it reads the whole plan). rank outside [0, gpus) is PLAN_ERR_USAGE. */
plan_status plan_write_rank(const plan_result *r, const plan_manifest *mf, FILE *f, int64_t rank,
                            int64_t first, int64_t count, uint64_t plan_id);
/* A 64-bit identity (FNV-1a) of a plan: its configuration, slots, micro-batches and order. */
uint64_t plan_identity(const plan_result *r);

#ifdef __cplusplus
}
#endif
#endif
