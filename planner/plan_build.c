/* plan_build.c -- the planner's driver: checks the configuration, sets the budgets (M_mem from
 * the memory model, M_tok, M_comp, p), drops or rejects samples over the memory budget, and
 * runs the stages: sizing (plan_policy.c), micro-batches and assignment (plan_assign.c,
 * plan_window.c), simulation (plan_sim.c). Also the baselines. Defaults and their reasons are
 * in planner/README.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

void plan_config_default(plan_config *c)
{
    memset(c, 0, sizeof *c);
    c->policy = PLAN_POLICY_DUAL;
    c->assign = PLAN_ASSIGN_SORTED_WINDOW;
    c->window = PLAN_DEFAULT_WINDOW;
    c->gpus = 16; /* the paper's data-parallel width */
    const plan_gpu *g = plan_gpu_find("h200");
    c->gpu_mem_bytes = g->bytes;
    c->gpu_name = g->name;
    c->mem_margin = PLAN_DEFAULT_MARGIN;
    c->comp_model = PLAN_COMP_COST;
    c->comp_ref_pct = PLAN_DEFAULT_REF_PCT;
    c->seed = 0;
    c->flops = 4e14; /* sustained bf16 FLOP/s per H200 in training: an assumption (~40% of peak) */
    c->jitter_cv = -1; /* the profile's measured jitter, else PLAN_DEFAULT_JITTER_CV */
}

static plan_status check_config(const plan_config *c, plan_error *err)
{
    if (c->gpus < 1 || c->gpus > 1000000)
        return plan_fail(err, PLAN_ERR_USAGE, "--gpus %lld: must be in [1, 1000000]", (long long)c->gpus);
    if (!(c->gpu_mem_bytes > 0) || !isfinite(c->gpu_mem_bytes))
        return plan_fail(err, PLAN_ERR_USAGE, "--gpu-mem-gib: must be a positive number");
    if (!(c->mem_margin >= 0 && c->mem_margin <= 0.9))
        return plan_fail(err, PLAN_ERR_USAGE, "--mem-margin %g: must be in [0, 0.9]", c->mem_margin);
    if (c->window < 1 || c->window > 1000000)
        return plan_fail(err, PLAN_ERR_USAGE, "--window %lld: must be in [1, 1000000]", (long long)c->window);
    if (c->assign >= PLAN_NASSIGN || c->policy > PLAN_POLICY_DUAL)
        return plan_fail(err, PLAN_ERR_USAGE, "--assign/--policy: not a value of this planner");
    if (plan_assign_windowed(c->assign) && (double)c->window * (double)c->gpus > 268435456.0)
        return plan_fail(err, PLAN_ERR_USAGE,
                         "--window %lld x --gpus %lld: above 2^28 micro-batches per window",
                         (long long)c->window, (long long)c->gpus);
    if ((c->assign == PLAN_ASSIGN_KK || c->assign == PLAN_ASSIGN_VERL_KK) && (double)c->window * (double)c->gpus * (double)c->gpus > 67108864.0)
        return plan_fail(err, PLAN_ERR_USAGE,
                         "--assign %s: window x gpus^2 = %.4g is above 2^26 (its partitions would need "
                         "over 1 GiB); use --assign lpt or a smaller --window",
                         plan_assign_name(c->assign), (double)c->window * (double)c->gpus * (double)c->gpus);
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
    if (c->grad_accum < 0 || c->grad_accum > 1000000)
        return plan_fail(err, PLAN_ERR_USAGE, "--grad-accum %lld: must be in [1, 1000000]", (long long)c->grad_accum);
    if (plan_assign_per_window(c->assign) && c->grad_accum && c->grad_accum != c->window)
        return plan_fail(err, PLAN_ERR_USAGE,
                         "--grad-accum %lld: --assign %s steps the optimizer once per window, so the "
                         "accumulation is the window (--window %lld); give one value to both",
                         (long long)c->grad_accum, plan_assign_name(c->assign), (long long)c->window);
    if (c->parallel > PLAN_PARALLEL_ZERO3)
        return plan_fail(err, PLAN_ERR_USAGE, "--parallel: not a value of this planner");
    if (!(c->jitter_cv == -1 || (c->jitter_cv >= 0 && c->jitter_cv <= 2)))
        return plan_fail(err, PLAN_ERR_USAGE, "--jitter-cv %g: must be in [0, 2]", c->jitter_cv);
    if (!(c->comp_ref_pct > 0 && c->comp_ref_pct <= 100))
        return plan_fail(err, PLAN_ERR_USAGE, "--comp-ref-pct %g: must be in (0, 100]", c->comp_ref_pct);
    return PLAN_OK;
}

