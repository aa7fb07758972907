/* test_bench_cli.c -- Criterion tests of `adaload bench` and `adaload report` through the
 * real program (ADALOAD_EXE, set by tests_bench.cmake):
 *   - the quick set runs here: exit 0, the run folder holds meta.json, bench.json and both
 *     custom files, all strict JSON (Jansson rejects NaN/Infinity), finite values, stable
 *     names (no Google Benchmark decorations), the CPU reference benchmark present, and
 *     every GPU benchmark either run without error or listed as skipped by name;
 *   - bad usage exits 2; --list-shapes gives the shape table;
 * *   - report on a synthetic run folder (ours + peers) prints the expected row;
 *   - report: failed peers ("failed", the bars' rules), wrong ones, the user's own --peer rows;
 *   - report: the fused residual op's table and bar (lnmod_res_fwd/lnmod_res_bwd);
 *   - report: issue 21's layout and dtype bar (per token, per frame, fp16 and fp32 x);
 *   - report --sweep prints the sweep table, writes the SVG where --out says, refuses the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "test_tmpdir.h"

extern char **environ;


TestSuite(bench_cli, .fini = test_tmp_remove);
TestSuite(report_cli, .fini = test_tmp_remove);

/* Runs adaload with args, stdout to out_path; returns the exit status. */
static int run_adaload(char *const args[], const char *out_path)
{
    char *argv[32];
    int k = 0;
    argv[k++] = ADALOAD_EXE;
    for (int i = 0; args[i] && k < 31; i++) argv[k++] = args[i];
    argv[k] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "cannot start %s", argv[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) cr_assert_eq(errno, EINTR);
    cr_assert(WIFEXITED(st), "adaload died");
    return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static json_t *load_strict(const char *dir, const char *file)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    json_error_t e;
    json_t *j = json_load_file(p, 0, &e);
    cr_assert_not_null(j, "%s: %s (line %d)", p, e.text, e.line);
    return j;
}

static void check_custom(json_t *arr, const char *unit)
{
    cr_assert(json_is_array(arr));
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        cr_assert(json_is_string(json_object_get(e, "name")));
        cr_assert_str_eq(json_string_value(json_object_get(e, "unit")), unit);
        double v = json_number_value(json_object_get(e, "value"));
        cr_assert(isfinite(v) && v > 0, "value %g", v);
    }
}

Test(bench_cli, quick_set_writes_a_complete_run_folder, .timeout = 600)
{
    test_tmp_make("bench");
    char out[128], log[128];
    snprintf(out, sizeof out, "%s/run", test_tmpdir);
    snprintf(log, sizeof log, "%s/stdout.txt", test_tmpdir);
    char *args[] = {"bench", "--set", "quick", "--out", out, NULL};
    int rc = run_adaload(args, log);
    const char *text = slurp(log);
    cr_assert_eq(rc, 0, "exit %d\n%s", rc, text);

    json_t *meta = load_strict(out, "meta.json");
    json_decref(meta);
    json_t *bench = load_strict(out, "bench.json");
    json_t *benchmarks = json_object_get(bench, "benchmarks");
    cr_assert(json_is_array(benchmarks) && json_array_size(benchmarks) > 0);
    int saw_ref = 0, gpu_ran = 0;
    size_t i;
    json_t *b;
    json_array_foreach(benchmarks, i, b) {
        const char *name = json_string_value(json_object_get(b, "name"));
        cr_assert_not_null(name);
        cr_assert_null(strstr(name, "manual_time"), "decorated name %s", name);
        cr_assert_null(strstr(name, "repeats:"), "decorated name %s", name);
        cr_assert(!json_is_true(json_object_get(b, "error_occurred")), "%s failed: %s", name,
                  json_string_value(json_object_get(b, "error_message")));
        saw_ref |= !strncmp(name, "cpu/ref_lnmod_fwd/", 18);
        if (!strncmp(name, "lnmod_fwd/", 10)) {
            gpu_ran = 1;
            cr_assert_not_null(json_object_get(b, "pct_copy_bw"), "%s: no pct_copy_bw", name);
            cr_assert_not_null(json_object_get(b, "sm_clock_mhz"), "%s: no sm_clock_mhz", name);
        }
    }
    cr_assert(saw_ref, "no CPU reference benchmark in bench.json");
    /* Without a GPU every GPU benchmark is named as skipped. */
    if (!gpu_ran) {
        cr_assert_not_null(strstr(text, "skipped ("), "%s", text);
        cr_assert_not_null(strstr(text, ": lnmod_fwd/"), "%s", text);
        cr_assert_not_null(strstr(text, ": copy/bytes"), "%s", text);
    }
    json_decref(bench);

    json_t *small = load_strict(out, "customSmallerIsBetter.json");
    json_t *big = load_strict(out, "customBiggerIsBetter.json");
    check_custom(small, "us");
    check_custom(big, "GB/s");
    cr_assert(json_array_size(small) > 0);
    json_decref(small);
    json_decref(big);

    /* A run folder is never edited: a second run into it is refused. */
    cr_assert_eq(run_adaload(args, log), 2);

    /* compare of a run with itself: no regression (a benchmark with 3 repetitions cannot be
     * judged: exit 4 says so, never 1). */
    char *cmp[] = {"compare", out, out, NULL};
    int crc = run_adaload(cmp, log);
    cr_assert(crc == 0 || crc == 4, "exit %d: %s", crc, slurp(log));
    cr_assert_not_null(strstr(slurp(log), "\n0 slower, 0 faster, "), "%s", slurp(log));
}

