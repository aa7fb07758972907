/* cli.c -- messages and the source tree of the adaload subcommands (cli.h). */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "build_info.h"

static void vmsg(const char *cmd, const char *fmt, va_list ap)
{
    fflush(stdout); /* keep stdout and stderr lines in order on a terminal */
    fprintf(stderr, "adaload %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int ada_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(cmd, fmt, ap);
    va_end(ap);
    return ADA_EXIT_USAGE;
}

void ada_msg(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(cmd, fmt, ap);
    va_end(ap);
}

void ada_note_stdout(void *arg, const char *line)
{
    (void)arg;
    printf("%s\n", line);
    fflush(stdout);
}

void ada_note_stderr(void *arg, const char *line) { ada_msg(arg ? (const char *)arg : "", "%s", line); }

const char *ada_source_dir(void)
{
    const char *e = getenv("ADALOAD_ROOT");
    return (e && *e) ? e : ADALOAD_SOURCE_DIR;
}
