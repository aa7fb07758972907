/* ada_output.c -- outputs that never destroy anything (ada_output.h). */
#define _GNU_SOURCE /* fopencookie: a FILE that counts its bytes for the progress lines */
#include "ada_output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h> /* kill(pid, 0): is the writer of a stale temporary alive */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "ada_output_sig.h"
#include "ada_util.h"

#define TMP_SUFFIX ".adaload"
#define PROGRESS_BYTES ((long long)64 << 20)

enum { KIND_REPLACE, KIND_THROUGH, KIND_STDOUT };
enum { MAX_INPUTS = 16, PATH_CAP = 4096 };

/* ---- the transaction ------------------------------------------------------------------ */

struct ada_out {
    ada_outset *t;
    char *target;  /* resolved path (or "-") */
    char *label;
    char *tmp;     /* KIND_REPLACE: the temporary */
    char *backup;  /* during the renames: a hard link to the old target */
    ada_temp_slot *slot, *bslot; /* the handler's entries of tmp and backup */
    int kind, had_old, fd;
    int parked;    /* its temporary exists but holds no descriptor until ada_out_file */
    int done;      /* completed early by ada_out_close */
    int werr;      /* the errno of the first failed write (ENOSPC ...), 0 when none failed */
    mode_t mode;
    FILE *f;
    long long bytes;
    double last_note;
};

struct ada_outset {
    char cmd[32];
    struct {
        dev_t dev;
        ino_t ino;
        int has_inode;
        char *real;
    } in[MAX_INPUTS];
    int nin;
    ada_out **out;
    size_t nout, cap;
    size_t nopen; /* outputs holding a descriptor now (ADA_OUT_OPEN_FILES) */
    char *swept;     /* the folder last swept of stale temporaries */
    ada_out **names; /* the file outputs by target (open addressing), for "the same file as" */
    size_t names_cap;
    ada_out_status st;
};

static ada_out_status fail(ada_outset *t, ada_out_status st, int e, char *err, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static ada_out_status fail(ada_outset *t, ada_out_status st, int e, char *err, size_t n, const char *fmt, ...)
{
    if (err && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, n, fmt, ap);
        va_end(ap);
    }
    t->st = st;
    errno = e;
    return st;
}

ada_outset *ada_outset_new(const char *cmd)
{
    ada_outset *t = calloc(1, sizeof *t);
    if (t) snprintf(t->cmd, sizeof t->cmd, "%s", cmd ? cmd : "");
    return t;
}

ada_out_status ada_outset_status(const ada_outset *t) { return t->st; }

ada_out_status ada_outset_input(ada_outset *t, const char *path)
{
    if (!path || !strcmp(path, "-") || t->nin >= MAX_INPUTS) return ADA_OUT_OK;
    struct stat st;
    int i = t->nin;
    if (stat(path, &st) == 0) {
        t->in[i].dev = st.st_dev;
        t->in[i].ino = st.st_ino;
        t->in[i].has_inode = 1;
    }
    t->in[i].real = realpath(path, NULL);
    if (t->in[i].has_inode || t->in[i].real) t->nin++;
    return ADA_OUT_OK;
}

/* realpath of a path whose last component may not exist: realpath(dir) + "/" + base. */
static char *resolve_new(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_CAP];
    const char *base = slash ? slash + 1 : path;
    if (!*base) return NULL;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    char *rd = realpath(dir, NULL);
    if (!rd) return NULL;
    size_t n = strlen(rd) + strlen(base) + 2;
    char *r = malloc(n);
    if (r) snprintf(r, n, "%s%s%s", rd, strcmp(rd, "/") ? "/" : "", base);
    free(rd);
    return r;
}

/* Removes stale temporaries "<name>.tmp.<pid>.adaload" of dead processes from dir. */
static void sweep(const char *target)
{
    char dir[PATH_CAP];
    const char *slash = strrchr(target, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - target) : 1, slash ? target : ".");
    if (!dir[0]) snprintf(dir, sizeof dir, "/");
    DIR *d = opendir(dir);
    if (!d) return;
    size_t sl = strlen(TMP_SUFFIX);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n <= sl + 6 || strcmp(e->d_name + n - sl, TMP_SUFFIX)) continue;
        const char *end = e->d_name + n - sl, *p = end;
        while (p > e->d_name && p[-1] >= '0' && p[-1] <= '9') p--;
        if (p == end || p - e->d_name < 5 || strncmp(p - 5, ".tmp.", 5)) continue;
        long pid = strtol(p, NULL, 10);
        if (pid <= 0 || pid == (long)getpid() || pid > INT_MAX) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
        char full[2 * PATH_CAP];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        unlink(full);
    }
    closedir(d);
}

