/* test_lnmod_desc.c -- Criterion tests of the LayerNorm-Modulate descriptor (lnmod_desc.h):
 * one test per status lnmod_desc_validate can return, the modulation index map m(r) of every
 * layout against hand-written tables, lnmod_fwd_min_bytes, lnmod_fwd_reread_bytes and
 * lnmod_bwd_min_bytes for Wan shapes worked out by hand and their saturation at INT64_MAX on
 * the largest descriptors validate accepts, dtype/layout names and parsing, and the status
 * strings. CPU only.
 *
 *   ctest --test-dir build -R lnmod_desc      or      build/kernels/test_lnmod_desc --verbose
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lnmod_desc.h"

/* Wan 2.1 14B, 480x832, 81 frames: S = 21 * 30 * 52 = 32,760 tokens, D = 5120; two samples;
 * scale/shift are chunk views of e = [B, 6, D], so the batch stride is 6 * D. */
static lnmod_desc wan14b(void)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = 2 * 32760;
    d.D = 5120;
    d.rows_per_sample = 32760;
    d.scale_stride = d.shift_stride = 6 * 5120;
    return d;
}

static lnmod_desc small(lnmod_layout l)
{
    lnmod_desc d = lnmod_desc_default();
    d.layout = l;
    d.rows = 20;
    d.D = 8;
    d.rows_per_sample = 10;
    d.frame_len = 4;
    d.scale_stride = d.shift_stride = 6 * 8;
    return d;
}

Test(validate, ok)
{
    lnmod_desc d = wan14b();
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
    for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++) {
        d = small((lnmod_layout)l);
        cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK, "%s", lnmod_layout_name(d.layout));
    }
    /* Per-token ignores rows_per_sample and frame_len. */
    d = small(LNMOD_PER_TOKEN);
    d.rows_per_sample = 0;
    d.frame_len = -3;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
    /* A single modulation row may have any non-negative stride. */
    d = small(LNMOD_PER_SAMPLE);
    d.rows_per_sample = d.rows;
    d.scale_stride = 0;
    d.shift_stride = 1;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
    /* The smallest positive eps is accepted. */
    d = small(LNMOD_PER_SAMPLE);
    d.eps = 4.9e-324;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
}

Test(validate, default_descriptor)
{
    lnmod_desc d = lnmod_desc_default();
    cr_assert_eq(d.eps, 1e-6);
    cr_assert(d.x_dtype == LNMOD_BF16 && d.y_dtype == LNMOD_BF16 && d.mod_dtype == LNMOD_F32);
    cr_assert_eq(d.layout, LNMOD_PER_SAMPLE);
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_ZERO_DIM); /* sizes still 0 */
}

Test(validate, null_pointer) { cr_assert_eq(lnmod_desc_validate(NULL), LNMOD_ERR_NULL_POINTER); }

Test(validate, zero_dim)
{
    lnmod_desc d;
    d = small(LNMOD_PER_SAMPLE), d.rows = 0;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_ZERO_DIM);
    d = small(LNMOD_PER_SAMPLE), d.rows = -20;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_ZERO_DIM);
    d = small(LNMOD_PER_TOKEN), d.D = 0;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_ZERO_DIM);
    d = small(LNMOD_PER_TOKEN), d.D = -8;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_ZERO_DIM);
    d = small(LNMOD_PER_SAMPLE), d.rows_per_sample = 0;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_ZERO_DIM);
    d = small(LNMOD_PER_FRAME), d.rows_per_sample = -10;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_ZERO_DIM);
    d = small(LNMOD_PER_FRAME), d.frame_len = 0;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_ZERO_DIM);
}

Test(validate, dtype)
{
    const int bad[] = {-1, LNMOD_DTYPE_COUNT, 99};
    for (size_t i = 0; i < 3; i++) {
        lnmod_desc d = small(LNMOD_PER_SAMPLE);
        d.x_dtype = (lnmod_dtype)bad[i];
        cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_DTYPE, "x %d", bad[i]);
        d = small(LNMOD_PER_SAMPLE);
        d.mod_dtype = (lnmod_dtype)bad[i];
        cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_DTYPE, "mod %d", bad[i]);
        d = small(LNMOD_PER_SAMPLE);
        d.y_dtype = (lnmod_dtype)bad[i];
        cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_DTYPE, "y %d", bad[i]);
    }
}

/* All 27 combinations: supported exactly when scale/shift are f32 or x's dtype and y is x's
 * dtype or f32. */
