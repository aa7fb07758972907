/* plan_manifest.c -- the manifest parser (over the CSV reader of plan_csv.c).
 *
 * One streaming pass, so a 10-million-row manifest costs only what is kept per sample: a uint32 bucket index, plus the id (offset
 * into one arena, or the line number) when the caller asks for ids. Every error names the
 * file, the line and the column (field number and header name) and what is wrong there.
 *
 * Rules: header required; columns width,height,frames required, id/fps/weight optional, any
 * order, unknown columns ignored; blank lines skipped; CRLF accepted; RFC 4180 quotes (no
 * newline inside a quoted field). Sizes are positive whole numbers within the limits below
 * (beyond them a row is "absurd", not a sample); fps > 0 and weight >= 0 when given (they
 * are checked, not used: every row is one sample once per epoch).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

/* Limits of one sample: 16384 px per side (above 8K video) and 100,000 frames (over an
 * hour at 24 fps). A row beyond them is rejected as an absurd size before any arithmetic. */
#define PLAN_MAX_SIDE 16384
#define PLAN_MAX_FRAMES 100000

/* ---- manifest ----------------------------------------------------------------------------- */

enum { COL_IGNORE = 0, COL_W, COL_H, COL_F, COL_ID, COL_FPS, COL_WEIGHT };
static const char *const col_names[] = {"", "width", "height", "frames", "id", "fps", "weight"};

typedef struct {
    uint64_t key; /* 0: empty slot; else packed shape + 1 */
    uint32_t idx;
} hslot;

typedef struct {
    hslot *slots;
    size_t mask, used;
} shape_table;

static uint64_t hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static int table_grow(shape_table *t, plan_heap *h)
{
    size_t ncap = t->slots ? 2 * (t->mask + 1) : 1024;
    hslot *ns = plan_heap_calloc(h, ncap * sizeof *ns);
    if (!ns) return -1;
    if (t->slots) {
        for (size_t i = 0; i <= t->mask; i++) {
            if (!t->slots[i].key) continue;
            size_t p = hash64(t->slots[i].key) & (ncap - 1);
            while (ns[p].key) p = (p + 1) & (ncap - 1);
            ns[p] = t->slots[i];
        }
        plan_heap_free(h, t->slots, (t->mask + 1) * sizeof *t->slots);
    }
    t->slots = ns;
    t->mask = ncap - 1;
    return 0;
}

typedef struct {
    plan_manifest *mf;
    csv_reader rd;
    shape_table tab;
    size_t cap_buckets;
    int cols[64];      /* role of the first 64 columns; later ones are ignored */
    int64_t ncols;
    int64_t pos[7];    /* column index of each role, -1 absent */
    csv_field *fields;
    size_t fields_bytes;
    const plan_model *model;
} reader_ctx;

static plan_status field_error(reader_ctx *c, int64_t col, csv_field v, const char *what,
                               plan_error *err)
{
    int n = v.n > 40 ? 40 : (int)v.n;
    return plan_fail(err, PLAN_ERR_INPUT, "%s:%llu: column %lld (%s): '%.*s'%s %s", c->rd.path,
                     (unsigned long long)c->rd.line, (long long)col + 1,
                     col_names[c->cols[col]], n, v.s, v.n > 40 ? "..." : "", what);
}

/* A positive whole number <= max. */
static plan_status parse_dim(reader_ctx *c, int64_t col, int64_t max, int64_t *out, plan_error *err)
{
    csv_field v = csv_trim(c->fields[col]);
    if (v.n == 0) {
        return plan_fail(err, PLAN_ERR_INPUT, "%s:%llu: column %lld (%s): empty value", c->rd.path,
                         (unsigned long long)c->rd.line, (long long)col + 1, col_names[c->cols[col]]);
    }
    size_t i = 0;
    int neg = 0;
    if (v.s[0] == '-' || v.s[0] == '+') {
        neg = v.s[0] == '-';
        i = 1;
    }
    if (i == v.n) return field_error(c, col, v, "is not a whole number", err);
    int64_t x = 0;
    int big = 0;
    for (; i < v.n; i++) {
        unsigned d = (unsigned char)v.s[i] - '0';
        if (d > 9) return field_error(c, col, v, "is not a whole number", err);
        if (!big) {
            x = 10 * x + d;
            if (x > max) big = 1;
        }
    }
    if (neg || x == 0) return field_error(c, col, v, "must be positive", err);
    if (big) {
        char why[96];
        snprintf(why, sizeof why, "is an absurd size (the limit is %lld %s)", (long long)max,
                 c->cols[col] == COL_F ? "frames" : "pixels per side");
        return field_error(c, col, v, why, err);
    }
    *out = x;
    return PLAN_OK;
}

