/* verify_half.h -- inline bf16/fp16 <-> fp32 conversions for the verifier's hot loops (the
 * full grid reads and writes ~1e11 half values; a function call per element costs more than
 * the conversion). Widening is exact; narrowing rounds to nearest even, keeps NaN a NaN and
 * overflows to Inf, fp16 subnormals included. test_verify.c checks them exhaustively against
 * the round trip and against nearest-value search. The float64 reference keeps its own
 * conversions (ref_lnmod.h): these only serve input generation and reading kernel outputs.
 */
#ifndef ADALOAD_VERIFY_HALF_H
#define ADALOAD_VERIFY_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float verify_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint32_t verify_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float verify_bf16_to_f32(uint16_t h) { return verify_bits_f32((uint32_t)h << 16); }

static inline uint16_t verify_f32_to_bf16(float f)
{
    uint32_t u = verify_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even; overflow carries into Inf */
    return (uint16_t)(u >> 16);
}

static inline float verify_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        float f = (float)m * 0x1p-24f; /* zero or subnormal, exact */
        return (h & 0x8000u) ? -f : f;
    }
    if (e == 31) return verify_bits_f32(sign | 0x7f800000u | (m << 13));
    return verify_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

static inline uint16_t verify_f32_to_f16(float f)
{
    uint32_t u = verify_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);  /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to Inf */
    if (a < 0x38800000u) {                                   /* below 2^-14: subnormal */
        float r = nearbyintf(verify_bits_f32(a) * 0x1p24f);  /* exact scaling, then RNE */
        return (uint16_t)(sign | (uint16_t)r);               /* 1024 is the smallest normal */
    }
    uint32_t h = ((((a >> 23) - 112u)) << 10) | ((a & 0x7fffffu) >> 13);
    uint32_t rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* a carry moves to the exponent */
    return (uint16_t)(sign | h);
}

#endif
