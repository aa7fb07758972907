/* plan_print.c -- the planner's human tables on a FILE: one plan with its baselines, or two
 * plans side by side. Warnings are printed by the caller (they go to stderr).
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ada_util.h"
#include "plan_internal.h"

#define GIB 1073741824.0

/* The buckets shown: all of them up to 40; beyond, the 40 with the most samples (ties: the
 * smaller token count), still listed in token order. */
#define SHOW_MAX 40
static int64_t pick_shown(const plan_result *r, unsigned char *show)
{
    int64_t nb = r->nbuckets;
    if (nb <= SHOW_MAX) {
        memset(show, 1, (size_t)nb);
        return nb;
    }
    memset(show, 0, (size_t)nb);
    for (int k = 0; k < SHOW_MAX; k++) {
        int64_t best = -1;
        for (int64_t b = 0; b < nb; b++)
            if (!show[b] && (best < 0 || r->buckets[b].shape.samples > r->buckets[best].shape.samples))
                best = b;
        show[best] = 1;
    }
    return SHOW_MAX;
}

static void print_header(FILE *f, const plan_result *r, const char *policy)
{
    const plan_cost *c = &r->cost;
    /* Names from input files are printed with their control bytes escaped (no terminal
     * escape sequence from a model file or a manifest name reaches the terminal). */
    char man[512], model[512], gpu[512];
    ada_escape(r->manifest[0] ? r->manifest : "(unnamed)", man, sizeof man);
    ada_escape(r->model, model, sizeof model);
    ada_escape(r->gpu[0] ? r->gpu : "GPU", gpu, sizeof gpu);
    fprintf(f, "manifest   %s: %" PRId64 " samples in %" PRId64 " buckets; %" PRId64 " planned, %" PRId64
               " dropped (coverage %.4f)\n",
            man, r->samples_total, r->nbuckets, r->samples_planned,
            r->samples_dropped, (double)r->samples_planned / (double)r->samples_total);
    fprintf(f, "cluster    model %s, %" PRId64 " x %s (%.4g GiB, margin %.3g); policy %s, assign %s",
            model, r->cfg.gpus, gpu, r->cfg.gpu_mem_bytes / GIB, r->cfg.mem_margin,
            policy, plan_assign_name(r->cfg.assign));
    if (plan_assign_windowed(r->cfg.assign)) fprintf(f, ", window %" PRId64 " steps", r->cfg.window);
    fprintf(f, ", seed %" PRIu64 "\n", r->cfg.seed);
    if (plan_assign_per_window(r->cfg.assign))
        fprintf(f, "ranks      synchronize once per window (DDP with no_sync): they run different "
                   "numbers of micro-batches\n");
    fprintf(f, "memory     fixed %.2f GiB + %" PRId64 " B/token (%s, %s) -> M_mem %" PRId64 " tokens%s\n",
            r->fixed_bytes / GIB, r->bytes_per_token, r->bpt_from_profile ? "profile" : r->act,
            r->act_measured ? "measured" : "estimated, not yet measured", r->m_mem_tokens,
            r->cfg.mem_tokens > 0 ? " (given)" : "");
    if (r->bytes_per_sample > 0 || r->bytes_per_token_sq > 0)
        fprintf(f, "           + %.4g B/sample + %.4g B/token^2 per sample (profile)\n", r->bytes_per_sample,
                r->bytes_per_token_sq);
    fprintf(f, "states     %s%s\n", plan_parallel_name(r->parallel),
            r->unsharded_grads ? ", gradients unsharded (lpt/kk accumulate without a sync)" : "");
    if (r->cost.range_batch_max)
        fprintf(f, "range      measured: %" PRId64 "..%" PRId64 " tokens per sample, batch <= %" PRId64
                   ", <= %" PRId64 " tokens per micro-batch (%s outside)\n",
                r->cost.range_s_min, r->cost.range_s_max, r->cost.range_batch_max, r->cost.range_tokens_max,
                r->cfg.extrapolate ? "extrapolated" : "clamped");
    if (c->from_profile)
        fprintf(f, "cost       measured profile (%" PRId64 " points, least squares): ", c->profile_points);
    else
        fprintf(f, "cost       FLOP model at %.4g TFLOP/s per GPU: ", r->cfg.flops / 1e12);
    fprintf(f, "C(S) = %.4g*S + %.4g*S^2 + %.4g s", c->alpha, c->beta, c->gamma);
    if (c->overhead > 0) fprintf(f, ", + %.4g s per micro-batch", c->overhead);
    fprintf(f, "\n");
    if (r->cfg.comp_model == PLAN_COMP_POWER)
        fprintf(f, "compute    B*S^p <= M_comp = %.6g, p %.4f (%s)", r->m_comp, r->p,
                r->p_auto ? "auto: log-space least squares over the dataset's tokens" : "given");
    else
        fprintf(f, "compute    B*C(S) <= M_comp = %.6g s", r->m_comp);
    if (r->cfg.comp_budget > 0) fprintf(f, " (given)\n");
    else
        fprintf(f, " (%" PRId64 " x the p%g sample of %" PRId64 " tokens)\n", r->b_ref, r->cfg.comp_ref_pct,
                r->s_ref);
    fprintf(f, "tokens     %" PRId64 " .. %" PRId64 " per sample; equal-token M_tok %" PRId64 "%s\n", r->smin,
            r->smax, r->m_tok, r->cfg.tok_budget > 0 ? " (given)" : " (longest sample)");
    fprintf(f, "binding    memory %" PRId64 ", compute %" PRId64 ", tokens %" PRId64 ", floor %" PRId64
               ", range %" PRId64 " buckets\n",
            r->n_bind[PLAN_BIND_MEMORY], r->n_bind[PLAN_BIND_COMPUTE], r->n_bind[PLAN_BIND_TOKENS],
            r->n_bind[PLAN_BIND_FLOOR], r->n_bind[PLAN_BIND_RANGE]);
}

