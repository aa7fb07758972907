/* ref_convert.c -- exact host conversions between double/fp32 and the 16-bit float formats
 * (bf16, fp16), element load/store by dtype, and the ULP of a dtype at a magnitude.
 *
 * Everything is integer bit manipulation, so the results do not depend on the compiler's
 * floating-point mode, on FMA contraction or on the C cast of an out-of-range double
 * (undefined behaviour in C11 without Annex F). Rounding is to nearest, ties to even, done
 * ONCE from the source value: double -> bf16/fp16/fp32 never passes through an intermediate
 * format. NaN stays NaN (made quiet, sign and the top payload bits kept), Inf stays Inf,
 * subnormals of the destination are produced exactly. See ref_lnmod.h for the API.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ref_lnmod.h"

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint64_t f64_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* Rounds the double v to a binary format with `ebits` exponent bits and `mbits` stored
 * fraction bits (IEEE layout, bias 2^(ebits-1)-1, gradual underflow) and returns its bit
 * pattern in the low 1+ebits+mbits bits. One rounding, nearest-even.
 *
 * Why integers: |v| = m * 2^(e-52) with the 53-bit significand m. The destination quantum
 * at that magnitude is 2^qexp, qexp = max(e, emin) - mbits; the rounded value is n * 2^qexp
 * with n = round_half_even(m >> (qexp - e + 52)). n may reach 2^(mbits+1) (a carry into the
 * next binade) -- the bit pattern (biased exponent << mbits) + fraction absorbs that by
 * plain addition, including the step from the largest subnormal to the smallest normal and
 * from the largest finite value to Inf. */
static uint64_t f64_to_narrow(double v, int ebits, int mbits)
{
    const uint64_t u = f64_bits(v);
    const uint64_t sign = (u >> 63) << (ebits + mbits);
    const int64_t bexp = (int64_t)((u >> 52) & 0x7FF);
    const uint64_t frac = u & ((UINT64_C(1) << 52) - 1);
    const uint64_t exp_all = (UINT64_C(1) << ebits) - 1;
    const uint64_t quiet = UINT64_C(1) << (mbits - 1);

    if (bexp == 0x7FF) {
        if (frac == 0) return sign | (exp_all << mbits); /* +-Inf */
        /* NaN: keep the top payload bits and force the quiet bit (a signalling NaN whose
         * payload lives only in the dropped bits must not become Inf). */
        return sign | (exp_all << mbits) | quiet | (frac >> (52 - mbits));
    }
    if (bexp == 0) {
        /* Zero or a double subnormal (< 2^-1022): far below half the smallest subnormal
         * of every narrower format, so it rounds to a signed zero. */
        return sign;
    }
    const int64_t bias = (int64_t)(exp_all >> 1);
    const int64_t emin = 1 - bias;
    const int64_t e = bexp - 1023;
    const uint64_t m = frac | (UINT64_C(1) << 52);

    const int64_t qexp = (e >= emin ? e : emin) - mbits;
    const int64_t shift = qexp - (e - 52); /* >= 52 - mbits > 0 */
    uint64_t n;
    if (shift >= 64) {
        n = 0; /* m < 2^53 <= half a quantum: rounds to zero */
    } else {
        n = m >> shift;
        const uint64_t rem = m & ((UINT64_C(1) << shift) - 1);
        const uint64_t half = UINT64_C(1) << (shift - 1);
        if (rem > half || (rem == half && (n & 1))) n++;
    }
    uint64_t mag;
    if (e >= emin) {
        /* n in [2^mbits, 2^(mbits+1)]: biased exponent field e+bias, the leading 1 of n
         * dropped; a carry (n == 2^(mbits+1)) adds one to the exponent field. */
        mag = ((uint64_t)(e + bias) << mbits) + (n - (UINT64_C(1) << mbits));
    } else {
        mag = n; /* subnormal: exponent field 0; n == 2^mbits is exactly the smallest normal */
    }
    if (mag >= (exp_all << mbits)) mag = exp_all << mbits; /* overflow to Inf */
    return sign | mag;
}

