/* cmd_calibrate.c -- `adaload calibrate`: measures the planner's cost and memory model on a
 * GPU by running planner/calibrate/calibrate.py (PyTorch: Wan-shaped blocks with SDPA and
 * per-block checkpointing at several micro-batches), which writes a profile CSV for
 * `adaload plan --profile` and a JSON of the raw measurements beside it.
 *
 *   adaload calibrate --out profile.csv [--model NAME | --model-file FILE] [--act SETUP]
 *                     [--points BxS,...] [--repetitions N]
 *
 * Exit: 0 ok, 2 bad usage or the script failed on its arguments, 3 the script failed,
 * 77 no python3 with PyTorch, or no CUDA device (nothing written).
 */
#include <stdio.h>
#include <string.h>

#include "ada_spawn.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"

/* "BxS,BxS,...": whole numbers >= 1 (calibrate.py reads the same form). */
static int points_ok(const char *p)
{
    for (;;) {
        for (int part = 0; part < 2; part++) {
            size_t d = strspn(p, "0123456789");
            if (d == 0 || d > 9 || strspn(p, "0") == d) return 0;
            p += d;
            if (part == 0 && *p != 'x' && *p != 'X') return 0;
            if (part == 0) p++;
        }
        if (*p == '\0') return 1;
        if (*p++ != ',') return 0;
    }
}

int cmd_calibrate(int argc, char **argv)
{
    const char *out = NULL, *model = "wan2.1-14b", *model_file = NULL, *act = "bf16-residual", *points = NULL,
               *depths = NULL, *span = NULL;
    int64_t reps = 5;
    int model_given = 0;
    const cli_opt opts[] = {
        CLI_STR("--out", &out, "FILE", "the profile CSV to write (FILE.json gets the raw measurements)"),
        {.name = "--model", .kind = CLI_KIND_STR, .dst = &model, .given = &model_given, .meta = "NAME",
         .help = "wan2.1-14b (default) or wan2.1-1.3b: the block's widths (datasets/models/)"},
        CLI_STR("--model-file", &model_file, "FILE", "any other model preset"),
        CLI_STR("--act", &act, "SETUP", "bf16-residual (default) or fp32-residual"),
        CLI_STR("--points", &points, "BxS,...", "micro-batches to measure (default B 1,2,4,8 x S 1560..75600)"),
        CLI_STR("--span", &span, "SUMMARY", "a plan's --summary-json: measure the token counts and batch sizes it uses"),
        CLI_STR("--depths", &depths, "K,...", "stack depths the time and memory are fitted over (default 1,2,4,8)"),
        CLI_I64("--repetitions", &reps, 1, 1000, "N", "timed steps per point and depth, all kept (default 5)"),
        CLI_END};
    int r = cli_parse("calibrate", opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) {
        printf("usage: adaload calibrate --out FILE [options]\n"
               "  Measures step time and peak memory of Wan-shaped blocks on this GPU (PyTorch) and\n"
               "  writes a profile for `adaload plan --profile`.\n\n");
        cli_print_options(stdout, opts);
        printf("exit: 0 ok, 2 bad usage, 3 the measurement failed, 77 no PyTorch or no CUDA device\n");
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    if (!out) return ada_usage_error("calibrate", "--out: missing (the profile CSV to write)");
    if (model_given && model_file) return ada_usage_error("calibrate", "--model and --model-file: give one of them");
    char path[4096], script[4096];
    if (!model_file) {
        if (strcmp(model, "wan2.1-14b") && strcmp(model, "wan2.1-1.3b") && strcmp(model, "wan2.2-5b"))
            return ada_usage_error("calibrate", "--model %s: unknown (wan2.1-14b, wan2.1-1.3b, wan2.2-5b)", model);
        snprintf(path, sizeof path, "%s/datasets/models/%s.json", ada_source_dir(), model);
        model_file = path;
    }
    if (strcmp(act, "bf16-residual") && strcmp(act, "fp32-residual"))
        return ada_usage_error("calibrate", "--act %s: bf16-residual or fp32-residual", act);
    if (points && !points_ok(points)) /* bad usage is 2 before "nothing can run here" is 77 */
        return ada_usage_error("calibrate", "--points %s: BxS,BxS,... with whole numbers B >= 1 and S >= 1", points);
    if (!ada_python_has_module("torch")) {
        ada_msg("calibrate", "nothing can run here: it needs python3 with PyTorch and a CUDA GPU "
                             "(python3 -c 'import torch' failed); nothing written");
        return ADA_EXIT_SKIP;
    }
    snprintf(script, sizeof script, "%s/planner/calibrate/calibrate.py", ada_source_dir());
    char reps_s[32];
    snprintf(reps_s, sizeof reps_s, "%lld", (long long)reps);
    char *av[24];
    int k = 0;
    av[k++] = "python3";
    av[k++] = script;
    av[k++] = "--model-file";
    av[k++] = (char *)model_file;
    av[k++] = "--act";
    av[k++] = (char *)act;
    av[k++] = "--out";
    av[k++] = (char *)out;
    av[k++] = "--repetitions";
    av[k++] = reps_s;
    if (points) {
        av[k++] = "--points";
        av[k++] = (char *)points;
    }
    if (span) {
        av[k++] = "--span";
        av[k++] = (char *)span;
    }
    if (depths) {
        av[k++] = "--depths";
        av[k++] = (char *)depths;
    }
    av[k] = NULL;
    fflush(stdout);
    int rc = ada_spawn_wait(av, 0);
    if (rc == 0) return ADA_EXIT_OK;
    if (rc == 77) {
        ada_msg("calibrate", "nothing can run here: PyTorch sees no CUDA device; nothing written");
        return ADA_EXIT_SKIP;
    }
    if (rc == 2) return ada_usage_error("calibrate", "calibrate.py refused its arguments (above)");
    ada_msg("calibrate", "calibrate.py failed (exit %d)", rc);
    return ADA_EXIT_INTERNAL;
}
