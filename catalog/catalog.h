/* catalog.h -- the results catalog: what run folders results/ holds, its index, and the
 * pruning policy. A library: it never prints or exits; every call returns a cat_status.
 *
 *   cat_catalog c = {0};
 *   char err[512];
 *   if (cat_scan("results", &c, err, sizeof err) != CAT_OK) -> bad tree (err says where)
 *   for (int64_t i = 0; i < c.n; i++) puts(c.run[i].path);   // sorted by time, then path
 *   cat_write_index("results", &c, err, sizeof err);          // results/index.jsonl
 *   cat_free(&c);
 *
 * The layout: results/<testbed>/<kind>/<run>/, kind one of cat_kinds[] (verify, bench,
 * regression-check, explore, planner, e2e); <run> starts with its UTC time
 * "yyyy-mm-ddTHHMMSSZ" (usually "_<sha7>" follows). A run folder holds a meta.json (or, for
 * runs made of several runs -- a regression check, an exploration -- its first sub-folder
 * with one does: that is where git sha and kernel hash are read from). Plain files at the
 * testbed and kind levels (README.md, console logs) are notes, not runs; so are
 * results/index.jsonl and results/README.md. Anything else at those levels (an unknown
 * kind, a run folder whose name has no time, an unreadable meta.json) is a bad tree.
 *
 * The index, results/index.jsonl, has one JSON object per line and per run, keys in this
 * order: path (<testbed>/<kind>/<run>), testbed, kind, run, time (ISO 8601, from the
 * folder name), git_sha, git_dirty, kernel_hash_v1 (scheme 1: of the kernel files' bytes,
 * kernels/source_hash.cmake; an older index named it kernel_hash, and cat_check reports such
 * lines stale), kernel_hash_v2 (scheme 2: of their text without comments and
 * layout, srchash/srchash.h; null for runs made before it existed), command (the command line of meta.json),
 * measured (one line: what the run measured, derived from its files). Every line is a pure
 * function of the run folder, so `cat_check` can rebuild it and compare; writers append the
 * line of the run they just finished (cat_append); runs are never edited.
 */
#ifndef ADALOAD_CATALOG_H
#define ADALOAD_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef enum {
    CAT_OK = 0,
    CAT_BAD_TREE = 1,   /* the results tree breaks the layout (err names the path) */
    CAT_BAD_INDEX = 2,  /* index.jsonl is malformed (err names the line) */
    CAT_MISMATCH = 3,   /* cat_check: index and tree disagree (the report lists how) */
    CAT_IO = 4,         /* a file could not be read or written (errno kept) */
    CAT_NOMEM = 5,
    CAT_BAD_ARG = 6,    /* e.g. cat_append on a folder that is not a run of the layout */
} cat_status;

const char *cat_strerror(cat_status s);

/* The kinds, ending with NULL. */
extern const char *const cat_kinds[];
/* 1 when name is one of cat_kinds. */
int cat_is_kind(const char *name);

typedef struct {
    char *path;      /* <testbed>/<kind>/<run> */
    char *testbed, *kind, *run;
    char time[24];   /* 2026-11-29T23:47:44Z */
    char *git_sha;   /* "unknown" when meta has none */
    int git_dirty;   /* 1, 0, -1 unknown */
    char *kernel_hash_v1;    /* scheme 1 hash (meta.json kernel_hash_v1, run_meta.h), "" when unknown */
    char *kernel_hash_v2; /* scheme 2 hash (kernel_hash_v2); NULL in older runs */
    char *command;
    char *measured;
    /* Verify runs only (not in the index line): what the gate reads. */
    char *verify_grid, *verify_backend; /* NULL when not a verify run */
    int verify_cases_passed;            /* every case passed and all_passed */
    int verify_plugins;                 /* it checked plug-in variants (gate_record_has_plugins) */
    int verify_shard, verify_nshards;   /* its shard of the grid (gate_record_shard); 0, 0: all */
    int verify_passed;                  /* it passes the gate's rule, whatever sources it names
                                           (gate_record_passes: the gate owns the rule) */
} cat_run;

typedef struct {
    cat_run *run;
    int64_t n, cap;
} cat_catalog;

void cat_free(cat_catalog *c);

/* Scans root (the results folder) into c, sorted by (time, path). A missing root is an
 * empty catalog. */
cat_status cat_scan(const char *root, cat_catalog *c, char *err, size_t err_n);