Test(bench_cli, bad_usage_exits_2)
{
    test_tmp_make("bench");
    char log[128];
    snprintf(log, sizeof log, "%s/stdout.txt", test_tmpdir);
    char *a1[] = {"bench", "--set", "nope", NULL};
    cr_assert_eq(run_adaload(a1, log), 2);
    char *a2[] = {"bench", "--repetitions", "0", NULL};
    cr_assert_eq(run_adaload(a2, log), 2);
    char *a3[] = {"bench", "--filter", "(", NULL};
    cr_assert_eq(run_adaload(a3, log), 2);
    char *a4[] = {"bench", "--bogus", NULL};
    cr_assert_eq(run_adaload(a4, log), 2);
    char *a5[] = {"report", NULL};
    cr_assert_eq(run_adaload(a5, log), 2);
}

Test(bench_cli, list_shapes_wan)
{
    test_tmp_make("bench");
    char log[128];
    snprintf(log, sizeof log, "%s/shapes.json", test_tmpdir);
    char *a[] = {"bench", "--list-shapes", "--set", "wan", NULL};
    cr_assert_eq(run_adaload(a, log), 0);
    json_error_t e;
    json_t *j = json_load_file(log, 0, &e);
    cr_assert_not_null(j, "%s", e.text);
    /* 3 hidden sizes x (8 bf16 token counts + two 81-frame clips in one call + 2 fp32 long
     * clips), then per token, per frame and fp16 at 5 bar widths (480p) and 3 Wan widths
     * (720p), fp32 at 2048 and 4096; the fused residual op's 3 x 3 at site 3 and 3 each at
     * sites 1 and 2 (op "lnmod_res"). */
    cr_assert_eq(json_array_size(j), 33 + 3 * (5 + 3) + 2 + 9 + 6);
    int found = 0, sites[4] = {0};
    size_t i;
    json_t *s;
    json_array_foreach(j, i, s) {
        const char *suffix = json_string_value(json_object_get(s, "suffix"));
        json_int_t site = json_integer_value(json_object_get(s, "site"));
        if (site >= 1 && site <= 3) sites[site]++;
        if (!strcmp(suffix, "f32-bf16-f32-bf16/sample/site2/D3072/rows32760")) { /* no gate */
            found |= 4;
            cr_assert(json_is_false(json_object_get(s, "gate")));
            cr_assert_eq(site, 2);
        }
        found |= !strcmp(suffix, "bf16-f32-bf16/sample/D5120/rows32760");
        if (!strcmp(suffix, "bf16-f32-bf16/sample/D5120/rows65520/B2")) { /* two samples */
            found |= 2;
            cr_assert_eq(json_integer_value(json_object_get(s, "rows_per_sample")), 32760);
            cr_assert_eq(json_integer_value(json_object_get(s, "mod_rows")), 2);
        }
        /* 1,560 tokens x 1536 x (2 + 2) bytes + 2 x 1536 x 4 = 9,596,928 bytes: graph of 7. */
        if (!strcmp(suffix, "bf16-f32-bf16/sample/D1536/rows1560/graph7"))
            cr_assert_eq(json_integer_value(json_object_get(s, "min_bytes")), 9596928);
        cr_assert_eq(json_integer_value(json_object_get(s, "mod_stride")),
                     6 * json_integer_value(json_object_get(s, "D")));
    }
    cr_assert_eq(found, 7);
    cr_assert_eq(sites[1], 3);
    cr_assert_eq(sites[2], 3);
    cr_assert_eq(sites[3], 9);
    json_decref(j);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void gb_entry(FILE *f, const char *name, double us, double bps, double pct, int first)
{
    fprintf(f, "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
               "\"repetitions\": 1, \"repetition_index\": 0, \"iterations\": 5, \"real_time\": %g, "
               "\"cpu_time\": 1, \"time_unit\": \"us\", \"bytes_per_second\": %g, \"pct_copy_bw\": %g}\n",
            first ? "" : ",", name, name, us, bps, pct);
}

/* A Google Benchmark JSON file dir/file opened for gb_entry/gb_raw lines, and closed. */
static FILE *gb_open(const char *dir, const char *file)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "%s", p);
    fprintf(f, "{\"context\": {}, \"benchmarks\": [\n");
    return f;
}

