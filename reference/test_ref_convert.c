/* test_ref_convert.c -- Criterion tests of the reference's exact fp32/fp64 <-> bf16/fp16
 * conversions: exhaustive over all patterns, ties to even, subnormals, single rounding,
 * nearest rounding of random doubles, ulp, load/store. Part of test_reference. */
#include "test_ref_helpers.h"

/* ---- conversions ------------------------------------------------------------------------- */

/* Every bf16 pattern: the decoded fp32 equals the ldexp-of-fields value, and converting back
 * (from fp32 and from double) gives the same pattern; NaNs stay NaNs with their sign. */
Test(convert, bf16_exhaustive)
{
    long bad = 0, first = -1;
    for (uint32_t u = 0; u < 65536; u++) {
        uint16_t h = (uint16_t)u;
        float f = ref_bf16_to_f32(h);
        double want = dec_bf16(h);
        int ok;
        if (isnan(want)) {
            uint16_t b1 = ref_f32_to_bf16(f), b2 = ref_f64_to_bf16((double)f);
            ok = isnan(f) && is_nan16(b1, 8, 7) && is_nan16(b2, 8, 7) &&
                 (b1 & 0x8000) == (h & 0x8000) && (b2 & 0x8000) == (h & 0x8000);
        } else {
            ok = (double)f == want && !!signbit(f) == !!signbit(want) &&
                 ref_f32_to_bf16(f) == h && ref_f64_to_bf16(want) == h;
        }
        if (!ok && bad++ == 0) first = (long)u;
    }
    cr_assert_eq(bad, 0, "%ld bf16 patterns wrong, first 0x%04lx", bad, first);
}

Test(convert, f16_exhaustive)
{
    long bad = 0, first = -1;
    for (uint32_t u = 0; u < 65536; u++) {
        uint16_t h = (uint16_t)u;
        float f = ref_f16_to_f32(h);
        double want = dec_f16(h);
        int ok;
        if (isnan(want)) {
            uint16_t b1 = ref_f32_to_f16(f), b2 = ref_f64_to_f16((double)f);
            ok = isnan(f) && is_nan16(b1, 5, 10) && is_nan16(b2, 5, 10) &&
                 (b1 & 0x8000) == (h & 0x8000) && (b2 & 0x8000) == (h & 0x8000);
        } else {
            ok = (double)f == want && !!signbit(f) == !!signbit(want) &&
                 ref_f32_to_f16(f) == h && ref_f64_to_f16(want) == h;
        }
        if (!ok && bad++ == 0) first = (long)u;
    }
    cr_assert_eq(bad, 0, "%ld f16 patterns wrong, first 0x%04lx", bad, first);
}

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* fp32 values exactly halfway between two adjacent bf16 values (the fp32 whose low 16 bits
 * are 0x8000) round to the even one; one fp32 ulp either side rounds to the nearer. Covers
 * every adjacent pair, both signs, subnormals, and the top pair (max finite, Inf). */
Test(convert, bf16_ties_to_even)
{
    long bad = 0, first = -1;
    for (uint32_t lo = 0; lo < 0x7F80; lo++)
        for (uint32_t sgn = 0; sgn <= 0x8000; sgn += 0x8000) {
            uint16_t a = (uint16_t)(sgn | lo), b = (uint16_t)(sgn | (lo + 1));
            uint16_t even = (lo & 1) ? b : a;
            uint32_t mid = ((uint32_t)a << 16) | 0x8000u;
            float fm = f32_from_bits(mid), fbelow = f32_from_bits(mid - 1),
                  fabove = f32_from_bits(mid + 1);
            /* the constructed value really is the midpoint (b may be Inf: skip that check) */
            int is_mid = lo == 0x7F7F ||
                         (double)fm == (dec_bf16(a) + dec_bf16(b)) / 2.0;
            int ok = is_mid && ref_f32_to_bf16(fm) == even && ref_f32_to_bf16(fbelow) == a &&
                     ref_f32_to_bf16(fabove) == b && ref_f64_to_bf16((double)fm) == even &&
                     ref_f64_to_bf16((double)fabove) == b && ref_f64_to_bf16((double)fbelow) == a;
            if (!ok && bad++ == 0) first = (long)a;
        }
    cr_assert_eq(bad, 0, "%ld bf16 tie cases wrong, first lower pattern 0x%04lx", bad, first);
    /* Overflow: the tie above the largest finite bf16 goes to Inf (its pattern is even). */
    cr_assert_eq(ref_f32_to_bf16(FLT_MAX), 0x7F80);
    cr_assert_eq(ref_f32_to_bf16(-FLT_MAX), 0xFF80);
    cr_assert_eq(ref_f64_to_bf16(1e39), 0x7F80);
    cr_assert_eq(ref_f32_to_bf16(INFINITY), 0x7F80);
    cr_assert_eq(ref_f64_to_bf16(-INFINITY), 0xFF80);
}

