/* test_run_files.c -- Criterion tests of the run-file readers (ada_run_files): the one
 * benchmark-name parser (forward and backward names, peers, graphs, the fused op's sites,
 * what is not a kernel name), meta.json under both hash names, the machine fingerprint's verdicts, and the
 * copy ceiling that every % of copy of a run (ours and the peers') is against. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "run_bench.h"
#include "run_meta.h"
#include "run_name.h"
#include "test_tmpdir.h"

Test(names, forward_backward_peers_graphs)
{
    ada_bench_name b;
    cr_assert_eq(ada_bench_name_parse("lnmod_fwd/dtile/bf16-f32-bf16/sample/D3072/rows32760", &b), 0);
    cr_expect_str_eq(b.op, "lnmod_fwd");
    cr_expect_str_eq(b.dir, "fwd");
    cr_expect_str_eq(b.variant, "dtile");
    cr_expect_str_eq(b.x, "bf16");
    cr_expect_str_eq(b.mod, "f32");
    cr_expect_str_eq(b.y, "bf16");
    cr_expect_str_eq(b.layout, "sample");
    cr_expect_eq(b.D, 3072);
    cr_expect_eq(b.rows, 32760);
    cr_expect_eq(b.graph, 0);
    cr_expect_str_eq(b.shape, "bf16-f32-bf16/sample/D3072/rows32760");
    cr_expect_str_eq(b.slice, "bf16-f32-bf16/sample/rows32760");
    cr_assert_eq(ada_bench_name_parse("lnmod_bwd/dtile/f16-f16-f16/token/D1536/rows1560/graph20", &b), 0);
    cr_expect_str_eq(b.dir, "bwd");
    cr_expect_eq(b.graph, 20);
    cr_expect_str_eq(b.shape, "f16-f16-f16/token/D1536/rows1560/graph20");
    cr_expect_eq(b.batch, 1);
    /* Several samples: /B<B> after rows, before /graph<K>; its own sweep slice. */
    cr_assert_eq(ada_bench_name_parse("lnmod_bwd/dtile/bf16-f32-bf16/sample/D1536/rows65520/B2", &b), 0);
    cr_expect_eq(b.batch, 2);
    cr_expect_eq(b.rows, 65520);
    cr_expect_str_eq(b.shape, "bf16-f32-bf16/sample/D1536/rows65520/B2");
    cr_expect_str_eq(b.slice, "bf16-f32-bf16/sample/rows65520/B2");
    cr_assert_eq(ada_bench_name_parse("lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows4096/B4/graph7", &b), 0);
    cr_expect_eq(b.batch, 4);
    cr_expect_eq(b.graph, 7);
    cr_assert_eq(ada_bench_name_parse("lnmod_fwd/torch_compile/f32-f32-f32/frame/D5120/rows75600", &b), 0);
    cr_expect(ada_bench_name_is_peer(b.variant));
    cr_expect(!ada_bench_name_is_peer("dtile"));
    cr_expect(ada_bench_name_is_peer("peer:mine"), "a --peer callable is a peer");
    cr_expect(!ada_bench_name_is_peer("plugin:mine"), "a plug-in is a kernel variant, not a peer");
    const char *bad[] = {"copy/bytes1024", "cpu/reference/x", "lnmod_fwd/dtile", "lnmod_fwd/dtile/bf16-f32-bf16/sample/D0/rows1",
                         "lnmod_fwd/dtile/bf16-f32-bf16/sample/D12/rows4/extra/x", "lnmod_fwd//bf16-f32-bf16/sample/D1/rows1",
                         "lnmod_fwd/dtile/bf16-f32/sample/D1/rows1", "lnmod_fwd/dtile/bf16-f32-bf16/sample/Dx/rows1",
                         "lnmod_side/dtile/bf16-f32-bf16/sample/D1/rows1", "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1/rows1/graph",
                         "lnmod_fwd/dtile/bf16-f32-bf16/sample/D8/rows6/B1", "lnmod_fwd/dtile/bf16-f32-bf16/sample/D8/rows7/B2",
                         "lnmod_fwd/dtile/bf16-f32-bf16/sample/D8/rows8/graph3/B2", "lnmod_fwd/dtile/bf16-f32-bf16/sample/D8/rows8/B"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) cr_expect_eq(ada_bench_name_parse(bad[i], &b), -1, "%s", bad[i]);
}

