/* bench.h -- the benchmark library: Google Benchmark timings of the LayerNorm-Modulate
 * variants (lnmod_fwd/, lnmod_bwd/) and of the fused gated residual op (lnmod_res_fwd/,
 * lnmod_res_bwd/: bench_gpu_res.h), the device-to-device copy ceiling, the float64 CPU reference and the planner,
 * one timing method (bench_gpu.c), stable names (bench_shapes.h), the PyTorch peers
 * (bench_peers.h); reading runs back and comparing them is runs/ (run_bench.h, run_stats.h). `adaload
 * bench` (harness/cmd_bench.c) is a thin layer over this.
 *
 *   ada_bench_config c = {.set = "quick", .repetitions = 3, .planner_model = path,
 *                         .note = print_line};
 *   ada_bench_session *s; char msg[512];
 *   if (ada_bench_session_new(&c, &s, msg, sizeof msg)) -> msg says why (bad filter, GPU)
 *   int64_t will_run, skipped; ada_bench_session_counts(s, &will_run, &skipped);
 *   int ran = 0;
 *   ada_bench_session_run(s, tmp_path, 0.01, &ran, msg, sizeof msg);
 *   ada_bench_session_free(s);
 *
 * Registration order: CPU reference, planner, then the GPU (copy ceilings before the
 * variants that need them). Without a CUDA device (or with no_gpu) every GPU benchmark the
 * filter selects gets a "skipped (<why>): <name>" line through note, and the CPU ones run.
 * The library never exits; the only things it prints are Google Benchmark's console table
 * (stdout) and one progress line per benchmark (stderr, bench_shim.cc), both during
 * ada_bench_session_run.
 */
#ifndef ADALOAD_BENCH_H
#define ADALOAD_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "ada_util.h"
#include "bench_shapes.h"

typedef enum {
    ADA_BENCH_OK = 0,
    ADA_BENCH_SKIPPED = 1,   /* nothing to do here (e.g. peers without torch or a GPU) */
    ADA_BENCH_ERR_ARG = 2,   /* bad set, variant or filter */
    ADA_BENCH_ERR_NOMEM = 3,
    ADA_BENCH_ERR_GPU = 4,   /* a CUDA error while setting up */
    ADA_BENCH_ERR_IO = 5,    /* an output could not be written */
    ADA_BENCH_ERR_RUN = 6,   /* the run (or a peer script) failed */
} ada_bench_status;

enum { ADA_BENCH_MAX_VARIANTS = 32 };

typedef struct {
    const char *set;                 /* "quick", "wan", "sweep" or "models" */
    const char *const *variants;     /* kernel variants; NULL/0: every registered one */
    int64_t nvariants;
    const char *filter;              /* POSIX extended regex over names, or NULL */
    int repetitions;                 /* >= 1 */
    int no_gpu;                      /* CPU benchmarks only */
    const char *planner_model;       /* model JSON for the planner benchmarks */
    ada_note_fn note;                /* skip lines */
    void *note_arg;
} ada_bench_config;

typedef struct ada_bench_session ada_bench_session;

/* Checks the configuration (set, variants, filter) and registers every benchmark.
 * ADA_BENCH_OK, or an error with msg. c must outlive the session. */
ada_bench_status ada_bench_session_new(const ada_bench_config *c, ada_bench_session **out, char *msg,
                                       size_t msg_n);
/* The set's shapes (for --list-shapes and the peers). */
const ada_shape *ada_bench_session_shapes(const ada_bench_session *s, int64_t *n);
/* 1 when the GPU benchmarks are registered; else why not in *why ("no CUDA device", ...). */
int ada_bench_session_gpu_on(const ada_bench_session *s, const char **why);
/* The run-time filter: the user's filter plus the copy ceilings the kernels need, or NULL. */
const char *ada_bench_session_run_filter(const ada_bench_session *s);
/* How many benchmarks are registered (they will run), and how many the filter selected
 * that cannot run here (a "skipped" line went to note for each). */
void ada_bench_session_counts(const ada_bench_session *s, int64_t *registered, int64_t *skipped);
/* Runs every registered benchmark (min_time_s per repetition), writes Google Benchmark JSON
 * to json_path (the caller makes that atomic: common/ada_output.h) and checks it is strict
 * JSON. *ran is the number of benchmarks run. */
ada_bench_status ada_bench_session_run(ada_bench_session *s, const char *json_path, double min_time_s,
                                       int *ran, char *msg, size_t msg_n);
void ada_bench_session_free(ada_bench_session *s);

/* The shape list of a set as JSON text (`adaload bench --list-shapes`), malloc'd; NULL for
 * an unknown set or out of memory. */
char *ada_bench_shapes_text(const char *set);

#endif