/* An optional real: empty is fine; else finite and > 0 (fps) or >= 0 (weight). */
static plan_status check_real(reader_ctx *c, int64_t col, int strictly_positive, plan_error *err)
{
    csv_field v = csv_trim(c->fields[col]);
    if (v.n == 0) return PLAN_OK;
    char tmp[64];
    if (v.n >= sizeof tmp) return field_error(c, col, v, "is not a number", err);
    memcpy(tmp, v.s, v.n);
    tmp[v.n] = '\0';
    char *end = NULL;
    errno = 0;
    double x = strtod(tmp, &end);
    if (errno || *end || !isfinite(x)) return field_error(c, col, v, "is not a number", err);
    if (strictly_positive ? !(x > 0) : !(x >= 0))
        return field_error(c, col, v, strictly_positive ? "must be positive" : "must not be negative",
                           err);
    return PLAN_OK;
}

static plan_status read_header(reader_ctx *c, plan_error *err)
{
    char *line;
    size_t len;
    int got;
    /* The header is the first line, blank or not. */
    got = csv_next_line(&c->rd, &line, &len, err);
    if (got < 0) return (plan_status)-got;
    if (got == 0)
        return plan_fail(err, PLAN_ERR_INPUT,
                         "%s:1: empty manifest: no header (it needs width,height,frames)", c->rd.path);
    size_t maxf = 1;
    for (size_t i = 0; i < len; i++) maxf += line[i] == ',';
    c->fields_bytes = (maxf + 1) * sizeof *c->fields;
    c->fields = plan_heap_alloc(&c->mf->heap, c->fields_bytes);
    if (!c->fields) return plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory", c->rd.path);
    int64_t nf = csv_split(&c->rd, line, len, c->fields, maxf, err);
    if (nf < 0) return PLAN_ERR_INPUT;
    c->ncols = nf;
    for (int k = 0; k < 7; k++) c->pos[k] = -1;
    for (int64_t i = 0; i < nf; i++) {
        csv_field h = csv_trim(c->fields[i]);
        int role = COL_IGNORE;
        for (int k = 1; k < 7; k++)
            if (h.n == strlen(col_names[k]) && !memcmp(h.s, col_names[k], h.n)) role = k;
        if (role != COL_IGNORE) {
            if (i >= 64)
                return plan_fail(err, PLAN_ERR_INPUT,
                                 "%s:1: column %lld (%s): known columns must be among the first 64",
                                 c->rd.path, (long long)i + 1, col_names[role]);
            if (c->pos[role] >= 0)
                return plan_fail(err, PLAN_ERR_INPUT,
                                 "%s:1: column %lld: '%s' appears twice (first in column %lld)",
                                 c->rd.path, (long long)i + 1, col_names[role],
                                 (long long)c->pos[role] + 1);
            c->pos[role] = i;
        }
        if (i < 64) c->cols[i] = role;
    }
    for (int k = COL_W; k <= COL_F; k++)
        if (c->pos[k] < 0)
            return plan_fail(err, PLAN_ERR_INPUT,
                             "%s:1: the header has no '%s' column (required: width,height,frames)",
                             c->rd.path, col_names[k]);
    return PLAN_OK;
}

static plan_status grow_samples(plan_manifest *mf, plan_error *err)
{
    size_t ncap = mf->cap_samples ? mf->cap_samples + mf->cap_samples / 2 : 65536;
    if (ncap > (size_t)UINT32_MAX) ncap = UINT32_MAX;
    uint32_t *nb = plan_heap_realloc(&mf->heap, mf->bucket, mf->cap_samples * 4, ncap * 4);
    if (!nb) return plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory at %lld samples", mf->path,
                              (long long)mf->n);
    mf->bucket = nb;
    if (mf->ids_kept) {
        uint64_t *ni = plan_heap_realloc(&mf->heap, mf->id_off, mf->cap_samples * 8, ncap * 8);
        if (!ni) return plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory at %lld samples",
                                  mf->path, (long long)mf->n);
        mf->id_off = ni;
    }
    mf->cap_samples = ncap;
    return PLAN_OK;
}

static plan_status add_id(plan_manifest *mf, csv_field v, plan_error *err)
{
    if (mf->arena_len + v.n + 1 > mf->arena_cap) {
        size_t ncap = mf->arena_cap ? mf->arena_cap + mf->arena_cap / 2 : 1u << 20;
        while (ncap < mf->arena_len + v.n + 1) ncap += ncap / 2;
        char *na = plan_heap_realloc(&mf->heap, mf->arena, mf->arena_cap, ncap);
        if (!na) return plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory for ids", mf->path);
        mf->arena = na;
        mf->arena_cap = ncap;
    }
    mf->id_off[mf->n] = mf->arena_len;
    memcpy(mf->arena + mf->arena_len, v.s, v.n);
    mf->arena[mf->arena_len + v.n] = '\0';
    mf->arena_len += v.n + 1;
    return PLAN_OK;
}

