/* cmd_version.c -- `adaload version` (also `adaload --version`): versions of adaload and its
 * libraries, and the hash of the kernel sources. */
#include <stdio.h>

#include <jansson.h>

#include "build_info.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "kernel_hash_v2.h"
#include "run_sysinfo.h"

int cmd_version(int argc, char **argv)
{
    const cli_opt opts[] = {CLI_END};
    int r = cli_parse("version", opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) {
        printf("usage: adaload version\n  prints adaload's version, its libraries' versions "
               "and the kernel source hashes (schemes 1 and 2)\n");
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    json_t *info = ada_sysinfo();
    json_t *b = json_object_get(info, "build");
    json_t *libs = json_object_get(info, "libraries");
    printf("adaload %s\n", ADALOAD_VERSION);
    printf("kernel sources  %s (scheme 1: bytes)\n", ADALOAD_KERNEL_HASH);
    printf("                %s (scheme 2: code without comments and layout)\n", ADALOAD_KERNEL_HASH_V2);
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

