/* test_planner.c -- Criterion tests of the planner library (planner.h).
 *
 * Hand-computed cases (token counts, snapping, preset numbers, batch sizes and binding
 * constraints, metrics of small plans), properties over generated manifests (every sample
 * exactly once, micro-batches well formed, no dual micro-batch over M_mem, seeds), the cost
 * fits, and the paper's claim on the default manifest (dual lowers the idle fraction and
 * raises VRAM utilization). Run: ctest -R planner_unit, or ./test_planner --verbose.
 */
#include "test_helpers.h"

/* ---- token counts and snapping --------------------------------------------------------- */

Test(tokens, wan21_hand_counts)
{
    plan_model m = load_model("wan2.1-14b");
    /* S = (1 + (F-1)/4) * (H/16) * (W/16) */
    cr_expect_eq(plan_tokens(&m, 81, 480, 832), 32760);   /* 21 * 30 * 52 */
    cr_expect_eq(plan_tokens(&m, 121, 720, 1280), 111600); /* 31 * 45 * 80 */
    cr_expect_eq(plan_tokens(&m, 1, 480, 832), 1560);      /* 1 * 30 * 52 */
    cr_expect_eq(plan_tokens(&m, 1, 720, 1280), 3600);
    cr_expect_eq(plan_tokens(&m, 33, 480, 832), 14040);    /* 9 * 1560 */
    cr_expect_eq(plan_tokens(&m, 81, 720, 1280), 75600);   /* 21 * 3600 */
}

Test(tokens, wan22_5b_counts)
{
    plan_model m = load_model("wan2.2-5b");
    /* VAE stride (4, 16, 16), patch (1, 2, 2): 32 pixels per token side. */
    cr_expect_eq(plan_tokens(&m, 121, 704, 1280), 27280); /* 31 * 22 * 40 */
    cr_expect_eq(plan_tokens(&m, 1, 480, 832), 390);      /* 15 * 26 */
}

static void snap_is(const plan_model *m, int64_t f, int64_t h, int64_t w, int64_t ef, int64_t eh, int64_t ew)
{
    plan_snap(m, &f, &h, &w);
    cr_expect(f == ef && h == eh && w == ew, "snap -> %lldx%lldx%lld, expected %lldx%lldx%lld", (long long)f,
              (long long)h, (long long)w, (long long)ef, (long long)eh, (long long)ew);
}

Test(tokens, snapping_rule)
{
    plan_model m = load_model("wan2.1-14b");
    snap_is(&m, 100, 480, 854, 97, 480, 848); /* frames down to 4k+1, sides down to x16 */
    snap_is(&m, 81, 480, 832, 81, 480, 832);  /* legal shapes stay */
    snap_is(&m, 1, 500, 500, 1, 496, 496);
    snap_is(&m, 4, 8, 20, 1, 16, 16);         /* below one quantum: one quantum */
    snap_is(&m, 5, 1080, 1920, 5, 1072, 1920);
    snap_is(&m, 6, 720, 1280, 5, 720, 1280);
    plan_model m5 = load_model("wan2.2-5b");
    snap_is(&m5, 121, 544, 720, 121, 544, 704); /* 32-pixel quantum */
}

/* ---- presets and models ---------------------------------------------------------------- */

