/* test_plan_io.c -- the readers: measured profiles (fits with a per-micro-batch overhead and
 * bytes per token, a byte-order mark, strict columns; the committed examples in
 * testdata/profiles), model files (activation setups; jansson's messages come out as one
 * line without control bytes) and the CSV reader's byte-order mark. Part of test_planner.
 */
#include "test_helpers.h"

static const char *prof(const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/planner/testdata/profiles/%s", PLAN_SOURCE_DIR, name);
    return path;
}

Test(profile, full_example_recovers_its_coefficients)
{
    plan_cost c;
    plan_error err;
    cr_assert_eq(plan_cost_from_profile(prof("example_full.csv"), &c, &err), PLAN_OK, "%s", err.msg);
    cr_expect_float_eq(c.overhead, 0.4, 1e-6);
    cr_expect_float_eq(c.alpha, 2.5e-4, 1e-9);
    cr_expect_float_eq(c.beta, 8e-9, 1e-13);
    cr_expect_float_eq(c.gamma, 0.02, 1e-6);
    cr_expect_eq(c.mem_bytes_per_token, 900000);
    cr_expect_float_eq(c.mem_intercept_bytes, 3.0e9, 1e3);
    cr_expect_eq(c.profile_points, 14);
    cr_expect_eq(c.from_profile, 1);
}

Test(profile, bom_and_crlf)
{
    plan_cost c;
    plan_error err;
    cr_assert_eq(plan_cost_from_profile(prof("example_bom.csv"), &c, &err), PLAN_OK, "%s", err.msg);
    cr_expect_eq(c.overhead, 0); /* one batch size: no t0 */
    cr_expect_float_eq(c.alpha, 2.5e-4, 1e-9);
    cr_expect_eq(c.mem_bytes_per_token, 0);
}

Test(profile, strict_rows_and_columns)
{
    const char *files[] = {"bad_unknown_column.csv", "bad_negative.csv", "bad_fraction_batch.csv"};
    const char *want[] = {":1: column 3: unknown column 'gpu'", ":3: column 2 (seconds): not a positive number",
                          ":3: column 1 (batch): not a positive whole number"};
    for (int i = 0; i < 3; i++) {
        plan_cost c;
        plan_error err;
        cr_expect_eq(plan_cost_from_profile(prof(files[i]), &c, &err), PLAN_ERR_INPUT, "%s", files[i]);
        cr_expect(strstr(err.msg, want[i]) != NULL, "%s", err.msg);
    }
    char *p = tmp_file("tokens,seconds,tokens\n1,2,1\n");
    plan_cost c;
    plan_error err;
    cr_expect_eq(plan_cost_from_profile(p, &c, &err), PLAN_ERR_INPUT);
    cr_expect(strstr(err.msg, "'tokens' appears twice") != NULL, "%s", err.msg);
    unlink(p);
    free(p);
    p = tmp_file("tokens,seconds,peak_bytes\n1000,1,5e9\n2000,2,5e9\n3000,3,5e9\n");
    cr_expect_eq(plan_cost_from_profile(p, &c, &err), PLAN_ERR_INPUT);
    cr_expect(strstr(err.msg, "does not grow") != NULL, "%s", err.msg);
    unlink(p);
    free(p);
}

Test(profile, drives_the_plan)
{
    /* The profile's bytes per token replace the setup's; its t0 enters every micro-batch. */
    plan_model m = load_model("wan2.1-14b");
    plan_cost c;
    plan_error err;
    cr_assert_eq(plan_cost_from_profile(prof("example_full.csv"), &c, &err), PLAN_OK, "%s", err.msg);
    char *p = tmp_generated("tiny", 0, 0);
    plan_manifest *mf = read_manifest(p, &m, 0);
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.cost = &c;
    cfg.assign = PLAN_ASSIGN_RANDOM;
    plan_result *r = build(mf, &m, &cfg);
    cr_expect_eq(r->bytes_per_token, 900000);
    cr_expect_eq(r->bpt_from_profile, 1);
    /* the fit's intercept (3.0e9: measured overhead above the states) joins the fixed bytes */
    cr_expect_float_eq(c.mem_intercept_bytes, 3.0e9, 1e3);
    cr_expect_float_eq(c.mem_bytes_per_sample, 0, 1e3);
    cr_expect_eq(r->m_mem_model, (int64_t)floor((150109880320.0 * 0.95 - 14283571200.0 - 6 * GIB - c.mem_intercept_bytes) / 900000));
    for (int64_t k = 0; k < r->nmicro; k++) {
        const plan_microbatch *mb = &r->micro[k];
        double want = 0.4 + mb->count * plan_cost_eval(&c, (double)r->buckets[mb->bucket].shape.tokens);
        cr_assert_float_eq(plan_microbatch_cost(r, k), want, 1e-12);
    }
    json_t *j = plan_summary_json(r, NULL);
    json_t *mm = json_object_get(j, "memory_model");
    cr_expect_str_eq(json_string_value(json_object_get(mm, "bytes_per_token_status")), "measured (profile)");
    json_t *b0 = json_array_get(json_object_get(j, "buckets"), 0);
    double eff = json_real_value(json_object_get(b0, "batch_efficiency"));
    cr_expect(eff > 0 && eff < 1, "batch efficiency %g", eff);
    json_decref(j);
    plan_result_free(r);
    plan_manifest_free(mf);
    unlink(p);
    free(p);
}

