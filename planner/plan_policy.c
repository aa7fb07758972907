/* plan_policy.c -- batch size per bucket and the constraint that sets it.
 *
 *   equal-token  B = max(1, floor(M_tok / S))                      binding: tokens, or floor
 *   dual         B = max(1, min(floor(M_mem / S), floor(M_comp / u(S))))
 *                u(S) = C(S) in seconds (cost model) or S^p (power model, the paper's form);
 *                binding: memory when floor(M_mem/S) <= floor(M_comp/u(S)) (ties go to the hard
 *                constraint), compute otherwise, floor when the min is 0 (B forced to 1).
 */
#include <math.h>

#include "plan_internal.h"

/* floor(x) as an integer, with a relative slack of 1e-12 so a ratio that is an integer
 * mathematically (M_comp / u(S_ref) = B_ref) but lands a few ulps below it still floors to
 * it, on every libm. Clamped far below INT64_MAX. */
int64_t plan_floor_ratio(double x)
{
    x *= 1.0 + 1e-12;
    if (!(x < 1e15)) return (int64_t)1e15;
    return (int64_t)floor(x);
}

double plan_comp_units(const plan_result *r, int64_t S)
{
    if (r->cfg.comp_model == PLAN_COMP_POWER) return pow((double)S, r->p);
    return plan_cost_eval(&r->cost, (double)S);
}

double plan_microbatch_bytes(const plan_result *r, int64_t B, int64_t S)
{
    double s = (double)S;
    return (double)B * (s * (double)r->bytes_per_token + r->bytes_per_sample + s * s * r->bytes_per_token_sq);
}

int64_t plan_memory_batch(const plan_result *r, int64_t S)
{
    /* Per token only: B S <= M_mem exactly in integers (M_mem may be given: --mem-tokens). */
    if (r->bytes_per_sample == 0 && r->bytes_per_token_sq == 0) return r->m_mem_tokens / S;
    double room = (double)r->m_mem_tokens * (double)r->bytes_per_token; /* scales with --mem-tokens */
    if (r->cfg.mem_tokens <= 0) room = r->mem_room;
    return plan_floor_ratio(room / plan_microbatch_bytes(r, 1, S) * (1.0 - 2e-12));
}

/* The profile's measured range as a cap on B (INT64_MAX: none or --extrapolate). */
static int64_t range_batch(plan_result *r, int64_t S)
{
    const plan_cost *c = &r->cost;
    if (!c->range_batch_max) return INT64_MAX;
    int inside_s = S <= c->range_s_max;
    int64_t cap = c->range_tokens_max / S;
    if (cap > c->range_batch_max) cap = c->range_batch_max;
    if (cap < 1) cap = 1;
    if (!inside_s) r->warnings |= PLAN_WARN_EXTRAPOLATED;
    return r->cfg.extrapolate ? INT64_MAX : cap;
}

void plan_size_buckets(plan_result *r)
{
    for (int k = 0; k < PLAN_NBIND; k++) r->n_bind[k] = 0;
    for (int64_t b = 0; b < r->nbuckets; b++) {
        plan_bucket *k = &r->buckets[b];
        if (k->dropped) continue;
        int64_t S = k->shape.tokens;
        k->b_mem = plan_memory_batch(r, S);
        if (r->cfg.policy == PLAN_POLICY_EQUAL_TOKEN) {
            k->b_tok = r->m_tok / S;
            k->b_comp = -1;
            k->batch_size = k->b_tok >= 1 ? k->b_tok : 1;
            k->binding = k->b_tok >= 1 ? PLAN_BIND_TOKENS : PLAN_BIND_FLOOR;
        } else {
            k->b_tok = -1;
            k->b_comp = plan_floor_ratio(r->m_comp / plan_comp_units(r, S));
            int64_t m = k->b_mem < k->b_comp ? k->b_mem : k->b_comp;
            if (m < 1) {
                k->batch_size = 1;
                k->binding = PLAN_BIND_FLOOR;
            } else {
                k->batch_size = m;
                k->binding = k->b_mem <= k->b_comp ? PLAN_BIND_MEMORY : PLAN_BIND_COMPUTE;
            }
        }
        int64_t cap = range_batch(r, S);
        if (k->batch_size > cap) {
            k->batch_size = cap;
            k->binding = PLAN_BIND_RANGE;
            r->warnings |= PLAN_WARN_RANGE_CLAMPED;
        } else if (r->cfg.extrapolate && r->cost.range_batch_max &&
                   (k->batch_size > r->cost.range_batch_max || k->batch_size * S > r->cost.range_tokens_max)) {
            r->warnings |= PLAN_WARN_EXTRAPOLATED;
        }
        r->n_bind[k->binding]++;
        /* ceil(samples / B) micro-batches; the last one is smaller when B does not divide. */
        k->microbatches = (k->shape.samples + k->batch_size - 1) / k->batch_size;
    }
}

double plan_microbatch_cost(const plan_result *r, int64_t k)
{
    const plan_microbatch *mb = &r->micro[k];
    return r->cost.overhead + (double)mb->count * plan_cost_eval(&r->cost, (double)r->buckets[mb->bucket].shape.tokens);
}