/* The same for fp16: the midpoint of adjacent fp16 values a, b has 12 significant bits, so
 * it is exact in fp32 (also in the subnormal range, 2^-25 being a normal fp32). For the top
 * pair the midpoint is 65504 + 16 = 65520, which must round to Inf. */
Test(convert, f16_ties_to_even)
{
    long bad = 0, first = -1;
    for (uint32_t lo = 0; lo < 0x7C00; lo++)
        for (uint32_t sgn = 0; sgn <= 0x8000; sgn += 0x8000) {
            uint16_t a = (uint16_t)(sgn | lo), b = (uint16_t)(sgn | (lo + 1));
            uint16_t even = (lo & 1) ? b : a;
            double va = dec_f16(a);
            double vb = lo == 0x7BFF ? (sgn ? -65536.0 : 65536.0) : dec_f16(b);
            double mid = (va + vb) / 2.0;
            float fm = (float)mid;
            float fbelow = nextafterf(fm, (float)va), fabove = nextafterf(fm, (float)vb);
            int ok = (double)fm == mid && ref_f32_to_f16(fm) == even &&
                     ref_f32_to_f16(fbelow) == a && ref_f32_to_f16(fabove) == b &&
                     ref_f64_to_f16(mid) == even && ref_f64_to_f16(nextafter(mid, va)) == a &&
                     ref_f64_to_f16(nextafter(mid, vb)) == b;
            if (!ok && bad++ == 0) first = (long)a;
        }
    cr_assert_eq(bad, 0, "%ld f16 tie cases wrong, first lower pattern 0x%04lx", bad, first);
    cr_assert_eq(ref_f32_to_f16(65520.0f), 0x7C00);
    cr_assert_eq(ref_f32_to_f16(nextafterf(65520.0f, 0.0f)), 0x7BFF);
    cr_assert_eq(ref_f32_to_f16(1e6f), 0x7C00);
    cr_assert_eq(ref_f32_to_f16(-1e6f), 0xFC00);
    cr_assert_eq(ref_f64_to_f16(1e300), 0x7C00);
    cr_assert_eq(ref_f32_to_f16(-INFINITY), 0xFC00);
}

/* fp16 subnormals: quantum q = 2^-24. */
Test(convert, f16_subnormal_rounding)
{
    const double q = 0x1p-24;
    cr_assert_eq(ref_f64_to_f16(q), 0x0001);
    cr_assert_eq(ref_f64_to_f16(0.5 * q), 0x0000);               /* tie -> even (0) */
    cr_assert_eq(ref_f64_to_f16(-0.5 * q), 0x8000);              /* signed zero */
    cr_assert_eq(ref_f64_to_f16(0.5 * q + 0x1p-60), 0x0001);      /* just above the tie */
    cr_assert_eq(ref_f64_to_f16(0.25 * q), 0x0000);
    cr_assert_eq(ref_f64_to_f16(0.75 * q), 0x0001);
    cr_assert_eq(ref_f64_to_f16(1.5 * q), 0x0002);               /* tie -> even (2) */
    cr_assert_eq(ref_f64_to_f16(2.5 * q), 0x0002);               /* tie -> even (2) */
    cr_assert_eq(ref_f64_to_f16(1023.5 * q), 0x0400);            /* into the first normal */
    cr_assert_eq(ref_f64_to_f16(1022.5 * q), 0x03FE);
    cr_assert_eq(ref_f32_to_f16((float)(3.0 * q)), 0x0003);
    cr_assert_eq(ref_f32_to_f16(0x1p-30f), 0x0000);
    cr_assert_eq(ref_f32_to_f16(-0x1.8p-25f), 0x8001);           /* 0.75 q, negative */
    cr_assert(ref_f16_to_f32(0x0001) == 0x1p-24f && ref_f16_to_f32(0x03FF) == 1023 * 0x1p-24f);
    /* bf16 subnormals too: quantum 2^-133. */
    cr_assert_eq(ref_f64_to_bf16(0x1p-133), 0x0001);
    cr_assert_eq(ref_f64_to_bf16(0x1p-134), 0x0000);
    cr_assert_eq(ref_f64_to_bf16(0x1.8p-133), 0x0002);
    cr_assert_eq(ref_f32_to_bf16(0x1.8p-133f), 0x0002);
}