static void print_buckets(FILE *f, const plan_result *r)
{
    unsigned char show[SHOW_MAX + 1];
    unsigned char *sh = r->nbuckets <= SHOW_MAX ? show : malloc((size_t)r->nbuckets);
    if (!sh) return;
    int64_t shown = pick_shown(r, sh);
    fprintf(f, "\n frames height  width   tokens  samples  batch  binding   b_mem  b_comp  micro  mb_seconds\n");
    for (int64_t b = 0; b < r->nbuckets; b++) {
        const plan_bucket *k = &r->buckets[b];
        if (!sh[b]) continue;
        fprintf(f, " %6" PRId64 " %6" PRId64 " %6" PRId64 " %8" PRId64 " %8" PRId64, k->shape.frames,
                k->shape.height, k->shape.width, k->shape.tokens, k->shape.samples);
        if (k->dropped) {
            fprintf(f, "  dropped: over M_mem\n");
            continue;
        }
        fprintf(f, " %6" PRId64 "  %-8s %6" PRId64, k->batch_size, plan_binding_name(k->binding), k->b_mem);
        if (k->b_comp >= 0) fprintf(f, " %7" PRId64, k->b_comp);
        else fprintf(f, " %7s", "-");
        double c = r->cost.overhead + (double)k->batch_size * plan_cost_eval(&r->cost, (double)k->shape.tokens);
        fprintf(f, " %6" PRId64 " %11.4g\n", k->microbatches, c);
    }
    if (shown < r->nbuckets)
        fprintf(f, " ... %" PRId64 " smaller buckets not shown (all are in --summary-json)\n", r->nbuckets - shown);
    if (sh != show) free(sh);
}

/* One metric row over up to 1 + PLAN_NBASE plans. */
static void metric_row(FILE *f, const char *name, const plan_result *const *p, int n, size_t off, const char *fmt)
{
    fprintf(f, "  %-26s", name);
    for (int i = 0; i < n; i++) {
        char x[32];
        double v = *(const double *)((const char *)&p[i]->metrics + off);
        snprintf(x, sizeof x, fmt, v);
        fprintf(f, " %14s", x);
    }
    fprintf(f, "\n");
}

#define M(field) offsetof(plan_metrics, field)

