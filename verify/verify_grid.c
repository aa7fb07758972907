/* verify_grid.c -- the grids of `adaload verify` (verify.h): D x rows x layout x dtype
 * combination, plus the rows*D > 2^31 case of the full grid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"
#include "verify_internal.h"
#include "verify_registry_names.h"

static const int64_t full_D[] = {1, 7, 33, 127, 1000, 1536, 1537, 2048, 3072, 4096, 5119, 5120, 8192, 12288};
static const int64_t full_rows[] = {1, 3, 1560, 32760};
static const int64_t quick_D[] = {1, 33, 1537, 5120};
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
#define COMBO_BF16_F32_BF16 5

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
    int nD, nR, full = 0;
    *sets = NULL;
    *nsets = 0;
    if (!grid) return VERIFY_ERR_ARG;
    if (!strcmp(grid, "full")) {
        Ds = full_D, nD = COUNT(full_D), Rs = full_rows, nR = COUNT(full_rows), full = 1;
    } else if (!strcmp(grid, "quick")) {
        Ds = quick_D, nD = COUNT(quick_D), Rs = quick_rows, nR = COUNT(quick_rows);
    } else if (!strcmp(grid, "smoke")) {
        Ds = smoke_D, nD = COUNT(smoke_D), Rs = smoke_rows, nR = COUNT(smoke_rows);
    } else {
        return VERIFY_ERR_ARG;
    }
    int n = nD * nR * LNMOD_LAYOUT_COUNT * NCOMBOS + full;
    verify_set *s = calloc((size_t)n, sizeof *s);
    if (!s) return VERIFY_ERR_NOMEM;
    int k = 0;
    for (int a = 0; a < nD; a++)
        for (int b = 0; b < nR; b++)
            for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++)
                for (int c = 0; c < NCOMBOS; c++) s[k++] = (verify_set){l, c, Ds[a], Rs[b], 0};
    if (full) s[k++] = (verify_set){LNMOD_PER_SAMPLE, COMBO_BF16_F32_BF16, VERIFY_HUGE_D, VERIFY_HUGE_ROWS, 1};
    *sets = s;
    *nsets = n;
    return VERIFY_OK;
}

/* ---- the cases a grid runs, as the gate compares them ---------------------------------- */

const char *verify_set_direction(const verify_set *s)
{
    (void)s;
    return "fwd"; /* every set of today's grids is a forward case */
}

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

verify_status verify_grid_keys(const char *grid, const char *const *variants, int nvariants, char ***keys,
                               int64_t *nkeys)
{
    *keys = NULL;
    *nkeys = 0;
    verify_set *sets;
    int nsets;
    verify_status st = verify_grid_sets(grid, &sets, &nsets);
    if (st != VERIFY_OK) return st;
    enum { KEYLEN = 128 };
    int64_t n = (int64_t)nsets * nvariants;
    char **k = malloc((size_t)(n > 0 ? n : 1) * (sizeof *k + KEYLEN));
    if (!k) {
        free(sets);
        return VERIFY_ERR_NOMEM;
    }
    char *text = (char *)(k + (n > 0 ? n : 1));
    int64_t i = 0;
    for (int a = 0; a < nsets; a++)
        for (int v = 0; v < nvariants; v++, i++) {
            char dt[64];
            verify_set_dtypes(&sets[a], dt, sizeof dt);
            k[i] = text + i * KEYLEN;
            if (verify_case_key(variants[v], dt, lnmod_layout_name((lnmod_layout)sets[a].layout),
                                verify_set_direction(&sets[a]), sets[a].D, sets[a].rows, k[i], KEYLEN)) {
                free(sets);
                free(k);
                return VERIFY_ERR_ARG;
            }
        }
    free(sets);
    qsort(k, (size_t)n, sizeof *k, key_cmp);
    *keys = k;
    *nkeys = n;
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