/* sweep, once per folder and transaction (the last folder swept is remembered: outputs in
 * one folder come one after the other, and a folder of 1,000 outputs is read once). */
static void sweep_once(ada_outset *t, const char *target)
{
    const char *slash = strrchr(target, '/');
    size_t len = slash ? (size_t)(slash - target) : 0;
    if (t->swept && strlen(t->swept) == len && !strncmp(t->swept, target, len)) return;
    sweep(target);
    free(t->swept);
    t->swept = strndup(target, len); /* NULL (out of memory): the next output sweeps again */
}

/* ---- a FILE that counts bytes and says how far a long write got -------------------- */

/* The bytes written, 0 on an error (o->werr set); never -1, which glibc counts as bytes. */
static ssize_t cookie_write(void *c, const char *buf, size_t size)
{
    ada_out *o = c;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(o->fd, buf + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0 && !o->werr) o->werr = w < 0 ? errno : EIO;
        if (w <= 0) break;
        done += (size_t)w;
    }
    o->bytes += (long long)done;
    if (o->bytes >= PROGRESS_BYTES) {
        double now = ada_now_s();
        if (now - o->last_note >= 1.0) {
            o->last_note = now;
            fprintf(stderr, "adaload %s: writing %s (%s): %lld MB\n", o->t->cmd, o->label, o->target,
                    o->bytes >> 20);
        }
    }
    return (ssize_t)done;
}

/* Closes the output's descriptor, if it holds one. close's result. */
static int close_fd(ada_out *o)
{
    if (o->fd < 0) return 0;
    int rc = close(o->fd);
    o->fd = -1;
    o->t->nopen--;
    return rc;
}

static int cookie_close(void *c) { return close_fd(c); }