Test(presets, numbers_follow_documented_formulas)
{
    const char *names[] = {"wan2.1-14b", "wan2.1-1.3b", "wan2.2-5b"};
    const double want_params[] = {14283571200.0, 1417740288.0, 4997382144.0};
    /* Bytes per token of each activation setup, counted in datasets/models/README.md. */
    const int64_t want_fp32[] = {1298468, 366628, 704548};
    const int64_t want_bf16[] = {858148, 265252, 501796};
    const int64_t want_off[] = {520228, 194596, 360484};
    for (int i = 0; i < 3; i++) {
        plan_model m = load_model(names[i]);
        double D = (double)m.hidden_size, F = (double)m.ffn_size, L = (double)m.layers;
        const plan_act_setup *a32 = plan_model_act(&m, "fp32-residual"), *a16 = plan_model_act(&m, "bf16-residual");
        const plan_act_setup *aoff = plan_model_act(&m, "fp32-offload");
        cr_assert(a32 && a16 && aoff, "%s: setups missing", names[i]);
        cr_expect_eq(a32->bytes_per_token, (int64_t)(4 * L * D + 72 * D + 8 * F + 36), "%s fp32", names[i]);
        cr_expect_eq(a16->bytes_per_token, (int64_t)(2 * L * D + 66 * D + 8 * F + 36), "%s bf16", names[i]);
        cr_expect_eq(aoff->bytes_per_token, (int64_t)(80 * D + 8 * F + 36), "%s offload", names[i]);
        cr_expect_eq(a32->bytes_per_token, want_fp32[i], "%s", names[i]);
        cr_expect_eq(a16->bytes_per_token, want_bf16[i], "%s", names[i]);
        cr_expect_eq(aoff->bytes_per_token, want_off[i], "%s", names[i]);
        cr_expect_eq(a32->measured + a16->measured + aoff->measured, 0, "%s: marked measured", names[i]);
        cr_expect_str_eq(plan_model_act(&m, NULL)->name, "bf16-residual");
        cr_expect_null(plan_model_act(&m, "fp8"));
        cr_expect_eq(m.params, want_params[i], "%s params", names[i]);
        cr_expect_eq(m.reserve_bytes, 6 * (int64_t)1073741824, "%s", names[i]);
        /* Attention equals the linear part at S* = 3D + F + Ltext. */
        double a1, b1, g1;
        plan_model_flops(&m, &a1, &b1, &g1);
        cr_expect_float_eq(a1 / b1, 3 * D + F + (double)m.text_len, 1e-12, "%s S*", names[i]);
    }
    plan_model m = load_model("wan2.1-14b");
    double a1, b1, g1;
    plan_model_flops(&m, &a1, &b1, &g1);
    cr_expect_float_eq(a1 / b1, 29696.0, 1e-12); /* planner-notes: ~29.7K for 14B */
    /* 16 sharded bytes per parameter over 16 GPUs + 6 GiB. */
    cr_expect_float_eq(plan_model_fixed_bytes(&m, 16), 14283571200.0 + 6 * GIB, 1e-15);
    cr_expect_float_eq(plan_model_fixed_bytes(&m, 8), 2 * 14283571200.0 + 6 * GIB, 1e-15);
}

Test(presets, bad_model_file_names_the_key)
{
    char *p = tmp_file("{\"name\": \"x\", \"hidden_size\": 0}");
    plan_model m;
    plan_error err;
    cr_expect_eq(plan_model_load(p, &m, &err), PLAN_ERR_INPUT);
    cr_expect(strstr(err.msg, "'hidden_size'") != NULL, "%s", err.msg);
    unlink(p);
    free(p);
}

/* ---- cost fits ------------------------------------------------------------------------- */

Test(cost, p_fit_of_pure_power_laws)
{
    plan_cost lin = {.alpha = 1}, quad = {.beta = 1};
    cr_expect_float_eq(plan_fit_p(&lin, 1000, 100000), 1.0, 1e-12);
    cr_expect_float_eq(plan_fit_p(&quad, 1000, 100000), 2.0, 1e-12);
    cr_expect_float_eq(plan_fit_p(&quad, 5000, 5000), 2.0, 1e-12);
    /* alpha S + beta S^2 at S = S* = alpha/beta: local slope (1 + 2)/(1 + 1) = 1.5. */
    plan_cost mix = {.alpha = 3, .beta = 1e-3};
    cr_expect_float_eq(plan_fit_p(&mix, 3000, 3000), 1.5, 1e-12);
    double p = plan_fit_p(&mix, 300, 30000);
    cr_expect(p > 1.1 && p < 1.9, "p %g", p);
}

Test(cost, profile_least_squares_recovers_a_quadratic)
{
    char text[4096] = "seconds,tokens\n";
    for (int k = 1; k <= 12; k++) {
        double S = 1500.0 * k;
        char row[128];
        snprintf(row, sizeof row, "%.17g,%.0f\n", 2e-4 * S + 3e-9 * S * S + 0.05, S);
        strcat(text, row);
    }
    char *p = tmp_file(text);
    plan_cost c;
    plan_error err;
    cr_assert_eq(plan_cost_from_profile(p, &c, &err), PLAN_OK, "%s", err.msg);
    cr_expect_float_eq(c.alpha, 2e-4, 1e-9 * 2e-4 * 1e3);
    cr_expect_float_eq(c.beta, 3e-9, 1e-9 * 3e-9 * 1e3);
    cr_expect_float_eq(c.gamma, 0.05, 1e-9);
    cr_expect_eq(c.from_profile, 1);
    cr_expect_eq(c.profile_points, 12);
    unlink(p);
    free(p);
}