static void gb_close(FILE *f)
{
    fprintf(f, "]}\n");
    fclose(f);
}

Test(report_cli, table_from_synthetic_run)
{
    test_tmp_make("bench");
    char p[256];
    FILE *f = gb_open(test_tmpdir, "bench.json");
    gb_entry(f, "copy/bytes1000", 40, 25e9, 100, 1);
    gb_entry(f, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D5120/rows32760", 100, 4.0e12, 93.5, 0);
    gb_entry(f, "lnmod_fwd/naive/bf16-f32-bf16/sample/D5120/rows32760", 400, 1.0e12, 23.4, 0);
    /* Below the bar (fp32 x needs 85%) and without peers. */
    gb_entry(f, "lnmod_fwd/dtile/f32-f32-f32/sample/D1536/rows75600", 300, 3.5e12, 80.0, 0);
    gb_close(f);
    f = gb_open(test_tmpdir, "peers.json");
    gb_entry(f, "lnmod_fwd/torch_compile/bf16-f32-bf16/sample/D5120/rows32760", 250, 1.6e12, 37, 1);
    gb_entry(f, "lnmod_fwd/torch_eager/bf16-f32-bf16/sample/D5120/rows32760", 800, 0.5e12, 12, 0);
    gb_close(f);
    snprintf(p, sizeof p, "%s/meta.json", test_tmpdir);
    write_file(p, "{\"machine\": {\"cuda\": {\"devices\": [{\"name\": \"NVIDIA H200\"}]}}}\n");

    char log[128];
    snprintf(log, sizeof log, "%s/report.md", test_tmpdir);
    char *a[] = {"report", test_tmpdir, NULL};
    cr_assert_eq(run_adaload(a, log), 0);
    const char *text = slurp(log);
    cr_assert_not_null(strstr(text, "NVIDIA H200"), "%s", text);
    cr_assert_not_null(strstr(text, "| bf16-f32-bf16/sample/D5120/rows32760 | dtile | 100.0 | 4.00 | 93.5% | 2.50× | 8.00× |"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "| naive | 400.0 | 1.00 | 23.4% | 0.62× | 2.00× |"), "%s", text);
    cr_assert_null(strstr(text, "| torch_"), "peers are columns, not rows:\n%s", text);
    cr_assert_not_null(strstr(text, "1 of 2 shapes meet it"), "%s", text);
    cr_assert_not_null(strstr(text, "bar missed: f32-f32-f32/sample/D1536/rows75600: 80.0% of copy (needs 85%)"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "| f32-f32-f32/sample/D1536/rows75600 | dtile | 300.0 | 3.50 | 80.0% | — | — |"),
                       "%s", text);

    char *b[] = {"report", test_tmpdir, "--variant", "naive", NULL};
    cr_assert_eq(run_adaload(b, log), 0);
    text = slurp(log);
    cr_assert_null(strstr(text, "| dtile |"), "%s", text);
    cr_assert_not_null(strstr(text, "| naive |"), "%s", text);
}

/* Issue 21's layout and dtype bar: dtile's forward per token / per frame (bf16) and fp16 / fp32 x
 * per sample at the bar's widths and >= 32,760 rows, 85% of copy each; other shapes not counted. */
Test(report_cli, layout_bar)
{
    test_tmp_make("bench");
    FILE *f = gb_open(test_tmpdir, "bench.json");
    gb_entry(f, "copy/bytes1000", 40, 25e9, 100, 1);
    gb_entry(f, "lnmod_fwd/dtile/bf16-f32-bf16/token/D1536/rows32760", 100, 3.5e12, 84.7, 0); /* missed */
    gb_entry(f, "lnmod_fwd/dtile/bf16-f32-bf16/frame/D3072/rows32760", 100, 3.5e12, 90.0, 0);
    gb_entry(f, "lnmod_fwd/dtile/f16-f32-f16/sample/D2048/rows32760", 100, 3.5e12, 88.0, 0);
    gb_entry(f, "lnmod_fwd/dtile/f32-f32-f32/sample/D4096/rows32760", 100, 3.5e12, 86.0, 0);
    /* not the bar's: per sample bf16, too few rows, another width, another variant */
    gb_entry(f, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760", 100, 3.5e12, 50.0, 0);
    gb_entry(f, "lnmod_fwd/dtile/bf16-f32-bf16/token/D1536/rows1560", 100, 3.5e12, 50.0, 0);
    gb_entry(f, "lnmod_fwd/dtile/f16-f32-f16/sample/D1152/rows32760", 100, 3.5e12, 50.0, 0);
    gb_entry(f, "lnmod_fwd/naive/bf16-f32-bf16/frame/D3072/rows32760", 100, 3.5e12, 20.0, 0);
    gb_close(f);
    char log[128];
    snprintf(log, sizeof log, "%s/report.md", test_tmpdir);
    char *a[] = {"report", test_tmpdir, NULL};
    cr_assert_eq(run_adaload(a, log), 0);
    const char *text = slurp(log);
    cr_assert_not_null(strstr(text, "- layout bar missed: bf16-f32-bf16/token/D1536/rows32760: 84.7% of copy (needs 85%)"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "; >= 85% of copy): 3 of 4 shapes meet it."), "%s", text);
    cr_assert_null(strstr(text, "layout bar missed: bf16-f32-bf16/sample"), "%s", text);
    cr_assert_null(strstr(text, "layout bar missed: bf16-f32-bf16/token/D1536/rows1560"), "%s", text);
    cr_assert_null(strstr(text, "layout bar missed: f16-f32-f16/sample/D1152"), "%s", text);
}

static void gb_raw(FILE *f, const char *name, const char *fields)
{
    fprintf(f, ",{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", %s}\n", name, name, fields);
}

/* The backward beside the forward: our backward's row with each peer's backward ratio and
 * the forward + backward ratios (the forward found under its own graph K), a peer checked
 * wrong shown as "wrong result" (never a ratio) in both tables, the bytes kept for the
 * backward, and the backward's bar. */
Test(report_cli, backward_beside_forward)
{
    test_tmp_make("bwd");
    char log[256];
    const char *S = "bf16-f32-bf16/sample/D5120/rows32760", *T = "bf16-f32-bf16/token/D3072/rows32760";
    char n[256];
    FILE *f = gb_open(test_tmpdir, "bench.json");
    gb_entry(f, "copy/bytes1000", 40, 25e9, 100, 1);
#define NAME(op, v, sh) (snprintf(n, sizeof n, "%s/%s/%s", op, v, sh), n)
    gb_entry(f, NAME("lnmod_fwd", "dtile", S), 100, 4.0e12, 93.5, 0);
    gb_raw(f, NAME("lnmod_bwd", "dtile", S), "\"real_time\": 200, \"time_unit\": \"us\", \"bytes_per_second\": 3.5e12, "
                                             "\"pct_copy_bw\": 88, \"saved_bytes\": 262080");
    gb_entry(f, NAME("lnmod_bwd", "naive", S), 500, 1.4e12, 35.2, 0);
    gb_entry(f, "lnmod_fwd/dtile/bf16-f32-bf16/token/D3072/rows32760/graph2", 50, 4.0e12, 90, 0);
    gb_entry(f, NAME("lnmod_bwd", "dtile", T), 90, 3.2e12, 79, 0);
    gb_close(f);
    f = gb_open(test_tmpdir, "peers.json");
    gb_entry(f, NAME("lnmod_fwd", "torch_compile", S), 250, 1.6e12, 37, 1);
    gb_entry(f, NAME("lnmod_bwd", "torch_compile", S), 400, 1.6e12, 37, 0);
    gb_entry(f, NAME("lnmod_fwd", "torch_eager", S), 800, 0.5e12, 12, 0);
    gb_raw(f, NAME("lnmod_bwd", "torch_eager", S), "\"real_time\": 1000, \"time_unit\": \"us\", \"saved_bytes\": 335e6");
    gb_raw(f, NAME("lnmod_bwd", "torch_compile_table", S),
           "\"real_time\": 0, \"time_unit\": \"us\", \"error_occurred\": true, "
           "\"error_message\": \"wrong result: rel err dscale 0.9986 (tolerance 0.0156; wrong: dscale)\"");
    gb_entry(f, NAME("lnmod_fwd", "liger", S), 150, 1e12, 30, 0);
    gb_entry(f, NAME("lnmod_bwd", "liger", S), 300, 1e12, 30, 0);
    gb_raw(f, "lnmod_fwd/torch_compile/bf16-f32-bf16/token/D3072/rows32760/graph2", "\"real_time\": 0, \"time_unit\": \"us\", \"error_occurred\": true, "
                                                     "\"error_message\": \"wrong result: rel err y 0.5\"");
#undef NAME
    gb_close(f);
    snprintf(log, sizeof log, "%s/report.md", test_tmpdir);
    char *a[] = {"report", test_tmpdir, NULL};
    cr_assert_eq(run_adaload(a, log), 0);
    const char *text = slurp(log);
    cr_assert_not_null(strstr(text, "| bf16-f32-bf16/sample/D5120/rows32760 | dtile | 200.0 | 3.50 | 88.0% | 5.00× | 2.00× | "
                                    "wrong result | 1.50× | 100.0 | 300.0 | 6.00× | 2.17× | wrong result | 1.50× |"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "| bf16-f32-bf16/sample/D5120/rows32760 | naive | 500.0 | 1.40 | 35.2% | 2.00× | 0.80× |"),
                       "%s", text);
    /* The forward of the token shape is found under its /graph2 name; its wrong peer. */
    cr_assert_not_null(strstr(text, "| bf16-f32-bf16/token/D3072/rows32760 | dtile | 90.0 | 3.20 | 79.0% | — | — | — | — | 50.0 | 140.0 "
                                    "| — | wrong result | — | — |"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "| bf16-f32-bf16/token/D3072/rows32760/graph2 | dtile | 50.0 | 4.00 | 90.0% | wrong result | — |"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "| bf16-f32-bf16/sample/D5120/rows32760 | 0.3 | 335.0 | — | wrong result | — |"), "%s", text);
    cr_assert_not_null(strstr(text, "- backward bar missed: bf16-f32-bf16/token/D3072/rows32760, 79.0% of copy (needs 80%)"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "1 of 2 shapes meet it."), "%s", text);
    cr_assert_null(strstr(text, "| liger"), "peers are columns, not rows:\n%s", text);
}

/* The fused gated residual op (issue 22): its own table -- each direction's time and % of
 * copy, fwd+bwd, × the chain's peers per direction and fwd+bwd, a wrong peer never a ratio --
 * none of its names in the lnmod tables, its bar (>= 85% of copy both ways, fwd+bwd >= 1.5×
 * torch.compile where compile is right) of site 3's shapes alone: rows of sites 1 and 2 (their
 * keys with the site, apart from site 3's row of the same D and rows) never count toward it,
 * and --variant naming a variant it alone has. */
Test(report_cli, residual_op_table)
{
    test_tmp_make("res");
    char log[256], n[256];
    const char *S = "f32-bf16-f32-bf16/sample/D5120/rows32760", *T = "f32-bf16-f32-bf16/sample/D1536/rows32760";
    /* U: compile's backward raised (no gradients: not compared, the bar met on the copy alone);
     * V: compile's forward raised (the bar needs it: missed). */
    const char *U = "f32-bf16-f32-bf16/sample/D3072/rows32760", *V = "f32-bf16-f32-bf16/sample/D3072/rows75600";
    /* W: compile right, fwd+bwd 299 / 200 = 1.495x: just under the 1.5x (shown to 3 places). */
    const char *W = "f32-bf16-f32-bf16/sample/D5120/rows65520/B2";
    /* X, Y: sites 1 and 2 at T's and S's D and rows; X far below the bar's 85%, so it would
     * miss it, and Y would meet it: neither may count. */
    const char *X = "f32-bf16-f32-bf16/sample/site1/D1536/rows32760", *Y = "f32-bf16-f32-bf16/sample/site2/D5120/rows32760";
    const char *raised = "\"real_time\": 0, \"time_unit\": \"us\", \"error_occurred\": true, "
                         "\"error_message\": \"error: RuntimeError: invalid gradient at index 3\"";
    FILE *f = gb_open(test_tmpdir, "bench.json");
    gb_entry(f, "copy/bytes1000", 40, 25e9, 100, 1);
#define NAME(op, v, sh) (snprintf(n, sizeof n, "%s/%s/%s", op, v, sh), n)
    gb_entry(f, NAME("lnmod_res_fwd", "dtile", S), 100, 4.0e12, 90, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "dtile", S), 150, 4.0e12, 88, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "naive", S), 300, 1.0e12, 30, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "dtile", T), 50, 4.0e12, 86, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "dtile", T), 80, 4.0e12, 84, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "dtile", U), 60, 4.0e12, 91, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "dtile", U), 90, 4.0e12, 89, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "dtile", V), 130, 4.0e12, 91, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "dtile", V), 190, 4.0e12, 89, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "dtile", W), 100, 4.0e12, 90, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "dtile", W), 100, 4.0e12, 93, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "dtile", X), 70, 4.0e12, 80, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "dtile", X), 400, 1.0e12, 40, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "dtile", Y), 90, 4.0e12, 92, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "dtile", Y), 110, 4.0e12, 91, 0);
    gb_close(f);
    f = gb_open(test_tmpdir, "peers.json");
    gb_entry(f, NAME("lnmod_res_fwd", "torch_eager", S), 400, 1e12, 20, 1);
    gb_entry(f, NAME("lnmod_res_bwd", "torch_eager", S), 900, 1e12, 20, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "torch_compile", S), 200, 1e12, 40, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "torch_compile", S), 250, 1e12, 50, 0);
    gb_raw(f, NAME("lnmod_res_bwd", "torch_compile", T), "\"real_time\": 0, \"time_unit\": \"us\", \"error_occurred\": true, "
                                                        "\"error_message\": \"wrong result: rel err dgate 0.9\"");
    gb_entry(f, NAME("lnmod_res_fwd", "torch_compile", U), 60, 1e12, 90, 0);
    gb_raw(f, NAME("lnmod_res_bwd", "torch_compile", U), raised);
    gb_raw(f, NAME("lnmod_res_fwd", "torch_compile", V), raised);
    gb_entry(f, NAME("lnmod_res_bwd", "torch_compile", V), 250, 1e12, 50, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "torch_compile", W), 100, 1e12, 90, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "torch_compile", W), 199, 1e12, 50, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "torch_eager", X), 140, 1e12, 20, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "torch_eager", X), 800, 1e12, 20, 0);
    gb_entry(f, NAME("lnmod_res_fwd", "torch_compile", Y), 180, 1e12, 40, 0);
    gb_entry(f, NAME("lnmod_res_bwd", "torch_compile", Y), 220, 1e12, 50, 0);
