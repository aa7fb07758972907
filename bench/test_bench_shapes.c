/* test_bench_shapes.c -- the shape sets of `adaload bench` pinned: their sizes, unique
 * benchmark names, every hidden size each set promises (the sweep's multiples of 128, its
 * large and odd widths; the wan set's layouts and dtypes at the bar widths; every model of
 * the models set with its name and source; the fused residual op's three sites, their bytes
 * and names read back by runfiles' parser), and that every shape is a valid descriptor. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "bench_peers.h"
#include "bench_shapes.h"
#include "run_name.h"

static ada_shape sh[ADA_MAX_SHAPES];

static int64_t load(const char *set)
{
    int64_t n = ada_shape_set(set, sh, ADA_MAX_SHAPES);
    cr_assert(n > 0, "set %s", set);
    return n;
}

/* Index of the shape with these properties, or -1. */
static int64_t find(int64_t n, int64_t D, int64_t rows, lnmod_layout layout, lnmod_dtype x)
{
    for (int64_t i = 0; i < n; i++)
        if (sh[i].desc.D == D && sh[i].desc.rows == rows && sh[i].desc.layout == layout &&
            sh[i].desc.x_dtype == x)
            return i;
    return -1;
}

static void check_common(const char *set, int64_t n)
{
    char a[ADA_NAME_MAX], b[ADA_NAME_MAX];
    for (int64_t i = 0; i < n; i++) {
        cr_assert_eq(lnmod_desc_validate(&sh[i].desc), LNMOD_OK, "%s[%lld]", set, (long long)i);
        if (sh[i].res) { /* the fused residual op: its own descriptor and bytes */
            cr_assert_eq(lnmod_res_desc_validate(&sh[i].rdesc), LNMOD_OK, "%s[%lld]", set, (long long)i);
            cr_assert_eq(sh[i].rdesc.gate_stride, 6 * sh[i].desc.D);
            cr_assert_eq(sh[i].rdesc.scale_stride, 6 * sh[i].desc.D);
            cr_assert_eq(sh[i].min_bytes, lnmod_res_fwd_min_bytes(&sh[i].rdesc, 1));
            cr_assert_eq(sh[i].bwd_min_bytes, lnmod_res_bwd_min_bytes(&sh[i].rdesc, 1));
        } else {
            cr_assert_eq(sh[i].desc.scale_stride, 6 * sh[i].desc.D);
            cr_assert_eq(sh[i].min_bytes, lnmod_fwd_min_bytes(&sh[i].desc, 0));
        }
        cr_assert_eq(sh[i].graph_k, ada_graph_k(sh[i].min_bytes));
        cr_assert_eq(ada_shape_bench_name(&sh[i], "dtile", a, sizeof a), 0);
        for (int64_t j = 0; j < i; j++) {
            cr_assert_eq(ada_shape_bench_name(&sh[j], "dtile", b, sizeof b), 0);
            cr_assert_str_neq(a, b, "%s: two shapes named %s", set, a);
        }
    }
}

Test(shapes, sizes_of_the_sets)
{
    cr_assert_eq(ada_shape_set("wan", sh, ADA_MAX_SHAPES), 74);
    cr_assert_eq(ada_shape_set("sweep", sh, ADA_MAX_SHAPES), 110);
    cr_assert_eq(ada_shape_set("models", sh, ADA_MAX_SHAPES), 17);
    cr_assert_eq(ada_shape_set("quick", sh, ADA_MAX_SHAPES), 3);
    cr_assert_eq(ada_shape_set("nope", sh, ADA_MAX_SHAPES), -1);
    cr_assert_eq(ada_shape_set(NULL, sh, ADA_MAX_SHAPES), -1);
    cr_assert_eq(ada_shape_set("sweep", sh, 107), -1, "too small an array is an error");
}