static plan_status add_sample(reader_ctx *c, int64_t f, int64_t h, int64_t w, plan_error *err)
{
    plan_manifest *mf = c->mf;
    plan_snap(c->model, &f, &h, &w);
    uint64_t key = ((uint64_t)f << 32 | (uint64_t)h << 16 | (uint64_t)w) + 1;
    if ((c->tab.used + 1) * 2 > c->tab.mask + 1 && table_grow(&c->tab, &mf->heap))
        return plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory for buckets", mf->path);
    size_t p = hash64(key) & c->tab.mask;
    while (c->tab.slots[p].key && c->tab.slots[p].key != key) p = (p + 1) & c->tab.mask;
    uint32_t b;
    if (c->tab.slots[p].key) {
        b = c->tab.slots[p].idx;
    } else {
        if ((size_t)mf->nb == c->cap_buckets) {
            size_t ncap = c->cap_buckets ? 2 * c->cap_buckets : 256;
            plan_bucket_shape *nbk = plan_heap_realloc(&mf->heap, mf->buckets,
                                                       c->cap_buckets * sizeof *nbk, ncap * sizeof *nbk);
            if (!nbk) return plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory for buckets", mf->path);
            mf->buckets = nbk;
            c->cap_buckets = ncap;
        }
        b = (uint32_t)mf->nb++;
        plan_bucket_shape *s = &mf->buckets[b];
        s->frames = f;
        s->height = h;
        s->width = w;
        s->tokens = plan_tokens(c->model, f, h, w);
        s->samples = 0;
        s->first_line = c->rd.line;
        c->tab.slots[p].key = key;
        c->tab.slots[p].idx = b;
        c->tab.used++;
    }
    mf->buckets[b].samples++;
    mf->bucket[mf->n] = b;
    return PLAN_OK;
}

static plan_status read_rows(reader_ctx *c, plan_error *err)
{
    plan_manifest *mf = c->mf;
    char *line;
    size_t len;
    int got;
    const int64_t pw = c->pos[COL_W], ph = c->pos[COL_H], pf = c->pos[COL_F];
    const int64_t pid = c->pos[COL_ID], pfps = c->pos[COL_FPS], pwt = c->pos[COL_WEIGHT];
    while ((got = csv_next_line(&c->rd, &line, &len, err)) > 0) {
        if (csv_blank(line, len)) continue;
        int64_t nf = csv_split(&c->rd, line, len, c->fields, (size_t)c->ncols, err);
        if (nf < 0) return PLAN_ERR_INPUT;
        if (nf != c->ncols)
            return plan_fail(err, PLAN_ERR_INPUT, "%s:%llu: column %lld: %lld fields, the header has %lld",
                             c->rd.path, (unsigned long long)c->rd.line,
                             (long long)(nf < c->ncols ? nf + 1 : c->ncols + 1), (long long)nf,
                             (long long)c->ncols);
        int64_t w, h, f;
        plan_status st;
        if ((st = parse_dim(c, pw, PLAN_MAX_SIDE, &w, err))) return st;
        if ((st = parse_dim(c, ph, PLAN_MAX_SIDE, &h, err))) return st;
        if ((st = parse_dim(c, pf, PLAN_MAX_FRAMES, &f, err))) return st;
        if (pfps >= 0 && (st = check_real(c, pfps, 1, err))) return st;
        if (pwt >= 0 && (st = check_real(c, pwt, 0, err))) return st;
        if ((uint64_t)mf->n + 1 >= UINT32_MAX)
            return plan_fail(err, PLAN_ERR_INPUT, "%s:%llu: more than %u samples", c->rd.path,
                             (unsigned long long)c->rd.line, UINT32_MAX - 1);
        if ((size_t)mf->n == mf->cap_samples && (st = grow_samples(mf, err))) return st;
        if (mf->ids_kept) {
            if (pid >= 0) {
                csv_field v = csv_trim(c->fields[pid]);
                if (!plan_utf8_valid(v.s, v.n))
                    return plan_fail(err, PLAN_ERR_INPUT,
                                     "%s:%llu: column %lld (id): not valid UTF-8 (ids go into the "
                                     "JSON plan)", c->rd.path, (unsigned long long)c->rd.line,
                                     (long long)pid + 1);
                if ((st = add_id(mf, v, err))) return st;
            } else {
                mf->id_off[mf->n] = c->rd.line;
            }
        }
        if ((st = add_sample(c, f, h, w, err))) return st;
        mf->n++;
    }
    if (got < 0) return (plan_status)-got;
    if (mf->n == 0)
        return plan_fail(err, PLAN_ERR_INPUT, "%s:%llu: empty manifest: no rows after the header",
                         c->rd.path, (unsigned long long)c->rd.line + 1);
    return PLAN_OK;
}

