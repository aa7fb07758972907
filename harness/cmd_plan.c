/* cmd_plan.c -- `adaload plan`: the dual-constraint batch planner and its simulator.
 *
 *   adaload plan [--manifest FILE] [--model NAME | --model-file FILE] [--gpus N] [--gpu NAME]
 *                [--policy equal-token|dual|both] [--assign random|same-bucket|sorted-window|lpt|kk]
 *                [--window W] [--comp-model cost|power] [--step-time S] [--act SETUP]
 *                [--seed N] [--summary-json FILE] [--plan-out FILE [--start-step N] [--steps K]]
 *                ...   (--help lists all)
 *
 * Reads the manifest (default: datasets/default.csv of the source tree), plans it with the
 * planner library (planner/planner.h), plans the baselines (equal-token at M_tok = S_max and
 * = M_mem, and the same policy, all with random assignment) and prints the summary table;
 * warnings go to stderr. --summary-json and --plan-out write the canonical JSON summary and
 * the plan (one JSON line per step; --start-step/--steps write a part of it, numbered as in
 * the whole plan), as one transaction of common/ada_output.h: both are opened once the
 * inputs are read and before the planning (an output that names an input, a folder or the
 * other output is refused then), and neither replaces its target until both are complete,
 * so a failure leaves every old file as it was. "-" is standard output (the tables then go
 * to stderr). `--policy both` (used by `adaload run`) plans under both policies with the
 * same seed and prints them side by side; it writes no files. --per-rank DIR writes
 * DIR/rank<r>.jsonl for every rank (only its own entries; plan_write_rank) in the same
 * transaction, any number of ranks (each file written and closed in turn); DIR is made
 * when missing (and removed again when nothing was written).
 * Exit: 0 ok, 2 bad usage, bad input or an output that cannot be written (one line naming
 * the option, the file:line: column, or the output), 3 out of memory.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ada_output.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "planner.h"

#define GIB 1073741824.0

static void help(const cli_opt *opts)
{
    printf("usage: adaload plan [options]\n"
           "  Plans per-GPU batches for a manifest of samples and simulates an epoch, beside its\n"
           "  baselines (equal-token at M_tok = S_max and = M_mem, and the same policy, all random).\n\n");
    cli_print_options(stdout, opts);
    printf("exit: 0 ok, 2 bad usage, bad input or an output that cannot be written, 3 out of memory\n");
}

typedef struct {
    const char *manifest, *model, *model_file, *profile, *summary, *plan_out, *per_rank, *gpu, *act;
    int both, no_baselines;
    int64_t start_step, steps;
    int start_given, steps_given;
    char manifest_buf[4096], model_buf[4096]; /* the default paths */
} options;

static int exit_of(plan_status st)
{
    return st == PLAN_ERR_NOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
}

/* One of names[] (NULL-ended) for option name's value v: its index, or -1 after the
 * message "NAME V: EXPECTED". */
static int pick(const char *name, const char *v, const char *const *names, const char *expected)
{
    for (int k = 0; names[k]; k++)
        if (!strcmp(v, names[k])) return k;
    ada_usage_error("plan", "%s %s: %s", name, v, expected);
    return -1;
}

/* The values that need more than cli_parse's range checks. */
typedef struct {
    const char *policy, *assign, *p, *oversize, *comp_model, *parallel;
    double gib, step_time;
    int gib_given, step_given, comp_given, window_given, accum_given;
} raw_opts;

