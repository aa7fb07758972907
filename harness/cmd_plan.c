/* cmd_plan.c -- `adaload plan`: the dual-constraint batch planner and its simulator.
 *
 *   adaload plan [--manifest FILE] [--model NAME | --model-file FILE] [--gpus N]
 *                [--policy equal-token|dual|both] [--assign random|same-bucket] [--p P|auto]
 *                [--seed N] [--summary-json FILE] [--plan-out FILE] ...   (--help lists all)
 *
 * Reads the manifest (default: datasets/default.csv of the source tree), plans it with the
 * planner library (planner/planner.h) and prints the summary table; --summary-json and
 * --plan-out write the canonical JSON summary and the plan (one JSON line per step). Both
 * files go to temporary names first and are renamed only when everything succeeded, so a
 * failure leaves no output at all. `--policy both` (used by `adaload run`) plans under both
 * policies with the same seed and prints them side by side; it writes no files.
 * Exit: 0 ok, 2 bad usage or bad input (one line naming the option, or file:line: column),
 * 1 an output could not be written or memory ran out.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "planner.h"

#define GIB 1073741824.0

static void help(const cli_opt *opts)
{
    printf("usage: adaload plan [options]\n"
           "  Plans per-GPU batches for a manifest of samples and simulates an epoch.\n\n");
    cli_print_options(stdout, opts);
    printf("exit: 0 ok, 1 an output could not be written, 2 bad usage or bad input\n");
}

typedef struct {
    const char *manifest, *model, *model_file, *profile, *summary, *plan_out;
    int both;
} options;

static int exit_of(plan_status st)
{
    return (st == PLAN_ERR_WRITE || st == PLAN_ERR_NOMEM) ? ADA_EXIT_FAIL : ADA_EXIT_USAGE;
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

/* 0, 1 for --help (after printing it), -1 for a usage error (message printed). Adding an
 * option is one line in opts[] (cli_opts.h) plus, for a value that needs more than a range
 * check, a few lines after cli_parse. */
