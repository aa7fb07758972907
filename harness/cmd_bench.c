/* cmd_bench.c -- `adaload bench`: Google Benchmark timings (bench/bench.h) into a results
 * run folder.
 *
 *   adaload bench [--set quick|wan|sweep|models] [--variant V ...] [--with-peers] [--repetitions N]
 *                 [--min-time S] [--filter REGEX] [--out DIR] [--no-gpu] [--list-shapes]
 *                 [--plugin LIB.so]...
 *
 * Writes results/<testbed>/<UTC time>_<sha7>/ (or DIR) with meta.json, bench.json (Google
 * Benchmark JSON: CPU reference and planner benchmarks, copy ceilings, kernel variants),
 * peers.json (PyTorch peers, --with-peers), customSmallerIsBetter.json and
 * customBiggerIsBetter.json (github-action-benchmark: median us and GB/s, never NaN/Inf).
 * The timing method is in bench/bench_gpu.c's manual. Without a CUDA device every GPU
 * benchmark is listed as "skipped (no CUDA device): <name>" and the CPU benchmarks still run
 * (exit 0). Exit: 0 ok, 1 a benchmark or the peers failed, 2 bad usage, 3 out of memory or a
 * CUDA error, 77 nothing could run here. --plugin loads a researcher's kernel library
 * (plugin/ada_plugin.h): its variants are timed beside the built-in ones as
 * lnmod_fwd/plugin:<name>/..., meta.json names the library and its SHA-256 ("plugins"), and
 * the work runs in a supervised child process (cli_plugin.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ada_output.h"
#include "bench.h"
#include "bench_peers.h"
#include "cli.h"
#include "cli_opts.h"
#include "cli_plugin.h"
#include "commands.h"
#include "run_bench.h"
#include "run_folder.h"

#define CMD "bench"

typedef struct {
    const char *set, *filter, *out, *kind;
    cli_list variants, plugins, peers;
    int64_t reps;
    double min_time;
    int with_peers, no_gpu, list_shapes;
} bopts;

static void usage(const cli_opt *opts)
{
    printf("usage: adaload bench [--set quick|wan|sweep|models] [--variant V ...] [--with-peers]\n"
           "                     [--repetitions N] [--min-time S] [--filter REGEX] [--out DIR]\n"
           "                     [--no-gpu] [--list-shapes]\n"
           "  Times the LayerNorm-Modulate variants (and a device-to-device copy of the same\n"
           "  bytes, the ceiling), the float64 reference and the planner on the CPU, with\n"
           "  Google Benchmark, into results/<testbed>/<kind>/<UTC time>_<sha7>/ (or DIR), and\n"
           "  adds the run to results/index.jsonl.\n");
    cli_print_options(stdout, opts);
    printf("  Without a CUDA device the GPU benchmarks are skipped by name and the CPU ones run.\n"
           "  exit: 0 ok, 1 a benchmark or the peers failed, 2 bad usage, 3 internal failure,\n"
           "        77 nothing ran here\n");
}

static int parse(int argc, char **argv, bopts *o)
{
    memset(o, 0, sizeof *o);
    o->set = "wan";
    o->kind = "bench";
    o->reps = -1;
    o->min_time = 0.01;
    const cli_opt opts[] = {
        CLI_STR("--set", &o->set, "S", "shape set: wan (default; Wan 2.1/2.2 sizes, layouts, dtypes), sweep (D = 256..16384, every multiple of 128 to 8192; the fused op at 14 widths), models (public DiTs), quick (CI)"),
        CLI_LIST("--variant", &o->variants, "V", "only these kernel variants (repeatable, or comma-separated)"),
        CLI_FLAG("--with-peers", &o->with_peers, "also time PyTorch (eager, torch.compile) on the same shapes: bench/peers/torch_peers.py"),
        CLI_I64("--repetitions", &o->reps, 1, 1000, "N", "repetitions per benchmark, median reported (default 9; quick: 3)"),
        CLI_F64("--min-time", &o->min_time, 0, 60, "S", "minimum measured time per repetition in seconds (default 0.01)"),
        CLI_STR("--filter", &o->filter, "REGEX", "only benchmarks whose name matches (POSIX extended regex)"),
        CLI_STR("--out", &o->out, "DIR", "write into DIR (created; must not hold a bench.json yet; its meta.json is kept)"),
        CLI_STR("--kind", &o->kind, "K", "kind of run folder: bench (default) or planner (the planner's CPU speed)"),
        CLI_FLAG("--no-gpu", &o->no_gpu, "CPU benchmarks only"),
        CLI_LIST("--peer", &o->peers, "MODULE:FUNCTION", "also check and time your own PyTorch/Triton callable fn(x, scale, shift, eps) as peer:<name> (repeatable; implies --with-peers; bench/peers/peer_user.py)"),
        CLI_LIST("--plugin", &o->plugins, "LIB.so", "also time a plug-in's variants, as plugin:<name> (repeatable; README \"Verify and benchmark your own kernel\")"),
        CLI_FLAG("--list-shapes", &o->list_shapes, "print the set's shapes as JSON (the peers script reads it) and exit"),
        CLI_END};
    int r = cli_parse(CMD, opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) usage(opts);
    if (r == CLI_OK && o->peers.n) o->with_peers = 1;
    if (r == CLI_OK && o->reps < 0) o->reps = !strcmp(o->set, "quick") ? 3 : 9;
    if (r == CLI_OK && strcmp(o->kind, "bench") && strcmp(o->kind, "planner")) {
        ada_usage_error(CMD, "--kind %s: must be bench or planner", o->kind);
        return CLI_ERROR;
    }
    return r;
}

/* A run folder this command created and could not fill is removed again, so results/
 * never holds a run without its numbers. */
