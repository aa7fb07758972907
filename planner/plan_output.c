/* plan_output.c -- the planner's outputs: the summary JSON (fixed key order; the caller dumps
 * it with JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)), the human tables on stdout (one plan,
 * or two plans side by side) and the plan itself, one JSON line per step, streamed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

#define GIB 1073741824.0

static json_t *metrics_json(const plan_metrics *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "epoch_idle_fraction", json_real(m->epoch_idle_fraction));
    json_object_set_new(o, "mean_step_idle_fraction", json_real(m->mean_step_idle_fraction));
    json_object_set_new(o, "max_over_mean_minus_1", json_real(m->max_over_mean_minus_1));
    json_object_set_new(o, "cv", json_real(m->cv));
    json_object_set_new(o, "spread", json_real(m->spread));
    json_object_set_new(o, "vram_util_mean", json_real(m->vram_util_mean));
    json_object_set_new(o, "vram_util_max", json_real(m->vram_util_max));
    json_object_set_new(o, "over_memory_microbatches", json_integer(m->over_memory_microbatches));
    json_object_set_new(o, "samples_per_s", json_real(m->samples_per_s));
    json_object_set_new(o, "tokens_per_s", json_real(m->tokens_per_s));
    json_object_set_new(o, "epoch_seconds", json_real(m->epoch_seconds));
    return o;
}

json_t *plan_summary_json(const plan_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "policy", json_string(plan_policy_name(r->cfg.policy)));
    json_object_set_new(o, "assign", json_string(plan_assign_name(r->cfg.assign)));
    json_object_set_new(o, "model", json_string(r->model));
    json_object_set_new(o, "manifest", json_string(r->manifest));
    json_object_set_new(o, "gpus", json_integer(r->cfg.gpus));
    json_object_set_new(o, "seed", json_integer((json_int_t)r->cfg.seed));
    json_object_set_new(o, "gpu_mem_bytes", json_integer((json_int_t)llround(r->cfg.gpu_mem_bytes)));
    json_object_set_new(o, "p", json_real(r->p));
    json_object_set_new(o, "p_auto", json_boolean(r->p_auto));
    json_object_set_new(o, "m_mem_tokens", json_integer(r->m_mem_tokens));
    json_object_set_new(o, "m_tok", json_integer(r->m_tok));
    json_object_set_new(o, "m_comp", json_real(r->m_comp));

    json_t *mem = json_object();
    json_object_set_new(mem, "fixed_bytes", json_integer((json_int_t)llround(r->fixed_bytes)));
    json_object_set_new(mem, "bytes_per_token", json_integer(r->bytes_per_token));
    json_object_set_new(o, "memory_model", mem);

    json_t *cost = json_object();
    json_object_set_new(cost, "source", json_string(r->cost.from_profile ? "profile" : "flops"));
    json_object_set_new(cost, "flops", r->cost.from_profile ? json_null() : json_real(r->cfg.flops));
    json_object_set_new(cost, "alpha", json_real(r->cost.alpha));
    json_object_set_new(cost, "beta", json_real(r->cost.beta));
    json_object_set_new(cost, "gamma", json_real(r->cost.gamma));
    json_object_set_new(o, "cost_model", cost);

    json_t *smp = json_object();
    json_object_set_new(smp, "total", json_integer(r->samples_total));
    json_object_set_new(smp, "planned", json_integer(r->samples_planned));
    json_object_set_new(smp, "dropped", json_integer(r->samples_dropped));
    json_object_set_new(smp, "coverage", json_real((double)r->samples_planned / (double)r->samples_total));
    json_object_set_new(o, "samples", smp);

    json_t *bks = json_array();
    for (int64_t b = 0; b < r->nbuckets; b++) {
        const plan_bucket *k = &r->buckets[b];
        json_t *e = json_object();
        json_object_set_new(e, "frames", json_integer(k->shape.frames));
        json_object_set_new(e, "height", json_integer(k->shape.height));
        json_object_set_new(e, "width", json_integer(k->shape.width));
        json_object_set_new(e, "tokens", json_integer(k->shape.tokens));
        json_object_set_new(e, "samples", json_integer(k->shape.samples));
        json_object_set_new(e, "batch_size", json_integer(k->dropped ? 0 : k->batch_size));
        json_object_set_new(e, "binding", json_string(plan_binding_name(k->dropped ? PLAN_BIND_MEMORY : k->binding)));
        json_object_set_new(e, "b_mem", json_integer(k->dropped ? 0 : k->b_mem));
        json_object_set_new(e, "b_comp", k->b_comp < 0 || k->dropped ? json_null() : json_integer(k->b_comp));
        json_object_set_new(e, "microbatches", json_integer(k->dropped ? 0 : k->microbatches));
        json_object_set_new(e, "dropped", json_boolean(k->dropped));
        json_array_append_new(bks, e);
    }
    json_object_set_new(o, "buckets", bks);
    json_object_set_new(o, "microbatches", json_integer(r->nmicro));
    json_object_set_new(o, "tail_microbatches", json_integer(r->tail_microbatches));
    json_object_set_new(o, "steps", json_integer(r->steps));
    json_object_set_new(o, "metrics", metrics_json(&r->metrics));
    return o;
}

/* ---- human tables ---------------------------------------------------------------------- */

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
    fprintf(f, "manifest   %s: %" PRId64 " samples in %" PRId64 " buckets; %" PRId64 " planned, %" PRId64
               " dropped (coverage %.4f)\n",
            r->manifest[0] ? r->manifest : "(unnamed)", r->samples_total, r->nbuckets, r->samples_planned,
            r->samples_dropped, (double)r->samples_planned / (double)r->samples_total);
    fprintf(f, "cluster    model %s, %" PRId64 " GPUs x %.4g GiB; policy %s, assign %s, seed %" PRIu64 "\n",
            r->model, r->cfg.gpus, r->cfg.gpu_mem_bytes / GIB, policy, plan_assign_name(r->cfg.assign),
            r->cfg.seed);
    fprintf(f, "memory     fixed %.2f GiB per GPU + %" PRId64 " B per token -> M_mem %" PRId64 " tokens%s\n",
            r->fixed_bytes / GIB, r->bytes_per_token, r->m_mem_tokens,
            r->cfg.mem_tokens > 0 ? " (given)" : "");
    if (c->from_profile)
        fprintf(f, "cost       measured profile (%" PRId64 " points, least squares): ", c->profile_points);
    else
        fprintf(f, "cost       FLOP model at %.4g TFLOP/s per GPU: ", r->cfg.flops / 1e12);
    fprintf(f, "C(S) = %.4g*S + %.4g*S^2 + %.4g s\n", c->alpha, c->beta, c->gamma);
    fprintf(f, "budgets    p %.4f (%s), M_comp %.6g%s, M_tok %" PRId64 " tokens%s\n", r->p,
            r->p_auto ? "auto: log-space least squares over the dataset's tokens" : "given", r->m_comp,
            r->cfg.comp_budget > 0 ? " (given)" : " (longest sample's S^p)", r->m_tok,
            r->cfg.tok_budget > 0 ? " (given)" : " (longest sample)");
    fprintf(f, "tokens     %" PRId64 " .. %" PRId64 " per sample\n", r->smin, r->smax);
}

