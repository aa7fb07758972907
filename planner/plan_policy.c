/* plan_policy.c -- batch size per bucket and the constraint that sets it.
 *
 *   equal-token  B = max(1, floor(M_tok / S))                binding: memory, or floor
 *   dual         B = max(1, min(floor(M_mem / S), floor(M_comp / S^p)))
 *                binding: memory when floor(M_mem/S) <= floor(M_comp/S^p) (ties go to the hard
 *                constraint), compute otherwise, floor when the min is 0 (B forced to 1).
 * For equal-token "memory" means its token budget, the memory rule of bucket loaders.
 */
#include <math.h>

#include "plan_internal.h"

/* floor(x) as an integer, with a relative slack of 1e-12 so a ratio that is an integer
 * mathematically (M_comp / S_max^p = 1) but lands a few ulps below it still floors to it,
 * on every libm. Clamped far below INT64_MAX. */
static int64_t floor_ratio(double x)
{
    x *= 1.0 + 1e-12;
    if (!(x < 1e15)) return (int64_t)1e15;
    return (int64_t)floor(x);
}

void plan_size_buckets(plan_result *r)
{
    for (int64_t b = 0; b < r->nbuckets; b++) {
        plan_bucket *k = &r->buckets[b];
        if (k->dropped) continue;
        int64_t S = k->shape.tokens;
        if (r->cfg.policy == PLAN_POLICY_EQUAL_TOKEN) {
            k->b_mem = r->m_tok / S;
            k->b_comp = -1;
            k->batch_size = k->b_mem >= 1 ? k->b_mem : 1;
            k->binding = k->b_mem >= 1 ? PLAN_BIND_MEMORY : PLAN_BIND_FLOOR;
        } else {
            k->b_mem = r->m_mem_tokens / S;
            k->b_comp = floor_ratio(r->m_comp / pow((double)S, r->p));
            int64_t m = k->b_mem < k->b_comp ? k->b_mem : k->b_comp;
            if (m < 1) {
                k->batch_size = 1;
                k->binding = PLAN_BIND_FLOOR;
            } else {
                k->batch_size = m;
                k->binding = k->b_mem <= k->b_comp ? PLAN_BIND_MEMORY : PLAN_BIND_COMPUTE;
            }
        }
        /* ceil(samples / B) micro-batches; the last one is smaller when B does not divide. */
        k->microbatches = (k->shape.samples + k->batch_size - 1) / k->batch_size;
    }
}
