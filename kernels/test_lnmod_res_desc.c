/* test_lnmod_res_desc.c -- Criterion tests of lnmod_res_desc (lnmod_res_desc.h): every status
 * lnmod_res_desc_validate returns and which fields it looks at under each gate/norm, the
 * pointer rules of the forward's and backward's inputs, the maps, and the minimal byte counts
 * at Wan shapes worked out by hand (and their saturation). CPU only.
 *
 *   ctest --test-dir build -R lnmod_res_desc */
#include <criterion/criterion.h>
#include <stdint.h>

#include "lnmod_res_desc.h"

/* Wan 2.1 14B, 480x832, 81 frames, one sample: the site after self-attention. */
static lnmod_res_desc wan14b(void)
{
    lnmod_res_desc d = lnmod_res_desc_default();
    d.rows = 32760;
    d.D = 5120;
    d.rows_per_sample = 32760;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * 5120;
    return d;
}

static lnmod_res_desc small(lnmod_layout l, lnmod_res_gate g, lnmod_res_norm n)
{
    lnmod_res_desc d = lnmod_res_desc_default();
    d.layout = l;
    d.gate = g;
    d.norm = n;
    d.rows = 20;
    d.D = 8;
    d.rows_per_sample = 10;
    d.frame_len = 4;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * 8;
    return d;
}

Test(res_validate, ok_everywhere)
{
    lnmod_res_desc d = wan14b();
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_OK);
    for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++)
        for (int g = 0; g < LNMOD_RES_GATE_COUNT; g++)
            for (int n = 0; n < LNMOD_RES_NORM_COUNT; n++) {
                d = small((lnmod_layout)l, (lnmod_res_gate)g, (lnmod_res_norm)n);
                cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_OK, "%d %d %d", l, g, n);
            }
    cr_assert_eq(lnmod_res_desc_validate(NULL), LNMOD_ERR_NULL_POINTER);
}

Test(res_validate, enums_and_dtypes)
{
    lnmod_res_desc d = wan14b();
    d.gate = (lnmod_res_gate)2;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_LAYOUT);
    d = wan14b();
    d.norm = (lnmod_res_norm)-1;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_LAYOUT);
    d = wan14b();
    d.layout = LNMOD_LAYOUT_COUNT;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_LAYOUT);
    lnmod_dtype *fields[4] = {&d.res_dtype, &d.branch_dtype, &d.mod_dtype, &d.out_dtype};
    for (int f = 0; f < 4; f++) {
        d = wan14b(); /* fields[] point into d, which is reassigned in place */
        *fields[f] = LNMOD_DTYPE_COUNT;
        cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_DTYPE, "field %d", f);
    }
    /* res, mod, out: fp32 or the branch's dtype; branch fp16 with a bf16 res is refused. */
    for (int f = 0; f < 4; f++) {
        d = wan14b();
        d.branch_dtype = LNMOD_F16;
        d.res_dtype = d.mod_dtype = d.out_dtype = LNMOD_F16;
        if (f == 0) {
            d.branch_dtype = LNMOD_F32; /* then everything fp16 is refused */
            cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_DTYPE_COMBO);
            continue;
        }
        cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_OK);
        *(f == 1 ? &d.res_dtype : f == 2 ? &d.mod_dtype : &d.out_dtype) = LNMOD_BF16;
        cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_DTYPE_COMBO, "field %d", f);
    }
}

/* The geometry is lnmod_desc's: each rule shows up here, for the use that has it. */
Test(res_validate, geometry_per_use)
{
    lnmod_res_desc d = wan14b();
    d.D = 0;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_ZERO_DIM);
    d = wan14b();
    d.eps = 0.0;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_EPS);
    d = wan14b();
    d.rows = 32761;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_SHAPE);
    d = small(LNMOD_PER_SAMPLE, LNMOD_RES_GATE, LNMOD_RES_MODULATE);
    d.gate_stride = 7; /* two gate rows of 8 would overlap */
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_STRIDE);
    d.gate = LNMOD_RES_GATE_NONE; /* the gate's stride is not looked at without a gate */
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_OK);
    d.shift_stride = -1;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_STRIDE);
    d.norm = LNMOD_RES_AFFINE; /* weight/bias [D]: their strides are not looked at */
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_OK);
    d.rows_per_sample = 0; /* nor the layout fields, when nothing uses the map */
    d.frame_len = -5;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_OK);
    d.gate = LNMOD_RES_GATE; /* a gate uses them */
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_ZERO_DIM);
    d = small(LNMOD_PER_FRAME, LNMOD_RES_GATE_NONE, LNMOD_RES_MODULATE);
    d.frame_len = 11;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_SHAPE);
    d = wan14b();
    d.gate_stride = INT64_MAX / 2;
    d.rows = 2 * 32760;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_OVERFLOW);
    d = small(LNMOD_PER_TOKEN, LNMOD_RES_GATE_NONE, LNMOD_RES_AFFINE);
    d.rows = INT64_MAX / 8;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_ERR_OVERFLOW);
}