static int finish_args(const raw_opts *w, options *o, plan_config *c)
{
    static const char *const policies[] = {"equal-token", "dual", "both", NULL};
    static const char *const assigns[] = {"random", "same-bucket", "sorted-window", "lpt", "kk", "verl-kk", "sort-by-length", NULL};
    static const char *const oversizes[] = {"error", "drop", NULL};
    static const char *const comps[] = {"cost", "power", NULL};
    static const char *const pars[] = {"model", "ddp", "zero1", "zero2", "zero3", NULL};
    int k;
    if (w->policy) {
        if ((k = pick("--policy", w->policy, policies, "equal-token, dual or both")) < 0) return -1;
        if (k == 2) o->both = 1;
        else c->policy = k ? PLAN_POLICY_DUAL : PLAN_POLICY_EQUAL_TOKEN;
    }
    if (w->assign) {
        if ((k = pick("--assign", w->assign, assigns, "random, same-bucket, sorted-window, lpt, kk, verl-kk or sort-by-length")) < 0) return -1;
        c->assign = (plan_assign)k;
    }
    if (w->oversize) {
        if ((k = pick("--oversize", w->oversize, oversizes, "error or drop")) < 0) return -1;
        c->oversize_drop = k;
    }
    if (w->parallel) {
        if ((k = pick("--parallel", w->parallel, pars, "ddp, zero1, zero2, zero3 or model")) < 0) return -1;
        c->parallel = (plan_parallel)k;
    }
    if (w->comp_model) {
        if ((k = pick("--comp-model", w->comp_model, comps, "cost or power")) < 0) return -1;
        c->comp_model = (plan_comp_model)k;
    }
    if (w->p && !strcmp(w->p, "auto")) {
        c->p = 0;
    } else if (w->p) {
        double d;
        if (cli_parse_f64(w->p, &d) || !(d > 0 && d <= 3))
            return ada_usage_error("plan", "--p %s: must be a number in (0, 3] or auto", w->p), -1;
        c->p = d;
    }
    if (w->accum_given && !w->window_given) c->window = c->grad_accum; /* tied: optimizer steps keep their samples */
    if (w->gib_given && o->gpu)
        return ada_usage_error("plan", "--gpu and --gpu-mem-gib: give one of them"), -1;
    if (o->gpu) {
        const plan_gpu *g = plan_gpu_find(o->gpu);
        if (!g) {
            char names[256] = "";
            for (size_t i = 0; plan_gpu_at(i); i++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", plan_gpu_at(i)->name);
            return ada_usage_error("plan", "--gpu %s: unknown (%s)", o->gpu, names), -1;
        }
        c->gpu_mem_bytes = g->bytes;
        c->gpu_name = g->name;
    }
    if (w->gib_given) {
        c->gpu_mem_bytes = w->gib * GIB;
        c->gpu_name = NULL;
    }
    if (w->step_given && w->comp_given)
        return ada_usage_error("plan", "--step-time and --comp-budget: give one of them"), -1;
    if (w->step_given) {
        if (c->comp_model != PLAN_COMP_COST)
            return ada_usage_error("plan", "--step-time is in seconds: it needs --comp-model cost (power: --comp-budget)"), -1;
        c->comp_budget = w->step_time;
    }
    c->act = o->act;
    if (o->model && o->model_file)
        return ada_usage_error("plan", "--model and --model-file: give one of them"), -1;
    if (o->both && (o->summary || o->plan_out))
        return ada_usage_error("plan", "--policy both prints a table only: drop --summary-json/--plan-out"), -1;
    if (o->summary && o->plan_out && !strcmp(o->summary, o->plan_out))
        return ada_usage_error("plan", "--summary-json and --plan-out name the same file"), -1;
    if (o->both && o->per_rank)
        return ada_usage_error("plan", "--policy both prints a table only: drop --per-rank"), -1;
    if ((o->start_given || o->steps_given) && !o->plan_out && !o->per_rank)
        return ada_usage_error("plan", "--%s: selects steps of --plan-out or --per-rank, which are missing",
                               o->start_given ? "start-step" : "steps"), -1;
    return 0;
}

/* 0, 1 for --help (after printing it), -1 for a usage error (message printed). Adding an
 * option is one line in opts[] (cli_opts.h) plus, for a value that needs more than a range
 * check, a few lines in finish_args. */
static int parse_args(int argc, char **argv, options *o, plan_config *c)
{
    raw_opts w;
    memset(&w, 0, sizeof w);
    const cli_opt opts[] = {
        CLI_STR("--manifest", &o->manifest, "FILE", "CSV with a header: width,height,frames (id, fps, weight optional); default: datasets/default.csv"),
        CLI_STR("--model", &o->model, "NAME", "wan2.1-14b (default), wan2.1-1.3b, wan2.2-5b (datasets/models/)"),
        CLI_STR("--model-file", &o->model_file, "FILE", "any other model, same JSON format"),
        CLI_STR("--act", &o->act, "SETUP", "activation setup of the model: bf16-residual (default), fp32-residual, fp32-offload"),
        CLI_I64("--gpus", &c->gpus, 1, 1000000, "N", "data-parallel ranks (default 16)"),
        CLI_STR("--gpu", &o->gpu, "NAME", "GPU preset: h200 (default, 139.8 GiB), h100-80gb, a100-80gb, a100-40gb, b200"),
        {.name = "--gpu-mem-gib", .kind = CLI_KIND_F64, .dst = &w.gib, .flo = 0, .fhi = 1e6, .flo_open = 1,
         .given = &w.gib_given, .meta = "X", .help = "memory per GPU in GiB, instead of --gpu"},
        {.name = "--mem-margin", .kind = CLI_KIND_F64, .dst = &c->mem_margin, .flo = 0, .fhi = 0.9,
         .what = "a number in [0, 0.9]", .meta = "F", .help = "share of the GPU memory kept free (default 0.05)"},
        {.name = "--mem-tokens", .kind = CLI_KIND_I64, .dst = &c->mem_tokens, .ilo = 1, .ihi = INT64_MAX / 4,
         .what = "a positive whole number", .meta = "N", .help = "M_mem in tokens, at most what the memory model allows"},
        CLI_FLAG("--force", &c->force, "accept --mem-tokens above what the memory model allows"),
        {.name = "--tok-budget", .kind = CLI_KIND_I64, .dst = &c->tok_budget, .ilo = 1, .ihi = INT64_MAX / 4,
         .what = "a positive whole number", .meta = "N", .help = "equal-token's M_tok (default: the longest sample's tokens)"},
        CLI_STR("--comp-model", &w.comp_model, "M", "cost (default: B*C(S) <= M_comp, seconds) | power (the paper's B*S^p)"),
        {.name = "--step-time", .kind = CLI_KIND_F64, .dst = &w.step_time, .flo = 0, .fhi = 1e12, .flo_open = 1,
         .given = &w.step_given, .meta = "SEC", .help = "M_comp in seconds (cost model)"},
        {.name = "--comp-budget", .kind = CLI_KIND_F64, .dst = &c->comp_budget, .flo = 0, .fhi = DBL_MAX,
         .flo_open = 1, .given = &w.comp_given, .what = "a positive number", .meta = "X",
         .help = "M_comp in the compute model's units (default: a memory-full micro-batch of the reference sample)"},
        {.name = "--comp-ref-pct", .kind = CLI_KIND_F64, .dst = &c->comp_ref_pct, .flo = 0, .fhi = 100, .flo_open = 1,
         .what = "a number in (0, 100]", .meta = "P", .help = "percentile of the samples' tokens for the reference sample (default 50)"},
        CLI_STR("--p", &w.p, "P|auto", "exponent of --comp-model power, in (0, 3] (default auto)"),
        CLI_STR("--policy", &w.policy, "P", "equal-token | dual (default) | both (side by side, no files)"),
        CLI_STR("--assign", &w.assign, "A", "sorted-window (default) | random | same-bucket | lpt | kk | verl-kk | sort-by-length (the last two: baselines)"),
        {.name = "--window", .kind = CLI_KIND_I64, .dst = &c->window, .ilo = 1, .ihi = 1000000, .given = &w.window_given,
         .meta = "W", .help = "steps per window of sorted-window, lpt, kk (default 64, or --grad-accum when that is given)"},
        {.name = "--grad-accum", .kind = CLI_KIND_I64, .dst = &c->grad_accum, .ilo = 1, .ihi = 1000000, .given = &w.accum_given,
         .meta = "G", .help = "steps per optimizer step (default 1; lpt/kk: the window); the window follows it unless given"},
        {.name = "--seed", .kind = CLI_KIND_U64, .dst = &c->seed, .ihi = INT64_MAX,
         .what = "a whole number in [0, 2^63)", .meta = "N", .help = "seed of the shuffles and draws (default 0; decimal)"},
        {.name = "--epoch", .kind = CLI_KIND_U64, .dst = &c->epoch, .ihi = INT64_MAX,
         .what = "a whole number in [0, 2^63)", .meta = "E", .help = "epoch: each one reshuffles with a seed derived from (seed, E) (default 0)"},
        {.name = "--flops", .kind = CLI_KIND_F64, .dst = &c->flops, .flo = 0, .fhi = DBL_MAX, .flo_open = 1,
         .what = "a positive number (FLOP/s)", .meta = "X", .help = "sustained FLOP/s per GPU of the FLOP model (default 4e14)"},
        {.name = "--jitter-cv", .kind = CLI_KIND_F64, .dst = &c->jitter_cv, .flo = 0, .fhi = 2,
         .what = "a number in [0, 2]", .meta = "CV", .help = "per-micro-batch noise of real steps for the jitter-aware idle (default 0.05; 0: off)"},
        CLI_STR("--parallel", &w.parallel, "P", "states per rank: ddp | zero1 | zero2 | zero3 | model (default: the model file's, zero3 for the presets)"),
        CLI_FLAG("--extrapolate", &c->extrapolate, "use a profile's memory model outside its measured range (default: clamp batches to it)"),
        CLI_STR("--profile", &o->profile, "FILE", "measured profile CSV (batch,tokens,seconds,peak_bytes; adaload calibrate)"),
        CLI_STR("--oversize", &w.oversize, "error|drop", "a sample over the memory budget: an error (default) or dropped"),
        CLI_FLAG("--no-baselines", &o->no_baselines, "skip the three baseline plans"),
        CLI_STR("--summary-json", &o->summary, "FILE", "the summary as canonical JSON"),
        CLI_STR("--plan-out", &o->plan_out, "FILE", "the plan: one JSON line per step, sample ids per rank"),
        CLI_STR("--per-rank", &o->per_rank, "DIR", "DIR/rank<r>.jsonl per rank: only its own part of the plan"),
        {.name = "--start-step", .kind = CLI_KIND_I64, .dst = &o->start_step, .ilo = 0, .ihi = INT64_MAX / 4,
         .given = &o->start_given, .meta = "N", .help = "--plan-out from step N on (exact resume)"},
        {.name = "--steps", .kind = CLI_KIND_I64, .dst = &o->steps, .ilo = 0, .ihi = INT64_MAX / 4,
         .given = &o->steps_given, .meta = "K", .help = "--plan-out holds at most K steps"},
        CLI_END};
    int r = cli_parse("plan", opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) {
        help(opts);
        return 1;
    }
    if (r != CLI_OK) return -1;
    return finish_args(&w, o, c);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The outputs as one transaction (common/ada_output.h), opened before the planning: an
 * output that names an input, a folder or the other output is refused before any work.
 * NULL when there are none; *rc set on a failure. */
static ada_outset *open_outputs(const options *o, int64_t gpus, ada_out **plan_out, ada_out **summary,
                                ada_out **ranks, int *rc)
{
    *plan_out = *summary = NULL;
    *rc = ADA_EXIT_OK;
    if (!o->plan_out && !o->summary && !o->per_rank) return NULL;
    ada_outset *t = ada_outset_new("plan");
    if (!t) {
        *rc = ADA_EXIT_INTERNAL;
        ada_msg("plan", "out of memory");
        return NULL;
    }
    ada_outset_input(t, o->manifest);
    ada_outset_input(t, o->model_file);
    ada_outset_input(t, o->profile);
    char err[1024];
    if ((o->plan_out && !(*plan_out = ada_outset_add(t, o->plan_out, "--plan-out", err, sizeof err))) ||
        (o->summary && !(*summary = ada_outset_add(t, o->summary, "--summary-json", err, sizeof err)))) {
        *rc = ada_outset_status(t) == ADA_OUT_ENOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
        ada_msg("plan", "%s", err);
        ada_outset_free(t);
        return NULL;
    }
    for (int64_t i = 0; o->per_rank && i < gpus; i++) {
        char path[4200], label[64];
        snprintf(path, sizeof path, "%s/rank%" PRId64 ".jsonl", o->per_rank, i);
        snprintf(label, sizeof label, "--per-rank (rank %" PRId64 ")", i);
        if (strlen(o->per_rank) > 4096 || !(ranks[i] = ada_outset_add(t, path, label, err, sizeof err))) {
            *rc = ada_outset_status(t) == ADA_OUT_ENOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
            ada_msg("plan", "%s", strlen(o->per_rank) > 4096 ? "--per-rank: the folder name is too long" : err);
            ada_outset_free(t);
            return NULL;
        }
    }
    return t;
}

/* Writes the plan (streamed: a long one reports its progress) and the summary, then
 * commits both: neither replaces its target unless both are complete. Exit code. */
static int write_outputs(const options *o, ada_outset *t, ada_out *plan_out, ada_out *summary, ada_out **ranks,
                         const plan_result *r, const plan_baselines *bl, const plan_manifest *mf)
{
    if ((plan_out || o->per_rank) && o->start_step > r->steps)
        return ada_usage_error("plan", "--start-step %" PRId64 ": the plan has %" PRId64 " steps", o->start_step,
                               r->steps);
    char err[1024];
    uint64_t id = o->per_rank ? plan_identity(r) : 0;
    for (int64_t i = 0; o->per_rank && i < r->cfg.gpus; i++) { /* one after the other, each closed when done */
        FILE *f = ada_out_file(ranks[i]);
        int64_t count = o->steps_given ? o->steps : -1;
        plan_status st = f ? plan_write_rank(r, mf, f, i, o->start_step, count, id) : PLAN_ERR_WRITE;
        if (st) {
            ada_msg("plan", "cannot write --per-rank %s (rank %" PRId64 "): %s", o->per_rank, i,
                    st == PLAN_ERR_NOMEM ? "out of memory" : errno ? strerror(errno) : "I/O error");
            return exit_of(st);
        }
        if (ada_out_close(ranks[i], err, sizeof err) != ADA_OUT_OK) {
            ada_msg("plan", "%s", err);
            return ada_outset_status(t) == ADA_OUT_ENOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
        }
    }
    if (plan_out) {
        if (o->start_step > r->steps)
            return ada_usage_error("plan", "--start-step %" PRId64 ": the plan has %" PRId64 " steps", o->start_step,
                                   r->steps);
        plan_status st = plan_write_plan(r, mf, ada_out_file(plan_out), o->start_step, o->steps_given ? o->steps : -1);
        if (st) {
            ada_msg("plan", "cannot write --plan-out %s: %s", o->plan_out,
                    st == PLAN_ERR_NOMEM ? "out of memory" : errno ? strerror(errno) : "I/O error");
            return exit_of(st);
        }
    }
    if (summary) {
        json_t *j = plan_summary_json(r, bl);
        char *sum = j ? ada_json_text(j) : NULL;
        json_decref(j);
        if (!sum) {
            ada_msg("plan", "out of memory rendering the summary");
            return ADA_EXIT_INTERNAL;
        }
        int bad = fputs(sum, ada_out_file(summary)) == EOF;
        free(sum);
        if (bad) {
            ada_msg("plan", "cannot write --summary-json %s: %s", o->summary, errno ? strerror(errno) : "I/O error");
            return ADA_EXIT_USAGE;
        }
    }
    if (ada_outset_commit(t, err, sizeof err) != ADA_OUT_OK) {
        ada_msg("plan", "%s", err);
        return ada_outset_status(t) == ADA_OUT_ENOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
    }
    return ADA_EXIT_OK;
}

static void print_warnings(const plan_result *r)
{
    for (unsigned bit = 1; bit < (1u << PLAN_NWARN); bit <<= 1)
        if (r->warnings & bit) ada_msg("plan", "warning: %s", plan_warning_text(bit));
}

static int load_inputs(options *o, plan_config *cfg, plan_model *model, plan_cost *prof, plan_manifest **mf)
{
    if (!o->manifest) {
        snprintf(o->manifest_buf, sizeof o->manifest_buf, "%s/datasets/default.csv", ada_source_dir());
        o->manifest = o->manifest_buf;
    }
    if (!o->model_file) {
        const char *name = o->model ? o->model : "wan2.1-14b";
        if (strcmp(name, "wan2.1-14b") && strcmp(name, "wan2.1-1.3b") && strcmp(name, "wan2.2-5b"))
            return ada_usage_error("plan", "--model %s: unknown (wan2.1-14b, wan2.1-1.3b, wan2.2-5b, "
                                           "or --model-file FILE)", name);
        snprintf(o->model_buf, sizeof o->model_buf, "%s/datasets/models/%s.json", ada_source_dir(), name);
        o->model_file = o->model_buf;
    }
    plan_error err = {{0}};
    plan_status st = plan_model_load(o->model_file, model, &err);
    if (!st && o->profile && !(st = plan_cost_from_profile(o->profile, prof, &err))) cfg->cost = prof;
    cfg->manifest_name = base_name(o->manifest);
    if (!st) st = plan_manifest_read(o->manifest, model, o->plan_out != NULL || o->per_rank != NULL, mf, &err);
    if (st) {
        ada_msg("plan", "%s", err.msg);
        return exit_of(st);
    }
    return ADA_EXIT_OK;
}

int cmd_plan(int argc, char **argv)
{
    static options o; /* 8 KiB of paths: not on the stack */
    memset(&o, 0, sizeof o);
    plan_config cfg;
    plan_config_default(&cfg);
    int prc = parse_args(argc, argv, &o, &cfg);
    if (prc > 0) return ADA_EXIT_OK;
    if (prc < 0) return ADA_EXIT_USAGE;

    plan_model model;
    plan_cost prof;
    plan_manifest *mf = NULL;
    int rc = load_inputs(&o, &cfg, &model, &prof, &mf);
    if (rc) return rc;
    ada_out *plan_out = NULL, *summary = NULL, **ranks = NULL;
    int made_dir = 0;
    if (o.per_rank && !o.both) {
        struct stat sb;
        if (stat(o.per_rank, &sb) != 0) {
            if (mkdir(o.per_rank, 0777) != 0) {
                plan_manifest_free(mf);
                return ada_usage_error("plan", "--per-rank %s: cannot create the folder: %s", o.per_rank, strerror(errno));
            }
            made_dir = 1;
        } else if (!S_ISDIR(sb.st_mode)) {
            plan_manifest_free(mf);
            return ada_usage_error("plan", "--per-rank %s: not a folder", o.per_rank);
        }
        if (!(ranks = calloc((size_t)cfg.gpus, sizeof *ranks))) {
            if (made_dir) rmdir(o.per_rank);
            plan_manifest_free(mf);
            ada_msg("plan", "out of memory");
            return ADA_EXIT_INTERNAL;
        }
    }
    ada_outset *t = open_outputs(&o, cfg.gpus, &plan_out, &summary, ranks, &rc);
    if (rc) {
        if (made_dir) rmdir(o.per_rank);
        free(ranks);
        plan_manifest_free(mf);
        return rc;
    }
    /* The tables go to stderr when an output is standard output. */
    FILE *table = (o.plan_out && !strcmp(o.plan_out, "-")) || (o.summary && !strcmp(o.summary, "-")) ? stderr : stdout;
    plan_error err = {{0}};
    plan_result *a = NULL, *b = NULL;
    plan_baselines bl;
    memset(&bl, 0, sizeof bl);
    plan_status st;
    if (o.both) {
        cfg.policy = PLAN_POLICY_EQUAL_TOKEN;
        st = plan_build(mf, &model, &cfg, &a, &err);
        if (!st) {
            cfg.policy = PLAN_POLICY_DUAL;
            st = plan_build(mf, &model, &cfg, &b, &err);
        }
        if (!st) {
            print_warnings(b);
            plan_print_side_by_side(table, a, b);
        }
    } else {
        st = plan_build(mf, &model, &cfg, &a, &err);
        if (!st && !o.no_baselines) st = plan_build_baselines(mf, &model, &cfg, a, &bl, &err);
        if (!st) {
            print_warnings(a);
            plan_print_summary(table, a, o.no_baselines ? NULL : &bl);
            if (t) rc = write_outputs(&o, t, plan_out, summary, ranks, a, o.no_baselines ? NULL : &bl, mf);
        }
    }
    if (st) {
        ada_msg("plan", "%s", err.msg);
        rc = exit_of(st);
    }
    ada_outset_free(t); /* removes the temporaries of an uncommitted transaction */
    if (made_dir && rc) rmdir(o.per_rank); /* a folder made here goes when nothing was written */
    free(ranks);
    plan_baselines_free(&bl);
    plan_result_free(a);
    plan_result_free(b);
    plan_manifest_free(mf);
    return rc;
}
