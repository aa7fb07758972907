/* ada_output.h -- how adaload writes files: never a partial file, never in place.
 *
 *   if (ada_write_json_atomic("run/verify.json", rec)) -> errno says why (nothing written)
 *   ada_mkdirs("results/nvidia-h200");                  // mkdir -p
 *
 * A file is written to "<path>.tmp.<pid>" in the same folder, fsync'ed and renamed over
 * path, so a reader sees the old file or the new one, never a mix.
 */
#ifndef ADALOAD_ADA_OUTPUT_H
#define ADALOAD_ADA_OUTPUT_H

#include <stddef.h>

#include <jansson.h>

/* Writes len bytes to path through "path.tmp.<pid>" + fsync + rename; 0 on success, -1
 * with errno set (the temporary is removed). */
int ada_write_file_atomic(const char *path, const void *data, size_t len);
/* The same for a JSON value in canonical form (insertion key order, reals as %.9g, 2-space
 * indent, trailing newline). */
int ada_write_json_atomic(const char *path, const json_t *v);
/* The canonical text of v (as above) in a new malloc'd string, NULL when out of memory. */
char *ada_json_text(const json_t *v);
/* mkdir -p; 0 on success or if it exists, -1 with errno. */
int ada_mkdirs(const char *path);

#endif
