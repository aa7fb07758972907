/* run_history.h -- the regression verdict of a benchmark run against its history: the one
 * rule that `adaload compare --history` (and so ci/nightly.sh) and the dashboard apply.
 *
 *   ada_history *h = ada_history_new();
 *   for each earlier bench run of the testbed, oldest first:
 *       ada_history_add(h, &set, &meta, id, "nvidia-h200/bench/2026-...");  // takes both
 *   ada_hist_verdict v;
 *   ada_history_judge(h, &newest, &newest_meta, &opts, &v, err, sizeof err);
 *   if (!v.judged) puts(v.why);                 // nothing like it before: not judged
 *   else v.cmp.slower, v.cmp.drift, v.baseline, v.band_runs ...
 *   ada_hist_verdict_free(&v);
 *   ada_history_free(h);
 *
 * A history holds the runs of one testbed (the callers add only those). The rule:
 * 1. Like with like (ada_runs_alike, run_compare.h): only earlier runs of the same set,
 *    repetition count and plug-in libraries (meta.json's plug-in file hashes; none for
 *    adaload's own runs, so a researcher's `bench --plugin` run is never the nightly's
 *    baseline) count. A 3-repetition run is not judged against 9-repetition runs, nor
 *    a wan run against a sweep run; when no earlier run is like it, nothing is judged and
 *    `why` says what the earlier runs were.
 * 2. The baseline is the newest earlier run like it. Its kernel code (ada_run_same_code:
 *    hashes and kernel-relevant build options) picks the noise band: the medians of the
 *    newest ADA_BAND_RUNS earlier runs like it with that same code (the baseline included),
 *    so run-to-run spread is measured where the code did not change (on whatever leases
 *    those runs had). Runs without a meta.json count as the same code.
 * 3. Each benchmark is judged by ada_compare_runs with that history (ada_history_verdict,
 *    run_stats.h): once the band has ADA_BAND_MIN runs, "slower" only outside the band
 *    (max(ADA_BAND_FLOOR, ADA_BAND_K robust standard deviations)), significantly (p < alpha)
 *    and beyond the baseline too; with fewer (a history of one or two runs) the pair rule
 *    (p < alpha and the threshold), which band_runs = 0 says.
 * 4. When the run has the baseline's kernel code, whatever moved is the machine or its state
 *    (another lease: the fingerprint says how): "environment drift", never a regression.
 *    Only a change of the code outside the band is a regression.
 */
#ifndef ADALOAD_RUN_HISTORY_H
#define ADALOAD_RUN_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "run_bench.h"
#include "run_compare.h"
#include "run_meta.h"

typedef struct ada_history ada_history;

typedef struct {
    int judged;            /* 0: no earlier run like this one (why says); cmp is empty */
    ada_cmp cmp;           /* the run against the baseline, the band applied (run_compare.h) */
    int64_t baseline_id;   /* the id the baseline was added with (-1 when not judged) */
    char baseline[512];    /* its label */
    int64_t band_runs;     /* runs of the baseline's code behind the band (0: the pair rule) */
    int64_t unlike;        /* earlier runs of the same set left out: other repetition counts */
    char why[512];         /* what was left out and why, or why nothing was judged */
} ada_hist_verdict;

/* NULL when out of memory. */
ada_history *ada_history_new(void);
void ada_history_free(ada_history *h);

/* Adds a run, newer than every run added before: takes b and m (m may be NULL: no
 * meta.json) and leaves *b, *m empty. 0, or -1 when out of memory (b, m freed then too). */
int ada_history_add(ada_history *h, ada_bench_set *b, ada_run_meta *m, int64_t id, const char *label);

/* Judges run b (m: its meta.json, or NULL) against the runs added so far by the rule above;
 * o's threshold and alpha are the pair rule's, skip_peers as in ada_compare_runs (o->history
 * is ignored: the history is h). The rows of v->cmp point into b. 0; -1 when out of memory
 * or the baseline is not alike after all (another testbed), with err saying so. */
int ada_history_judge(const ada_history *h, const ada_bench_set *b, const ada_run_meta *m, const ada_cmp_opts *o,
                      ada_hist_verdict *v, char *err, size_t en);
void ada_hist_verdict_free(ada_hist_verdict *v);

#endif
