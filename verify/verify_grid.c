/* verify_grid.c -- the grids of `adaload verify` (verify.h): D x rows x layout x dtype
 * combination, plus the rows*D > 2^31 case of the full grid; the keys of a grid's cases, the
 * fused op's (verify_res_grid.c) after lnmod's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"
#include "verify_internal.h"
#include "verify_res.h"
#include "verify_registry_names.h"

static const int64_t full_D[] = {1, 7, 33, 127, 264, 1000, 1536, 1537, 2048, 2304, 3072, 4096, 5119, 5120, 8192, 12288};
static const int64_t full_rows[] = {1, 3, 1560, 32760};
static const int64_t quick_D[] = {1, 264, 1000, 1536, 1537, 2048, 5120};
static const int64_t quick_rows[] = {1, 3, 1560};
static const int64_t smoke_D[] = {1, 7, 33, 257};
static const int64_t smoke_rows[] = {1, 3, 60};

typedef struct {
    lnmod_dtype x, mod, y;
} combo;

static const combo combos[] = {
    {LNMOD_F32, LNMOD_F32, LNMOD_F32},    {LNMOD_F16, LNMOD_F32, LNMOD_F16},
    {LNMOD_F16, LNMOD_F32, LNMOD_F32},    {LNMOD_F16, LNMOD_F16, LNMOD_F16},
    {LNMOD_F16, LNMOD_F16, LNMOD_F32},    {LNMOD_BF16, LNMOD_F32, LNMOD_BF16},
    {LNMOD_BF16, LNMOD_F32, LNMOD_F32},   {LNMOD_BF16, LNMOD_BF16, LNMOD_BF16},
    {LNMOD_BF16, LNMOD_BF16, LNMOD_F32},
};
#define NCOMBOS ((int)(sizeof combos / sizeof combos[0]))
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define COMBO_F32 0
#define COMBO_BF16_F32_BF16 5

/* Sets beside the product: dtile's forward v2 runs a warp a row, or several warps of one CTA
 * (the lag path), only with the modulation in registers, which its rule picks when a
 * modulation row is shared by at least 4 x the grid's row groups (kernels/lnmod_fwd_v2_plan.h)
 * -- many rows a sample, more than the product has -- and only where the flat chunk kernel
 * does not take the problem (it takes 16-bit x with 16-bit y first: the product's 16-bit sets
 * reach it). These reach them: long samples at warp-a-row widths of each vector size and VPT
 * 3-8, and at lag-path widths of W = 2 to 6 warps (16-bit x with fp32 y, fp32 x; fp32 and
 * 16-bit modulation; two frames), their row counts picked so that the geometry
 * (verify_pick_geometry: a hash of the set) is aligned, one sample (two frames for the
 * per-frame set) -- verify/test_verify_cover.c fails if any of them stops taking its path.
 * The full grid's sets are sharded by index (verify_set_in_shard): the lag sets are 9, so
 * the fused op's sets after them keep their shards (shard 1 the heaviest: the rows*D > 2^31
 * case and the fused op's largest sets; ci/land_patch.sh runs it alone). */
