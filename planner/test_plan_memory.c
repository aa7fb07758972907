/* test_plan_memory.c -- the memory model of issue 19: states per rank under --parallel (by
 * hand), lpt/kk keeping gradients unsharded, the profile's peak fit with per-sample and S^2
 * terms (recovered from synthetic rows, residuals, range), and the measured range that
 * clamps batches: a profile measured at batch 1 only (the e2e run that ran out of memory)
 * gives no micro-batch above batch 1, and on manifests the tests have not seen no planned
 * micro-batch exceeds the memory the model predicts. Part of test_planner.
 */
#include <math.h>

#include "test_helpers.h"

Test(memory, states_per_rank_by_hand)
{
    plan_model m = load_model("wan2.1-14b");
    double P = m.params, N = 16;
    cr_expect_float_eq(plan_state_bytes(&m, 16, PLAN_PARALLEL_DDP, 0), 16 * P, 1);
    cr_expect_float_eq(plan_state_bytes(&m, 16, PLAN_PARALLEL_ZERO1, 0), 4 * P + 12 * P / N, 1);
    cr_expect_float_eq(plan_state_bytes(&m, 16, PLAN_PARALLEL_ZERO2, 0), 2 * P + 14 * P / N, 1);
    cr_expect_float_eq(plan_state_bytes(&m, 16, PLAN_PARALLEL_ZERO3, 0), 16 * P / N, 1);
    cr_expect_float_eq(plan_state_bytes(&m, 16, PLAN_PARALLEL_ZERO3, 1), 2 * P + 14 * P / N, 1);
    cr_expect_float_eq(plan_state_bytes(&m, 16, PLAN_PARALLEL_MODEL, 0), 16 * P / N, 1); /* shard_states */
    cr_expect_float_eq(plan_model_fixed_bytes(&m, 16), 16 * P / N + (double)m.reserve_bytes, 1);
}

Test(memory, lpt_kk_keep_gradients_unsharded)
{
    plan_model m = load_model("wan2.1-1.3b");
    char *p = tmp_generated("default", 2000, 21);
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    c.gpus = 8;
    plan_result *sw = build(mf, &m, &c);
    cr_expect_eq(sw->unsharded_grads, 0);
    cr_expect_eq(sw->warnings & PLAN_WARN_UNSHARDED_GRADS, 0u);
    for (int a = PLAN_ASSIGN_LPT; a <= PLAN_ASSIGN_KK; a++) {
        c.assign = (plan_assign)a;
        c.parallel = PLAN_PARALLEL_MODEL;
        plan_result *r = build(mf, &m, &c);
        cr_expect_eq(r->unsharded_grads, 1);
        cr_expect(r->warnings & PLAN_WARN_UNSHARDED_GRADS);
        cr_expect_float_eq(r->fixed_bytes - sw->fixed_bytes, 2 * m.params * (1 - 1.0 / 8), 1);
        cr_expect_lt(r->m_mem_tokens, sw->m_mem_tokens);
        plan_result_free(r);
        c.parallel = PLAN_PARALLEL_ZERO1; /* gradients unsharded anyway: nothing to say */
        r = build(mf, &m, &c);
        cr_expect_eq(r->warnings & PLAN_WARN_UNSHARDED_GRADS, 0u);
        cr_expect_float_eq(r->fixed_bytes, plan_state_bytes(&m, 8, PLAN_PARALLEL_ZERO1, 0) + (double)m.reserve_bytes, 1);
        plan_result_free(r);
    }
    plan_result_free(sw);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

/* A profile from a known model: seconds = 0.3 + B (3e-4 S + 6e-9 S^2 + 0.05), peak = c0 + B
 * (bpt S + bps + bsq S^2), at the given batch sizes and token counts. */
static char *synthetic_profile(const int *bs, int nb, const int *ss, int ns, double c0, double bpt, double bps,
                               double bsq)
{
    char *t = malloc(4096);
    size_t n = (size_t)sprintf(t, "batch,tokens,seconds,peak_bytes,seconds_cv\n");
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < ns; j++) {
            double B = bs[i], S = ss[j];
            n += (size_t)sprintf(t + n, "%d,%d,%.17g,%.17g,%.3f\n", bs[i], ss[j],
                                 0.3 + B * (3e-4 * S + 6e-9 * S * S + 0.05), c0 + B * (bpt * S + bps + bsq * S * S),
                                 0.01 + 0.01 * j);
        }
    char *p = tmp_file(t);
    free(t);
    return p;
}

Test(memory, profile_fit_with_per_sample_and_attention_terms)
{
    const int bs[] = {1, 2, 4}, ss[] = {1560, 3600, 14040, 32760};
    char *p = synthetic_profile(bs, 3, ss, 4, 2e9, 500000, 3e8, 0.5);
    plan_cost c;
    plan_error err;
    cr_assert_eq(plan_cost_from_profile(p, &c, &err), PLAN_OK, "%s", err.msg);
    cr_expect_eq(c.mem_bytes_per_token, 500000);
    cr_expect_float_eq(c.mem_bytes_per_sample, 3e8, 1e3);
    cr_expect_float_eq(c.mem_bytes_per_token_sq, 0.5, 1e-6);
    cr_expect_float_eq(c.mem_intercept_bytes, 2e9, 1e4);
    cr_expect_lt(c.mem_fit_max_rel, 1e-6);
    cr_expect_lt(c.time_fit_max_rel, 1e-9);
    cr_expect_eq(c.range_s_min, 1560);
    cr_expect_eq(c.range_s_max, 32760);
    cr_expect_eq(c.range_batch_max, 4);
    cr_expect_eq(c.range_tokens_max, 4 * 32760);
    cr_expect_float_eq(c.seconds_cv, 0.025, 1e-12); /* median of 0.01, 0.02, 0.03, 0.04 per batch */
    unlink(p);
    free(p);
    /* one batch size: the per-sample term cannot be told from the intercept, it is not fitted */
    const int one[] = {1};
    p = synthetic_profile(one, 1, ss, 4, 2e9, 500000, 3e8, 0);
    cr_assert_eq(plan_cost_from_profile(p, &c, &err), PLAN_OK, "%s", err.msg);
    cr_expect_eq(c.mem_bytes_per_sample, 0);
    cr_expect_eq(c.range_batch_max, 1);
    unlink(p);
    free(p);
}

