/* run_folder.h -- the runs library: run folders results/<testbed>/<kind>/<UTC time>_<sha7>/
 * with their meta.json, and reading them back (run_bench.h: bench.json and peers.json for compare
 * and report; run_sysinfo.h: the machine; the gate reads records through gate/gate.h).
 *
 *   char dir[4096];
 *   if (ada_run_new(root, "nvidia-h200", "bench", "adaload bench --set wan", dir, sizeof dir)) -> errno
 *   ... write dir/bench.json ...             // dir is the hidden staging folder
 *   if (failed) ada_run_discard(dir);        // nothing is left under results/
 *   else if (ada_run_finish(results, dir, sizeof dir, err, sizeof err)) -> err says why
 *                                            // published (dir is its final path) and indexed
 *   ada_run_write_meta("my/out/dir", root, cmdline);    // --out DIR: meta.json into DIR
 *
 * This file is the only place that creates, stages, publishes and indexes run folders: the
 * C commands call it, and scripts (ci/nightly.sh's planner step, harness/e2e) reach it
 * through `adaload results new` / `publish` / `discard` (harness/cmd_results.c).
 *
 * A run folder is written once and never edited. verify (verify.json) and bench
 * (bench.json, peers.json, customSmallerIsBetter.json, customBiggerIsBetter.json) write into
 * the run folder they are given or create one here. root is the source tree (its .git gives
 * the git facts). Functions return 0, or -1 with errno set; they never print.
 *
 * Staging: a run is written in "<parent>/.<name>.partial.<pid>" and renamed to
 * "<parent>/<name>" only when complete, so a run killed midway (kill -9, a power cut) leaves
 * no visible run folder; the catalog ignores dot-named folders, and ada_run_new removes the
 * staging folders of processes that no longer exist from the parent it creates a run in
 * (never one of a live process). SIGINT, SIGTERM, SIGHUP and SIGPIPE remove this process's
 * unpublished staging folder (ada_output_own_dir) when it holds only meta.json and
 * temporaries; else the sweep does. */
#ifndef ADALOAD_RUN_FOLDER_H
#define ADALOAD_RUN_FOLDER_H

#include <stddef.h>

#include <jansson.h>

#include "run_bench.h"

/* Slug of CUDA device 0's name ("NVIDIA H200" -> "nvidia-h200"), or "cpu-<hostname>" when
 * there is no device. 0 on success, -1 if buf is too small. */
int ada_run_testbed(char *buf, size_t n);

/* Creates <root>/results/<testbed>/<kind>/<UTC yyyy-mm-ddTHHMMSSZ>_<sha7>/ (kind one of the
 * catalog's: verify, bench, regression-check, explore, planner, e2e; catalog.h) and writes
 * meta.json in it (git sha and dirty flag -- from git, or from $ADALOAD_GIT_SHA / $ADALOAD_GIT_DIRTY where
 * the tree has no .git -- date, ada_sysinfo(), the command line), all in a hidden staging
 * folder ".<that name>.partial.<pid>" beside it, whose path goes to dir_out; stale staging
 * folders of dead processes in that parent are removed first. 0 on success, -1 on failure
 * (errno set; nothing left half-written). */
int ada_run_new(const char *root, const char *testbed, const char *kind, const char *cmdline,
                char *dir_out, size_t n);

/* What ada_run_stage creates: source is the tree whose git facts meta.json records;
 * results the results folder (NULL: <source>/results); owner_pid the process whose life
 * keeps the staging folder from being swept (0: this one; a script passes its own pid to
 * `adaload results new`, which exits before the run is filled). meta.json also records the
 * kind. */
typedef struct {
    const char *source, *results, *testbed, *kind, *cmdline;
    long owner_pid;
} ada_run_spec;

/* ada_run_new with every choice spelled out (same result and errors). */
int ada_run_stage(const ada_run_spec *spec, char *dir_out, size_t n);

/* Renames the staging folder of ada_run_new to its final name, once every file is written
 * (atomic; it never replaces an existing folder, not even an empty one: the name then gets
 * "-2", "-3" ... as in ada_run_new). The final path goes to dir_out (which may be staging's
 * own buffer). 0, or -1 with errno (EINVAL: not a staging folder; the folder stays staged). */
int ada_run_publish(const char *staging, char *dir_out, size_t n);

/* Removes a staging folder of ada_run_new and everything in it (a run that failed or had
 * nothing to record). 0, or -1 with errno (EINVAL: not a staging folder name). */
int ada_run_discard(const char *staging);

/* Writes meta.json into an existing folder dir (for --out DIR); same content. */
int ada_run_write_meta(const char *dir, const char *root, const char *cmdline);

/* Adds the finished run dir to <root>/results/index.jsonl (catalog.h, cat_append), once
 * every file of it is written. 0 indexed, 1 dir is not a run folder of that layout (an --out
 * elsewhere: nothing to index), -1 failed (why in err). */
int ada_run_index(const char *root, const char *dir, char *err, size_t n);
/* The same for a results folder given as it is (<results>/index.jsonl). */
int ada_run_index_in(const char *results, const char *dir, char *err, size_t n);

/* The end of a staged run: publishes dir (which becomes the final path) and indexes it in
 * <results>/index.jsonl. 0 done; -1 not published (errno; a staging folder that cannot be
 * published is discarded); 1 published but not indexed. err says why. */
int ada_run_finish(const char *results, char *dir, size_t n, char *err, size_t en);

/* meta.json of the unpublished run dir with the run's own copy bandwidth added to its
 * fingerprint (run_meta.h), for the command to write in its output transaction before it
 * publishes; NULL when s has no copy benchmark or meta.json has no fingerprint. */
json_t *ada_run_meta_with_copy(const char *dir, const ada_bench_set *s);

#endif