static void discard_run(const char *dir)
{
    static const char *const files[] = {"meta.json", "bench.json", "peers.json",
                                        "customSmallerIsBetter.json", "customBiggerIsBetter.json"};
    char p[4096];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        remove(p);
    }
    if (rmdir(dir) != 0) ada_msg(CMD, "left %s behind: %s", dir, strerror(errno));
}

/* The run folder into dir; *made = 1 when this command created it. ADA_EXIT_OK or a code. */
static int open_run_folder(const bopts *o, int argc, char **argv, char *dir, size_t n, int *made)
{
    char *cmdline = ada_cmdline_join(argc, argv);
    if (!cmdline) return ada_msg(CMD, "out of memory"), ADA_EXIT_INTERNAL;
    int rc = ADA_EXIT_OK;
    *made = 0;
    if (o->out) {
        char p[4200];
        struct stat st;
        snprintf(p, sizeof p, "%s/bench.json", o->out);
        *made = stat(o->out, &st) != 0;
        if (ada_mkdirs(o->out) || stat(p, &st) == 0) {
            *made = 0;
            rc = ada_usage_error(CMD, "--out %s: cannot create it, or it already holds a bench.json "
                                      "(run folders are never edited)", o->out);
        } else {
            snprintf(dir, n, "%s", o->out);
            /* A folder staged by `adaload results new` has its meta.json already. */
            snprintf(p, sizeof p, "%s/meta.json", dir);
            if (stat(p, &st) != 0 && ada_run_write_meta(dir, ada_source_dir(), cmdline)) {
                ada_msg(CMD, "%s/meta.json: cannot write: %s", dir, strerror(errno));
                rc = ADA_EXIT_USAGE;
            } else {
                rc = cli_plugin_meta(CMD, dir);
            }
        }
    } else {
        char testbed[128];
        if (ada_run_testbed(testbed, sizeof testbed) || ada_run_new(ada_source_dir(), testbed, o->kind, cmdline, dir, n)) {
            ada_msg(CMD, "cannot create a run folder under %s/results: %s", ada_source_dir(), strerror(errno));
            rc = ADA_EXIT_USAGE;
        } else {
            *made = 1;
            if ((rc = cli_plugin_meta(CMD, dir)) != ADA_EXIT_OK) {
                ada_run_discard(dir); /* no run folder without its plug-ins named */
                *made = 0;
            }
        }
    }
    free(cmdline);
    return rc;
}

/* The PyTorch peers into po's path; drops po when they did not run. 0 ran, 1 failed,
 * 2 skipped. */
static int peers(const bopts *o, ada_bench_session *s, ada_out *po, const char *bench_path)
{
    const char *why = NULL;
    if (!ada_bench_session_gpu_on(s, &why)) {
        printf("peers skipped: %s\n", o->no_gpu ? "--no-gpu" : why);
        ada_out_drop(po);
        return 2;
    }
    char script[4096], msg[512] = "";
    int64_t nshapes = 0;
    const ada_shape *shapes = ada_bench_session_shapes(s, &nshapes);
    /* One ceiling (issue 17): the peers' % of copy is against our copies of the same bytes,
     * read back from this run's bench.json here, by the one reader of that file. */
    ada_peer_ceiling *ceil = calloc((size_t)nshapes + 1, sizeof *ceil);
    ada_bench_set ours = {0};
    if (!ceil || ada_bench_load_file(bench_path, &ours, msg, sizeof msg)) {
        ada_msg(CMD, "peers: %s", ceil ? msg : "out of memory");
        free(ceil);
        ada_bench_set_free(&ours);
        ada_out_drop(po);
        return 1;
    }
    for (int64_t i = 0; i < nshapes; i++) {
        char copy[ADA_NAME_MAX];
        if (!ada_copy_bench_name(shapes[i].min_bytes, copy, sizeof copy)) ceil[i].fwd = ada_bench_copy_ceiling(&ours, copy);
        if (!ada_copy_bench_name(shapes[i].bwd_min_bytes, copy, sizeof copy)) ceil[i].bwd = ada_bench_copy_ceiling(&ours, copy);
    }
    ada_bench_set_free(&ours);
    snprintf(script, sizeof script, "%s/bench/peers/torch_peers.py", ada_source_dir());
    ada_bench_status st = ada_bench_run_peers(script, ada_out_write_path(po), ceil, shapes, nshapes, (int)o->reps,
                                              o->min_time, ada_bench_session_run_filter(s), o->peers.v,
                                              o->peers.n, ada_note_stdout, NULL, msg, sizeof msg);
    free(ceil);
    if (st == ADA_BENCH_OK) return 0;
    if (st != ADA_BENCH_SKIPPED) ada_msg(CMD, "%s", msg);
    ada_out_drop(po);
    return st == ADA_BENCH_SKIPPED ? 2 : 1;
}