void plan_print_summary(FILE *f, const plan_result *r, const plan_baselines *bl)
{
    print_header(f, r, plan_policy_name(r->cfg.policy));
    print_buckets(f, r);
    const plan_result *p[1 + PLAN_NBASE] = {r};
    int n = 1;
    for (int k = 0; bl && k < PLAN_NBASE; k++)
        if (bl->r[k]) p[n++] = bl->r[k];
    fprintf(f, "\n%" PRId64 " micro-batches (%" PRId64 " tails) in %" PRId64 " steps of %" PRId64
               " ranks, %" PRId64 " sync groups\n",
            r->nmicro, r->tail_microbatches, r->steps, r->cfg.gpus, r->metrics.sync_groups);
    fprintf(f, "\n  %-26s %14s", "metric", "this plan");
    static const char *const head[PLAN_NBASE][2] = {
        {"eq-tok S_max", "random"}, {"eq-tok M_mem", "random"}, {"same policy", "random"},
        {"eq-tok M_mem", "verl-kk"}, {"eq-tok M_mem", "sort-by-length"}};
    for (int k = 0; bl && k < PLAN_NBASE; k++)
        if (bl->r[k]) fprintf(f, " %14s", head[k][0]);
    fprintf(f, "\n  %-26s %14s", "", plan_assign_name(r->cfg.assign));
    for (int k = 0; bl && k < PLAN_NBASE; k++)
        if (bl->r[k]) fprintf(f, " %14s", head[k][1]);
    fprintf(f, "\n");
    metric_row(f, "epoch idle fraction", p, n, M(epoch_idle_fraction), "%.4f");
    metric_row(f, "mean step idle fraction", p, n, M(mean_step_idle_fraction), "%.4f");
    metric_row(f, "max/mean - 1", p, n, M(max_over_mean_minus_1), "%.4f");
    metric_row(f, "coefficient of variation", p, n, M(cv), "%.4f");
    metric_row(f, "spread (max - min)/max", p, n, M(spread), "%.4f");
    metric_row(f, "rank idle min", p, n, M(rank_idle_min), "%.4f");
    metric_row(f, "rank idle max", p, n, M(rank_idle_max), "%.4f");
    metric_row(f, "VRAM util mean (per mb)", p, n, M(vram_util_mean), "%.4f");
    metric_row(f, "VRAM util time-weighted", p, n, M(vram_time_mean), "%.4f");
    metric_row(f, "VRAM util peak", p, n, M(vram_util_max), "%.4f");
    fprintf(f, "  %-26s", "micro-batches over memory");
    for (int i = 0; i < n; i++) fprintf(f, " %14" PRId64, p[i]->metrics.over_memory_microbatches);
    fprintf(f, "\n");
    metric_row(f, "samples/s", p, n, M(samples_per_s), "%.4g");
    metric_row(f, "tokens/s", p, n, M(tokens_per_s), "%.4g");
    metric_row(f, "epoch time (s)", p, n, M(epoch_seconds), "%.4g");
    if (r->jitter_cv > 0) {
        char name[64];
        snprintf(name, sizeof name, "idle, jitter cv %.3g", r->jitter_cv);
        metric_row(f, name, p, n, M(jitter_epoch_idle_fraction), "%.4f");
        metric_row(f, "samples/s, jitter", p, n, M(jitter_samples_per_s), "%.4g");
    }
    if (n > 1) {
        fprintf(f, "  %-26s %14s", "samples/s vs this plan", "1");
        for (int i = 1; i < n; i++) fprintf(f, " %14.4f", p[i]->metrics.samples_per_s / r->metrics.samples_per_s);
        fprintf(f, "\n");
    }
    fprintf(f, "  %-26s", "optimizer step samples CV");
    for (int i = 0; i < n; i++) fprintf(f, " %14.4f", p[i]->metrics.opt_samples_cv);
    fprintf(f, "\n  %-26s", "shapes per optimizer step");
    for (int i = 0; i < n; i++) fprintf(f, " %14.3g", p[i]->metrics.opt_distinct_shapes);
    fprintf(f, "\n");
    if (bl && bl->r[PLAN_BASE_RANDOM] && r->cfg.assign == PLAN_ASSIGN_SORTED_WINDOW && r->cfg.window > r->grad_accum)
        fprintf(f, "\noptimizer steps: every %" PRId64 " step(s) (--grad-accum), the window is %" PRId64
                   ": reordering changes what each optimizer step sees (samples CV %.3g -> %.3g, shapes "
                   "per step %.3g -> %.3g against the random order); --grad-accum %" PRId64
                   " (or --window %" PRId64 ") keeps them\n",
                r->grad_accum, r->cfg.window, bl->r[PLAN_BASE_RANDOM]->metrics.opt_samples_cv,
                r->metrics.opt_samples_cv, bl->r[PLAN_BASE_RANDOM]->metrics.opt_distinct_shapes,
                r->metrics.opt_distinct_shapes, r->cfg.window, r->grad_accum);
    int best = plan_baseline_strongest(bl);
    if (best >= 0) {
        const plan_metrics *q = &bl->r[best]->metrics;
        fprintf(f, "\nheadline: %.4fx the samples/s of the strongest baseline (%s; idle %.4f vs %.4f)",
                r->metrics.samples_per_s / q->samples_per_s, plan_baseline_name(best),
                r->metrics.epoch_idle_fraction, q->epoch_idle_fraction);
        if (r->jitter_cv > 0)
            fprintf(f, "; under jitter cv %.3g: %.4fx (idle %.4f vs %.4f)", r->jitter_cv,
                    r->metrics.jitter_samples_per_s / q->jitter_samples_per_s,
                    r->metrics.jitter_epoch_idle_fraction, q->jitter_epoch_idle_fraction);
        fprintf(f, "\n");
    }
}

