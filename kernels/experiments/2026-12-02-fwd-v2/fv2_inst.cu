// fv2_inst.cu -- the forward v2 kernels of ONE x dtype (compiled once per FV2_XT: 2 bf16,
// 1 fp16, 0 fp32, so build.sh compiles the three in parallel): every modulation/y dtype of
// that x, the tile kernel at VPT 1..8 with the modulation in registers or streamed, and the
// odd kernel (and the experiment's odd kernel with the modulation in registers, VPT 1..5:
// fv2_odd2.cuh); the grid from the occupancy API (cudaOccupancyMaxActiveClusters for clusters).
#include "fv2_int.h"
#include "fv2_odd2.cuh"

#ifndef FV2_XT
#error "compile with -DFV2_XT=0 (fp32 x), 1 (fp16 x) or 2 (bf16 x)"
#endif

namespace fv2 {
namespace {

using namespace lnmod_detail;

struct go_args {
    fv2_plan *p;
    const fv2_dev *dev;
    int extra_ns;
    const lnmod_kparams &kp;
    cudaStream_t st;
    fv2_info *info;
};

// Per-process caches (the harness launches from one host thread; this is an experiment, not
// the library): a kernel's attributes and the shared-memory limit already set for it, and its
// occupancy per launch shape, so that a timed launch makes no query and the host's time
// between the L2 flush and the kernel stays small.
struct fn_entry {
    const void *fn;
    int dev, smem_set;
    cudaFuncAttributes fa;
};
struct occ_entry {
    const void *fn;
    int dev, threads, cluster, resident;
    int64_t smem;
};
fn_entry g_fn[512];
occ_entry g_occ[2048];
int g_nfn, g_nocc;

fn_entry *fn_info(const void *fn, int dev)
{
    for (int i = 0; i < g_nfn; i++)
        if (g_fn[i].fn == fn && g_fn[i].dev == dev) return &g_fn[i];
    fn_entry e;
    e.fn = fn;
    e.dev = dev;
    e.smem_set = -1;
    if (cudaFuncGetAttributes(&e.fa, fn) != cudaSuccess) return nullptr;
    if (g_nfn == 512) g_nfn = 0; // full: start over (only the cost of a query)
    g_fn[g_nfn] = e;
    return &g_fn[g_nfn++];
}

// Resident CTAs per SM (cluster == 0) or clusters on the device, from the occupancy API.
template <typename K> int resident(K kern, int dev, const cudaLaunchConfig_t &cfg, int cluster)
{
    const void *fn = reinterpret_cast<const void *>(kern);
    for (int i = 0; i < g_nocc; i++) {
        const occ_entry &e = g_occ[i];
        if (e.fn == fn && e.dev == dev && e.threads == (int)cfg.blockDim.x && e.cluster == cluster &&
            e.smem == (int64_t)cfg.dynamicSmemBytes)
            return e.resident;
    }
    int r = 0;
    cudaError_t err = cluster ? cudaOccupancyMaxActiveClusters(&r, kern, &cfg)
                              : cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, kern, (int)cfg.blockDim.x,
                                                                             cfg.dynamicSmemBytes);
    if (err != cudaSuccess) return -1;
    if (g_nocc == 2048) g_nocc = 0;
    g_occ[g_nocc++] = {fn, dev, (int)cfg.blockDim.x, cluster, r, (int64_t)cfg.dynamicSmemBytes};
    return r;
}

// Ring depth from the kernel's real registers (plus extra_ns slots where they fit), the
// shared-memory limit, then the grid: resident CTAs (or clusters) x SMs, at most the rows'.
template <typename K> lnmod_status launch(K kern, const go_args &a)
{
    fv2_plan *p = a.p;
    int devno = 0;
    if (cudaGetDevice(&devno) != cudaSuccess) return LNMOD_ERR_CUDA;
    fn_entry *fe = fn_info(reinterpret_cast<const void *>(kern), devno);
    if (!fe) return LNMOD_ERR_CUDA;
    const cudaFuncAttributes &fa = fe->fa;
    fv2_dev dev = *a.dev; // the opt-in limit counts the kernel's static shared memory too
    dev.smem_block -= (int)fa.sharedSizeBytes;
    if (fv2_finish(p, &dev, fa.numRegs) != 0) return LNMOD_ERR_UNSUPPORTED;
    for (int e = 0; e < a.extra_ns && p->nstage < FV2_MAX_NS; e++) {
        if (fv2_smem_bytes(p, p->nstage + 1) > dev.smem_block) break;
        p->nstage++;
        p->smem_bytes = fv2_smem_bytes(p, p->nstage);
    }
    if (fe->smem_set < (int)p->smem_bytes) {
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p->smem_bytes) != cudaSuccess)
            return LNMOD_ERR_CUDA;
        fe->smem_set = (int)p->smem_bytes;
    }
    a.info->regs = fa.numRegs;
    a.info->local_bytes = (int)fa.localSizeBytes;
    const bool clustered = p->cls == FV2_TILE && p->warps * p->cluster > 1;
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim.x = (unsigned)p->cluster;
    at.val.clusterDim.y = at.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3((unsigned)p->threads);
    cfg.dynamicSmemBytes = (size_t)p->smem_bytes;
    cfg.stream = a.st;
    cfg.attrs = clustered ? &at : nullptr;
    cfg.numAttrs = clustered ? 1 : 0;
    int64_t grid;
    if (clustered) {
        cfg.gridDim = dim3((unsigned)p->cluster);
        const int nc = resident(kern, devno, cfg, p->cluster);
        if (nc < 0) return LNMOD_ERR_CUDA;
        if (nc < 1) return LNMOD_ERR_UNSUPPORTED;
        grid = (nc < a.kp.rows ? nc : a.kp.rows) * p->cluster;
    } else {
        const int per_sm = resident(kern, devno, cfg, 0);
        if (per_sm < 0) return LNMOD_ERR_CUDA;
        if (per_sm < 1) return LNMOD_ERR_UNSUPPORTED;
        const int64_t need = (a.kp.rows + p->groups - 1) / p->groups;
        grid = (int64_t)per_sm * a.dev->sms;
        if (grid > need) grid = need;
    }
    cfg.gridDim = dim3((unsigned)grid);
    a.info->grid = (int)grid;
    kcfg k;
    k.nv = p->nv;
    k.nvc = p->nvc;
    k.W = p->warps;
    k.C = p->cluster;
    k.G = p->groups;
    k.NS = p->nstage;
    k.vpt = p->vpt;
    k.NB = p->nbar;
    if (cudaLaunchKernelEx(&cfg, kern, a.kp, k) != cudaSuccess) return LNMOD_ERR_CUDA;
    return lnmod_launch_status();
}

