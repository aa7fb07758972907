/* catalog.c -- scanning results/ into run records, and the index file (see catalog.h).
 * What a run measured is derived in catalog_measure.c; the pruning policy is in
 * catalog_prune.c.
 */
#include "catalog.h"
#include "catalog_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const cat_kinds[] = {"verify", "bench", "regression-check", "explore", "planner", "e2e", NULL};

const char *cat_strerror(cat_status s)
{
    switch (s) {
    case CAT_OK: return "ok";
    case CAT_BAD_TREE: return "the results tree breaks the layout";
    case CAT_BAD_INDEX: return "malformed index";
    case CAT_MISMATCH: return "index and tree disagree";
    case CAT_IO: return "input/output error";
    case CAT_NOMEM: return "out of memory";
    case CAT_BAD_ARG: return "bad argument";
    }
    return "unknown status";
}

int cat_is_kind(const char *name)
{
    for (int i = 0; cat_kinds[i]; i++)
        if (!strcmp(name, cat_kinds[i])) return 1;
    return 0;
}

cat_status cat__fail(cat_status s, char *err, size_t n, const char *fmt, ...)
{
    if (err && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, n, fmt, ap);
        va_end(ap);
    }
    return s;
}

char *cat__strdup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* Not inlined: the callers check the result, and gcc's truncation warning would not know. */
__attribute__((noinline)) int cat__join(char *out, size_t n, const char *a, const char *b)
{
    int w = snprintf(out, n, "%s/%s", a, b);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

__attribute__((noinline)) int cat__join3(char *out, size_t n, const char *a, const char *b,
                                         const char *c)
{
    int w = snprintf(out, n, "%s/%s/%s", a, b, c);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

int cat__is_dir(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Sorted entry names of dir without "." and ".."; *n their count. NULL with *n = -1 when
 * the folder cannot be read. */
char **cat__list(const char *dir, int64_t *n)
{
    struct dirent **e = NULL;
    int k = scandir(dir, &e, NULL, alphasort);
    if (k < 0) {
        *n = -1;
        return NULL;
    }
    char **out = calloc((size_t)k + 1, sizeof *out);
    int64_t m = 0;
    for (int i = 0; i < k; i++) {
        if (out && strcmp(e[i]->d_name, ".") && strcmp(e[i]->d_name, ".."))
            out[m++] = cat__strdup(e[i]->d_name);
        free(e[i]);
    }
    free(e);
    *n = out ? m : -1;
    return out;
}

void cat__list_free(char **l, int64_t n)
{
    for (int64_t i = 0; i < n; i++) free(l[i]);
    free(l);
}

void cat_run_free(cat_run *r)
{
    if (!r) return;
    free(r->path);
    free(r->testbed);
    free(r->kind);
    free(r->run);
    free(r->git_sha);
    free(r->kernel_hash);
    free(r->kernel_hash_v2);
    free(r->command);
    free(r->measured);
    free(r->verify_grid);
    free(r->verify_backend);
    memset(r, 0, sizeof *r);
}

void cat_free(cat_catalog *c)
{
    if (!c) return;
    for (int64_t i = 0; i < c->n; i++) cat_run_free(&c->run[i]);
    free(c->run);
    memset(c, 0, sizeof *c);
}

/* "2026-11-29T234744Z..." -> "2026-11-29T23:47:44Z"; -1 when the name does not start so. */
static int name_time(const char *name, char out[24])
{
    static const char pat[] = "dddd-dd-ddTddddddZ";
    for (int i = 0; pat[i]; i++) {
        char c = name[i];
        if (pat[i] == 'd' ? (c < '0' || c > '9') : c != pat[i]) return -1;
    }
    snprintf(out, 24, "%.10sT%.2s:%.2s:%.2sZ", name, name + 11, name + 13, name + 15);
    return 0;
}

/* The meta.json of a run: in the folder, else in its first sub-folder that has one. */
static json_t *load_meta(const char *dir, char *where, size_t n)
{
    char p[PATH_MAX];
    cat__join(p, sizeof p, dir, "meta.json");
    struct stat st;
    if (stat(p, &st) == 0) {
        snprintf(where, n, "%s", p);
        return json_load_file(p, 0, NULL);
    }
    int64_t k;
    char **l = cat__list(dir, &k);
    json_t *m = NULL;
    for (int64_t i = 0; i < k && !m; i++) {
        cat__join3(p, sizeof p, dir, l[i], "meta.json");
        if (stat(p, &st) == 0) {
            snprintf(where, n, "%s", p);
            m = json_load_file(p, 0, NULL);
            if (!m) break;
        }
    }
    cat__list_free(l, k);
    if (!m && !where[0]) cat__join(where, n, dir, "meta.json");
    return m;
}

static const char *jstr(json_t *o, const char *k, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : dflt;
}

cat_status cat_scan_run(const char *root, const char *path, cat_run *r, char *err, size_t en)
{
    memset(r, 0, sizeof *r);
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    char *tb = buf, *kind = strchr(tb, '/');
    char *run = kind ? strchr(kind + 1, '/') : NULL;
    if (!kind || !run || strchr(run + 1, '/'))
        return cat__fail(CAT_BAD_ARG, err, en, "%s: not <testbed>/<kind>/<run>", path);
    *kind++ = '\0';
    *run++ = '\0';
    if (!cat_is_kind(kind))
        return cat__fail(CAT_BAD_TREE, err, en, "%s/%s: unknown kind '%s'", root, path, kind);
    if (name_time(run, r->time) != 0)
        return cat__fail(CAT_BAD_TREE, err, en,
                         "%s/%s: a run folder's name starts with its UTC time (yyyy-mm-ddTHHMMSSZ)",
                         root, path);
    char dir[PATH_MAX];
    cat__join(dir, sizeof dir, root, path);
    char where[PATH_MAX] = "";
    json_t *m = load_meta(dir, where, sizeof where);
    if (!json_is_object(m)) {
        json_decref(m);
        return cat__fail(CAT_BAD_TREE, err, en, "%s: missing or not a JSON object", where);
    }
    r->path = cat__strdup(path);
    r->testbed = cat__strdup(tb);
    r->kind = cat__strdup(kind);
    r->run = cat__strdup(run);
    r->git_sha = cat__strdup(jstr(m, "git_sha", "unknown"));
    json_t *d = json_object_get(m, "git_dirty");
    r->git_dirty = json_is_boolean(d) ? json_is_true(d) : -1;
    r->kernel_hash = cat__strdup(jstr(m, "kernel_source_hash", ""));
    const char *v2 = json_string_value(json_object_get(m, "kernel_source_hash_v2"));
    r->kernel_hash_v2 = v2 ? cat__strdup(v2) : NULL;
    r->command = cat__strdup(jstr(m, "command_line", ""));
    json_decref(m);
    if (!r->path || !r->testbed || !r->kind || !r->run || !r->git_sha || !r->kernel_hash ||
        !r->command || (v2 && !r->kernel_hash_v2)) {
        cat_run_free(r);
        return cat__fail(CAT_NOMEM, err, en, "out of memory");
    }
    cat_status s = cat__measure(dir, r, err, en);
    if (s != CAT_OK) cat_run_free(r);
    return s;
}

static int cmp_run(const void *a, const void *b)
{
    const cat_run *x = a, *y = b;
    int c = strcmp(x->time, y->time);
    return c ? c : strcmp(x->path, y->path);
}

/* Notes allowed beside runs: plain files at the root, testbed and kind levels. */
static int is_note(const char *dir, const char *name)
{
    char p[PATH_MAX];
    cat__join(p, sizeof p, dir, name);
    struct stat st;
    return lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static cat_status push(cat_catalog *c, cat_run *r)
{
    if (c->n == c->cap) {
        int64_t cap = c->cap ? 2 * c->cap : 32;
        cat_run *p = realloc(c->run, (size_t)cap * sizeof *p);
        if (!p) return CAT_NOMEM;
        c->run = p;
        c->cap = cap;
    }
    c->run[c->n++] = *r;
    return CAT_OK;
}

static cat_status scan_kind(const char *root, const char *tb, const char *kind, cat_catalog *c,
                            char *err, size_t en)
{
    char dir[PATH_MAX];
    cat__join3(dir, sizeof dir, root, tb, kind);
    int64_t n;
    char **runs = cat__list(dir, &n);
    if (!runs) return cat__fail(CAT_IO, err, en, "%s: %s", dir, strerror(errno));
    cat_status s = CAT_OK;
    for (int64_t i = 0; i < n && s == CAT_OK; i++) {
        if (runs[i][0] == '.' || is_note(dir, runs[i])) continue;
        char path[PATH_MAX];
        cat__join3(path, sizeof path, tb, kind, runs[i]);
        char rundir[PATH_MAX];
        cat__join(rundir, sizeof rundir, dir, runs[i]);
        if (!cat__is_dir(rundir)) {
            s = cat__fail(CAT_BAD_TREE, err, en, "%s: neither a run folder nor a file", rundir);
            break;
        }
        cat_run r;
        s = cat_scan_run(root, path, &r, err, en);
        if (s == CAT_OK && (s = push(c, &r)) != CAT_OK) {
            cat_run_free(&r);
            cat__fail(s, err, en, "out of memory");
        }
    }
    cat__list_free(runs, n);
    return s;
}

cat_status cat_scan(const char *root, cat_catalog *c, char *err, size_t en)
{
    memset(c, 0, sizeof *c);
    if (!cat__is_dir(root)) return CAT_OK;
    int64_t ntb;
    char **tbs = cat__list(root, &ntb);
    if (!tbs) return cat__fail(CAT_IO, err, en, "%s: %s", root, strerror(errno));
    cat_status s = CAT_OK;
    for (int64_t a = 0; a < ntb && s == CAT_OK; a++) {
        if (tbs[a][0] == '.' || is_note(root, tbs[a])) continue;
        char tbdir[PATH_MAX];
        cat__join(tbdir, sizeof tbdir, root, tbs[a]);
        if (!cat__is_dir(tbdir)) {
            s = cat__fail(CAT_BAD_TREE, err, en, "%s: neither a testbed folder nor a file", tbdir);
            break;
        }
        int64_t nk;
        char **kinds = cat__list(tbdir, &nk);
        if (!kinds) {
            s = cat__fail(CAT_IO, err, en, "%s: %s", tbdir, strerror(errno));
            break;
        }
        for (int64_t b = 0; b < nk && s == CAT_OK; b++) {
            if (kinds[b][0] == '.' || is_note(tbdir, kinds[b])) continue;
            if (!cat_is_kind(kinds[b]))
                s = cat__fail(CAT_BAD_TREE, err, en,
                              "%s/%s: not a kind of run (verify, bench, regression-check, explore, "
                              "planner, e2e): results/<testbed>/<kind>/<run>/",
                              tbdir, kinds[b]);
            else
                s = scan_kind(root, tbs[a], kinds[b], c, err, en);
        }
        cat__list_free(kinds, nk);
    }
    cat__list_free(tbs, ntb);
    if (s != CAT_OK) {
        cat_free(c);
        return s;
    }
    if (c->n > 1) qsort(c->run, (size_t)c->n, sizeof *c->run, cmp_run);
    return CAT_OK;
}

json_t *cat_run_json(const cat_run *r)
{
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "path", json_string(r->path));
    json_object_set_new(o, "testbed", json_string(r->testbed));
    json_object_set_new(o, "kind", json_string(r->kind));
    json_object_set_new(o, "run", json_string(r->run));
    json_object_set_new(o, "time", json_string(r->time));
    json_object_set_new(o, "git_sha", json_string(r->git_sha));
    json_object_set_new(o, "git_dirty", r->git_dirty < 0 ? json_null() : json_boolean(r->git_dirty));
    json_object_set_new(o, "kernel_hash", json_string(r->kernel_hash));
    json_object_set_new(o, "kernel_hash_v2",
                        r->kernel_hash_v2 ? json_string(r->kernel_hash_v2) : json_null());
    json_object_set_new(o, "command", json_string(r->command));
    json_object_set_new(o, "measured", json_string(r->measured));
    return o;
}

char *cat_run_line(const cat_run *r)
{
    json_t *o = cat_run_json(r);
    if (!o) return NULL;
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

/* Writes len bytes to root/index.jsonl through a temporary in root + fsync + rename. */
static cat_status write_index_text(const char *root, const char *text, size_t len, char *err,
                                   size_t en)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    cat__join(path, sizeof path, root, "index.jsonl");
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return cat__fail(CAT_IO, err, en, "%s: exists and is not a regular file; not replaced", path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return cat__fail(CAT_IO, err, en, "%s: %s", tmp, strerror(errno));
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    int ok = off == len && fsync(fd) == 0;
    int e = errno;
    if (close(fd) != 0) ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        if (ok) e = errno;
        unlink(tmp);
        return cat__fail(CAT_IO, err, en, "%s: %s", path, strerror(e));
    }
    return CAT_OK;
}

/* The index text of runs (one line each, sorted as given). */
static char *index_text(const cat_catalog *c, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *t = malloc(cap);
    if (!t) return NULL;
    t[0] = '\0';
    for (int64_t i = 0; i < c->n; i++) {
        char *l = cat_run_line(&c->run[i]);
        if (!l) {
            free(t);
            return NULL;
        }
        size_t k = strlen(l);
        if (n + k + 2 > cap) {
            while (n + k + 2 > cap) cap *= 2;
            char *p = realloc(t, cap);
            if (!p) {
                free(l);
                free(t);
                return NULL;
            }
            t = p;
        }
        memcpy(t + n, l, k);
        n += k;
        t[n++] = '\n';
        t[n] = '\0';
        free(l);
    }
    *len = n;
    return t;
}

cat_status cat_write_index(const char *root, const cat_catalog *c, char *err, size_t en)
{
    size_t len = 0;
    char *t = index_text(c, &len);
    if (!t) return cat__fail(CAT_NOMEM, err, en, "out of memory");
    cat_status s = write_index_text(root, t, len, err, en);
    free(t);
    return s;
}

cat_status cat_read_index(const char *root, json_t **lines, char *err, size_t en)
{
    *lines = json_array();
    if (!*lines) return cat__fail(CAT_NOMEM, err, en, "out of memory");
    char path[PATH_MAX];
    cat__join(path, sizeof path, root, "index.jsonl");
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return CAT_OK;
        json_decref(*lines);
        *lines = NULL;
        return cat__fail(CAT_IO, err, en, "%s: %s", path, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t k;
    int64_t no = 0;
    cat_status s = CAT_OK;
    while ((k = getline(&line, &cap, f)) >= 0) {
        no++;
        if (k > 0 && line[k - 1] == '\n') line[--k] = '\0';
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        if (!json_is_object(o) || !json_is_string(json_object_get(o, "path"))) {
            json_decref(o);
            s = cat__fail(CAT_BAD_INDEX, err, en, "%s:%lld: not a JSON object with a \"path\"",
                          path, (long long)no);
            break;
        }
        json_array_append_new(*lines, o);
    }
    free(line);
    fclose(f);
    if (s != CAT_OK) {
        json_decref(*lines);
        *lines = NULL;
    }
    return s;
}

cat_status cat_relpath(const char *root, const char *dir, char *out, size_t n)
{
    char r[PATH_MAX], d[PATH_MAX];
    if (!realpath(root, r) || !realpath(dir, d)) return CAT_BAD_ARG;
    size_t k = strlen(r);
    if (strncmp(r, d, k) != 0 || d[k] != '/') return CAT_BAD_ARG;
    const char *rel = d + k + 1;
    int slashes = 0;
    for (const char *p = rel; *p; p++) slashes += *p == '/';
    if (slashes != 2 || (size_t)snprintf(out, n, "%s", rel) >= n) return CAT_BAD_ARG;
    return CAT_OK;
}

cat_status cat_append(const char *root, const char *path, char *err, size_t en)
{
    cat_run r;
    cat_status s = cat_scan_run(root, path, &r, err, en);
    if (s != CAT_OK) return s;
    char lock[PATH_MAX];
    cat__join(lock, sizeof lock, root, ".index.lock");
    int lfd = open(lock, O_RDWR | O_CREAT, 0644);
    if (lfd < 0 || flock(lfd, LOCK_EX) != 0) {
        if (lfd >= 0) close(lfd);
        cat_run_free(&r);
        return cat__fail(CAT_IO, err, en, "%s: %s", lock, strerror(errno));
    }
    json_t *lines = NULL;
    s = cat_read_index(root, &lines, err, en);
    char *text = NULL, *mine = NULL;
    size_t len = 0;
    if (s == CAT_OK) {
        size_t i;
        json_t *o;
        json_array_foreach(lines, i, o) {
            if (!strcmp(json_string_value(json_object_get(o, "path")), path))
                s = cat__fail(CAT_BAD_ARG, err, en, "%s is already in %s/index.jsonl", path, root);
        }
    }
    if (s == CAT_OK && (!(mine = cat_run_line(&r)))) s = cat__fail(CAT_NOMEM, err, en, "out of memory");
    if (s == CAT_OK) {
        size_t cap = strlen(mine) + 2;
        size_t i;
        json_t *o;
        char **ls = calloc(json_array_size(lines) + 1, sizeof *ls);
        if (!ls) s = CAT_NOMEM;
        json_array_foreach(lines, i, o) {
            if (!ls) break;
            ls[i] = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
            if (!ls[i]) s = CAT_NOMEM;
            else cap += strlen(ls[i]) + 1;
        }
        if (s == CAT_OK && (text = malloc(cap + 1))) {
            for (i = 0; i < json_array_size(lines); i++) {
                size_t k = strlen(ls[i]);
                memcpy(text + len, ls[i], k);
                len += k;
                text[len++] = '\n';
            }
            size_t k = strlen(mine);
            memcpy(text + len, mine, k);
            len += k;
            text[len++] = '\n';
        } else if (s == CAT_OK) {
            s = CAT_NOMEM;
        }
        if (ls)
            for (i = 0; i < json_array_size(lines); i++) free(ls[i]);
        free(ls);
        if (s == CAT_NOMEM) cat__fail(s, err, en, "out of memory");
    }
    if (s == CAT_OK) s = write_index_text(root, text, len, err, en);
    free(text);
    free(mine);
    json_decref(lines);
    cat_run_free(&r);
    close(lfd); /* releases the lock */
    return s;
}

static int append_line(char **rep, size_t *len, size_t *cap, const char *fmt, const char *a,
                       const char *b)
{
    char line[PATH_MAX + 256];
    int k = snprintf(line, sizeof line, fmt, a, b);
    if (k < 0) return -1;
    if (*len + (size_t)k + 2 > *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        while (*len + (size_t)k + 2 > c) c *= 2;
        char *p = realloc(*rep, c);
        if (!p) return -1;
        *rep = p;
        *cap = c;
    }
    memcpy(*rep + *len, line, (size_t)k);
    *len += (size_t)k;
    (*rep)[(*len)++] = '\n';
    (*rep)[*len] = '\0';
    return 0;
}

cat_status cat_check(const char *root, char **report, char *err, size_t en)
{
    *report = NULL;
    cat_catalog c;
    cat_status s = cat_scan(root, &c, err, en);
    if (s != CAT_OK) return s;
    json_t *lines = NULL;
    s = cat_read_index(root, &lines, err, en);
    if (s != CAT_OK) {
        cat_free(&c);
        return s;
    }
    size_t len = 0, cap = 0;
    int bad = 0, oom = 0;
    size_t nl = json_array_size(lines);
    char *seen = calloc(nl + 1, 1);
    if (!seen) oom = 1;
    for (int64_t i = 0; i < c.n && !oom; i++) {
        json_t *want = cat_run_json(&c.run[i]);
        int found = 0;
        for (size_t j = 0; j < nl && want; j++) {
            json_t *o = json_array_get(lines, j);
            if (strcmp(json_string_value(json_object_get(o, "path")), c.run[i].path)) continue;
            if (found++) {
                oom |= append_line(report, &len, &cap, "%s listed twice%s", c.run[i].path, "");
                bad = 1;
            }
            seen[j] = 1;
            const char *k;
            json_t *v;
            json_object_foreach(want, k, v) {
                if (!json_equal(v, json_object_get(o, k))) {
                    oom |= append_line(report, &len, &cap, "stale line for %s: field %s",
                                       c.run[i].path, k);
                    bad = 1;
                }
            }
            if (json_object_size(o) != json_object_size(want)) {
                oom |= append_line(report, &len, &cap, "stale line for %s: %s", c.run[i].path,
                                   "fields beyond the index format");
                bad = 1;
            }
        }
        if (!want) oom = 1;
        if (!found && want) {
            oom |= append_line(report, &len, &cap, "not in the index: %s%s", c.run[i].path, "");
            bad = 1;
        }
        json_decref(want);
    }
    for (size_t j = 0; j < nl && !oom; j++)
        if (!seen[j]) {
            oom |= append_line(report, &len, &cap, "in the index but not in the tree: %s%s",
                               json_string_value(json_object_get(json_array_get(lines, j), "path")), "");
            bad = 1;
        }
    free(seen);
    json_decref(lines);
    cat_free(&c);
    if (oom) {
        free(*report);
        *report = NULL;
        return cat__fail(CAT_NOMEM, err, en, "out of memory");
    }
    return bad ? CAT_MISMATCH : CAT_OK;
}

int cat_match(const cat_run *r, const cat_filter *f)
{
    if (!f) return 1;
    if (f->kind && *f->kind && strcmp(f->kind, r->kind)) return 0;
    if (f->testbed && *f->testbed && strcmp(f->testbed, r->testbed)) return 0;
    if (f->since && *f->since && strncmp(r->time, f->since, strlen(f->since)) < 0) return 0;
    if (f->until && *f->until && strncmp(r->time, f->until, strlen(f->until)) > 0) return 0;
    if (f->sha && *f->sha && strncmp(r->git_sha, f->sha, strlen(f->sha))) return 0;
    if (f->hash && *f->hash && strncmp(r->kernel_hash, f->hash, strlen(f->hash)) &&
        (!r->kernel_hash_v2 || strncmp(r->kernel_hash_v2, f->hash, strlen(f->hash))))
        return 0;
    return 1;
}
