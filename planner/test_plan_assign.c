/* test_plan_assign.c -- the assignments: LPT and Karmarkar-Karp worked by hand, the window
 * invariants (each window holds the random order's micro-batches; sorted-window deals them in
 * cost order one per rank per step; lpt and kk synchronize once per window), exact resume
 * (prefix + remainder = the whole plan, byte for byte, every policy and assignment) and ids
 * that are not valid UTF-8. Part of test_planner (ctest -R planner_unit).
 */
#include "test_helpers.h"

static const plan_cost unit_cost = {.alpha = 1.0}; /* C(S) = S seconds */

/* Five samples of 9, 8, 7, 6, 5 tokens (16-pixel-high images), one per micro-batch. */
static plan_result *five_items(plan_assign a, plan_manifest **mfo, char **path, const plan_model *m)
{
    *path = tmp_file("width,height,frames\n144,16,1\n128,16,1\n112,16,1\n96,16,1\n80,16,1\n");
    *mfo = read_manifest(*path, m, 1);
    plan_config c;
    plan_config_default(&c);
    c.policy = PLAN_POLICY_EQUAL_TOKEN;
    c.tok_budget = 9; /* B = floor(9 / S) = 1 for every S in 5..9 */
    c.cost = &unit_cost;
    c.gpus = 2;
    c.window = 3; /* 6 slots: one window */
    c.assign = a;
    return build(*mfo, m, &c);
}

static void rank_loads(const plan_result *r, double *l0, double *l1)
{
    *l0 = *l1 = 0;
    for (int64_t s = 0; s < r->steps; s++)
        for (int k = 0; k < 2; k++) {
            uint32_t i = r->slots[s * 2 + k];
            if (i != PLAN_IDLE) *(k ? l1 : l0) += plan_microbatch_cost(r, i);
        }
}