Test(shapes, sweep_has_every_width)
{
    int64_t n = load("sweep");
    check_common("sweep", n);
    int64_t want = 0;
    for (int64_t D = 256; D <= 8192; D += 128, want++)
        cr_assert(find(n, D, 32760, LNMOD_PER_SAMPLE, LNMOD_BF16) >= 0, "sweep lacks D %lld", (long long)D);
    /* the larger widths, then a width of each class of issue 21's bar the multiples of 128
     * miss: odd multiples of 64, multiples of 8 but not 64, odd D */
    const int64_t more[] = {10240, 12288, 13824, 14336, 16384, 1088, 1216, 1344, 2112, 3136, 4160, 6208, 8256, 9280, 11328,
                            14400, 16320, 264,   520,   776,   1000, 1032, 1160, 2056, 3080, 5128, 9000,
                            255,   777,   1537,  3001,  5119,  16383};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++, want++)
        cr_assert(find(n, more[i], 32760, LNMOD_PER_SAMPLE, LNMOD_BF16) >= 0, "sweep lacks D %lld",
                  (long long)more[i]);
    /* then the fused op (site 3, Wan's dtypes, one sample), named as the wan set names it */
    const int64_t res[] = {1024, 1152, 1536, 1920, 2048, 2304, 2560, 3072, 3840, 4096, 5120, 6144, 8192, 10240};
    for (size_t i = 0; i < sizeof res / sizeof *res; i++, want++) {
        const ada_shape *r = &sh[n - (int64_t)(sizeof res / sizeof *res) + (int64_t)i];
        cr_assert(r->res && r->rdesc.D == res[i] && r->rdesc.rows == 32760 && r->rdesc.rows_per_sample == 32760 &&
                      r->rdesc.gate == LNMOD_RES_GATE && r->rdesc.norm == LNMOD_RES_MODULATE &&
                      r->rdesc.res_dtype == LNMOD_F32 && r->rdesc.branch_dtype == LNMOD_BF16,
                  "sweep's fused shape %zu is not site 3 at D %lld x 32,760 rows", i, (long long)res[i]);
        char nm[ADA_NAME_MAX], w[ADA_NAME_MAX];
        cr_assert_eq(ada_shape_bench_name(r, "dtile", nm, sizeof nm), 0);
        snprintf(w, sizeof w, "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/D%lld/rows32760", (long long)res[i]);
        cr_assert_str_eq(nm, w);
    }
    cr_assert_eq(n, want, "the sweep has shapes beyond the promised widths");
    for (int64_t i = 0; i < n; i++) {
        if (sh[i].res) continue; /* the fused op's dtypes are its own (checked above) */
        cr_assert_eq(sh[i].desc.mod_dtype, LNMOD_F32);
        cr_assert_eq(sh[i].desc.y_dtype, LNMOD_BF16);
        cr_assert_null(sh[i].model);
    }
}

