/* cmd_verify.c -- placeholder until its issue lands; replaced by the real subcommand. */
#include "cli.h"
#include "commands.h"

int cmd_verify(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ada_msg("verify", "not built yet");
    return ADA_EXIT_SKIP;
}
