/* catalog_index.c -- the index file results/index.jsonl: writing it whole, reading it,
 * appending one run's line under a lock, and checking it against the tree (catalog.h).
 */
#include "catalog_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ada_output.h"

/* Writes len bytes to root/index.jsonl as one output of common/ada_output.h (temporary in
 * root, fsync, rename; removed on a signal). A target that is not a regular file is refused. */
static cat_status write_index_text(const char *root, const char *text, size_t len, char *err,
                                   size_t en)
{
    char path[PATH_MAX];
    cat__join(path, sizeof path, root, "index.jsonl");
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return cat__fail(CAT_IO, err, en, "%s: exists and is not a regular file; not replaced", path);
    ada_outset *t = ada_outset_new("results");
    if (!t) return cat__fail(CAT_NOMEM, err, en, "out of memory");
    char why[1024] = "";
    ada_out *o = ada_outset_add(t, path, path, why, sizeof why);
    cat_status rc = CAT_OK;
    if (!o || fwrite(text, 1, len, ada_out_file(o)) != len || ada_outset_commit(t, why, sizeof why) != ADA_OUT_OK)
        rc = cat__fail(ada_outset_status(t) == ADA_OUT_ENOMEM ? CAT_NOMEM : CAT_IO, err, en, "%s",
                       why[0] ? why : "cannot write the index");
    ada_outset_free(t);
    return rc;
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

/* Appends one formatted line to the report, however long its strings (an index line may
 * name a path of any length). 0, or -1 when out of memory. */
static int append_line(char **rep, size_t *len, size_t *cap, const char *fmt, const char *a,
                       const char *b)
{
    int k = snprintf(NULL, 0, fmt, a, b);
    if (k < 0) return -1;
    if (*len + (size_t)k + 2 > *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        while (*len + (size_t)k + 2 > c) c *= 2;
        char *p = realloc(*rep, c);
        if (!p) return -1;
        *rep = p;
        *cap = c;
    }
    snprintf(*rep + *len, *cap - *len, fmt, a, b);
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