Test(shapes, wan_layouts_and_dtypes)
{
    int64_t n = load("wan");
    check_common("wan", n);
    const int64_t bar[] = {1536, 2048, 3072, 4096, 5120};
    for (size_t i = 0; i < sizeof bar / sizeof *bar; i++) {
        int64_t D = bar[i], k;
        cr_assert(find(n, D, 32760, LNMOD_PER_TOKEN, LNMOD_BF16) >= 0, "D %lld per token", (long long)D);
        cr_assert((k = find(n, D, 32760, LNMOD_PER_FRAME, LNMOD_BF16)) >= 0, "D %lld per frame", (long long)D);
        /* 480x832, 81 frames: 21 latent frames of 30 x 52 = 1,560 tokens. */
        cr_assert_eq(sh[k].desc.frame_len, 1560);
        cr_assert_eq(lnmod_mod_rows(&sh[k].desc), 21);
        cr_assert(find(n, D, 32760, LNMOD_PER_SAMPLE, LNMOD_F16) >= 0, "D %lld fp16", (long long)D);
        cr_assert(find(n, D, 32760, LNMOD_PER_SAMPLE, LNMOD_F32) >= 0, "D %lld fp32", (long long)D);
    }
    const int64_t wan[] = {1536, 3072, 5120};
    const int64_t rows[] = {1560, 3600, 5460, 12600, 14040, 32400, 32760, 75600};
    for (size_t i = 0; i < sizeof wan / sizeof *wan; i++) {
        for (size_t j = 0; j < sizeof rows / sizeof *rows; j++)
            cr_assert(find(n, wan[i], rows[j], LNMOD_PER_SAMPLE, LNMOD_BF16) >= 0);
        int64_t k = find(n, wan[i], 75600, LNMOD_PER_FRAME, LNMOD_BF16);
        cr_assert(k >= 0);
        cr_assert_eq(sh[k].desc.frame_len, 3600); /* 720x1280: 45 x 80 per latent frame */
        k = find(n, wan[i], 75600, LNMOD_PER_TOKEN, LNMOD_BF16);
        cr_assert(k >= 0);
        cr_assert_eq(lnmod_mod_rows(&sh[k].desc), 75600);
        cr_assert(find(n, wan[i], 75600, LNMOD_PER_SAMPLE, LNMOD_F16) >= 0);
        /* Two 480p 81-frame clips in one call, named with /B2 (the name parser reads it back). */
        k = find(n, wan[i], 65520, LNMOD_PER_SAMPLE, LNMOD_BF16);
        cr_assert(k >= 0);
        cr_assert_eq(sh[k].desc.rows_per_sample, 32760);
        cr_assert_eq(lnmod_mod_rows(&sh[k].desc), 2);
        char nm[ADA_NAME_MAX], want[ADA_NAME_MAX];
        cr_assert_eq(ada_shape_bwd_bench_name(&sh[k], "dtile", nm, sizeof nm), 0);
        snprintf(want, sizeof want, "lnmod_bwd/dtile/bf16-f32-bf16/sample/D%lld/rows65520/B2", (long long)wan[i]);
        cr_assert_str_eq(nm, want);
    }
    char name[ADA_NAME_MAX];
    int64_t k = find(n, 5120, 32760, LNMOD_PER_FRAME, LNMOD_BF16);
    cr_assert_eq(ada_shape_bench_name(&sh[k], "dtile", name, sizeof name), 0);
    cr_assert_str_eq(name, "lnmod_fwd/dtile/bf16-f32-bf16/frame/D5120/rows32760");
}

Test(shapes, models_named_sourced_and_present)
{
    int64_t n = load("models"), nm = 0;
    check_common("models", n);
    const ada_model_shape *m = ada_model_shapes(&nm);
    cr_assert_eq(nm, n);
    for (int64_t i = 0; i < nm; i++) {
        cr_assert(m[i].name && *m[i].name && m[i].source && strlen(m[i].source) > 10);
        int64_t k = find(n, m[i].D, m[i].tokens, LNMOD_PER_SAMPLE, LNMOD_BF16);
        cr_assert(k >= 0, "%s missing", m[i].name);
        cr_assert_str_eq(sh[k].model, m[i].name);
        for (int64_t j = 0; j < i; j++) cr_assert_str_neq(m[i].name, m[j].name);
    }
    /* A few hand-checked entries (public configs: heads x head dim; tokens of one sample). */
    const struct { const char *name; int64_t D, tokens; } hand[] = {
        {"dit-xl-2-256px", 1152, 256},         {"pixart-alpha-1024px", 1152, 4096},
        {"sd3-medium-1024px", 24 * 64, 64 * 64}, {"flux1-1024px", 3072, 4096},
        {"cogvideox-2b-49f", 30 * 64, 13 * 30 * 45}, {"hunyuanvideo-720p-129f", 3072, 33 * 45 * 80},
        {"mochi-1-480p-163f", 3072, 28 * 30 * 53}, {"ltx-video-2b-768x512-121f", 32 * 64, 16 * 16 * 24},
        {"wan2.1-14b-720p-81f", 5120, 75600},    {"wan2.2-5b-704p-121f", 3072, 31 * 22 * 40},
    };
    for (size_t h = 0; h < sizeof hand / sizeof *hand; h++) {
        int found = 0;
        for (int64_t i = 0; i < nm; i++)
            if (!strcmp(m[i].name, hand[h].name)) {
                cr_assert_eq(m[i].D, hand[h].D, "%s", hand[h].name);
                cr_assert_eq(m[i].tokens, hand[h].tokens, "%s", hand[h].name);
                found = 1;
            }
        cr_assert(found, "%s", hand[h].name);
    }
}

