/* test_plan_budget.c -- the budgets: the cost-unit compute budget B*C(S) <= M_comp and its
 * reference micro-batch, the power form, the memory model (GPU presets, margin, activation
 * setups, --mem-tokens against it), the FLOP coefficients and p pinned by hand, warnings,
 * and properties of the batch sizes over generated manifests (within both caps, maximal,
 * non-increasing in S). Part of test_planner (ctest -R planner_unit).
 */
#include "test_helpers.h"

/* A cost model that is easy to do by hand: C(S) = S + 1e-4 S^2 seconds. */
static const plan_cost hand_cost = {.alpha = 1.0, .beta = 1e-4};

typedef struct {
    int64_t tokens, b_mem, b_comp, batch;
    plan_binding binding;
} want_c;

static void check_c(const plan_result *r, const want_c *w, int n)
{
    for (int i = 0; i < n; i++) {
        const plan_bucket *b = bucket_with(r, w[i].tokens);
        cr_expect_eq(b->b_mem, w[i].b_mem, "S=%lld b_mem %lld", (long long)w[i].tokens, (long long)b->b_mem);
        cr_expect_eq(b->b_comp, w[i].b_comp, "S=%lld b_comp %lld", (long long)w[i].tokens, (long long)b->b_comp);
        cr_expect_eq(b->batch_size, w[i].batch, "S=%lld B %lld", (long long)w[i].tokens, (long long)b->batch_size);
        cr_expect_eq(b->binding, w[i].binding, "S=%lld %s", (long long)w[i].tokens, plan_binding_name(b->binding));
    }
}

