/* cmd_plan.c -- placeholder until its issue lands; replaced by the real subcommand. */
#include "cli.h"
#include "commands.h"

int cmd_plan(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ada_msg("plan", "not built yet");
    return ADA_EXIT_SKIP;
}
