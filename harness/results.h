/* results.h -- results run folders: results/<testbed>/<UTC time>_<sha7>/ with meta.json.
 * A run folder is written once and never edited. verify (verify.json) and bench
 * (bench.json, peers.json, customSmallerIsBetter.json, customBiggerIsBetter.json) write into
 * the run folder they are given or create one here. */
#ifndef ADALOAD_RESULTS_H
#define ADALOAD_RESULTS_H

#include <stddef.h>

/* Slug of CUDA device 0's name ("NVIDIA H200" -> "nvidia-h200"), or "cpu-<hostname>" when
 * there is no device. 0 on success, -1 if buf is too small. */
int ada_results_testbed(char *buf, size_t n);

/* Creates <root>/results/<testbed>/<UTC yyyy-mm-ddTHHMMSSZ>_<sha7>/ and writes meta.json in
 * it (git sha and dirty flag -- from git, or from $ADALOAD_GIT_SHA / $ADALOAD_GIT_DIRTY where
 * the tree has no .git -- date, ada_sysinfo(), the command line). The folder path goes to
 * dir_out. 0 on success, -1 on failure (errno set; nothing left half-written). */
int ada_results_new_run(const char *root, const char *testbed, const char *cmdline,
                        char *dir_out, size_t n);

/* Writes meta.json into an existing folder dir (for --out DIR); same content. */
int ada_results_write_meta(const char *dir, const char *cmdline);

#endif