#define COMBO_F16_F32_F16 1
#define COMBO_F16_F32_F32 2
#define COMBO_F16_F16_F32 4
#define COMBO_BF16_F32_F32 6
#define COMBO_BF16_BF16_F32 8
static const verify_set full_extra[] = {
    {LNMOD_PER_SAMPLE, COMBO_BF16_F32_F32, 640, 32763, 0},  {LNMOD_PER_SAMPLE, COMBO_BF16_F32_F32, 1152, 32767, 0},
    {LNMOD_PER_SAMPLE, COMBO_BF16_BF16_F32, 1920, 32762, 0}, {LNMOD_PER_SAMPLE, COMBO_F16_F16_F32, 1152, 32765, 0},
    {LNMOD_PER_SAMPLE, COMBO_F32, 640, 32762, 0},           {LNMOD_PER_FRAME, COMBO_BF16_F32_F32, 1000, 32787, 0},
    /* the lag path */
    {LNMOD_PER_SAMPLE, COMBO_BF16_F32_F32, 2304, 3303, 0},  {LNMOD_PER_SAMPLE, COMBO_F16_F16_F32, 3840, 2204, 0},
    {LNMOD_PER_SAMPLE, COMBO_BF16_F32_F32, 4608, 1711, 0},  {LNMOD_PER_SAMPLE, COMBO_BF16_BF16_F32, 7296, 1105, 0},
    {LNMOD_PER_SAMPLE, COMBO_F32, 2560, 3306, 0},           {LNMOD_PER_FRAME, COMBO_BF16_F32_F32, 2688, 6014, 0},
    {LNMOD_PER_SAMPLE, COMBO_BF16_BF16_F32, 6144, 1100, 0}, {LNMOD_PER_SAMPLE, COMBO_F16_F32_F32, 2816, 2627, 0},
    {LNMOD_PER_SAMPLE, COMBO_BF16_F32_F32, 6912, 1107, 0},
    /* dtile backward's wide shapes (16-bit x above D 8192, kernels/lnmod_bwd_v1_shape.h): 24
     * elements a thread with a ring of 4 and 3 stages (2: the product's D 12288 with fp32 y),
     * 32 (D > 12288) with 3 and 2; six sets, so the fused op's sets after them keep their shards */
    {LNMOD_PER_SAMPLE, COMBO_BF16_F32_BF16, 8704, 1101, 0}, {LNMOD_PER_FRAME, COMBO_BF16_F32_F32, 8704, 2202, 0},
    {LNMOD_PER_SAMPLE, COMBO_F16_F32_F16, 9000, 1100, 0},   {LNMOD_PER_SAMPLE, COMBO_BF16_F32_BF16, 16384, 1101, 0},
    {LNMOD_PER_FRAME, COMBO_BF16_F32_BF16, 13824, 2202, 0}, {LNMOD_PER_SAMPLE, COMBO_F16_F32_F16, 12800, 1101, 0},
};
static const verify_set quick_extra[] = {
    {LNMOD_PER_SAMPLE, COMBO_BF16_F32_F32, 1000, 12005, 0},
    {LNMOD_PER_SAMPLE, COMBO_F32, 264, 12000, 0},
    {LNMOD_PER_SAMPLE, COMBO_BF16_F32_F32, 4608, 1711, 0}, /* the lag path, W = 4 */
    {LNMOD_PER_SAMPLE, COMBO_BF16_F32_BF16, 8704, 98, 0},  /* the backward's wide shapes: 3 chunks */
    {LNMOD_PER_SAMPLE, COMBO_BF16_F32_BF16, 13000, 42, 0}, /* 32 elements a thread, two samples */
};

int verify_ncombos(void) { return NCOMBOS; }

void verify_combo(int k, lnmod_dtype *x, lnmod_dtype *mod, lnmod_dtype *y)
{
    if (k < 0 || k >= NCOMBOS) k = 0;
    *x = combos[k].x;
    *mod = combos[k].mod;
    *y = combos[k].y;
}

verify_status verify_grid_sets(const char *grid, verify_set **sets, int *nsets)
{
    const int64_t *Ds, *Rs;
    const verify_set *extra = NULL;
    int nD, nR, full = 0, nx = 0;
    *sets = NULL;
    *nsets = 0;
    if (!grid) return VERIFY_ERR_ARG;
    if (!strcmp(grid, "full")) {
        Ds = full_D, nD = COUNT(full_D), Rs = full_rows, nR = COUNT(full_rows), full = 1;
        extra = full_extra, nx = COUNT(full_extra);
    } else if (!strcmp(grid, "quick")) {
        Ds = quick_D, nD = COUNT(quick_D), Rs = quick_rows, nR = COUNT(quick_rows);
        extra = quick_extra, nx = COUNT(quick_extra);
    } else if (!strcmp(grid, "smoke")) {
        Ds = smoke_D, nD = COUNT(smoke_D), Rs = smoke_rows, nR = COUNT(smoke_rows);
    } else {
        return VERIFY_ERR_ARG;
    }
    int n = nD * nR * LNMOD_LAYOUT_COUNT * NCOMBOS + nx + full;
    verify_set *s = calloc((size_t)n, sizeof *s);
    if (!s) return VERIFY_ERR_NOMEM;
    int k = 0;
    for (int a = 0; a < nD; a++)
        for (int b = 0; b < nR; b++)
            for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++)
                for (int c = 0; c < NCOMBOS; c++) s[k++] = (verify_set){l, c, Ds[a], Rs[b], 0};
    for (int i = 0; i < nx; i++) s[k++] = extra[i];
    if (full) s[k++] = (verify_set){LNMOD_PER_SAMPLE, COMBO_BF16_F32_BF16, VERIFY_HUGE_D, VERIFY_HUGE_ROWS, 1};
    *sets = s;
    *nsets = n;
    return VERIFY_OK;
}

