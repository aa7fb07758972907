/* normalize.c -- the normalized text that hash scheme 2 hashes (the rules are in srchash.h).
 * Written as one pass over the spliced source with an output buffer; the decisions about a
 * removed whitespace run are taken when the next real character arrives (need_space).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "srchash.h"

typedef struct {
    char *b;
    size_t n, cap;
    int oom;
} buf;

static void put(buf *o, char c)
{
    if (o->oom) return;
    if (o->n + 1 >= o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 4096;
        char *p = realloc(o->b, cap);
        if (!p) {
            o->oom = 1;
            return;
        }
        o->b = p;
        o->cap = cap;
    }
    o->b[o->n++] = c;
}

static int is_word(int c) { return isalnum(c) || c == '_' || c == '$'; }

/* Two punctuator characters that begin a longer token (or a comment) when written together. */
static int joins(char a, char b)
{
    static const char *const pairs[] = {"++", "--", "->", "+=", "-=", "*=", "/=", "%=", "&=",
                                         "|=", "^=", "<=", ">=", "==", "!=", "<<", ">>", "&&",
                                         "||", "##", "::", "..", "//", "/*", "<:", ":>", "<%",
                                         "%>", "%:", ".*", NULL};
    for (int i = 0; pairs[i]; i++)
        if (pairs[i][0] == a && pairs[i][1] == b) return 1;
    return 0;
}

/* Whether the directive written since out[dir_start] is "#define NAME" and nothing more. */
static int after_define_name(const buf *o, size_t dir_start)
{
    static const char d[] = "#define ";
    size_t k = sizeof d - 1;
    if (o->n < dir_start + k + 1 || memcmp(o->b + dir_start, d, k) != 0) return 0;
    for (size_t i = dir_start + k; i < o->n; i++)
        if (!is_word((unsigned char)o->b[i])) return 0;
    return 1;
}

static int need_space(char last, char next)
{
    if (!last || last == '\n') return 0;
    if (is_word((unsigned char)last) && (is_word((unsigned char)next) || next == '"' || next == '\''))
        return 1;
    if (last == '.' && isdigit((unsigned char)next)) return 1;
    return joins(last, next);
}

/* Phase 2 of translation: backslash-newline pairs removed. */
static char *splice(const char *in, size_t n, size_t *out_n)
{
    char *s = malloc(n + 1);
    if (!s) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == '\\' && i + 1 < n && in[i + 1] == '\n') {
            i++;
            continue;
        }
        if (in[i] == '\\' && i + 2 < n && in[i + 1] == '\r' && in[i + 2] == '\n') {
            i += 2;
            continue;
        }
        s[k++] = in[i];
    }
    s[k] = '\0';
    *out_n = k;
    return s;
}

/* Copies a literal starting at s[i] (a quote) to o; returns the index after it. */
static size_t copy_literal(const char *s, size_t n, size_t i, buf *o)
{
    char q = s[i];
    put(o, s[i++]);
    while (i < n && s[i] != '\n') {
        put(o, s[i]);
        if (s[i] == '\\' && i + 1 < n) {
            put(o, s[++i]);
        } else if (s[i] == q) {
            return i + 1;
        }
        i++;
    }
    return i;
}

/* A C++ raw string R"delim( ... )delim" starting at s[i] (the quote); -1 when it is not one. */
static long raw_end(const char *s, size_t n, size_t i)
{
    size_t j = i + 1, dl = 0;
    while (j < n && dl <= 16 && s[j] != '(' && s[j] != ')' && s[j] != '\\' && !isspace((unsigned char)s[j]))
        j++, dl++;
    if (j >= n || s[j] != '(' || dl > 16) return -1;
    const char *delim = s + i + 1;
    for (size_t k = j + 1; k + 1 + dl < n; k++)
        if (s[k] == ')' && !memcmp(s + k + 1, delim, dl) && s[k + 1 + dl] == '"') return (long)(k + dl + 2);
    return (long)n;
}

static int raw_prefix(const buf *o)
{
    if (o->n == 0 || o->b[o->n - 1] != 'R') return 0;
    size_t k = o->n - 1; /* index of 'R' */
    size_t p = k;
    while (p > 0 && is_word((unsigned char)o->b[p - 1])) p--;
    size_t len = k - p; /* prefix before R */
    const char *w = o->b + p;
    return len == 0 || (len == 1 && (*w == 'u' || *w == 'U' || *w == 'L')) ||
           (len == 2 && w[0] == 'u' && w[1] == '8');
}