Test(res_inputs, pointer_rules)
{
    const float buf[1] = {0};
    lnmod_res_desc d = wan14b();
    lnmod_res_fwd_in f = {buf, buf, buf, buf, buf};
    cr_assert_eq(lnmod_res_check_fwd_in(&d, &f), LNMOD_OK);
    cr_assert_eq(lnmod_res_check_fwd_in(&d, NULL), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_check_fwd_in(NULL, &f), LNMOD_ERR_NULL_POINTER);
    for (int i = 0; i < 5; i++) {
        lnmod_res_fwd_in g = f;
        const void **p = i == 0 ? &g.r : i == 1 ? &g.y : i == 2 ? &g.gate : i == 3 ? &g.scale : &g.shift;
        *p = NULL;
        cr_assert_eq(lnmod_res_check_fwd_in(&d, &g), LNMOD_ERR_NULL_POINTER, "input %d", i);
    }
    d.gate = LNMOD_RES_GATE_NONE;
    f.gate = NULL;
    cr_assert_eq(lnmod_res_check_fwd_in(&d, &f), LNMOD_OK);
    d.D = 0; /* pointers first, then the descriptor */
    cr_assert_eq(lnmod_res_check_fwd_in(&d, &f), LNMOD_ERR_ZERO_DIM);

    d = wan14b();
    lnmod_res_bwd_in b = {buf, buf, buf, buf, buf, NULL, buf, buf};
    cr_assert_eq(lnmod_res_check_bwd_in(&d, &b), LNMOD_OK, "dh is optional");
    for (int i = 0; i < 7; i++) {
        lnmod_res_bwd_in c = b;
        switch (i) {
        case 0: c.h = NULL; break;
        case 1: c.y = NULL; break;
        case 2: c.gate = NULL; break;
        case 3: c.scale = NULL; break;
        case 4: c.dout = NULL; break;
        case 5: c.mean = NULL; break;
        default: c.rstd = NULL; break;
        }
        cr_assert_eq(lnmod_res_check_bwd_in(&d, &c), LNMOD_ERR_NULL_POINTER, "input %d", i);
    }
    d.gate = LNMOD_RES_GATE_NONE; /* y and gate are not needed without a gate */
    b.y = b.gate = NULL;
    cr_assert_eq(lnmod_res_check_bwd_in(&d, &b), LNMOD_OK);
}

Test(res_outputs, pointer_rules)
{
    float buf[1];
    lnmod_res_desc d = wan14b();
    lnmod_res_fwd_out f = {buf, buf, NULL, NULL};
    cr_assert_eq(lnmod_res_check_fwd_out(&d, &f), LNMOD_OK, "stats are optional");
    f.h = NULL;
    cr_assert_eq(lnmod_res_check_fwd_out(&d, &f), LNMOD_ERR_NULL_POINTER);
    f = (lnmod_res_fwd_out){buf, NULL, buf, buf};
    cr_assert_eq(lnmod_res_check_fwd_out(&d, &f), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_check_fwd_out(&d, NULL), LNMOD_ERR_NULL_POINTER);
    lnmod_res_bwd_out b = {buf, buf, buf, buf, buf};
    cr_assert_eq(lnmod_res_check_bwd_out(&d, &b), LNMOD_OK);
    for (int i = 0; i < 5; i++) {
        lnmod_res_bwd_out c = b;
        void **p = i == 0 ? &c.dr : i == 1 ? &c.dy : i == 2 ? &c.dgate : i == 3 ? &c.dscale : &c.dshift;
        *p = NULL;
        cr_assert_eq(lnmod_res_check_bwd_out(&d, &c), LNMOD_ERR_NULL_POINTER, "output %d", i);
    }
    d.gate = LNMOD_RES_GATE_NONE;
    b.dgate = NULL;
    cr_assert_eq(lnmod_res_check_bwd_out(&d, &b), LNMOD_OK, "no dgate without a gate");
}

