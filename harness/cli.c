/* cli.c -- messages and the source tree of the adaload subcommands (cli.h). */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "build_info.h"

/* One line, always: control bytes in the message (a newline or an escape sequence quoted
 * from a bad input file by a parser) are written as \xNN. */
static void vmsg(const char *cmd, const char *fmt, va_list ap)
{
    char buf[4096];
    vsnprintf(buf, sizeof buf, fmt, ap);
    fflush(stdout); /* keep stdout and stderr lines in order on a terminal */
    fprintf(stderr, "adaload %s: ", cmd);
    for (const unsigned char *p = (const unsigned char *)buf; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) fprintf(stderr, "\\x%02x", *p);
        else fputc(*p, stderr);
    }
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
