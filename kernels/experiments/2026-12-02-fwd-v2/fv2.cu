// fv2.cu -- the host side of the forward v2 (experiment): device facts, the plan (and the
// harness's alternatives to it), the dispatch to one x dtype's kernels (fv2_inst.cu; the chunk
// class's: fv2_odd3_inst.cu), and the fallbacks: a plan whose kernel cannot be resident goes
// where the rule's fv2_fallback says (the chunk or the odd class), a problem no class takes
// (pointers not aligned to their element size) to v1's dtile.
#include "fv2.h"
#include "fv2_odd2_plan.h"
#include "fv2_int.h"
#include "lnmod_fwd_v2.h" // fv2::read_dev

#include <cstdlib>

// The facts of up to 16 devices, read once each (per process; see fv2_inst.cu's caches) by the
// library's own reader (lnmod_fwd_v2.cu, which the harness links beside its own kernels).
static fv2_dev g_dev[16];
static bool g_dev_ok[16];

int fv2_read_dev(fv2_dev *d)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return -1;
    if (dev >= 0 && dev < 16 && g_dev_ok[dev]) {
        *d = g_dev[dev];
        return 0;
    }
    if (fv2::read_dev(d) != 0) return -1;
    if (dev >= 0 && dev < 16) {
        g_dev[dev] = *d;
        g_dev_ok[dev] = true;
    }
    return 0;
}

static bool al16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

// Round 2 (2026-12-05): the several-warp shapes at 40 elements a thread (VPT 5 for 16-bit x,
// 8 for fp32 -- the VPT of the round's fastest lag shapes), W = the warps that takes, split
// over a cluster of up to 4 CTAs while W exceeds max_w (round 2 also timed the VPT then
// trimmed to the warps: 1-3 points slower). Returns 1 when nothing changed.
static int vpt_first(fv2_plan *p, const fv2_dev *dev, int max_w)
{
    if (p->cls != FV2_TILE || p->warps * p->cluster == 1 || p->mode != FV2_MOD_REG) return 1;
    const int vpt = p->vec == 8 ? 5 : 8;
    const int64_t wt = fv2_ceil(p->nv, 32 * (int64_t)vpt);
    int64_t c = 1;
    while (fv2_ceil(wt, c) > max_w && c < dev->cluster_max && c < FV2_MAX_CLUSTER) c *= 2;
    if (fv2_ceil(wt, c) > FV2_MAX_WARPS || wt < 2) return 1;
    const int64_t w = fv2_ceil(wt, c);
    if (vpt == p->vpt && (int)c == p->cluster && w == p->warps) return 1;
    p->vpt = vpt;
    p->cluster = (int)c;
    p->warps = (int)w;
    fv2_tile_set(p);
    return 0;
}

// The harness's alternatives (fv2.h, FV2_ALT_SHAPE). Returns 1 when nothing changed.
static int alt_shape(fv2_plan *p, const fv2_dev *dev)
{
    if (p->cls == FV2_ODD) {
        if (p->warps * 2 > 16) return 1; // 16 warps: the odd kernel's __launch_bounds__(512)
        p->warps *= 2;
        p->vpt = (int)fv2_ceil(p->nv, 32 * (int64_t)p->warps);
        p->threads = 32 * p->warps;
        p->slot_bytes = (int64_t)p->vpt * p->threads * 16;
        return 0;
    }
    if (p->warps * p->cluster == 1) { // half the VPT on two warps (the lag path)
        if (p->vpt < 2) return 1;
        p->vpt = (p->vpt + 1) / 2;
        p->warps = (int)fv2_ceil(p->nv, 32 * (int64_t)p->vpt);
        p->groups = 1;
        fv2_tile_set(p);
        return 0;
    }
    if (p->nbar) { // round 3: the lag path on one CTA with the mbarrier in place of its CTA barrier
        p->nbar = 0;
        return 0;
    }
    return vpt_first(p, dev, FV2_MAX_WARPS);
}

// FV2_ODD3_NS (environment, read once) caps the chunk class's ring stages (round 5's knob).
static lnmod_status run_plan(const lnmod_desc *d, fv2_plan *p, const fv2_dev *dev, int extra_ns,
                             const lnmod_detail::lnmod_kparams &kp, cudaStream_t st, fv2_info *info)
{
    static int ns_cap = -1;
    if (ns_cap < 0) {
        const char *e = getenv("FV2_ODD3_NS");
        ns_cap = e ? atoi(e) : 0;
    }
    if (p->cls == FV2_CHUNK)
        return d->x_dtype == LNMOD_BF16 ? fv2::launch_chunk_bf16(d, p, dev, ns_cap, kp, st, info)
               : d->x_dtype == LNMOD_F16 ? fv2::launch_chunk_f16(d, p, dev, ns_cap, kp, st, info)
                                         : LNMOD_ERR_UNSUPPORTED;
    switch (d->x_dtype) {
    case LNMOD_BF16: return fv2::launch_x_bf16(d, p, dev, extra_ns, kp, st, info);
    case LNMOD_F16: return fv2::launch_x_f16(d, p, dev, extra_ns, kp, st, info);
    default: return fv2::launch_x_f32(d, p, dev, extra_ns, kp, st, info);
    }
}