uint16_t ref_f64_to_bf16(double v) { return (uint16_t)f64_to_narrow(v, 8, 7); }

uint16_t ref_f64_to_f16(double v) { return (uint16_t)f64_to_narrow(v, 5, 10); }

float ref_f64_to_f32(double v) { return bits_f32((uint32_t)f64_to_narrow(v, 8, 23)); }

float ref_bf16_to_f32(uint16_t h)
{
    /* bf16 is the top half of an fp32: exact for every pattern, NaN payloads included. */
    return bits_f32((uint32_t)h << 16);
}

uint16_t ref_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    /* Add just under half of the dropped part, plus the kept lsb for ties-to-even; a carry
     * walks into the exponent (and to Inf past the largest finite bf16), which is right. */
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float ref_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu;
    uint32_t m = h & 0x3FFu;
    if (e == 0x1F) return bits_f32(sign | 0x7F800000u | (m << 13)); /* Inf, NaN payload kept */
    if (e == 0) {
        if (m == 0) return bits_f32(sign);
        /* Subnormal m * 2^-24: normalise so the leading 1 sits at bit 10. */
        int32_t ex = -14;
        while (!(m & 0x400u)) {
            m <<= 1;
            ex--;
        }
        return bits_f32(sign | ((uint32_t)(ex + 127) << 23) | ((m & 0x3FFu) << 13));
    }
    return bits_f32(sign | ((e - 15 + 127) << 23) | (m << 13));
}

uint16_t ref_f32_to_f16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
        /* NaN: keep sign and the top 9 payload bits, set the quiet bit. */
        return (uint16_t)(((u >> 16) & 0x8000u) | 0x7E00u | ((u >> 13) & 0x1FFu));
    }
    /* fp32 -> double is exact, so a single rounding from the double is a single rounding
     * from the float. */
    return ref_f64_to_f16((double)f);
}

double ref_load(lnmod_dtype t, const void *base, int64_t i)
{
    switch (t) {
    case LNMOD_F32: {
        float f;
        memcpy(&f, (const char *)base + (size_t)i * sizeof f, sizeof f);
        return (double)f;
    }
    case LNMOD_F16: {
        uint16_t h;
        memcpy(&h, (const char *)base + (size_t)i * sizeof h, sizeof h);
        return (double)ref_f16_to_f32(h);
    }
    case LNMOD_BF16: {
        uint16_t h;
        memcpy(&h, (const char *)base + (size_t)i * sizeof h, sizeof h);
        return (double)ref_bf16_to_f32(h);
    }
    default: return NAN;
    }
}

void ref_store(lnmod_dtype t, void *base, int64_t i, double v)
{
    switch (t) {
    case LNMOD_F32: {
        float f = ref_f64_to_f32(v);
        memcpy((char *)base + (size_t)i * sizeof f, &f, sizeof f);
        break;
    }
    case LNMOD_F16: {
        uint16_t h = ref_f64_to_f16(v);
        memcpy((char *)base + (size_t)i * sizeof h, &h, sizeof h);
        break;
    }
    case LNMOD_BF16: {
        uint16_t h = ref_f64_to_bf16(v);
        memcpy((char *)base + (size_t)i * sizeof h, &h, sizeof h);
        break;
    }
    default: break; /* invalid dtype: nothing is written */
    }
}

double ref_ulp(lnmod_dtype t, double v)
{
    int mbits, emin, emax;
    switch (t) {
    case LNMOD_F32: mbits = 23, emin = -126, emax = 127; break;
    case LNMOD_F16: mbits = 10, emin = -14, emax = 15; break;
    case LNMOD_BF16: mbits = 7, emin = -126, emax = 127; break;
    default: return NAN;
    }
    if (isnan(v)) return NAN;
    double a = fabs(v);
    int e;
    if (isinf(a)) {
        e = emax; /* spacing of the top binade */
    } else if (a == 0.0) {
        e = emin;
    } else {
        (void)frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): a lies in binade 2^(e-1) */
        e -= 1;
        if (e < emin) e = emin;
        if (e > emax) e = emax;
    }
    return ldexp(1.0, e - mbits);
}
