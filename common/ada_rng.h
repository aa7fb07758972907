/* ada_rng.h -- the project's own seeded PRNG (SplitMix64 seeding a xoshiro256**).
 *
 * Deterministic on every machine and compiler: no rand(), no global state. Every user owns
 * an ada_rng value:
 *   ada_rng r; ada_rng_seed(&r, seed);
 *   uint64_t u = ada_rng_u64(&r);  double x = ada_rng_uniform(&r);  // [0, 1)
 *   double n = ada_rng_normal(&r); uint64_t k = ada_rng_below(&r, 10); // [0, 10)
 * Header-only, C11.
 */
#ifndef ADALOAD_ADA_RNG_H
#define ADALOAD_ADA_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct {
    uint64_t s[4];
} ada_rng;

/* SplitMix64 step: used to expand a seed into the xoshiro state. */
static inline uint64_t ada_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline void ada_rng_seed(ada_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = ada_splitmix64(&x);
}

static inline uint64_t ada_rotl64(uint64_t v, int k) { return (v << k) | (v >> (64 - k)); }

static inline uint64_t ada_rng_u64(ada_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = ada_rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ada_rotl64(s[3], 45);
    return result;
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double ada_rng_uniform(ada_rng *r)
{
    return (double)(ada_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n >= 1, without modulo bias (rejection). */
static inline uint64_t ada_rng_below(ada_rng *r, uint64_t n)
{
    if (n <= 1) return 0;
    uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
    uint64_t v;
    do {
        v = ada_rng_u64(r);
    } while (v >= limit);
    return v % n;
}

/* Standard normal by Box-Muller (one value per call; the second is dropped for simplicity
 * and so the state never depends on a cached value). */
static inline double ada_rng_normal(ada_rng *r)
{
    double u1 = 1.0 - ada_rng_uniform(r); /* (0, 1] so log is finite */
    double u2 = ada_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
