/* run_meta.h -- the one reader of a run's meta.json (runs/run_folder.c writes it), and the
 * machine fingerprint that tells "the code changed" from "the machine changed".
 *
 *   ada_run_meta m;
 *   char err[256];
 *   if (ada_run_meta_load("results/nvidia-h200/bench/RUN/meta.json", &m, err, sizeof err)) -> bad input
 *   m.kernel_hash_v1, m.kernel_hash_v2 ("" when the run predates scheme 2), m.fp.gpu_uuid ...
 *   ada_run_meta_free(&m);
 *
 * Hash names: kernel_hash_v1 / kernel_hash_v2; runs made before the names were unified
 * wrote kernel_source_hash (scheme 1) and kernel_source_hash_v2, read the same way.
 *
 * The fingerprint of a run: meta.json's "fingerprint" object (GPU name, UUID and serial where
 * the driver gives them, driver version, CUDA driver API version, SM and memory clocks, host)
 * -- or, for runs older than it, the same facts from its sysinfo -- plus the run's own copy
 * bandwidth (copy_gbps: the median GB/s of the largest copy/bytes<N> benchmark of bench.json;
 * ada_run_fp_copy fills it). Two runs are on different machines (ada_run_fp_differs) when
 * a fact both record differs: UUID, serial, GPU name, driver, clocks, or copy bandwidth by
 * more than ADA_FP_COPY_TOL. Identical code: same kernel hashes (scheme 2 when both have it,
 * else scheme 1) and the same build options that change kernels (slow_variant_build,
 * sanitized, build_type, cuda_architectures, nvcc_version, and the compile flags a user added,
 * c_flags and cuda_flags -- an explore build's -D switches; ada_run_same_code), and the same
 * plug-in libraries by file hash ("plugins", none in either counts as the same).
 */
#ifndef ADALOAD_RUN_META_H
#define ADALOAD_RUN_META_H

#include <stddef.h>

#include <jansson.h>

#include "run_bench.h"

#define ADA_FP_COPY_TOL 0.02

typedef struct {
    char gpu[96], gpu_uuid[96], gpu_serial[64], driver[32], driver_cuda[16], host[128];
    long sm_clock_mhz, mem_clock_mhz; /* 0 when unknown */
    double copy_gbps;                 /* 0 when the run has no copy benchmark */
} ada_run_fp;

typedef struct {
    char *git_sha;        /* "unknown" when absent */
    int git_dirty;        /* 1, 0, -1 unknown */
    char *kernel_hash_v1; /* "" when absent */
    char *kernel_hash_v2; /* "" when absent (runs before scheme 2) */
    char *command_line, *testbed, *kind; /* "" when absent */
    char *build;          /* the kernel-relevant build options, one string ("" unknown) */
    /* The plug-in libraries of the run ("plugins", written by plugin/ada_plugin.h's
     * ada_plugin_json): "<path> (sha256 <hex>: plugin:a, plugin:b)" joined by "; ", and
     * their file hashes alone, comma-separated; both "" when the run loaded none. */
    char *plugins, *plugin_hashes;
    ada_run_fp fp;
} ada_run_meta;

/* Reads meta.json at path. ADA_RUNS_OK, ADA_RUNS_EINPUT (why in err) or ADA_RUNS_ENOMEM. */
int ada_run_meta_load(const char *path, ada_run_meta *m, char *err, size_t en);
/* The same from a parsed object (m's strings are copies). */
int ada_run_meta_from_json(const json_t *o, ada_run_meta *m);
void ada_run_meta_free(ada_run_meta *m);

/* The fingerprint object meta.json records, from a sysinfo object (run_sysinfo.h). */
json_t *ada_run_fp_json(const json_t *sysinfo);

/* copy_gbps of fp from the copy benchmarks of set s. */
void ada_run_fp_copy(ada_run_fp *fp, const ada_bench_set *s);

/* 1 when a and b are different machines (why in why, e.g. "GPU UUID GPU-1... -> GPU-2..."). */
int ada_run_fp_differs(const ada_run_fp *a, const ada_run_fp *b, char *why, size_t n);

/* 1 when a and b ran the same kernel code (hashes and kernel-relevant build options). */
int ada_run_same_code(const ada_run_meta *a, const ada_run_meta *b);

#endif
