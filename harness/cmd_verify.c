/* cmd_verify.c -- `adaload verify`: the verifier library (verify/verify.h) on this machine's
 * GPU, or on the CPU models (--cpu-model), with the record written into a run folder.
 *
 *   adaload verify [--grid quick|full|smoke] [--variant NAME]... [--seed N] [--threads N]
 *                  [--out DIR | --no-record] [--sanitizers] [--sanitizer-timeout S]
 *                  [--cpu-model] [--list] [--plugin LIB.so]... [--op all|lnmod|lnmod_res]
 *                  [--reuse-buffers]
 *
 * Both ops by default (--op all): LayerNorm-Modulate's grid, then the fused gated residual +
 * LayerNorm-Modulate op's grid of the same name (verify/verify_res.h: "op": "lnmod_res" cases in
 * both directions, for the variants with the fused op; on the CPU models, its models: a --variant
 * names a model of either op, and an op none is named for runs its default model), sharded with
 * lnmod's sets and in the record, which the gate needs whole. --op lnmod runs lnmod's cases
 * alone (a record the gate does not pass); --op lnmod_res runs the fused op's cases alone,
 * printing them, and writes no record (cmd_verify_res.c). --res-grid names the fused op's grid
 * (the sanitizer runs' children are given verify_res_sanitizer_grid).
 * --sanitizers re-runs this program under compute-sanitizer over the quick grid (and the fused
 * op's sanitizer grid) after the grid, the four tools at once (verify_run_sanitizers). --shard K/N runs one shard
 * of the grid (the record says which; the gate joins the shards of one source hash). --cpu-model checks the fp32 CPU models (verify_model.h): a
 * self-test of the verifier on machines without a GPU; its records say backend "cpu-model"
 * and never gate. --plugin loads a researcher's kernel library (plugin/ada_plugin.h): its
 * variants join the check as "plugin:<name>", the record and meta.json name the library and
 * its SHA-256 ("plugins"; such a record never counts for the gate), and the work runs in a
 * supervised child process (cli_plugin.h). Exit 0 when every case passed (and every sanitizer run was clean), 1 when
 * any failed, 2 on bad usage, 3 out of memory, 77 when there is no GPU.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#include <jansson.h>

#include "ada_cuda.h"
#include "ada_output.h"
#include "ada_rng.h"
#include "build_info.h"
#include "cli.h"
#include "ada_plugin.h"
#include "cli_opts.h"
#include "cli_plugin.h"
#include "cmd_verify_res.h"
#include "commands.h"
#include "gate.h"
#include "run_folder.h"
#include "run_meta.h"
#include "verify.h"
#include "verify_model.h"
#include "verify_model_res.h"
#include "verify_par.h"
#include "verify_res.h"

#if ADALOAD_HAVE_CUDA
#include "lnmod.h"
#endif

#define CMD "verify"

typedef struct {
    const char *grid, *out, *direction, *shard, *op, *res_grid;
    cli_list variants, plugins;
    int shard_k, shard_n;
    uint64_t seed;
    int seed_given, no_record, sanitizers, cpu_model, list, reuse_buffers;
    int64_t threads, sanitizer_timeout;
} vopts;

static void usage(const cli_opt *opts)
{
    printf("usage: adaload verify [options]\n"
           "  Checks every kernel variant against the float64 reference (needs a GPU).\n");
    cli_print_options(stdout, opts);
    printf("exit: 0 all passed, 1 a case failed, 2 bad usage, 3 out of memory, 77 no CUDA device\n");
}

/* CLI_HELP / CLI_ERROR / CLI_OK */
static int parse_opts(int argc, char **argv, vopts *o)
{
    memset(o, 0, sizeof *o);
    o->grid = "quick";
    o->direction = "both";
    o->op = "all";
    o->sanitizer_timeout = 420;
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads = nc > 0 ? (nc > VERIFY_MAX_THREADS ? VERIFY_MAX_THREADS : nc) : 1;
    const cli_opt opts[] = {
        CLI_STR("--grid", &o->grid, "G", "quick|full|smoke: cases to run (default quick; smoke = verifier self-test)"),
        CLI_LIST("--variant", &o->variants, "NAME", "a variant to check (repeatable; default all; --list)"),
        {.name = "--seed", .kind = CLI_KIND_U64, .dst = &o->seed, .ihi = INT64_MAX, .given = &o->seed_given,
         .what = "a whole number in [0, 2^63)", .meta = "N", .help = "input seed (default from the clock; always printed)"},
        CLI_I64("--threads", &o->threads, 1, VERIFY_MAX_THREADS, "N", "CPU threads for inputs/reference/comparison (default: online CPUs)"),
        CLI_STR("--out", &o->out, "DIR", "write the record into DIR (default a new results/<gpu>/verify/<run>/)"),
        CLI_FLAG("--no-record", &o->no_record, "print only, write nothing"),
        CLI_FLAG("--sanitizers", &o->sanitizers, "after the grid, run the quick grid (and lnmod_res's sanitizer grid) under compute-sanitizer"),
        CLI_I64("--sanitizer-timeout", &o->sanitizer_timeout, 1, 86400, "S", "seconds allowed per sanitizer run (default 420)"),
        CLI_STR("--direction", &o->direction, "DIR", "fwd|bwd|both: the forward, the backward or both (default both)"),
        CLI_STR("--shard", &o->shard, "K/N", "run only shard K of N of the grid (input sets i with i % N = K - 1); records of all N together cover it"),
        CLI_FLAG("--reuse-buffers", &o->reuse_buffers, "grow-only device buffers (no cudaMalloc per input set; not under compute-sanitizer: its runs use exact sizes)"),
        CLI_FLAG("--cpu-model", &o->cpu_model, "check fp32 CPU models instead of the GPU (self-test; see --list)"),
        CLI_FLAG("--list", &o->list, "print the variants and exit"),
        CLI_STR("--op", &o->op, "OP", "all|lnmod|lnmod_res: the ops (default all; lnmod_res alone: printed, no record)"),
        CLI_STR("--res-grid", &o->res_grid, "G", "smoke|quick|full|sanitizer: the fused op's grid (default --grid's)"),
        CLI_LIST("--plugin", &o->plugins, "LIB.so", "load a plug-in's variants as plugin:<name> (repeatable; README \"Verify and benchmark your own kernel\")"),
        CLI_END};
    int r = cli_parse(CMD, opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) usage(opts);
    if (r != CLI_OK) return r;
    if (strcmp(o->grid, "quick") && strcmp(o->grid, "full") && strcmp(o->grid, "smoke"))
        return ada_usage_error(CMD, "--grid %s: must be quick, full or smoke", o->grid), CLI_ERROR;
    if (strcmp(o->direction, "fwd") && strcmp(o->direction, "bwd") && strcmp(o->direction, "both"))
        return ada_usage_error(CMD, "--direction %s: must be fwd, bwd or both", o->direction), CLI_ERROR;
    if (o->out && o->no_record) return ada_usage_error(CMD, "--out and --no-record exclude each other"), CLI_ERROR;
    if (o->shard) {
        char tail = 0;
        if (sscanf(o->shard, "%d/%d%c", &o->shard_k, &o->shard_n, &tail) != 2 || o->shard_n < 1 || o->shard_n > 64 ||
            o->shard_k < 1 || o->shard_k > o->shard_n)
            return ada_usage_error(CMD, "--shard %s: must be K/N with 1 <= K <= N <= 64", o->shard), CLI_ERROR;
    }
    if (o->variants.n > VERIFY_MAX_VARIANTS) return ada_usage_error(CMD, "too many --variant"), CLI_ERROR;
    if (o->plugins.n > VERIFY_MAX_PLUGINS) return ada_usage_error(CMD, "too many --plugin"), CLI_ERROR;
    if (o->plugins.n && o->cpu_model)
        return ada_usage_error(CMD, "--plugin and --cpu-model exclude each other (a plug-in runs on the GPU)"), CLI_ERROR;
    if (strcmp(o->op, "all") && strcmp(o->op, "lnmod") && strcmp(o->op, "lnmod_res"))
        return ada_usage_error(CMD, "--op %s: must be all, lnmod or lnmod_res", o->op), CLI_ERROR;
    if (o->res_grid && strcmp(o->res_grid, "smoke") && strcmp(o->res_grid, "quick") && strcmp(o->res_grid, "full") &&
        strcmp(o->res_grid, "sanitizer"))
        return ada_usage_error(CMD, "--res-grid %s: must be smoke, quick, full or sanitizer", o->res_grid), CLI_ERROR;
    if (!strcmp(o->op, "lnmod_res") && (o->out || o->shard || o->sanitizers || o->plugins.n))
        return ada_usage_error(CMD, "--op lnmod_res: without --out, --shard, --sanitizers or --plugin (alone it writes "
                                    "no record: the default --op all records both ops)"),
               CLI_ERROR;
    /* Model runs never create folders under results/ on their own: only with an explicit --out. */
    if (o->cpu_model && !o->out) o->no_record = 1;
    return CLI_OK;
}