/* The fused gated residual op's names (issue 22): four dtypes, the direction from the end of
 * the op, and no mixing of the two forms. */
Test(names, residual_op)
{
    ada_bench_name b;
    cr_assert_eq(ada_bench_name_parse("lnmod_res_bwd/dtile/f32-bf16-f32-bf16/sample/D5120/rows65520/B2", &b), 0);
    cr_expect_str_eq(b.op, "lnmod_res_bwd");
    cr_expect_str_eq(b.dir, "bwd");
    cr_expect_eq(b.res, 1);
    cr_expect_str_eq(b.x, "f32");
    cr_expect_str_eq(b.branch, "bf16");
    cr_expect_str_eq(b.mod, "f32");
    cr_expect_str_eq(b.y, "bf16");
    cr_expect_eq(b.D, 5120);
    cr_expect_eq(b.batch, 2);
    cr_expect_str_eq(b.shape, "f32-bf16-f32-bf16/sample/D5120/rows65520/B2");
    cr_assert_eq(ada_bench_name_parse("lnmod_res_fwd/torch_compile/f32-bf16-f32-bf16/sample/D1536/rows32760", &b), 0);
    cr_expect_str_eq(b.dir, "fwd");
    cr_expect(ada_bench_name_is_peer(b.variant));
    cr_assert_eq(ada_bench_name_parse("lnmod_fwd/dtile/bf16-f32-bf16/sample/D3072/rows32760", &b), 0);
    cr_expect_eq(b.res, 0, "an lnmod name is not the residual op's");
    cr_expect_str_eq(b.branch, "");
    const char *bad[] = {"lnmod_res_fwd/dtile/bf16-f32-bf16/sample/D8/rows8", "lnmod_fwd/dtile/f32-bf16-f32-bf16/sample/D8/rows8",
                         "lnmod_res_fwd/dtile/f32-bf16-f32-bf16-f32/sample/D8/rows8", "lnmod_res/dtile/f32-bf16-f32-bf16/sample/D8/rows8",
                         "lnmod_res_side/dtile/f32-bf16-f32-bf16/sample/D8/rows8"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) cr_expect_eq(ada_bench_name_parse(bad[i], &b), -1, "%s", bad[i]);
}

/* Wan's residual sites in the fused op's names: /site1 or /site2 right after the layout, none
 * for site 3 (the names of the runs before the sites); the site in the shape and the slice, so
 * report keys and sweep slices of the sites stay apart; lnmod names have no site. */
Test(names, residual_sites)
{
    ada_bench_name b;
    cr_assert_eq(ada_bench_name_parse("lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/site1/D1536/rows32760", &b), 0);
    cr_expect_eq(b.site, 1);
    cr_expect_eq(b.res, 1);
    cr_expect_str_eq(b.layout, "sample");
    cr_expect_eq(b.D, 1536);
    cr_expect_eq(b.rows, 32760);
    cr_expect_str_eq(b.shape, "f32-bf16-f32-bf16/sample/site1/D1536/rows32760");
    cr_expect_str_eq(b.slice, "f32-bf16-f32-bf16/sample/site1/rows32760");
    cr_assert_eq(ada_bench_name_parse("lnmod_res_bwd/torch_compile/f32-bf16-f32-bf16/sample/site2/D5120/rows65520/B2/graph3", &b),
                 0);
    cr_expect_eq(b.site, 2);
    cr_expect_str_eq(b.dir, "bwd");
    cr_expect_eq(b.D, 5120);
    cr_expect_eq(b.batch, 2);
    cr_expect_eq(b.graph, 3);
    cr_expect_str_eq(b.slice, "f32-bf16-f32-bf16/sample/site2/rows65520/B2");
    cr_assert_eq(ada_bench_name_parse("lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/D1536/rows32760", &b), 0);
    cr_expect_eq(b.site, 3, "a fused-op name without a site part is site 3");
    cr_expect_str_eq(b.slice, "f32-bf16-f32-bf16/sample/rows32760");
    cr_assert_eq(ada_bench_name_parse("lnmod_bwd/dtile/bf16-f32-bf16/sample/D1536/rows32760", &b), 0);
    cr_expect_eq(b.site, 0, "lnmod names have no site");
    const char *bad[] = {"lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/site3/D8/rows8",
                         "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/site0/D8/rows8",
                         "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/site4/D8/rows8",
                         "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/siteX/D8/rows8",
                         "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/site12/D8/rows8",
                         "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/site/D8/rows8",
                         "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/site1/site2/D8/rows8",
                         "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/site1/rows8",
                         "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/D8/site1/rows8",
                         "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/D8/rows8/site1",
                         "lnmod_fwd/dtile/bf16-f32-bf16/sample/site1/D8/rows8",
                         "lnmod_bwd/dtile/bf16-f32-bf16/sample/site2/D8/rows8"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) cr_expect_eq(ada_bench_name_parse(bad[i], &b), -1, "%s", bad[i]);
}