#undef NAME
    gb_close(f);
    snprintf(log, sizeof log, "%s/report.md", test_tmpdir);
    char *a[] = {"report", test_tmpdir, NULL};
    cr_assert_eq(run_adaload(a, log), 0);
    const char *text = slurp(log);
    cr_assert_not_null(strstr(text, "| (no lnmod_fwd benchmarks in this run) |"), "%s", text);
    cr_assert_not_null(strstr(text, "| f32-bf16-f32-bf16/sample/D5120/rows32760 | dtile | 100.0 | 90.0% | 150.0 | 88.0% | 250.0 "
                                    "| 4.00× | 2.00× | 6.00× | 1.67× | 5.20× | 1.80× |"), "%s", text);
    cr_assert_not_null(strstr(text, "| f32-bf16-f32-bf16/sample/D5120/rows32760 | naive | 300.0 | 30.0% | — | — | — "
                                    "| 1.33× | 0.67× | — | — | — | — |"), "%s", text);
    cr_assert_not_null(strstr(text, "| f32-bf16-f32-bf16/sample/D1536/rows32760 | dtile | 50.0 | 86.0% | 80.0 | 84.0% | 130.0 "
                                    "| — | — | — | wrong result | — | wrong result |"), "%s", text);
    cr_assert_not_null(strstr(text, "| f32-bf16-f32-bf16/sample/D3072/rows32760 | dtile | 60.0 | 91.0% | 90.0 | 89.0% | 150.0 "
                                    "| — | 1.00× | — | failed | — | failed |"), "%s", text);
    /* Each shape that misses the bar says why; the ones that meet it are not listed. */
    cr_assert_not_null(strstr(text, "- bar missed: f32-bf16-f32-bf16/sample/D1536/rows32760, backward 84.0% of copy (needs 85%)\n"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "- bar missed: f32-bf16-f32-bf16/sample/D3072/rows75600, torch.compile's forward failed "
                                    "(the bar needs it)\n"), "%s", text);
    cr_assert_not_null(strstr(text, "- bar missed: f32-bf16-f32-bf16/sample/D5120/rows65520/B2, fwd+bwd 1.495× torch.compile "
                                    "(needs 1.5×)\n"), "%s", text);
    cr_assert_null(strstr(text, "bar missed: f32-bf16-f32-bf16/sample/D5120/rows32760"), "%s", text);
    cr_assert_null(strstr(text, "bar missed: f32-bf16-f32-bf16/sample/D3072/rows32760"), "%s", text);
    /* Sites 1 and 2: rows of their own (the key with the site), outside the bar. */
    cr_assert_not_null(strstr(text, "| f32-bf16-f32-bf16/sample/site1/D1536/rows32760 | dtile | 70.0 | 80.0% | 400.0 | 40.0% "
                                    "| 470.0 | 2.00× | — | 2.00× | — | 2.00× | — |"), "%s", text);
    cr_assert_not_null(strstr(text, "| f32-bf16-f32-bf16/sample/site2/D5120/rows32760 | dtile | 90.0 | 92.0% | 110.0 | 91.0% "
                                    "| 200.0 | — | 2.00× | — | 2.00× | — | 2.00× |"), "%s", text);
    cr_assert_null(strstr(text, "bar missed: f32-bf16-f32-bf16/sample/site"), "%s", text);
    cr_assert_not_null(strstr(text, "2 of 5 shapes meet it.\nNot compared: torch.compile was wrong at 2 of these shapes"),
                       "%s", text);
    char *b[] = {"report", test_tmpdir, "--variant", "naive", NULL};
    cr_assert_eq(run_adaload(b, log), 0);
    text = slurp(log);
    cr_assert_not_null(strstr(text, "| naive | 300.0 |"), "%s", text);
    cr_assert_null(strstr(text, "| dtile |"), "%s", text);
}

