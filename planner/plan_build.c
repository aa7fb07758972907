/* plan_build.c -- the planner's driver: checks the configuration, sets the budgets (M_mem from
 * the memory model, M_tok, M_comp, p), drops or rejects samples over the memory budget, and
 * runs the stages: sizing (plan_policy.c), micro-batches and assignment (plan_assign.c),
 * simulation (plan_sim.c). Defaults and their reasons are in planner/README.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ada_rng.h"
#include "plan_internal.h"

void plan_config_default(plan_config *c)
{
    memset(c, 0, sizeof *c);
    c->policy = PLAN_POLICY_DUAL;
    c->assign = PLAN_ASSIGN_RANDOM;
    c->gpus = 16;                         /* the paper's data-parallel width */
    c->gpu_mem_bytes = 141.0 * 1073741824.0; /* an H200 */
    c->seed = 0;
    c->flops = 4e14; /* sustained bf16 FLOP/s per H200 in training: an assumption (~40% of peak) */
}

uint64_t plan_stream_seed(uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (0xA5A5A5A5A5A5A5A5ull * (stream + 1));
    return ada_splitmix64(&x);
}

static plan_status check_config(const plan_config *c, plan_error *err)
{
    if (c->gpus < 1 || c->gpus > 1000000)
        return plan_fail(err, PLAN_ERR_USAGE, "--gpus %lld: must be in [1, 1000000]", (long long)c->gpus);
    if (!(c->gpu_mem_bytes > 0) || !isfinite(c->gpu_mem_bytes))
        return plan_fail(err, PLAN_ERR_USAGE, "--gpu-mem-gib: must be a positive number");
    if (c->p != 0 && !(c->p > 0 && c->p <= 3))
        return plan_fail(err, PLAN_ERR_USAGE, "--p %g: must be in (0, 3] or auto", c->p);
    if (!(c->flops > 0) || !isfinite(c->flops))
        return plan_fail(err, PLAN_ERR_USAGE, "--flops: must be a positive number");
    if (c->mem_tokens < 0)
        return plan_fail(err, PLAN_ERR_USAGE, "--mem-tokens: must be positive");
    if (c->tok_budget < 0)
        return plan_fail(err, PLAN_ERR_USAGE, "--tok-budget: must be positive");
    if (c->comp_budget < 0 || !isfinite(c->comp_budget))
        return plan_fail(err, PLAN_ERR_USAGE, "--comp-budget: must be a positive number");
    return PLAN_OK;
}

