/* plan_sim.c -- the simulator: per sync group (one step, or one window for lpt and kk) and
 * rank, the predicted load (sum over the rank's micro-batches of t0 + count * C(S); 0 for an
 * idle rank); the group lasts as long as its busiest rank (no communication time is
 * modelled). Then the metrics of planner-notes.md:
 *   epoch idle fraction      sum_groups (max - mean) / sum_groups max   (primary)
 *   mean step idle fraction  mean over groups of (max - mean)/max
 *   max/mean - 1, cv (population stddev / mean), spread (max - min)/max: means over groups
 *   per-rank idle            sum_groups (max - load) / sum_groups max, its min and max
 *   VRAM utilization         per micro-batch (fixed + tokens x bytes per token) / capacity:
 *                            mean and max over micro-batches (idle ranks do not count);
 *                            time-weighted: each micro-batch holds its bytes for its own
 *                            time, a rank that waits or idles holds the fixed bytes
 *   over-memory micro-batches: tokens > what the memory model allows
 *   throughput               planned samples (tokens) / sum_groups max, all GPUs together.
 *   jitter-aware idle and samples/s: PLAN_JITTER_REPS epochs in which each micro-batch's
 *                            time is multiplied by an independent lognormal of mean 1 and
 *                            CV jitter_cv (sigma^2 = ln(1 + cv^2)), seeded from the plan's
 *                            seed and epoch; idle = sum of (max - mean) / sum of max over
 *                            all of them, samples/s = samples / the mean epoch time.
 * Sums run in a fixed order, so results are identical on every machine.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ada_rng.h"
#include "plan_internal.h"

typedef struct {
    double sum_max, sum_gap, sum_idle, sum_pct, sum_cv, sum_spread, vram_time;
} sim_acc;

/* Loads of group [s0, s1) into load[] and mem_time[] (sum of utilization x time). */
static void group_loads(const plan_result *r, const double *bcost, int64_t s0, int64_t s1,
                        double *load, double *mem_time)
{
    int64_t R = r->cfg.gpus;
    double cap = r->cfg.gpu_mem_bytes, t0 = r->cost.overhead;
    for (int64_t i = 0; i < R; i++) load[i] = mem_time[i] = 0;
    for (int64_t s = s0; s < s1; s++) {
        const uint32_t *row = r->slots + s * R;
        for (int64_t i = 0; i < R; i++) {
            if (row[i] == PLAN_IDLE) continue;
            const plan_microbatch *mb = &r->micro[row[i]];
            double t = t0 + (double)mb->count * bcost[mb->bucket];
            double act = plan_microbatch_bytes(r, mb->count, r->buckets[mb->bucket].shape.tokens);
            load[i] += t;
            mem_time[i] += t * (r->fixed_bytes + act) / cap;
        }
    }
}

static void add_group(const plan_result *r, const double *load, const double *mem_time,
                      double *idle, sim_acc *a)
{
    int64_t R = r->cfg.gpus;
    double mx = 0, mn = INFINITY, sum = 0, sq = 0, ufix = r->fixed_bytes / r->cfg.gpu_mem_bytes;
    for (int64_t i = 0; i < R; i++) {
        if (load[i] > mx) mx = load[i];
        if (load[i] < mn) mn = load[i];
        sum += load[i];
    }
    double mean = sum / (double)R;
    for (int64_t i = 0; i < R; i++) {
        sq += (load[i] - mean) * (load[i] - mean);
        idle[i] += mx - load[i];
        a->vram_time += mem_time[i] + ufix * (mx - load[i]);
    }
    a->sum_max += mx;
    a->sum_gap += mx - mean;
    a->sum_idle += (mx - mean) / mx;
    a->sum_pct += mx / mean - 1.0;
    a->sum_cv += sqrt(sq / (double)R) / mean;
    a->sum_spread += (mx - mn) / mx;
}

/* What each optimizer step sees (plan_metrics: optimizer_steps, opt_*). */
static plan_status optimizer_metrics(plan_result *r, plan_error *err)
{
    plan_metrics *m = &r->metrics;
    int64_t R = r->cfg.gpus, G = r->grad_accum;
    int64_t ng = r->group_first ? r->ngroups : r->steps;
    int64_t per = r->group_first ? 1 : G; /* sync groups per optimizer step */
    uint32_t *seen = calloc((size_t)r->nbuckets + 1, sizeof *seen);
    if (!seen) return plan_fail(err, PLAN_ERR_NOMEM, "out of memory");
    double sum = 0, sq = 0, shapes = 0;
    int64_t n = 0;
    for (int64_t g0 = 0; g0 < ng; g0 += per) {
        int64_t g1 = g0 + per < ng ? g0 + per : ng;
        int64_t s0 = r->group_first ? (int64_t)r->group_first[g0] : g0;
        int64_t s1 = r->group_first ? (int64_t)r->group_first[g1] : g1;
        double smp = 0;
        int64_t distinct = 0;
        n++;
        for (int64_t s = s0; s < s1; s++)
            for (int64_t i = 0; i < R; i++) {
                uint32_t k = r->slots[s * R + i];
                if (k == PLAN_IDLE) continue;
                smp += r->micro[k].count;
                uint32_t b = r->micro[k].bucket;
                if (seen[b] != (uint32_t)n) {
                    seen[b] = (uint32_t)n;
                    distinct++;
                }
            }
        sum += smp;
        sq += smp * smp;
        shapes += (double)distinct;
    }
    free(seen);
    double mean = sum / (double)n, var = sq / (double)n - mean * mean;
    m->optimizer_steps = n;
    m->opt_samples_cv = var > 0 ? sqrt(var) / mean : 0;
    m->opt_distinct_shapes = shapes / (double)n;
    return PLAN_OK;
}