sh_status sh_normalize_c(const char *in, size_t n_in, char **out, size_t *out_n)
{
    size_t n;
    char *s = splice(in, n_in, &n);
    if (!s) return SH_NOMEM;
    buf o = {0};
    int pending = 0, line_start = 1, directive = 0, number = 0;
    size_t dir_start = 0;
    char last = 0;
    size_t i = 0;
    while (i < n) {
        char c = s[i];
        if (c == '\n') {
            if (directive) {
                put(&o, '\n');
                last = '\n';
                directive = 0;
                pending = 0;
            } else {
                pending = 1;
            }
            line_start = 1;
            i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            pending = 1;
            i++;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n') i++;
            pending = 1;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            const char *e = strstr(s + i + 2, "*/");
            i = e ? (size_t)(e - s) + 2 : n;
            pending = 1;
            continue;
        }
        if (line_start && c == '#') {
            /* A directive starts its own line (a code line before it ended without one). */
            if (o.n && last != '\n') put(&o, '\n');
            last = '\n';
            pending = 0;
            directive = 1;
            dir_start = o.n;
        }
        if (pending) {
            if (need_space(last, c) || (directive && c == '(' && after_define_name(&o, dir_start)))
                put(&o, ' ');
            pending = 0;
            number = 0;
        }
        line_start = 0;
        if (c == '\'' && number && i + 1 < n && isalnum((unsigned char)s[i + 1])) {
            put(&o, c); /* a digit separator, 1'000 */
            last = c;
            i++;
            continue;
        }
        if (c == '"' && raw_prefix(&o)) {
            long e = raw_end(s, n, i);
            if (e > 0) {
                for (size_t k = i; k < (size_t)e; k++) put(&o, s[k]);
                i = (size_t)e;
                last = '"';
                number = 0;
                continue;
            }
        }
        if (c == '"' || c == '\'') {
            i = copy_literal(s, n, i, &o);
            last = c;
            number = 0;
            continue;
        }
        if (is_word((unsigned char)c)) {
            if (!is_word((unsigned char)last) && last != '\'') number = isdigit((unsigned char)c) || last == '.';
        } else if (c != '.' || !number) {
            number = 0;
        }
        put(&o, c);
        last = c;
        i++;
    }
    free(s);
    put(&o, '\0');
    if (o.oom) {
        free(o.b);
        return SH_NOMEM;
    }
    *out = o.b;
    *out_n = o.n - 1;
    return SH_OK;
}

/* Skips a CMake comment at s[i] ('#'): a bracket comment #[[...]] / #[==[...]==], or to the
 * end of the line. Returns the index after it (the newline is not consumed). */
static size_t cmake_comment(const char *s, size_t n, size_t i)
{
    size_t j = i + 1, eq = 0;
    if (j < n && s[j] == '[') {
        j++;
        while (j < n && s[j] == '=') j++, eq++;
        if (j < n && s[j] == '[') {
            for (size_t k = j + 1; k < n; k++) {
                if (s[k] != ']') continue;
                size_t m = k + 1, e2 = 0;
                while (m < n && s[m] == '=') m++, e2++;
                if (e2 == eq && m < n && s[m] == ']') return m + 1;
            }
            return n;
        }
    }
    while (i < n && s[i] != '\n') i++;
    return i;
}

sh_status sh_normalize_cmake(const char *s, size_t n, char **out, size_t *out_n)
{
    buf o = {0};
    int quoted = 0, pending = 0, has = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (quoted) {
            put(&o, c);
            if (c == '\\' && i + 1 < n) put(&o, s[++i]);
            else if (c == '"') quoted = 0;
            continue;
        }
        if (c == '#') {
            i = cmake_comment(s, n, i) - 1;
            pending = has;
            continue;
        }
        if (c == '\n') {
            if (has) put(&o, '\n');
            has = pending = 0;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            pending = has;
            continue;
        }
        if (pending) put(&o, ' ');
        pending = 0;
        has = 1;
        put(&o, c);
        if (c == '"') quoted = 1;
    }
    if (has) put(&o, '\n');
    put(&o, '\0');
    if (o.oom) {
        free(o.b);
        return SH_NOMEM;
    }
    *out = o.b;
    *out_n = o.n - 1;
    return SH_OK;
}
