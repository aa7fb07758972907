/* verify_grid.c -- the grids of `adaload verify` (verify.h): D x rows x layout x dtype
 * combination, plus the rows*D > 2^31 case of the full grid. */
#include <stdlib.h>
#include <string.h>

#include "verify.h"
#include "verify_internal.h"

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