static void list_variants(void)
{
#if ADALOAD_HAVE_CUDA
    printf("GPU kernel variants:\n");
    for (const lnmod_variant *v = lnmod_variants; v->name; v++)
        printf("  %-14s %-13s %s\n", v->name, verify_has_backward(0, v->name) ? "fwd+bwd" : "fwd only",
               v->description ? v->description : "");
#else
    printf("GPU kernel variants: none (this build has no CUDA toolkit)\n");
#endif
    printf("CPU models (--cpu-model, for the verifier's own tests):\n");
    for (int i = 0; verify_models[i].name; i++)
        printf("  %-14s %-13s %s\n", verify_models[i].name, "fwd+bwd", verify_models[i].description);
    printf("CPU models of the fused residual op (--cpu-model; default res_model):\n");
    for (int i = 0; verify_res_models[i].name; i++)
        printf("  %-16s %-11s %s\n", verify_res_models[i].name, "fwd+bwd", verify_res_models[i].description);
    cli_plugin_list();
}

/* The CPU models to check into c: each --variant a model of lnmod's (verify_model.h) or, with
 * --op all, of the fused op's (verify_model_res.h); an op none is named for gets its default
 * model. ADA_EXIT_OK, or ADA_EXIT_USAGE. */
static int pick_models(const vopts *o, verify_config *c)
{
    const int res = !strcmp(o->op, "all");
    for (int i = 0; i < o->variants.n; i++) {
        const char *v = o->variants.v[i];
        if (verify_model_find(v) >= 0) c->variants[c->nvariants++] = v;
        else if (res && verify_res_model_find(v) >= 0) c->res_variants[c->nres_variants++] = v;
        else return ada_usage_error(CMD, "unknown model '%s' (adaload verify --list)", v);
    }
    if (c->nvariants == 0) c->variants[c->nvariants++] = "model";
    if (res && c->nres_variants == 0) c->res_variants[c->nres_variants++] = "res_model";
    return ADA_EXIT_OK;
}

