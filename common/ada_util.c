/* ada_util.c -- clock, time stamps, command-line join and notes (ada_util.h). */
#include "ada_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void ada_note(ada_note_fn note, void *arg, const char *fmt, ...)
{
    if (!note) return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    note(arg, line);
}

double ada_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void utc_format(const char *fmt, char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (strftime(buf, n, fmt, &tm) == 0 && n > 0) buf[0] = '\0';
}

void ada_utc_iso(char *buf, size_t n) { utc_format("%Y-%m-%dT%H:%M:%SZ", buf, n); }

void ada_utc_stamp(char *buf, size_t n) { utc_format("%Y-%m-%dT%H%M%SZ", buf, n); }

char *ada_cmdline_join(int argc, char **argv)
{
    size_t n = strlen("adaload") + 1;
    for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
    char *s = malloc(n);
    if (!s) return NULL;
    size_t k = (size_t)snprintf(s, n, "adaload");
    for (int i = 0; i < argc; i++) k += (size_t)snprintf(s + k, n - k, " %s", argv[i]);
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ada_median(const double *v, int64_t n)
{
    if (n <= 0) return 0;
    double *c = malloc((size_t)n * sizeof *c);
    if (!c) return 0;
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

char *ada_escape(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    if (!n) return buf;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            if (k + 4 >= n) break;
            snprintf(buf + k, n - k, "\\x%02x", *p);
            k += 4;
        } else {
            if (k + 1 >= n) break;
            buf[k++] = (char)*p;
        }
    }
    buf[k] = '\0';
    return buf;
}

void ada_fputs_escaped(const char *s, FILE *f)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\x%02x", *p);
        else fputc(*p, f);
    }
}