/* customSmallerIsBetter.json and customBiggerIsBetter.json from what was written; counts
 * the benchmarks that reported errors. ADA_EXIT_OK or the exit code. */
static int custom_files(ada_outset *t, const char *dir, const char *bench_path, const char *peers_path,
                        int64_t *errors)
{
    ada_bench_set results = {0};
    char err[1024] = "", p[4200];
    int rc = ADA_EXIT_OK;
    json_t *small = NULL, *big = NULL;
    if (ada_bench_load_file(bench_path, &results, err, sizeof err) ||
        (peers_path && ada_bench_load_file(peers_path, &results, err, sizeof err))) {
        ada_msg(CMD, "%s", err);
        rc = ADA_EXIT_INTERNAL;
    } else if (ada_bench_custom_json(&results, &small, &big)) {
        ada_msg(CMD, "out of memory");
        rc = ADA_EXIT_INTERNAL;
    }
    /* The run's own copy bandwidth joins meta.json's machine fingerprint (run_meta.h). */
    json_t *meta = rc == ADA_EXIT_OK ? ada_run_meta_with_copy(dir, &results) : NULL;
    const char *names[3] = {"customSmallerIsBetter.json", "customBiggerIsBetter.json", "meta.json"};
    json_t *vals[3] = {small, big, meta};
    for (int k = 0; k < (meta ? 3 : 2) && rc == ADA_EXIT_OK; k++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[k]);
        ada_out *out = ada_outset_add(t, p, names[k], err, sizeof err);
        char *text = out ? ada_json_text(vals[k]) : NULL;
        if (!text || fputs(text, ada_out_file(out)) == EOF) {
            ada_msg(CMD, "%s", out ? "out of memory" : err);
            rc = out ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
        }
        free(text);
    }
    *errors = 0;
    /* A peer found wrong against float64 is a finding about the peer, not a failure of the
     * run: said once, not counted. */
    for (int64_t i = 0; i < results.n; i++)
        if (results.r[i].wrong) printf("peer %s: %s\n", results.r[i].name, results.r[i].error_message);
    for (int64_t i = 0; i < results.n; i++)
        if (results.r[i].error && !results.r[i].wrong) {
            (*errors)++;
            ada_msg(CMD, "%s: %s", results.r[i].name, results.r[i].error_message ? results.r[i].error_message : "error");
        }
    json_decref(small);
    json_decref(big);
    json_decref(meta);
    ada_bench_set_free(&results);
    return rc;
}

/* The run and every file it writes into dir, as one transaction. */
static int run_and_write(const bopts *o, ada_bench_session *s, const char *dir)
{
    ada_outset *t = ada_outset_new(CMD);
    char p[4200], err[1024] = "", msg[512] = "";
    snprintf(p, sizeof p, "%s/bench.json", dir);
    ada_out *bo = t ? ada_outset_add(t, p, "bench.json", err, sizeof err) : NULL;
    if (!bo) {
        ada_msg(CMD, "%s", t ? err : "out of memory");
        ada_outset_free(t);
        return t ? ADA_EXIT_USAGE : ADA_EXIT_INTERNAL;
    }
    const char *bench_path = ada_out_write_path(bo);
    int ran = 0, rc = ADA_EXIT_OK, peers_failed = 0;
    const char *peers_path = NULL;
    if (ada_bench_session_run(s, bench_path, o->min_time, &ran, msg, sizeof msg) != ADA_BENCH_OK) {
        ada_msg(CMD, "%s", msg);
        rc = ADA_EXIT_INTERNAL;
    }
    if (rc == ADA_EXIT_OK && o->with_peers) {
        snprintf(p, sizeof p, "%s/peers.json", dir);
        ada_out *po = ada_outset_add(t, p, "peers.json", err, sizeof err);
        if (!po) {
            ada_msg(CMD, "%s", err);
            rc = ADA_EXIT_USAGE;
        } else {
            const char *pp = ada_out_write_path(po);
            int pr = peers(o, s, po, bench_path);
            peers_failed = pr == 1;
            peers_path = pr == 0 ? pp : NULL;
        }
    }
    int64_t errors = 0;
    if (rc == ADA_EXIT_OK) rc = custom_files(t, dir, bench_path, peers_path, &errors);
    if (rc == ADA_EXIT_OK && ada_outset_commit(t, err, sizeof err) != ADA_OUT_OK) {
        ada_msg(CMD, "%s", err);
        rc = ADA_EXIT_USAGE;
    }
    ada_outset_free(t);
    if (rc != ADA_EXIT_OK) return rc;
    if (errors > 0 || peers_failed) return ADA_EXIT_FAIL;
    return ran == 0 ? ADA_EXIT_SKIP : ADA_EXIT_OK;
}