Test(shapes, json_lists_layout_model_and_frames)
{
    int64_t n = load("models");
    json_t *j = ada_shapes_json(sh, n);
    cr_assert_not_null(j);
    cr_assert_eq((int64_t)json_array_size(j), n);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(j, 0), "model")), "dit-xl-2-256px");
    json_decref(j);
    n = load("wan");
    j = ada_shapes_json(sh, n);
    int64_t k = find(n, 1536, 32760, LNMOD_PER_FRAME, LNMOD_BF16);
    json_t *o = json_array_get(j, (size_t)k);
    cr_assert_str_eq(json_string_value(json_object_get(o, "layout")), "frame");
    cr_assert_eq(json_integer_value(json_object_get(o, "frame_len")), 1560);
    cr_assert_eq(json_integer_value(json_object_get(o, "mod_rows")), 21);
    cr_assert_null(json_object_get(o, "model"));
    json_decref(j);
}

/* The backward's names and bytes: lnmod_bwd_min_bytes (read x and dy, write dx, 8 B a row of
 * statistics, each modulation row's scale read and dscale, dshift written) and its own graph
 * K; the JSON the peers read carries both directions. */
Test(shapes, backward_names_bytes_and_json)
{
    int64_t n = load("quick");
    cr_assert_eq(n, 3);
    /* bf16 D1536 rows1560: 1560*1536*(2+2+2) + 8*1560 + 1536*3*4 bytes. */
    cr_assert_eq(sh[0].bwd_min_bytes, (int64_t)1560 * 1536 * 6 + 8 * 1560 + 1536 * 12);
    cr_assert_eq(sh[0].bwd_graph_k, 5);
    cr_assert_eq(sh[0].graph_k, 7);
    char name[ADA_NAME_MAX];
    cr_assert_eq(ada_shape_bwd_bench_name(&sh[0], "dtile", name, sizeof name), 0);
    cr_assert_str_eq(name, "lnmod_bwd/dtile/bf16-f32-bf16/sample/D1536/rows1560/graph5");
    cr_assert_eq(ada_shape_bwd_bench_name(&sh[1], "naive", name, sizeof name), 0);
    cr_assert_str_eq(name, "lnmod_bwd/naive/bf16-f32-bf16/sample/D5120/rows32760");
    /* fp32 x: 4-byte x, dy and dx. */
    cr_assert_eq(sh[2].bwd_min_bytes, (int64_t)32760 * 3072 * 12 + 8 * 32760 + 3072 * 12);
    json_t *j = ada_shapes_json(sh, n);
    json_t *o = json_array_get(j, 0);
    cr_assert_str_eq(json_string_value(json_object_get(o, "bwd_suffix")), "bf16-f32-bf16/sample/D1536/rows1560/graph5");
    char copy[ADA_NAME_MAX];
    cr_assert_eq(ada_copy_bench_name(sh[0].bwd_min_bytes, copy, sizeof copy), 0);
    cr_assert_str_eq(json_string_value(json_object_get(o, "bwd_copy_name")), copy);
    cr_assert_eq(json_integer_value(json_object_get(o, "bwd_min_bytes")), sh[0].bwd_min_bytes);
    cr_assert_eq(json_integer_value(json_object_get(o, "bwd_graph_k")), 5);
    json_decref(j);
    /* Every backward name of every set is distinct from every other and from the forward's. */
    const char *sets[] = {"wan", "sweep", "models", "quick"};
    for (int k = 0; k < 4; k++) {
        int64_t m = load(sets[k]);
        for (int64_t a = 0; a < m; a++) {
            char x[ADA_NAME_MAX], y[ADA_NAME_MAX];
            cr_assert_eq(ada_shape_bwd_bench_name(&sh[a], "dtile", x, sizeof x), 0);
            cr_assert(sh[a].bwd_min_bytes > sh[a].min_bytes);
            for (int64_t b = 0; b < a; b++) {
                cr_assert_eq(ada_shape_bwd_bench_name(&sh[b], "dtile", y, sizeof y), 0);
                cr_assert_str_neq(x, y);
            }
        }
    }
}