Test(assign, lpt_and_kk_by_hand)
{
    plan_model m = load_model("wan2.1-14b");
    plan_manifest *mf;
    char *p;
    /* LPT: 9 -> r0, 8 -> r1, 7 -> r1 (15), 6 -> r0 (15), 5 -> r0 (tie: the lower rank): 20 | 15. */
    plan_result *r = five_items(PLAN_ASSIGN_LPT, &mf, &p, &m);
    double a, b;
    rank_loads(r, &a, &b);
    cr_expect_eq(a, 20);
    cr_expect_eq(b, 15);
    cr_expect_eq(r->steps, 3); /* rank 0 runs 3 micro-batches, rank 1 two */
    cr_expect_eq(r->ngroups, 1);
    cr_expect_eq(r->metrics.sync_groups, 1);
    cr_expect_float_eq(r->metrics.epoch_seconds, 20, 1e-12);
    cr_expect_float_eq(r->metrics.epoch_idle_fraction, (20 - 17.5) / 20, 1e-12);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
    /* KK: 9-8 -> {9|8}; 7-6 -> {7|6}; 5 with {9|8} -> {13|9}; with {7|6} -> {19|16}. */
    r = five_items(PLAN_ASSIGN_KK, &mf, &p, &m);
    rank_loads(r, &a, &b);
    cr_expect_eq(a, 19);
    cr_expect_eq(b, 16);
    cr_expect_float_eq(r->metrics.epoch_seconds, 19, 1e-12);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
    /* sorted-window: steps {9, 8}, {6, 7} (dealt right to left), {5, idle}: 9 + 7 + 5. */
    r = five_items(PLAN_ASSIGN_SORTED_WINDOW, &mf, &p, &m);
    cr_assert_eq(r->steps, 3);
    cr_expect_float_eq(plan_microbatch_cost(r, r->slots[0]), 9, 0);
    cr_expect_float_eq(plan_microbatch_cost(r, r->slots[1]), 8, 0);
    cr_expect_float_eq(plan_microbatch_cost(r, r->slots[2]), 6, 0);
    cr_expect_float_eq(plan_microbatch_cost(r, r->slots[3]), 7, 0);
    cr_expect_float_eq(plan_microbatch_cost(r, r->slots[4]), 5, 0);
    cr_expect_eq(r->slots[5], PLAN_IDLE);
    cr_expect_float_eq(r->metrics.epoch_seconds, 21, 1e-12);
    cr_expect_null(r->group_first);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

/* The multiset of micro-batches per window equals the random order's. */
static void check_windows(const plan_result *rnd, const plan_result *r)
{
    int64_t R = r->cfg.gpus, per = r->cfg.window * R, n = r->nmicro;
    cr_assert_eq(rnd->nmicro, n);
    unsigned char *in = calloc((size_t)n, 1);
    cr_assert(in);
    int64_t step = 0;
    for (int64_t w = 0; w * per < n; w++) {
        int64_t lo = w * per, hi = lo + per < n ? lo + per : n;
        for (int64_t i = lo; i < hi; i++) in[rnd->slots[i]] = 1;
        int64_t got = 0, s_end = r->group_first ? (int64_t)r->group_first[w + 1] : step + (hi - lo + R - 1) / R;
        if (r->group_first) cr_assert_eq((int64_t)r->group_first[w], step);
        for (; step < s_end; step++)
            for (int64_t k = 0; k < R; k++) {
                uint32_t i = r->slots[step * R + k];
                if (i == PLAN_IDLE) continue;
                cr_assert(in[i], "window %lld holds micro-batch %u from another window", (long long)w, i);
                in[i] = 0;
                got++;
            }
        cr_assert_eq(got, hi - lo, "window %lld", (long long)w);
        if (r->cfg.assign == PLAN_ASSIGN_SORTED_WINDOW) {
            /* step maxima non-increasing inside the window */
            double prev = INFINITY;
            for (int64_t s = s_end - (hi - lo + R - 1) / R; s < s_end; s++) {
                double mx = 0;
                for (int64_t k = 0; k < R; k++)
                    if (r->slots[s * R + k] != PLAN_IDLE) mx = fmax(mx, plan_microbatch_cost(r, r->slots[s * R + k]));
                cr_assert_leq(mx, prev);
                prev = mx;
            }
        }
    }
    cr_assert_eq(step, r->steps);
    free(in);
}

Test(assign, windows_keep_the_random_sets, .timeout = 120)
{
    plan_model m = load_model("wan2.1-1.3b");
    char *p = tmp_generated("longtail", 6000, 9);
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config c;
    plan_config_default(&c);
    c.gpus = 5;
    c.window = 7;
    c.parallel = PLAN_PARALLEL_ZERO1; /* the same fixed bytes under every assignment */
    c.assign = PLAN_ASSIGN_RANDOM;
    plan_result *rnd = build(mf, &m, &c);
    double idle_rnd = rnd->metrics.epoch_idle_fraction;
    for (int a = PLAN_ASSIGN_SORTED_WINDOW; a < PLAN_NASSIGN; a++) {
        c.assign = (plan_assign)a;
        plan_result *r = build(mf, &m, &c);
        check_windows(rnd, r);
        check_plan(r, mf);
        cr_expect_eq(memcmp(r->order, rnd->order, (size_t)r->samples_planned * 4), 0, "%s reshuffled samples",
                     plan_assign_name(c.assign));
        cr_expect_lt(r->metrics.epoch_idle_fraction, idle_rnd, "%s", plan_assign_name(c.assign));
        cr_expect_eq(r->group_first != NULL, plan_assign_per_window(c.assign));
        plan_result_free(r);
    }
    plan_result_free(rnd);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

static char *write_steps(const plan_result *r, const plan_manifest *mf, int64_t first, int64_t count, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    cr_assert(f);
    cr_assert_eq(plan_write_plan(r, mf, f, first, count), PLAN_OK);
    fclose(f);
    /* The last line is the end record: *len counts the step lines only. */
    cr_assert(*len > 0 && buf[*len - 1] == '\n');
    size_t e = *len - 1;
    while (e > 0 && buf[e - 1] != '\n') e--;
    cr_assert_eq(strncmp(buf + e, "{\"end\":true,", 12), 0, "no end record");
    *len = e;
    return buf;
}

Test(resume, prefix_plus_remainder_is_the_plan, .timeout = 120)
{
    plan_model m = load_model("wan2.1-1.3b");
    char *p = tmp_generated("default", 3000, 4);
    plan_manifest *mf = read_manifest(p, &m, 1);
    for (int pol = 0; pol < 2; pol++) {
        for (int a = 0; a < PLAN_NASSIGN; a++) {
            plan_config c;
            plan_config_default(&c);
            c.policy = (plan_policy)pol;
            c.assign = (plan_assign)a;
            c.window = 3;
            c.gpus = 4;
            plan_result *r = build(mf, &m, &c);
            size_t nw, np, nr;
            char *whole = write_steps(r, mf, 0, -1, &nw);
            int64_t cuts[] = {0, 1, r->steps / 3, r->steps - 1, r->steps};
            for (int k = 0; k < 5; k++) {
                int64_t n = cuts[k];
                /* a fresh plan from the same inputs, as a resumed job would build it */
                plan_result *again = build(mf, &m, &c);
                char *pre = write_steps(r, mf, 0, n, &np), *rem = write_steps(again, mf, n, -1, &nr);
                cr_assert_eq(np + nr, nw, "%s/%s at %lld", plan_policy_name(c.policy), plan_assign_name(c.assign),
                             (long long)n);
                cr_assert_eq(memcmp(pre, whole, np), 0);
                cr_assert_eq(memcmp(rem, whole + np, nr), 0, "%s/%s: remainder from %lld differs",
                             plan_policy_name(c.policy), plan_assign_name(c.assign), (long long)n);
                free(pre);
                free(rem);
                plan_result_free(again);
            }
            /* Beyond the last step: refused. */
            char *buf = NULL;
            size_t len;
            FILE *f = open_memstream(&buf, &len);
            cr_expect_eq(plan_write_plan(r, mf, f, r->steps + 1, -1), PLAN_ERR_USAGE);
            fclose(f);
            free(buf);
            free(whole);
            plan_result_free(r);
        }
    }
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(plan_lines, windows_and_sync_flags)
{
    plan_model m = load_model("wan2.1-14b");
    plan_manifest *mf;
    char *p;
    plan_result *r = five_items(PLAN_ASSIGN_LPT, &mf, &p, &m);
    size_t n;
    char *out = write_steps(r, mf, 0, -1, &n);
    /* Three steps of one window; the ranks synchronize after the last one only. */
    cr_expect(strstr(out, "{\"step\":0,\"window\":0,\"sync\":false,") == out, "%s", out);
    cr_expect(strstr(out, "{\"step\":1,\"window\":0,\"sync\":false,") != NULL, "%s", out);
    cr_expect(strstr(out, "{\"step\":2,\"window\":0,\"sync\":true,") != NULL, "%s", out);
    free(out);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
    r = five_items(PLAN_ASSIGN_RANDOM, &mf, &p, &m);
    out = write_steps(r, mf, 0, -1, &n);
    cr_expect(strstr(out, "{\"step\":0,\"window\":null,\"sync\":true,") == out, "%s", out);
    free(out);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(plan_lines, ids_not_utf8_are_bad_input)
{
    plan_model m = load_model("wan2.1-14b");
    /* \xC3\x28 is an invalid 2-byte sequence; \xED\xA0\x80 a surrogate; \xC0\xAF overlong. */
    const char *bad[] = {"id,width,height,frames\nok,832,480,1\nbad\xC3\x28,832,480,1\n",
                         "id,width,height,frames\n\xED\xA0\x80,832,480,1\n",
                         "id,width,height,frames\n\xC0\xAF,832,480,1\n"};
    const char *where[] = {":3: column 1 (id): not valid UTF-8", ":2: column 1 (id)", ":2: column 1 (id)"};
    for (int i = 0; i < 3; i++) {
        char *p = tmp_file(bad[i]);
        plan_manifest *mf = NULL;
        plan_error err;
        cr_expect_eq(plan_manifest_read(p, &m, 1, &mf, &err), PLAN_ERR_INPUT, "case %d", i);
        cr_expect(strstr(err.msg, where[i]) != NULL, "%s", err.msg);
        unlink(p);
        free(p);
    }
    /* Valid multi-byte ids come out unchanged and parse as JSON. */
    char *p = tmp_file("id,width,height,frames\n\xC3\xA9t\xC3\xA9-\xE6\x97\xA5-\xF0\x9F\x8E\xA5,832,480,1\n");
    m = load_model("wan2.1-1.3b"); /* fits on one GPU */
    plan_manifest *mf = read_manifest(p, &m, 1);
    plan_config c;
    plan_config_default(&c);
    c.gpus = 1;
    plan_result *r = build(mf, &m, &c);
    size_t n;
    char *out = write_steps(r, mf, 0, -1, &n);
    json_error_t je;
    json_t *o = json_loads(out, JSON_DISABLE_EOF_CHECK, &je);
    cr_assert(o, "not JSON: %s", je.text);
    json_t *id = json_array_get(json_object_get(json_array_get(json_object_get(o, "ranks"), 0), "ids"), 0);
    cr_expect_str_eq(json_string_value(id), "\xC3\xA9t\xC3\xA9-\xE6\x97\xA5-\xF0\x9F\x8E\xA5");
    json_decref(o);
    free(out);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}