Test(budget, cost_units_by_hand)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_generated("tiny", 0, 0);
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    c.cost = &hand_cost;
    c.mem_tokens = 500000;
    c.force = 1;
    /* Given M_comp = 2e5 s: b_comp = floor(2e5 / (S + 1e-4 S^2)). */
    c.comp_budget = 2e5;
    plan_result *r = build(mf, &m, &c);
    const want_c given[] = {{961, 520, 189, 189, PLAN_BIND_COMPUTE},   {1560, 320, 110, 110, PLAN_BIND_COMPUTE},
                            {3600, 138, 40, 40, PLAN_BIND_COMPUTE},    {7800, 64, 14, 14, PLAN_BIND_COMPUTE},
                            {14040, 35, 5, 5, PLAN_BIND_COMPUTE},      {32760, 15, 1, 1, PLAN_BIND_COMPUTE},
                            {39750, 12, 1, 1, PLAN_BIND_COMPUTE},      {75600, 6, 0, 1, PLAN_BIND_FLOOR},
                            {111600, 4, 0, 1, PLAN_BIND_FLOOR}};
    check_c(r, given, 9);
    cr_expect_eq(r->n_bind[PLAN_BIND_COMPUTE], 7);
    cr_expect_eq(r->n_bind[PLAN_BIND_FLOOR], 2);
    cr_expect_eq(r->n_bind[PLAN_BIND_MEMORY], 0);
    plan_result_free(r);

    /* Default M_comp: the p50 sample of the 10 (5th of 961, 1560, 3600, 7800, 14040, ...) is
     * 14,040 tokens; its memory-full batch floor(500000/14040) = 35 costs 35 x 33,752.16 s. */
    c.comp_budget = 0;
    r = build(mf, &m, &c);
    cr_expect_eq(r->s_ref, 14040);
    cr_expect_eq(r->b_ref, 35);
    cr_expect_float_eq(r->m_comp, 35 * 33752.16, 1e-9);
    const want_c ref[] = {{961, 520, 1121, 520, PLAN_BIND_MEMORY},   {3600, 138, 241, 138, PLAN_BIND_MEMORY},
                          {14040, 35, 35, 35, PLAN_BIND_MEMORY},     {32760, 15, 8, 8, PLAN_BIND_COMPUTE},
                          {39750, 12, 5, 5, PLAN_BIND_COMPUTE},      {75600, 6, 1, 1, PLAN_BIND_COMPUTE},
                          {111600, 4, 0, 1, PLAN_BIND_FLOOR}};
    check_c(r, ref, 7);
    plan_result_free(r);

    /* Another percentile moves the reference: p100 is the longest sample (B_ref 4). */
    c.comp_ref_pct = 100;
    r = build(mf, &m, &c);
    cr_expect_eq(r->s_ref, 111600);
    cr_expect_eq(r->b_ref, 4);
    cr_expect_eq(bucket_with(r, 111600)->batch_size, 4);
    cr_expect_eq(bucket_with(r, 111600)->binding, PLAN_BIND_MEMORY);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(budget, flop_coefficients_and_p_pinned)
{
    plan_model m = load_model("wan2.1-14b");
    double a1, b1, g1;
    plan_model_flops(&m, &a1, &b1, &g1);
    /* L (12 D^2 + 4 D F + 4 D T) with L 40, D 5120, F 13824, T 512. */
    cr_expect_eq(a1, 40.0 * (12.0 * 5120 * 5120 + 4.0 * 5120 * 13824 + 4.0 * 5120 * 512));
    cr_expect_eq(a1, 24326963200.0);
    cr_expect_eq(b1, 819200.0);              /* 4 L D */
    cr_expect_eq(g1, 4.0 * 40 * 512 * 5120.0 * 5120.0); /* 4 L T D^2 */
    plan_cost c;
    plan_cost_from_flops(&m, 4e14, &c);
    cr_expect_float_eq(c.alpha, 4 * 24326963200.0 / 4e14, 1e-15);
    cr_expect_float_eq(c.beta, 4 * 819200.0 / 4e14, 1e-15);
    cr_expect_float_eq(c.gamma, 4 * 2147483648000.0 / 4e14, 1e-15);
    cr_expect_eq(c.overhead, 0);
    /* p over the default manifest's range 1,521..112,406 tokens: pinned (glibc's log/exp). */
    double p = plan_fit_p(&c, 1521, 112406);
    cr_expect_float_eq(p, 1.32703, 5e-5, "p %.6f", p);
    /* At one length, the local slope (alpha S + 2 beta S^2) / C(S): at S* = alpha/beta = 29,696
     * (gamma aside) about 1.5. */
    double S = 29696, loc = (c.alpha * S + 2 * c.beta * S * S) / (c.alpha * S + c.beta * S * S + c.gamma);
    cr_expect_float_eq(plan_fit_p(&c, 29696, 29696), loc, 1e-12);
    cr_expect(loc > 1.49 && loc < 1.5, "%g", loc);
}