static int parse_args(int argc, char **argv, options *o, plan_config *c)
{
    const char *policy = NULL, *assign = NULL, *p = NULL, *oversize = NULL;
    double gib = 0;
    int gib_given = 0;
    const cli_opt opts[] = {
        CLI_STR("--manifest", &o->manifest, "FILE", "CSV with a header: width,height,frames (id, fps, weight optional); default: datasets/default.csv"),
        CLI_STR("--model", &o->model, "NAME", "wan2.1-14b (default), wan2.1-1.3b, wan2.2-5b (datasets/models/)"),
        CLI_STR("--model-file", &o->model_file, "FILE", "any other model, same JSON format"),
        CLI_I64("--gpus", &c->gpus, 1, 1000000, "N", "data-parallel ranks (default 16)"),
        {.name = "--gpu-mem-gib", .kind = CLI_KIND_F64, .dst = &gib, .flo = 0, .fhi = 1e6, .flo_open = 1,
         .given = &gib_given, .meta = "X", .help = "memory per GPU in GiB (default 141, an H200)"},
        {.name = "--mem-tokens", .kind = CLI_KIND_I64, .dst = &c->mem_tokens, .ilo = 1, .ihi = INT64_MAX / 4,
         .what = "a positive whole number", .meta = "N", .help = "M_mem in tokens, instead of the memory model"},
        {.name = "--tok-budget", .kind = CLI_KIND_I64, .dst = &c->tok_budget, .ilo = 1, .ihi = INT64_MAX / 4,
         .what = "a positive whole number", .meta = "N", .help = "equal-token's M_tok (default: the longest sample's tokens)"},
        {.name = "--comp-budget", .kind = CLI_KIND_F64, .dst = &c->comp_budget, .flo = 0, .fhi = DBL_MAX,
         .flo_open = 1, .what = "a positive number", .meta = "X", .help = "dual's M_comp (default: the longest sample's S^p)"},
        CLI_STR("--policy", &policy, "P", "equal-token | dual (default) | both (side by side, no files)"),
        CLI_STR("--assign", &assign, "A", "random (default) | same-bucket"),
        CLI_STR("--p", &p, "P|auto", "exponent of the compute constraint, in (0, 3] (default auto)"),
        {.name = "--seed", .kind = CLI_KIND_U64, .dst = &c->seed, .ihi = INT64_MAX,
         .what = "a whole number in [0, 2^63)", .meta = "N", .help = "seed of the shuffles and draws (default 0; decimal)"},
        {.name = "--flops", .kind = CLI_KIND_F64, .dst = &c->flops, .flo = 0, .fhi = DBL_MAX, .flo_open = 1,
         .what = "a positive number (FLOP/s)", .meta = "X", .help = "sustained FLOP/s per GPU of the FLOP model (default 4e14)"},
        CLI_STR("--profile", &o->profile, "FILE", "measured cost: CSV tokens,seconds, fitted by least squares"),
        CLI_STR("--oversize", &oversize, "error|drop", "a sample over the memory budget: an error (default) or dropped"),
        CLI_STR("--summary-json", &o->summary, "FILE", "the summary as canonical JSON"),
        CLI_STR("--plan-out", &o->plan_out, "FILE", "the plan: one JSON line per step, sample ids per rank"),
        CLI_END};
    int r = cli_parse("plan", opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) {
        help(opts);
        return 1;
    }
    if (r != CLI_OK) return -1;
    if (gib_given) c->gpu_mem_bytes = gib * GIB;
    static const char *const policies[] = {"equal-token", "dual", "both", NULL};
    static const char *const assigns[] = {"random", "same-bucket", NULL};
    static const char *const oversizes[] = {"error", "drop", NULL};
    int k;
    if (policy) {
        if ((k = pick("--policy", policy, policies, "equal-token, dual or both")) < 0) return -1;
        if (k == 2) o->both = 1;
        else c->policy = k ? PLAN_POLICY_DUAL : PLAN_POLICY_EQUAL_TOKEN;
    }
    if (assign) {
        if ((k = pick("--assign", assign, assigns, "random or same-bucket")) < 0) return -1;
        c->assign = k ? PLAN_ASSIGN_SAME_BUCKET : PLAN_ASSIGN_RANDOM;
    }
    if (oversize) {
        if ((k = pick("--oversize", oversize, oversizes, "error or drop")) < 0) return -1;
        c->oversize_drop = k;
    }
    if (p && !strcmp(p, "auto")) {
        c->p = 0;
    } else if (p) {
        double d;
        if (cli_parse_f64(p, &d) || !(d > 0 && d <= 3))
            return ada_usage_error("plan", "--p %s: must be a number in (0, 3] or auto", p), -1;
        c->p = d;
    }
    if (o->model && o->model_file)
        return ada_usage_error("plan", "--model and --model-file: give one of them"), -1;
    if (o->both && (o->summary || o->plan_out))
        return ada_usage_error("plan", "--policy both prints a table only: drop --summary-json/--plan-out"), -1;
    if (o->summary && o->plan_out && !strcmp(o->summary, o->plan_out))
        return ada_usage_error("plan", "--summary-json and --plan-out name the same file"), -1;
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* "path.tmp.<pid>" in a malloc'd buffer. */
static char *tmp_name(const char *path)
{
    size_t n = strlen(path) + 32;
    char *t = malloc(n);
    if (t) snprintf(t, n, "%s.tmp.%ld", path, (long)getpid());
    return t;
}

static int close_synced(FILE *f)
{
    int ok = fflush(f) == 0;
    ok = (fsync(fileno(f)) == 0) && ok;
    ok = (fclose(f) == 0) && ok;
    return ok ? 0 : -1;
}

/* Writes the requested files to temporaries, then renames them all; nothing is left behind
 * on a failure. */
static int write_outputs(const options *o, const plan_result *r, const plan_manifest *mf)
{
    char *tp = o->plan_out ? tmp_name(o->plan_out) : NULL;
    char *ts = o->summary ? tmp_name(o->summary) : NULL;
    int rc = ADA_EXIT_OK;
    const char *what = NULL;
    if ((o->plan_out && !tp) || (o->summary && !ts)) {
        rc = ADA_EXIT_FAIL;
        what = "out of memory";
        goto done;
    }
    if (tp) {
        FILE *f = fopen(tp, "wb");
        if (!f) {
            rc = ADA_EXIT_FAIL;
            what = o->plan_out;
            goto done;
        }
        static char buf[1 << 20];
        setvbuf(f, buf, _IOFBF, sizeof buf);
        plan_status st = plan_write_plan(r, mf, f);
        if (close_synced(f) || st) {
            rc = ADA_EXIT_FAIL;
            what = o->plan_out;
            goto done;
        }
    }
    if (ts) {
        json_t *j = plan_summary_json(r);
        FILE *f = j ? fopen(ts, "wb") : NULL;
        int bad = !f;
        if (f) {
            bad = json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) != 0;
            bad = (fputc('\n', f) == EOF) || bad;
            bad = close_synced(f) || bad;
        }
        json_decref(j);
        if (bad) {
            rc = ADA_EXIT_FAIL;
            what = o->summary;
            goto done;
        }
    }
    if (tp && rename(tp, o->plan_out) != 0) {
        rc = ADA_EXIT_FAIL;
        what = o->plan_out;
        goto done;
    }
    if (ts && rename(ts, o->summary) != 0) {
        rc = ADA_EXIT_FAIL;
        what = o->summary;
        if (tp) remove(o->plan_out); /* all or nothing */
        goto done;
    }
done:
    if (rc != ADA_EXIT_OK) {
        ada_msg("plan", "cannot write %s: %s", what, errno ? strerror(errno) : "I/O error");
        if (tp) remove(tp);
        if (ts) remove(ts);
    }
    free(tp);
    free(ts);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    plan_config cfg;
    plan_config_default(&cfg);
    int prc = parse_args(argc, argv, &o, &cfg);
    if (prc > 0) return ADA_EXIT_OK;
    if (prc < 0) return ADA_EXIT_USAGE;

    char manifest_path[4096], model_path[4096];
    if (!o.manifest) {
        snprintf(manifest_path, sizeof manifest_path, "%s/datasets/default.csv", ada_source_dir());
        o.manifest = manifest_path;
    }
    if (!o.model_file) {
        const char *name = o.model ? o.model : "wan2.1-14b";
        if (strcmp(name, "wan2.1-14b") && strcmp(name, "wan2.1-1.3b") && strcmp(name, "wan2.2-5b"))
            return ada_usage_error("plan", "--model %s: unknown (wan2.1-14b, wan2.1-1.3b, wan2.2-5b, "
                                           "or --model-file FILE)", name);
        snprintf(model_path, sizeof model_path, "%s/datasets/models/%s.json", ada_source_dir(), name);
        o.model_file = model_path;
    }

    plan_error err = {{0}};
    plan_model model;
    plan_status st = plan_model_load(o.model_file, &model, &err);
    if (st) {
        ada_msg("plan", "%s", err.msg);
        return exit_of(st);
    }
    plan_cost prof;
    if (o.profile) {
        if ((st = plan_cost_from_profile(o.profile, &prof, &err))) {
            ada_msg("plan", "%s", err.msg);
            return exit_of(st);
        }
        cfg.cost = &prof;
    }
    cfg.manifest_name = base_name(o.manifest);

    plan_manifest *mf = NULL;
    if ((st = plan_manifest_read(o.manifest, &model, o.plan_out != NULL, &mf, &err))) {
        ada_msg("plan", "%s", err.msg);
        return exit_of(st);
    }
    int rc = ADA_EXIT_OK;
    plan_result *a = NULL, *b = NULL;
    if (o.both) {
        cfg.policy = PLAN_POLICY_EQUAL_TOKEN;
        st = plan_build(mf, &model, &cfg, &a, &err);
        if (!st) {
            cfg.policy = PLAN_POLICY_DUAL;
            st = plan_build(mf, &model, &cfg, &b, &err);
        }
        if (!st) plan_print_side_by_side(stdout, a, b);
    } else {
        st = plan_build(mf, &model, &cfg, &a, &err);
        if (!st) plan_print_summary(stdout, a);
        if (!st && (o.summary || o.plan_out)) rc = write_outputs(&o, a, mf);
    }
    if (st) {
        ada_msg("plan", "%s", err.msg);
        rc = exit_of(st);
    }
    plan_result_free(a);
    plan_result_free(b);
    plan_manifest_free(mf);
    return rc;
}
