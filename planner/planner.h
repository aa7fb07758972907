/* planner.h -- the dual-constraint batch planner of AdaptiveLoad, its simulator and metrics.
 *
 * Pipeline (every step returns a plan_status and fills a one-line plan_error on failure;
 * the library never exits and keeps no global state):
 *
 *   plan_model m;       plan_model_load("datasets/models/wan2.1-14b.json", &m, &err);
 *   plan_manifest *mf;  plan_manifest_read("datasets/default.csv", &m, keep_ids, &mf, &err);
 *   plan_config cfg;    plan_config_default(&cfg);  cfg.policy = PLAN_POLICY_DUAL;
 *   plan_result *r;     plan_build(mf, &m, &cfg, &r, &err);
 *   json_t *j = plan_summary_json(r);           // the --summary-json document
 *   plan_print_summary(stdout, r);              // the human table
 *   plan_write_plan(r, mf, file);               // one JSON line per step (--plan-out)
 *   plan_result_free(r); plan_manifest_free(mf);
 *
 * Manifest: CSV with a header; width,height,frames required; id, fps, weight optional; any
 * order; unknown columns ignored. Read in one streaming pass; per sample only a bucket index
 * (and the id when keep_ids is set) is stored. Samples snap to the model's legal shapes
 * (frames 1 + 4k, sides multiples of VAE stride x patch, both rounded down) and are grouped in
 * buckets = distinct snapped (frames, height, width). Token count per sample:
 *   S = ceil((1 + (F - 1)/st) / pt) * (H / (ss*ph)) * (W / (ss*pw)).
 *
 * Cost of one sample (seconds on one GPU): C(S) = alpha*S + beta*S^2 + gamma, from the model's
 * FLOP count at a FLOP rate, or fitted to a measured `tokens,seconds` profile.
 * Memory: fixed bytes (parameters + optimizer state, sharded or not, + a reserve) plus bytes
 * per token; M_mem = floor((GPU memory - fixed) / bytes per token).
 * Batch size per bucket:
 *   equal-token  B = max(1, floor(M_tok / S)),   M_tok default: the longest sample's S;
 *   dual         B = max(1, min(floor(M_mem / S), floor(M_comp / S^p))),
 *                M_comp default: the longest sample's S^p; p given or fitted (auto).
 * Micro-batches: each bucket's samples in a seeded shuffle, cut in B-sized pieces (the last
 * one may be smaller: an explicit tail). Ranks get them step by step, `random` (each rank
 * draws uniformly from all micro-batches left, i.e. a bucket in proportion to what remains)
 * or `same-bucket` (one bucket per step, drawn in proportion to its micro-batches left; ranks
 * beyond what the bucket has left idle in that step). Every sample is used exactly once.
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

const char *plan_strerror(plan_status s);

/* One line, no trailing newline: names the file and line/column, or the option. */
typedef struct {
    char msg[512];
} plan_error;

/* ---- the model ------------------------------------------------------------------------ */
typedef struct {
    char name[64];
    int64_t hidden_size, layers, heads, ffn_size, text_len;
    int64_t vae_stride[3]; /* t, h, w */
    int64_t patch[3];      /* t, h, w */
    double params;                /* parameter count */
    double state_bytes_per_param; /* weights + grads + optimizer state, bytes per parameter */
    int shard_states;             /* 1: that state is sharded over the data-parallel ranks */
    int64_t reserve_bytes;        /* CUDA context, communication buffers, allocator slack */
    int64_t mem_bytes_per_token;  /* activation memory per token of a micro-batch */
    double train_flop_factor;     /* training FLOPs per sample / forward FLOPs */
} plan_model;

/* Loads a model JSON (datasets/models/NAME.json format, see datasets/models/README.md). */
plan_status plan_model_load(const char *path, plan_model *m, plan_error *err);

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

/* ---- the cost model ------------------------------------------------------------------- */
typedef struct {
    double alpha, beta, gamma; /* C(S) = alpha*S + beta*S^2 + gamma, seconds per sample */
    int from_profile;          /* 0: FLOP model at a rate, 1: fitted to a measured profile */
    int64_t profile_points;
} plan_cost;

/* From the FLOP model: training FLOPs (train_flop_factor x forward) at `flops` FLOP/s. */
void plan_cost_from_flops(const plan_model *m, double flops, plan_cost *c);
/* Least-squares fit of alpha, beta, gamma to a CSV `tokens,seconds` (header required). */
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
 * each sample's id (the id column, or the line number when there is none) for plan_write_plan. */
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
typedef enum { PLAN_ASSIGN_RANDOM = 0, PLAN_ASSIGN_SAME_BUCKET = 1 } plan_assign;
typedef enum { PLAN_BIND_MEMORY = 0, PLAN_BIND_COMPUTE = 1, PLAN_BIND_FLOOR = 2 } plan_binding;