template <typename TX, typename TM, typename TY, bool R> lnmod_status tile_vpt(const go_args &a)
{
    switch (a.p->vpt) {
    case 1: return launch(tile_kernel<TX, TM, TY, 1, R>, a);
    case 2: return launch(tile_kernel<TX, TM, TY, 2, R>, a);
    case 3: return launch(tile_kernel<TX, TM, TY, 3, R>, a);
    case 4: return launch(tile_kernel<TX, TM, TY, 4, R>, a);
    case 5: return launch(tile_kernel<TX, TM, TY, 5, R>, a);
    case 6: return launch(tile_kernel<TX, TM, TY, 6, R>, a);
    case 7: return launch(tile_kernel<TX, TM, TY, 7, R>, a);
    case 8: return launch(tile_kernel<TX, TM, TY, 8, R>, a);
    default: return LNMOD_ERR_UNSUPPORTED;
    }
}

template <typename TX, typename TM, typename TY> lnmod_status odd2_vpt(const go_args &a)
{
    switch (a.p->vpt) {
    case 1: return launch(odd2_kernel<TX, TM, TY, 1>, a);
    case 2: return launch(odd2_kernel<TX, TM, TY, 2>, a);
    case 3: return launch(odd2_kernel<TX, TM, TY, 3>, a);
    case 4: return launch(odd2_kernel<TX, TM, TY, 4>, a);
    case 5: return launch(odd2_kernel<TX, TM, TY, 5>, a);
    default: return LNMOD_ERR_UNSUPPORTED;
    }
}

template <typename TX, typename TM, typename TY> lnmod_status go(const go_args &a)
{
    if (a.p->cls == FV2_TILE)
        return a.p->mode == FV2_MOD_RING ? tile_vpt<TX, TM, TY, true>(a) : tile_vpt<TX, TM, TY, false>(a);
    if (a.p->mode == FV2_MOD_REG) return odd2_vpt<TX, TM, TY>(a); // fv2.cu's odd2_plan
    return launch(odd_kernel<TX, TM, TY>, a);
}

#if FV2_XT == 0
using XT = float;
#elif FV2_XT == 1
using XT = __half;
#else
using XT = __nv_bfloat16;
#endif

lnmod_status go_x(const lnmod_desc *d, const go_args &a)
{
    const bool mf = d->mod_dtype == LNMOD_F32, yf = d->y_dtype == LNMOD_F32;
#if FV2_XT == 0
    (void)mf;
    (void)yf;
    return go<float, float, float>(a);
#else
    if (mf && yf) return go<XT, float, float>(a);
    if (mf) return go<XT, float, XT>(a);
    if (yf) return go<XT, XT, float>(a);
    return go<XT, XT, XT>(a);
#endif
}

} // namespace

#if FV2_XT == 0
#define FV2_ENTRY launch_x_f32
#elif FV2_XT == 1
#define FV2_ENTRY launch_x_f16
#else
#define FV2_ENTRY launch_x_bf16
#endif

lnmod_status FV2_ENTRY(const lnmod_desc *d, fv2_plan *p, const fv2_dev *dev, int extra_ns,
                       const lnmod_kparams &kp, cudaStream_t st, fv2_info *info)
{
    const go_args a = {p, dev, extra_ns, kp, st, info};
    return go_x(d, a);
}

} // namespace fv2
