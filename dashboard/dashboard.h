/* dashboard.h -- the static results site of `adaload dashboard`: what it shows is computed
 * here from results/, and written as one folder that works from file:// with no network.
 *
 *   json_t *data = NULL;
 *   char err[512];
 *   dash_opts o = {.hash_v1 = ADALOAD_KERNEL_HASH, .hash_v2 = ADALOAD_KERNEL_HASH_V2};
 *   if (dash_collect("results", &o, &data, err, sizeof err) != DASH_OK) -> err says why
 *   dash_write_site("site", data, err, sizeof err);   // index.html app.js style.css data.js
 *   json_decref(data);
 *
 * The site: index.html (the page), style.css, app.js (draws every chart as SVG in the page,
 * with a tooltip on hover and a table view under each chart) and data.js (the data below as
 * `window.ADALOAD_DASHBOARD = {...};` -- a script, not a JSON file, because pages opened from
 * file:// may not fetch files). All four are plain files; nothing is loaded from elsewhere.
 *
 * The data, per testbed (results/<testbed>/):
 * - bench_runs: every run of kind bench, oldest first (run, time, git sha, kernel hash, set,
 *   whether peers ran);
 * - series: per benchmark name, [run index, median us, median % of copy or null,
 *   repetitions] for each bench run that has it (the PyTorch peers' names too: the page
 *   draws them as reference lines);
 * - compares: for each bench run with an earlier run like it, the verdict of the one
 *   regression rule (run_history.h, what `adaload compare --history` and the nightly apply;
 *   threshold 5%, alpha 0.05): against the previous run of the same set and repetition count
 *   (never a wan run against a sweep run, nor 3 repetitions against 9; prev is its index),
 *   each benchmark but the peers' outside its own noise band over the earlier runs of that
 *   run's kernel code (band_runs of them; 0: fewer than ADA_BAND_MIN, the pair rule), with the
 *   set, the counts (slower, faster, same, too few repetitions, drift) and the machine verdict;
 * - regressions: every benchmark a comparison calls slower, with both medians, the ratio, p
 *   and the change the rule needed; drift: likewise every benchmark that moved with the
 *   machine, not the code (same kernel code, other machine: environment drift);
 * - names and shapes (top level): the parts of every kernel benchmark name (run_name.h), so
 *   the page parses no names;
 * - latest (index of the newest bench run) and sweep (index of the newest run of set
 *   "sweep", or -1);
 * - verify: each verify run with its kernel hashes, grid, cases and sanitizer verdict, and
 *   whether it is a passing gate record for this tree (gate.h);
 * - planner: each run of kind planner, and bench runs with cpu/planner/ benchmarks: the
 *   medians of their time, seconds_per_10M and bytes_per_sample counters, and the simulated
 *   metrics of every plan summary (`adaload plan --summary-json`) in the folder;
 * - other: the regression-check, explore and e2e runs with what they measured.
 * A library: nothing printed, no exit.
 */
#ifndef ADALOAD_DASHBOARD_H
#define ADALOAD_DASHBOARD_H

#include <stddef.h>

#include <jansson.h>

typedef enum {
    DASH_OK = 0,
    DASH_BAD_INPUT = 1, /* results/ breaks the layout or a run's files cannot be read */
    DASH_BAD_OUTPUT = 2, /* the site folder cannot be written or holds files not ours */
    DASH_NOMEM = 3,
} dash_status;

typedef struct {
    const char *hash_v1, *hash_v2; /* this tree's kernel hashes, to mark its gate record */
    double threshold, alpha;       /* compare's rule; 0 means the defaults 0.05 and 0.05 */
} dash_opts;

dash_status dash_collect(const char *results, const dash_opts *o, json_t **data, char *err, size_t en);

/* Writes the site into dir (created when missing). Each file is written through a temporary
 * in dir and renamed; an existing index.html that is not a page of this generator, or any
 * of the four names that is not a regular file, is refused before anything is written. */
dash_status dash_write_site(const char *dir, const json_t *data, char *err, size_t en);

#endif