/* The truth of the synthetic GPU: bytes of a micro-batch of B samples of S tokens. */
static double truth(int64_t B, int64_t S) { return 2e9 + (double)B * (500000.0 * (double)S + 3e8); }

Test(memory, batch_one_profile_never_plans_above_what_was_measured)
{
    /* The e2e run: calibrated at batch 1 only, so the per-sample bytes hid in the intercept;
     * the old planner sized image buckets at hundreds of samples from bytes per token alone
     * and the first real step ran out of memory. Now the range clamps every bucket to B = 1. */
    const int one[] = {1}, ss[] = {1521, 3600, 14040, 32760, 75600, 112406};
    char *p = synthetic_profile(one, 1, ss, 6, 2e9, 500000, 3e8, 0);
    plan_cost prof;
    plan_error err;
    cr_assert_eq(plan_cost_from_profile(p, &prof, &err), PLAN_OK, "%s", err.msg);
    plan_model m = load_model("wan2.1-14b");
    char *mp = tmp_generated("default", 5000, 31);
    plan_manifest *mf = read_manifest(mp, &m, 0);
    plan_config c;
    plan_config_default(&c);
    c.cost = &prof;
    plan_result *r = build(mf, &m, &c);
    for (int64_t k = 0; k < r->nmicro; k++) {
        const plan_microbatch *mb = &r->micro[k];
        cr_assert_eq(mb->count, 1, "a micro-batch of %u samples: batch 1 is all that was measured", mb->count);
        cr_assert_leq(truth(mb->count, r->buckets[mb->bucket].shape.tokens), r->mem_usable - r->fixed_bytes + 2e9);
    }
    cr_expect(r->warnings & PLAN_WARN_RANGE_CLAMPED);
    cr_expect_gt(r->n_bind[PLAN_BIND_RANGE], 0);
    plan_result_free(r);
    c.extrapolate = 1; /* told otherwise: larger batches, and a warning says so */
    r = build(mf, &m, &c);
    cr_expect(r->warnings & PLAN_WARN_EXTRAPOLATED);
    int64_t bmax = 0;
    for (int64_t b = 0; b < r->nbuckets; b++)
        if (r->buckets[b].batch_size > bmax) bmax = r->buckets[b].batch_size;
    cr_expect_gt(bmax, 1);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(mp);
    free(mp);
    unlink(p);
    free(p);
}

Test(memory, unseen_manifests_stay_within_the_model, .timeout = 120)
{
    const int bs[] = {1, 2, 4, 8}, ss[] = {1560, 3600, 14040, 32760, 75600};
    char *p = synthetic_profile(bs, 4, ss, 5, 2e9, 500000, 3e8, 0.5);
    plan_cost prof;
    plan_error err;
    cr_assert_eq(plan_cost_from_profile(p, &prof, &err), PLAN_OK, "%s", err.msg);
    const char *kinds[] = {"default", "longtail", "default", "longtail"};
    const char *models[] = {"wan2.1-14b", "wan2.1-1.3b", "wan2.2-5b", "wan2.1-14b"};
    for (int d = 0; d < 4; d++) {
        plan_model m = load_model(models[d]);
        char *mp = tmp_generated(kinds[d], 7000, 1000 + (uint64_t)d); /* seeds no golden uses */
        plan_manifest *mf = read_manifest(mp, &m, 0);
        for (int a = 0; a < PLAN_NASSIGN; a++) {
            plan_config c;
            plan_config_default(&c);
            c.cost = &prof;
            c.assign = (plan_assign)a;
            c.gpus = 8;
            c.oversize_drop = 1;
            plan_result *r = build(mf, &m, &c);
            for (int64_t k = 0; k < r->nmicro; k++) {
                const plan_microbatch *mb = &r->micro[k];
                int64_t S = r->buckets[mb->bucket].shape.tokens;
                cr_assert_leq(plan_microbatch_bytes(r, mb->count, S), r->mem_room, "%s/%s", models[d],
                              plan_assign_name(c.assign));
                cr_assert_leq(mb->count, prof.range_batch_max);
                cr_assert(mb->count == 1 || (int64_t)mb->count * S <= prof.range_tokens_max);
            }
            cr_expect_eq(r->metrics.over_memory_microbatches, 0);
            cr_expect_float_eq(r->jitter_cv, 0.03, 1e-12); /* the profile's measured cv */
            plan_result_free(r);
        }
        plan_manifest_free(mf);
        unlink(mp);
        free(mp);
    }
    unlink(p);
    free(p);
}
