/* plan_sim.c -- the simulator: per step and rank, the predicted compute time (sum of C(S)
 * over the rank's micro-batch; 0 for an idle rank) and peak memory (fixed + tokens x bytes per
 * token), then the metrics of planner-notes.md:
 *   epoch idle fraction      sum_steps (max - mean) / sum_steps max   (primary)
 *   mean step idle fraction  mean over steps of (max - mean)/max
 *   max/mean - 1, cv (population stddev / mean), spread (max - min)/max: means over steps
 *   VRAM utilization         per micro-batch (fixed + tokens x bytes per token) / GPU memory:
 *                            mean and max over micro-batches (idle ranks do not count)
 *   over-memory micro-batches: tokens > M_mem (0 by construction for dual)
 *   throughput               planned samples (tokens) / sum_steps max, all GPUs together,
 *                            with no communication time (a step lasts as long as its slowest
 *                            rank's compute).
 * Sums run in a fixed order, so results are identical on every machine.
 */
#include <math.h>
#include <stdlib.h>

#include "plan_internal.h"

plan_status plan_simulate(plan_result *r, plan_error *err)
{
    int64_t R = r->cfg.gpus;
    double *bcost = malloc((size_t)r->nbuckets * sizeof *bcost + 8);
    if (!bcost) return plan_fail(err, PLAN_ERR_NOMEM, "out of memory");
    for (int64_t b = 0; b < r->nbuckets; b++)
        bcost[b] = plan_cost_eval(&r->cost, (double)r->buckets[b].shape.tokens);

    plan_metrics *m = &r->metrics;
    double sum_max = 0, sum_gap = 0, sum_idle = 0, sum_pct = 0, sum_cv = 0, sum_spread = 0;
    for (int64_t s = 0; s < r->steps; s++) {
        const uint32_t *row = r->slots + s * R;
        double mx = 0, mn = INFINITY, sum = 0, sq = 0;
        for (int64_t i = 0; i < R; i++) {
            double t = 0;
            if (row[i] != PLAN_IDLE) {
                const plan_microbatch *mb = &r->micro[row[i]];
                t = (double)mb->count * bcost[mb->bucket];
            }
            if (t > mx) mx = t;
            if (t < mn) mn = t;
            sum += t;
        }
        double mean = sum / (double)R;
        for (int64_t i = 0; i < R; i++) {
            double t = 0;
            if (row[i] != PLAN_IDLE) {
                const plan_microbatch *mb = &r->micro[row[i]];
                t = (double)mb->count * bcost[mb->bucket];
            }
            sq += (t - mean) * (t - mean);
        }
        sum_max += mx;
        sum_gap += mx - mean;
        sum_idle += (mx - mean) / mx;
        sum_pct += mx / mean - 1.0;
        sum_cv += sqrt(sq / (double)R) / mean;
        sum_spread += (mx - mn) / mx;
    }
    double ns = (double)r->steps;
    m->epoch_idle_fraction = sum_gap / sum_max;
    m->mean_step_idle_fraction = sum_idle / ns;
    m->max_over_mean_minus_1 = sum_pct / ns;
    m->cv = sum_cv / ns;
    m->spread = sum_spread / ns;
    m->epoch_seconds = sum_max;
    m->samples_per_s = (double)r->samples_planned / sum_max;
    m->tokens_per_s = (double)r->tokens_planned / sum_max;

    double cap = r->cfg.gpu_mem_bytes, usum = 0, umax = 0;
    int64_t over = 0;
    for (int64_t k = 0; k < r->nmicro; k++) {
        const plan_microbatch *mb = &r->micro[k];
        int64_t tok = (int64_t)mb->count * r->buckets[mb->bucket].shape.tokens;
        double u = (r->fixed_bytes + (double)tok * (double)r->bytes_per_token) / cap;
        usum += u;
        if (u > umax) umax = u;
        over += tok > r->m_mem_tokens;
    }
    m->vram_util_mean = usum / (double)r->nmicro;
    m->vram_util_max = umax;
    m->over_memory_microbatches = over;
    free(bcost);
    return PLAN_OK;
}
