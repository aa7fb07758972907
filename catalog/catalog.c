/* catalog.c -- scanning results/ into run records and their index lines (see catalog.h).
 * What a run measured is derived in catalog_measure.c, the index file is catalog_index.c,
 * the pruning policy catalog_prune.c.
 */
#include "catalog.h"
#include "catalog_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_meta.h"

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
    free(r->kernel_hash_v1);
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
    ada_run_meta meta; /* the one reader of meta.json (run_meta.h): both hash names */
    int mrc = ada_run_meta_from_json(m, &meta);
    json_decref(m);
    if (mrc == ADA_RUNS_OK) {
        r->git_sha = cat__strdup(meta.git_sha);
        r->git_dirty = meta.git_dirty;
        r->kernel_hash_v1 = cat__strdup(meta.kernel_hash_v1);
        r->kernel_hash_v2 = meta.kernel_hash_v2[0] ? cat__strdup(meta.kernel_hash_v2) : NULL;
        r->command = cat__strdup(meta.command_line);
    }
    int v2 = mrc == ADA_RUNS_OK && meta.kernel_hash_v2[0];
    ada_run_meta_free(&meta);
    if (!r->path || !r->testbed || !r->kind || !r->run || !r->git_sha || !r->kernel_hash_v1 ||
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

/* bad: NULL (strict: a run whose files cannot be read fails the scan), or an array that
 * gets {path, why} of each such run, which is then left out. */
static cat_status scan_kind(const char *root, const char *tb, const char *kind, cat_catalog *c, json_t *bad,
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
        if (s == CAT_BAD_TREE && bad) {
            s = json_array_append_new(bad, json_pack("{s:s, s:s}", "path", path, "why", err)) ? CAT_NOMEM : CAT_OK;
            if (s != CAT_OK) cat__fail(s, err, en, "out of memory");
            continue;
        }
        if (s == CAT_OK && (s = push(c, &r)) != CAT_OK) {
            cat_run_free(&r);
            cat__fail(s, err, en, "out of memory");
        }
    }
    cat__list_free(runs, n);
    return s;
}

static cat_status scan(const char *root, cat_catalog *c, json_t *bad, char *err, size_t en);

cat_status cat_scan(const char *root, cat_catalog *c, char *err, size_t en) { return scan(root, c, NULL, err, en); }

cat_status cat_scan_lenient(const char *root, cat_catalog *c, json_t *bad, char *err, size_t en)
{
    return scan(root, c, bad, err, en);
}

static cat_status scan(const char *root, cat_catalog *c, json_t *bad, char *err, size_t en)
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
                s = scan_kind(root, tbs[a], kinds[b], c, bad, err, en);
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
    json_object_set_new(o, "kernel_hash_v1", json_string(r->kernel_hash_v1));
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

int cat_is_time_prefix(const char *s)
{
    static const char pat[] = "dddd-dd-ddTdd:dd:ddZ";
    size_t n = strlen(s);
    if (n < 4 || n > sizeof pat - 1) return 0;
    for (size_t i = 0; i < n; i++)
        if (pat[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != pat[i]) return 0;
    return 1;
}

int cat_match(const cat_run *r, const cat_filter *f)
{
    if (!f) return 1;
    if (f->kind && *f->kind && strcmp(f->kind, r->kind)) return 0;
    if (f->testbed && *f->testbed && strcmp(f->testbed, r->testbed)) return 0;
    if (f->since && *f->since && strncmp(r->time, f->since, strlen(f->since)) < 0) return 0;
    if (f->until && *f->until && strncmp(r->time, f->until, strlen(f->until)) > 0) return 0;
    if (f->sha && *f->sha && strncmp(r->git_sha, f->sha, strlen(f->sha))) return 0;
    if (f->hash && *f->hash && strncmp(r->kernel_hash_v1, f->hash, strlen(f->hash)) &&
        (!r->kernel_hash_v2 || strncmp(r->kernel_hash_v2, f->hash, strlen(f->hash))))
        return 0;
    return 1;
}
