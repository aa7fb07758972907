/* cli.h -- what every `adaload` subcommand shares: exit codes, messages, number parsing,
 * atomic file writes and the machine description (sysinfo).
 *
 * Exit codes of every subcommand (CTest reads 77 as "skipped"):
 *   0 ok, 1 a check failed, 2 bad usage or bad input, 77 nothing can run here (no GPU).
 * A subcommand is `int cmd_NAME(int argc, char **argv)` with argv[0] = "NAME"; it returns
 * one of these codes and never calls exit().
 */
#ifndef ADALOAD_CLI_H
#define ADALOAD_CLI_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

enum { ADA_EXIT_OK = 0, ADA_EXIT_FAIL = 1, ADA_EXIT_USAGE = 2, ADA_EXIT_SKIP = 77 };

/* "adaload CMD: <message>" on stderr, one line; returns ADA_EXIT_USAGE for `return`. */
int ada_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "adaload CMD: <message>" on stderr (any severity); returns nothing. */
void ada_msg(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Strict number parsing of a whole string: 0 on success, -1 on junk, overflow or range. */
int ada_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
int ada_parse_u64(const char *s, uint64_t *out);
int ada_parse_double(const char *s, double *out); /* finite values only */

/* Writes len bytes to path through "path.tmp.<pid>" + fsync + rename, so readers never see
 * a partial file; 0 on success, -1 with errno set (the temporary is removed). */
int ada_write_file_atomic(const char *path, const void *data, size_t len);
/* Same for a JSON value: canonical form (insertion key order, reals as %.9g, 2-space indent,
 * trailing newline). */
int ada_write_json_atomic(const char *path, const json_t *v);
/* mkdir -p; 0 on success or if it exists. */
int ada_mkdirs(const char *path);

/* The machine: CUDA devices (name, SMs, L2, memory, clocks, driver and runtime versions)
 * or "no CUDA device", OpenBLAS config and core, library versions, the build. A new JSON
 * object owned by the caller. */
json_t *ada_sysinfo(void);
/* Number of usable CUDA devices (0 without CUDA or without a device). */
int ada_cuda_device_count(void);

/* UTC time as "2026-11-29T21:00:00Z" into buf (>= 21 bytes). */
void ada_utc_iso(char *buf, size_t n);

/* The project's source tree (for datasets/ and results/): $ADALOAD_ROOT if set, else the
 * directory the build was configured from. */
const char *ada_source_dir(void);

#endif