/* Peers that failed (raised) or were wrong, and the user's own peers: a failed torch.compile
 * forward is "failed" in the table and the forward bar is missed for want of it (the bar needs
 * it), a wrong one is not compared (said under the bar); a failed or wrong backward peer is
 * not compared in the backward bar (issue 18: "where its gradients are right"); a --peer's
 * benchmarks are rows of their own beside dtile's time, a wrong one never with a ratio. */
Test(report_cli, failed_peers_and_user_peers)
{
    test_tmp_make("peerfail");
    char log[256], n[256];
    const char *A = "bf16-f32-bf16/sample/D5120/rows32760", *B = "bf16-f32-bf16/sample/D3072/rows32760";
    const char *err = "\"real_time\": 0, \"time_unit\": \"us\", \"error_occurred\": true, \"error_message\": ";
    char e1[256], e2[256];
    snprintf(e1, sizeof e1, "%s\"error: RuntimeError: invalid gradient\"", err);
    snprintf(e2, sizeof e2, "%s\"wrong result: rel err y 0.5\"", err);
    FILE *f = gb_open(test_tmpdir, "bench.json");
    gb_entry(f, "copy/bytes1000", 40, 25e9, 100, 1);
#define NAME(op, v, sh) (snprintf(n, sizeof n, "%s/%s/%s", op, v, sh), n)
    gb_entry(f, NAME("lnmod_fwd", "dtile", A), 100, 4.0e12, 93.5, 0);
    gb_entry(f, NAME("lnmod_fwd", "dtile", B), 60, 4.0e12, 92.0, 0);
    gb_entry(f, NAME("lnmod_bwd", "dtile", A), 200, 3.6e12, 86.0, 0);
    gb_close(f);
    f = gb_open(test_tmpdir, "peers.json");
    gb_entry(f, NAME("lnmod_fwd", "torch_eager", A), 800, 0.5e12, 12, 1);
    gb_raw(f, NAME("lnmod_fwd", "torch_compile", A), e1);
    gb_entry(f, NAME("lnmod_fwd", "torch_eager", B), 480, 0.5e12, 12, 0);
    gb_raw(f, NAME("lnmod_fwd", "torch_compile", B), e2);
    gb_entry(f, NAME("lnmod_bwd", "torch_eager", A), 1000, 0.5e12, 12, 0);
    gb_raw(f, NAME("lnmod_bwd", "torch_compile", A), e1);
    gb_entry(f, NAME("lnmod_fwd", "peer:mine", A), 300, 1e12, 31, 0);
    gb_raw(f, NAME("lnmod_bwd", "peer:bad", A), e2);
#undef NAME
    gb_close(f);
    snprintf(log, sizeof log, "%s/report.md", test_tmpdir);
    char *a[] = {"report", test_tmpdir, NULL};
    cr_assert_eq(run_adaload(a, log), 0);
    const char *text = slurp(log);
    cr_assert_not_null(strstr(text, "| bf16-f32-bf16/sample/D5120/rows32760 | dtile | 100.0 | 4.00 | 93.5% | failed | 8.00× |"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "bar missed: bf16-f32-bf16/sample/D5120/rows32760: 93.5% of copy (needs 90%), "
                                    "torch.compile failed here (the bar needs it), 8.00× eager (needs 6×)"), "%s", text);
    cr_assert_null(strstr(text, "bar missed: bf16-f32-bf16/sample/D3072"), "a wrong compile is not compared:\n%s", text);
    cr_assert_not_null(strstr(text, "1 of 2 shapes meet it.\nNot compared: 1 peer forward(s)"), "%s", text);
    /* The backward: compile failed, so only eager (5x >= 3.5x) and the copy (86%) count. */
    cr_assert_not_null(strstr(text, "| bf16-f32-bf16/sample/D5120/rows32760 | dtile | 200.0 | 3.60 | 86.0% | 5.00× | failed |"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "1 of 1 shapes meet it.\nNot compared: 1 peer backward(s)"), "%s", text);
    cr_assert_not_null(strstr(text, "| bf16-f32-bf16/sample/D5120/rows32760 | fwd | peer:mine | 300.0 | 31.0% | 100.0 | 3.00× |"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "| bf16-f32-bf16/sample/D5120/rows32760 | bwd | peer:bad | wrong result: rel err y 0.5 | | 200.0 | |"),
                       "%s", text);
}

