/* plan_csv.c -- the planner's streaming CSV reader (declared in plan_internal.h), shared by
 * the manifest reader (plan_manifest.c) and the profile reader (plan_profile.c).
 *
 * One pass over the file through a growable buffer (no whole-file read). Lines end in \n or
 * \r\n; a UTF-8 byte-order mark at the start of the file is skipped; fields follow RFC 4180
 * quoting (no newline inside quotes). Every error names the file and the line.
 */
#include <errno.h>
#include <string.h>

#include "plan_internal.h"

#define CSV_INITIAL_BUF (1u << 20)
#define CSV_MAX_LINE (16u << 20)


plan_status csv_open(csv_reader *r, const char *path, plan_heap *heap, plan_error *err)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->heap = heap;
    r->f = fopen(path, "rb");
    if (!r->f) return plan_fail(err, PLAN_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    r->cap = CSV_INITIAL_BUF;
    /* One spare byte past cap so a field at the very end can be NUL-terminated if needed. */
    r->buf = plan_heap_alloc(heap, r->cap + 1);
    if (!r->buf) {
        fclose(r->f);
        r->f = NULL;
        return plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory for the read buffer", path);
    }
    return PLAN_OK;
}

void csv_close(csv_reader *r)
{
    if (r->f) fclose(r->f);
    r->f = NULL;
    if (r->buf) plan_heap_free(r->heap, r->buf, r->cap + 1);
    r->buf = NULL;
}

int csv_next_line(csv_reader *r, char **line, size_t *len, plan_error *err)
{
    for (;;) {
        size_t avail = r->end - r->beg;
        char *s = r->buf + r->beg;
        char *nl = avail ? memchr(s, '\n', avail) : NULL;
        if (nl || (r->eof && avail)) {
            size_t n = nl ? (size_t)(nl - s) : avail;
            r->beg += nl ? n + 1 : n;
            r->line++;
            if (n && s[n - 1] == '\r') n--;
            if (r->line == 1 && n >= 3 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
                (unsigned char)s[2] == 0xBF) {
                s += 3; /* a UTF-8 byte-order mark */
                n -= 3;
            }
            *line = s;
            *len = n;
            return 1;
        }
        if (r->eof) return 0;
        if (r->beg) {
            memmove(r->buf, s, avail);
            r->end = avail;
            r->beg = 0;
        }
        if (r->end == r->cap) {
            if (r->cap >= CSV_MAX_LINE) {
                plan_fail(err, PLAN_ERR_INPUT, "%s:%llu: line longer than %u MiB", r->path,
                          (unsigned long long)r->line + 1, CSV_MAX_LINE >> 20);
                return -(int)PLAN_ERR_INPUT;
            }
            char *nb = plan_heap_realloc(r->heap, r->buf, r->cap + 1, 2 * r->cap + 1);
            if (!nb) {
                plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory for a long line", r->path);
                return -(int)PLAN_ERR_NOMEM;
            }
            r->buf = nb;
            r->cap *= 2;
        }
        size_t got = fread(r->buf + r->end, 1, r->cap - r->end, r->f);
        if (got == 0) {
            if (ferror(r->f)) {
                plan_fail(err, PLAN_ERR_IO, "%s:%llu: read error", r->path,
                          (unsigned long long)r->line + 1);
                return -(int)PLAN_ERR_IO;
            }
            r->eof = 1;
        }
        r->end += got;
    }
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

int csv_blank(const char *line, size_t len)
{
    for (size_t k = 0; k < len; k++)
        if (!is_blank(line[k])) return 0;
    return 1;
}

csv_field csv_trim(csv_field f)
{
    while (f.n && is_blank(f.s[0])) {
        f.s++;
        f.n--;
    }
    while (f.n && is_blank(f.s[f.n - 1])) f.n--;
    return f;
}

int64_t csv_split(const csv_reader *r, char *line, size_t len, csv_field *f, size_t maxf,
                  plan_error *err)
{
    size_t i = 0;
    int64_t nf = 0;
    for (;;) {
        csv_field fld;
        size_t j = i;
        while (j < len && is_blank(line[j])) j++;
        if (j < len && line[j] == '"') {
            /* Quoted: unescape "" in place (the output never outruns the input). */
            char *out = line + j;
            size_t o = 0, k = j + 1;
            for (;;) {
                if (k >= len) {
                    plan_fail(err, PLAN_ERR_INPUT,
                              "%s:%llu: column %lld: unterminated quoted field (a newline inside "
                              "quotes is not supported)",
                              r->path, (unsigned long long)r->line, (long long)nf + 1);
                    return -1;
                }
                if (line[k] == '"') {
                    if (k + 1 < len && line[k + 1] == '"') {
                        out[o++] = '"';
                        k += 2;
                        continue;
                    }
                    k++;
                    break;
                }
                out[o++] = line[k++];
            }
            while (k < len && is_blank(line[k])) k++;
            if (k < len && line[k] != ',') {
                plan_fail(err, PLAN_ERR_INPUT, "%s:%llu: column %lld: text after a closing quote",
                          r->path, (unsigned long long)r->line, (long long)nf + 1);
                return -1;
            }
            fld.s = out;
            fld.n = o;
            i = k;
        } else {
            char *c = i < len ? memchr(line + i, ',', len - i) : NULL;
            size_t e = c ? (size_t)(c - line) : len;
            fld.s = line + i;
            fld.n = e - i;
            i = e;
        }
        if ((size_t)nf < maxf) f[nf] = fld;
        nf++;
        if (i >= len) break;
        i++; /* the comma */
    }
    return nf;
}