/* The variants to check into c: the named ones (checked), or all of the backend's; with --op
 * all, the fused op's: those of them with it (res_forward). ADA_EXIT_OK, or the exit code (usage
 * error, or no GPU here). */
static int pick_variants(const vopts *o, verify_config *c)
{
    if (o->cpu_model) return pick_models(o, c);
    for (int i = 0; i < o->variants.n; i++) c->variants[i] = o->variants.v[i];
    c->nvariants = o->variants.n;
    for (int i = 0; i < o->plugins.n; i++) c->plugins[i] = o->plugins.v[i];
    c->nplugins = o->plugins.n;
#if ADALOAD_HAVE_CUDA
    for (int i = 0; i < c->nvariants; i++)
        if (ada_plugin_is_name(c->variants[i]) ? ada_plugin_find(c->variants[i]) < 0 : !lnmod_find_variant(c->variants[i]))
            return ada_usage_error(CMD, "unknown variant '%s' (adaload verify --list%s)", c->variants[i],
                                   o->plugins.n ? " --plugin ..." : "");
    if (c->nvariants == 0) {
        for (const lnmod_variant *v = lnmod_variants; v->name && c->nvariants < VERIFY_MAX_VARIANTS; v++)
            c->variants[c->nvariants++] = v->name;
        for (int i = 0; i < ada_plugin_count() && c->nvariants < VERIFY_MAX_VARIANTS; i++)
            c->variants[c->nvariants++] = ada_plugin_name(i);
    }
    for (int i = 0; i < c->nvariants && !strcmp(o->op, "all"); i++) {
        const lnmod_variant *v = ada_plugin_is_name(c->variants[i]) ? NULL : lnmod_find_variant(c->variants[i]);
        if (v && v->res_forward) c->res_variants[c->nres_variants++] = c->variants[i];
    }
    if (ada_cuda_device_count() == 0) {
        ada_msg(CMD, "no CUDA device here: nothing to verify (skipped)");
        return ADA_EXIT_SKIP;
    }
    if (c->nvariants == 0) {
        ada_msg(CMD, "the kernel registry is empty: nothing to verify");
        return ADA_EXIT_FAIL;
    }
    return ADA_EXIT_OK;
#else
    ada_msg(CMD, "this build has no GPU kernels (no CUDA toolkit): nothing to verify (skipped)");
    return ADA_EXIT_SKIP;
#endif
}

