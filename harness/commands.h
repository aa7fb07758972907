/* commands.h -- the subcommands of `adaload`, one file each (cmd_NAME.c). Each takes argv
 * with argv[0] = "NAME" and returns an exit code (cli.h). */
#ifndef ADALOAD_COMMANDS_H
#define ADALOAD_COMMANDS_H
int cmd_run(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_results(int argc, char **argv);
int cmd_dashboard(int argc, char **argv);
#endif