static int cmp_shape(const void *a, const void *b)
{
    const plan_bucket_shape *x = a, *y = b;
    if (x->tokens != y->tokens) return x->tokens < y->tokens ? -1 : 1;
    if (x->frames != y->frames) return x->frames < y->frames ? -1 : 1;
    if (x->height != y->height) return x->height < y->height ? -1 : 1;
    if (x->width != y->width) return x->width < y->width ? -1 : 1;
    return 0;
}

/* Buckets in a machine-independent order (tokens, frames, height, width); the samples'
 * indices follow. The temporary uses first_line to carry the old index. */
static plan_status sort_buckets(plan_manifest *mf, plan_error *err)
{
    int64_t nb = mf->nb;
    uint64_t *first = plan_heap_alloc(&mf->heap, (size_t)nb * 8);
    uint32_t *remap = plan_heap_alloc(&mf->heap, (size_t)nb * 4);
    if (!first || !remap) {
        plan_heap_free(&mf->heap, first, (size_t)nb * 8);
        plan_heap_free(&mf->heap, remap, (size_t)nb * 4);
        return plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory", mf->path);
    }
    for (int64_t i = 0; i < nb; i++) {
        first[i] = mf->buckets[i].first_line;
        mf->buckets[i].first_line = (uint64_t)i;
    }
    qsort(mf->buckets, (size_t)nb, sizeof *mf->buckets, cmp_shape);
    for (int64_t i = 0; i < nb; i++) {
        uint64_t old = mf->buckets[i].first_line;
        remap[old] = (uint32_t)i;
        mf->buckets[i].first_line = first[old];
    }
    for (int64_t s = 0; s < mf->n; s++) mf->bucket[s] = remap[mf->bucket[s]];
    plan_heap_free(&mf->heap, first, (size_t)nb * 8);
    plan_heap_free(&mf->heap, remap, (size_t)nb * 4);
    return PLAN_OK;
}

plan_status plan_manifest_read(const char *path, const plan_model *m, int keep_ids,
                               plan_manifest **out, plan_error *err)
{
    *out = NULL;
    plan_manifest *mf = calloc(1, sizeof *mf);
    if (!mf) return plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory", path);
    mf->path = malloc(strlen(path) + 1);
    if (!mf->path) {
        free(mf);
        return plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory", path);
    }
    strcpy(mf->path, path);
    mf->ids_kept = keep_ids != 0;

    reader_ctx c;
    memset(&c, 0, sizeof c);
    c.mf = mf;
    c.model = m;
    plan_status st = csv_open(&c.rd, mf->path, &mf->heap, err);
    if (st == PLAN_OK) st = read_header(&c, err);
    if (st == PLAN_OK) {
        mf->ids_are_lines = c.pos[COL_ID] < 0;
        st = read_rows(&c, err);
    }
    csv_close(&c.rd);
    plan_heap_free(&mf->heap, c.fields, c.fields_bytes);
    if (c.tab.slots) plan_heap_free(&mf->heap, c.tab.slots, (c.tab.mask + 1) * sizeof *c.tab.slots);
    if (st == PLAN_OK) st = sort_buckets(mf, err);
    if (st != PLAN_OK) {
        plan_manifest_free(mf);
        return st;
    }
    *out = mf;
    return PLAN_OK;
}

void plan_manifest_free(plan_manifest *mf)
{
    if (!mf) return;
    free(mf->bucket);
    free(mf->id_off);
    free(mf->arena);
    free(mf->buckets);
    free(mf->path);
    free(mf);
}

int64_t plan_manifest_samples(const plan_manifest *mf) { return mf->n; }
int64_t plan_manifest_nbuckets(const plan_manifest *mf) { return mf->nb; }
const plan_bucket_shape *plan_manifest_bucket(const plan_manifest *mf, int64_t i)
{
    return (i >= 0 && i < mf->nb) ? &mf->buckets[i] : NULL;
}
uint32_t plan_manifest_sample_bucket(const plan_manifest *mf, int64_t i) { return mf->bucket[i]; }
size_t plan_manifest_bytes(const plan_manifest *mf) { return mf->heap.peak; }
