/* ada_output.c -- outputs that never destroy anything (ada_output.h). */
#define _GNU_SOURCE /* fopencookie: a FILE that counts its bytes for the progress lines */
#include "ada_output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "ada_util.h"

#define TMP_SUFFIX ".adaload"
#define PROGRESS_BYTES ((long long)64 << 20)

enum { KIND_REPLACE, KIND_THROUGH, KIND_STDOUT };
enum { MAX_INPUTS = 16, MAX_DIRS = 4, PATH_CAP = 4096 };

/* ---- the signal handler's state (the only process-wide state; see the header) -------- */

static char g_temps[ADA_OUT_MAX_OPEN][PATH_CAP];
static volatile sig_atomic_t g_temp_used[ADA_OUT_MAX_OPEN];
static char g_dirs[MAX_DIRS][PATH_CAP], g_dir_meta[MAX_DIRS][PATH_CAP];
static volatile sig_atomic_t g_dir_used[MAX_DIRS];
static volatile sig_atomic_t g_installed;

static void on_signal(int sig)
{
    for (int i = 0; i < ADA_OUT_MAX_OPEN; i++)
        if (g_temp_used[i]) unlink(g_temps[i]);
    for (int i = 0; i < MAX_DIRS; i++)
        if (g_dir_used[i]) {
            unlink(g_dir_meta[i]);
            rmdir(g_dirs[i]);
        }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    if (g_installed) return;
    g_installed = 1;
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue; /* keep SIG_IGN */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* A slot for path in the handler's list, or -1 when all are taken. */
static int track(const char *path)
{
    install_handlers();
    if (strlen(path) >= PATH_CAP) return -1;
    for (int i = 0; i < ADA_OUT_MAX_OPEN; i++)
        if (!g_temp_used[i]) {
            memcpy(g_temps[i], path, strlen(path) + 1);
            g_temp_used[i] = 1;
            return i;
        }
    return -1;
}

static void untrack(int slot)
{
    if (slot >= 0) g_temp_used[slot] = 0;
}

void ada_output_own_dir(const char *dir)
{
    install_handlers();
    if (strlen(dir) + 16 >= PATH_CAP) return;
    for (int i = 0; i < MAX_DIRS; i++)
        if (!g_dir_used[i]) {
            snprintf(g_dirs[i], PATH_CAP, "%s", dir);
            snprintf(g_dir_meta[i], PATH_CAP, "%s/meta.json", dir);
            g_dir_used[i] = 1;
            return;
        }
}

void ada_output_disown_dir(const char *dir)
{
    for (int i = 0; i < MAX_DIRS; i++)
        if (g_dir_used[i] && !strcmp(g_dirs[i], dir)) g_dir_used[i] = 0;
}

/* ---- the transaction ------------------------------------------------------------------ */

struct ada_out {
    ada_outset *t;
    char *target;  /* resolved path (or "-") */
    char *label;
    char *tmp;     /* KIND_REPLACE: the temporary */
    char *backup;  /* during the renames: a hard link to the old target */
    int kind, slot, bslot, had_old, fd;
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
    ada_out *out[ADA_OUT_MAX_OPEN];
    int nout;
    ada_out_status st;
    int err_no;
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
    t->err_no = e;
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

static int cookie_close(void *c)
{
    ada_out *o = c;
    int rc = o->fd >= 0 ? close(o->fd) : 0;
    o->fd = -1;
    return rc;
}

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

static void out_free(ada_out *o)
{
    if (!o) return;
    if (o->f && o->kind != KIND_STDOUT) fclose(o->f);
    else if (o->fd >= 0) close(o->fd);
    if (o->tmp) unlink(o->tmp);
    untrack(o->slot);
    untrack(o->bslot);
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
    for (int i = 0; i < t->nout; i++)
        if (t->out[i]->kind != KIND_STDOUT && !strcmp(t->out[i]->target, o->target))
            return fail(t, ADA_OUT_EUSAGE, EEXIST, err, n, "%s %s: the same file as %s (refused)", o->label, path,
                        t->out[i]->label);
    o->kind = (!exists || S_ISREG(st.st_mode)) ? KIND_REPLACE : KIND_THROUGH;
    o->had_old = exists && S_ISREG(st.st_mode);
    o->mode = st.st_mode & 07777;
    return ADA_OUT_OK;
}

static ada_out_status open_target(ada_outset *t, ada_out *o, const char *path, char *err, size_t n)
{
    if (o->kind == KIND_THROUGH) {
        o->fd = open(o->target, O_WRONLY | O_NOCTTY);
        if (o->fd < 0)
            return fail(t, ADA_OUT_EIO, errno, err, n, "%s %s: cannot write: %s", o->label, path, strerror(errno));
    } else {
        sweep(o->target);
        size_t len = strlen(o->target) + 48;
        o->tmp = malloc(len);
        if (!o->tmp) return fail(t, ADA_OUT_ENOMEM, ENOMEM, err, n, "out of memory");
        snprintf(o->tmp, len, "%s.tmp.%ld%s", o->target, (long)getpid(), TMP_SUFFIX);
        o->slot = track(o->tmp);
        if (o->slot < 0) return fail(t, ADA_OUT_ENOMEM, EMFILE, err, n, "%s: too many open outputs", o->label);
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY, 0666);
        if (o->fd < 0) {
            int e = errno;
            free(o->tmp);
            o->tmp = NULL;
            return fail(t, ADA_OUT_EIO, e, err, n, "%s %s: cannot write: %s", o->label, path, strerror(e));
        }
        if (o->had_old) (void)fchmod(o->fd, o->mode);
    }
    o->f = counted_file(o);
    if (!o->f) return fail(t, ADA_OUT_ENOMEM, ENOMEM, err, n, "out of memory");
    return ADA_OUT_OK;
}

ada_out *ada_outset_add(ada_outset *t, const char *path, const char *label, char *err, size_t n)
{
    if (t->nout >= ADA_OUT_MAX_OPEN) {
        fail(t, ADA_OUT_ENOMEM, EMFILE, err, n, "too many outputs");
        return NULL;
    }
    ada_out *o = calloc(1, sizeof *o);
    if (!o || !(o->label = strdup(label ? label : path))) {
        free(o);
        fail(t, ADA_OUT_ENOMEM, ENOMEM, err, n, "out of memory");
        return NULL;
    }
    o->t = t;
    o->fd = -1;
    o->slot = o->bslot = -1;
    ada_out_status st;
    if (!strcmp(path, "-")) {
        for (int i = 0; i < t->nout; i++)
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
    t->out[t->nout++] = o;
    return o;
}

FILE *ada_out_file(ada_out *o) { return o->f; }

const char *ada_out_write_path(ada_out *o)
{
    if (o->kind == KIND_STDOUT) return "/dev/stdout";
    if (o->f) {
        fclose(o->f); /* closes the fd too; the writer opens the path itself */
        o->f = NULL;
    }
    return o->kind == KIND_REPLACE ? o->tmp : o->target;
}

void ada_out_drop(ada_out *o)
{
    ada_outset *t = o->t;
    for (int i = 0; i < t->nout; i++)
        if (t->out[i] == o) {
            memmove(&t->out[i], &t->out[i + 1], (size_t)(t->nout - i - 1) * sizeof *t->out);
            t->nout--;
            break;
        }
    out_free(o);
}

/* Flush, sync and close one output. 0, or -1 with errno. */
static int finish(ada_out *o)
{
    if (o->kind == KIND_STDOUT) return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
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

static void sync_dir_of(const char *path)
{
    char dir[PATH_CAP];
    const char *slash = strrchr(path, '/');
    if (!slash) return;
    snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* The renames, each old target kept as a hard link until all succeeded. */
static ada_out_status rename_all(ada_outset *t, char *err, size_t n)
{
    int i;
    for (i = 0; i < t->nout; i++) {
        ada_out *o = t->out[i];
        if (o->kind != KIND_REPLACE) continue;
        if (o->had_old) {
            size_t len = strlen(o->target) + 64;
            o->backup = malloc(len);
            if (o->backup) {
                snprintf(o->backup, len, "%s.old.tmp.%ld%s", o->target, (long)getpid(), TMP_SUFFIX);
                o->bslot = track(o->backup);
                if (o->bslot < 0 || link(o->target, o->backup) != 0) {
                    untrack(o->bslot);
                    o->bslot = -1;
                    free(o->backup);
                    o->backup = NULL;
                }
            }
        }
        if (rename(o->tmp, o->target) != 0) break;
        free(o->tmp);
        o->tmp = NULL;
        untrack(o->slot);
        o->slot = -1;
    }
    int e = errno;
    for (int j = 0; j < t->nout; j++) {
        ada_out *o = t->out[j];
        if (o->kind != KIND_REPLACE) continue;
        if (i < t->nout && j < i) { /* a later rename failed: put this one back */
            if (o->backup) rename(o->backup, o->target);
            else unlink(o->target);
        } else if (o->backup) {
            unlink(o->backup);
        }
        if (o->backup) {
            untrack(o->bslot);
            o->bslot = -1;
            free(o->backup);
            o->backup = NULL;
        }
        if (i == t->nout) sync_dir_of(o->target);
    }
    if (i < t->nout)
        return fail(t, ADA_OUT_EIO, e, err, n, "%s %s: cannot replace it: %s", t->out[i]->label, t->out[i]->target,
                    strerror(e));
    return ADA_OUT_OK;
}

ada_out_status ada_outset_commit(ada_outset *t, char *err, size_t n)
{
    for (int i = 0; i < t->nout; i++) {
        ada_out *o = t->out[i];
        if (finish(o) != 0) {
            int e = errno ? errno : EIO;
            return fail(t, ADA_OUT_EIO, e, err, n, "%s %s: cannot write: %s", o->label, o->target, strerror(e));
        }
    }
    return rename_all(t, err, n);
}

void ada_outset_free(ada_outset *t)
{
    if (!t) return;
    for (int i = 0; i < t->nout; i++) out_free(t->out[i]);
    for (int i = 0; i < t->nin; i++) free(t->in[i].real);
    free(t);
}

/* ---- one-file helpers ---------------------------------------------------------------------- */

int ada_write_file_atomic(const char *path, const void *data, size_t len)
{
    ada_outset *t = ada_outset_new("");
    if (!t) {
        errno = ENOMEM;
        return -1;
    }
    ada_out *o = ada_outset_add(t, path, path, NULL, 0);
    int rc = -1;
    if (o && fwrite(data, 1, len, ada_out_file(o)) == len && ada_outset_commit(t, NULL, 0) == ADA_OUT_OK) rc = 0;
    int e = rc ? (t->err_no ? t->err_no : EIO) : 0;
    ada_outset_free(t);
    errno = e;
    return rc;
}