static uint64_t clock_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    return ada_splitmix64(&s) >> 1; /* < 2^63: survives a JSON integer */
}

static void print_summary(const verify_config *c, const verify_totals *t)
{
    printf("\n%-14s %-4s %8s %8s %8s\n", "variant", "dir", "passed", "failed", "not run");
    for (int di = 0; di < 2; di++)
        for (int v = 0; v < c->nvariants; v++) {
            if (t->v_passed[di][v] + t->v_failed[di][v] + t->v_not_run[di][v] == 0) continue;
            printf("%-14s %-4s %8" PRId64 " %8" PRId64 " %8" PRId64 "\n", c->variants[v], di ? "bwd" : "fwd",
                   t->v_passed[di][v], t->v_failed[di][v], t->v_not_run[di][v]);
        }
    for (int di = 0; di < 2; di++)
        for (int v = 0; v < c->nres_variants; v++) {
            if (t->r_passed[di][v] + t->r_failed[di][v] + t->r_not_run[di][v] == 0) continue;
            printf("%-14s %-4s %8" PRId64 " %8" PRId64 " %8" PRId64 "  (lnmod_res)\n", c->res_variants[v],
                   di ? "bwd" : "fwd", t->r_passed[di][v], t->r_failed[di][v], t->r_not_run[di][v]);
        }
    printf("total: %" PRId64 " cases, %" PRId64 " passed, %" PRId64 " failed, %" PRId64 " not run (%.1f s)\n",
           t->ncases_done, t->passed, t->failed, t->not_run, t->elapsed);
    printf("time: inputs %.1f s, device %.1f s, forward reference and comparison %.1f s, backward reference and "
           "comparison %.1f s (%d threads); buffer (re)allocation %.1f s of it all; lnmod_res sets %.1f s\n",
           t->t_inputs, t->t_device, t->t_fwd_check, t->t_bwd_check, c->threads, t->t_alloc, t->t_res);
    printf("host CPU time (all threads): inputs %.1f s, float64 reference and comparison %.1f s (forward %.1f, "
           "backward %.1f)\n",
           t->c_inputs, t->c_fwd_check + t->c_bwd_check, t->c_fwd_check, t->c_bwd_check);
}

/* The run folder into dir: --out DIR (meta.json written unless present) or a new one.
 * 0, or -1 after saying why. */
static int make_run_folder(const vopts *o, const char *cmdline, char *dir, size_t n)
{
    if (o->out) {
        if (ada_mkdirs(o->out) != 0) {
            ada_msg(CMD, "cannot create %s: %s", o->out, strerror(errno));
            return -1;
        }
        snprintf(dir, n, "%s", o->out);
        char mp[4500];
        snprintf(mp, sizeof mp, "%s/meta.json", dir);
        struct stat st;
        if (stat(mp, &st) != 0 && ada_run_write_meta(dir, ada_source_dir(), cmdline) != 0) {
            ada_msg(CMD, "cannot write %s: %s", mp, strerror(errno));
            return -1;
        }
        return cli_plugin_meta(CMD, dir) == ADA_EXIT_OK ? 0 : -1;
    }
    char tb[128];
    if (o->cpu_model) snprintf(tb, sizeof tb, "cpu-model");
    else if (ada_run_testbed(tb, sizeof tb) != 0) snprintf(tb, sizeof tb, "unknown");
    if (ada_run_new(ada_source_dir(), tb, "verify", cmdline, dir, n) != 0) {
        ada_msg(CMD, "cannot create a run folder under %s/results: %s", ada_source_dir(), strerror(errno));
        return -1;
    }
    if (cli_plugin_meta(CMD, dir) != ADA_EXIT_OK) {
        ada_run_discard(dir);
        return -1;
    }
    return 0;
}

