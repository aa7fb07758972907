/* run_compare.h -- comparing two benchmark runs, like with like: what `adaload compare`
 * prints and the dashboard shows, computed in one place.
 *
 *   ada_cmp c;
 *   char err[256];
 *   ada_cmp_opts o = {.threshold = 0.05, .alpha = 0.05};
 *   if (ada_compare_runs(&a, &b, &meta_a, &meta_b, &o, &c, err, sizeof err)) -> not comparable (err)
 *   for (i < c.n) c.row[i].name, ada_verdict_name(c.row[i].v) ...
 *   ada_cmp_free(&c);
 *
 * Like with like (ada_runs_alike): two runs are compared only when their testbed, set and
 * repetition count agree (each where both say: a plain Google Benchmark file has no testbed
 * or set; its repetitions are counted), and benchmark by benchmark only under the same full
 * name (op, variant, dtypes, layout, D, rows). Per benchmark the verdict is
 * ada_compare_samples' (run_stats.h): slower, faster, same or "too few repetitions" (the
 * repetitions cannot reach p < alpha). When both runs ran the same kernel code
 * (ada_run_same_code: run_meta.h) a slower or faster benchmark is "environment drift": the
 * code did not change, the machine did (ada_run_fp_differs says how) or its state did (same
 * fingerprint: thermals, neighbours, clocks under load); only a change of the code is a
 * regression. With history (the
 * medians of the set's earlier runs, oldest first), the noise band of ada_history_verdict
 * replaces the fixed threshold; which earlier runs make that history is run_history.h's rule
 * (the one `adaload compare --history`, the nightly and the dashboard use).
 */
#ifndef ADALOAD_RUN_COMPARE_H
#define ADALOAD_RUN_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "run_bench.h"
#include "run_meta.h"
#include "run_stats.h"

typedef struct {
    double threshold, alpha; /* the pair rule (0: 0.05 and 0.05) */
    int skip_peers;          /* the PyTorch peers are not judged (the dashboard) */
    /* name -> array of medians (ns) of the earlier runs of the set, oldest first, the run
     * before B excluded from none (NULL: the pair rule only). */
    const json_t *history;
} ada_cmp_opts;

typedef struct {
    const char *name;   /* the benchmark (points into B's set) */
    ada_verdict v;
    const char *error;  /* "in A", "in B", "no repetitions", or NULL */
    double a_ns, b_ns;  /* medians */
    double ratio, p;    /* B/A, two-sided p */
    double band;        /* the change the rule needed */
    int banded;         /* 1 when the history's noise band decided */
} ada_cmp_row;

typedef struct {
    ada_cmp_row *row;   /* benchmarks in both, in A's order */
    int64_t n;
    int64_t slower, faster, same, too_few, drift, errors, only_a, only_b;
    int same_code;      /* both ran the same kernel code (both metas given) */
    int other_machine;  /* the machines differ */
    char machine[256];  /* how (or "same machine ...") */
} ada_cmp;

/* 1 when runs a and b are alike (ma, mb may be NULL); else 0 with why ("set quick against
 * set wan", "3 repetitions against 9", ...: every difference, "; "-separated). */
int ada_runs_alike(const ada_bench_set *a, const ada_run_meta *ma, const ada_bench_set *b, const ada_run_meta *mb,
                   char *why, size_t n);

/* 0, or -1 when the runs are not alike (why in err: testbed, set or repetitions differ) or
 * memory ran out (err says so). ma, mb may be NULL (no meta.json: no drift can be told). */
int ada_compare_runs(const ada_bench_set *a, const ada_bench_set *b, const ada_run_meta *ma, const ada_run_meta *mb,
                     const ada_cmp_opts *o, ada_cmp *out, char *err, size_t en);
void ada_cmp_free(ada_cmp *c);

#endif