/* A double just above a bf16 (or fp16) tie, by less than half an fp32 ulp: rounding to fp32
 * first lands exactly on the tie, which then goes to even (down); the single rounding sees
 * that the value is above the tie and goes up. */
Test(convert, single_rounding_beats_double_rounding)
{
    double v = 1.0 + 0x1p-8 + 0x1p-30; /* bf16 ulp at 1 is 2^-7; fp32 ulp 2^-23 */
    cr_assert_eq((double)(float)v, 1.0 + 0x1p-8, "fp32 rounding should land on the tie");
    cr_assert_eq(ref_f32_to_bf16((float)v), 0x3F80); /* double rounding: 1.0 */
    cr_assert_eq(ref_f64_to_bf16(v), 0x3F81);        /* single rounding: 1 + 2^-7 */
    double w = 1.0 + 0x1p-11 + 0x1p-30;              /* fp16 ulp at 1 is 2^-10 */
    cr_assert_eq((double)(float)w, 1.0 + 0x1p-11);
    cr_assert_eq(ref_f32_to_f16((float)w), 0x3C00);
    cr_assert_eq(ref_f64_to_f16(w), 0x3C01);
    /* ref_store rounds once as well. */
    uint16_t b;
    ref_store(LNMOD_BF16, &b, 0, v);
    cr_assert_eq(b, 0x3F81);
    ref_store(LNMOD_F16, &b, 0, w);
    cr_assert_eq(b, 0x3C01);
}

/* Random doubles over the whole range of each format (subnormals and overflow included):
 * the result is a nearest value, ties to the even pattern, and negation only flips the sign.
 * ref_f64_to_f32 against the hardware conversion of the C cast (in range). */
Test(convert, f64_rounding_is_nearest)
{
    ada_rng rng;
    ada_rng_seed(&rng, 108);
    struct { int eb, mb, emin_test, emax_test; uint16_t inf; } fmt[2] = {
        {8, 7, -140, 129, 0x7F80}, {5, 10, -30, 17, 0x7C00}};
    for (int f = 0; f < 2; f++) {
        long bad = 0;
        double first = 0;
        for (int it = 0; it < 200000; it++) {
            uint64_t span = (uint64_t)(fmt[f].emax_test - fmt[f].emin_test);
            int e = fmt[f].emin_test + (int)ada_rng_below(&rng, span);
            double v = ldexp(1.0 + ada_rng_uniform(&rng), e);
            uint16_t h = f == 0 ? ref_f64_to_bf16(v) : ref_f64_to_f16(v);
            uint16_t hn = f == 0 ? ref_f64_to_bf16(-v) : ref_f64_to_f16(-v);
            int ok = hn == (h | 0x8000);
            if (h == fmt[f].inf) {
                /* only values at or beyond max + half its ulp may overflow */
                uint16_t mx = (uint16_t)(fmt[f].inf - 1);
                double vm = dec_fields(mx, fmt[f].eb, fmt[f].mb);
                double half = (vm - dec_fields((uint16_t)(mx - 1), fmt[f].eb, fmt[f].mb)) / 2;
                ok = ok && v >= vm + half;
            } else {
                double vh = dec_fields(h, fmt[f].eb, fmt[f].mb), err = fabs(v - vh);
                if (h > 0) {
                    double e2 = fabs(v - dec_fields((uint16_t)(h - 1), fmt[f].eb, fmt[f].mb));
                    ok = ok && (err < e2 || (err == e2 && !(h & 1)));
                }
                if (h + 1 < fmt[f].inf) {
                    double e3 = fabs(v - dec_fields((uint16_t)(h + 1), fmt[f].eb, fmt[f].mb));
                    ok = ok && (err < e3 || (err == e3 && !(h & 1)));
                } else if (h + 1 == fmt[f].inf) {
                    double half = (vh - dec_fields((uint16_t)(h - 1), fmt[f].eb, fmt[f].mb)) / 2;
                    ok = ok && v < vh + half;
                }
            }
            if (!ok && bad++ == 0) first = v;
        }
        cr_assert_eq(bad, 0, "format %d: %ld wrong, first %.17g", f, bad, first);
    }
    long bad = 0;
    for (int it = 0; it < 200000; it++) {
        double v = ldexp(1.0 + ada_rng_uniform(&rng), -160 + (int)ada_rng_below(&rng, 286));
        if (ada_rng_below(&rng, 2)) v = -v;
        float a = ref_f64_to_f32(v), b = (float)v;
        if (memcmp(&a, &b, 4) != 0) bad++;
    }
    cr_assert_eq(bad, 0, "%ld doubles round to fp32 differently from the C cast", bad);
    cr_assert(isinf(ref_f64_to_f32(1e39)) && ref_f64_to_f32(1e39) > 0);
    cr_assert(isnan(ref_f64_to_f32(NAN)));
}