Test(budget, memory_model_presets_and_margin)
{
    const plan_gpu *h = plan_gpu_find("h200");
    cr_assert(h);
    cr_expect_eq(h->bytes, 150109880320.0); /* 139.80 GiB, what CUDA reports */
    cr_expect(strstr(h->source, "totalGlobalMem") != NULL);
    const char *names[] = {"h200", "h100-80gb", "a100-80gb", "a100-40gb", "b200"};
    for (int i = 0; i < 5; i++) {
        const plan_gpu *g = plan_gpu_find(names[i]);
        cr_assert(g, "%s", names[i]);
        cr_expect(g->bytes > 30e9 && g->bytes < 300e9);
        cr_expect(strlen(g->source) > 20, "%s has no source", names[i]);
        cr_expect_eq(plan_gpu_at((size_t)i), g);
    }
    cr_expect_null(plan_gpu_at(5));
    cr_expect_null(plan_gpu_find("h300"));

    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_generated("tiny", 0, 0);
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    double fixed = 14283571200.0 + 6 * GIB;
    const char *acts[] = {"bf16-residual", "fp32-offload"};
    const double bpt[] = {858148, 520228};
    const double margin[] = {0.05, 0.0, 0.2};
    for (int a = 0; a < 2; a++) {
        for (int k = 0; k < 3; k++) {
            c.act = acts[a];
            c.mem_margin = margin[k];
            plan_result *r = build(mf, &m, &c);
            int64_t want = (int64_t)floor((150109880320.0 * (1 - margin[k]) - fixed) / bpt[a]);
            cr_expect_eq(r->m_mem_model, want, "%s margin %g: %lld", acts[a], margin[k], (long long)r->m_mem_model);
            cr_expect_eq(r->bytes_per_token, (int64_t)bpt[a]);
            plan_result_free(r);
        }
    }
    /* The official code's fp32 residual does not fit a 720p 121-frame clip (111,600 tokens). */
    c.act = "fp32-residual";
    c.mem_margin = 0.05;
    plan_result *r = NULL;
    plan_error err;
    cr_expect_eq(plan_build(mf, &m, &c, &r, &err), PLAN_ERR_OVERSIZE);
    cr_expect(strstr(err.msg, "93863 tokens") != NULL, "%s", err.msg);
    c.act = "fp8";
    cr_expect_eq(plan_build(mf, &m, &c, &r, &err), PLAN_ERR_USAGE);
    cr_expect(strstr(err.msg, "--act fp8") && strstr(err.msg, "bf16-residual"), "%s", err.msg);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(budget, mem_tokens_above_the_model_needs_force)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_generated("tiny", 0, 0);
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    c.mem_tokens = 142025; /* one above M_mem */
    plan_result *r = NULL;
    plan_error err;
    cr_expect_eq(plan_build(mf, &m, &c, &r, &err), PLAN_ERR_USAGE);
    cr_expect(strstr(err.msg, "--mem-tokens 142025: above the 142024 tokens") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "--force") != NULL, "%s", err.msg);
    c.mem_tokens = 142024; /* at the limit: fine, no warning */
    r = build(mf, &m, &c);
    cr_expect_eq(r->warnings & PLAN_WARN_FORCED_MEM, 0);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
    p = tmp_generated("default", 3000, 5);
    mf = read_manifest(p, &m, 0);
    c.mem_tokens = 300000;
    c.force = 1;
    c.policy = PLAN_POLICY_EQUAL_TOKEN;
    c.tok_budget = 300000;
    r = build(mf, &m, &c);
    cr_expect(r->warnings & PLAN_WARN_FORCED_MEM);
    cr_expect_eq(r->m_mem_model, 142024);
    cr_expect_gt(r->metrics.over_memory_microbatches, 0, "over memory counted against the given budget");
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(budget, flops_blamed_on_flops)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_generated("tiny", 0, 0);
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    c.flops = 1e-300;
    plan_result *r = NULL;
    plan_error err;
    cr_expect_eq(plan_build(mf, &m, &c, &r, &err), PLAN_ERR_USAGE);
    cr_expect(strncmp(err.msg, "--flops 1e-300:", 15) == 0, "%s", err.msg);
    cr_expect_null(strstr(err.msg, "--profile"), "%s", err.msg);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(budget, warnings_one_shape_and_zero_range)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_file("width,height,frames\n832,480,81\n832,480,81\n832,480,81\n");
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    plan_result *r = build(mf, &m, &c);
    cr_expect(r->warnings & PLAN_WARN_ONE_SHAPE);
    cr_expect(r->warnings & PLAN_WARN_P_ZERO_RANGE);
    cr_expect(strstr(plan_warning_text(PLAN_WARN_ONE_SHAPE), "one shape") != NULL);
    plan_result_free(r);
    c.p = 1.4; /* p given: no zero-range warning */
    r = build(mf, &m, &c);
    cr_expect_eq(r->warnings & PLAN_WARN_P_ZERO_RANGE, 0);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
    /* Two shapes of the same token count: zero range, but not one shape. */
    p = tmp_file("width,height,frames\n832,480,1\n480,832,1\n");
    mf = read_manifest(p, &m, 0);
    c.p = 0;
    r = build(mf, &m, &c);
    cr_expect_eq(r->warnings, PLAN_WARN_P_ZERO_RANGE);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
    /* The tiny manifest: none. */
    p = tmp_generated("tiny", 0, 0);
    mf = read_manifest(p, &m, 0);
    r = build(mf, &m, &c);
    cr_expect_eq(r->warnings, 0);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