/* ---- the cases a grid runs, as the gate compares them ---------------------------------- */

const char *verify_sanitizer_grid(const char *grid)
{
    return grid && !strcmp(grid, "smoke") ? "smoke" : "quick";
}

int verify_case_key(const char *variant, const char *dtypes, const char *layout, const char *direction,
                    int64_t D, int64_t rows, char *buf, size_t n)
{
    if (!variant || !dtypes || !layout || !direction) return -1;
    int k = snprintf(buf, n, "%s %s %s %s D=%lld rows=%lld", variant, dtypes, layout, direction, (long long)D,
                     (long long)rows);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

int verify_case_key_json(const json_t *c, char *buf, size_t n)
{
    const json_t *op = json_object_get(c, "op");
    if (op && !json_is_string(op)) return -1;
    if (op && !strcmp(json_string_value(op), "lnmod_res")) return verify_res_case_key_json(c, buf, n);
    if (op && strcmp(json_string_value(op), "lnmod")) return -1;
    const char *x = json_string_value(json_object_get(c, "x")), *m = json_string_value(json_object_get(c, "mod"));
    const char *y = json_string_value(json_object_get(c, "y"));
    json_t *D = json_object_get(c, "D"), *rows = json_object_get(c, "rows"), *dir = json_object_get(c, "direction");
    if (!x || !m || !y || !json_is_integer(D) || !json_is_integer(rows) || (dir && !json_is_string(dir))) return -1;
    char dt[64];
    int k = snprintf(dt, sizeof dt, "%s-%s-%s", x, m, y);
    if (k < 0 || (size_t)k >= sizeof dt) return -1;
    return verify_case_key(json_string_value(json_object_get(c, "variant")), dt,
                           json_string_value(json_object_get(c, "layout")), dir ? json_string_value(dir) : "fwd",
                           json_integer_value(D), json_integer_value(rows), buf, n);
}

void verify_set_dtypes(const verify_set *s, char *buf, size_t n)
{
    lnmod_dtype x, m, y;
    verify_combo(s->combo, &x, &m, &y);
    snprintf(buf, n, "%s-%s-%s", lnmod_dtype_name(x), lnmod_dtype_name(m), lnmod_dtype_name(y));
}

static int key_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct {
    verify_set s;
    int i;
} ranked_set;

static int bigger_first(const void *a, const void *b)
{
    const ranked_set *x = a, *y = b;
    if (x->s.huge != y->s.huge) return x->s.huge - y->s.huge; /* the huge set last */
    const int64_t nx = x->s.rows * x->s.D, ny = y->s.rows * y->s.D;
    if (nx != ny) return nx > ny ? -1 : 1;
    return x->i - y->i;
}

int verify_sets_largest_first(verify_set *sets, int n)
{
    if (n < 2) return 0;
    ranked_set *r = malloc((size_t)n * sizeof *r);
    if (!r) return -1;
    for (int i = 0; i < n; i++) r[i] = (ranked_set){sets[i], i};
    qsort(r, (size_t)n, sizeof *r, bigger_first);
    for (int i = 0; i < n; i++) sets[i] = r[i].s;
    free(r);
    return 0;
}

int verify_set_in_shard(int64_t i, int shard, int nshards)
{
    return nshards <= 1 || i % nshards == shard - 1;
}

static verify_status grid_cases_shard(const char *grid, const char *const *variants, const int *has_bwd,
                                      int nvariants, int directions, int shard, int nshards, verify_case_id **cases,
                                      int64_t *n);

verify_status verify_grid_keys(const char *grid, const char *const *variants, int nvariants, char ***keys,
                               int64_t *nkeys)
{
    return verify_grid_keys_ops(grid, variants, nvariants, VERIFY_OP_ALL, 0, 0, keys, nkeys);
}

verify_status verify_grid_keys_shard(const char *grid, const char *const *variants, int nvariants, int shard,
                                     int nshards, char ***keys, int64_t *nkeys)
{
    return verify_grid_keys_ops(grid, variants, nvariants, VERIFY_OP_ALL, shard, nshards, keys, nkeys);
}

enum { KEYLEN = 128 };

/* The keys of the fused op's cases of grid (its sets j with verify_set_in_shard(nlnmod + j)) for
 * the variants with it, into k[*m...] (room for all of them); 0, or -1 (no such grid, a key too
 * long, out of memory). */
static int res_keys(const char *grid, const char *const *variants, int nvariants, int64_t nlnmod, int shard,
                    int nshards, char **k, char *text, int64_t *m)
{
    verify_res_set *rs;
    int nrs;
    if (verify_res_grid_sets(grid, &rs, &nrs) != VERIFY_OK) return -1;
    for (int j = 0; j < nrs; j++) {
        if (!verify_set_in_shard(nlnmod + j, shard, nshards)) continue;
        char dt[64];
        verify_res_set_dtypes(&rs[j], dt, sizeof dt);
        for (int dir = VERIFY_DIR_FWD; dir <= VERIFY_DIR_BWD; dir <<= 1)
            for (int v = 0; v < nvariants; v++) {
                if (!verify_registry_has_res(variants[v])) continue;
                k[*m] = text + *m * KEYLEN;
                if (verify_res_case_key(variants[v], verify_res_site_name(rs[j].site), dt,
                                        lnmod_layout_name((lnmod_layout)rs[j].layout), verify_direction_name(dir),
                                        rs[j].D, rs[j].rows, rs[j].inplace, !rs[j].no_dh, k[*m], KEYLEN)) {
                    free(rs);
                    return -1;
                }
                (*m)++;
            }
    }
    free(rs);
    return 0;
}

verify_status verify_grid_keys_ops(const char *grid, const char *const *variants, int nvariants, int ops, int shard,
                                   int nshards, char ***keys, int64_t *nkeys)
{
    *keys = NULL;
    *nkeys = 0;
    if (nvariants < 0 || nvariants > VERIFY_MAX_VARIANTS || !(ops & VERIFY_OP_ALL)) return VERIFY_ERR_ARG;
    int has_bwd[VERIFY_MAX_VARIANTS];
    for (int v = 0; v < nvariants; v++) has_bwd[v] = verify_registry_has_backward(variants[v]);
    verify_case_id *cases;
    int64_t n, nres = 0;
    if (nshards > 1 && (shard < 1 || shard > nshards)) return VERIFY_ERR_ARG;
    verify_status st = grid_cases_shard(grid, variants, has_bwd, nvariants, VERIFY_DIR_BOTH, shard, nshards, &cases, &n);
    if (st != VERIFY_OK) return st;
    verify_set *ls;
    int nls = 0, nrs = 0;
    verify_res_set *rs;
    if ((ops & VERIFY_OP_RES) && verify_grid_sets(grid, &ls, &nls) == VERIFY_OK) {
        free(ls);
        if (verify_res_grid_sets(grid, &rs, &nrs) == VERIFY_OK) free(rs);
        for (int v = 0; v < nvariants; v++) nres += 2 * (int64_t)nrs * verify_registry_has_res(variants[v]);
    }
    if (!(ops & VERIFY_OP_LNMOD)) n = 0; /* keys of the fused op alone */
    const int64_t room = n + nres > 0 ? n + nres : 1;
    char **k = malloc((size_t)room * (sizeof *k + KEYLEN));
    if (!k) {
        free(cases);
        return VERIFY_ERR_NOMEM;
    }
    char *text = (char *)(k + room);
    for (int64_t i = 0; i < n; i++) {
        char dt[64];
        verify_set_dtypes(&cases[i].set, dt, sizeof dt);
        k[i] = text + i * KEYLEN;
        if (verify_case_key(cases[i].variant, dt, lnmod_layout_name((lnmod_layout)cases[i].set.layout),
                            verify_direction_name(cases[i].direction), cases[i].set.D, cases[i].set.rows, k[i],
                            KEYLEN)) {
            free(cases);
            free(k);
            return VERIFY_ERR_ARG;
        }
    }
    free(cases);
    int64_t m = n;
    if (nres > 0 && res_keys(grid, variants, nvariants, nls, shard, nshards, k, text, &m) != 0) {
        free(k);
        return VERIFY_ERR_NOMEM;
    }
    qsort(k, (size_t)m, sizeof *k, key_cmp);
    *keys = k;
    *nkeys = m;
    return VERIFY_OK;
}

static const char *const registry_names[] = {VERIFY_REGISTRY_NAMES NULL};

const char *const *verify_registry_variants(int *n)
{
    int k = 0;
    while (registry_names[k]) k++;
    *n = k;
    return registry_names;
}

static const int registry_backward[] = {VERIFY_REGISTRY_BACKWARD 0};
static const int registry_res[] = {VERIFY_REGISTRY_RES 0};

int verify_registry_has_res(const char *variant)
{
    for (int k = 0; registry_names[k]; k++)
        if (variant && !strcmp(registry_names[k], variant)) return registry_res[k];
    return 0;
}

verify_status verify_sanitizer_registry_ncases(const char *grid, int ops, int64_t *n)
{
    verify_case_id *ids;
    *n = 0;
    verify_status st = VERIFY_OK;
    if ((ops & VERIFY_OP_LNMOD) && (st = verify_grid_registry_cases(verify_sanitizer_grid(grid), &ids, n)) == VERIFY_OK)
        free(ids);
    verify_res_set *rs;
    int nrs, nreg;
    const char *const *reg = verify_registry_variants(&nreg);
    if (st == VERIFY_OK && (ops & VERIFY_OP_RES) &&
        (st = verify_res_grid_sets(verify_res_sanitizer_grid(grid), &rs, &nrs)) == VERIFY_OK) {
        free(rs);
        for (int v = 0; v < nreg; v++) *n += 2 * (int64_t)nrs * verify_registry_has_res(reg[v]);
    }
    return st;
}

int verify_registry_has_backward(const char *variant)
{
    for (int k = 0; registry_names[k]; k++)
        if (variant && !strcmp(registry_names[k], variant)) return registry_backward[k];
    return 0;
}

verify_status verify_grid_registry_cases(const char *grid, verify_case_id **cases, int64_t *n)
{
    int nreg, has_bwd[VERIFY_MAX_VARIANTS];
    const char *const *reg = verify_registry_variants(&nreg);
    if (nreg > VERIFY_MAX_VARIANTS) nreg = VERIFY_MAX_VARIANTS;
    for (int v = 0; v < nreg; v++) has_bwd[v] = registry_backward[v];
    return verify_grid_cases(grid, reg, has_bwd, nreg, VERIFY_DIR_BOTH, cases, n);
}

const char *verify_direction_name(int dir) { return dir == VERIFY_DIR_BWD ? "bwd" : "fwd"; }

verify_status verify_grid_cases(const char *grid, const char *const *variants, const int *has_bwd,
                                int nvariants, int directions, verify_case_id **cases, int64_t *n)
{
    return grid_cases_shard(grid, variants, has_bwd, nvariants, directions, 0, 0, cases, n);
}

static verify_status grid_cases_shard(const char *grid, const char *const *variants, const int *has_bwd,
                                      int nvariants, int directions, int shard, int nshards, verify_case_id **cases,
                                      int64_t *n)
{
    *cases = NULL;
    *n = 0;
    if (directions == 0) directions = VERIFY_DIR_BOTH;
    if (nvariants < 0 || nvariants > VERIFY_MAX_VARIANTS || (directions & ~VERIFY_DIR_BOTH)) return VERIFY_ERR_ARG;
    verify_set *sets;
    int nsets;
    verify_status st = verify_grid_sets(grid, &sets, &nsets);
    if (st != VERIFY_OK) return st;
    verify_case_id *k = calloc((size_t)nsets * (size_t)(2 * nvariants) + 1, sizeof *k);
    if (!k) {
        free(sets);
        return VERIFY_ERR_NOMEM;
    }
    int64_t m = 0;
    for (int i = 0; i < nsets; i++) {
        if (!verify_set_in_shard(i, shard, nshards)) continue;
        for (int dir = VERIFY_DIR_FWD; dir <= VERIFY_DIR_BWD; dir <<= 1) {
            if (!(directions & dir)) continue;
            for (int v = 0; v < nvariants; v++)
                if (dir == VERIFY_DIR_FWD || has_bwd[v]) k[m++] = (verify_case_id){variants[v], dir, sets[i]};
        }
    }
    free(sets);
    *cases = k;
    *n = m;
    return VERIFY_OK;
}
