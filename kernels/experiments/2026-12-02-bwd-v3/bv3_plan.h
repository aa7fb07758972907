/* bv3_plan.h -- the new index math of round 3 (host and device, pure C so that bv3_plan_test.c
 * checks it): k2's step and issue rule, tok's row walk and stage layout, and the shared
 * memory a CTA of each kernel asks for (with a host model of the occupancy rule). The chunk
 * plan, the shares and the row shape stay kernels/lnmod_bwd_bulk_plan.h's (unchanged).
 *
 * k2 (two rows a step): a group walks its rows (chunk by chunk, each share in row order, the
 * walk index w counting across chunks); within a share of cnt rows it takes them two at a
 * time (bv3_k2_step: 2, or 1 for the last row of an odd share). Walk row w lives in ring
 * stage w % NS. The issuing thread fills NS - 1 stages before the first step; at each step's
 * mid point (after the group's barrier: every row before the step is consumed) it issues the
 * rows the previous step freed (1 at the first step), so that at a step starting at w every
 * row up to w + NS - 1 has been issued. A pair step needs row w + 1 issued by the previous
 * step's mid point, i.e. (previous start >= w - 2) w - 2 + NS - 1 >= w + 1: NS >= 4.
 *
 * tok (per token): group gq of CTA b takes rows (b + k * grid) * G + gq, k = 0, 1, ... (whole
 * rows, no chunks); a stage holds x's row (vectors at slots 0..nv-1), dy's (DYW slots a
 * vector from VPT*T) and the scale row's (MSW slots a vector from VPT*T*(1 + DYW)). */
#ifndef ADALOAD_BV3_PLAN_H
#define ADALOAD_BV3_PLAN_H

#include <stdint.h>

#ifdef __CUDACC__
#define BV3_HD __host__ __device__ __forceinline__ constexpr
#elif defined(__cplusplus)
#define BV3_HD static inline constexpr /* the emulation test (g++) */
#else
#define BV3_HD static inline
#endif

enum { BV3_VPT = 2, BV3_MAX_NW = 12 };

/* ---- k2 ---------------------------------------------------------------------------------- */
/* Rows of the step that starts with `left` rows of the share still to do (left >= 1). */
BV3_HD int bv3_k2_step(int32_t left)
{
#ifdef BV3_PLANT_STEP
    (void)left;
    return 2; /* planted bug (host test): an odd share's last step reads past the share */
#else
    return left >= 2 ? 2 : 1;
#endif
}

/* The fewest ring stages a pair step works with (see above). */
BV3_HD int bv3_k2_min_stages(void)
{
#ifdef BV3_PLANT_NS3
    return 3; /* planted bug (host test): a pair waits for a row nobody has issued */
#else
    return 4;
#endif
}

/* Rows the issuer owes at the next step's mid point after a step of m rows (those m stages
 * are free once the next step's barrier is passed). Before the first step: 1. */
BV3_HD int bv3_k2_owed_after(int m)
{
#ifdef BV3_PLANT_OWED
    return m + 1; /* planted bug (host test): a stage refilled while its row is being read */
#else
    return m;
#endif
}

/* The stage of the first row the issuer owes at a step whose first row is in stage `slot`:
 * walk row w + NS - owed goes to (w - owed) % NS. */
BV3_HD int bv3_k2_issue_stage(int slot, int owed, int NS)
{
    return slot - owed < 0 ? slot - owed + NS : slot - owed;
}

/* ---- tok --------------------------------------------------------------------------------- */
/* First row of group gq of CTA b, and the step between its rows (grid CTAs of G groups). */
BV3_HD int64_t bv3_tok_first(int64_t b, int G, int gq)
{
    return b * G + gq;
}
BV3_HD int64_t bv3_tok_step(int64_t grid, int G)
{
#ifdef BV3_PLANT_TOK
    (void)G;
    return grid; /* planted bug (host test): CTAs' walks overlap */
#else
    return grid * G;
#endif
}

/* 16-byte slots a thread and stage: x (VPT), dy (VPT*DYW), scale (VPT*MSW). */
BV3_HD int bv3_tok_slots(int dyw, int msw)
{
    return BV3_VPT * (1 + dyw + msw);
}
/* First slot (of a stage of T threads) of dy's row and of the scale row. */
BV3_HD int bv3_tok_dy_at(int T)
{
    return BV3_VPT * T;
}
BV3_HD int bv3_tok_sc_at(int T, int dyw)
{
#ifdef BV3_PLANT_SCAT
    (void)dyw;
    return BV3_VPT * T * 2 - 1; /* planted bug (host test): the scale row overlaps dy's */
#else
    return BV3_VPT * T * (1 + dyw);
#endif
}

/* ---- shared memory ----------------------------------------------------------------------- */
/* float2 statistics slots (one per group and stage) rounded to 16 bytes (the production's
 * bk_stat_slots). */
BV3_HD int64_t bv3_stat_slots(int G, int NS)
{
    return (int64_t)(G * NS + 1) / 2 * 2;
}

/* Dynamic shared memory of a bulk CTA: G rings of NS stages, their statistics, the combine
 * buffer (2 floats an element; half: 1) and, when (1 + scale) is kept in shared memory, the
 * row of it. half == 0 is the production's bk_smem_bytes (bv3.cu checks it at run time). */
BV3_HD int64_t bv3_bulk_smem(int G, int NS, int T, int slots, int vec, int64_t D, int sps, int half)
{
    const int64_t cmb = (int64_t)T * BV3_VPT * vec * (half ? 4 : 8), spb = sps ? D * 4 : 0;
    return (int64_t)G * NS * T * 16 * slots + bv3_stat_slots(G, NS) * 8 + cmb + spb;
}

/* Static shared memory: the exchange buffer red[2][G][12] of float2 (k2: and one of float4
 * for the pair steps) and the G*NS mbarriers. */
BV3_HD int64_t bv3_static_smem(int G, int NS, int k2)
{
    return (int64_t)2 * G * BV3_MAX_NW * (k2 ? 24 : 8) + (int64_t)G * NS * 8;
}

/* Dynamic shared memory of a tok CTA: the rings and their statistics. */
BV3_HD int64_t bv3_tok_smem(int G, int NS, int T, int slots)
{
    return (int64_t)G * NS * T * 16 * slots + bv3_stat_slots(G, NS) * 8;
}

#endif
