/* cmd_gate.c -- placeholder until its issue lands; replaced by the real subcommand. */
#include "cli.h"
#include "commands.h"

int cmd_gate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ada_msg("gate", "not built yet");
    return ADA_EXIT_SKIP;
}
