// lnmod_fwd_v2.cu -- the host side of dtile's forward v2 (lnmod_fwd_v2.h): the device's facts,
// the problem, the plan (lnmod_fwd_v2_plan.h), the dispatch to one x dtype's kernels, and the
// fallbacks: a plan v2 does not run (fv2_runs: the lag path at few warps a SM, clusters, the
// streamed modulation; the lag path on a device without clusters, whose barrier helpers are
// sm_90's) or a problem no class takes goes back to the caller (LNMOD_ERR_UNSUPPORTED: version
// 1 runs it); a plan whose kernel cannot be resident goes where fv2_fallback says (a tile plan
// to the chunk class where it is eligible, else the odd class; a chunk plan to the odd class).
#include "lnmod_fwd_v2.h"

#include <atomic>

namespace fv2 {

// The memory clock, the one device fact whose query is slow: cudaDeviceGetAttribute(
// cudaDevAttrMemoryClockRate) took 356 us a call on the H200 (the other nine 0.05 us each;
// 2026-12-05), and read at every launch it held dtile's forward at 4-28% of copy in direct
// launches. It is read once a device and process and kept here: a constant of the hardware,
// the only value this library keeps between calls (threads may race to fill it with the same
// value; relaxed atomics make that benign).
static int mem_clock_khz(int dev)
{
    static std::atomic<int> cache[64]; // 0: not read yet
    int v = 0;
    if (dev >= 0 && dev < 64 && (v = cache[dev].load(std::memory_order_relaxed)) > 0) return v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) return -1;
    if (dev >= 0 && dev < 64 && v > 0) cache[dev].store(v, std::memory_order_relaxed);
    return v;
}

int read_dev(fv2_dev *d)
{
    int dev = 0, v[10];
    if (cudaGetDevice(&dev) != cudaSuccess) return -1;
    const cudaDeviceAttr at[9] = {cudaDevAttrMultiProcessorCount, cudaDevAttrMaxThreadsPerMultiProcessor,
                                  cudaDevAttrMaxThreadsPerBlock, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                  cudaDevAttrMaxSharedMemoryPerBlockOptin, cudaDevAttrMaxRegistersPerMultiprocessor,
                                  cudaDevAttrMaxBlocksPerMultiprocessor, cudaDevAttrClusterLaunch,
                                  cudaDevAttrGlobalMemoryBusWidth};
    for (int i = 0; i < 9; i++)
        if (cudaDeviceGetAttribute(&v[i < 8 ? i : 9], at[i], dev) != cudaSuccess) return -1;
    if ((v[8] = mem_clock_khz(dev)) < 0) return -1;
    d->sms = v[0] > 0 ? v[0] : 1;
    d->threads_sm = v[1];
    d->threads_block = v[2];
    d->smem_sm = v[3];
    d->smem_block = v[4];
    d->regs_sm = v[5];
    d->blocks_sm = v[6];
    d->cluster_max = v[7] ? 8 : 1; // 8: the portable cluster size
    d->mem_bw = 2.0 * (double)v[8] * 1e3 * (double)v[9] / 8.0; // kHz, bits; double data rate
    return 0;
}

static bool al16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

fv2_problem problem_of(const lnmod_desc *d, const lnmod_detail::lnmod_kparams &p)
{
    return fv2_problem_of(d, al16(p.x) && al16(p.y) && al16(p.scale) && al16(p.shift),
                          (((uintptr_t)p.x ^ (uintptr_t)p.y) & 15u) == 0);
}

static lnmod_status run_plan(const lnmod_desc *d, fv2_plan *p, const fv2_dev *dev,
                             const lnmod_detail::lnmod_kparams &kp, void *ws, cudaStream_t st)
{
    // The lag path meets at a cluster barrier (C > 1) or a CTA-scope mbarrier (C = 1), built
    // for sm_90 only (the helpers trap below it): none without clusters (before sm_90).
    if (p->cls == FV2_TILE && p->warps * p->cluster > 1 && dev->cluster_max < 2) return LNMOD_ERR_UNSUPPORTED;
    switch (d->x_dtype) {
    case LNMOD_BF16: return launch_x_bf16(d, p, dev, kp, ws, st);
    case LNMOD_F16: return launch_x_f16(d, p, dev, kp, ws, st);
    default: return launch_x_f32(d, p, dev, kp, ws, st);
    }
}

lnmod_status forward(const lnmod_desc *d, const lnmod_detail::lnmod_kparams &kp, void *workspace, cudaStream_t stream)
{
    const fv2_problem q = problem_of(d, kp);
    const bool elem_ok = (uintptr_t)kp.x % q.sx == 0 && (uintptr_t)kp.y % q.sy == 0 &&
                         (uintptr_t)kp.scale % q.sm == 0 && (uintptr_t)kp.shift % q.sm == 0;
    if (!elem_ok) return LNMOD_ERR_UNSUPPORTED;
    fv2_dev dev;
    if (read_dev(&dev) != 0) return LNMOD_ERR_CUDA;
    if (fv2_v1_keeps(&q, &dev)) return LNMOD_ERR_UNSUPPORTED; // version 1's width: the caller's
    fv2_plan p;
    if (fv2_make_plan(&q, &dev, &p) != 0 || !fv2_runs(&p)) return LNMOD_ERR_UNSUPPORTED;
    if (p.lag && dev.cluster_max < 2) return LNMOD_ERR_UNSUPPORTED; // before sm_90: version 1
    lnmod_status st = run_plan(d, &p, &dev, kp, workspace, stream);
    // not resident, or no clusters: the chunk or the odd class (its ring depth: the launcher's,
    // with the kernel's real registers)
    while (st == LNMOD_ERR_UNSUPPORTED && fv2_fallback(&p, &q, &dev) == 0) st = run_plan(d, &p, &dev, kp, workspace, stream);
    return st;
}

} // namespace fv2