/* ---- batch sizes and binding constraints (datasets/tiny.csv) --------------------------- */

typedef struct {
    int64_t tokens, batch;
    plan_binding binding;
} want_b;

static void check_sizes(const plan_result *r, const want_b *w, int n)
{
    for (int i = 0; i < n; i++) {
        const plan_bucket *b = bucket_with(r, w[i].tokens);
        cr_expect_eq(b->batch_size, w[i].batch, "%s S=%lld: B %lld, expected %lld", plan_policy_name(r->cfg.policy),
                     (long long)w[i].tokens, (long long)b->batch_size, (long long)w[i].batch);
        cr_expect_eq(b->binding, w[i].binding, "S=%lld: binding %s, expected %s", (long long)w[i].tokens,
                     plan_binding_name(b->binding), plan_binding_name(w[i].binding));
    }
}

Test(sizing, tiny_by_hand)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_generated("tiny", 0, 0);
    plan_manifest *mf = read_manifest(p, &m, 0);
    cr_assert_eq(plan_manifest_samples(mf), 10);
    cr_assert_eq(plan_manifest_nbuckets(mf), 9); /* clip-a and clip-f share 81x480x832 */

    plan_config c;
    plan_config_default(&c);
    c.policy = PLAN_POLICY_EQUAL_TOKEN; /* M_tok = 111,600: B = floor(111600 / S) */
    plan_result *r = build(mf, &m, &c);
    cr_expect_eq(r->m_tok, 111600);
    /* floor((150,109,880,320 x 0.95 - 14,283,571,200 - 6 GiB) / 858,148 B) */
    cr_expect_eq(r->m_mem_tokens, 142024);
    cr_expect_eq(r->m_mem_model, 142024);
    const want_b eq[] = {{961, 116, PLAN_BIND_TOKENS},   {1560, 71, PLAN_BIND_TOKENS},  {3600, 31, PLAN_BIND_TOKENS},
                         {7800, 14, PLAN_BIND_TOKENS},   {14040, 7, PLAN_BIND_TOKENS},  {32760, 3, PLAN_BIND_TOKENS},
                         {39750, 2, PLAN_BIND_TOKENS},   {75600, 1, PLAN_BIND_TOKENS},  {111600, 1, PLAN_BIND_TOKENS}};
    check_sizes(r, eq, 9);
    cr_expect_eq(r->n_bind[PLAN_BIND_TOKENS], 9);
    plan_result_free(r);

    /* dual, power model (the paper's form), M_mem 500,000, p 1.5, M_comp = 111600^1.5:
     * B = min(500000/S, (111600/S)^1.5). */
    c.policy = PLAN_POLICY_DUAL;
    c.comp_model = PLAN_COMP_POWER;
    c.mem_tokens = 500000;
    c.force = 1;
    c.p = 1.5;
    c.comp_budget = pow(111600.0, 1.5);
    r = build(mf, &m, &c);
    const want_b du[] = {{961, 520, PLAN_BIND_MEMORY},   {1560, 320, PLAN_BIND_MEMORY}, {3600, 138, PLAN_BIND_MEMORY},
                         {7800, 54, PLAN_BIND_COMPUTE},  {14040, 22, PLAN_BIND_COMPUTE}, {32760, 6, PLAN_BIND_COMPUTE},
                         {39750, 4, PLAN_BIND_COMPUTE},  {75600, 1, PLAN_BIND_COMPUTE},  {111600, 1, PLAN_BIND_COMPUTE}};
    check_sizes(r, du, 9);
    cr_expect_eq(bucket_with(r, 7800)->b_mem, 64);
    cr_expect_eq(bucket_with(r, 7800)->b_comp, 54);
    cr_expect_eq(bucket_with(r, 111600)->b_comp, 1); /* exactly 1: M_comp / S_max^p */
    cr_expect(r->warnings & PLAN_WARN_FORCED_MEM);
    plan_result_free(r);

    /* Half that compute budget: the two longest buckets fall below one sample -> floor. */
    c.comp_budget = 0.5 * pow(111600.0, 1.5);
    r = build(mf, &m, &c);
    const want_b fl[] = {{32760, 3, PLAN_BIND_COMPUTE}, {39750, 2, PLAN_BIND_COMPUTE}, {75600, 1, PLAN_BIND_FLOOR},
                         {111600, 1, PLAN_BIND_FLOOR}};
    check_sizes(r, fl, 4);
    plan_result_free(r);

    /* equal-token with a budget below the long samples: floor at 1. */
    plan_config_default(&c);
    c.policy = PLAN_POLICY_EQUAL_TOKEN;
    c.tok_budget = 50000;
    r = build(mf, &m, &c);
    const want_b et[] = {{39750, 1, PLAN_BIND_TOKENS}, {75600, 1, PLAN_BIND_FLOOR}, {111600, 1, PLAN_BIND_FLOOR}};
    check_sizes(r, et, 3);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

