/* cli_plugin.h -- `--plugin LIB.so` of verify and bench (plugin/ada_plugin.h loads them).
 *
 *   int handled, rc = cli_plugin_supervise(CMD, &plugins, argc, argv, &handled);
 *   if (handled) return rc;                    // the parent: the child did the work
 *   rc = cli_plugin_load(CMD, &plugins);       // the child (or no --plugin): load them
 *
 * Supervision: a plug-in is someone else's code in this process, so a command given
 * --plugin runs itself again as a child (same arguments, ADALOAD_PLUGIN_CHILD=1 in its
 * environment) and waits. The child loads the plug-ins and does the whole job, writing its
 * own outputs and exit code, which the parent returns. A child killed by a signal (a
 * segfault or abort in a plug-in's host code, while loading or running) is reported by the
 * parent -- "a plug-in crashed the run: signal 11 (Segmentation fault) ..." -- and exits 1
 * (a check failed); the child's unpublished run folder stays hidden and is swept by the
 * next run (run_folder.h). SIGINT, SIGTERM and SIGHUP are interrupts, not crashes: said as
 * such, and the parent exits 128 + S like the child. Processes that already run under a supervisor (the variable
 * set: the child, verify's sanitizer runs of it) do not supervise again.
 */
#ifndef ADALOAD_CLI_PLUGIN_H
#define ADALOAD_CLI_PLUGIN_H

#include <jansson.h>

#include "cli_opts.h"

#define CLI_PLUGIN_ENV "ADALOAD_PLUGIN_CHILD"

/* The parent's side (see above): *handled = 1 and the exit code when it ran the child,
 * *handled = 0 (returns 0) when there is no --plugin or this is the child already. */
int cli_plugin_supervise(const char *cmd, const cli_list *plugins, int argc, char **argv, int *handled);

/* Loads every path of plugins in order: ADA_EXIT_OK, or ADA_EXIT_USAGE after one line
 * "adaload CMD: <path>: why" (nothing of that library loaded). */
int cli_plugin_load(const char *cmd, const cli_list *plugins);

/* "plugins" (ada_plugin_json) into the meta.json of the run folder dir, when any plug-in is
 * loaded. ADA_EXIT_OK, or ADA_EXIT_USAGE after saying why. */
int cli_plugin_meta(const char *cmd, const char *dir);

/* Lines "  plugin:<name>  fwd+bwd|fwd only  <description>" and the library lines (path,
 * SHA-256) of the loaded plug-ins, for --list. */
void cli_plugin_list(void);

#endif