/* The same, except that a run folder whose files cannot be read (a truncated bench.json,
 * a meta.json that is not JSON) does not fail the scan: it is left out of c and appended to
 * bad as {"path": <testbed>/<kind>/<run>, "why": ...} (what the dashboard shows as a bad
 * run). Layout errors (a file where a run folder belongs, an unknown kind) still fail. */
cat_status cat_scan_lenient(const char *root, cat_catalog *c, json_t *bad, char *err, size_t err_n);

/* Derives the record of one run folder root/<path>. */
cat_status cat_scan_run(const char *root, const char *path, cat_run *out, char *err, size_t err_n);
void cat_run_free(cat_run *r);

/* The index line of r (a new JSON object, keys in index order) and its text (one line, no
 * newline; free()). */
json_t *cat_run_json(const cat_run *r);
char *cat_run_line(const cat_run *r);

/* Writes root/index.jsonl for c (temp file in root + rename). */
cat_status cat_write_index(const char *root, const cat_catalog *c, char *err, size_t err_n);

/* Reads root/index.jsonl: its lines as JSON objects in *lines (a new array; an absent index
 * is an empty array). */
cat_status cat_read_index(const char *root, json_t **lines, char *err, size_t err_n);

/* Appends the line of run root/<path> to root/index.jsonl (rewritten atomically, under an
 * advisory lock so concurrent writers do not lose lines). CAT_BAD_ARG when the run is
 * already indexed. */
cat_status cat_append(const char *root, const char *path, char *err, size_t err_n);

/* path of a folder under root, relative to root ("nvidia-h200/bench/RUN"), when dir is
 * root/<testbed>/<kind>/<run> (after resolving both with realpath); else CAT_BAD_ARG. */
cat_status cat_relpath(const char *root, const char *dir, char *out, size_t n);

/* Compares the index with the tree. *report gets one line per difference ("not in the
 * index: P", "in the index but not in the tree: P", "stale line for P: field F", "P listed
 * twice"); CAT_MISMATCH when there is any. */
cat_status cat_check(const char *root, char **report, char *err, size_t err_n);

/* Filters for listing: NULL/empty fields match everything. since/until compare with time
 * as strings (any prefix of ISO 8601 works, e.g. "2026-11-29"). */
typedef struct {
    const char *kind, *testbed, *since, *until, *sha, *hash;
} cat_filter;
int cat_match(const cat_run *r, const cat_filter *f);
/* 1 when s is a run time as the catalog writes it ("2026-11-29T21:33:40Z") or a prefix of
 * one of at least the year ("2026", "2026-11-29", "2026-11-29T21"): what since/until take. */
int cat_is_time_prefix(const char *s);

/* The pruning policy (cat_prune_plan fills one decision per run, in catalog order):
 * - a run whose folder name appears in cited (the text of the README and notes) is kept;
 * - verify: full-grid GPU records are superseded by newer ones of the same testbed: per
 *   testbed the newest record for this tree's kernel sources (the one the gate reads: same
 *   scheme-2 hash, or same scheme-1 hash) and the newest record overall are kept, older
 *   full-grid records are pruned. Other verify runs (quick grids, CPU models) are kept.
 * - bench and planner: kept when made at a commit on the main line (on_main says so; a
 *   dirty tree there is an uncommitted change being timed, kept too), pruned when made at a
 *   commit that is not on it (a side branch that never landed); kept when on_main cannot
 *   tell (-1). With keep_bench = N > 0, a main-line run is pruned too when N newer runs of
 *   the same testbed, kind and set ("set wan" in what it measured) exist (nightly history
 *   thinned to the newest N).
 * - regression-check, explore, e2e: kept.
 */
typedef struct {
    const char *hash_v1, *hash_v2; /* this tree's kernel hashes (either may be NULL) */
    /* 1 the commit is on the main line, 0 it is not, -1 unknown. */
    int (*on_main)(const char *sha, void *ctx);
    void *ctx;
    const char *cited;  /* text in which a cited run's folder name appears (NULL: none) */
    int64_t keep_bench; /* 0: every main-line bench and planner run; N: the newest N per set */
} cat_prune_opts;

typedef struct {
    int prune;           /* 1 remove, 0 keep */
    char reason[160];
} cat_decision;

cat_status cat_prune_plan(const cat_catalog *c, const cat_prune_opts *o, cat_decision *d);

/* Removes the run folder root/<path> (files, then folders; never follows links). */
cat_status cat_remove_run(const char *root, const char *path, char *err, size_t err_n);

#endif
