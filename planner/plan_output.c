/* plan_output.c -- the planner's machine outputs: the summary JSON (fixed key order; the
 * caller dumps it with JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) and the plan itself, one
 * JSON line per step, streamed. (Human tables: plan_print.c.)
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

/* A JSON string of text that may not be valid UTF-8 (a file name): invalid bytes become
 * U+FFFD, so the key is never lost (jansson refuses invalid UTF-8). */
static json_t *json_text(const char *s)
{
    size_t n = strlen(s);
    if (plan_utf8_valid(s, n)) return json_string(s);
    char *t = malloc(3 * n + 1);
    if (!t) return json_string("?");
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = plan_utf8_char(s + i, n - i);
        if (k) {
            memcpy(t + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(t + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    t[o] = '\0';
    json_t *j = json_string(t);
    free(t);
    return j;
}

static json_t *metrics_json(const plan_result *r, int with_ranks)
{
    const plan_metrics *m = &r->metrics;
    json_t *o = json_object();
    json_object_set_new(o, "epoch_idle_fraction", json_real(m->epoch_idle_fraction));
    json_object_set_new(o, "mean_step_idle_fraction", json_real(m->mean_step_idle_fraction));
    json_object_set_new(o, "max_over_mean_minus_1", json_real(m->max_over_mean_minus_1));
    json_object_set_new(o, "cv", json_real(m->cv));
    json_object_set_new(o, "spread", json_real(m->spread));
    json_object_set_new(o, "rank_idle_min", json_real(m->rank_idle_min));
    json_object_set_new(o, "rank_idle_max", json_real(m->rank_idle_max));
    json_object_set_new(o, "vram_util_mean", json_real(m->vram_util_mean));
    json_object_set_new(o, "vram_util_max", json_real(m->vram_util_max));
    json_object_set_new(o, "vram_time_mean", json_real(m->vram_time_mean));
    json_object_set_new(o, "over_memory_microbatches", json_integer(m->over_memory_microbatches));
    json_object_set_new(o, "samples_per_s", json_real(m->samples_per_s));
    json_object_set_new(o, "tokens_per_s", json_real(m->tokens_per_s));
    json_object_set_new(o, "epoch_seconds", json_real(m->epoch_seconds));
    json_object_set_new(o, "sync_groups", json_integer(m->sync_groups));
    int jit = r->jitter_cv > 0;
    json_object_set_new(o, "jitter_epoch_idle_fraction", jit ? json_real(m->jitter_epoch_idle_fraction) : json_null());
    json_object_set_new(o, "jitter_samples_per_s", jit ? json_real(m->jitter_samples_per_s) : json_null());
    json_object_set_new(o, "optimizer_steps", json_integer(m->optimizer_steps));
    json_object_set_new(o, "optimizer_step_samples_cv", json_real(m->opt_samples_cv));
    json_object_set_new(o, "optimizer_step_distinct_shapes", json_real(m->opt_distinct_shapes));
    if (with_ranks) {
        json_t *a = json_array();
        for (int64_t i = 0; i < r->cfg.gpus; i++) json_array_append_new(a, json_real(r->rank_idle[i]));
        json_object_set_new(o, "rank_idle", a);
    }
    return o;
}

static json_t *buckets_json(const plan_result *r)
{
    json_t *bks = json_array();
    for (int64_t b = 0; b < r->nbuckets; b++) {
        const plan_bucket *k = &r->buckets[b];
        json_t *e = json_object();
        json_object_set_new(e, "frames", json_integer(k->shape.frames));
        json_object_set_new(e, "height", json_integer(k->shape.height));
        json_object_set_new(e, "width", json_integer(k->shape.width));
        json_object_set_new(e, "tokens", json_integer(k->shape.tokens));
        json_object_set_new(e, "samples", json_integer(k->shape.samples));
        json_object_set_new(e, "dropped", json_boolean(k->dropped));
        if (k->dropped) {
            json_array_append_new(bks, e);
            continue;
        }
        json_object_set_new(e, "batch_size", json_integer(k->batch_size));
        json_object_set_new(e, "binding", json_string(plan_binding_name(k->binding)));
        json_object_set_new(e, "b_mem", json_integer(k->b_mem));
        json_object_set_new(e, "b_comp", k->b_comp < 0 ? json_null() : json_integer(k->b_comp));
        json_object_set_new(e, "b_tok", k->b_tok < 0 ? json_null() : json_integer(k->b_tok));
        double c = plan_cost_eval(&r->cost, (double)k->shape.tokens) * (double)k->batch_size;
        json_object_set_new(e, "microbatch_seconds", json_real(r->cost.overhead + c));
        json_object_set_new(e, "batch_efficiency", json_real(c / (r->cost.overhead + c)));
        json_object_set_new(e, "microbatches", json_integer(k->microbatches));
        json_array_append_new(bks, e);
    }
    return bks;
}

static json_t *setup_json(const plan_result *r)
{
    json_t *o = json_object();
    json_t *g = json_object();
    const plan_gpu *gp = r->gpu[0] ? plan_gpu_find(r->gpu) : NULL;
    json_object_set_new(g, "preset", r->gpu[0] ? json_string(r->gpu) : json_null());
    json_object_set_new(g, "capacity_bytes", json_integer((json_int_t)llround(r->cfg.gpu_mem_bytes)));
    json_object_set_new(g, "margin", json_real(r->cfg.mem_margin));
    json_object_set_new(g, "usable_bytes", json_integer((json_int_t)llround(r->mem_usable)));
    json_object_set_new(g, "source", gp ? json_string(gp->source) : json_string("--gpu-mem-gib"));
    json_object_set_new(o, "gpu", g);

    json_t *mem = json_object();
    json_object_set_new(mem, "fixed_bytes", json_integer((json_int_t)llround(r->fixed_bytes)));
    json_object_set_new(mem, "activation_setup", json_string(r->act));
    json_object_set_new(mem, "bytes_per_token", json_integer(r->bytes_per_token));
    json_object_set_new(mem, "bytes_per_token_status",
                        json_string(r->bpt_from_profile ? "measured (profile)"
                                    : r->act_measured ? "measured" : "estimated, not yet measured"));
    json_object_set_new(mem, "m_mem_model", json_integer(r->m_mem_model));
    json_object_set_new(mem, "bytes_per_sample", json_real(r->bytes_per_sample));
    json_object_set_new(mem, "bytes_per_token_sq", json_real(r->bytes_per_token_sq));
    json_object_set_new(mem, "parallel", json_string(plan_parallel_name(r->parallel)));
    json_object_set_new(mem, "unsharded_grads", json_boolean(r->unsharded_grads));
    const plan_cost *pc = &r->cost;
    if (pc->range_batch_max) {
        json_t *rg = json_object();
        json_object_set_new(rg, "tokens_min", json_integer(pc->range_s_min));
        json_object_set_new(rg, "tokens_max", json_integer(pc->range_s_max));
        json_object_set_new(rg, "batch_max", json_integer(pc->range_batch_max));
        json_object_set_new(rg, "microbatch_tokens_max", json_integer(pc->range_tokens_max));
        json_object_set_new(rg, "outside", json_string(r->cfg.extrapolate ? "extrapolated (--extrapolate)" : "clamped"));
        json_object_set_new(mem, "measured_range", rg);
    } else {
        json_object_set_new(mem, "measured_range", json_null());
    }
    if (r->bpt_from_profile) {
        json_t *fit = json_object();
        json_object_set_new(fit, "intercept_bytes", json_real(pc->mem_intercept_bytes));
        json_object_set_new(fit, "rms_rel", json_real(pc->mem_fit_rms_rel));
        json_object_set_new(fit, "max_rel", json_real(pc->mem_fit_max_rel));
        json_object_set_new(mem, "fit", fit);
    } else {
        json_object_set_new(mem, "fit", json_null());
    }
    json_object_set_new(o, "memory_model", mem);

    json_t *cost = json_object();
    json_object_set_new(cost, "source", json_string(r->cost.from_profile ? "profile" : "flops"));
    json_object_set_new(cost, "flops", r->cost.from_profile ? json_null() : json_real(r->cfg.flops));
    json_object_set_new(cost, "alpha", json_real(r->cost.alpha));
    json_object_set_new(cost, "beta", json_real(r->cost.beta));
    json_object_set_new(cost, "gamma", json_real(r->cost.gamma));
    json_object_set_new(cost, "overhead", json_real(r->cost.overhead));
    json_object_set_new(o, "cost_model", cost);

    json_t *cmp = json_object();
    json_object_set_new(cmp, "model", json_string(plan_comp_model_name(r->cfg.comp_model)));
    json_object_set_new(cmp, "unit", json_string(r->cfg.comp_model == PLAN_COMP_POWER ? "tokens^p" : "seconds"));
    json_object_set_new(cmp, "m_comp", json_real(r->m_comp));
    json_object_set_new(cmp, "m_comp_source", json_string(r->cfg.comp_budget > 0 ? "given" : "reference micro-batch"));
    json_object_set_new(cmp, "ref_percentile", json_real(r->cfg.comp_ref_pct));
    json_object_set_new(cmp, "s_ref", json_integer(r->s_ref));
    json_object_set_new(cmp, "b_ref", json_integer(r->b_ref));
    json_object_set_new(cmp, "p", json_real(r->p));
    json_object_set_new(cmp, "p_auto", json_boolean(r->p_auto));
    json_object_set_new(o, "compute_budget", cmp);
    return o;
}

json_t *plan_summary_json(const plan_result *r, const plan_baselines *bl)
{
    json_t *o = json_object();
    json_object_set_new(o, "policy", json_string(plan_policy_name(r->cfg.policy)));
    json_object_set_new(o, "assign", json_string(plan_assign_name(r->cfg.assign)));
    int win = plan_assign_windowed(r->cfg.assign);
    json_object_set_new(o, "window", win ? json_integer(r->cfg.window) : json_null());
    json_object_set_new(o, "rank_sync", json_string(plan_assign_per_window(r->cfg.assign)
                                                        ? "per window (DDP with no_sync: ranks run different micro-batch counts)"
                                                        : "per step"));
    json_object_set_new(o, "model", json_text(r->model));
    json_object_set_new(o, "manifest", json_text(r->manifest));
    json_object_set_new(o, "gpus", json_integer(r->cfg.gpus));
    json_object_set_new(o, "seed", json_integer((json_int_t)r->cfg.seed));
    json_object_set_new(o, "epoch", json_integer((json_int_t)r->cfg.epoch));
    json_t *jt = json_object();
    json_object_set_new(jt, "cv", json_real(r->jitter_cv));
    json_object_set_new(jt, "source", json_string(!(r->jitter_cv > 0) ? "off" : r->jitter_measured ? "measured (the profile's seconds_cv)"
                                            : r->cfg.jitter_cv >= 0 ? "given (--jitter-cv)" : "assumed (default)"));
    json_object_set_new(jt, "model", json_string("each micro-batch's time x lognormal(mean 1, cv), independent"));
    json_object_set_new(jt, "repeats", json_integer(PLAN_JITTER_REPS));
    json_object_set_new(o, "jitter", jt);
    json_object_set_new(o, "grad_accum", json_integer(r->grad_accum));
    json_t *setup = setup_json(r);
    json_object_update(o, setup);
    json_decref(setup);
    json_object_set_new(o, "m_mem_tokens", json_integer(r->m_mem_tokens));
    json_object_set_new(o, "m_tok", json_integer(r->m_tok));

    json_t *smp = json_object();
    json_object_set_new(smp, "total", json_integer(r->samples_total));
    json_object_set_new(smp, "planned", json_integer(r->samples_planned));
    json_object_set_new(smp, "dropped", json_integer(r->samples_dropped));
    json_object_set_new(smp, "coverage", json_real((double)r->samples_planned / (double)r->samples_total));
    json_object_set_new(smp, "tokens_min", json_integer(r->smin));
    json_object_set_new(smp, "tokens_max", json_integer(r->smax));
    json_object_set_new(o, "samples", smp);

    json_t *bc = json_object();
    for (int k = 0; k < PLAN_NBIND; k++) json_object_set_new(bc, plan_binding_name((plan_binding)k), json_integer(r->n_bind[k]));
    json_object_set_new(o, "binding_counts", bc);
    json_object_set_new(o, "buckets", buckets_json(r));
    json_object_set_new(o, "microbatches", json_integer(r->nmicro));
    json_object_set_new(o, "tail_microbatches", json_integer(r->tail_microbatches));
    json_object_set_new(o, "steps", json_integer(r->steps));
    json_t *w = json_array();
    for (unsigned bit = 1; bit < (1u << PLAN_NWARN); bit <<= 1)
        if (r->warnings & bit) json_array_append_new(w, json_string(plan_warning_text(bit)));
    json_object_set_new(o, "warnings", w);
    json_object_set_new(o, "metrics", metrics_json(r, 1));
    json_t *ba = json_array();
    for (int k = 0; bl && k < PLAN_NBASE; k++) {
        const plan_result *b = bl->r[k];
        if (!b) continue;
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(plan_baseline_name(k)));
        json_object_set_new(e, "policy", json_string(plan_policy_name(b->cfg.policy)));
        json_object_set_new(e, "assign", json_string(plan_assign_name(b->cfg.assign)));
        json_object_set_new(e, "m_tok", b->cfg.policy == PLAN_POLICY_EQUAL_TOKEN ? json_integer(b->m_tok) : json_null());
        json_object_set_new(e, "microbatches", json_integer(b->nmicro));
        json_object_set_new(e, "steps", json_integer(b->steps));
        json_object_set_new(e, "metrics", metrics_json(b, 0));
        json_array_append_new(ba, e);
    }
    json_object_set_new(o, "baselines", ba);
    /* The headline: this plan against the strongest baseline, noise-free and under jitter. */
    int best = plan_baseline_strongest(bl);
    json_t *hl = json_object();
    if (best >= 0) {
        const plan_metrics *q = &bl->r[best]->metrics, *m = &r->metrics;
        json_object_set_new(hl, "strongest_baseline", json_string(plan_baseline_name(best)));
        json_object_set_new(hl, "samples_per_s_ratio", json_real(m->samples_per_s / q->samples_per_s));
        json_object_set_new(hl, "epoch_idle_fraction", json_real(m->epoch_idle_fraction));
        json_object_set_new(hl, "baseline_epoch_idle_fraction", json_real(q->epoch_idle_fraction));
        int jit = r->jitter_cv > 0;
        json_object_set_new(hl, "jitter_samples_per_s_ratio",
                            jit ? json_real(m->jitter_samples_per_s / q->jitter_samples_per_s) : json_null());
    }
    json_object_set_new(o, "headline", hl);
    return o;
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

/* Window of step s and whether the ranks synchronize after it. */
static void step_window(const plan_result *r, int64_t s, int64_t *g, int64_t *win, int *barrier)
{
    if (r->group_first) {
        while ((int64_t)r->group_first[*g + 1] <= s) (*g)++;
        *win = *g;
        *barrier = (int64_t)r->group_first[*g + 1] == s + 1;
    } else {
        *win = plan_assign_windowed(r->cfg.assign) ? -2 : -1; /* -2: found below */
        *barrier = 1;
    }
}

/* Steps [s0, s1) of the sync group holding step s. */
static void group_of(const plan_result *r, int64_t s, int64_t g, int64_t *s0, int64_t *s1)
{
    if (r->group_first) {
        *s0 = (int64_t)r->group_first[g];
        *s1 = (int64_t)r->group_first[g + 1];
    } else {
        *s0 = s;
        *s1 = s + 1;
    }
}

/* Samples and tokens of steps [s0, s1), all ranks. */
static void group_totals(const plan_result *r, int64_t s0, int64_t s1, uint64_t *samples, uint64_t *tokens)
{
    int64_t R = r->cfg.gpus;
    *samples = *tokens = 0;
    for (int64_t s = s0; s < s1; s++)
        for (int64_t i = 0; i < R; i++) {
            uint32_t k = r->slots[s * R + i];
            if (k == PLAN_IDLE) continue;
            *samples += r->micro[k].count;
            *tokens += (uint64_t)r->micro[k].count * (uint64_t)r->buckets[r->micro[k].bucket].shape.tokens;
        }
}

/* FNV-1a, 64 bits, of n bytes, continuing from h. */
static uint64_t fnv64(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

uint64_t plan_identity(const plan_result *r)
{
    uint64_t h = 0xcbf29ce484222325ull;
    int64_t head[6] = {r->steps, r->cfg.gpus, (int64_t)r->cfg.assign, r->cfg.window, r->nmicro, r->samples_planned};
    uint64_t se[2] = {r->cfg.seed, r->cfg.epoch};
    h = fnv64(h, head, sizeof head);
    h = fnv64(h, se, sizeof se);
    if (r->slots) h = fnv64(h, r->slots, (size_t)r->steps * (size_t)r->cfg.gpus * sizeof *r->slots);
    for (int64_t k = 0; k < r->nmicro; k++) {
        uint64_t m[3] = {r->micro[k].bucket, r->micro[k].count, r->micro[k].start};
        h = fnv64(h, m, sizeof m);
    }
    if (r->order) h = fnv64(h, r->order, (size_t)r->samples_planned * sizeof *r->order);
    return h;
}

/* The last line: what the file holds, so a reader can tell a whole file from a cut one. */
static void end_record(line_buf *b, const plan_result *r, int64_t first, int64_t last, int64_t rank,
                       uint64_t plan_id)
{
    char num[64];
    b->n = 0;
    lb_str(b, "{\"end\":true,\"first_step\":");
    lb_u64(b, (uint64_t)first);
    lb_str(b, ",\"steps\":");
    lb_u64(b, (uint64_t)(last - first));
    lb_str(b, ",\"plan_steps\":");
    lb_u64(b, (uint64_t)r->steps);
    lb_str(b, ",\"gpus\":");
    lb_u64(b, (uint64_t)r->cfg.gpus);
    lb_str(b, ",\"assign\":\"");
    lb_str(b, plan_assign_name(r->cfg.assign));
    lb_str(b, "\",\"window\":");
    lb_u64(b, (uint64_t)r->cfg.window);
    lb_str(b, ",\"seed\":");
    lb_u64(b, r->cfg.seed);
    lb_str(b, ",\"epoch\":");
    lb_u64(b, r->cfg.epoch);
    if (rank >= 0) {
        snprintf(num, sizeof num, ",\"rank\":%lld,\"plan_id\":\"%016llx\"", (long long)rank,
                 (unsigned long long)plan_id);
        lb_str(b, num);
    }
    snprintf(num, sizeof num, ",\"samples\":%lld}\n", (long long)r->samples_planned);
    lb_str(b, num);
}

/* rank < 0: every rank's entry; else only that rank's, and its end record says so. */
static plan_status write_steps(const plan_result *r, const plan_manifest *mf, FILE *f, int64_t first,
                               int64_t count, int64_t rank, uint64_t plan_id)
{
    if (!mf->ids_kept || !r->order || first < 0 || first > r->steps) return PLAN_ERR_USAGE;
    int64_t R = r->cfg.gpus;
    int64_t last = count < 0 || count > r->steps - first ? r->steps : first + count;
    /* sorted-window, verl-kk, sort-by-length: the window of each step, walking the
     * micro-batch count per window. */
    int64_t g = 0, sw_win = 0, sw_left = 0, gs1 = -1;
    uint64_t per = (uint64_t)r->cfg.window * (uint64_t)R, done = 0, gsmp = 0, gtok = 0;
    line_buf b = {NULL, 0, 0, 0};
    char num[80];
    plan_status st = PLAN_OK;
    for (int64_t s = 0; s < last && st == PLAN_OK; s++) {
        int64_t win;
        int barrier;
        step_window(r, s, &g, &win, &barrier);
        if (win == -2) {
            /* a sorted window holds ceil(n / R) steps, n = its micro-batches */
            if (sw_left == 0) {
                uint64_t n = (uint64_t)r->nmicro - done < per ? (uint64_t)r->nmicro - done : per;
                sw_left = (int64_t)((n + (uint64_t)R - 1) / (uint64_t)R);
                sw_win = (int64_t)(done / per);
                done += n;
            }
            sw_left--;
            win = sw_win;
        }
        if (s < first) continue;
        if (s >= gs1) {
            int64_t gs0;
            group_of(r, s, g, &gs0, &gs1);
            group_totals(r, gs0, gs1, &gsmp, &gtok);
        }
        b.n = 0;
        lb_str(&b, "{\"step\":");
        lb_u64(&b, (uint64_t)s);
        if (win >= 0) {
            lb_str(&b, ",\"window\":");
            lb_u64(&b, (uint64_t)win);
        } else {
            lb_str(&b, ",\"window\":null");
        }
        lb_str(&b, barrier ? ",\"sync\":true" : ",\"sync\":false");
        lb_str(&b, ",\"group_samples\":");
        lb_u64(&b, gsmp);
        lb_str(&b, ",\"group_tokens\":");
        lb_u64(&b, gtok);
        lb_str(&b, ",\"ranks\":[");
        for (int64_t i = rank < 0 ? 0 : rank; i < (rank < 0 ? R : rank + 1); i++) {
            uint32_t k = r->slots[s * R + i];
            lb_str(&b, i > (rank < 0 ? 0 : rank) ? ",{\"rank\":" : "{\"rank\":");
            lb_u64(&b, (uint64_t)i);
            if (k == PLAN_IDLE) {
                lb_str(&b, ",\"bucket\":null,\"cost\":0,\"tokens\":0,\"ids\":[]}");
                continue;
            }
            const plan_microbatch *mb = &r->micro[k];
            lb_str(&b, ",\"bucket\":");
            lb_u64(&b, mb->bucket);
            snprintf(num, sizeof num, ",\"cost\":%.9g,\"tokens\":%llu,\"ids\":[", plan_microbatch_cost(r, k),
                     (unsigned long long)mb->count * (unsigned long long)r->buckets[mb->bucket].shape.tokens);
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
    if (st == PLAN_OK) {
        end_record(&b, r, first, last, rank, plan_id);
        if (b.oom) st = PLAN_ERR_NOMEM;
        else if (fwrite(b.p, 1, b.n, f) != b.n) st = PLAN_ERR_WRITE;
    }
    free(b.p);
    if (st == PLAN_OK && ferror(f)) st = PLAN_ERR_WRITE;
    return st;
}

plan_status plan_write_plan(const plan_result *r, const plan_manifest *mf, FILE *f,
                            int64_t first, int64_t count)
{
    return write_steps(r, mf, f, first, count, -1, 0);
}

plan_status plan_write_rank(const plan_result *r, const plan_manifest *mf, FILE *f, int64_t rank,
                            int64_t first, int64_t count, uint64_t plan_id)
{
    if (rank < 0 || rank >= r->cfg.gpus) return PLAN_ERR_USAGE;
    return write_steps(r, mf, f, first, count, rank, plan_id);
}