/* ---- metrics of small plans ------------------------------------------------------------ */

Test(metrics, one_step_by_hand)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_file("width,height,frames\n832,480,1\n1280,720,1\n");
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_cost unit = {.alpha = 1}; /* C(S) = S seconds */
    plan_config c;
    plan_config_default(&c);
    c.policy = PLAN_POLICY_EQUAL_TOKEN;
    c.gpus = 2;
    c.cost = &unit;
    c.assign = PLAN_ASSIGN_RANDOM;
    plan_result *r = build(mf, &m, &c);
    /* One step, loads 1560 and 3600: mean 2580. */
    cr_assert_eq(r->steps, 1);
    const plan_metrics *x = &r->metrics;
    cr_expect_float_eq(x->epoch_idle_fraction, 1020.0 / 3600.0, 1e-12);
    cr_expect_float_eq(x->mean_step_idle_fraction, 1020.0 / 3600.0, 1e-12);
    cr_expect_float_eq(x->max_over_mean_minus_1, 3600.0 / 2580.0 - 1.0, 1e-12);
    cr_expect_float_eq(x->cv, 1020.0 / 2580.0, 1e-12);
    cr_expect_float_eq(x->spread, 2040.0 / 3600.0, 1e-12);
    cr_expect_float_eq(x->samples_per_s, 2.0 / 3600.0, 1e-12);
    cr_expect_float_eq(x->tokens_per_s, 5160.0 / 3600.0, 1e-12);
    /* Two GPUs share the 16 bytes per parameter: 8 x params each, + 6 GiB. */
    double fixed = 8 * 14283571200.0 + 6 * GIB, cap = 150109880320.0;
    double u1 = (fixed + 1560.0 * 858148) / cap, u2 = (fixed + 3600.0 * 858148) / cap;
    cr_expect_float_eq(x->vram_util_mean, (u1 + u2) / 2, 1e-12);
    cr_expect_float_eq(x->vram_util_max, u2, 1e-12);
    /* Time-weighted: rank 0 holds u1 for 1560 s and the fixed bytes for 2040 s, rank 1 u2
     * for 3600 s; per-rank idle 2040/3600 and 0. */
    cr_expect_float_eq(x->vram_time_mean, (u1 * 1560 + fixed / cap * 2040 + u2 * 3600) / (2 * 3600), 1e-12);
    cr_expect_float_eq(x->rank_idle_max, 2040.0 / 3600.0, 1e-12);
    cr_expect_float_eq(x->rank_idle_min, 0.0, 1e-12);
    cr_expect_eq(x->over_memory_microbatches, 0);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(metrics, same_bucket_idle_rank_and_tail)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_file("width,height,frames\n832,480,1\n832,480,1\n\n832,480,1\n");
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_cost unit = {.alpha = 1};
    plan_config c;
    plan_config_default(&c);
    c.policy = PLAN_POLICY_EQUAL_TOKEN;
    c.assign = PLAN_ASSIGN_SAME_BUCKET;
    c.tok_budget = 2 * 1560; /* B = 2: micro-batches of 2 and a tail of 1 */
    c.gpus = 2;
    c.cost = &unit;
    plan_result *r = build(mf, &m, &c);
    cr_assert_eq(r->nmicro, 2);
    cr_expect_eq(r->tail_microbatches, 1);
    cr_assert_eq(r->steps, 1);
    /* Loads 3120 and 1560. */
    cr_expect_float_eq(r->metrics.epoch_idle_fraction, (3120.0 - 2340.0) / 3120.0, 1e-12);
    plan_result_free(r);

    c.tok_budget = 1560; /* B = 1: 3 micro-batches, 2 ranks: steps {1560, 1560}, {1560, idle} */
    r = build(mf, &m, &c);
    cr_assert_eq(r->steps, 2);
    cr_expect_eq(r->tail_microbatches, 0);
    cr_expect_float_eq(r->metrics.epoch_idle_fraction, 780.0 / 3120.0, 1e-12);
    cr_expect_float_eq(r->metrics.mean_step_idle_fraction, 0.25, 1e-12);
    cr_expect_float_eq(r->metrics.max_over_mean_minus_1, 0.5, 1e-12);
    cr_expect_float_eq(r->metrics.cv, 0.5, 1e-12);
    cr_expect_float_eq(r->metrics.spread, 0.5, 1e-12);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

