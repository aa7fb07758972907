/* verify_res_grid.c -- see verify_res.h: the fused op's grids, the descriptor of a set and the
 * identity of its cases (in ada_verify_grid: the gate compares records against them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify_res.h"

/* res, branch, mod, out: Wan's first (fp32 residual stream, bf16 branch and out), then 16-bit
 * residuals, an fp16 run, all fp32, a 16-bit modulation. */
static const lnmod_dtype combos[][4] = {
    {LNMOD_F32, LNMOD_BF16, LNMOD_F32, LNMOD_BF16},  {LNMOD_BF16, LNMOD_BF16, LNMOD_F32, LNMOD_BF16},
    {LNMOD_F32, LNMOD_F16, LNMOD_F32, LNMOD_F16},    {LNMOD_F32, LNMOD_F32, LNMOD_F32, LNMOD_F32},
    {LNMOD_F16, LNMOD_F16, LNMOD_F16, LNMOD_F16},    {LNMOD_BF16, LNMOD_BF16, LNMOD_BF16, LNMOD_F32},
};
#define NCOMBOS ((int)(sizeof combos / sizeof combos[0]))

int verify_res_ncombos(void) { return NCOMBOS; }

void verify_res_combo(int k, lnmod_dtype *res, lnmod_dtype *branch, lnmod_dtype *mod, lnmod_dtype *out)
{
    if (k < 0 || k >= NCOMBOS) k = 0;
    *res = combos[k][0], *branch = combos[k][1], *mod = combos[k][2], *out = combos[k][3];
}

const char *verify_res_site_name(int site)
{
    static const char *const n[VERIFY_RES_NSITES] = {"attn", "cross", "ffn"};
    return site >= 0 && site < VERIFY_RES_NSITES ? n[site] : "?";
}

/* One (combination, D, rows) of a grid, run at every site and layout. */
typedef struct {
    int combo;
    int64_t D, rows;
} shape;

/* The sanitizer grid (verify_res_sanitizer_grid): small, since four instrumented runs of every
 * case cost the device ~0.11 s a case (lnmod's quick grid: 2,916 cases, racecheck 326 s) and every res
 * case launches twice. Per site and layout: every dtype combination once at D 33 (odd: the
 * scalar tails, naive's paths) x 3 rows; Wan's dtypes at D 264 (dtile's bulk-ring backward and
 * one-warp general forward), 1536 (dtile's own forward and backward) and 2056 (the general
 * forward's unequal warps) x 160 rows (two samples, partial last frames), and 5119 (dtile's chunk
 * forward on sm_90 at T 512, every phase of its chunks) x 40 rows. With the in-place and no-dh
 * sets: 93 sets, 372 cases for naive + dtile (~55-110 s). */
static const shape sanitizer_shapes[] = {{0, 33, 3},     {1, 33, 3},     {2, 33, 3},     {3, 33, 3},
                                         {4, 33, 3},     {5, 33, 3},     {0, 264, 160},  {0, 1536, 160},
                                         {0, 2056, 160}, {0, 5119, 40}};

