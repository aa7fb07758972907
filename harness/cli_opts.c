/* cli_opts.c -- the option parser of every subcommand (cli_opts.h). */
#include "cli_opts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { MAX_OPTS = 128 };

int cli_parse_u64(const char *s, uint64_t hi, uint64_t *out)
{
    if (!s || !*s) return -1;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (v > hi) return -1;
    *out = v;
    return 0;
}

int cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!s) return -1;
    int neg = *s == '-';
    uint64_t m;
    if (cli_parse_u64(s + neg, (uint64_t)INT64_MAX + (uint64_t)neg, &m)) return -1;
    int64_t v = neg ? (m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m) : (int64_t)m;
    if (v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_parse_f64(const char *s, double *out)
{
    if (!s || !*s) return -1;
    /* Decimal only: a digit, '-' or '.' first; no hex floats, inf or nan spelled out. */
    if (!((*s >= '0' && *s <= '9') || *s == '-' || *s == '.')) return -1;
    if (strpbrk(s, "xXnNiI")) return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static const cli_opt *find(const cli_opt *opts, const char *name, size_t len)
{
    for (const cli_opt *o = opts; o->name; o++)
        if (strlen(o->name) == len && !strncmp(o->name, name, len)) return o;
    return NULL;
}

static int list_add(const char *cmd, const cli_opt *o, const char *v)
{
    cli_list *l = o->dst;
    size_t n = strlen(v);
    if ((size_t)l->used + n + 1 > sizeof l->store) {
        ada_usage_error(cmd, "%s: too many values", o->name);
        return CLI_ERROR;
    }
    char *copy = l->store + l->used;
    memcpy(copy, v, n + 1);
    l->used += (int)n + 1;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (l->n >= CLI_LIST_MAX) {
            ada_usage_error(cmd, "%s: more than %d values", o->name, CLI_LIST_MAX);
            return CLI_ERROR;
        }
        l->v[l->n++] = t;
    }
    return CLI_OK;
}

static int bad_value(const char *cmd, const cli_opt *o, const char *v)
{
    if (o->what) {
        ada_usage_error(cmd, "%s %s: must be %s", o->name, v, o->what);
    } else if (o->kind == CLI_KIND_I64) {
        ada_usage_error(cmd, "%s %s: must be a whole number in [%" PRId64 ", %" PRId64 "]", o->name, v,
                        o->ilo, o->ihi);
    } else if (o->kind == CLI_KIND_U64) {
        ada_usage_error(cmd, "%s %s: must be a whole number in [0, %" PRIu64 "]", o->name, v, (uint64_t)o->ihi);
    } else {
        ada_usage_error(cmd, "%s %s: must be a number in %c%g, %g]", o->name, v, o->flo_open ? '(' : '[',
                        o->flo, o->fhi);
    }
    return CLI_ERROR;
}

/* Stores value v of option o. */
static int store(const char *cmd, const cli_opt *o, const char *v)
{
    switch (o->kind) {
    case CLI_KIND_STR:
        *(const char **)o->dst = v;
        return CLI_OK;
    case CLI_KIND_LIST:
        return list_add(cmd, o, v);
    case CLI_KIND_I64:
        return cli_parse_i64(v, o->ilo, o->ihi, o->dst) ? bad_value(cmd, o, v) : CLI_OK;
    case CLI_KIND_U64:
        return cli_parse_u64(v, (uint64_t)o->ihi, o->dst) ? bad_value(cmd, o, v) : CLI_OK;
    case CLI_KIND_F64: {
        double d;
        if (cli_parse_f64(v, &d) || d > o->fhi || d < o->flo || (o->flo_open && d == o->flo))
            return bad_value(cmd, o, v);
        *(double *)o->dst = d;
        return CLI_OK;
    }
    default:
        return CLI_ERROR;
    }
}

int cli_parse(const char *cmd, const cli_opt *opts, int argc, char **argv, const char **pos,
              int max_pos, int *npos)
{
    unsigned char seen[MAX_OPTS] = {0};
    if (npos) *npos = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return CLI_HELP;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || !strcmp(a, "-")) {
            if (!npos || *npos >= max_pos) {
                ada_usage_error(cmd, "unexpected argument '%s' (adaload %s --help)", a, cmd);
                return CLI_ERROR;
            }
            pos[(*npos)++] = a;
            continue;
        }
        const char *eq = strncmp(a, "--", 2) ? NULL : strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const cli_opt *o = find(opts, a, len);
        if (!o) {
            ada_usage_error(cmd, "unknown option '%.*s' (adaload %s --help)", (int)len, a, cmd);
            return CLI_ERROR;
        }
        size_t k = (size_t)(o - opts);
        if (k < MAX_OPTS && seen[k] && o->kind != CLI_KIND_LIST) {
            ada_usage_error(cmd, "%s given twice", o->name);
            return CLI_ERROR;
        }
        if (k < MAX_OPTS) seen[k] = 1;
        if (o->given) *o->given = 1;
        if (o->kind == CLI_KIND_FLAG) {
            if (eq) {
                ada_usage_error(cmd, "%s takes no value", o->name);
                return CLI_ERROR;
            }
            *(int *)o->dst = 1;
            continue;
        }
        const char *v = NULL;
        if (eq) v = eq + 1;
        else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) v = argv[++i];
        if (!v) {
            ada_usage_error(cmd, "%s: missing value", o->name);
            return CLI_ERROR;
        }
        if (!*v) {
            ada_usage_error(cmd, "%s: empty value", o->name);
            return CLI_ERROR;
        }
        if (store(cmd, o, v) != CLI_OK) return CLI_ERROR;
    }
    return CLI_OK;
}

void cli_print_options(FILE *f, const cli_opt *opts)
{
    int w = 0;
    for (const cli_opt *o = opts; o->name; o++) {
        int n = (int)strlen(o->name) + (o->meta ? 1 + (int)strlen(o->meta) : 0);
        if (n > w) w = n;
    }
    for (const cli_opt *o = opts; o->name; o++) {
        char left[128];
        snprintf(left, sizeof left, "%s%s%s", o->name, o->meta ? " " : "", o->meta ? o->meta : "");
        fprintf(f, "  %-*s  %s\n", w, left, o->help ? o->help : "");
    }
}