void plan_print_summary(FILE *f, const plan_result *r)
{
    print_header(f, r, plan_policy_name(r->cfg.policy));
    unsigned char show[SHOW_MAX + 1];
    unsigned char *sh = r->nbuckets <= SHOW_MAX ? show : malloc((size_t)r->nbuckets);
    if (!sh) return;
    int64_t shown = pick_shown(r, sh);
    fprintf(f, "\n frames height  width   tokens  samples  batch  binding   b_mem  b_comp  micro\n");
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
        fprintf(f, " %6" PRId64 "\n", k->microbatches);
    }
    if (shown < r->nbuckets)
        fprintf(f, " ... %" PRId64 " smaller buckets not shown (all are in --summary-json)\n", r->nbuckets - shown);
    if (sh != show) free(sh);
    const plan_metrics *m = &r->metrics;
    fprintf(f, "\n%" PRId64 " micro-batches (%" PRId64 " tails) in %" PRId64 " steps of %" PRId64 " ranks\n", r->nmicro,
            r->tail_microbatches, r->steps, r->cfg.gpus);
    fprintf(f, "  epoch idle fraction       %10.4f   (primary: sum(max - mean) / sum(max))\n", m->epoch_idle_fraction);
    fprintf(f, "  mean step idle fraction   %10.4f\n", m->mean_step_idle_fraction);
    fprintf(f, "  max/mean - 1              %10.4f\n", m->max_over_mean_minus_1);
    fprintf(f, "  coefficient of variation  %10.4f\n", m->cv);
    fprintf(f, "  spread (max - min)/max    %10.4f\n", m->spread);
    fprintf(f, "  VRAM utilization mean     %10.4f\n", m->vram_util_mean);
    fprintf(f, "  VRAM utilization max      %10.4f\n", m->vram_util_max);
    fprintf(f, "  micro-batches over memory %10" PRId64 "\n", m->over_memory_microbatches);
    fprintf(f, "  samples/s                 %10.4g\n", m->samples_per_s);
    fprintf(f, "  tokens/s                  %10.4g\n", m->tokens_per_s);
    fprintf(f, "  epoch time (s)            %10.4g\n", m->epoch_seconds);
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
    row2(f, "VRAM utilization max", p->vram_util_max, q->vram_util_max, "%.4f");
    row2(f, "micro-batches over memory", (double)p->over_memory_microbatches, (double)q->over_memory_microbatches, "%.0f");
    row2(f, "samples/s", p->samples_per_s, q->samples_per_s, "%.4g");
    row2(f, "tokens/s", p->tokens_per_s, q->tokens_per_s, "%.4g");
    row2(f, "epoch time (s)", p->epoch_seconds, q->epoch_seconds, "%.4g");
}