verify_status verify_res_grid_sets(const char *grid, verify_res_set **sets, int *nsets)
{
    static const int64_t smoke_D[] = {64}, smoke_R[] = {80}, smoke_C[] = {0, 3};
    static const int64_t quick_D[] = {1, 33, 264}, quick_R[] = {3, 160}, all_C[] = {0, 1, 2, 3, 4, 5};
    static const int64_t full_D[] = {1, 33, 264, 1000, 1536}, full_R[] = {3, 160, 1560};
    enum { NSAN = (int)(sizeof sanitizer_shapes / sizeof sanitizer_shapes[0]) };
    const int64_t *Ds, *Rs, *Cs;
    int nD, nR, nC, san = 0;
    if (!grid || !sets || !nsets) return VERIFY_ERR_ARG;
    *sets = NULL;
    *nsets = 0;
    if (!strcmp(grid, "smoke")) Ds = smoke_D, nD = 1, Rs = smoke_R, nR = 1, Cs = smoke_C, nC = 2;
    else if (!strcmp(grid, "quick")) Ds = quick_D, nD = 3, Rs = quick_R, nR = 2, Cs = all_C, nC = NCOMBOS;
    else if (!strcmp(grid, "full")) Ds = full_D, nD = 5, Rs = full_R, nR = 3, Cs = all_C, nC = NCOMBOS;
    else if (!strcmp(grid, "sanitizer")) Ds = quick_D, nD = 1, Rs = quick_R, nR = 1, Cs = all_C, nC = NSAN, san = 1;
    else return VERIFY_ERR_ARG;
    const int n = VERIFY_RES_NSITES * LNMOD_LAYOUT_COUNT * nC * (san ? 1 : nD * nR) + 9 + 8 * VERIFY_RES_NSITES;
    verify_res_set *s = calloc((size_t)n, sizeof *s);
    if (!s) return VERIFY_ERR_NOMEM;
    int k = 0;
    for (int site = 0; site < VERIFY_RES_NSITES; site++)
        for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++)
            for (int c = 0; c < nC; c++)
                for (int i = 0; i < (san ? 1 : nD); i++)
                    for (int r = 0; r < (san ? 1 : nR); r++) {
                        const shape sh = san ? sanitizer_shapes[c] : (shape){(int)Cs[c], Ds[i], Rs[r]};
                        const verify_res_set v = {site, l, sh.combo, sh.D, sh.rows, 0, 0};
                        s[k++] = v;
                    }
    /* In place (h over r, dr over dh) at the two modulate sites, and a backward without dh. */
    const int64_t D = san ? 1536 : Ds[nD - 1], R = san ? 160 : Rs[nR - 1];
    const verify_res_set extra[3] = {{VERIFY_RES_SITE_FFN, LNMOD_PER_FRAME, 0, D, R, 1, 0},
                                     {VERIFY_RES_SITE_CROSS, LNMOD_PER_SAMPLE, 1, D, R, 1, 0},
                                     {VERIFY_RES_SITE_ATTN, LNMOD_PER_TOKEN, 0, D, R, 0, 1}};
    for (int i = 0; i < 3; i++) s[k++] = extra[i];
    /* The full grid: one sample of more than 65,536 rows at Wan's dtypes, where the bulk
     * backward's chunk plan aims at 512 chunks (lnmod_res_bulk_cpg; odd rows: one sample), at a
     * modulate site and at the affine one (whose dweight/dbias add all ~510 chunks' partials). */
    if (!strcmp(grid, "full")) {
        s[k++] = (verify_res_set){VERIFY_RES_SITE_FFN, LNMOD_PER_SAMPLE, 0, 264, 65601, 0, 0};
        s[k++] = (verify_res_set){VERIFY_RES_SITE_ATTN, LNMOD_PER_SAMPLE, 0, 264, 65601, 0, 0};
        /* dtile's general forward with several warps of unequal element counts (D 2056: 96
         * threads x 3 units, the last warp's third slot on one lane) at each site, and per token. */
        for (int site = 0; site < VERIFY_RES_NSITES; site++)
            s[k++] = (verify_res_set){site, LNMOD_PER_SAMPLE, 0, 2056, 1560, 0, 0};
        s[k++] = (verify_res_set){VERIFY_RES_SITE_FFN, LNMOD_PER_TOKEN, 0, 2056, 160, 0, 0};
        /* dtile's chunk forward (sm_90, lnmod_res_fwd_chunk.cuh; its shapes T, K, R from
         * lnmod_res_fwd_chunk_plan.h) at each site: per sample D 3072 (T 512 K 6 R 3), 5120
         * (K 10 R 2), 4096 (K 8 R 2) and 10240 (K 20 R 1, the largest), per frame the odd D 1001
         * (T 256 K 4 R 4), 5119, 517 (T 128 K 5 R 3) and 6151 (K 13 R 1) -- every phase of a
         * chunk's r and y; with the main loop's 264 (T 64) and 1536 every T and every R. */
        const int64_t chunk_D[8] = {3072, 5120, 1001, 5119, 4096, 10240, 517, 6151};
        for (int site = 0; site < VERIFY_RES_NSITES; site++)
            for (int i = 0; i < 8; i++)
                s[k++] = (verify_res_set){site, i % 4 < 2 ? LNMOD_PER_SAMPLE : LNMOD_PER_FRAME, 0, chunk_D[i], 160, 0, 0};
    }
    *sets = s;
    *nsets = k;
    return VERIFY_OK;
}