/* ---- properties ------------------------------------------------------------------------ */

/* Every planned sample in exactly one micro-batch, every micro-batch on exactly one rank of
 * one step, micro-batches within one bucket and at most B samples, one tail at most per
 * bucket; same-bucket steps hold one bucket. */
void check_plan(const plan_result *r, const plan_manifest *mf)
{
    int64_t n = plan_manifest_samples(mf), R = r->cfg.gpus;
    unsigned char *seen = calloc((size_t)n, 1), *used = calloc((size_t)r->nmicro + 1, 1);
    int64_t *tails = calloc((size_t)r->nbuckets, sizeof *tails);
    cr_assert(seen && used && tails);
    for (int64_t s = 0; s < r->steps; s++) {
        int64_t bucket = -1;
        for (int64_t i = 0; i < R; i++) {
            uint32_t k = r->slots[s * R + i];
            if (k == PLAN_IDLE) continue;
            cr_assert(k < r->nmicro);
            cr_assert_eq(used[k], 0, "micro-batch %u dealt twice", k);
            used[k] = 1;
            const plan_microbatch *mb = &r->micro[k];
            const plan_bucket *b = &r->buckets[mb->bucket];
            if (r->cfg.assign == PLAN_ASSIGN_SAME_BUCKET) {
                if (bucket < 0) bucket = mb->bucket;
                cr_assert_eq(bucket, (int64_t)mb->bucket, "same-bucket step %lld mixes buckets", (long long)s);
            }
            cr_assert(mb->count >= 1 && (int64_t)mb->count <= b->batch_size);
            if ((int64_t)mb->count < b->batch_size) tails[mb->bucket]++;
            for (uint32_t j = 0; j < mb->count; j++) {
                uint32_t smp = r->order[mb->start + j];
                cr_assert(smp < n);
                cr_assert_eq(seen[smp], 0, "sample %u planned twice", smp);
                seen[smp] = 1;
                cr_assert_eq(plan_manifest_sample_bucket(mf, smp), mb->bucket);
            }
        }
    }
    int64_t planned = 0;
    for (int64_t i = 0; i < n; i++) planned += seen[i];
    cr_expect_eq(planned, r->samples_planned);
    cr_expect_eq(planned + r->samples_dropped, n);
    for (int64_t k = 0; k < r->nmicro; k++) cr_assert_eq(used[k], 1, "micro-batch %lld never dealt", (long long)k);
    for (int64_t b = 0; b < r->nbuckets; b++) cr_expect_leq(tails[b], 1);
    if (r->cfg.assign == PLAN_ASSIGN_RANDOM) cr_expect_eq(r->steps, (r->nmicro + R - 1) / R);
    free(seen);
    free(used);
    free(tails);
}