/* ref_ulp is the gap to the next pattern up, for every finite positive fp16/bf16 value, at
 * random fp32 values, at zero, and at the top (max finite and Inf). */
Test(convert, ulp)
{
    long bad = 0;
    for (uint32_t h = 0; h < 0x7C00 - 1; h++) {
        double v = dec_f16((uint16_t)h), gap = dec_f16((uint16_t)(h + 1)) - v;
        if (ref_ulp(LNMOD_F16, v) != gap || ref_ulp(LNMOD_F16, -v) != gap) bad++;
    }
    for (uint32_t h = 0; h < 0x7F80 - 1; h++) {
        double v = dec_bf16((uint16_t)h), gap = dec_bf16((uint16_t)(h + 1)) - v;
        if (ref_ulp(LNMOD_BF16, v) != gap) bad++;
    }
    cr_assert_eq(bad, 0, "%ld ulp mismatches", bad);
    ada_rng rng;
    ada_rng_seed(&rng, 109);
    for (int it = 0; it < 100000; it++) {
        uint32_t u = (uint32_t)ada_rng_below(&rng, 0x7F7FFFFF);
        float f = f32_from_bits(u);
        cr_assert_eq(ref_ulp(LNMOD_F32, f), (double)nextafterf(f, INFINITY) - f);
    }
    cr_assert_eq(ref_ulp(LNMOD_F16, 65504.0), 32.0);
    cr_assert_eq(ref_ulp(LNMOD_F16, INFINITY), 32.0);
    cr_assert_eq(ref_ulp(LNMOD_F16, 1.0), 0x1p-10);
    cr_assert_eq(ref_ulp(LNMOD_BF16, 1.0), 0x1p-7);
    cr_assert_eq(ref_ulp(LNMOD_F32, 1.0), 0x1p-23);
    cr_assert_eq(ref_ulp(LNMOD_F16, 0.0), 0x1p-24);
    cr_assert_eq(ref_ulp(LNMOD_F16, 1e-7), 0x1p-24);
    cr_assert(isnan(ref_ulp(LNMOD_F16, NAN)));
    cr_assert(isnan(ref_ulp((lnmod_dtype)9, 1.0)));
}

/* ref_store rounds once to the dtype and ref_load widens exactly; an invalid dtype writes
 * nothing and loads NaN. */
Test(convert, load_store)
{
    ada_rng rng;
    ada_rng_seed(&rng, 110);
    unsigned char buf[64 * 4];
    for (int t = 0; t < LNMOD_DTYPE_COUNT; t++)
        for (int i = 0; i < 64; i++) {
            double v = ldexp(ada_rng_normal(&rng), (int)ada_rng_below(&rng, 30) - 15);
            ref_store((lnmod_dtype)t, buf, i, v);
            double got = ref_load((lnmod_dtype)t, buf, i);
            double want = t == LNMOD_F32  ? (double)(float)v
                          : t == LNMOD_F16 ? dec_f16(ref_f64_to_f16(v))
                                           : dec_bf16(ref_f64_to_bf16(v));
            cr_assert_eq(got, want);
            cr_assert_eq(got, load_indep((lnmod_dtype)t, buf, i));
        }
    unsigned char before[sizeof buf];
    memcpy(before, buf, sizeof buf);
    ref_store((lnmod_dtype)7, buf, 0, 1.0);
    cr_assert(memcmp(before, buf, sizeof buf) == 0);
    cr_assert(isnan(ref_load((lnmod_dtype)7, buf, 0)));
}