static void copy_name(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

/* Memory model: bytes per token from the activation setup (or the profile), usable bytes,
 * M_mem, and the check of --mem-tokens against it. */
static plan_status set_memory(plan_result *r, const plan_model *m, const plan_config *cfg, plan_error *err)
{
    const plan_act_setup *act = plan_model_act(m, cfg->act);
    if (!act) {
        char names[256] = "";
        for (int i = 0; i < m->nact; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", m->act[i].name);
        return plan_fail(err, PLAN_ERR_USAGE, "--act %s: %s has no such activation setup (it has %s)",
                         cfg->act, m->name, names);
    }
    copy_name(r->act, sizeof r->act, act->name);
    r->bytes_per_token = act->bytes_per_token;
    r->act_measured = act->measured;
    if (r->cost.mem_bytes_per_token > 0) {
        r->bytes_per_token = r->cost.mem_bytes_per_token;
        r->bpt_from_profile = 1;
        r->act_measured = 1;
    }
    r->bytes_per_sample = r->cost.mem_bytes_per_sample;
    r->bytes_per_token_sq = r->cost.mem_bytes_per_token_sq;
    r->parallel = cfg->parallel != PLAN_PARALLEL_MODEL ? cfg->parallel
                  : m->shard_states ? PLAN_PARALLEL_ZERO3 : PLAN_PARALLEL_DDP;
    r->unsharded_grads = plan_assign_per_window(cfg->assign) && r->parallel >= PLAN_PARALLEL_ZERO2;
    if (r->unsharded_grads) r->warnings |= PLAN_WARN_UNSHARDED_GRADS;
    r->fixed_bytes = plan_state_bytes(m, cfg->gpus, r->parallel, r->unsharded_grads) + (double)m->reserve_bytes;
    if (r->bpt_from_profile && r->cost.mem_intercept_bytes > 0) r->fixed_bytes += r->cost.mem_intercept_bytes;
    r->mem_usable = cfg->gpu_mem_bytes * (1.0 - cfg->mem_margin);
    double room = r->mem_usable - r->fixed_bytes;
    r->mem_room = room;
    if (room < (double)r->bytes_per_token + r->bytes_per_sample)
        return plan_fail(err, PLAN_ERR_USAGE,
                         "--gpu-mem-gib %.6g: no room for activations: %s needs %.4g GiB per GPU "
                         "fixed at %lld GPUs, %.4g GiB are usable (margin %g)",
                         cfg->gpu_mem_bytes / 1073741824.0, m->name, r->fixed_bytes / 1073741824.0,
                         (long long)cfg->gpus, r->mem_usable / 1073741824.0, cfg->mem_margin);
    r->m_mem_model = (int64_t)floor(room / (double)r->bytes_per_token);
    r->m_mem_tokens = r->m_mem_model;
    if (cfg->mem_tokens > 0) {
        if (cfg->mem_tokens > r->m_mem_model && !cfg->force)
            return plan_fail(err, PLAN_ERR_USAGE,
                             "--mem-tokens %lld: above the %lld tokens the memory model allows (%s, "
                             "%s, %lld GPUs, margin %g); --force plans with it anyway",
                             (long long)cfg->mem_tokens, (long long)r->m_mem_model, m->name, r->act,
                             (long long)cfg->gpus, cfg->mem_margin);
        if (cfg->mem_tokens > r->m_mem_model) r->warnings |= PLAN_WARN_FORCED_MEM;
        r->m_mem_tokens = cfg->mem_tokens;
    }
    return PLAN_OK;
}

/* Buckets over the memory budget: an error naming the first such line, or dropped. */
static plan_status set_buckets(plan_result *r, const plan_manifest *mf, const plan_model *m,
                               plan_heap *heap, plan_error *err)
{
    r->nbuckets = plan_manifest_nbuckets(mf);
    r->buckets = plan_heap_calloc(heap, (size_t)r->nbuckets * sizeof *r->buckets);
    if (!r->buckets) return plan_fail(err, PLAN_ERR_NOMEM, "out of memory");
    const plan_bucket_shape *worst = NULL;
    r->smin = INT64_MAX;
    r->smax = 0;
    int64_t planned_buckets = 0;
    for (int64_t b = 0; b < r->nbuckets; b++) {
        plan_bucket *k = &r->buckets[b];
        k->shape = *plan_manifest_bucket(mf, b);
        r->samples_total += k->shape.samples;
        if (k->shape.tokens > r->m_mem_tokens || plan_memory_batch(r, k->shape.tokens) < 1) {
            k->dropped = 1;
            r->samples_dropped += k->shape.samples;
            if (!worst || k->shape.first_line < worst->first_line) worst = &k->shape;
            continue;
        }
        planned_buckets++;
        r->samples_planned += k->shape.samples;
        r->tokens_planned += k->shape.samples * k->shape.tokens;
        if (k->shape.tokens < r->smin) r->smin = k->shape.tokens;
        if (k->shape.tokens > r->smax) r->smax = k->shape.tokens;
    }
    if (worst && !r->cfg.oversize_drop)
        return plan_fail(err, PLAN_ERR_OVERSIZE,
                         "%s:%llu: a sample of %lld tokens (%lld frames, %lldx%lld after snapping) "
                         "exceeds the memory budget of %lld tokens per GPU (%s, %s, %lld GPUs); "
                         "--oversize=drop drops and reports such samples",
                         mf->path, (unsigned long long)worst->first_line, (long long)worst->tokens,
                         (long long)worst->frames, (long long)worst->height, (long long)worst->width,
                         (long long)r->m_mem_tokens, m->name, r->act, (long long)r->cfg.gpus);
    if (r->samples_planned == 0)
        return plan_fail(err, PLAN_ERR_OVERSIZE, "%s: every sample exceeds the memory budget of %lld tokens per GPU",
                         mf->path, (long long)r->m_mem_tokens);
    if (planned_buckets == 1) r->warnings |= PLAN_WARN_ONE_SHAPE;
    return PLAN_OK;
}

/* The cost model must be positive and finite where it is used; the message blames what made
 * it (a profile fit may dip below zero; a tiny --flops overflows). */
static plan_status check_cost(const plan_result *r, plan_error *err)
{
    for (int64_t b = 0; b < r->nbuckets; b++) {
        if (r->buckets[b].dropped) continue;
        int64_t S = r->buckets[b].shape.tokens;
        double c = plan_cost_eval(&r->cost, (double)S);
        if (c > 0 && isfinite(c)) continue;
        if (r->cost.from_profile)
            return plan_fail(err, PLAN_ERR_INPUT,
                             "--profile: the fitted cost is not positive at %lld tokens (%.6g s); "
                             "measure more points across the dataset's range", (long long)S, c);
        return plan_fail(err, PLAN_ERR_USAGE,
                         "--flops %g: the FLOP model's cost at %lld tokens is %.6g s, not a positive "
                         "finite number", r->cfg.flops, (long long)S, c);
    }
    return PLAN_OK;
}

/* Exponent, M_tok, the reference sample and M_comp. */
static plan_status set_budgets(plan_result *r, plan_error *err)
{
    const plan_config *cfg = &r->cfg;
    r->p_auto = cfg->p == 0;
    r->p = r->p_auto ? plan_fit_p(&r->cost, r->smin, r->smax) : cfg->p;
    if (r->p_auto && r->smin == r->smax) r->warnings |= PLAN_WARN_P_ZERO_RANGE;
    if (!(r->p > 0 && r->p <= 3)) {
        if (cfg->comp_model == PLAN_COMP_POWER)
            return plan_fail(err, PLAN_ERR_USAGE, "--p auto: the fitted exponent %.6g is outside (0, 3]; give --p", r->p);
        r->p = 0; /* not used by the cost model; reported as 0 */
    }
    r->m_tok = cfg->tok_budget > 0 ? cfg->tok_budget : r->smax;
    /* The reference sample: the smallest S with at least pct% of the planned samples at or
     * below it (nearest rank), over the buckets in token order. */
    double want = ceil(cfg->comp_ref_pct / 100.0 * (double)r->samples_planned);
    if (want < 1) want = 1;
    int64_t acc = 0;
    r->s_ref = r->smax;
    for (int64_t b = 0; b < r->nbuckets; b++) {
        if (r->buckets[b].dropped) continue;
        acc += r->buckets[b].shape.samples;
        if ((double)acc >= want) {
            r->s_ref = r->buckets[b].shape.tokens;
            break;
        }
    }
    r->b_ref = plan_memory_batch(r, r->s_ref);
    if (r->b_ref < 1) r->b_ref = 1;
    r->m_comp = cfg->comp_budget > 0 ? cfg->comp_budget : (double)r->b_ref * plan_comp_units(r, r->s_ref);
    return PLAN_OK;
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
    r->cfg.gpu_name = NULL;
    r->cfg.act = NULL;
    copy_name(r->model, sizeof r->model, cfg->model_name ? cfg->model_name : m->name);
    copy_name(r->manifest, sizeof r->manifest, cfg->manifest_name);
    copy_name(r->gpu, sizeof r->gpu, cfg->gpu_name);
    if (cfg->cost) r->cost = *cfg->cost;
    else plan_cost_from_flops(m, cfg->flops, &r->cost);
    r->grad_accum = plan_assign_per_window(cfg->assign) ? cfg->window : cfg->grad_accum ? cfg->grad_accum : 1;
    r->jitter_measured = cfg->jitter_cv < 0 && r->cost.seconds_cv > 0;
    r->jitter_cv = cfg->jitter_cv >= 0 ? cfg->jitter_cv : r->jitter_measured ? r->cost.seconds_cv : PLAN_DEFAULT_JITTER_CV;

    if ((st = set_memory(r, m, cfg, err))) goto fail;
    if ((st = set_buckets(r, mf, m, &heap, err))) goto fail;
    if ((st = check_cost(r, err))) goto fail;
    if ((st = set_budgets(r, err))) goto fail;
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
    free(r->group_first);
    free(r->rank_idle);
    free(r);
}


/* ---- baselines -------------------------------------------------------------------------- */
const char *plan_baseline_name(int which)
{
    switch (which) {
    case PLAN_BASE_TOK_SMAX: return "equal-token M_tok=S_max, random";
    case PLAN_BASE_TOK_MMEM: return "equal-token M_tok=M_mem, random";
    case PLAN_BASE_RANDOM: return "same policy, random";
    case PLAN_BASE_VERL_KK: return "verl KK: equal-token M_tok=M_mem, 24576 s + s^2, equal counts, sync every step";
    case PLAN_BASE_SORT_LENGTH: return "sort by length: equal-token M_tok=M_mem, per window";
    }
    return "?";
}

int plan_baseline_strongest(const plan_baselines *b)
{
    int best = -1;
    for (int k = 0; b && k < PLAN_NBASE; k++)
        if (b->r[k] && (best < 0 || b->r[k]->metrics.samples_per_s > b->r[best]->metrics.samples_per_s)) best = k;
    return best;
}

plan_status plan_build_baselines(const plan_manifest *mf, const plan_model *m,
                                 const plan_config *cfg, const plan_result *plan,
                                 plan_baselines *out, plan_error *err)
{
    memset(out, 0, sizeof *out);
    for (int w = 0; w < PLAN_NBASE; w++) {
        plan_config c = *cfg;
        c.assign = w == PLAN_BASE_VERL_KK ? PLAN_ASSIGN_VERL_KK
                   : w == PLAN_BASE_SORT_LENGTH ? PLAN_ASSIGN_SORT_LENGTH : PLAN_ASSIGN_RANDOM;
        c.metrics_only = 1;
        /* the plan's samples, no more: its memory budget decides what is dropped */
        c.mem_tokens = plan->m_mem_tokens;
        c.force = 1;
        if (w != PLAN_BASE_RANDOM) {
            c.policy = PLAN_POLICY_EQUAL_TOKEN;
            c.tok_budget = w == PLAN_BASE_TOK_SMAX ? plan->smax : plan->m_mem_tokens;
        }
        plan_status st = plan_build(mf, m, &c, &out->r[w], err);
        if (st) {
            plan_baselines_free(out);
            return st;
        }
    }
    return PLAN_OK;
}

void plan_baselines_free(plan_baselines *b)
{
    if (!b) return;
    for (int w = 0; w < PLAN_NBASE; w++) {
        plan_result_free(b->r[w]);
        b->r[w] = NULL;
    }
}