/* The shape list the peers script reads carries our copies' bandwidths (the one ceiling of
 * issue 17), each beside the copy it belongs to; none where we have none. */
Test(shapes, peers_list_carries_our_ceilings)
{
    int64_t n = load("quick");
    ada_peer_ceiling c[3] = {{3.9e12, 4.1e12}, {0, 0}, {2.5e12, 0}};
    json_t *j = ada_peers_shapes_json(sh, n, c);
    cr_assert_not_null(j);
    cr_assert_eq((int64_t)json_array_size(j), n);
    json_t *o = json_array_get(j, 0);
    cr_expect_float_eq(json_real_value(json_object_get(o, "copy_bytes_per_second")), 3.9e12, 1);
    cr_expect_float_eq(json_real_value(json_object_get(o, "bwd_copy_bytes_per_second")), 4.1e12, 1);
    o = json_array_get(j, 1);
    cr_expect_null(json_object_get(o, "copy_bytes_per_second"));
    cr_expect_null(json_object_get(o, "bwd_copy_bytes_per_second"));
    o = json_array_get(j, 2);
    cr_expect_float_eq(json_real_value(json_object_get(o, "copy_bytes_per_second")), 2.5e12, 1);
    cr_expect_null(json_object_get(o, "bwd_copy_bytes_per_second"));
    json_decref(j);
    j = ada_peers_shapes_json(sh, n, NULL);
    cr_expect_null(json_object_get(json_array_get(j, 0), "copy_bytes_per_second"));
    json_decref(j);
}

/* Index of the fused op's shape at this site, D, rows and samples, or -1. */
static int64_t find_res(int64_t n, int site, int64_t D, int64_t rows, int64_t B)
{
    for (int64_t i = 0; i < n; i++)
        if (sh[i].res && sh[i].site == site && sh[i].rdesc.D == D && sh[i].rdesc.rows == rows &&
            sh[i].rdesc.rows == B * sh[i].rdesc.rows_per_sample)
            return i;
    return -1;
}

/* The fused gated residual op's shapes (issue 22): the wan set's last 15, first the 9 of site 3
 * at the Wan widths, named lnmod_res_fwd/lnmod_res_bwd with four dtypes, and their minimal
 * bytes written out here from the op (kernels/experiments/2026-12-02-res/README.md, "The
 * floors") rather than from lnmod_res_*_min_bytes, so a wrong count in the owner or a shape
 * fails. */