static void meta_of(const char *text, ada_run_meta *m)
{
    json_error_t e;
    json_t *o = json_loads(text, 0, &e);
    cr_assert_not_null(o, "%s", e.text);
    cr_assert_eq(ada_run_meta_from_json(o, m), 0);
    json_decref(o);
}

Test(meta, both_hash_names)
{
    ada_run_meta a, b;
    meta_of("{\"git_sha\": \"abc\", \"git_dirty\": true, \"kernel_source_hash\": \"h1\", \"kernel_source_hash_v2\": \"h2\"}", &a);
    meta_of("{\"kernel_hash_v1\": \"h1\", \"kernel_hash_v2\": \"h2\", \"kind\": \"bench\"}", &b);
    cr_expect_str_eq(a.kernel_hash_v1, "h1");
    cr_expect_str_eq(a.kernel_hash_v2, "h2");
    cr_expect_str_eq(b.kernel_hash_v1, "h1");
    cr_expect_str_eq(b.kernel_hash_v2, "h2");
    cr_expect_eq(a.git_dirty, 1);
    cr_expect_eq(b.git_dirty, -1);
    cr_expect_str_eq(b.git_sha, "unknown");
    cr_expect(ada_run_same_code(&a, &b));
    ada_run_meta_free(&a);
    ada_run_meta_free(&b);
    /* A slowed build of the same sources is other code. */
    meta_of("{\"kernel_hash_v1\": \"h1\", \"sysinfo\": {\"build\": {\"slow_variant_build\": false}}}", &a);
    meta_of("{\"kernel_hash_v1\": \"h1\", \"sysinfo\": {\"build\": {\"slow_variant_build\": true}}}", &b);
    cr_expect(!ada_run_same_code(&a, &b));
    ada_run_meta_free(&a);
    ada_run_meta_free(&b);    /* An explore build: the same sources with a -D switch is other code; a run that records no
     * flags reads as one built without any. */
    meta_of("{\"kernel_hash_v1\": \"h1\", \"sysinfo\": {\"build\": {\"cuda_flags\": \"\"}}}", &a);
    meta_of("{\"kernel_hash_v1\": \"h1\", \"sysinfo\": {\"build\": {\"cuda_flags\": \"-DADALOAD_EXPLORE_GROUP=1\"}}}", &b);
    cr_expect(!ada_run_same_code(&a, &b));
    ada_run_meta_free(&b);
    meta_of("{\"kernel_hash_v1\": \"h1\", \"sysinfo\": {\"build\": {}}}", &b);
    cr_expect(ada_run_same_code(&a, &b));
    ada_run_meta_free(&b);
    meta_of("{\"kernel_hash_v1\": \"h1\", \"sysinfo\": {\"build\": {\"c_flags\": \"-DX\"}}}", &b);
    cr_expect(!ada_run_same_code(&a, &b));
    ada_run_meta_free(&a);
    ada_run_meta_free(&b);
}

