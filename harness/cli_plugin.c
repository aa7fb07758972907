/* cli_plugin.c -- `--plugin` of verify and bench: supervision, loading, meta.json, listing
 * (cli_plugin.h). */
#include "cli_plugin.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ada_output.h"
#include "ada_plugin.h"
#include "ada_spawn.h"
#include "ada_util.h"
#include "cli.h"

int cli_plugin_supervise(const char *cmd, const cli_list *plugins, int argc, char **argv, int *handled)
{
    *handled = 0;
    const char *e = getenv(CLI_PLUGIN_ENV);
    if (plugins->n == 0 || (e && *e)) return 0;
    *handled = 1;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (n <= 0 || !args) {
        free(args);
        ada_msg(cmd, "cannot run the plug-in's process: %s", n <= 0 ? "no /proc/self/exe" : "out of memory");
        return ADA_EXIT_INTERNAL;
    }
    self[n] = '\0';
    args[0] = self;
    for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
    fflush(stdout);
    if (setenv(CLI_PLUGIN_ENV, "1", 1) != 0) {
        free(args);
        ada_msg(cmd, "cannot set %s: %s", CLI_PLUGIN_ENV, strerror(errno));
        return ADA_EXIT_INTERNAL;
    }
    int st = ada_spawn_wait(args, 0);
    unsetenv(CLI_PLUGIN_ENV);
    free(args);
    if (st < 0) {
        ada_msg(cmd, "cannot run the plug-in's process %s", self);
        return ADA_EXIT_INTERNAL;
    }
    if (st <= 128) return st;
    /* 128 + S: the child died of signal S. An interrupt from outside (^C, kill) is no crash:
     * the child's own handlers removed its temporaries; say so and pass it on. */
    int sig = st - 128;
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
        ada_msg(cmd, "interrupted (signal %d, %s)", sig, strsignal(sig));
        return st;
    }
    char libs[1024] = "";
    for (int i = 0; i < plugins->n; i++) {
        size_t l = strlen(libs);
        snprintf(libs + l, sizeof libs - l, "%s%s", i ? ", " : "", plugins->v[i]);
    }
    ada_msg(cmd, "a plug-in crashed the run: signal %d (%s) in the process that loaded %s; nothing of it was "
                 "recorded (README \"Verify and benchmark your own kernel\")",
            sig, strsignal(sig), libs);
    return ADA_EXIT_FAIL;
}

int cli_plugin_load(const char *cmd, const cli_list *plugins)
{
    for (int i = 0; i < plugins->n; i++) {
        char err[1024];
        if (ada_plugin_load(plugins->v[i], err, sizeof err) != ADA_PLUGIN_OK) {
            ada_plugin_unload_all();
            return ada_usage_error(cmd, "--plugin %s", err);
        }
    }
    return ADA_EXIT_OK;
}

int cli_plugin_meta(const char *cmd, const char *dir)
{
    if (ada_plugin_lib_count() == 0) return ADA_EXIT_OK;
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    json_t *p = ada_plugin_json();
    int rc = ADA_EXIT_OK;
    if (!json_is_object(m) || !p || json_object_set(m, "plugins", p) || ada_write_json_atomic(path, m) != 0) {
        ada_msg(cmd, "%s: cannot add the plug-ins to it: %s", path, !json_is_object(m) ? je.text : strerror(errno));
        rc = ADA_EXIT_USAGE;
    }
    json_decref(p);
    json_decref(m);
    return rc;
}

void cli_plugin_list(void)
{
    if (ada_plugin_count() == 0) return;
    printf("Plug-in variants (--plugin):\n");
    for (int i = 0; i < ada_plugin_count(); i++) {
        char desc[4 * 300 + 1]; /* the plug-in's own text: its control bytes as \xNN */
        char cut[301];
        snprintf(cut, sizeof cut, "%s", ada_plugin_description(i));
        ada_escape(cut, desc, sizeof desc);
        printf("  %-14s %-13s %s\n", ada_plugin_name(i), ada_plugin_has_backward(i) ? "fwd+bwd" : "fwd only", desc);
    }
    for (int k = 0; k < ada_plugin_lib_count(); k++)
        printf("  library %s, sha256 %s\n", ada_plugin_lib_path(k), ada_plugin_lib_sha256(k));
}
