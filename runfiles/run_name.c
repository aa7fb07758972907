/* run_name.c -- the benchmark-name parser (run_name.h). */
#include "run_name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies the next '/'-free part of *p (at most n - 1 bytes, at least one) into out. */
static int part(const char **p, char *out, size_t n)
{
    size_t k = strcspn(*p, "/");
    if (k == 0 || k >= n) return -1;
    memcpy(out, *p, k);
    out[k] = '\0';
    *p += k;
    if (**p == '/') (*p)++;
    return 0;
}

/* A positive decimal number after prefix, filling the whole part. */
static int number(const char *s, const char *prefix, int64_t *v)
{
    size_t k = strlen(prefix);
    if (strncmp(s, prefix, k) || !s[k] || strspn(s + k, "0123456789") != strlen(s + k) || strlen(s + k) > 15) return -1;
    *v = strtoll(s + k, NULL, 10);
    return *v > 0 ? 0 : -1;
}

int ada_bench_name_parse(const char *name, ada_bench_name *o)
{
    memset(o, 0, sizeof *o);
    const char *p = name;
    char d[32], r[32], g[32] = "", bb[32] = "";
    if (!name || part(&p, o->op, sizeof o->op)) return -1;
    o->res = !strcmp(o->op, "lnmod_res_fwd") || !strcmp(o->op, "lnmod_res_bwd");
    if (strcmp(o->op, "lnmod_fwd") && strcmp(o->op, "lnmod_bwd") && !o->res) return -1;
    snprintf(o->dir, sizeof o->dir, "%s", o->op + strlen(o->op) - 3);
    if (part(&p, o->variant, sizeof o->variant)) return -1;
    const char *shape = p;
    if (part(&p, o->dtypes, sizeof o->dtypes) || part(&p, o->layout, sizeof o->layout)) return -1;
    /* The fused op's optional /site1 or /site2 after the layout (none: site 3). */
    const char *site = "";
    o->site = o->res ? 3 : 0;
    if (!strncmp(p, "site", 4)) {
        char st[16];
        if (!o->res || part(&p, st, sizeof st) || (strcmp(st, "site1") && strcmp(st, "site2"))) return -1;
        o->site = st[4] - '0';
        site = o->site == 1 ? "/site1" : "/site2";
    }
    if (part(&p, d, sizeof d) || part(&p, r, sizeof r)) return -1;
    /* Optional parts after rows: /B<samples> (2 or more), then /graph<K>. */
    if (*p == 'B' && part(&p, bb, sizeof bb)) return -1;
    if (*p && part(&p, g, sizeof g)) return -1;
    o->batch = 1;
    if (*p || number(d, "D", &o->D) || number(r, "rows", &o->rows) || (g[0] && number(g, "graph", &o->graph)) ||
        (bb[0] && (number(bb, "B", &o->batch) || o->batch < 2 || o->rows % o->batch)))
        return -1;
    if (o->res ? sscanf(o->dtypes, "%7[^-]-%7[^-]-%7[^-]-%7s", o->x, o->branch, o->mod, o->y) != 4
               : sscanf(o->dtypes, "%7[^-]-%7[^-]-%7s", o->x, o->mod, o->y) != 3)
        return -1;
    if (strchr(o->y, '-')) return -1;
    if (snprintf(o->shape, sizeof o->shape, "%s", shape) >= (int)sizeof o->shape) return -1;
    int w = o->batch > 1 ? snprintf(o->slice, sizeof o->slice, "%s/%s%s/rows%lld/B%lld", o->dtypes, o->layout, site,
                                    (long long)o->rows, (long long)o->batch)
                         : snprintf(o->slice, sizeof o->slice, "%s/%s%s/rows%lld", o->dtypes, o->layout, site,
                                    (long long)o->rows);
    return w >= 0 && (size_t)w < sizeof o->slice ? 0 : -1;
}

int ada_bench_name_is_peer(const char *variant)
{
    return variant && (!strncmp(variant, "torch", 5) || !strncmp(variant, "liger", 5) || !strncmp(variant, "peer:", 5));
}