/* The run's outputs: the folder and its transaction are made before the grid. */
typedef struct {
    char *cmdline;
    json_t *verdicts, *details;
    char dir[4400];     /* the run folder, or "" when nothing is written */
    char staging[4400]; /* under results/: the staging folder of ada_run_new, until published */
    ada_outset *t;      /* the run's files: one transaction */
    int io_failed;
} vrun;

/* Sanitizer verdicts after the grid: the runs (--sanitizers), their logs as outputs of r->t
 * (or, with --no-record, files in a fresh temporary folder), or "not run: --sanitizers not
 * given". 0, or -1 when a log cannot be opened (said why). */
static int sanitizers(const vopts *o, const verify_config *c, vrun *r)
{
    if (!o->sanitizers) {
        for (int k = 0; k < 4; k++)
            json_object_set_new(r->verdicts, verify_sanitizer_tools[k], json_string("not run: --sanitizers not given"));
        return 0;
    }
    char paths[4][4600], err[1024], logdir[4400] = "";
    const char *logs[4];
    if (!r->dir[0]) {
        snprintf(logdir, sizeof logdir, "/tmp/adaload-sanitizers-XXXXXX");
        if (!mkdtemp(logdir)) snprintf(logdir, sizeof logdir, "/tmp");
    }
    for (int k = 0; k < 4; k++) {
        snprintf(paths[k], sizeof paths[k], "%.4400s/sanitizer_%s.log", r->dir[0] ? r->dir : logdir,
                 verify_sanitizer_tools[k]);
        if (r->dir[0]) {
            ada_out *out = ada_outset_add(r->t, paths[k], paths[k], err, sizeof err);
            if (!out) {
                ada_msg(CMD, "%s", err);
                return -1;
            }
            snprintf(paths[k], sizeof paths[k], "%s", ada_out_write_path(out));
        }
        logs[k] = paths[k];
    }
    verify_run_sanitizers(c, NULL, logs, r->verdicts, r->details);
    if (!r->dir[0]) printf("sanitizer logs: %s\n", logdir);
    return 0;
}

/* One output of t with the canonical text of v; 0, or -1 after saying why. */
static int add_json(ada_outset *t, const char *path, const json_t *v)
{
    char err[1024];
    ada_out *out = ada_outset_add(t, path, path, err, sizeof err);
    char *text = out && v ? ada_json_text(v) : NULL;
    int rc = text && fputs(text, ada_out_file(out)) != EOF ? 0 : -1;
    if (rc) ada_msg(CMD, "%s", out ? "out of memory" : err);
    free(text);
    return rc;
}

/* verify.json and verify-summary.json join t (the logs are in it already), then t is
 * committed: all of the run's files or none. */