Test(validate, dtype_combo)
{
    int ok = 0;
    for (int x = 0; x < 3; x++)
        for (int m = 0; m < 3; m++)
            for (int y = 0; y < 3; y++) {
                lnmod_desc d = small(LNMOD_PER_SAMPLE);
                d.x_dtype = (lnmod_dtype)x;
                d.mod_dtype = (lnmod_dtype)m;
                d.y_dtype = (lnmod_dtype)y;
                int supported = (m == LNMOD_F32 || m == x) && (y == LNMOD_F32 || y == x);
                ok += supported;
                cr_assert_eq(lnmod_desc_validate(&d), supported ? LNMOD_OK : LNMOD_ERR_DTYPE_COMBO,
                             "x %s mod %s y %s", lnmod_dtype_name(d.x_dtype),
                             lnmod_dtype_name(d.mod_dtype), lnmod_dtype_name(d.y_dtype));
            }
    /* f32 x: 1 * 1; f16 and bf16 x: 2 * 2 each. */
    cr_assert_eq(ok, 9);
}

Test(validate, layout)
{
    lnmod_desc d = small(LNMOD_PER_SAMPLE);
    d.layout = (lnmod_layout)LNMOD_LAYOUT_COUNT;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_LAYOUT);
    d.layout = (lnmod_layout)-1;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_LAYOUT);
}

Test(validate, overflow)
{
    lnmod_desc d;
    /* rows * D itself overflows. */
    d = small(LNMOD_PER_SAMPLE), d.rows = INT64_MAX / 2, d.D = 3, d.rows_per_sample = d.rows;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_OVERFLOW);
    /* rows * D = 2^62 fits, but its fp32 byte count 2^64 does not. */
    d = small(LNMOD_PER_SAMPLE), d.rows = INT64_C(1) << 31, d.D = INT64_C(1) << 31;
    d.rows_per_sample = d.rows;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_OVERFLOW);
    /* ... while 2^60 elements (2^62 bytes) are fine with one modulation row. */
    d.D = INT64_C(1) << 29;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
    /* The last modulation row's end offset (rows - 1) * stride + D overflows. */
    d = small(LNMOD_PER_TOKEN), d.scale_stride = INT64_MAX / 3;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_OVERFLOW);
    /* Its byte offset overflows (for shift this time): 19 * (INT64_MAX / 64) * 4 > INT64_MAX. */
    d = small(LNMOD_PER_TOKEN), d.shift_stride = INT64_MAX / 64;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_OVERFLOW);
}

Test(validate, stride)
{
    lnmod_desc d;
    d = small(LNMOD_PER_SAMPLE), d.scale_stride = d.D - 1; /* two samples would overlap */
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_STRIDE);
    d = small(LNMOD_PER_FRAME), d.shift_stride = d.D - 1;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_STRIDE);
    d = small(LNMOD_PER_TOKEN), d.scale_stride = -48;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_STRIDE);
    d = small(LNMOD_PER_SAMPLE), d.rows_per_sample = d.rows, d.shift_stride = -1;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_STRIDE); /* negative even for one row */
    d = small(LNMOD_PER_TOKEN), d.scale_stride = d.D; /* exactly D: contiguous, fine */
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
}

Test(validate, shape)
{
    lnmod_desc d;
    d = small(LNMOD_PER_SAMPLE), d.rows_per_sample = 7; /* 20 % 7 != 0 */
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_SHAPE);
    d = small(LNMOD_PER_FRAME), d.rows_per_sample = 3;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_SHAPE);
    d = small(LNMOD_PER_FRAME), d.frame_len = 11; /* longer than the sample */
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_SHAPE);
    d = small(LNMOD_PER_FRAME), d.frame_len = 10; /* exactly one frame per sample */
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
}

Test(validate, eps)
{
    const double bad[] = {0.0, -0.0, -1e-6, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lnmod_desc d = small(LNMOD_PER_SAMPLE);
        d.eps = bad[i];
        cr_assert_eq(lnmod_desc_validate(&d), LNMOD_ERR_EPS, "eps %g", bad[i]);
    }
}

/* S = 10 tokens per sample, frames of L = 4 -> F = 3 frames of 4, 4 and 2 rows. Written out
 * by hand: sample 0 rows 0-3 frame 0, 4-7 frame 1, 8-9 frame 2; sample 1 continues at 3. */