/* report --sweep on a synthetic sweep run: the table on stdout, the SVG where --out says
 * (atomically, nothing left behind), and every refusal exit 2 with nothing written: --out
 * inside the run folder, over a folder, --shape/--out without --sweep, an unknown slice. */
Test(report_cli, sweep_table_and_plot)
{
    test_tmp_make("sweep");
    char run[256], p[320], log[320], svg[320];
    snprintf(run, sizeof run, "%s/run", test_tmpdir);
    cr_assert_eq(mkdir(run, 0755), 0);
    FILE *f = gb_open(run, "bench.json");
    gb_entry(f, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D256/rows32760/graph4", 10, 1e12, 49.5, 1);
    gb_entry(f, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1024/rows32760", 30, 3e12, 61.0, 0);
    gb_entry(f, "lnmod_fwd/dtile/bf16-f32-bf16/sample/D8192/rows32760", 200, 3.8e12, 90.2, 0);
    gb_entry(f, "lnmod_fwd/naive/bf16-f32-bf16/sample/D1024/rows32760", 90, 1e12, 20.0, 0);
    gb_entry(f, "lnmod_fwd/dtile/f32-f32-f32/sample/D1536/rows32760", 100, 3.5e12, 93.0, 0);
    gb_close(f);
    snprintf(log, sizeof log, "%s/out.md", test_tmpdir);
    snprintf(svg, sizeof svg, "%s/plot.svg", test_tmpdir);
    char *a[] = {"report", "--sweep", run, "--out", svg, NULL};
    cr_assert_eq(run_adaload(a, log), 0);
    const char *text = slurp(log);
    cr_assert_not_null(strstr(text, "Sweep of bf16-f32-bf16/sample/rows32760"), "%s", text);
    cr_assert_not_null(strstr(text, "| D | dtile | naive |"), "%s", text);
    cr_assert_not_null(strstr(text, "| 256 | 49.5% | — |"), "%s", text);
    cr_assert_not_null(strstr(text, "| 1024 | 61.0% | 20.0% |"), "%s", text);
    cr_assert_not_null(strstr(text, "| 8192 | 90.2% | — |"), "%s", text);
    cr_assert_not_null(strstr(text, "1 other shapes in this run"), "%s", text);
    const char *plot = slurp(svg);
    cr_assert(!strncmp(plot, "<?xml", 5) && strstr(plot, "</svg>"), "%s", plot);
    cr_assert_not_null(strstr(plot, "<title>D 8192: 90.2%</title>"));

    /* The other slice, no plot: the old plot stays as it was. */
    char *b[] = {"report", "--sweep", run, "--shape", "f32-f32-f32/sample/rows32760", NULL};
    cr_assert_eq(run_adaload(b, log), 0);
    cr_assert_not_null(strstr(slurp(log), "| 1536 | 93.0% |"));

    struct stat st;
    snprintf(p, sizeof p, "%s/plot.svg", run);
    char *c[] = {"report", "--sweep", run, "--out", p, NULL};
    cr_assert_eq(run_adaload(c, log), 2, "a plot inside the run folder must be refused");
    cr_assert_neq(stat(p, &st), 0);
    char *d[] = {"report", "--sweep", run, "--out", test_tmpdir, NULL};
    cr_assert_eq(run_adaload(d, log), 2, "a folder is not replaced");
    char *e[] = {"report", run, "--out", svg, NULL};
    cr_assert_eq(run_adaload(e, log), 2);
    char *g[] = {"report", "--sweep", run, "--shape", "f16-f32-f16/token/rows1", "--out", svg, NULL};
    cr_assert_eq(run_adaload(g, log), 2);
    char *h[] = {"report", "--sweep", test_tmpdir, "--out", svg, NULL};
    cr_assert_eq(run_adaload(h, log), 2, "no bench.json");
    cr_assert(!strncmp(slurp(svg), "<?xml", 5), "a refused call must not touch the old plot");
    /* Only what the calls wrote: the run folder, the log, the plot; no temporaries. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s' | tr '\\n' ' ')\" = 'out.md plot.svg run ' && "
                              "test \"$(ls -A '%s')\" = 'bench.json'", test_tmpdir, run);
    cr_assert_eq(system(cmd), 0, "unexpected files left in %s", test_tmpdir);
}
