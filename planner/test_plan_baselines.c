/* test_plan_baselines.c -- the strong baselines (verl's equal-size Karmarkar-Karp over its
 * stock workload, sort-by-length) worked by hand, the strongest baseline, the jitter-aware
 * idle against its closed form, and the epoch reshuffle. Part of test_planner (ctest -R
 * planner_unit).
 */
#include <math.h>

#include "test_helpers.h"

static const plan_cost unit_cost = {.alpha = 1.0}; /* C(S) = S seconds */

/* Five samples of 9, 8, 7, 6, 5 tokens, one per micro-batch, 2 ranks, one window. */
static plan_result *five(plan_assign a, plan_manifest **mfo, char **path, const plan_model *m)
{
    *path = tmp_file("width,height,frames\n144,16,1\n128,16,1\n112,16,1\n96,16,1\n80,16,1\n");
    *mfo = read_manifest(*path, m, 1);
    plan_config c;
    plan_config_default(&c);
    c.policy = PLAN_POLICY_EQUAL_TOKEN;
    c.tok_budget = 9;
    c.cost = &unit_cost;
    c.gpus = 2;
    c.window = 3;
    c.assign = a;
    return build(*mfo, m, &c);
}

static void done(plan_result *r, plan_manifest *mf, char *p)
{
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(baselines, verl_kk_by_hand)
{
    cr_expect_eq(plan_verl_workload(9), 24576.0 * 9 + 81);
    plan_model m = load_model("wan2.1-14b");
    plan_manifest *mf;
    char *p;
    /* Weights w(S) = 24576 S + S^2 in S order; groups {9,8} {7,6} {5,pad}: spreads 24593,
     * 24589, 122905. Merge {5,pad} with {9,8}: [5+8 | pad+9]; then with {7,6}: [5+8+6 |
     * 9+7+pad]. Each part in weight order: rank 0 runs 8, 6, 5; rank 1 9, 7, idle. */
    plan_result *r = five(PLAN_ASSIGN_VERL_KK, &mf, &p, &m);
    cr_assert_eq(r->steps, 3);
    double want[6] = {8, 9, 6, 7, 5, -1};
    for (int i = 0; i < 6; i++) {
        if (want[i] < 0) cr_expect_eq(r->slots[i], PLAN_IDLE);
        else cr_expect_float_eq(plan_microbatch_cost(r, r->slots[i]), want[i], 0, "slot %d", i);
    }
    cr_expect_null(r->group_first); /* a sync every step */
    cr_expect_float_eq(r->metrics.epoch_seconds, 9 + 7 + 5, 1e-12);
    done(r, mf, p);
    /* sort-by-length: 9, 8 | 7, 6 | 5, idle, dealt left to right. */
    r = five(PLAN_ASSIGN_SORT_LENGTH, &mf, &p, &m);
    double want2[6] = {9, 8, 7, 6, 5, -1};
    for (int i = 0; i < 6; i++) {
        if (want2[i] < 0) cr_expect_eq(r->slots[i], PLAN_IDLE);
        else cr_expect_float_eq(plan_microbatch_cost(r, r->slots[i]), want2[i], 0, "slot %d", i);
    }
    done(r, mf, p);
}

Test(baselines, verl_kk_equal_counts_and_strongest)
{
    plan_model m = load_model("wan2.1-1.3b");
    char *p = tmp_generated("longtail", 6000, 5);
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    c.gpus = 6;
    c.window = 5;
    c.assign = PLAN_ASSIGN_VERL_KK;
    plan_result *r = build(mf, &m, &c);
    /* Every full window: each rank runs exactly `window` micro-batches. */
    int64_t per = c.window * c.gpus, full = r->nmicro / per;
    for (int64_t w = 0; w < full; w++)
        for (int64_t k = 0; k < c.gpus; k++) {
            int64_t n = 0;
            for (int64_t s = w * c.window; s < (w + 1) * c.window; s++) n += r->slots[s * c.gpus + k] != PLAN_IDLE;
            cr_expect_eq(n, c.window, "window %lld rank %lld", (long long)w, (long long)k);
        }
    plan_result_free(r);
    c.assign = PLAN_ASSIGN_SORTED_WINDOW;
    r = build(mf, &m, &c);
    plan_baselines bl;
    plan_error err;
    cr_assert_eq(plan_build_baselines(mf, &m, &c, r, &bl, &err), PLAN_OK, "%s", err.msg);
    int best = plan_baseline_strongest(&bl);
    cr_assert(best >= 0);
    for (int k = 0; k < PLAN_NBASE; k++)
        cr_expect_geq(bl.r[best]->metrics.samples_per_s, bl.r[k]->metrics.samples_per_s);
    cr_expect_eq(bl.r[PLAN_BASE_VERL_KK]->cfg.policy, PLAN_POLICY_EQUAL_TOKEN);
    cr_expect_eq(bl.r[PLAN_BASE_VERL_KK]->m_tok, r->m_mem_tokens);
    cr_expect_eq(bl.r[PLAN_BASE_VERL_KK]->cfg.window, c.window);
    /* the strong baselines beat random assignment clearly */
    cr_expect_lt(bl.r[PLAN_BASE_VERL_KK]->metrics.epoch_idle_fraction,
                 bl.r[PLAN_BASE_TOK_MMEM]->metrics.epoch_idle_fraction * 0.7);
    plan_baselines_free(&bl);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(jitter, two_equal_ranks_closed_form)
{
    /* 4000 identical images, one per micro-batch, 2 ranks: every step has two equal loads, so
     * the noise-free idle is 0 and under lognormal noise of CV c (sigma^2 = ln(1 + c^2)) the
     * idle is E|X1 - X2|/2 / E max(X1, X2) ~ (sigma/sqrt(pi)) / (1 + sigma/sqrt(pi)). */
    size_t n = 4000, len = 0;
    char *text = malloc(20 + n * 12);
    len += (size_t)sprintf(text, "width,height,frames\n");
    for (size_t i = 0; i < n; i++) len += (size_t)sprintf(text + len, "160,16,1\n");
    char *p = tmp_file(text);
    free(text);
    plan_model m = load_model("wan2.1-14b");
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    c.policy = PLAN_POLICY_EQUAL_TOKEN;
    c.tok_budget = 10;
    c.cost = &unit_cost;
    c.gpus = 2;
    c.assign = PLAN_ASSIGN_RANDOM;
    c.jitter_cv = 0.05;
    plan_result *r = build(mf, &m, &c), *again = build(mf, &m, &c);
    double sig = sqrt(log1p(0.05 * 0.05)), g = sig / sqrt(3.14159265358979323846);
    cr_expect_float_eq(r->metrics.epoch_idle_fraction, 0, 1e-12);
    cr_expect_float_eq(r->metrics.jitter_epoch_idle_fraction, g / (1 + g), 0.05 * g / (1 + g));
    cr_expect_float_eq(r->metrics.jitter_samples_per_s, (double)n / (n / 2 * 10 * (1 + g)), 0.01 * n / (n / 2 * 10.0));
    cr_expect_eq(r->metrics.jitter_epoch_idle_fraction, again->metrics.jitter_epoch_idle_fraction, "not deterministic");
    plan_result_free(r);
    plan_result_free(again);
    c.jitter_cv = 0;
    r = build(mf, &m, &c);
    cr_expect(isnan(r->metrics.jitter_epoch_idle_fraction));
    plan_result_free(r);
    c.jitter_cv = -0.1;
    plan_error err;
    cr_expect_eq(plan_build(mf, &m, &c, &r, &err), PLAN_ERR_USAGE);
    cr_expect(strstr(err.msg, "--jitter-cv"));
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(epoch, reshuffles_and_epoch_zero_is_the_seed)
{
    plan_model m = load_model("wan2.1-1.3b");
    char *p = tmp_generated("default", 3000, 8);
    plan_manifest *mf = read_manifest(p, &m, 1);
    plan_config c;
    plan_config_default(&c);
    c.gpus = 4;
    plan_result *a = build(mf, &m, &c);
    c.epoch = 0;
    plan_result *b = build(mf, &m, &c);
    c.epoch = 1;
    plan_result *e1 = build(mf, &m, &c);
    c.epoch = 2;
    plan_result *e2 = build(mf, &m, &c);
    size_t n = (size_t)a->samples_planned * 4;
    cr_expect_eq(memcmp(a->order, b->order, n), 0);
    cr_expect_neq(memcmp(a->order, e1->order, n), 0, "epoch 1 did not reshuffle");
    cr_expect_neq(memcmp(e1->order, e2->order, n), 0, "epoch 2 = epoch 1");
    cr_expect_eq(e1->samples_planned, a->samples_planned);
    plan_result_free(a);
    plan_result_free(b);
    plan_result_free(e1);
    plan_result_free(e2);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(optimizer_steps, tied_window_keeps_what_each_step_sees)
{
    plan_model m = load_model("wan2.1-14b");
    char *p = tmp_generated("default", 20000, 41);
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    c.window = 8;
    c.grad_accum = 8; /* an optimizer step is a window: the same samples as the random order */
    plan_result *r = build(mf, &m, &c);
    plan_baselines bl;
    plan_error err;
    cr_assert_eq(plan_build_baselines(mf, &m, &c, r, &bl, &err), PLAN_OK, "%s", err.msg);
    const plan_metrics *a = &r->metrics, *b = &bl.r[PLAN_BASE_RANDOM]->metrics;
    cr_expect_eq(a->optimizer_steps, b->optimizer_steps);
    cr_expect_float_eq(a->opt_samples_cv, b->opt_samples_cv, 1e-12);
    cr_expect_float_eq(a->opt_distinct_shapes, b->opt_distinct_shapes, 1e-12);
    plan_baselines_free(&bl);
    plan_result_free(r);
    /* accumulation shorter than the window: sorted steps see fewer shapes, more uneven counts */
    c.grad_accum = 1;
    r = build(mf, &m, &c);
    cr_assert_eq(plan_build_baselines(mf, &m, &c, r, &bl, &err), PLAN_OK, "%s", err.msg);
    a = &r->metrics;
    b = &bl.r[PLAN_BASE_RANDOM]->metrics;
    cr_expect_eq(r->grad_accum, 1);
    cr_expect_lt(a->opt_distinct_shapes, b->opt_distinct_shapes / 2);
    cr_expect_gt(a->opt_samples_cv, b->opt_samples_cv);
    plan_baselines_free(&bl);
    plan_result_free(r);
    /* lpt/kk step once per window: the accumulation is the window */
    c.assign = PLAN_ASSIGN_LPT;
    c.oversize_drop = 1;
    c.grad_accum = 0;
    r = build(mf, &m, &c);
    cr_expect_eq(r->grad_accum, 8);
    cr_expect_eq(r->metrics.optimizer_steps, r->ngroups);
    plan_result_free(r);
    c.grad_accum = 4;
    cr_expect_eq(plan_build(mf, &m, &c, &r, &err), PLAN_ERR_USAGE);
    cr_expect(strstr(err.msg, "--grad-accum 4"), "%s", err.msg);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}