Test(mod_index, all_layouts)
{
    static const int64_t per_frame[20] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2,
                                          3, 3, 3, 3, 4, 4, 4, 4, 5, 5};
    lnmod_desc s = small(LNMOD_PER_SAMPLE), t = small(LNMOD_PER_TOKEN),
               f = small(LNMOD_PER_FRAME);
    for (int64_t r = 0; r < 20; r++) {
        cr_assert_eq(lnmod_mod_index(&s, r), r < 10 ? 0 : 1, "sample r=%lld", (long long)r);
        cr_assert_eq(lnmod_mod_index(&t, r), r, "token r=%lld", (long long)r);
        cr_assert_eq(lnmod_mod_index(&f, r), per_frame[r], "frame r=%lld", (long long)r);
    }
    cr_assert_eq(lnmod_frames_per_sample(&f), 3);
    cr_assert_eq(lnmod_frames_per_sample(&s), 1);
    cr_assert_eq(lnmod_frames_per_sample(&t), 1);
    cr_assert_eq(lnmod_mod_rows(&s), 2);
    cr_assert_eq(lnmod_mod_rows(&t), 20);
    cr_assert_eq(lnmod_mod_rows(&f), 6);
    /* frame_len = 1: one frame per token; frame_len = S: one per sample. */
    f.frame_len = 1;
    for (int64_t r = 0; r < 20; r++) cr_assert_eq(lnmod_mod_index(&f, r), r);
    f.frame_len = 10;
    for (int64_t r = 0; r < 20; r++) cr_assert_eq(lnmod_mod_index(&f, r), r / 10);
    /* A Wan-sized per-frame case: 720x1280, 81 frames -> 21 latent frames of 45 * 80 = 3600
     * tokens, S = 75,600. The last token of sample 1 is in frame 20 of sample 1: 21 + 20. */
    lnmod_desc w = wan14b();
    w.layout = LNMOD_PER_FRAME;
    w.rows_per_sample = 75600;
    w.rows = 2 * 75600;
    w.frame_len = 3600;
    cr_assert_eq(lnmod_desc_validate(&w), LNMOD_OK);
    cr_assert_eq(lnmod_mod_index(&w, 2 * 75600 - 1), 41);
    cr_assert_eq(lnmod_mod_index(&w, 75600 + 3600), 22);
    cr_assert_eq(lnmod_mod_rows(&w), 42);
}

/* Wan 14B, 480p, 81 frames, one sample: rows = 32,760, D = 5120, bf16 x and y, fp32
 * per-sample modulation. x: 32,760 * 5120 * 2 B = 335,462,400; y the same; scale + shift:
 * 2 * 1 * 5120 * 4 = 40,960; total 670,965,760 B. Saving fp32 mean and rstd adds
 * 8 * 32,760 = 262,080 B: 671,227,840 B. */
Test(min_bytes, wan_cases)
{
    lnmod_desc d = wan14b();
    d.rows = 32760;
    cr_assert_eq(lnmod_fwd_min_bytes(&d, 0), INT64_C(670965760));
    cr_assert_eq(lnmod_fwd_min_bytes(&d, 1), INT64_C(671227840));
    /* Wan 2.2 TI2V-5B, 704x1280, 121 frames, per-token fp32 modulation: rows = 27,280,
     * D = 3072. x + y: 27,280 * 3072 * 4 = 335,216,640; scale + shift, one row per token:
     * 2 * 27,280 * 3072 * 4 = 670,433,280; total 1,005,649,920 B. */
    lnmod_desc t = lnmod_desc_default();
    t.layout = LNMOD_PER_TOKEN;
    t.rows = 27280;
    t.D = 3072;
    t.scale_stride = t.shift_stride = 6 * 3072;
    cr_assert_eq(lnmod_fwd_min_bytes(&t, 0), INT64_C(1005649920));
    /* fp32 x and y (official Wan residual stream): 32,760 * 5120 * 8 + 40,960. */
    d.x_dtype = d.y_dtype = LNMOD_F32;
    cr_assert_eq(lnmod_fwd_min_bytes(&d, 0), INT64_C(1341849600) + 40960);
}

/* Re-read paths, same Wan 14B row: x three times (3 * 335,462,400), y once (335,462,400) and
 * scale + shift per row (2 * 32,760 * 5120 * 4 = 1,341,849,600): 2,683,699,200 B; with
 * mean and rstd + 262,080. */
Test(min_bytes, reread_wan_case)
{
    lnmod_desc d = wan14b();
    d.rows = 32760;
    cr_assert_eq(lnmod_fwd_reread_bytes(&d, 0), INT64_C(2683699200));
    cr_assert_eq(lnmod_fwd_reread_bytes(&d, 1), INT64_C(2683961280));
}