static FILE *counted_file(ada_out *o)
{
    cookie_io_functions_t io = {.read = NULL, .write = cookie_write, .seek = NULL, .close = cookie_close};
    FILE *f = fopencookie(o, "w", io);
    if (f) setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

/* ---- adding an output ------------------------------------------------------------------- */

static int same_as_input(const ada_outset *t, const struct stat *st, int exists, const char *real)
{
    for (int i = 0; i < t->nin; i++) {
        if (exists && t->in[i].has_inode && t->in[i].dev == st->st_dev && t->in[i].ino == st->st_ino) return 1;
        if (t->in[i].real && real && !strcmp(t->in[i].real, real)) return 1;
    }
    return 0;
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The index of target in the table, or of the empty place where it would go. */
static size_t name_at(const ada_outset *t, const char *target)
{
    size_t i = (size_t)name_hash(target) & (t->names_cap - 1);
    while (t->names[i] && strcmp(t->names[i]->target, target)) i = (i + 1) & (t->names_cap - 1);
    return i;
}

/* The table rebuilt from out[] at cap places (a power of two, more than twice the outputs). */
static int rehash(ada_outset *t, size_t cap)
{
    ada_out **names = calloc(cap, sizeof *names);
    if (!names) return -1;
    free(t->names);
    t->names = names;
    t->names_cap = cap;
    for (size_t i = 0; i < t->nout; i++)
        if (t->out[i]->kind != KIND_STDOUT) t->names[name_at(t, t->out[i]->target)] = t->out[i];
    return 0;
}

/* Takes o out of the table (linear probing: later entries of its run move up). */
static void name_remove(ada_outset *t, const ada_out *o)
{
    size_t mask = t->names_cap - 1, i = name_at(t, o->target);
    if (t->names[i] != o) return;
    t->names[i] = NULL;
    for (size_t j = (i + 1) & mask; t->names[j]; j = (j + 1) & mask) {
        size_t k = (size_t)name_hash(t->names[j]->target) & mask; /* where it wants to be */
        int reachable = i <= j ? (k <= i || k > j) : (k <= i && k > j);
        if (reachable) { /* its run passes the hole: move it there */
            t->names[i] = t->names[j];
            t->names[j] = NULL;
            i = j;
        }
    }
}

/* Room for one more output in out[] and in the table (kept at most half full). */
static int grow(ada_outset *t)
{
    if (t->nout == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 8;
        ada_out **out = realloc(t->out, cap * sizeof *out);
        if (!out) return -1;
        t->out = out;
        t->cap = cap;
    }
    if (2 * (t->nout + 1) <= t->names_cap) return 0;
    return rehash(t, t->names_cap ? 2 * t->names_cap : 16);
}

static void out_free(ada_out *o)
{
    if (!o) return;
    if (o->f && o->kind != KIND_STDOUT) fclose(o->f);
    close_fd(o);
    if (o->tmp) unlink(o->tmp);
    ada_temp_untrack(o->slot);
    ada_temp_untrack(o->bslot);
    free(o->target);
    free(o->label);
    free(o->tmp);
    free(o->backup);
    free(o);
}

/* What path names: *kind and the resolved target in o, or a refusal. */
static ada_out_status classify(ada_outset *t, ada_out *o, const char *path, char *err, size_t n)
{
    struct stat st;
    int exists = 0;
    if (lstat(path, &st) == 0) {
        exists = 1;
        if (S_ISLNK(st.st_mode)) {
            /* /dev/stdout -> /proc/self/fd/1 -> "pipe:[N]" has no path, yet opens: written through */
            o->target = realpath(path, NULL);
            if (!o->target && stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
                o->target = strdup(path);
            else if (!o->target || stat(o->target, &st) != 0)
                return fail(t, ADA_OUT_EUSAGE, ELOOP, err, n, "%s %s: a dangling symbolic link (refused)", o->label, path);
        } else {
            o->target = realpath(path, NULL);
        }
    } else if (errno == ENOENT) {
        o->target = resolve_new(path);
        if (!o->target)
            return fail(t, ADA_OUT_EIO, ENOENT, err, n, "%s %s: cannot write: its folder does not exist", o->label, path);
    } else {
        return fail(t, ADA_OUT_EIO, errno, err, n, "%s %s: cannot write: %s", o->label, path, strerror(errno));
    }
    if (!o->target) return fail(t, ADA_OUT_ENOMEM, ENOMEM, err, n, "out of memory");
    if (exists && S_ISDIR(st.st_mode))
        return fail(t, ADA_OUT_EUSAGE, EISDIR, err, n, "%s %s: is a directory (refused)", o->label, path);
    if (exists && S_ISSOCK(st.st_mode))
        return fail(t, ADA_OUT_EUSAGE, ENOTSUP, err, n, "%s %s: is a socket (refused)", o->label, path);
    if (same_as_input(t, &st, exists, o->target))
        return fail(t, ADA_OUT_EUSAGE, EEXIST, err, n, "%s %s: names an input of this command (refused)", o->label, path);
    const ada_out *same = t->names[name_at(t, o->target)];
    if (same)
        return fail(t, ADA_OUT_EUSAGE, EEXIST, err, n, "%s %s: the same file as %s (refused)", o->label, path,
                    same->label);
    o->kind = (!exists || S_ISREG(st.st_mode)) ? KIND_REPLACE : KIND_THROUGH;
    o->had_old = exists && S_ISREG(st.st_mode);
    o->mode = st.st_mode & 07777;
    return ADA_OUT_OK;
}

/* A descriptor of o's target (written through) or temporary (created when create), counted
 * in t->nopen. -1 with errno. */
static int open_fd(ada_out *o, int create)
{
    if (o->kind == KIND_THROUGH) o->fd = open(o->target, O_WRONLY | O_NOCTTY);
    else o->fd = open(o->tmp, O_WRONLY | O_NOCTTY | (create ? O_CREAT | O_TRUNC : 0), 0666);
    if (o->fd >= 0) o->t->nopen++;
    return o->fd;
}

static ada_out_status open_target(ada_outset *t, ada_out *o, const char *path, char *err, size_t n)
{
    if (o->kind == KIND_REPLACE) {
        sweep_once(t, o->target);
        size_t len = strlen(o->target) + 48;
        o->tmp = malloc(len);
        if (!o->tmp) return fail(t, ADA_OUT_ENOMEM, ENOMEM, err, n, "out of memory");
        snprintf(o->tmp, len, "%s.tmp.%ld%s", o->target, (long)getpid(), TMP_SUFFIX);
        o->slot = ada_temp_track(o->tmp); /* before the file exists: a signal never misses it */
        if (!o->slot) return fail(t, ADA_OUT_ENOMEM, ENOMEM, err, n, "out of memory");
    }
    if (open_fd(o, 1) < 0) {
        int e = errno;
        ada_temp_untrack(o->slot);
        o->slot = NULL;
        free(o->tmp); /* nothing was created */
        o->tmp = NULL;
        return fail(t, ADA_OUT_EIO, e, err, n, "%s %s: cannot write: %s", o->label, path, strerror(e));
    }
    if (o->kind == KIND_REPLACE && o->had_old) (void)fchmod(o->fd, o->mode);
    if (o->kind == KIND_REPLACE && t->nopen > ADA_OUT_OPEN_FILES) {
        close_fd(o); /* the temporary stays; ada_out_file opens it again */
        o->parked = 1;
        return ADA_OUT_OK;
    }
    o->f = counted_file(o);
    if (!o->f) return fail(t, ADA_OUT_ENOMEM, ENOMEM, err, n, "out of memory");
    return ADA_OUT_OK;
}

ada_out *ada_outset_add(ada_outset *t, const char *path, const char *label, char *err, size_t n)
{
    ada_out *o = grow(t) == 0 ? calloc(1, sizeof *o) : NULL;
    if (!o || !(o->label = strdup(label ? label : path))) {
        free(o);
        fail(t, ADA_OUT_ENOMEM, ENOMEM, err, n, "out of memory");
        return NULL;
    }
    o->t = t;
    o->fd = -1;
    ada_out_status st;
    if (!strcmp(path, "-")) {
        for (size_t i = 0; i < t->nout; i++)
            if (t->out[i]->kind == KIND_STDOUT) {
                fail(t, ADA_OUT_EUSAGE, EEXIST, err, n, "%s -: standard output is already %s (refused)", o->label,
                     t->out[i]->label);
                out_free(o);
                return NULL;
            }
        o->kind = KIND_STDOUT;
        o->target = strdup("-");
        o->f = stdout;
        st = o->target ? ADA_OUT_OK : fail(t, ADA_OUT_ENOMEM, ENOMEM, err, n, "out of memory");
    } else {
        st = classify(t, o, path, err, n);
        if (st == ADA_OUT_OK) st = open_target(t, o, path, err, n);
    }
    if (st != ADA_OUT_OK) {
        out_free(o);
        return NULL;
    }
    if (o->kind != KIND_STDOUT) t->names[name_at(t, o->target)] = o;
    t->out[t->nout++] = o;
    return o;
}

FILE *ada_out_file(ada_out *o)
{
    if (o->parked && !o->done) { /* its descriptor was given back when it was added */
        int e = open_fd(o, 0) < 0 ? errno : 0;
        if (!e && !(o->f = counted_file(o))) {
            close_fd(o);
            e = ENOMEM;
        }
        if (e) {
            fail(o->t, e == ENOMEM ? ADA_OUT_ENOMEM : ADA_OUT_EIO, e, NULL, 0, "%s", "");
            errno = e;
            return NULL;
        }
        o->parked = 0;
    }
    return o->f;
}

const char *ada_out_write_path(ada_out *o)
{
    if (o->kind == KIND_STDOUT) return "/dev/stdout";
    if (o->f) {
        fclose(o->f); /* closes the fd too; the writer opens the path itself */
        o->f = NULL;
    }
    o->parked = 0;
    return o->kind == KIND_REPLACE ? o->tmp : o->target;
}

void ada_out_drop(ada_out *o)
{
    ada_outset *t = o->t;
    for (size_t i = 0; i < t->nout; i++)
        if (t->out[i] == o) {
            memmove(&t->out[i], &t->out[i + 1], (t->nout - i - 1) * sizeof *t->out);
            t->nout--;
            break;
        }
    if (o->kind != KIND_STDOUT) name_remove(t, o);
    out_free(o);
}

/* Flush, sync and close one output. 0, or -1 with errno. */
static int finish(ada_out *o)
{
    if (o->kind == KIND_STDOUT) return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
    if (o->werr && !o->f) { /* a write failed, or its descriptor could not be had back */
        errno = o->werr;
        return -1;
    }
    if (!o->f) { /* written by someone else through ada_out_write_path: sync what it wrote */
        if (o->kind != KIND_REPLACE) return 0;
        int fd = open(o->tmp, O_RDONLY);
        if (fd < 0) return -1;
        int rc = fsync(fd);
        close(fd);
        return rc;
    }
    int ok = fflush(o->f) == 0 && !ferror(o->f) && !o->werr;
    int e = o->werr ? o->werr : errno;
    if (ok && o->kind == KIND_REPLACE) {
        if (o->bytes >= PROGRESS_BYTES) fprintf(stderr, "adaload %s: syncing %s (%lld MB)\n", o->t->cmd, o->target, o->bytes >> 20);
        ok = fsync(o->fd) == 0;
        e = errno;
    }
    if (fclose(o->f) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    o->f = NULL;
    errno = e;
    return ok ? 0 : -1;
}

/* fsyncs the folder of path unless it is the folder of prev (the output synced before). */
static void sync_dir_of(const char *path, const char *prev)
{
    char dir[PATH_CAP];
    const char *slash = strrchr(path, '/');
    if (!slash) return;
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    const char *ps = prev ? strrchr(prev, '/') : NULL;
    if (ps && (size_t)(ps == prev ? 1 : ps - prev) == len && !strncmp(path, prev, len)) return;
    snprintf(dir, sizeof dir, "%.*s", (int)len, path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* Keeps o's old target as a hard link (o->backup) while the renames run; none when that
 * cannot be made (the rename then still replaces it, but a later failure cannot restore it). */
static void keep_old(ada_out *o)
{
    size_t len = strlen(o->target) + 64;
    o->backup = malloc(len);
    if (!o->backup) return;
    snprintf(o->backup, len, "%s.old.tmp.%ld%s", o->target, (long)getpid(), TMP_SUFFIX);
    o->bslot = ada_temp_track(o->backup);
    if (!o->bslot || link(o->target, o->backup) != 0) {
        ada_temp_untrack(o->bslot);
        o->bslot = NULL;
        free(o->backup);
        o->backup = NULL;
    }
}

/* The renames, each old target kept as a hard link until all succeeded. */
static ada_out_status rename_all(ada_outset *t, char *err, size_t n)
{
    size_t i;
    for (i = 0; i < t->nout; i++) {
        ada_out *o = t->out[i];
        if (o->kind != KIND_REPLACE) continue;
        if (o->had_old) keep_old(o);
        if (rename(o->tmp, o->target) != 0) break;
        ada_temp_untrack(o->slot); /* its name is the target's now */
        o->slot = NULL;
        free(o->tmp);
        o->tmp = NULL;
    }
    int e = errno;
    const char *prev = NULL;
    for (size_t j = 0; j < t->nout; j++) {
        ada_out *o = t->out[j];
        if (o->kind != KIND_REPLACE) continue;
        if (i < t->nout && j < i) { /* a later rename failed: put this one back */
            if (o->backup) rename(o->backup, o->target);
            else unlink(o->target);
        } else if (o->backup) {
            unlink(o->backup);
        }
        ada_temp_untrack(o->bslot);
        o->bslot = NULL;
        free(o->backup);
        o->backup = NULL;
        if (i == t->nout) sync_dir_of(o->target, prev);
        prev = o->target;
    }
    if (i < t->nout)
        return fail(t, ADA_OUT_EIO, e, err, n, "%s %s: cannot replace it: %s", t->out[i]->label, t->out[i]->target,
                    strerror(e));
    return ADA_OUT_OK;
}

ada_out_status ada_out_close(ada_out *o, char *err, size_t n)
{
    if (!o->done) {
        o->done = 1;
        if (finish(o) != 0 && !o->werr) o->werr = errno ? errno : EIO;
    }
    if (o->werr)
        return fail(o->t, ADA_OUT_EIO, o->werr, err, n, "%s %s: cannot write: %s", o->label, o->target,
                    strerror(o->werr));
    return ADA_OUT_OK;
}

ada_out_status ada_outset_commit(ada_outset *t, char *err, size_t n)
{
    for (size_t i = 0; i < t->nout; i++) {
        ada_out *o = t->out[i];
        if (o->done) {
            if (ada_out_close(o, err, n) != ADA_OUT_OK) return t->st;
        } else if (finish(o) != 0) {
            int e = errno ? errno : EIO;
            return fail(t, ADA_OUT_EIO, e, err, n, "%s %s: cannot write: %s", o->label, o->target, strerror(e));
        }
    }
    return rename_all(t, err, n);
}

void ada_outset_free(ada_outset *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nout; i++) out_free(t->out[i]);
    for (int i = 0; i < t->nin; i++) free(t->in[i].real);
    free(t->out);
    free(t->names);
    free(t->swept);
    free(t);
}
