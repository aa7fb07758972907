/* cli.h -- what every `adaload` subcommand shares: exit codes, one-line messages, the
 * source tree, and note callbacks that print library lines.
 *
 * Exit codes of every subcommand (CTest reads 77 as "skipped"):
 *   0 ok, 1 a check failed, 2 bad usage or bad input or an output that cannot be written,
 *   3 an internal or resource failure (out of memory, a CUDA error), 4 undecided (compare:
 *   too few repetitions to judge; --history: no earlier run like it), 77 nothing can run here.
 * A subcommand is `int cmd_NAME(int argc, char **argv)` with argv[0] = "NAME"; it returns
 * one of these codes and never calls exit(). Options are parsed by cli_opts.h.
 */
#ifndef ADALOAD_CLI_H
#define ADALOAD_CLI_H

enum {
    ADA_EXIT_OK = 0,
    ADA_EXIT_FAIL = 1,
    ADA_EXIT_USAGE = 2,
    ADA_EXIT_INTERNAL = 3,
    ADA_EXIT_UNDECIDED = 4,
    ADA_EXIT_SKIP = 77
};

/* "adaload CMD: <message>" on stderr, one line; returns ADA_EXIT_USAGE for `return`. */
int ada_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "adaload CMD: <message>" on stderr (any severity). */
void ada_msg(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ada_note_fn callbacks (ada_util.h): the line on stdout, or "adaload <arg>: line" on
 * stderr (arg is the command name, a const char *). */
void ada_note_stdout(void *arg, const char *line);
void ada_note_stderr(void *arg, const char *line);

/* The project's source tree (for datasets/ and results/): $ADALOAD_ROOT if set, else the
 * directory the build was configured from. */
const char *ada_source_dir(void);

#endif