Test(shapes, res_names_and_bytes)
{
    int64_t n = load("wan"), nres = 0;
    check_common("wan", n);
    for (int64_t i = 0; i < n; i++) {
        if (!sh[i].res) {
            cr_assert_eq(nres, 0, "the res shapes come last");
            continue;
        }
        nres++;
        const lnmod_res_desc *r = &sh[i].rdesc;
        cr_assert_eq(sh[i].site, nres <= 9 ? 3 : nres <= 12 ? 1 : 2, "site 3's 9 shapes first, then site 1, site 2");
        cr_assert_eq(r->res_dtype, LNMOD_F32);
        cr_assert_eq(r->branch_dtype, LNMOD_BF16);
        cr_assert_eq(r->out_dtype, LNMOD_BF16);
        cr_assert_eq(r->mod_dtype, LNMOD_F32);
        cr_assert_eq(r->layout, LNMOD_PER_SAMPLE);
        cr_assert(r->rows >= 32760);
        cr_assert_eq(sh[i].graph_k, 0);
        cr_assert_eq(sh[i].bwd_graph_k, 0);
        if (sh[i].site != 3) continue; /* res_sites_1_and_2 */
        cr_assert_eq(r->gate, LNMOD_RES_GATE);
        cr_assert_eq(r->norm, LNMOD_RES_MODULATE);
        int64_t D = r->D, rows = r->rows, B = rows / r->rows_per_sample;
        /* fwd: r 4 + y 2 read, h 4 + out 2 written an element; mean/rstd 8 a row; a gate,
         * scale and shift row (fp32) a sample. bwd: h 4 + d_out 2 + dh 4 + y 2 read, dr 4 + dy
         * 2 written; mean/rstd 8 a row; gate and scale read, dgate, dscale, dshift written. */
        cr_assert_eq(sh[i].min_bytes, 12 * rows * D + 8 * rows + 3 * 4 * D * B);
        cr_assert_eq(sh[i].bwd_min_bytes, 18 * rows * D + 8 * rows + 5 * 4 * D * B);
    }
    cr_assert_eq(nres, 15);
    char name[ADA_NAME_MAX], copy[ADA_NAME_MAX];
    int64_t k = find_res(n, 3, 1536, 32760, 1); /* the experiment's 604.1 MB and 906.0 MB */
    cr_assert_eq(k, n - 15);
    cr_assert_eq(sh[k].min_bytes, 604112832);
    cr_assert_eq(sh[k].bwd_min_bytes, 906041280);
    cr_assert_eq(ada_shape_bench_name(&sh[k], "dtile", name, sizeof name), 0);
    cr_assert_str_eq(name, "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/D1536/rows32760");
    cr_assert_eq(ada_shape_bwd_bench_name(&sh[k], "naive", name, sizeof name), 0);
    cr_assert_str_eq(name, "lnmod_res_bwd/naive/f32-bf16-f32-bf16/sample/D1536/rows32760");
    cr_assert_eq(ada_copy_bench_name(sh[k].bwd_min_bytes, copy, sizeof copy), 0);
    cr_assert_str_eq(copy, "copy/bytes906041280");
    k = find_res(n, 3, 5120, 65520, 2); /* D5120, two samples of 32,760 rows */
    cr_assert(k >= 0);
    cr_assert_eq(ada_shape_bwd_bench_name(&sh[k], "dtile", name, sizeof name), 0);
    cr_assert_str_eq(name, "lnmod_res_bwd/dtile/f32-bf16-f32-bf16/sample/D5120/rows65520/B2");
    cr_assert_eq(sh[k].bwd_min_bytes, 6039052160LL);
    /* D5120, 32,760 rows: 2013.1 MB and 3019.5 MB in the experiment's table. */
    int64_t k5 = find_res(n, 3, 5120, 32760, 1);
    cr_assert(k5 >= 0);
    cr_assert_eq(sh[k5].min_bytes, 2013097920LL);
    cr_assert_eq(sh[k5].bwd_min_bytes, 3019526080LL);
    /* The JSON the peers read marks the op and carries its dtypes and site. */
    json_t *a = ada_shapes_json(sh, n);
    cr_assert_not_null(a);
    json_t *o = json_array_get(a, (size_t)k);
    cr_assert_str_eq(json_string_value(json_object_get(o, "op")), "lnmod_res");
    cr_assert_str_eq(json_string_value(json_object_get(o, "branch_dtype")), "bf16");
    cr_assert_str_eq(json_string_value(json_object_get(o, "res_dtype")), "f32");
    cr_assert(json_is_true(json_object_get(o, "gate")));
    cr_assert_eq(json_integer_value(json_object_get(o, "site")), 3);
    cr_assert_eq(json_integer_value(json_object_get(o, "rows_per_sample")), 32760);
    cr_assert_eq(json_integer_value(json_object_get(o, "mod_stride")), 6 * 5120);
    cr_assert_eq(json_integer_value(json_object_get(o, "gate_stride")), 6 * 5120);
    cr_assert_null(json_object_get(json_array_get(a, 0), "op"), "lnmod shapes have no op");
    cr_assert_null(json_object_get(json_array_get(a, 0), "site"), "lnmod shapes have no site");
    json_decref(a);
}

/* Sites 1 and 2 of Wan's block (kernels/lnmod_res_design.md) at one 480p 81-frame clip: their
 * descriptors, their bytes written out from the op (site 1: one gate row, and weight and bias
 * of D each; site 2: no gate -- y is not read backward, no gate row, no dgate), their names
 * with the site after the layout, read back by the one parser with the same site, shape and a
 * slice of their own, and the site in the JSON the peers read. */
