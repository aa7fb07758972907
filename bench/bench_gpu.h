/* bench_gpu.h -- the GPU benchmarks of `adaload bench`: LayerNorm-Modulate variants and the
 * device-to-device copy ceiling, timed by one method (see bench_gpu.c's manual).
 *
 *   ada_gpu_bench *g = NULL;
 *   int rc = ada_gpu_bench_setup(shapes, n, variants, nv, match, match_arg, 9, note, arg, &g,
 *                                &count, &skipped, msg, sizeof msg);
 *   // ADA_GPU_OK: copy ceilings then variants registered with the shim (count of them);
 *   // ADA_GPU_NONE: no device / not built -- a "skipped (...): <name>" line went to note for
 *   //               every benchmark that would have run (skipped counts them);
 *   //               ADA_GPU_ERROR: msg says why.
 *   ada_bench_run(...);
 *   ada_gpu_bench_free(g);   // after the run: graphs, buffers, stream
 */
#ifndef ADALOAD_BENCH_GPU_H
#define ADALOAD_BENCH_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "ada_util.h"
#include "bench_shapes.h"

enum { ADA_GPU_OK = 0, ADA_GPU_NONE = 1, ADA_GPU_ERROR = -1 };

typedef struct ada_gpu_bench ada_gpu_bench;

/* A name filter: non-zero when the benchmark called name should run. */
typedef int (*ada_name_match_fn)(const char *name, void *arg);

/* The variants to time when the user names none: every registered variant, or (GPU parts
 * not built) the names the project ships, so skip lines still name them. Returns the count
 * (at most cap). */
int64_t ada_gpu_default_variants(const char **out, int64_t cap);
/* Non-zero when name is a kernel variant (always true when the GPU parts are not built:
 * then nothing can be checked and every GPU benchmark is skipped anyway). */
int ada_gpu_variant_known(const char *name);

int ada_gpu_bench_setup(const ada_shape *shapes, int64_t nshapes, const char *const *variants,
                        int64_t nvariants, ada_name_match_fn match, void *match_arg,
                        int repetitions, ada_note_fn note, void *note_arg, ada_gpu_bench **out,
                        int64_t *registered, int64_t *skipped, char *msg, size_t msg_n);
void ada_gpu_bench_free(ada_gpu_bench *g);

#endif
