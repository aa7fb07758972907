/* lnmod_res_fwd_chunk_plan.h -- the plan of the fused residual op's chunk forward (dtile; its
 * kernel lnmod_res_fwd_chunk.cuh, launched by lnmod_res_fwd_dtile.cu), pure C so that a host test
 * (test_lnmod_res_fwd_chunk_plan.c, also built with each planted bug, which must fail it)
 * checks it. The design and its arithmetic: kernels/experiments/2026-12-05-res-chunk/README.md.
 *
 * The kernel is lnmod's flat chunk kernel (lnmod_fwd_v2_chunk.cuh) with two streams: a chunk is
 * R consecutive rows, one contiguous byte range of r (4 R D bytes, fp32) and one of y (2 R D,
 * 16-bit); a stage of the ring holds both 16-byte supersets (r's slot, then y's), brought in by
 * two bulk copies counted on one mbarrier; h is written over r and out over y in the stage and
 * bulk-stored from where they were loaded, so h must sit at r's address mod 16 and out at y's.
 *
 * Shape: T threads a CTA, thread t owning the K = ceil(D / T) columns t, t + T, ... of every
 * row (T the smallest of 64, 128, 256, 512 that leaves K <= 6, else 512 with K <= 20: D <=
 * 10,240), holding R K values of h and 3 K of modulation (gate, 1 + scale, shift) in registers.
 * R rows a chunk: R = 4, 3, 2, 1 at K <= 4, <= 6, <= 10, else. The shared memory bounds R -- a
 * row takes 6 D bytes of a stage (lnmod's: 2 D), and 16 warps a SM (512 / T CTAs) with >= 4
 * stages each on a 224 KB SM leave 112 T / (6 K T) = 18.7 / K rows a stage -- which the rule
 * passes once, at K 10 (two rows of D 4609-5120: 3 stages of 61 KB). Both caps were measured
 * (H100, experiments/2026-12-05-res-chunk "Round 2", in one call against the row kernels): K <= 6
 * instead of 12 (more threads a row, fewer columns each) took D 1536 from 93.4-94.4% of copy to
 * 95.5-96.0 and D 3072 to 95.6-95.7, where the row kernels' specialized kernel runs 93.5-95.8; R 2
 * at K 10 took D 5120 from 94.0-94.4 to 95.0-95.1 (the row kernels 94.6-94.8), while R 2 at K 12
 * cost D 1536 up to 2% and at K 16-20 5% (a rule constant, not a device fact: the ring itself is
 * sized from the device, lnmod_res_chunk_ring). So at Wan's widths: D 1536 T 256 K 6 R 3, D 3072
 * T 512 K 6 R 3, D 5120 T 512 K 10 R 2 -- 27.7, 55.3 and 61.5 KB a stage.
 *
 * Where it runs (lnmod_res_chunk_takes): residual fp32 at a 4-byte address, branch and out the
 * same 16-bit dtype (bf16 instantiated: Wan's), modulation fp32, gate and modulation per sample
 * or per frame (a map row's run of rows in registers; per token would reload them every row),
 * 64 <= D <= 10,240, h at r's address mod 16 and out at y's, a device with bulk copies
 * (compute capability >= 9), fewer than 2^31 chunks. Elsewhere the row kernels of
 * lnmod_res_fwd_dtile.cu keep the op.
 *
 * Planted bugs for the host test:
 *   -DLNMOD_RES_CHUNK_PLANT_PHASE  h taken at any address (not only at r's mod 16)
 *   -DLNMOD_RES_CHUNK_PLANT_SLOT   r's slot sized for the chunk's bytes, not their superset
 *   -DLNMOD_RES_CHUNK_PLANT_R10    R 1 at K 10 (the rule before round 2) */
#ifndef ADALOAD_LNMOD_RES_FWD_CHUNK_PLAN_H
#define ADALOAD_LNMOD_RES_FWD_CHUNK_PLAN_H

#include <stdint.h>

#include "lnmod_res_desc.h"

