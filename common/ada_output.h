/* ada_output.h -- how every adaload command writes its outputs: nothing is ever destroyed,
 * nothing half-written is ever left behind.
 *
 *   ada_outset *t = ada_outset_new("plan");          // one transaction of one command
 *   ada_outset_input(t, manifest_path);              // outputs may never name an input
 *   char err[512];
 *   ada_out *a = ada_outset_add(t, "plan.jsonl", "plan", err, sizeof err);   // NULL: refused
 *   ada_out *b = ada_outset_add(t, "-", "summary", err, sizeof err);         // "-" = stdout
 *   fputs("...", ada_out_file(a));  ...
 *   ada_out_close(a, err, sizeof err);               // optional: done with a (frees its descriptor)
 *   if (ada_outset_commit(t, err, sizeof err)) -> exit 2 with err (no target was touched)
 *   ada_outset_free(t);                              // aborts (removes temps) if not committed
 *
 * What each kind of target gets (the rules are the same for every subcommand):
 *   - a new path or an existing regular file: written to "<path>.tmp.<pid>.adaload" in the
 *     same folder, flushed and fsync'ed, then renamed over the target at commit (the old
 *     file keeps its mode); readers see the old file or the new one, never a mix;
 *   - a symbolic link: resolved (realpath) and the file it points to is replaced as above,
 *     so the link stays a link; a dangling link is refused;
 *   - a character or block device or a FIFO (/dev/null, /dev/stdout, a pipe): written
 *     through, never replaced; a socket or a directory is refused;
 *   - "-": standard output;
 *   - a path that names an input of the command (the same inode, or the same resolved
 *     path), or another output of the same transaction, is refused (ADA_OUT_EUSAGE).
 * One transaction: no regular target is replaced before every output of the transaction is
 * complete and synced; if any fails, every temporary is removed and every target keeps its
 * old content (written-through targets have already received their bytes). Renames happen
 * last, each old target kept as a hard link until all renames succeeded, so a failed rename
 * puts the earlier ones back.
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGPIPE remove every open temporary (and any run
 * folder registered with ada_output_own_dir) and then end the process as the signal would.
 * Stale temporaries "*.tmp.<pid>.adaload" of processes that no longer exist (kill -9) are
 * removed from a folder whenever a new output is opened in it.
 * Progress: an output that grows past 64 MiB prints "adaload CMD: writing LABEL: N MB" on
 * stderr at most once per second, and the commit says when it syncs such a file.
 * The handler's list of temporaries is the one piece of process-wide state of the project
 * (a signal handler has nothing else to reach; common/ada_output_sig.c); it grows as needed.
 * Any number of outputs: a transaction may hold thousands (adaload plan --per-rank writes a
 * file per rank). The first ADA_OUT_OPEN_FILES outputs keep their descriptor from
 * ada_outset_add on; every later replaced output is classified and its temporary created at
 * once (so refusals and unwritable folders show before any work) but gets a descriptor only
 * when ada_out_file is first called. A writer of many outputs writes them one after the
 * other and ada_out_close's each when done, so that few descriptors and stream buffers are
 * held at once. One thread at a time uses a transaction (and the list).
 */
#ifndef ADALOAD_ADA_OUTPUT_H
#define ADALOAD_ADA_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

typedef enum {
    ADA_OUT_OK = 0,
    ADA_OUT_EUSAGE = 1, /* refused: names an input, a directory, a socket, a dangling link ... */
    ADA_OUT_EIO = 2,    /* cannot be written (no space, no permission, no such folder ...) */
    ADA_OUT_ENOMEM = 3,
} ada_out_status;

enum { ADA_OUT_OPEN_FILES = 16 };

typedef struct ada_outset ada_outset;
typedef struct ada_out ada_out;

/* A transaction of command cmd (for messages); NULL when out of memory. */
ada_outset *ada_outset_new(const char *cmd);
/* Declares an input path of the command (a file that must never be written). */
ada_out_status ada_outset_input(ada_outset *t, const char *path);
/* Opens an output (label names it in messages, e.g. "--plan-out"). NULL with the reason in
 * err and ada_outset_status(t) set. */
ada_out *ada_outset_add(ada_outset *t, const char *path, const char *label, char *err, size_t n);
/* The status of the last failed call (ADA_OUT_OK when none failed). */
ada_out_status ada_outset_status(const ada_outset *t);
/* Where to write the output's bytes. NULL (errno set, the commit fails too) only after
 * ada_out_close, or for an output added past the first ADA_OUT_OPEN_FILES whose temporary
 * cannot be opened again (no descriptor left: EMFILE). */
FILE *ada_out_file(ada_out *o);
/* Completes o now (flush, fsync, close: its descriptor and stream buffer are given back);
 * its temporary waits for the commit, which reports a failure here again. ADA_OUT_OK, or
 * the failure with err (the transaction then cannot commit). */
ada_out_status ada_out_close(ada_out *o, char *err, size_t n);
/* For a writer that opens files itself (Google Benchmark, a child process): the path to
 * write (the temporary, or the written-through target); ada_out_file's stream is closed
 * first. */
const char *ada_out_write_path(ada_out *o);
/* Leaves o out of the transaction: its temporary is removed, its target untouched. */
void ada_out_drop(ada_out *o);
/* Completes every output (flush, fsync, close; then the renames). ADA_OUT_OK, or the first
 * failure with err (then nothing was replaced). */
ada_out_status ada_outset_commit(ada_outset *t, char *err, size_t n);
/* Removes the temporaries of an uncommitted transaction and frees it. */
void ada_outset_free(ada_outset *t);

/* One file in one transaction: path gets len bytes / the canonical text of v (insertion
 * key order, reals as %.9g, 2-space indent, trailing newline). 0, or -1 with errno. */
int ada_write_file_atomic(const char *path, const void *data, size_t len);
int ada_write_json_atomic(const char *path, const json_t *v);
/* The canonical text of v in a new malloc'd string, NULL when out of memory. */
char *ada_json_text(const json_t *v);
/* mkdir -p; 0 on success or if it exists, -1 with errno. */
int ada_mkdirs(const char *path);

/* A folder this process created and has not finished (a run folder): a signal removes
 * dir/meta.json and the folder (if then empty). ada_output_disown_dir when it is complete. */
void ada_output_own_dir(const char *dir);
void ada_output_disown_dir(const char *dir);

#endif