static int list_shapes(const char *set)
{
    char *s = ada_bench_shapes_text(set);
    if (!s) return ada_usage_error(CMD, "--set %s: unknown set (quick, wan, sweep or models)", set);
    printf("%s\n", s);
    free(s);
    return ADA_EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
    bopts o;
    int r = parse(argc, argv, &o);
    if (r == CLI_HELP) return ADA_EXIT_OK;
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    if (o.list_shapes) return list_shapes(o.set);
    int handled = 0;
    int rc = cli_plugin_supervise(CMD, &o.plugins, argc, argv, &handled);
    if (handled) return rc;
    if ((rc = cli_plugin_load(CMD, &o.plugins)) != ADA_EXIT_OK) return rc;

    char model[4096];
    snprintf(model, sizeof model, "%s/datasets/models/wan2.1-14b.json", ada_source_dir());
    ada_bench_config c = {.set = o.set, .variants = o.variants.v, .nvariants = o.variants.n, .filter = o.filter,
                          .repetitions = (int)o.reps, .no_gpu = o.no_gpu, .planner_model = model,
                          .note = ada_note_stdout};
    ada_bench_session *s = NULL;
    char msg[512] = "";
    ada_bench_status st = ada_bench_session_new(&c, &s, msg, sizeof msg);
    if (st == ADA_BENCH_ERR_ARG) rc = ada_usage_error(CMD, "%s", msg);
    else if (st != ADA_BENCH_OK) rc = (ada_msg(CMD, "%s", msg), ADA_EXIT_INTERNAL);
    int64_t will_run = 0, skipped = 0;
    if (rc == ADA_EXIT_OK) ada_bench_session_counts(s, &will_run, &skipped);
    /* Nothing to run: no folder is made. */
    if (rc == ADA_EXIT_OK && will_run == 0 && skipped > 0) {
        ada_msg(CMD, "nothing can run here: the %lld selected benchmark(s) need what this machine lacks (skipped above)",
                (long long)skipped);
        rc = ADA_EXIT_SKIP;
    } else if (rc == ADA_EXIT_OK && will_run == 0) {
        rc = ada_usage_error(CMD, "%s%s: selects no benchmark of set %s", o.filter ? "--filter " : "--set ",
                             o.filter ? o.filter : o.set, o.set);
    }
    char dir[3072];
    int made = 0;
    if (rc == ADA_EXIT_OK) rc = open_run_folder(&o, argc, argv, dir, sizeof dir, &made);
    if (rc == ADA_EXIT_OK) {
        int staged = made && !o.out; /* under results/: a staging folder (run_folder.h) */
        if (made && o.out) ada_output_own_dir(dir); /* a signal removes it while it has no numbers */
        rc = run_and_write(&o, s, dir);
        int kept = rc == ADA_EXIT_OK || rc == ADA_EXIT_FAIL;
        if (made && !kept && !staged) discard_run(dir);
        if (staged && !kept && ada_run_discard(dir) != 0) ada_msg(CMD, "left %s behind: %s", dir, strerror(errno));
        if (made && o.out) ada_output_disown_dir(dir);
        char ferr[1400], results[4200];
        snprintf(results, sizeof results, "%s/results", ada_source_dir());
        int fr = staged && kept ? ada_run_finish(results, dir, sizeof dir, ferr, sizeof ferr) : 0;
        if (fr < 0) kept = 0;
        if (kept) printf("run folder: %s\n", dir);
        if (fr != 0) {
            ada_msg(CMD, "%s", ferr);
            rc = ADA_EXIT_USAGE;
        }
    }
    ada_bench_session_free(s);
    return rc;
}
