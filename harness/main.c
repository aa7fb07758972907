/* main.c -- `adaload`: one program, one subcommand per job.
 *
 *   adaload run        the main job: env, verify + quick bench when a GPU is present,
 *                      the planner on the default manifest under both policies
 *   adaload env        what this machine has (CUDA devices, OpenBLAS, libraries, build)
 *   adaload verify     kernel variants against the float64 reference (GPU)
 *   adaload gate       CI's gate: a passing verification record for these kernel sources
 *   adaload bench      Google Benchmark timings into a results run folder
 *   adaload compare    two runs, noise-aware verdict per benchmark
 *   adaload report     the README table of a results run
 *   adaload plan       the dual-constraint batch planner and its simulator
 *   adaload results    the runs under results/: list, index, check, prune
 *   adaload dashboard  the static results site (history, regressions, verification)
 *   adaload calibrate  measure the planner's cost and memory model on a GPU (PyTorch)
 *   adaload version    versions of adaload, its libraries and the kernel sources
 * `adaload CMD --help` explains each. Exit codes (cli.h): 0 ok, 1 a check failed, 2 bad usage,
 * bad input or an output that cannot be written, 3 internal or resource failure, 77 nothing
 * can run here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"run", cmd_run, "the main job: env, GPU verification and benchmarks if a GPU is here, planner"},
    {"env", cmd_env, "what this machine has: CUDA devices, OpenBLAS, library versions"},
    {"verify", cmd_verify, "check kernel variants against the float64 reference (needs a GPU)"},
    {"gate", cmd_gate, "CI gate: a committed passing verification record for these kernels"},
    {"bench", cmd_bench, "time kernels (Google Benchmark) into results/<testbed>/bench/<run>/"},
    {"compare", cmd_compare, "compare two benchmark runs with a noise-aware rule"},
    {"report", cmd_report, "print the results table of a benchmark run (markdown)"},
    {"plan", cmd_plan, "plan batches for a manifest (dual-constraint planner) and simulate"},
    {"results", cmd_results, "list, index, check and prune the runs under results/"},
    {"dashboard", cmd_dashboard, "the static results site: history, regressions, verification"},
    {"calibrate", cmd_calibrate, "measure the planner's cost and memory model on this GPU (PyTorch)"},
    {"version", cmd_version, "versions of adaload, its libraries and the kernel sources"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: adaload <command> [options]   (adaload <command> --help)\n\ncommands:\n");
    for (const command *c = commands; c->name; c++) fprintf(f, "  %-9s  %s\n", c->name, c->summary);
    fprintf(f, "\nexit codes: 0 ok, 1 a check failed, 2 bad usage or input, 3 internal failure, 77 nothing can run here\n");
}

/* What a command printed must have reached standard output: a full disk or /dev/full is an
 * output that cannot be written (exit 2, or 3 when the command already failed internally),
 * never a silent 0. */
static int stdout_written(const char *cmd, int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    int e = errno ? errno : EIO;
    ada_msg(cmd, "cannot write standard output: %s", strerror(e));
    return rc == ADA_EXIT_INTERNAL ? rc : ADA_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return ADA_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return stdout_written("help", ADA_EXIT_OK);
    }
    if (!strcmp(argv[1], "--version")) return stdout_written("version", cmd_version(1, argv + 1));
    for (const command *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) return stdout_written(c->name, c->fn(argc - 1, argv + 1));
    fprintf(stderr, "adaload: unknown command '%s' (adaload --help lists them)\n", argv[1]);
    return ADA_EXIT_USAGE;
}