const char *plan_policy_name(plan_policy p);
const char *plan_assign_name(plan_assign a);
const char *plan_binding_name(plan_binding b);

typedef struct {
    plan_policy policy;
    plan_assign assign;
    int64_t gpus;           /* data-parallel ranks, >= 1 (default 16) */
    double gpu_mem_bytes;   /* memory per GPU (default 141 GiB, an H200) */
    int64_t mem_tokens;     /* M_mem in tokens; 0: from the memory model */
    int64_t tok_budget;     /* equal-token M_tok; 0: the longest sample's tokens */
    double comp_budget;     /* M_comp; 0: the longest sample's S^p */
    double p;               /* exponent in (0, 3]; 0: auto */
    uint64_t seed;          /* shuffles and draws (default 0) */
    double flops;           /* sustained FLOP/s per GPU for the FLOP model (default 4e14) */
    int oversize_drop;      /* 1: drop samples over M_mem and report them; 0: an error */
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
    int64_t b_mem, b_comp; /* the two floors before max(1, min(...)); b_comp = -1 for equal-token */
    int64_t microbatches;
    int dropped;           /* 1: over the memory budget, dropped (--oversize=drop) */
} plan_bucket;

typedef struct {
    uint32_t bucket;
    uint32_t count; /* samples in it: batch_size, or fewer for the bucket's tail */
    uint64_t start; /* into plan_result.order */
} plan_microbatch;

typedef struct {
    double epoch_idle_fraction;     /* sum_steps (max - mean) / sum_steps max */
    double mean_step_idle_fraction; /* mean over steps of (max - mean) / max */
    double max_over_mean_minus_1;   /* mean over steps of max/mean - 1 */
    double cv;                      /* mean over steps of stddev/mean (population stddev) */
    double spread;                  /* mean over steps of (max - min) / max */
    double vram_util_mean;          /* mean over micro-batches of (fixed + tokens*bpt)/capacity */
    double vram_util_max;
    int64_t over_memory_microbatches; /* micro-batches with more tokens than M_mem */
    double samples_per_s;           /* planned samples / sum_steps max */
    double tokens_per_s;
    double epoch_seconds;           /* sum_steps max: predicted time of the epoch */
} plan_metrics;

typedef struct {
    plan_config cfg;
    char model[64];
    char manifest[256];
    plan_cost cost;
    double p;
    int p_auto;
    double fixed_bytes;
    int64_t bytes_per_token;
    int64_t m_mem_tokens, m_tok;
    double m_comp;
    int64_t smin, smax;
    int64_t samples_total, samples_planned, samples_dropped;
    int64_t tokens_planned;
    int64_t nbuckets;
    plan_bucket *buckets;
    int64_t nmicro;
    plan_microbatch *micro;
    int64_t tail_microbatches;
    uint32_t *order;   /* sample indices, grouped by bucket, shuffled inside each bucket */
    int64_t steps;
    uint32_t *slots;   /* steps x gpus micro-batch indices; PLAN_IDLE where a rank idles */
    plan_metrics metrics;
    size_t peak_bytes; /* high-water mark of the heap this result held while it was built */
} plan_result;

#define PLAN_IDLE UINT32_MAX

plan_status plan_build(const plan_manifest *mf, const plan_model *m, const plan_config *cfg,
                       plan_result **out, plan_error *err);
void plan_result_free(plan_result *r);
/* Predicted seconds of micro-batch k. */
double plan_microbatch_cost(const plan_result *r, int64_t k);

/* ---- outputs -------------------------------------------------------------------------- */
/* The summary document (keys in a fixed order; see planner/README.md). New reference. */
json_t *plan_summary_json(const plan_result *r);
/* Human-readable summary of one plan. */
void plan_print_summary(FILE *f, const plan_result *r);
/* Two plans of the same manifest side by side (a column per policy). */
void plan_print_side_by_side(FILE *f, const plan_result *a, const plan_result *b);
/* One JSON line per step: {"step":k,"ranks":[{"rank":r,"bucket":b,"cost":c,"ids":[...]},...]}.
 * Needs a manifest read with keep_ids. Returns PLAN_ERR_WRITE on an I/O error. */
plan_status plan_write_plan(const plan_result *r, const plan_manifest *mf, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