const char *verify_res_sanitizer_grid(const char *grid)
{
    return grid && !strcmp(grid, "smoke") ? "smoke" : "sanitizer";
}

lnmod_res_desc verify_res_set_desc(const verify_res_set *s)
{
    lnmod_res_desc d = lnmod_res_desc_default();
    d.rows = s->rows;
    d.D = s->D;
    /* two samples where the rows split evenly; frames that do not divide a sample */
    d.rows_per_sample = s->rows % 2 == 0 ? s->rows / 2 : s->rows;
    d.frame_len = d.rows_per_sample * 2 / 5 > 0 ? d.rows_per_sample * 2 / 5 : 1;
    d.layout = (lnmod_layout)s->layout;
    d.gate = s->site == VERIFY_RES_SITE_CROSS ? LNMOD_RES_GATE_NONE : LNMOD_RES_GATE;
    d.norm = s->site == VERIFY_RES_SITE_ATTN ? LNMOD_RES_AFFINE : LNMOD_RES_MODULATE;
    verify_res_combo(s->combo, &d.res_dtype, &d.branch_dtype, &d.mod_dtype, &d.out_dtype);
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * s->D;
    return d;
}

void verify_res_set_dtypes(const verify_res_set *s, char *buf, size_t n)
{
    lnmod_dtype r, b, m, o;
    verify_res_combo(s->combo, &r, &b, &m, &o);
    snprintf(buf, n, "%s-%s-%s-%s", lnmod_dtype_name(r), lnmod_dtype_name(b), lnmod_dtype_name(m),
             lnmod_dtype_name(o));
}

json_t *verify_res_case_json(const char *variant, const verify_res_set *s, const char *direction)
{
    char dt[64];
    verify_res_set_dtypes(s, dt, sizeof dt);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:b, s:b}", "op", "lnmod_res", "variant", variant,
                     "direction", direction, "site", verify_res_site_name(s->site), "dtypes", dt, "layout",
                     lnmod_layout_name((lnmod_layout)s->layout), "D", (json_int_t)s->D, "rows", (json_int_t)s->rows,
                     "inplace", s->inplace, "dh", !s->no_dh);
}

int verify_res_case_key(const char *variant, const char *site, const char *dtypes, const char *layout,
                        const char *direction, int64_t D, int64_t rows, int inplace, int dh, char *buf, size_t n)
{
    if (!variant || !site || !dtypes || !layout || !direction) return -1;
    int k = snprintf(buf, n, "lnmod_res %s %s %s %s %s D=%lld rows=%lld inplace=%d dh=%d", variant, site, dtypes,
                     layout, direction, (long long)D, (long long)rows, inplace != 0, dh != 0);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

int verify_res_case_key_json(const json_t *c, char *buf, size_t n)
{
    json_t *D = json_object_get(c, "D"), *rows = json_object_get(c, "rows");
    json_t *inplace = json_object_get(c, "inplace"), *dh = json_object_get(c, "dh");
    if (!json_is_integer(D) || !json_is_integer(rows) || !json_is_boolean(inplace) || !json_is_boolean(dh)) return -1;
    return verify_res_case_key(json_string_value(json_object_get(c, "variant")),
                               json_string_value(json_object_get(c, "site")),
                               json_string_value(json_object_get(c, "dtypes")),
                               json_string_value(json_object_get(c, "layout")),
                               json_string_value(json_object_get(c, "direction")), json_integer_value(D),
                               json_integer_value(rows), json_is_true(inplace), json_is_true(dh), buf, n);
}