static int write_record(verify_config *c, verify_session *s, ada_outset *t, const char *dir, const char *date,
                        const char *cmdline, json_t *verdicts, json_t *details)
{
    char mp[4500], path[4500], err[1024];
    snprintf(mp, sizeof mp, "%s/meta.json", dir);
    ada_run_meta m; /* meta.json through its one reader (run_meta.h) */
    json_t *meta = NULL;
    if (ada_run_meta_load(mp, &m, err, sizeof err) == ADA_RUNS_OK) {
        meta = json_pack("{s:s, s:o}", "git_sha", m.git_sha, "git_dirty",
                         m.git_dirty < 0 ? json_null() : json_boolean(m.git_dirty));
        ada_run_meta_free(&m);
    }
    json_t *rec = verify_record_new(c, verify_session_totals(s), verify_session_gpu_json(s),
                                    verify_session_take_cases(s), json_incref(verdicts), json_incref(details), date,
                                    cmdline, meta);
    json_decref(meta);
    /* The plug-ins' libraries by path and file hash: such a record is never the gate's. */
    if (rec && ada_plugin_lib_count() > 0) json_object_set_new(rec, "plugins", ada_plugin_json());
    json_t *compact = rec ? gate_summary(rec) : NULL;
    snprintf(path, sizeof path, "%s/verify.json", dir);
    int rc = compact ? add_json(t, path, rec) : (ada_msg(CMD, "out of memory"), -1);
    snprintf(path, sizeof path, "%s/verify-summary.json", dir);
    if (rc == 0) rc = add_json(t, path, compact);
    if (rc == 0 && ada_outset_commit(t, err, sizeof err) != ADA_OUT_OK) {
        ada_msg(CMD, "%s", err);
        rc = -1;
    }
    json_decref(rec);
    json_decref(compact);
    return rc;
}

/* The written run: a staging folder is published (dir becomes its final path), then the run
 * is indexed. 0, or -1 after saying why (an unpublished staging folder is removed). */
static int publish(char *dir, size_t n, int staged)
{
    char err[1400], results[4200];
    snprintf(results, sizeof results, "%s/results", ada_source_dir());
    int fr = staged ? ada_run_finish(results, dir, n, err, sizeof err)
                    : ada_run_index_in(results, dir, err, sizeof err) < 0 ? 1 : 0;
    if (fr >= 0) printf("record: %s/verify-summary.json (every case: verify.json beside it)\n", dir);
    if (fr != 0) ada_msg(CMD, "%s", err);
    return fr == 0 ? 0 : -1;
}

static void print_verdict(const verify_totals *t, int san_errors)
{
    if (t->failed > 0) printf("verify: FAILED (%" PRId64 " of %" PRId64 " cases)\n", t->failed, t->ncases_done);
    else if (san_errors) printf("verify: FAILED (a sanitizer reported errors; see its log)\n");
    else if (t->not_run > 0) printf("verify: passed, but %" PRId64 " case(s) could not run\n", t->not_run);
    else printf("verify: all %" PRId64 " cases passed\n", t->passed);
}

/* Before the grid: run folder and its transaction (the sanitizer logs join it later).
 * 0, or ADA_EXIT_INTERNAL when out of memory. An output that cannot be made sets io_failed
 * (the grid still runs and prints; nothing is written). */
static int begin(const vopts *o, int argc, char **argv, vrun *r)
{
    memset(r, 0, sizeof *r);
    r->cmdline = ada_cmdline_join(argc, argv);
    r->verdicts = json_object();
    r->details = json_object();
    if (!r->cmdline || !r->verdicts || !r->details) {
        ada_msg(CMD, "out of memory");
        return ADA_EXIT_INTERNAL;
    }
    r->io_failed = !o->no_record && make_run_folder(o, r->cmdline, r->dir, sizeof r->dir) != 0;
    if (r->io_failed) r->dir[0] = '\0';
    snprintf(r->staging, sizeof r->staging, "%s", r->dir[0] && !o->out ? r->dir : "");
    r->t = r->dir[0] ? ada_outset_new(CMD) : NULL;
    if (r->dir[0] && !r->t) {
        ada_msg(CMD, "out of memory");
        r->dir[0] = '\0';
        r->io_failed = 1;
    }
    return ADA_EXIT_OK;
}

static void vrun_free(vrun *r)
{
    ada_outset_free(r->t);
    json_decref(r->verdicts);
    json_decref(r->details);
    free(r->cmdline);
}

/* After the grid: the sanitizer runs (after it, not beside it: the GPU time-slices between
 * processes, and four instrumented children made the grid's ~100,000 small launches and
 * copies wait -- a full grid that fits in 10 minutes alone did not end), the record, the
 * verdict. */