/* B within both caps (or 1 at the floor), maximal (B + 1 breaks a cap), non-increasing in S. */
static void check_budgets(const plan_result *r)
{
    int64_t prev_s = 0, prev_b = INT64_MAX;
    for (int64_t i = 0; i < r->nbuckets; i++) {
        const plan_bucket *k = &r->buckets[i];
        if (k->dropped) continue;
        double S = (double)k->shape.tokens, B = (double)k->batch_size;
        double u = r->cfg.comp_model == PLAN_COMP_POWER ? pow(S, r->p) : plan_cost_eval(&r->cost, S);
        cr_assert_leq(k->batch_size * k->shape.tokens, r->m_mem_tokens, "S=%g over M_mem", S);
        if (k->binding != PLAN_BIND_FLOOR) {
            cr_assert_leq(B * u, r->m_comp * (1 + 1e-9), "S=%g: B*C(S) %g > M_comp %g", S, B * u, r->m_comp);
            int mem_full = (B + 1) * S > (double)r->m_mem_tokens;
            int comp_full = (B + 1) * u > r->m_comp * (1 + 1e-9);
            cr_assert(mem_full || comp_full, "S=%g: B=%g is not maximal", S, B);
        } else {
            cr_assert_eq(k->batch_size, 1);
            cr_assert_gt(u, r->m_comp * (1 - 1e-9), "S=%g at the floor but one sample fits M_comp", S);
        }
        if (k->shape.tokens > prev_s) cr_assert_leq(k->batch_size, prev_b, "B grows with S at S=%g", S);
        prev_s = k->shape.tokens;
        prev_b = k->batch_size;
    }
}

Test(properties, dual_budgets_hold, .timeout = 120)
{
    const char *models[] = {"wan2.1-14b", "wan2.1-1.3b", "wan2.2-5b"};
    char *paths[2] = {tmp_generated("default", 20000, 21), tmp_generated("longtail", 8000, 22)};
    for (int mi = 0; mi < 3; mi++) {
        plan_model m = load_model(models[mi]);
        for (int d = 0; d < 2; d++) {
            plan_manifest *mf = read_manifest(paths[d], &m, 0);
            for (int cm = 0; cm < 2; cm++) {
                for (int ref = 0; ref < 3; ref++) {
                    plan_config c;
                    plan_config_default(&c);
                    c.comp_model = (plan_comp_model)cm;
                    c.comp_ref_pct = ref == 0 ? 50 : ref == 1 ? 10 : 90;
                    c.gpus = ref == 2 ? 4 : 16;
                    c.oversize_drop = 1;
                    c.assign = PLAN_ASSIGN_RANDOM;
                    plan_result *r = build(mf, &m, &c);
                    check_budgets(r);
                    plan_result_free(r);
                }
            }
            plan_manifest_free(mf);
        }
    }
    for (int d = 0; d < 2; d++) {
        unlink(paths[d]);
        free(paths[d]);
    }
}

Test(properties, compute_binds_on_every_preset)
{
    /* The goldens' premise: with the default budget compute binds somewhere on each preset. */
    const char *models[] = {"wan2.1-14b", "wan2.1-1.3b", "wan2.2-5b"};
    for (int mi = 0; mi < 3; mi++) {
        plan_model m = load_model(models[mi]);
        plan_manifest *mf = read_manifest(PLAN_SOURCE_DIR "/datasets/default.csv", &m, 0);
        plan_config c;
        plan_config_default(&c);
        c.assign = PLAN_ASSIGN_RANDOM;
        plan_result *r = build(mf, &m, &c);
        cr_expect_gt(r->n_bind[PLAN_BIND_COMPUTE], 0, "%s", models[mi]);
        cr_expect_gt(r->n_bind[PLAN_BIND_MEMORY], 0, "%s", models[mi]);
        plan_result_free(r);
        plan_manifest_free(mf);
    }
}