Test(res_maps, rows_and_indices)
{
    lnmod_res_desc d = small(LNMOD_PER_FRAME, LNMOD_RES_GATE, LNMOD_RES_MODULATE);
    /* S = 10, L = 4: frames of 4, 4, 2 rows; 2 samples -> 6 modulation rows. */
    cr_assert_eq(lnmod_res_mod_rows(&d), 6);
    cr_assert_eq(lnmod_res_norm_rows(&d), 6);
    const int64_t want[20] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5};
    for (int64_t i = 0; i < 20; i++) {
        cr_assert_eq(lnmod_res_mod_index(&d, i), want[i], "row %lld", (long long)i);
        cr_assert_eq(lnmod_res_norm_index(&d, i), want[i]);
    }
    d.norm = LNMOD_RES_AFFINE;
    cr_assert_eq(lnmod_res_norm_rows(&d), 1);
    cr_assert_eq(lnmod_res_mod_rows(&d), 6);
    for (int64_t i = 0; i < 20; i++) cr_assert_eq(lnmod_res_norm_index(&d, i), 0);
    d = small(LNMOD_PER_TOKEN, LNMOD_RES_GATE, LNMOD_RES_MODULATE);
    cr_assert_eq(lnmod_res_mod_rows(&d), 20);
    cr_assert_eq(lnmod_res_mod_index(&d, 13), 13);
}

/* By hand: n = 32760 * 5120 = 167,731,200 elements. Forward: r 4 + y 2 + h 4 + out 2 = 12
 * bytes an element = 2,012,774,400; the gate row 5120 * 4 = 20,480, scale and shift 40,960;
 * stats 32760 * 8 = 262,080. Backward: h 4 + dr 4 + d_out 2 + dy 2 + dh 4 + y 2 = 18 bytes
 * an element = 3,019,161,600; stats 262,080; scale, dscale, dshift 61,440; gate, dgate 40,960. */
Test(res_bytes, wan14b_by_hand)
{
    lnmod_res_desc d = wan14b();
    cr_assert_eq(lnmod_res_fwd_min_bytes(&d, 0), 2012774400LL + 20480 + 40960);
    cr_assert_eq(lnmod_res_fwd_min_bytes(&d, 1), 2012774400LL + 20480 + 40960 + 262080);
    cr_assert_eq(lnmod_res_bwd_min_bytes(&d, 1), 3019161600LL + 262080 + 61440 + 40960);
    /* without dh: 4 bytes an element fewer; without a gate: y and the gate rows go too */
    cr_assert_eq(lnmod_res_bwd_min_bytes(&d, 0), 3019161600LL - 4 * 167731200LL + 262080 + 61440 + 40960);
    d.gate = LNMOD_RES_GATE_NONE;
    cr_assert_eq(lnmod_res_fwd_min_bytes(&d, 0), 2012774400LL + 40960);
    cr_assert_eq(lnmod_res_bwd_min_bytes(&d, 1), 16 * 167731200LL + 262080 + 61440);
    /* norm3: affine weight/bias of one row, the gate per sample of B = 2 */
    d = wan14b();
    d.rows = 2 * 32760;
    d.norm = LNMOD_RES_AFFINE;
    cr_assert_eq(lnmod_res_fwd_min_bytes(&d, 0), 2 * 2012774400LL + 2 * 20480 + 40960);
    /* saturation at the largest rows*D validate accepts */
    d = small(LNMOD_PER_TOKEN, LNMOD_RES_GATE_NONE, LNMOD_RES_AFFINE);
    d.D = 1;
    d.rows = INT64_MAX / 4;
    cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_OK);
    cr_assert_eq(lnmod_res_fwd_min_bytes(&d, 1), INT64_MAX);
    cr_assert_eq(lnmod_res_bwd_min_bytes(&d, 1), INT64_MAX);
}