static int finish(const vopts *o, verify_config *c, verify_session *s, vrun *r, const char *date)
{
    if (sanitizers(o, c, r) != 0) {
        r->dir[0] = '\0';
        r->io_failed = 1;
    }
    int san_errors = 0;
    for (int k = 0; k < 4; k++) {
        const char *v = json_string_value(json_object_get(r->verdicts, verify_sanitizer_tools[k]));
        if (v && !strcmp(v, "errors")) san_errors = 1;
    }
    if (r->dir[0] && write_record(c, s, r->t, r->dir, date, r->cmdline, r->verdicts, r->details) != 0)
        r->io_failed = 1;
    ada_outset_free(r->t);
    r->t = NULL;
    if (r->staging[0] && r->io_failed) ada_run_discard(r->staging); /* no run folder without its record */
    else if (r->dir[0] && !r->io_failed && publish(r->dir, sizeof r->dir, r->staging[0] != 0) != 0) r->io_failed = 1;
    const verify_totals *tot = verify_session_totals(s);
    print_verdict(tot, san_errors);
    if (r->io_failed) return ADA_EXIT_USAGE; /* an output that cannot be written */
    if (tot->failed > 0 || san_errors) return ADA_EXIT_FAIL;
    if (tot->not_run_nomem > 0) {
        ada_msg(CMD, "out of memory: %lld case(s) could not run", (long long)tot->not_run_nomem);
        return ADA_EXIT_INTERNAL;
    }
    return ADA_EXIT_OK;
}

/* The fused op's sets of the run into *rs (malloc'd), their indices j in its grid into *rj: grid
 * --res-grid (else --grid), those of the shard (set j is set nlnmod + j of the shard rule,
 * verify.h). 0, or -1 out of memory (or no such grid). */
static int res_sets(const vopts *o, const verify_config *c, int nlnmod, verify_res_set **rs, int64_t **rj, int *n)
{
    *rs = NULL, *rj = NULL, *n = 0;
    if (c->nres_variants == 0) return 0;
    int m = 0;
    if (verify_res_grid_sets(o->res_grid ? o->res_grid : o->grid, rs, &m) != VERIFY_OK) return -1;
    *rj = malloc((size_t)(m > 0 ? m : 1) * sizeof **rj);
    if (!*rj) {
        free(*rs);
        *rs = NULL;
        return -1;
    }
    for (int j = 0; j < m; j++)
        if (verify_set_in_shard((int64_t)nlnmod + j, o->shard_k, o->shard_n)) (*rs)[*n] = (*rs)[j], (*rj)[(*n)++] = j;
    return 0;
}