/* The jitter-aware idle and samples/s (plan_metrics). */
static void jitter_metrics(plan_result *r, const double *bcost, double *load)
{
    plan_metrics *m = &r->metrics;
    double cv = r->jitter_cv;
    if (!(cv > 0)) {
        m->jitter_epoch_idle_fraction = m->jitter_samples_per_s = NAN;
        return;
    }
    int64_t R = r->cfg.gpus, ng = r->group_first ? r->ngroups : r->steps;
    double sig = sqrt(log1p(cv * cv)), mu = -0.5 * sig * sig, t0 = r->cost.overhead;
    uint64_t x = r->cfg.seed ^ (0x94D049BB133111EBull * (r->cfg.epoch + 1));
    ada_rng rng;
    ada_rng_seed(&rng, ada_splitmix64(&x));
    double sum_max = 0, sum_gap = 0;
    for (int rep = 0; rep < PLAN_JITTER_REPS; rep++) {
        for (int64_t g = 0; g < ng; g++) {
            int64_t s0 = r->group_first ? (int64_t)r->group_first[g] : g;
            int64_t s1 = r->group_first ? (int64_t)r->group_first[g + 1] : g + 1;
            for (int64_t i = 0; i < R; i++) load[i] = 0;
            for (int64_t s = s0; s < s1; s++)
                for (int64_t i = 0; i < R; i++) {
                    uint32_t k = r->slots[s * R + i];
                    if (k == PLAN_IDLE) continue;
                    const plan_microbatch *mb = &r->micro[k];
                    double t = t0 + (double)mb->count * bcost[mb->bucket];
                    load[i] += t * exp(mu + sig * ada_rng_normal(&rng));
                }
            double mx = 0, sum = 0;
            for (int64_t i = 0; i < R; i++) {
                if (load[i] > mx) mx = load[i];
                sum += load[i];
            }
            sum_max += mx;
            sum_gap += mx - sum / (double)R;
        }
    }
    m->jitter_epoch_idle_fraction = sum_gap / sum_max;
    m->jitter_samples_per_s = (double)r->samples_planned * PLAN_JITTER_REPS / sum_max;
}

static void memory_metrics(plan_result *r)
{
    plan_metrics *m = &r->metrics;
    double cap = r->cfg.gpu_mem_bytes, usum = 0, umax = 0;
    int64_t over = 0;
    for (int64_t k = 0; k < r->nmicro; k++) {
        const plan_microbatch *mb = &r->micro[k];
        int64_t S = r->buckets[mb->bucket].shape.tokens, tok = (int64_t)mb->count * S;
        double act = plan_microbatch_bytes(r, mb->count, S);
        double u = (r->fixed_bytes + act) / cap;
        usum += u;
        if (u > umax) umax = u;
        if (r->bytes_per_sample == 0 && r->bytes_per_token_sq == 0) over += tok > r->m_mem_model;
        else over += act > r->mem_room;
    }
    m->vram_util_mean = usum / (double)r->nmicro;
    m->vram_util_max = umax;
    m->over_memory_microbatches = over;
}

plan_status plan_simulate(plan_result *r, plan_error *err)
{
    int64_t R = r->cfg.gpus;
    size_t bsz = (size_t)r->nbuckets * sizeof(double) + 8, lsz = (size_t)R * 2 * sizeof(double);
    double *bcost = malloc(bsz), *load = malloc(lsz);
    r->rank_idle = calloc((size_t)R, sizeof *r->rank_idle);
    if (!bcost || !load || !r->rank_idle) {
        free(bcost);
        free(load);
        return plan_fail(err, PLAN_ERR_NOMEM, "out of memory");
    }
    double *mem_time = load + R;
    for (int64_t b = 0; b < r->nbuckets; b++)
        bcost[b] = plan_cost_eval(&r->cost, (double)r->buckets[b].shape.tokens);

    sim_acc a;
    memset(&a, 0, sizeof a);
    int64_t ng = r->group_first ? r->ngroups : r->steps;
    for (int64_t g = 0; g < ng; g++) {
        int64_t s0 = r->group_first ? (int64_t)r->group_first[g] : g;
        int64_t s1 = r->group_first ? (int64_t)r->group_first[g + 1] : g + 1;
        group_loads(r, bcost, s0, s1, load, mem_time);
        add_group(r, load, mem_time, r->rank_idle, &a);
    }
    plan_metrics *m = &r->metrics;
    double n = (double)ng;
    m->sync_groups = ng;
    m->epoch_idle_fraction = a.sum_gap / a.sum_max;
    m->mean_step_idle_fraction = a.sum_idle / n;
    m->max_over_mean_minus_1 = a.sum_pct / n;
    m->cv = a.sum_cv / n;
    m->spread = a.sum_spread / n;
    m->epoch_seconds = a.sum_max;
    m->samples_per_s = (double)r->samples_planned / a.sum_max;
    m->tokens_per_s = (double)r->tokens_planned / a.sum_max;
    m->vram_time_mean = a.vram_time / ((double)R * a.sum_max);
    m->rank_idle_min = INFINITY;
    m->rank_idle_max = 0;
    for (int64_t i = 0; i < R; i++) {
        r->rank_idle[i] /= a.sum_max;
        if (r->rank_idle[i] < m->rank_idle_min) m->rank_idle_min = r->rank_idle[i];
        if (r->rank_idle[i] > m->rank_idle_max) m->rank_idle_max = r->rank_idle[i];
    }
    memory_metrics(r);
    jitter_metrics(r, bcost, load);
    free(bcost);
    free(load);
    return optimizer_metrics(r, err);
}
