/* run_bench.h -- reading Google Benchmark JSON back (ours and the PyTorch peers'), per
 * benchmark: the repetitions' times and counters, and the github-action-benchmark files.
 *
 *   ada_bench_set s = {0};
 *   char err[256];
 *   if (ada_bench_load("results/nvidia-h200/2026-...", &s, err, sizeof err)) -> bad input
 *   const ada_bench_rec *r = ada_bench_find(&s, "lnmod_fwd/dtile/...");
 *   double t = ada_median(r->time_ns, r->n);
 *   ada_bench_set_free(&s);
 *
 * A path that is a folder means its bench.json plus peers.json when present (a run folder);
 * anything else is one Google Benchmark JSON file. Only "iteration" entries are read (one
 * per repetition); aggregates are recomputed from them, so a run with one repetition reads
 * the same way. Entries with error_occurred are kept as errors, without numbers; an error
 * whose message starts with ADA_WRONG_RESULT is a peer whose output was checked against the
 * float64 reference and found wrong (bench/peers/peer_json.py): `wrong` is set, and readers
 * show it as a wrong result, never as a time or a ratio.
 */
#ifndef ADALOAD_RUN_BENCH_H
#define ADALOAD_RUN_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ada_util.h" /* ada_median */

enum { ADA_REC_MAX_REPS = 1024, ADA_BENCH_EXTRAS = 2 };

/* Further per-repetition counters kept: the planner's seconds_per_10M and bytes_per_sample. */
extern const char *const ada_bench_extra_names[ADA_BENCH_EXTRAS];

#define ADA_WRONG_RESULT "wrong result"

typedef struct {
    char *name;         /* run_name: the stable benchmark name */
    double *time_ns;    /* real_time of each repetition, nanoseconds */
    double *bps;        /* bytes_per_second of each repetition (0 when absent) */
    double *pct_copy;   /* pct_copy_bw of each repetition (NAN-free; has_pct says if any) */
    double *clock_mhz;  /* sm_clock_mhz of each repetition */
    double *extra[ADA_BENCH_EXTRAS]; /* the counters of ada_bench_extra_names (0 when absent) */
    int64_t n, cap;     /* repetitions read; room in the arrays */
    int has_bps, has_pct, has_clock, has_extra[ADA_BENCH_EXTRAS];
    int error;          /* some repetition reported error_occurred */
    int wrong;          /* that error is a wrong result (ADA_WRONG_RESULT) */
    double saved_bytes; /* counter saved_bytes (bytes a forward keeps for the backward) */
    int has_saved;
    int64_t nerr;       /* repetitions that reported it */
    char *error_message;
} ada_bench_rec;

typedef struct {
    ada_bench_rec *r;
    int64_t n, cap;
    int64_t *hash;      /* name -> record index + 1 (open addressing), hcap slots */
    int64_t hcap;
    char *set;          /* bench.json's context adaload_set ("wan", ...), NULL when absent */
    char *repetitions;  /* its adaload_repetitions, NULL when absent */
} ada_bench_set;

/* Status of the loaders: 0, or a negative code with a one-line reason in err. */
enum { ADA_RUNS_OK = 0, ADA_RUNS_EINPUT = -1 /* missing or bad file */, ADA_RUNS_ENOMEM = -2 };

/* ADA_RUNS_OK, ADA_RUNS_EINPUT (file, and what is wrong) or ADA_RUNS_ENOMEM; a file that
 * fails adds nothing to s. Lookups by name are hashed; arrays grow with the repetitions. */
int ada_bench_load(const char *path, ada_bench_set *s, char *err, size_t err_n);
int ada_bench_load_file(const char *path, ada_bench_set *s, char *err, size_t err_n);
void ada_bench_set_free(ada_bench_set *s);
const ada_bench_rec *ada_bench_find(const ada_bench_set *s, const char *name);

/* The run's repetitions per benchmark: bench.json's adaload_repetitions when it says, else
 * the most repetitions any benchmark without an error has (a plain Google Benchmark file);
 * 0 when unknown. */
int64_t ada_bench_repetitions(const ada_bench_set *s);

/* The ceiling of every % of copy in a run: the median bytes_per_second of the repetitions of
 * the copy benchmark copy_name ("copy/bytes<N>[/graph<K>]", adaload's own device-to-device
 * copy of the same bytes, timed in the same run) in s; 0 when s has no such copy, it
 * reported an error or it has no bandwidth. Ours (bench/bench_gpu.c) and the PyTorch peers'
 * pct_copy_bw are both against it: `adaload bench --with-peers` hands these numbers to the
 * peers script (bench/bench_peers.h), which reads no bench.json itself. */
double ada_bench_copy_ceiling(const ada_bench_set *s, const char *copy_name);

/* The github-action-benchmark arrays: customSmallerIsBetter (median real time, "us") and
 * customBiggerIsBetter (median bytes_per_second as "GB/s") for every benchmark of s without
 * an error; only finite values. 0, or -1 when out of memory. */
int ada_bench_custom_json(const ada_bench_set *s, json_t **smaller, json_t **bigger);

#endif