Test(model, jansson_messages_are_one_clean_line)
{
    /* jansson quotes the text near an error raw: a newline, an escape byte, DEL. */
    const char *texts[] = {"{\"name\": \"\\\n\"}", "[1\x1b[31m]", "{\"\x7f\x7f"};
    for (int i = 0; i < 3; i++) {
        char *p = tmp_file(texts[i]);
        plan_model m;
        plan_error err;
        cr_expect_eq(plan_model_load(p, &m, &err), PLAN_ERR_INPUT, "case %d", i);
        for (const char *c = err.msg; *c; c++)
            cr_assert((unsigned char)*c >= 0x20 && (unsigned char)*c != 0x7f, "case %d: control byte 0x%02x in '%s'", i,
                      (unsigned char)*c, err.msg);
        unlink(p);
        free(p);
    }
}

Test(model, activation_setups_are_strict)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/datasets/models/wan2.1-14b.json", PLAN_SOURCE_DIR);
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    cr_assert(o);
    struct {
        const char *key, *value, *want;
    } cases[] = {
        {"activation_default", "\"fp8\"", "'activation_default': must name one"},
        {"activations", "[]", "'activations': must be an array of 1 to 8"},
        {"activations", "[{\"name\": \"a\", \"bytes_per_token\": 5, \"status\": \"guessed\"}]", "'status' must be"},
        {"activations", "[{\"name\": \"a\", \"bytes_per_token\": 0, \"status\": \"measured\"}]", "'bytes_per_token'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *c = json_deep_copy(o);
        json_object_set_new(c, cases[i].key, json_loads(cases[i].value, JSON_DECODE_ANY, &je));
        char *text = json_dumps(c, 0);
        char *p = tmp_file(text);
        plan_model m;
        plan_error err;
        cr_expect_eq(plan_model_load(p, &m, &err), PLAN_ERR_INPUT, "case %zu", i);
        cr_expect(strstr(err.msg, cases[i].want) != NULL, "case %zu: %s", i, err.msg);
        unlink(p);
        free(p);
        free(text);
        json_decref(c);
    }
    json_decref(o);
}

Test(status, every_status_has_a_text)
{
    for (int s = PLAN_OK; s <= PLAN_ERR_NOMEM; s++)
        cr_expect(strcmp(plan_strerror((plan_status)s), "unknown status") != 0, "status %d", s);
    cr_expect_str_eq(plan_strerror(PLAN_ERR_NOMEM), "out of memory");
}

Test(model, old_format_loads_as_one_setup)
{
    /* One mem_bytes_per_token (the format before activation setups, as harness/e2e writes). */
    char path[1024];
    snprintf(path, sizeof path, "%s/datasets/models/wan2.1-1.3b.json", PLAN_SOURCE_DIR);
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    cr_assert(o);
    json_object_del(o, "activations");
    json_object_del(o, "activation_default");
    json_object_set_new(o, "mem_bytes_per_token", json_integer(300000));
    char *text = json_dumps(o, 0);
    char *p = tmp_file(text);
    plan_model m;
    plan_error err;
    cr_assert_eq(plan_model_load(p, &m, &err), PLAN_OK, "%s", err.msg);
    cr_expect_eq(m.nact, 1);
    cr_expect_str_eq(plan_model_act(&m, NULL)->name, "file");
    cr_expect_eq(plan_model_act(&m, NULL)->bytes_per_token, 300000);
    unlink(p);
    free(p);
    free(text);
    /* Both forms at once: refused. */
    json_t *full = json_load_file(path, 0, &je);
    json_object_set_new(full, "mem_bytes_per_token", json_integer(300000));
    text = json_dumps(full, 0);
    p = tmp_file(text);
    cr_expect_eq(plan_model_load(p, &m, &err), PLAN_ERR_INPUT);
    cr_expect(strstr(err.msg, "not both") != NULL, "%s", err.msg);
    unlink(p);
    free(p);
    free(text);
    json_decref(full);
    json_decref(o);
}