lnmod_status fv2_forward(int alt, const lnmod_desc *d, const void *x, const void *scale,
                         const void *shift, void *y, float *mean, float *rstd, cudaStream_t stream,
                         fv2_info *info)
{
    const lnmod_status vs = lnmod_desc_validate(d);
    if (vs != LNMOD_OK) return vs;
    if (!x || !scale || !shift || !y) return LNMOD_ERR_NULL_POINTER;
    fv2_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    const fv2_problem q = fv2_problem_of(d, al16(x) && al16(y) && al16(scale) && al16(shift),
                                         (((uintptr_t)x ^ (uintptr_t)y) & 15u) == 0);
    const bool elem_ok = (uintptr_t)x % q.sx == 0 && (uintptr_t)y % q.sy == 0 && (uintptr_t)scale % q.sm == 0 &&
                         (uintptr_t)shift % q.sm == 0;
    fv2_dev dev;
    if (fv2_read_dev(&dev) != 0) return LNMOD_ERR_CUDA;
    fv2_plan p;
    if (!elem_ok || fv2_make_plan(&q, &dev, &p) != 0) {
        info->fallback = 1;
        return lnmod_forward("dtile", d, x, scale, shift, y, mean, rstd, stream);
    }
    if (alt == FV2_ALT_SHAPE) info->same_as_rule = alt_shape(&p, &dev);
    if (alt == FV2_ALT_ODD3) { // where the rule picks the chunk class: the rule without it (the
        info->same_as_rule = p.cls != FV2_CHUNK; // tile plan at aligned widths, else the odd one)
        if (p.cls == FV2_CHUNK && fv2_tile_odd_plan(&q, &dev, &p) != 0) fv2_odd_shape(&p, &q);
    }
    const lnmod_detail::lnmod_kparams kp = lnmod_detail::lnmod_make_params(d, x, scale, shift, y, mean, rstd);
    int extra = alt == FV2_ALT_DEEP ? 2 : 0;
    if (alt == FV2_ALT_DEEP && p.nbar) { // round 3: the lag path on one CTA (REG or RING) behind
        p.nbar = 1;                      // one barrier a row (the rule's own form since 2026-12-05)
        extra = 0;
    } else if (alt == FV2_ALT_DEEP && p.cls == FV2_TILE && p.mode == FV2_MOD_REG && !fv2_runs(&p)) {
        // round 4: the several-warp plans dtile leaves to version 1 (8 warps, clusters): the odd
        // kernel with the modulation in registers on the same rows (one CTA a row; phase 0)
        fv2_odd_shape(&p, &q);
        info->same_as_rule = odd2_plan(&p, &q);
        extra = 0;
    } else if (alt == FV2_ALT_DEEP && (p.cls == FV2_ODD || p.cls == FV2_CHUNK)) { // round 4: the odd kernel,
        if (p.cls == FV2_CHUNK) fv2_odd_shape(&p, &q);                                // modulation in registers
        info->same_as_rule = odd2_plan(&p, &q);
        extra = 0;
    } else if (alt == FV2_ALT_DEEP && p.cls == FV2_TILE && d->layout != LNMOD_PER_SAMPLE) { // the other mode
        fv2_tile_plan(&p, &q, &dev, p.mode == FV2_MOD_RING ? FV2_MOD_REG : FV2_MOD_RING);
        extra = 0;
        if (!p.vpt) fv2_odd_shape(&p, &q);
    }
    lnmod_status st = run_plan(d, &p, &dev, extra, kp, stream, info);
    if (st == LNMOD_ERR_UNSUPPORTED && p.cls == FV2_ODD && p.mode == FV2_MOD_REG) { // odd2 does not fit: the odd kernel
        fv2_odd_shape(&p, &q);
        info->same_as_rule = 1;
        st = run_plan(d, &p, &dev, extra, kp, stream, info);
    }
    // not resident: the chunk class where eligible, or the odd class (the rule's fallback)
    while (st == LNMOD_ERR_UNSUPPORTED && fv2_fallback(&p, &q, &dev) == 0) st = run_plan(d, &p, &dev, extra, kp, stream, info);
    if (st == LNMOD_ERR_UNSUPPORTED) {
        info->fallback = 1;
        return lnmod_forward("dtile", d, x, scale, shift, y, mean, rstd, stream);
    }
    info->plan = p;
    return st;
}
