/* run_folder.h -- the runs library: run folders results/<testbed>/<kind>/<UTC time>_<sha7>/
 * with their meta.json, and reading them back (run_bench.h: bench.json and peers.json for compare
 * and report; run_sysinfo.h: the machine; the gate reads records through gate/gate.h).
 *
 *   char dir[4096];
 *   if (ada_run_new(root, "nvidia-h200", "bench", "adaload bench --set wan", dir, sizeof dir)) -> errno
 *   ... write dir/bench.json ...
 *   ada_run_index(root, dir, err, sizeof err);          // the finished run into results/index.jsonl
 *   ada_run_write_meta("my/out/dir", root, cmdline);    // --out DIR: meta.json into DIR
 *
 * A run folder is written once and never edited. verify (verify.json) and bench
 * (bench.json, peers.json, customSmallerIsBetter.json, customBiggerIsBetter.json) write into
 * the run folder they are given or create one here. root is the source tree (its .git gives
 * the git facts). Functions return 0, or -1 with errno set; they never print. */
#ifndef ADALOAD_RUN_FOLDER_H
#define ADALOAD_RUN_FOLDER_H

#include <stddef.h>

/* Slug of CUDA device 0's name ("NVIDIA H200" -> "nvidia-h200"), or "cpu-<hostname>" when
 * there is no device. 0 on success, -1 if buf is too small. */
int ada_run_testbed(char *buf, size_t n);

/* Creates <root>/results/<testbed>/<kind>/<UTC yyyy-mm-ddTHHMMSSZ>_<sha7>/ (kind one of the
 * catalog's: verify, bench, regression-check, explore, planner, e2e; catalog.h) and writes
 * meta.json in it (git sha and dirty flag -- from git, or from $ADALOAD_GIT_SHA / $ADALOAD_GIT_DIRTY where
 * the tree has no .git -- date, ada_sysinfo(), the command line). The folder path goes to
 * dir_out. 0 on success, -1 on failure (errno set; nothing left half-written). */
int ada_run_new(const char *root, const char *testbed, const char *kind, const char *cmdline,
                char *dir_out, size_t n);

/* Writes meta.json into an existing folder dir (for --out DIR); same content. */
int ada_run_write_meta(const char *dir, const char *root, const char *cmdline);

/* Adds the finished run dir to <root>/results/index.jsonl (catalog.h, cat_append), once
 * every file of it is written. 0 indexed, 1 dir is not a run folder of that layout (an --out
 * elsewhere: nothing to index), -1 failed (why in err). */
int ada_run_index(const char *root, const char *dir, char *err, size_t n);

#endif
