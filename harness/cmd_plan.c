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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "planner.h"

#define GIB 1073741824.0

static void help(void)
{
    printf(
        "usage: adaload plan [options]\n"
        "  Plans per-GPU batches for a manifest of samples and simulates an epoch.\n\n"
        "  --manifest FILE       CSV with a header: width,height,frames (id, fps, weight optional)\n"
        "                        default: datasets/default.csv\n"
        "  --model NAME          wan2.1-14b (default), wan2.1-1.3b, wan2.2-5b (datasets/models/)\n"
        "  --model-file FILE     any other model, same JSON format\n"
        "  --gpus N              data-parallel ranks (default 16)\n"
        "  --gpu-mem-gib X       memory per GPU in GiB (default 141, an H200)\n"
        "  --mem-tokens N        M_mem in tokens, instead of the memory model\n"
        "  --tok-budget N        equal-token's M_tok (default: the longest sample's tokens)\n"
        "  --comp-budget X       dual's M_comp (default: the longest sample's S^p)\n"
        "  --policy P            equal-token | dual (default) | both (side by side, no files)\n"
        "  --assign A            random (default) | same-bucket\n"
        "  --p P|auto            exponent of the compute constraint, in (0, 3] (default auto)\n"
        "  --seed N              seed of the shuffles and draws (default 0)\n"
        "  --flops X             sustained FLOP/s per GPU of the FLOP model (default 4e14)\n"
        "  --profile FILE        measured cost: CSV tokens,seconds, fitted by least squares\n"
        "  --oversize error|drop a sample over the memory budget: an error (default) or dropped\n"
        "  --summary-json FILE   the summary as canonical JSON\n"
        "  --plan-out FILE       the plan: one JSON line per step, sample ids per rank\n"
        "exit: 0 ok, 1 an output could not be written, 2 bad usage or bad input\n");
}

typedef struct {
    const char *manifest, *model, *model_file, *profile, *summary, *plan_out;
    int both;
} options;

static int exit_of(plan_status st)
{
    return (st == PLAN_ERR_WRITE || st == PLAN_ERR_NOMEM) ? ADA_EXIT_FAIL : ADA_EXIT_USAGE;
}

/* Parses "--name value" and "--name=value" into (name, value); returns -1 for a usage error. */
static int parse_args(int argc, char **argv, options *o, plan_config *c)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
        if (strncmp(a, "--", 2) != 0)
            return ada_usage_error("plan", "unexpected argument '%s' (try --help)", a), -1;
        char name[64];
        const char *v = NULL, *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        if (n >= sizeof name) return ada_usage_error("plan", "unknown option '%s' (try --help)", a), -1;
        memcpy(name, a, n);
        name[n] = '\0';
        static const char *const known[] = {"--manifest", "--model", "--model-file", "--gpus", "--gpu-mem-gib",
                                            "--mem-tokens", "--tok-budget", "--comp-budget", "--policy",
                                            "--assign", "--p", "--seed", "--flops", "--profile", "--oversize",
                                            "--summary-json", "--plan-out", NULL};
        int ok = 0;
        for (int k = 0; known[k]; k++) ok |= !strcmp(name, known[k]);
        if (!ok) return ada_usage_error("plan", "unknown option '%s' (try --help)", name), -1;
        if (eq) v = eq + 1;
        else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) v = argv[++i];
        else return ada_usage_error("plan", "%s: missing value", name), -1;
        if (!*v) return ada_usage_error("plan", "%s: empty value", name), -1;

        int64_t x;
        double d;
        uint64_t u;
        if (!strcmp(name, "--manifest")) o->manifest = v;
        else if (!strcmp(name, "--model")) o->model = v;
        else if (!strcmp(name, "--model-file")) o->model_file = v;
        else if (!strcmp(name, "--profile")) o->profile = v;
        else if (!strcmp(name, "--summary-json")) o->summary = v;
        else if (!strcmp(name, "--plan-out")) o->plan_out = v;
        else if (!strcmp(name, "--gpus")) {
            if (ada_parse_i64(v, 1, 1000000, &x))
                return ada_usage_error("plan", "--gpus %s: must be a whole number in [1, 1000000]", v), -1;
            c->gpus = x;
        } else if (!strcmp(name, "--gpu-mem-gib")) {
            if (ada_parse_double(v, &d) || !(d > 0) || d > 1e6)
                return ada_usage_error("plan", "--gpu-mem-gib %s: must be a number in (0, 1e6]", v), -1;
            c->gpu_mem_bytes = d * GIB;
        } else if (!strcmp(name, "--mem-tokens") || !strcmp(name, "--tok-budget")) {
            if (ada_parse_i64(v, 1, INT64_MAX / 4, &x))
                return ada_usage_error("plan", "%s %s: must be a positive whole number", name, v), -1;
            if (name[2] == 'm') c->mem_tokens = x;
            else c->tok_budget = x;
        } else if (!strcmp(name, "--comp-budget")) {
            if (ada_parse_double(v, &d) || !(d > 0))
                return ada_usage_error("plan", "--comp-budget %s: must be a positive number", v), -1;
            c->comp_budget = d;
        } else if (!strcmp(name, "--policy")) {
            if (!strcmp(v, "equal-token")) c->policy = PLAN_POLICY_EQUAL_TOKEN;
            else if (!strcmp(v, "dual")) c->policy = PLAN_POLICY_DUAL;
            else if (!strcmp(v, "both")) o->both = 1;
            else return ada_usage_error("plan", "--policy %s: equal-token, dual or both", v), -1;
        } else if (!strcmp(name, "--assign")) {
            if (!strcmp(v, "random")) c->assign = PLAN_ASSIGN_RANDOM;
            else if (!strcmp(v, "same-bucket")) c->assign = PLAN_ASSIGN_SAME_BUCKET;
            else return ada_usage_error("plan", "--assign %s: random or same-bucket", v), -1;
        } else if (!strcmp(name, "--p")) {
            if (!strcmp(v, "auto")) c->p = 0;
            else if (ada_parse_double(v, &d) || !(d > 0 && d <= 3))
                return ada_usage_error("plan", "--p %s: must be a number in (0, 3] or auto", v), -1;
            else c->p = d;
        } else if (!strcmp(name, "--seed")) {
            if (ada_parse_u64(v, &u) || u > (uint64_t)INT64_MAX)
                return ada_usage_error("plan", "--seed %s: must be a whole number in [0, 2^63)", v), -1;
            c->seed = u;
        } else if (!strcmp(name, "--flops")) {
            if (ada_parse_double(v, &d) || !(d > 0))
                return ada_usage_error("plan", "--flops %s: must be a positive number (FLOP/s)", v), -1;
            c->flops = d;
        } else if (!strcmp(name, "--oversize")) {
            if (!strcmp(v, "error")) c->oversize_drop = 0;
            else if (!strcmp(v, "drop")) c->oversize_drop = 1;
            else return ada_usage_error("plan", "--oversize %s: error or drop", v), -1;
        }
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
    if (prc > 0) {
        help();
        return ADA_EXIT_OK;
    }
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