/* ---- the plan -------------------------------------------------------------------------- */

/* The plan is written through a small line buffer with hand-made number formatting: at 10 M
 * samples, one fprintf per id would dominate the run. */
typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} line_buf;

static void lb_put(line_buf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t ncap = b->cap ? 2 * b->cap : 4096;
        while (ncap < b->n + n) ncap *= 2;
        char *np = realloc(b->p, ncap);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void lb_str(line_buf *b, const char *s) { lb_put(b, s, strlen(s)); }

static void lb_u64(line_buf *b, uint64_t v)
{
    char t[24];
    int i = 24;
    do {
        t[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    lb_put(b, t + i, (size_t)(24 - i));
}

/* A JSON string: quotes, backslashes and control bytes escaped; other bytes as they are. */
static void lb_json_string(line_buf *b, const char *s)
{
    lb_put(b, "\"", 1);
    const char *run = s;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p != '"' && *p != '\\' && *p >= 0x20) continue;
        lb_put(b, run, (size_t)((const char *)p - run));
        char esc[8];
        if (*p == '"' || *p == '\\') snprintf(esc, sizeof esc, "\\%c", *p);
        else snprintf(esc, sizeof esc, "\\u%04x", *p);
        lb_str(b, esc);
        run = (const char *)p + 1;
    }
    lb_str(b, run);
    lb_put(b, "\"", 1);
}

plan_status plan_write_plan(const plan_result *r, const plan_manifest *mf, FILE *f)
{
    if (!mf->ids_kept) return PLAN_ERR_USAGE;
    int64_t R = r->cfg.gpus;
    line_buf b = {NULL, 0, 0, 0};
    char num[40];
    plan_status st = PLAN_OK;
    for (int64_t s = 0; s < r->steps && st == PLAN_OK; s++) {
        b.n = 0;
        lb_str(&b, "{\"step\":");
        lb_u64(&b, (uint64_t)s);
        lb_str(&b, ",\"ranks\":[");
        for (int64_t i = 0; i < R; i++) {
            uint32_t k = r->slots[s * R + i];
            lb_str(&b, i ? ",{\"rank\":" : "{\"rank\":");
            lb_u64(&b, (uint64_t)i);
            if (k == PLAN_IDLE) {
                lb_str(&b, ",\"bucket\":null,\"cost\":0,\"ids\":[]}");
                continue;
            }
            const plan_microbatch *mb = &r->micro[k];
            lb_str(&b, ",\"bucket\":");
            lb_u64(&b, mb->bucket);
            snprintf(num, sizeof num, ",\"cost\":%.9g,\"ids\":[", plan_microbatch_cost(r, k));
            lb_str(&b, num);
            for (uint32_t j = 0; j < mb->count; j++) {
                uint32_t smp = r->order[mb->start + j];
                if (j) lb_put(&b, ",", 1);
                if (mf->ids_are_lines) lb_u64(&b, mf->id_off[smp]);
                else lb_json_string(&b, mf->arena + mf->id_off[smp]);
            }
            lb_str(&b, "]}");
        }
        lb_str(&b, "]}\n");
        if (b.oom) st = PLAN_ERR_NOMEM;
        else if (fwrite(b.p, 1, b.n, f) != b.n) st = PLAN_ERR_WRITE;
    }
    free(b.p);
    if (st == PLAN_OK && ferror(f)) st = PLAN_ERR_WRITE;
    return st;
}