#define LNMOD_RES_CHUNK_MIN_D 64    /* a chunk's y then has >= 128 bytes: an aligned interior */
#define LNMOD_RES_CHUNK_MAX_D 10240 /* 512 threads x K 20 */
#define LNMOD_RES_CHUNK_MIN_NS 3    /* one stage computing, one storing, >= 1 loading */
#define LNMOD_RES_CHUNK_PREF_NS 4   /* ... >= 2 loading, where some CTAs a SM leave room for it */
#define LNMOD_RES_CHUNK_MAX_NS 8    /* the kernel's mbarriers (lnmod_res_chunk_fixed) */
#define LNMOD_RES_CHUNK_RESERVE 1024 /* shared memory the runtime keeps a CTA */
#define LNMOD_RES_CHUNK_TICKET 16    /* the ticket counter's workspace: two 64-bit words */

/* Columns a thread at most below T 512 (above). */
#define LNMOD_RES_CHUNK_KCAP 6
/* Rows a chunk for K columns a thread (above). */
#ifdef LNMOD_RES_CHUNK_PLANT_R10
#define LNMOD_RES_CHUNK_R(K) ((K) <= 4 ? 4 : (K) <= 6 ? 3 : (K) <= 9 ? 2 : 1)
#else
#define LNMOD_RES_CHUNK_R(K) ((K) <= 4 ? 4 : (K) <= 6 ? 3 : (K) <= 10 ? 2 : 1)
#endif
/* The instantiated shapes X(T, K): every (T, K) that lnmod_res_chunk_shape picks. */
#define LNMOD_RES_CHUNK_SHAPES(X)                                                                         \
    X(64, 1) X(64, 2) X(64, 3) X(64, 4) X(64, 5) X(64, 6) X(128, 4) X(128, 5) X(128, 6) X(256, 4)         \
    X(256, 5) X(256, 6) X(512, 4) X(512, 5) X(512, 6) X(512, 7) X(512, 8) X(512, 9) X(512, 10) X(512, 11) \
    X(512, 12) X(512, 13) X(512, 14) X(512, 15) X(512, 16) X(512, 17) X(512, 18) X(512, 19) X(512, 20)
/* CTAs a SM the kernel's __launch_bounds__ asks for: 16 warps (128 registers) at every T. */
#define LNMOD_RES_CHUNK_MINB(T) (512 / (T))

/* T, K and R for width D; 0 where the chunk kernel does not take D. */
static inline int lnmod_res_chunk_shape(int64_t D, int *T, int *K, int *R)
{
    if (D < LNMOD_RES_CHUNK_MIN_D || D > LNMOD_RES_CHUNK_MAX_D) return 0;
    const int c = LNMOD_RES_CHUNK_KCAP;
    const int t = D <= c * 64 ? 64 : D <= c * 128 ? 128 : D <= c * 256 ? 256 : 512;
    *T = t;
    *K = (int)((D + t - 1) / t);
    *R = LNMOD_RES_CHUNK_R(*K);
    return 1;
}

/* Can the chunk kernel take descriptor d with these addresses on a device of compute capability
 * cc_major? 1 yes, 0 no. d valid (lnmod_res_desc_validate). */
static inline int lnmod_res_chunk_takes(const lnmod_res_desc *d, uintptr_t r, uintptr_t y, uintptr_t h,
                                        uintptr_t out, int cc_major)
{
    int T, K, R;
    if (cc_major < 9 || !lnmod_res_chunk_shape(d->D, &T, &K, &R)) return 0;
    if (d->res_dtype != LNMOD_F32 || d->branch_dtype != LNMOD_BF16 || d->out_dtype != LNMOD_BF16 ||
        d->mod_dtype != LNMOD_F32)
        return 0;
    if (d->layout == LNMOD_PER_TOKEN && (d->gate == LNMOD_RES_GATE || d->norm == LNMOD_RES_MODULATE)) return 0;
    if ((r & 3u) || (y & 1u) || (out & 15u) != (y & 15u)) return 0;
#ifdef LNMOD_RES_CHUNK_PLANT_PHASE
    (void)h;
#else
    if ((h & 15u) != (r & 15u)) return 0;
#endif
    return (d->rows + R - 1) / R < ((int64_t)1 << 31);
}