int cmd_verify(int argc, char **argv)
{
    vopts o;
    int prc = parse_opts(argc, argv, &o);
    if (prc == CLI_HELP) return ADA_EXIT_OK;
    if (prc != CLI_OK) return ADA_EXIT_USAGE;
    int handled = 0;
    int rc = cli_plugin_supervise(CMD, &o.plugins, argc, argv, &handled);
    if (handled) return rc;
    if ((rc = cli_plugin_load(CMD, &o.plugins)) != ADA_EXIT_OK) return rc;
    if (o.list) {
        list_variants();
        return ADA_EXIT_OK;
    }
    if (!strcmp(o.op, "lnmod_res")) { /* the fused op's cases (cmd_verify_res.c) */
        const int dirs = !strcmp(o.direction, "fwd")   ? VERIFY_DIR_FWD
                         : !strcmp(o.direction, "bwd") ? VERIFY_DIR_BWD
                                                       : VERIFY_DIR_BOTH;
        const uint64_t seed = o.seed_given ? o.seed : clock_seed();
        openblas_set_num_threads(1);
        const char *rg = o.res_grid ? o.res_grid : o.grid; /* --res-grid, as with both ops */
        return o.cpu_model ? cmd_verify_res_cpu(rg, o.variants.v, o.variants.n, dirs, seed, (int)o.threads)
                           : cmd_verify_res_gpu(rg, o.variants.v, o.variants.n, dirs, seed, (int)o.threads);
    }
    verify_config c = {.grid = o.grid,
                       .directions = !strcmp(o.direction, "fwd")   ? VERIFY_DIR_FWD
                                     : !strcmp(o.direction, "bwd") ? VERIFY_DIR_BWD
                                                                   : VERIFY_DIR_BOTH,
                       .threads = (int)o.threads, .cpu_model = o.cpu_model, .res_grid = o.res_grid,
                       .reuse_buffers = o.reuse_buffers,
                       .sanitizer_timeout = o.sanitizer_timeout, .note = ada_note_stdout,
                       .progress = ada_note_stderr, .progress_arg = (void *)CMD};
    rc = pick_variants(&o, &c);
    if (rc != ADA_EXIT_OK) return rc;
    c.seed = o.seed_given ? o.seed : clock_seed();
    if (o.out) {
        char p[4200];
        snprintf(p, sizeof p, "%s/verify.json", o.out);
        struct stat st;
        if (stat(p, &st) == 0) return ada_usage_error(CMD, "%s exists: run folders are written once", p);
        if (ada_mkdirs(o.out) != 0) return ada_usage_error(CMD, "--out %s: cannot create it: %s", o.out, strerror(errno));
    }
    /* The reference calls OpenBLAS from our threads: keep OpenBLAS itself single-threaded. */
    openblas_set_num_threads(1);

    verify_set *sets = NULL;
    verify_res_set *rsets = NULL;
    int64_t *rj = NULL;
    int nsets = 0, nrsets = 0;
    verify_session *s = NULL;
    if (verify_grid_sets(o.grid, &sets, &nsets) == VERIFY_OK && res_sets(&o, &c, nsets, &rsets, &rj, &nrsets) != 0) {
        free(sets);
        sets = NULL;
    }
    if (sets && o.shard_n > 1) {
        int k = 0; /* keep the shard's sets, in grid order */
        for (int i = 0; i < nsets; i++)
            if (verify_set_in_shard(i, o.shard_k, o.shard_n)) sets[k++] = sets[i];
        nsets = k;
        c.shard = o.shard_k;
        c.nshards = o.shard_n;
    }
    if (sets && !strcmp(o.grid, "full") && verify_sets_largest_first(sets, nsets) != 0) {
        free(sets);
        sets = NULL;
    }
    if (!sets || verify_session_new(&c, nsets, &s) != VERIFY_OK) {
        free(sets), free(rsets), free(rj);
        ada_msg(CMD, "out of memory");
        return ADA_EXIT_INTERNAL;
    }
    verify_session_plan_res(s, nrsets);
    int nbwd = 0;
    for (int v = 0; v < c.nvariants; v++) nbwd += verify_has_backward(c.cpu_model, c.variants[v]);
    char date[32];
    ada_utc_iso(date, sizeof date);
    if (c.nshards > 1) printf("adaload verify: shard %d of %d of the grid\n", c.shard, c.nshards);
    printf("adaload verify: grid %s, %d input sets x (%d forward + %d backward) + lnmod_res grid %s, %d sets x %d "
           "variant(s) = %" PRId64 " cases, seed %" PRIu64 " (reproduce with --seed %" PRIu64 "), %d CPU threads, "
           "backend %s\n",
           o.grid, nsets, (c.directions & VERIFY_DIR_FWD) ? c.nvariants : 0, (c.directions & VERIFY_DIR_BWD) ? nbwd : 0,
           o.res_grid ? o.res_grid : o.grid, nrsets, c.nres_variants, verify_session_totals(s)->ncases_total, c.seed,
           c.seed, c.threads, o.cpu_model ? "cpu-model" : "cuda");
    if (strcmp(o.grid, "full") != 0)
        printf("%-14s %-3s %-14s %-6s %6s %7s %10s %10s %10s  %s\n", "variant", "dir", "x-mod-y", "layout", "D", "rows",
               "max_abs", "max_rel", "l2_rel", "verdict");
    fflush(stdout);
    vrun r;
    rc = begin(&o, argc, argv, &r);
    if (rc == ADA_EXIT_OK) {
        for (int i = 0; i < nsets; i++) verify_session_run_set(s, &sets[i]);
        for (int i = 0; i < nrsets; i++) verify_session_run_res_set(s, &rsets[i], rj[i]);
        verify_session_finish(s);
        print_summary(&c, verify_session_totals(s));
        rc = finish(&o, &c, s, &r, date);
    }
    vrun_free(&r);
    verify_session_free(s);
    free(sets), free(rsets), free(rj);
    return rc;
}
