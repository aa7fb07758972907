/* cmd_run.c -- `adaload run`: the main job on the embedded defaults.
 *   1. env: what this machine has;
 *   2. with a CUDA device: verify (quick grid) and bench (quick set);
 *      without one: says these were skipped and why;
 *   3. the planner on the default manifest under both policies, side by side.
 * Ends with a summary of what ran and what was skipped. Exit: the worst of the steps that
 * ran (1 if a check failed), 0 if all that could run passed. */
#include <stdio.h>
#include <string.h>

#include "build_info.h"
#include "ada_cuda.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"

typedef struct {
    const char *what;
    int rc; /* -1: not run */
    const char *why_skipped;
} step;

static int call(int (*fn)(int, char **), char **argv)
{
    int argc = 0;
    while (argv[argc]) argc++;
    fflush(stdout);
    int rc = fn(argc, argv);
    fflush(stdout);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    const cli_opt opts[] = {CLI_END};
    int r = cli_parse("run", opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) {
        printf("usage: adaload run\n"
               "  The main job on the embedded defaults: env; with a CUDA device, verify\n"
               "  --grid quick and bench --set quick; the planner on the default manifest\n"
               "  under both policies side by side. Prints what ran and what was skipped.\n");
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    step steps[4];
    int n = 0;

    printf("== adaload run: env\n");
    char *env_argv[] = {"env", NULL};
    steps[n++] = (step){"env", call(cmd_env, env_argv), NULL};

    int gpus = ada_cuda_device_count();
    const char *why = !ADALOAD_HAVE_CUDA ? "GPU kernels not built (no CUDA toolkit)"
                      : gpus == 0        ? "no CUDA device on this machine"
                                         : NULL;
    if (!why) {
        printf("\n== adaload run: verify --grid quick\n");
        char *v_argv[] = {"verify", "--grid", "quick", NULL};
        steps[n++] = (step){"verify --grid quick", call(cmd_verify, v_argv), NULL};
        printf("\n== adaload run: bench --set quick\n");
        char *b_argv[] = {"bench", "--set", "quick", NULL};
        steps[n++] = (step){"bench --set quick", call(cmd_bench, b_argv), NULL};
    } else {
        steps[n++] = (step){"verify --grid quick", -1, why};
        steps[n++] = (step){"bench --set quick", -1, why};
    }

    printf("\n== adaload run: plan --policy both (default manifest)\n");
    char *p_argv[] = {"plan", "--policy", "both", NULL};
    steps[n++] = (step){"plan --policy both", call(cmd_plan, p_argv), NULL};

    int worst = ADA_EXIT_OK;
    printf("\n== adaload run: summary\n");
    for (int i = 0; i < n; i++) {
        if (steps[i].rc < 0) {
            printf("  skipped  %-22s %s\n", steps[i].what, steps[i].why_skipped);
            continue;
        }
        const char *v = steps[i].rc == 0 ? "ok" : steps[i].rc == ADA_EXIT_SKIP ? "skipped" : "FAILED";
        printf("  %-8s %-22s (exit %d)\n", v, steps[i].what, steps[i].rc);
        if (steps[i].rc != 0 && steps[i].rc != ADA_EXIT_SKIP && worst == ADA_EXIT_OK)
            worst = steps[i].rc == ADA_EXIT_USAGE ? ADA_EXIT_FAIL : steps[i].rc;
    }
    return worst;
}
