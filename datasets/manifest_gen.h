/* manifest_gen.h -- the seeded generator of the planner's manifests (library ada_mangen;
 * the program gen_manifest wraps it). Deterministic for a kind, a row count and a seed on
 * every machine: integer draws from common/ada_rng.h and IEEE double arithmetic only.
 *
 *   ada_gen_manifest(stdout, "default", 0, 1);    // the committed datasets/default.csv
 *   ada_gen_manifest(f, "default", 10000000, 7);  // 10 M rows for the planner benchmark
 *
 * Kinds (distributions and their sources: datasets/README.md):
 *   tiny      10 hand-checkable rows (rows and seed ignored)
 *   default   mixed images and 17- to 121-frame clips at 480p/720p (100,000 rows, seed 1)
 *   longtail  raw, unsnapped shapes with a heavy tail of long and large samples
 *             (20,000 rows, seed 2)
 */
#ifndef ADALOAD_MANIFEST_GEN_H
#define ADALOAD_MANIFEST_GEN_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the manifest. rows <= 0: the kind's default row count. Returns 0, -1 for an unknown
 * kind, -2 on a write error. */
int ada_gen_manifest(FILE *out, const char *kind, int64_t rows, uint64_t seed);

/* The kind's default row count and seed (0 for an unknown kind). */
int64_t ada_gen_default_rows(const char *kind);
uint64_t ada_gen_default_seed(const char *kind);

#ifdef __cplusplus
}
#endif
#endif