Test(shapes, res_sites_1_and_2)
{
    int64_t n = load("wan");
    const int64_t wan[] = {1536, 3072, 5120};
    const int64_t rows = 32760;
    json_t *a = ada_shapes_json(sh, n);
    cr_assert_not_null(a);
    for (int site = 1; site <= 2; site++)
        for (size_t i = 0; i < sizeof wan / sizeof *wan; i++) {
            int64_t D = wan[i], k = find_res(n, site, D, rows, 1);
            cr_assert(k >= 0, "site %d D %lld", site, (long long)D);
            const lnmod_res_desc *r = &sh[k].rdesc;
            cr_assert_eq(r->gate, site == 1 ? LNMOD_RES_GATE : LNMOD_RES_GATE_NONE);
            cr_assert_eq(r->norm, site == 1 ? LNMOD_RES_AFFINE : LNMOD_RES_MODULATE);
            cr_assert_eq(r->scale_stride, 6 * D);
            cr_assert_eq(r->shift_stride, 6 * D);
            if (site == 1) {
                cr_assert_eq(sh[k].min_bytes, 12 * rows * D + 8 * rows + 3 * 4 * D);
                cr_assert_eq(sh[k].bwd_min_bytes, 18 * rows * D + 8 * rows + 5 * 4 * D);
            } else { /* bwd: h 4 + d_out 2 + dh 4 read, dr 4 + dy 2 written; scale, dscale, dshift */
                cr_assert_eq(sh[k].min_bytes, 12 * rows * D + 8 * rows + 2 * 4 * D);
                cr_assert_eq(sh[k].bwd_min_bytes, 16 * rows * D + 8 * rows + 3 * 4 * D);
            }
            char name[ADA_NAME_MAX], want[ADA_NAME_MAX];
            ada_bench_name b;
            cr_assert_eq(ada_shape_bench_name(&sh[k], "dtile", name, sizeof name), 0);
            snprintf(want, sizeof want, "lnmod_res_fwd/dtile/f32-bf16-f32-bf16/sample/site%d/D%lld/rows32760", site,
                     (long long)D);
            cr_assert_str_eq(name, want);
            cr_assert_eq(ada_bench_name_parse(name, &b), 0, "%s", name);
            cr_assert_eq(b.site, site);
            cr_assert_eq(b.D, D);
            cr_assert_eq(ada_shape_bwd_bench_name(&sh[k], "torch_eager", name, sizeof name), 0);
            cr_assert_eq(ada_bench_name_parse(name, &b), 0, "%s", name);
            cr_assert_eq(b.site, site);
            cr_assert_str_eq(b.dir, "bwd");
            char slice[96];
            snprintf(slice, sizeof slice, "f32-bf16-f32-bf16/sample/site%d/rows32760", site);
            cr_assert_str_eq(b.slice, slice);
            json_t *o = json_array_get(a, (size_t)k);
            cr_assert_eq(json_integer_value(json_object_get(o, "site")), site);
            cr_assert_eq(json_is_true(json_object_get(o, "gate")), site == 1);
            cr_assert_str_eq(json_string_value(json_object_get(o, "norm")), site == 1 ? "affine" : "modulate");
        }
    json_decref(a);
    /* The site 3 names read back as site 3 (no site part). */
    char name[ADA_NAME_MAX];
    ada_bench_name b;
    cr_assert_eq(ada_shape_bench_name(&sh[find_res(n, 3, 3072, 75600, 1)], "dtile", name, sizeof name), 0);
    cr_assert_eq(ada_bench_name_parse(name, &b), 0);
    cr_assert_eq(b.site, 3);
    /* No other site: a descriptor validation rejects and no name. */
    ada_shape bad = ada_shape_make_res(1536, 64, 1, 4, LNMOD_BF16, LNMOD_BF16);
    cr_assert_eq(bad.site, 0);
    cr_assert_neq(lnmod_res_desc_validate(&bad.rdesc), LNMOD_OK);
    cr_assert_eq(ada_shape_bench_name(&bad, "dtile", name, sizeof name), -1);
    bad = ada_shape_make_res(1536, 64, 1, 0, LNMOD_BF16, LNMOD_BF16);
    cr_assert_neq(lnmod_res_desc_validate(&bad.rdesc), LNMOD_OK);
}