static void copy_name(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

plan_status plan_build(const plan_manifest *mf, const plan_model *m, const plan_config *cfg,
                       plan_result **out, plan_error *err)
{
    *out = NULL;
    plan_status st = check_config(cfg, err);
    if (st) return st;
    plan_result *r = calloc(1, sizeof *r);
    if (!r) return plan_fail(err, PLAN_ERR_NOMEM, "out of memory");
    plan_heap heap = {0, 0};
    r->cfg = *cfg;
    r->cfg.cost = NULL; /* the result keeps its own copy in r->cost */
    r->cfg.model_name = NULL;
    r->cfg.manifest_name = NULL;
    copy_name(r->model, sizeof r->model, cfg->model_name ? cfg->model_name : m->name);
    copy_name(r->manifest, sizeof r->manifest, cfg->manifest_name);

    /* Memory model: fixed bytes per GPU + bytes per token of the micro-batch. */
    r->fixed_bytes = plan_model_fixed_bytes(m, cfg->gpus);
    r->bytes_per_token = m->mem_bytes_per_token;
    if (cfg->mem_tokens > 0) {
        r->m_mem_tokens = cfg->mem_tokens;
    } else {
        double room = cfg->gpu_mem_bytes - r->fixed_bytes;
        if (room < (double)r->bytes_per_token) {
            st = plan_fail(err, PLAN_ERR_USAGE,
                           "--gpu-mem-gib %.6g: no room for activations: %s needs %.4g GiB per GPU "
                           "fixed at %lld GPUs",
                           cfg->gpu_mem_bytes / 1073741824.0, m->name, r->fixed_bytes / 1073741824.0,
                           (long long)cfg->gpus);
            goto fail;
        }
        r->m_mem_tokens = (int64_t)floor(room / (double)r->bytes_per_token);
    }

    /* Buckets over the memory budget: an error naming the first such line, or dropped. */
    r->nbuckets = plan_manifest_nbuckets(mf);
    r->buckets = plan_heap_calloc(&heap, (size_t)r->nbuckets * sizeof *r->buckets);
    if (!r->buckets) {
        st = plan_fail(err, PLAN_ERR_NOMEM, "out of memory");
        goto fail;
    }
    const plan_bucket_shape *worst = NULL;
    r->smin = INT64_MAX;
    r->smax = 0;
    for (int64_t b = 0; b < r->nbuckets; b++) {
        plan_bucket *k = &r->buckets[b];
        k->shape = *plan_manifest_bucket(mf, b);
        r->samples_total += k->shape.samples;
        if (k->shape.tokens > r->m_mem_tokens) {
            k->dropped = 1;
            r->samples_dropped += k->shape.samples;
            if (!worst || k->shape.first_line < worst->first_line) worst = &k->shape;
            continue;
        }
        r->samples_planned += k->shape.samples;
        r->tokens_planned += k->shape.samples * k->shape.tokens;
        if (k->shape.tokens < r->smin) r->smin = k->shape.tokens;
        if (k->shape.tokens > r->smax) r->smax = k->shape.tokens;
    }
    if (worst && !cfg->oversize_drop) {
        st = plan_fail(err, PLAN_ERR_OVERSIZE,
                       "%s:%llu: a sample of %lld tokens (%lld frames, %lldx%lld after snapping) "
                       "exceeds the memory budget of %lld tokens per GPU (%s, %lld GPUs); "
                       "--oversize=drop drops and reports such samples",
                       mf->path, (unsigned long long)worst->first_line, (long long)worst->tokens,
                       (long long)worst->frames, (long long)worst->height, (long long)worst->width,
                       (long long)r->m_mem_tokens, m->name, (long long)cfg->gpus);
        goto fail;
    }
    if (r->samples_planned == 0) {
        st = plan_fail(err, PLAN_ERR_OVERSIZE,
                       "%s: every sample exceeds the memory budget of %lld tokens per GPU", mf->path,
                       (long long)r->m_mem_tokens);
        goto fail;
    }

    /* Cost model, checked positive where it is used (a profile fit may dip below zero). */
    if (cfg->cost) r->cost = *cfg->cost;
    else plan_cost_from_flops(m, cfg->flops, &r->cost);
    for (int64_t b = 0; b < r->nbuckets; b++) {
        if (r->buckets[b].dropped) continue;
        double c = plan_cost_eval(&r->cost, (double)r->buckets[b].shape.tokens);
        if (!(c > 0) || !isfinite(c)) {
            st = plan_fail(err, PLAN_ERR_INPUT,
                           "--profile: the fitted cost is not positive at %lld tokens (%.6g s); "
                           "measure more points across the dataset's range",
                           (long long)r->buckets[b].shape.tokens, c);
            goto fail;
        }
    }

    /* Exponent and budgets. */
    r->p_auto = cfg->p == 0;
    r->p = r->p_auto ? plan_fit_p(&r->cost, r->smin, r->smax) : cfg->p;
    if (!(r->p > 0 && r->p <= 3)) {
        st = plan_fail(err, PLAN_ERR_USAGE,
                       "--p auto: the fitted exponent %.6g is outside (0, 3]; give --p", r->p);
        goto fail;
    }
    r->m_tok = cfg->tok_budget > 0 ? cfg->tok_budget : r->smax;
    r->m_comp = cfg->comp_budget > 0 ? cfg->comp_budget : pow((double)r->smax, r->p);

    plan_size_buckets(r);
    if ((st = plan_make_microbatches(r, mf, &heap, err))) goto fail;
    if ((st = plan_assign_ranks(r, &heap, err))) goto fail;
    if ((st = plan_simulate(r, err))) goto fail;
    r->peak_bytes = heap.peak;
    *out = r;
    return PLAN_OK;
fail:
    plan_result_free(r);
    return st;
}

void plan_result_free(plan_result *r)
{
    if (!r) return;
    free(r->buckets);
    free(r->micro);
    free(r->order);
    free(r->slots);
    free(r);
}

double plan_microbatch_cost(const plan_result *r, int64_t k)
{
    const plan_microbatch *mb = &r->micro[k];
    return (double)mb->count * plan_cost_eval(&r->cost, (double)r->buckets[mb->bucket].shape.tokens);
}