Test(meta, fingerprint)
{
    ada_run_meta a, b;
    const char *sys = "{\"sysinfo\": {\"host\": \"vm\", \"cuda\": {\"driver_cuda_version\": \"13.0\", \"devices\": "
                      "[{\"name\": \"NVIDIA H200\", \"max_sm_clock_mhz\": 1980, \"max_mem_clock_mhz\": 3201}]}}}";
    meta_of(sys, &a); /* an old run: the facts of its sysinfo */
    cr_expect_str_eq(a.fp.gpu, "NVIDIA H200");
    cr_expect_eq(a.fp.sm_clock_mhz, 1980);
    meta_of(sys, &b);
    char why[256];
    cr_expect_eq(ada_run_fp_differs(&a.fp, &b.fp, why, sizeof why), 0, "%s", why);
    a.fp.copy_gbps = 3930;
    b.fp.copy_gbps = 3900; /* within 2% */
    cr_expect_eq(ada_run_fp_differs(&a.fp, &b.fp, why, sizeof why), 0, "%s", why);
    b.fp.copy_gbps = 3700;
    cr_expect_eq(ada_run_fp_differs(&a.fp, &b.fp, why, sizeof why), 1);
    cr_expect(strstr(why, "copy bandwidth") != NULL, "%s", why);
    ada_run_meta_free(&b);
    meta_of("{\"fingerprint\": {\"gpu\": \"NVIDIA H200\", \"gpu_uuid\": \"GPU-2\", \"sm_clock_mhz\": 1980}}", &b);
    ada_run_meta c;
    meta_of("{\"fingerprint\": {\"gpu\": \"NVIDIA H200\", \"gpu_uuid\": \"GPU-1\", \"sm_clock_mhz\": 1980}}", &c);
    cr_expect_eq(ada_run_fp_differs(&c.fp, &b.fp, why, sizeof why), 1);
    cr_expect(strstr(why, "GPU UUID GPU-1 -> GPU-2") != NULL, "%s", why);
    cr_expect_eq(ada_run_fp_differs(&a.fp, &b.fp, why, sizeof why), 0, "a fact one run lacks does not count: %s", why);
    ada_run_meta_free(&a);
    ada_run_meta_free(&b);
    ada_run_meta_free(&c);
}

/* The ceiling: the median of our copy's repetitions (3, 6, 4 TB/s: 4, not their mean),
 * never an aggregate of the file, never a copy that failed, 0 for a copy the run does not have. */
Test(ceiling, median_of_our_copy)
{
    test_tmp_make("ceil");
    const char *it = "{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"%s\", \"real_time\": 1, "
                     "\"time_unit\": \"us\", \"bytes_per_second\": %g%s}";
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "{\"benchmarks\": [");
    const char *c = "copy/bytes4000000";
    const double bw[] = {3e12, 6e12, 4e12};
    for (int i = 0; i < 3; i++) {
        n += (size_t)snprintf(text + n, sizeof text - n, it, c, c, "iteration", bw[i], "");
        n += (size_t)snprintf(text + n, sizeof text - n, ",");
    }
    n += (size_t)snprintf(text + n, sizeof text - n, it, "copy/bytes4000000_median", c, "aggregate", 9e12, "");
    n += (size_t)snprintf(text + n, sizeof text - n, ",");
    n += (size_t)snprintf(text + n, sizeof text - n, it, "copy/bytes8", "copy/bytes8", "iteration", 1e12,
                          ", \"error_occurred\": true, \"error_message\": \"x\"");
    snprintf(text + n, sizeof text - n, "]}");
    test_tmp_put("bench.json", text);
    char p[128], err[256];
    snprintf(p, sizeof p, "%s/bench.json", test_tmpdir);
    ada_bench_set s = {0};
    cr_assert_eq(ada_bench_load_file(p, &s, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(ada_bench_copy_ceiling(&s, c), 4e12, 1);
    cr_expect_eq(ada_bench_copy_ceiling(&s, "copy/bytes8"), 0);
    cr_expect_eq(ada_bench_copy_ceiling(&s, "copy/bytes16"), 0);
    cr_expect_eq(ada_bench_copy_ceiling(&s, NULL), 0);
    ada_bench_set_free(&s);
    test_tmp_remove();
}