/* The backward's fewest bytes, Wan 14B one sample as above: x and dy read, dx written
 * (3 * 2 B = 6 B per element: 32,760 * 5120 * 6 = 1,006,387,200), mean and rstd read
 * (8 B per row: 262,080), scale read and dscale, dshift written once per modulation column
 * (3 * 4 B = 12 B: 5120 * 12 = 61,440); total 1,006,710,720 B. Per-token fp32 modulation
 * (Wan 2.2 5B, 27,280 x 3072, bf16 x/dy/dx): 27,280 * 3072 * 6 = 502,824,960, + 8 * 27,280 =
 * 218,240, + 27,280 * 3072 * 12 = 1,005,649,920: 1,508,693,120 B. */
Test(min_bytes, bwd_wan_cases)
{
    lnmod_desc d = wan14b();
    d.rows = 32760;
    cr_assert_eq(lnmod_bwd_min_bytes(&d), INT64_C(1006710720));
    lnmod_desc t = lnmod_desc_default();
    t.layout = LNMOD_PER_TOKEN;
    t.rows = 27280;
    t.D = 3072;
    t.scale_stride = t.shift_stride = 6 * 3072;
    cr_assert_eq(lnmod_bwd_min_bytes(&t), INT64_C(1508693120));
}

/* Descriptors that lnmod_desc_validate accepts go up to rows*D = 2^61 (4 bytes an element
 * must fit): the byte counts saturate at INT64_MAX there instead of overflowing, and stay
 * exact just below. The old code computed rows*D*(x + y bytes) in int64 and wrapped to
 * negative numbers (signed overflow). */
Test(min_bytes, saturate_instead_of_overflowing)
{
    /* rows*D = 2^59, bf16 x/y, fp32 per-sample modulation (one sample): exact forward and
     * backward counts; the re-read count (16 B an element = 2^63) saturates. */
    lnmod_desc d = lnmod_desc_default();
    d.D = INT64_C(1) << 19;
    d.rows = d.rows_per_sample = INT64_C(1) << 40;
    d.scale_stride = d.shift_stride = d.D;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
    cr_assert_eq(lnmod_fwd_min_bytes(&d, 0), (INT64_C(1) << 61) + 8 * d.D);
    cr_assert_eq(lnmod_fwd_min_bytes(&d, 1), (INT64_C(1) << 61) + 8 * d.D + 8 * d.rows);
    cr_assert_eq(lnmod_bwd_min_bytes(&d), INT64_C(6) * (INT64_C(1) << 59) + 8 * d.rows + 12 * d.D);
    cr_assert_eq(lnmod_fwd_reread_bytes(&d, 0), INT64_MAX);
    cr_assert_eq(lnmod_fwd_reread_bytes(&d, 1), INT64_MAX);
    /* rows*D = 2^60 in fp32: 8 B an element is 2^63 -- every count saturates. */
    d.x_dtype = d.y_dtype = LNMOD_F32;
    d.rows = d.rows_per_sample = INT64_C(1) << 41;
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
    cr_assert_eq(lnmod_fwd_min_bytes(&d, 0), INT64_MAX);
    cr_assert_eq(lnmod_fwd_min_bytes(&d, 1), INT64_MAX);
    cr_assert_eq(lnmod_fwd_reread_bytes(&d, 1), INT64_MAX);
    cr_assert_eq(lnmod_bwd_min_bytes(&d), INT64_MAX);
    /* rows*D = 2^60, per-token fp32 modulation at stride D (its end, 2^62 bytes, is about the
     * most validate accepts): the modulation alone is 2^60 * 12 B. */
    lnmod_desc t = lnmod_desc_default();
    t.layout = LNMOD_PER_TOKEN;
    t.x_dtype = t.y_dtype = LNMOD_BF16;
    t.D = INT64_C(1) << 20;
    t.rows = INT64_C(1) << 40;
    t.scale_stride = t.shift_stride = t.D;
    cr_assert_eq(lnmod_desc_validate(&t), LNMOD_OK);
    cr_assert_eq(lnmod_fwd_min_bytes(&t, 1), INT64_MAX);
    cr_assert_eq(lnmod_fwd_reread_bytes(&t, 0), INT64_MAX);
    cr_assert_eq(lnmod_bwd_min_bytes(&t), INT64_MAX);
}

