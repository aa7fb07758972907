/* ada_util.h -- small helpers every module shares: a monotonic clock, UTC time stamps, the
 * command line as one string, and the note callback through which libraries hand lines to
 * the program that prints them (libraries never print).
 *
 *   double t0 = ada_now_s();  ...  double secs = ada_now_s() - t0;   // CLOCK_MONOTONIC
 *   char date[32]; ada_utc_iso(date, sizeof date);                   // 2026-12-01T07:00:00Z
 *   char *cl = ada_cmdline_join(argc, argv);  ...  free(cl);         // "adaload bench --set quick"
 *   double m = ada_median(v, n);                                      // v unchanged
 *   static void note(void *arg, const char *line) { puts(line); }    // an ada_note_fn
 */
#ifndef ADALOAD_ADA_UTIL_H
#define ADALOAD_ADA_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A line for the user (no trailing newline); arg is the caller's. NULL callbacks are
 * allowed wherever a library takes one: the line is dropped. */
typedef void (*ada_note_fn)(void *arg, const char *line);

/* Calls note(arg, formatted line) when note is not NULL. */
void ada_note(ada_note_fn note, void *arg, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Seconds of CLOCK_MONOTONIC. */
double ada_now_s(void);

/* UTC time as "2026-11-29T21:00:00Z" (buf >= 21 bytes). */
void ada_utc_iso(char *buf, size_t n);
/* UTC time as "2026-11-29T210000Z", for folder names (buf >= 19 bytes). */
void ada_utc_stamp(char *buf, size_t n);

/* "adaload ARGV[0] ARGV[1] ..." in a new malloc'd string (NULL when out of memory). */
char *ada_cmdline_join(int argc, char **argv);

/* s with every control byte (below 0x20, and 0x7f: newlines, terminal escapes) written as
 * \xNN, into buf of n bytes (truncated to fit; "" when s is NULL). Returns buf. Whatever a
 * program prints from a file (a record, a name, a path) goes through this first. */
char *ada_escape(const char *s, char *buf, size_t n);
/* The same, written to f. */
void ada_fputs_escaped(const char *s, FILE *f);

/* Median of v[0..n) (0 for n <= 0, or when out of memory), without changing v. */
double ada_median(const double *v, int64_t n);

#endif
