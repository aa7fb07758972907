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
 *   adaload version    versions of adaload, its libraries and the kernel sources
 * `adaload CMD --help` explains each. Exit codes: 0 ok, 1 check failed, 2 bad usage or
 * input, 77 nothing can run here.
 */
#include <stdio.h>
#include <string.h>

#include "build_info.h"
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
    {"bench", cmd_bench, "time kernels (Google Benchmark) into results/<testbed>/<run>/"},
    {"compare", cmd_compare, "compare two benchmark runs with a noise-aware rule"},
    {"report", cmd_report, "print the results table of a benchmark run (markdown)"},
    {"plan", cmd_plan, "plan batches for a manifest (dual-constraint planner) and simulate"},
    {"version", cmd_version, "versions of adaload, its libraries and the kernel sources"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: adaload <command> [options]   (adaload <command> --help)\n\ncommands:\n");
    for (const command *c = commands; c->name; c++) fprintf(f, "  %-8s  %s\n", c->name, c->summary);
    fprintf(f, "\nexit codes: 0 ok, 1 a check failed, 2 bad usage or input, 77 nothing can run here\n");
}

int cmd_version(int argc, char **argv)
{
    if (argc > 1) {
        if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
            printf("usage: adaload version\n  prints adaload's version, its libraries' versions "
                   "and the kernel source hash\n");
            return ADA_EXIT_OK;
        }
        return ada_usage_error("version", "unexpected argument '%s'", argv[1]);
    }
    json_t *info = ada_sysinfo();
    json_t *b = json_object_get(info, "build");
    json_t *libs = json_object_get(info, "libraries");
    printf("adaload %s\n", ADALOAD_VERSION);
    printf("kernel sources  %s\n", ADALOAD_KERNEL_HASH);
    printf("gpu kernels     %s\n", ADALOAD_HAVE_CUDA ? "built (CUDA architectures " ADALOAD_CUDA_ARCHS ")"
                                                       : "not built (no CUDA toolkit)");
    printf("openblas        %s\n", ADALOAD_OPENBLAS_VERSION);
    printf("jansson         %s\n", json_string_value(json_object_get(libs, "jansson")));
    printf("benchmark       %s\n", ADALOAD_GBENCH_VERSION);
    printf("criterion       %s\n", ADALOAD_CRITERION_VERSION);
    printf("build           %s, %s%s\n", json_string_value(json_object_get(b, "build_type")),
           ADALOAD_C_COMPILER, ADALOAD_SANITIZED ? ", ASan+UBSan" : "");
    json_decref(info);
    return ADA_EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return ADA_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return ADA_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) return cmd_version(1, argv + 1);
    for (const command *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) return c->fn(argc - 1, argv + 1);
    fprintf(stderr, "adaload: unknown command '%s' (adaload --help lists them)\n", argv[1]);
    return ADA_EXIT_USAGE;
}