static void row2(FILE *f, const char *name, double a, double b, const char *fmt)
{
    char x[32], y[32], d[32] = "";
    snprintf(x, sizeof x, fmt, a);
    snprintf(y, sizeof y, fmt, b);
    if (a != 0) snprintf(d, sizeof d, "%+.1f%%", 100.0 * (b - a) / fabs(a));
    fprintf(f, "  %-26s %14s %14s %10s\n", name, x, y, d);
}

void plan_print_side_by_side(FILE *f, const plan_result *a, const plan_result *b)
{
    char both[64];
    snprintf(both, sizeof both, "%s vs %s", plan_policy_name(a->cfg.policy), plan_policy_name(b->cfg.policy));
    print_header(f, b, both);
    unsigned char show[SHOW_MAX + 1];
    unsigned char *sh = a->nbuckets <= SHOW_MAX ? show : malloc((size_t)a->nbuckets);
    if (!sh) return;
    int64_t shown = pick_shown(a, sh);
    fprintf(f, "\n                                           %-17s %s\n", plan_policy_name(a->cfg.policy),
            plan_policy_name(b->cfg.policy));
    fprintf(f, " frames height  width   tokens  samples  batch  binding   batch  binding\n");
    for (int64_t i = 0; i < a->nbuckets; i++) {
        if (!sh[i]) continue;
        const plan_bucket *x = &a->buckets[i], *y = &b->buckets[i];
        fprintf(f, " %6" PRId64 " %6" PRId64 " %6" PRId64 " %8" PRId64 " %8" PRId64, x->shape.frames,
                x->shape.height, x->shape.width, x->shape.tokens, x->shape.samples);
        if (x->dropped) fprintf(f, "  %-15s", "dropped");
        else fprintf(f, " %6" PRId64 "  %-8s", x->batch_size, plan_binding_name(x->binding));
        if (y->dropped) fprintf(f, "  dropped\n");
        else fprintf(f, " %6" PRId64 "  %s\n", y->batch_size, plan_binding_name(y->binding));
    }
    if (shown < a->nbuckets)
        fprintf(f, " ... %" PRId64 " smaller buckets not shown\n", a->nbuckets - shown);
    if (sh != show) free(sh);
    const plan_metrics *p = &a->metrics, *q = &b->metrics;
    fprintf(f, "\n  %-26s %14s %14s %10s\n", "metric", plan_policy_name(a->cfg.policy),
            plan_policy_name(b->cfg.policy), "change");
    row2(f, "micro-batches", (double)a->nmicro, (double)b->nmicro, "%.0f");
    row2(f, "steps", (double)a->steps, (double)b->steps, "%.0f");
    row2(f, "epoch idle fraction", p->epoch_idle_fraction, q->epoch_idle_fraction, "%.4f");
    row2(f, "mean step idle fraction", p->mean_step_idle_fraction, q->mean_step_idle_fraction, "%.4f");
    row2(f, "max/mean - 1", p->max_over_mean_minus_1, q->max_over_mean_minus_1, "%.4f");
    row2(f, "coefficient of variation", p->cv, q->cv, "%.4f");
    row2(f, "spread (max - min)/max", p->spread, q->spread, "%.4f");
    row2(f, "VRAM utilization mean", p->vram_util_mean, q->vram_util_mean, "%.4f");
    row2(f, "VRAM util time-weighted", p->vram_time_mean, q->vram_time_mean, "%.4f");
    row2(f, "VRAM utilization max", p->vram_util_max, q->vram_util_max, "%.4f");
    row2(f, "micro-batches over memory", (double)p->over_memory_microbatches, (double)q->over_memory_microbatches, "%.0f");
    row2(f, "samples/s", p->samples_per_s, q->samples_per_s, "%.4g");
    row2(f, "tokens/s", p->tokens_per_s, q->tokens_per_s, "%.4g");
    row2(f, "epoch time (s)", p->epoch_seconds, q->epoch_seconds, "%.4g");
}
