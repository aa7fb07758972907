/* cmd_bench.c -- placeholder until its issue lands; replaced by the real subcommand. */
#include "cli.h"
#include "commands.h"

int cmd_bench(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ada_msg("bench", "not built yet");
    return ADA_EXIT_SKIP;
}
