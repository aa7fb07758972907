/* catalog_prune.c -- the pruning policy of results/ (the rules are in catalog.h) and the
 * removal of a run folder.
 */
#define _XOPEN_SOURCE 700
#include "catalog_internal.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int is_gate_record(const cat_run *r)
{
    return r->verify_grid && !strcmp(r->verify_grid, "full") && r->verify_backend &&
           !strcmp(r->verify_backend, "cuda") && !r->verify_plugins;
}

/* 1 when r verified this tree's kernel sources (scheme 2 where r knows it, else scheme 1). */
static int matches_tree(const cat_run *r, const cat_prune_opts *o)
{
    if (r->kernel_hash_v2 && o->hash_v2 && !strcmp(r->kernel_hash_v2, o->hash_v2)) return 1;
    return o->hash_v1 && !strcmp(r->kernel_hash_v1, o->hash_v1);
}

static void keep(cat_decision *d, const char *why)
{
    d->prune = 0;
    snprintf(d->reason, sizeof d->reason, "%s", why);
}

/* q holds every case r holds: q is a whole grid, or the same shard of the same count (a
 * shard never stands in for another, nor for a whole record). */
static int covers(const cat_run *q, const cat_run *r)
{
    return q->verify_nshards == 0 || (q->verify_nshards == r->verify_nshards && q->verify_shard == r->verify_shard);
}

static void decide_verify(const cat_catalog *c, int64_t i, const cat_prune_opts *o, cat_decision *d)
{
    const cat_run *r = &c->run[i];
    if (!is_gate_record(r)) return keep(d, "not a gate record (quick grid, CPU model or plug-ins): kept");
    /* Catalog order is by time: newer records of the same testbed come after i. */
    int64_t newer = -1, newer_match = -1;
    for (int64_t j = i + 1; j < c->n; j++) {
        const cat_run *q = &c->run[j];
        if (strcmp(q->kind, "verify") || strcmp(q->testbed, r->testbed) || !is_gate_record(q) || !covers(q, r)) continue;
        newer = j;
        if (matches_tree(q, o)) newer_match = j;
    }
    if (matches_tree(r, o)) {
        if (newer_match < 0) return keep(d, "the newest gate record for this tree's kernel sources");
        d->prune = 1;
        snprintf(d->reason, sizeof d->reason, "superseded by %.100s (same kernel sources)",
                 c->run[newer_match].run);
        return;
    }
    if (newer < 0) return keep(d, "the newest gate record of its testbed");
    d->prune = 1;
    snprintf(d->reason, sizeof d->reason, "superseded by %.100s (the gate reads only the newest)",
             c->run[newer].run);
}

/* "wan" of "set wan, 128 benchmarks ..." into out ("" when the line has no set). */
static void set_of(const cat_run *r, char *out, size_t n)
{
    out[0] = '\0';
    if (strncmp(r->measured, "set ", 4)) return;
    const char *e = strchr(r->measured + 4, ',');
    size_t k = e ? (size_t)(e - r->measured - 4) : strlen(r->measured + 4);
    snprintf(out, n, "%.*s", (int)(k < n ? k : n - 1), r->measured + 4);
}

/* Newer runs of r's testbed, kind and set after index i. */
static int64_t newer_of_set(const cat_catalog *c, int64_t i)
{
    const cat_run *r = &c->run[i];
    char set[64], s2[64];
    set_of(r, set, sizeof set);
    int64_t n = 0;
    for (int64_t j = i + 1; j < c->n; j++) {
        const cat_run *q = &c->run[j];
        if (strcmp(q->testbed, r->testbed) || strcmp(q->kind, r->kind)) continue;
        set_of(q, s2, sizeof s2);
        n += !strcmp(set, s2);
    }
    return n;
}

static void decide_bench(const cat_catalog *c, int64_t i, const cat_prune_opts *o, cat_decision *d)
{
    const cat_run *r = &c->run[i];
    int m = o->on_main ? o->on_main(r->git_sha, o->ctx) : -1;
    if (m == 0) {
        d->prune = 1;
        snprintf(d->reason, sizeof d->reason, "commit %.12s is not on the main line", r->git_sha);
        return;
    }
    if (m == -1) return keep(d, "cannot tell whether its commit is on the main line: kept");
    if (o->keep_bench > 0 && newer_of_set(c, i) >= o->keep_bench) {
        char set[64];
        set_of(r, set, sizeof set);
        d->prune = 1;
        snprintf(d->reason, sizeof d->reason, "older than the newest %lld %s runs of set '%s'",
                 (long long)o->keep_bench, r->kind, set);
        return;
    }
    /* A dirty tree at a main-line commit is how a change is timed before it is committed
     * (kernels/NOTES.md cites such runs): kept, and said. */
    keep(d, r->git_dirty == 1 ? "from the main line (tree was dirty: uncommitted changes timed)"
                              : "a run from the main line");
}

cat_status cat_prune_plan(const cat_catalog *c, const cat_prune_opts *o, cat_decision *d)
{
    if (!c || !o || !d) return CAT_BAD_ARG;
    for (int64_t i = 0; i < c->n; i++) {
        const cat_run *r = &c->run[i];
        if (o->cited && strstr(o->cited, r->run)) keep(&d[i], "cited in the README or notes");
        else if (!strcmp(r->kind, "verify")) decide_verify(c, i, o, &d[i]);
        else if (!strcmp(r->kind, "bench") || !strcmp(r->kind, "planner")) decide_bench(c, i, o, &d[i]);
        else keep(&d[i], "a regression check, exploration or e2e run: kept");
    }
    return CAT_OK;
}

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(p) : unlink(p)) == 0 ? 0 : -1;
}

cat_status cat_remove_run(const char *root, const char *path, char *err, size_t en)
{
    int slashes = 0;
    for (const char *p = path; *p; p++) slashes += *p == '/';
    if (slashes != 2 || strstr(path, "..") || path[0] == '/')
        return cat__fail(CAT_BAD_ARG, err, en, "%s: not <testbed>/<kind>/<run>", path);
    char dir[PATH_MAX];
    cat__join(dir, sizeof dir, root, path);
    if (!cat__is_dir(dir)) return cat__fail(CAT_BAD_ARG, err, en, "%s: not a run folder", dir);
    if (nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        return cat__fail(CAT_IO, err, en, "%s: %s", dir, strerror(errno));
    return CAT_OK;
}