Test(names, dtype)
{
    static const struct { const char *s; lnmod_dtype t; } good[] = {
        {"f32", LNMOD_F32}, {"fp32", LNMOD_F32}, {"f16", LNMOD_F16},
        {"fp16", LNMOD_F16}, {"bf16", LNMOD_BF16}};
    for (size_t i = 0; i < 5; i++) {
        lnmod_dtype t = (lnmod_dtype)77;
        cr_assert_eq(lnmod_dtype_parse(good[i].s, &t), 0, "%s", good[i].s);
        cr_assert_eq(t, good[i].t, "%s", good[i].s);
    }
    static const char *const bad[] = {"", "F32", "float", "bf", "bf16 ", "f64", "fp8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lnmod_dtype t = (lnmod_dtype)77;
        cr_assert_eq(lnmod_dtype_parse(bad[i], &t), -1, "'%s'", bad[i]);
        cr_assert_eq((int)t, 77, "'%s' changed the output", bad[i]);
    }
    lnmod_dtype t;
    cr_assert_eq(lnmod_dtype_parse(NULL, &t), -1);
    cr_assert_eq(lnmod_dtype_parse("f32", NULL), -1);
    cr_assert_str_eq(lnmod_dtype_name(LNMOD_F32), "f32");
    cr_assert_str_eq(lnmod_dtype_name(LNMOD_F16), "f16");
    cr_assert_str_eq(lnmod_dtype_name(LNMOD_BF16), "bf16");
    cr_assert_str_eq(lnmod_dtype_name((lnmod_dtype)3), "?");
    cr_assert_str_eq(lnmod_dtype_name((lnmod_dtype)-1), "?");
    cr_assert_eq(lnmod_dtype_size(LNMOD_F32), 4);
    cr_assert_eq(lnmod_dtype_size(LNMOD_F16), 2);
    cr_assert_eq(lnmod_dtype_size(LNMOD_BF16), 2);
    cr_assert_eq(lnmod_dtype_size((lnmod_dtype)3), 0);
    /* Each name parses back to its dtype. */
    for (int i = 0; i < LNMOD_DTYPE_COUNT; i++) {
        lnmod_dtype back;
        cr_assert_eq(lnmod_dtype_parse(lnmod_dtype_name((lnmod_dtype)i), &back), 0);
        cr_assert_eq((int)back, i);
    }
}

Test(names, layout)
{
    cr_assert_str_eq(lnmod_layout_name(LNMOD_PER_SAMPLE), "sample");
    cr_assert_str_eq(lnmod_layout_name(LNMOD_PER_TOKEN), "token");
    cr_assert_str_eq(lnmod_layout_name(LNMOD_PER_FRAME), "frame");
    cr_assert_str_eq(lnmod_layout_name((lnmod_layout)3), "?");
    for (int i = 0; i < LNMOD_LAYOUT_COUNT; i++) {
        lnmod_layout back = (lnmod_layout)77;
        cr_assert_eq(lnmod_layout_parse(lnmod_layout_name((lnmod_layout)i), &back), 0);
        cr_assert_eq((int)back, i);
    }
    static const char *const bad[] = {"", "Sample", "samples", "per-sample", "?"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lnmod_layout l = (lnmod_layout)77;
        cr_assert_eq(lnmod_layout_parse(bad[i], &l), -1, "'%s'", bad[i]);
        cr_assert_eq((int)l, 77);
    }
    lnmod_layout l;
    cr_assert_eq(lnmod_layout_parse(NULL, &l), -1);
    cr_assert_eq(lnmod_layout_parse("token", NULL), -1);
}

/* Every status has a non-empty message and name, all distinct, names spelled as the enum. */
Test(names, status_strings)
{
    for (int i = 0; i < LNMOD_STATUS_COUNT; i++) {
        const char *m = lnmod_strerror((lnmod_status)i), *n = lnmod_status_name((lnmod_status)i);
        cr_assert(m && m[0], "status %d has no message", i);
        cr_assert(n && strncmp(n, "LNMOD_", 6) == 0, "status %d name '%s'", i, n ? n : "(null)");
        cr_assert_str_neq(m, "unknown status", "status %d", i);
        cr_assert_str_neq(n, "LNMOD_UNKNOWN", "status %d", i);
        for (int j = 0; j < i; j++) {
            cr_assert_str_neq(m, lnmod_strerror((lnmod_status)j), "statuses %d and %d", i, j);
            cr_assert_str_neq(n, lnmod_status_name((lnmod_status)j), "statuses %d and %d", i, j);
        }
    }
    cr_assert_str_eq(lnmod_status_name(LNMOD_OK), "LNMOD_OK");
    cr_assert_str_eq(lnmod_status_name(LNMOD_ERR_STRIDE), "LNMOD_ERR_STRIDE");
    cr_assert_str_eq(lnmod_status_name(LNMOD_ERR_ALLOC), "LNMOD_ERR_ALLOC");
    cr_assert_str_eq(lnmod_strerror(LNMOD_STATUS_COUNT), "unknown status");
    cr_assert_str_eq(lnmod_strerror((lnmod_status)-1), "unknown status");
    cr_assert_str_eq(lnmod_status_name((lnmod_status)-1), "LNMOD_UNKNOWN");
}