Test(properties, exactly_once_and_memory_cap, .timeout = 120)
{
    plan_model m = load_model("wan2.1-1.3b"); /* both constraints bind on this model */
    char *paths[2] = {tmp_generated("default", 20000, 11), tmp_generated("longtail", 8000, 12)};
    for (int d = 0; d < 2; d++) {
        plan_manifest *mf = read_manifest(paths[d], &m, 0);
        for (int pol = 0; pol < 2; pol++) {
            for (int as = 0; as < PLAN_NASSIGN; as++) {
                for (uint64_t seed = 0; seed < 2; seed++) {
                    plan_config c;
                    plan_config_default(&c);
                    c.policy = (plan_policy)pol;
                    c.assign = (plan_assign)as;
                    c.seed = seed;
                    c.gpus = 7; /* not a divisor of anything in sight */
                    plan_result *r = build(mf, &m, &c);
                    check_plan(r, mf);
                    if (pol == PLAN_POLICY_DUAL) {
                        for (int64_t k = 0; k < r->nmicro; k++) {
                            const plan_microbatch *mb = &r->micro[k];
                            cr_assert_leq((int64_t)mb->count * r->buckets[mb->bucket].shape.tokens, r->m_mem_tokens);
                        }
                        cr_expect_eq(r->metrics.over_memory_microbatches, 0);
                    }
                    plan_result_free(r);
                }
            }
        }
        plan_manifest_free(mf);
        unlink(paths[d]);
        free(paths[d]);
    }
}

Test(properties, over_memory_is_counted)
{
    /* The over-memory count can fail: equal-token with a budget twice M_mem exceeds it. */
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_generated("default", 3000, 5);
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    c.policy = PLAN_POLICY_EQUAL_TOKEN;
    c.tok_budget = 2 * 142024;
    plan_result *r = build(mf, &m, &c);
    cr_expect_gt(r->metrics.over_memory_microbatches, 0);
    cr_expect_gt(r->metrics.vram_util_max, 1.0);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(properties, seeds)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_generated("longtail", 5000, 3);
    plan_manifest *mf = read_manifest(p, &m, 0);
    for (int as = 0; as < PLAN_NASSIGN; as++) {
        plan_config c;
        plan_config_default(&c);
        c.assign = (plan_assign)as;
        c.window = 4;
        c.seed = 42;
        plan_result *a = build(mf, &m, &c), *b = build(mf, &m, &c);
        c.seed = 43;
        plan_result *d = build(mf, &m, &c);
        cr_assert_eq(a->steps, b->steps);
        cr_expect_eq(memcmp(a->order, b->order, (size_t)a->samples_planned * 4), 0, "same seed, other order");
        cr_expect_eq(memcmp(a->slots, b->slots, (size_t)(a->steps * a->cfg.gpus) * 4), 0, "same seed, other plan");
        cr_expect_neq(memcmp(a->order, d->order, (size_t)a->samples_planned * 4), 0, "seed did not change the shuffle");
        int differ = a->steps != d->steps ||
                     memcmp(a->slots, d->slots, (size_t)(a->steps * a->cfg.gpus) * 4) != 0;
        cr_expect(differ, "seed did not change the assignment");
        json_t *ja = plan_summary_json(a, NULL), *jb = plan_summary_json(b, NULL);
        char *sa = json_dumps(ja, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
        char *sb = json_dumps(jb, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
        cr_expect_str_eq(sa, sb);
        free(sa);
        free(sb);
        json_decref(ja);
        json_decref(jb);
        plan_result_free(a);
        plan_result_free(b);
        plan_result_free(d);
    }
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

/* ---- manifest reading and the plan output ---------------------------------------------- */

Test(manifest, errors_name_line_and_column)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_file("id,width,height,frames\r\na,832,480,81\r\nb,832,48x,81\r\n");
    plan_manifest *mf = NULL;
    plan_error err;
    cr_expect_eq(plan_manifest_read(p, &m, 0, &mf, &err), PLAN_ERR_INPUT);
    cr_expect_null(mf);
    cr_expect(strstr(err.msg, ":3: column 3 (height): '48x' is not a whole number") != NULL, "%s", err.msg);
    unlink(p);
    free(p);
}

Test(manifest, quotes_unknown_columns_and_plan_lines)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_file("\xEF\xBB\xBFnote,frames,id,height,width\n"
                       "\"x, y\",81,\"clip \"\"one\"\"\",480,832\n"
                       "z,1,img,480,832\n"
                       "\n"
                       "w,1,img2,480,832\n");
    plan_manifest *mf = read_manifest(p, &m, 1);
    cr_assert_eq(plan_manifest_samples(mf), 3);
    cr_assert_eq(plan_manifest_nbuckets(mf), 2);
    plan_config c;
    plan_config_default(&c);
    c.gpus = 2;
    c.mem_tokens = 100000;
    c.force = 1; /* above what 2 GPUs hold for the 14B model */
    plan_result *r = build(mf, &m, &c);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(plan_write_plan(r, mf, f, 0, -1), PLAN_OK);
    fclose(f);
    /* One line per step, each a JSON object whose ids add up to the manifest's. */
    int lines = 0, ids = 0, found = 0, end = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        cr_assert(o, "line %d is not JSON: %s", lines, je.text);
        if (json_object_get(o, "end")) { /* the end record: last, and it counts the steps */
            cr_expect_eq(json_integer_value(json_object_get(o, "steps")), r->steps);
            cr_expect_eq(json_integer_value(json_object_get(o, "gpus")), 2);
            cr_expect_null(strtok(NULL, "\n"));
            json_decref(o);
            end = 1;
            break;
        }
        cr_expect_eq(json_integer_value(json_object_get(o, "step")), lines);
        json_t *ranks = json_object_get(o, "ranks");
        cr_assert_eq(json_array_size(ranks), 2);
        for (size_t i = 0; i < 2; i++) {
            json_t *rk = json_array_get(ranks, i);
            json_t *v = json_object_get(rk, "ids");
            ids += (int)json_array_size(v);
            for (size_t j = 0; j < json_array_size(v); j++)
                found += !strcmp(json_string_value(json_array_get(v, j)), "clip \"one\"");
        }
        json_decref(o);
    }
    cr_expect_eq(lines, r->steps);
    cr_expect(end, "no end record");
    cr_expect_eq(ids, 3);
    cr_expect_eq(found, 1);
    free(buf);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(manifest, oversize_error_or_drop)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_file("width,height,frames\n832,480,81\n1280,720,481\n832,480,1\n");
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    plan_result *r = NULL;
    plan_error err;
    cr_expect_eq(plan_build(mf, &m, &c, &r, &err), PLAN_ERR_OVERSIZE);
    cr_expect(strstr(err.msg, ":3: a sample of 435600 tokens") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "bf16-residual") != NULL, "%s", err.msg);
    c.oversize_drop = 1;
    r = build(mf, &m, &c);
    cr_expect_eq(r->samples_dropped, 1);
    cr_expect_eq(r->samples_planned, 2);
    check_plan(r, mf);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