/* Bytes of r's slot and y's slot of a stage for R rows of width D: the largest 16-byte superset
 * of each (a chunk starts up to 12 bytes into r's 16-byte word, up to 14 into y's). The stage
 * is slot_r + slot_y (y's slot starts 16-byte aligned after r's). */
static inline void lnmod_res_chunk_slots(int R, int64_t D, int64_t *slot_r, int64_t *slot_y)
{
#ifdef LNMOD_RES_CHUNK_PLANT_SLOT
    *slot_r = (4 * (int64_t)R * D + 15) / 16 * 16;
#else
    *slot_r = (4 * (int64_t)R * D + 12 + 15) / 16 * 16;
#endif
    *slot_y = (2 * (int64_t)R * D + 14 + 15) / 16 * 16;
}

/* The fixed part of a CTA's shared memory after the stages: LNMOD_RES_CHUNK_MAX_NS mbarriers
 * (64 bytes) and as many stage chunk indices (32), the warps' sums of d and d^2 of RP (R padded to a power of 2) rows for two chunks
 * and for the rare second pass: 96 + 4 (T / 32) (3 2 RP) bytes (lnmod's chunk kernel's, and the indices). */
static inline int64_t lnmod_res_chunk_fixed(int T, int R)
{
    const int RP = R > 4 ? 8 : R > 2 ? 4 : R;
    return 96 + 4 * (int64_t)(T / 32) * (3 * 2 * RP);
}

/* The device facts the ring is sized from (read at run time by the launcher). */
typedef struct {
    int64_t smem_sm, smem_block;  /* shared memory a SM, the most a CTA may opt in to */
    int64_t regs_sm, threads_sm;  /* registers and threads a SM */
    int64_t blocks_sm;            /* CTAs a SM */
} lnmod_res_chunk_dev;

/* The ring: CTAs a SM (*ctas) at most by threads, registers (regs a thread, rounded to 8) and
 * CTA slots; the most of them that each leave room for LNMOD_RES_CHUNK_PREF_NS stages (two
 * loading while one computes and one stores), else for LNMOD_RES_CHUNK_MIN_NS; then as many
 * stages (<= LNMOD_RES_CHUNK_MAX_NS) as fit. *smem: a CTA's dynamic shared memory. Returns 0,
 * or -1 when not even one CTA with the fewest stages fits. */
static inline int lnmod_res_chunk_ring(const lnmod_res_chunk_dev *v, int T, int R, int64_t D, int regs,
                                       int64_t static_smem, int *ctas, int *ns, int64_t *smem)
{
    int64_t slot_r, slot_y;
    lnmod_res_chunk_slots(R, D, &slot_r, &slot_y);
    const int64_t stage = slot_r + slot_y, fixed = lnmod_res_chunk_fixed(T, R);
    int64_t cmax = v->threads_sm / T;
    const int64_t by_regs = v->regs_sm / ((int64_t)T * ((regs + 7) / 8 * 8));
    if (by_regs < cmax) cmax = by_regs;
    if (v->blocks_sm < cmax) cmax = v->blocks_sm;
    for (int need = LNMOD_RES_CHUNK_PREF_NS; need >= LNMOD_RES_CHUNK_MIN_NS; need--)
        for (int64_t c = cmax; c >= 1; c--) {
            int64_t room = v->smem_sm / c - LNMOD_RES_CHUNK_RESERVE - static_smem - fixed;
            const int64_t cta_room = v->smem_block - static_smem - fixed;
            if (cta_room < room) room = cta_room;
            int64_t n = room / stage;
            if (n > LNMOD_RES_CHUNK_MAX_NS) n = LNMOD_RES_CHUNK_MAX_NS;
            if (n >= need) {
                *ctas = (int)c;
                *ns = (int)n;
                *smem = n * stage + fixed;
                return 0;
            }
        }
    return -1;
}

#endif
