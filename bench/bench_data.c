/* bench_data.c -- random benchmark inputs in storage dtypes (bench_data.h). The conversions
 * here are for making data only; the exact, tested ones of the project are the reference's. */
#include "bench_data.h"

#include <math.h>
#include <string.h>

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

uint16_t ada_bench_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    /* Round to nearest even on the 16 dropped bits. */
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

uint16_t ada_bench_f32_to_f16(float f)
{
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    int32_t e = (int32_t)((u >> 23) & 0xFF) - 127 + 15;
    uint32_t m = u & 0x7FFFFFu;
    if (e <= 0) return sign;                   /* too small for a normal fp16: +-0 */
    if (e >= 31) return (uint16_t)(sign | 0x7BFFu); /* clamp to the largest finite */
    uint32_t half = ((uint32_t)e << 10) | (m >> 13);
    uint32_t rest = m & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) half++;
    if (half >= 0x7C00u) half = 0x7BFFu;
    return (uint16_t)(sign | half);
}

void ada_bench_fill(void *buf, lnmod_dtype t, int64_t n, double mean, double sd, ada_rng *r)
{
    for (int64_t i = 0; i < n; i++) {
        float v = (float)(mean + sd * ada_rng_normal(r));
        if (fabsf(v) < (float)(sd / 64)) v = (float)(sd / 8);
        switch (t) {
        case LNMOD_BF16: ((uint16_t *)buf)[i] = ada_bench_f32_to_bf16(v); break;
        case LNMOD_F16: ((uint16_t *)buf)[i] = ada_bench_f32_to_f16(v); break;
        case LNMOD_F32:
        default: ((float *)buf)[i] = v; break;
        }
    }
}
