/* cmd_env.c -- `adaload env [--json]`: what this machine has. Human text by default, the
 * same facts as JSON (the object meta.json embeds) with --json. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "run_sysinfo.h"

int cmd_env(int argc, char **argv)
{
    int as_json = 0;
    const cli_opt opts[] = {CLI_FLAG("--json", &as_json, "the same facts as one JSON object"), CLI_END};
    int r = cli_parse("env", opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) {
        printf("usage: adaload env [--json]\n"
               "  CUDA devices (name, SMs, L2, memory, clocks, driver and runtime versions)\n"
               "  or \"no CUDA device\"; OpenBLAS config and core; library versions; build.\n");
        cli_print_options(stdout, opts);
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    json_t *info = ada_sysinfo();
    if (as_json) {
        json_dumpf(info, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
        fputc('\n', stdout);
        json_decref(info);
        return ADA_EXIT_OK;
    }
    json_t *cuda = json_object_get(info, "cuda");
    json_t *devs = json_object_get(cuda, "devices");
    printf("host            %s\n", json_string_value(json_object_get(info, "host")));
    if (json_array_size(devs) == 0) {
        printf("cuda            %s\n", json_string_value(json_object_get(cuda, "note")));
    } else {
        const char *drv = json_string_value(json_object_get(cuda, "driver_version"));
        printf("cuda driver     %s (runtime %s)%s%s\n",
               json_string_value(json_object_get(cuda, "driver_cuda_version")),
               json_string_value(json_object_get(cuda, "runtime_version")), drv ? ", driver " : "", drv ? drv : "");
        size_t i;
        json_t *d;
        json_array_foreach(devs, i, d) {
            printf("gpu %zu           %s, %s, %lld SMs, %.1f GiB, L2 %.0f MiB, SM clock max %lld MHz\n", i,
                   json_string_value(json_object_get(d, "name")),
                   json_string_value(json_object_get(d, "arch")),
                   (long long)json_integer_value(json_object_get(d, "sm_count")),
                   (double)json_integer_value(json_object_get(d, "memory_bytes")) / (1 << 30),
                   (double)json_integer_value(json_object_get(d, "l2_bytes")) / (1 << 20),
                   (long long)json_integer_value(json_object_get(d, "max_sm_clock_mhz")));
            const char *serial = json_string_value(json_object_get(d, "serial"));
            const char *uuid = json_string_value(json_object_get(d, "uuid"));
            printf("                %s%s%s\n", uuid ? uuid : "no UUID",
                   serial ? ", serial " : "", serial ? serial : "");
        }
    }
    json_t *blas = json_object_get(info, "openblas");
    printf("openblas        %s (core %s)\n", json_string_value(json_object_get(blas, "config")),
           json_string_value(json_object_get(blas, "corename")));
    json_t *libs = json_object_get(info, "libraries");
    printf("libraries       jansson %s, google benchmark %s, criterion %s\n",
           json_string_value(json_object_get(libs, "jansson")),
           json_string_value(json_object_get(libs, "google_benchmark")),
           json_string_value(json_object_get(libs, "criterion")));
    json_t *b = json_object_get(info, "build");
    printf("build           %s, gpu kernels %s, kernel sources %.16s (scheme 2: %.16s)\n",
           json_string_value(json_object_get(b, "build_type")),
           json_is_true(json_object_get(b, "have_cuda")) ? "built" : "NOT built",
           json_string_value(json_object_get(b, "kernel_hash_v1")),
           json_string_value(json_object_get(b, "kernel_hash_v2")));
    json_decref(info);
    return ADA_EXIT_OK;
}