/* ---- the default manifest ------------------------------------------------------------- */

Test(default_manifest, dual_and_assignment_beat_random, .timeout = 120)
{
    plan_model m = load_model("wan2.1-14b");
    plan_manifest *mf = read_manifest(PLAN_SOURCE_DIR "/datasets/default.csv", &m, 0);
    plan_config c;
    plan_config_default(&c);
    plan_result *du = build(mf, &m, &c);
    plan_baselines bl;
    plan_error err;
    cr_assert_eq(plan_build_baselines(mf, &m, &c, du, &bl, &err), PLAN_OK, "%s", err.msg);
    const plan_result *mmem = bl.r[PLAN_BASE_TOK_MMEM], *smax = bl.r[PLAN_BASE_TOK_SMAX];
    cr_expect_eq(mmem->m_tok, du->m_mem_tokens);
    cr_expect_eq(smax->m_tok, du->smax);
    cr_expect_eq(bl.r[PLAN_BASE_RANDOM]->cfg.policy, PLAN_POLICY_DUAL);
    cr_expect_gt(du->n_bind[PLAN_BIND_COMPUTE], 0, "compute binds nowhere");
    cr_expect_lt(du->metrics.epoch_idle_fraction, 0.05);
    cr_expect_lt(du->metrics.epoch_idle_fraction, bl.r[PLAN_BASE_RANDOM]->metrics.epoch_idle_fraction);
    cr_expect_gt(du->metrics.samples_per_s, 1.25 * mmem->metrics.samples_per_s);
    cr_expect_gt(du->metrics.vram_time_mean, smax->metrics.vram_time_mean);
    cr_expect_eq(du->metrics.over_memory_microbatches, 0);
    cr_expect_eq(du->samples_planned, 100000);
    plan_baselines_free(&bl);
    plan_result_free(du);
    plan_manifest_free(mf);
}
