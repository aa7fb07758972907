// lnmod_bwd_common.cuh -- what the three backward variants share (private to kernels/*.cu).
//
// The backward (lnmod.h) writes dx row by row, and dscale/dshift as column sums over the
// rows of each modulation row m ("group": a sample, a frame, or one token row). The sums
// are deterministic by construction, on any grid and any GPU:
//   * The chunk plan is a function of the descriptor alone: a group of up to `glen` rows is
//     split into `cpg` chunks; chunk k of a group starting at row s holds the rows
//     s + k, s + k + cpg, s + k + 2*cpg, ... (strided, so that at any moment the whole grid
//     streams one contiguous region of x and dy, as a copy does). R = rows per chunk is
//     clamp(ceil(rows / 256), 32, 256), cpg = ceil(glen / R).
//   * One thread owns a column (or a 16-byte vector of columns) of a chunk and adds the
//     chunk's rows in row order; with cpg == 1 it writes dscale/dshift itself, otherwise
//     it writes the chunk's fp32 partial sums to the workspace ws[chunk][2][D], and
//     lnmod_bwd_finalize() adds a group's partials in a fixed tree order (bwd_fin_kernel).
//   So no result depends on the grid size, the SM count or the order CTAs run in.
//   Workspace: nchunks * 2 * D * 4 bytes when cpg > 1, else 0. The partials cost 16 / (6R)
//   of a bf16 backward's traffic (2.1% at R = 128; kernels/NOTES.md).
// It also holds the row sums of the paths that re-read rows (naive, row_per_warp, and
// dtile's fallback) and their column-sum kernel.
#ifndef ADALOAD_LNMOD_BWD_COMMON_CUH
#define ADALOAD_LNMOD_BWD_COMMON_CUH

#include "lnmod_common.cuh"

namespace lnmod_detail {

// ---- launch parameters and the chunk plan ------------------------------------------------
struct lnmod_bparams {
    const void *x;
    const void *scale;
    const void *dy;
    const float *mean;
    const float *rstd;
    void *dx;
    void *dscale;
    void *dshift;
    float *ws; // partials [nchunks][2][D], or NULL when cpg == 1
    int64_t rows;
    int64_t D;
    int64_t S; // rows_per_sample (1 when unused)
    int64_t L; // frame_len (1 when unused)
    int64_t F; // frames per sample
    int64_t scale_stride;
    int64_t shift_stride;
    int layout;
    int64_t glen;    // rows of the longest group: S, L or 1
    int64_t cpg;     // chunks per group
    int64_t ngroups; // modulation rows
    int64_t nchunks; // ngroups * cpg
};

// Rows per chunk and chunks per group of descriptor d (host and device agree: both come
// from here). Returns the workspace bytes, or -1 when they do not fit in int64_t.
static inline int64_t lnmod_bwd_plan(const lnmod_desc *d, int64_t *glen, int64_t *cpg,
                                     int64_t *ngroups)
{
    int64_t g = d->layout == LNMOD_PER_TOKEN   ? 1
                : d->layout == LNMOD_PER_FRAME ? d->frame_len
                                               : d->rows_per_sample;
    int64_t R = (d->rows + 255) / 256;
    if (R < 32) R = 32;
    if (R > 256) R = 256;
    const int64_t c = (g + R - 1) / R;
    *glen = g;
    *cpg = c;
    *ngroups = lnmod_mod_rows(d);
    if (c <= 1) return 0;
    // nchunks * 2 * D * 4: nchunks <= rows / 16 here, and rows * D * 4 fits (validated).
    const int64_t nch = *ngroups * c;
    if (nch > INT64_MAX / 8 / d->D) return -1;
    return nch * 8 * d->D;
}

static inline lnmod_bparams lnmod_make_bparams(const lnmod_desc *d, const void *x,
                                               const void *scale, const void *dy,
                                               const float *mean, const float *rstd,
                                               void *dx, void *dscale, void *dshift,
                                               void *ws)
{
    lnmod_bparams p;
    p.x = x;
    p.scale = scale;
    p.dy = dy;
    p.mean = mean;
    p.rstd = rstd;
    p.dx = dx;
    p.dscale = dscale;
    p.dshift = dshift;
    p.rows = d->rows;
    p.D = d->D;
    p.S = d->rows_per_sample > 0 ? d->rows_per_sample : 1;
    p.L = d->frame_len > 0 ? d->frame_len : 1;
    p.F = lnmod_frames_per_sample(d);
    p.scale_stride = d->scale_stride;
    p.shift_stride = d->shift_stride;
    p.layout = (int)d->layout;
    (void)lnmod_bwd_plan(d, &p.glen, &p.cpg, &p.ngroups);
    p.nchunks = p.ngroups * p.cpg;
    p.ws = p.cpg > 1 ? static_cast<float *>(ws) : nullptr;
    return p;
}

// First row and length of group g.
__host__ __device__ __forceinline__ void lnmod_group_rows(const lnmod_bparams &p, int64_t g,
                                                          int64_t *start, int64_t *len)
{
    if (p.layout == LNMOD_PER_TOKEN) {
        *start = g;
        *len = 1;
    } else if (p.layout == LNMOD_PER_FRAME) {
        const int64_t b = g / p.F, j = g - b * p.F;
        const int64_t rest = p.S - j * p.L;
        *start = b * p.S + j * p.L;
        *len = rest < p.L ? rest : p.L;
    } else {
        *start = g * p.S;
        *len = p.S;
    }
}

// The rows of chunk c: group *g, first row *r0, *n rows spaced p.cpg apart (n may be 0: the
// short last frame of a sample has fewer rows than chunks).
__host__ __device__ __forceinline__ void lnmod_chunk_rows(const lnmod_bparams &p, int64_t c,
                                                          int64_t *g, int64_t *r0, int64_t *n)
{
    if (p.cpg == 1 && p.layout == LNMOD_PER_TOKEN) { // a chunk is one row: no division
        *g = c;
        *r0 = c;
        *n = 1;
        return;
    }
    const int64_t gg = c / p.cpg, k = c - gg * p.cpg;
    int64_t s, len;
    lnmod_group_rows(p, gg, &s, &len);
    *g = gg;
    *r0 = s + k;
    *n = len > k ? (len - k + p.cpg - 1) / p.cpg : 0;
}

// ---- the end of a chunk: final values or partials ----------------------------------------
// Column sums (ds = sum dy*xhat, dh = sum dy) of N consecutive columns starting at col, for
// chunk c of group g: written to dscale/dshift (cpg == 1) or as partials to the workspace.
// VECST: N*sizeof(TM) and the row starts allow 16-byte stores (checked by the caller).
template <typename TM, int N, bool VECST>
__device__ __forceinline__ void lnmod_bwd_flush(const lnmod_bparams &p, int64_t c, int64_t g,
                                                int64_t col, const float *ds, const float *dh)
{
    if (p.cpg == 1) {
        TM *a = static_cast<TM *>(p.dscale) + g * p.scale_stride + col;
        TM *b = static_cast<TM *>(p.dshift) + g * p.shift_stride + col;
        if constexpr (VECST && (N * sizeof(TM)) % 16 == 0) {
            lnmod_store_n<TM, N>(a, ds);
            lnmod_store_n<TM, N>(b, dh);
        } else {
#pragma unroll
            for (int e = 0; e < N; e++) {
                a[e] = dt<TM>::from_f(ds[e]);
                b[e] = dt<TM>::from_f(dh[e]);
            }
        }
    } else {
        float *w = p.ws + c * 2 * p.D + col;
        if constexpr (VECST && N % 4 == 0) {
            lnmod_store_n<float, N>(w, ds);
            lnmod_store_n<float, N>(w + p.D, dh);
        } else {
#pragma unroll
            for (int e = 0; e < N; e++) {
                w[e] = ds[e];
                w[p.D + e] = dh[e];
            }
        }
    }
}

// ---- finalize: a group's partials in a fixed order -----------------------------------------
// ceil(cpg / 8) warps a tile, at least 8 and at most 32: each warp adds at most 8 chunks
// where cpg > 64, so all its loads are in flight at once -- one L2 round trip. (A fixed 8
// warps took 8.8 us at bf16 D1536 with 32,760 rows, 255 chunks: ~10% of the whole backward;
// a fixed 32 made the per-frame plans, 12 chunks a group, 6-13% slower: 21x more 1024-thread
// CTAs of idle warps; fewer than 8 there measured 0.5-4% slower -- kernels/NOTES.md item 15.)
constexpr int BWD_FIN_WARPS = 32;
static inline int lnmod_bwd_fin_warps(int64_t cpg)
{
    const int64_t w = (cpg + 7) / 8;
    return w < 8 ? 8 : (w > BWD_FIN_WARPS ? BWD_FIN_WARPS : (int)w);
}

// Block = W = lnmod_bwd_fin_warps(cpg) warps over a tile of 32 columns of one group: lane l
// owns column tile*32 + l, warp w adds chunks w, w + W, ... (in that order), then warp 0
// adds the W warp sums in order. Fixed for given (cpg, D): the same on any grid.
template <typename TM>
__global__ void __launch_bounds__(BWD_FIN_WARPS * 32) bwd_fin_kernel(lnmod_bparams p)
{
    __shared__ float part[2][BWD_FIN_WARPS][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Launched early (programmatic dependent launch, see lnmod_bwd_finalize): wait here until
    // the kernel that wrote the partials has finished and its writes are visible. A no-op
    // when launched the ordinary way.
    cudaGridDependencySynchronize();
#endif
    const int64_t tiles = (p.D + 31) / 32;
    const int64_t items = p.ngroups * tiles;
    for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {
        const int64_t g = it / tiles, col = (it - g * tiles) * 32 + lane;
        int64_t s, len;
        lnmod_group_rows(p, g, &s, &len);
        const int64_t nk = len < p.cpg ? len : p.cpg; // chunks that hold rows
        float a = 0.0f, b = 0.0f;
        if (col < p.D) {
            const float *w = p.ws + (g * p.cpg) * 2 * p.D + col;
#pragma unroll 8
            for (int64_t k = warp; k < nk; k += nw) { // 8 loads in flight each
                a += w[k * 2 * p.D];
                b += w[k * 2 * p.D + p.D];
            }
        }
        part[0][warp][lane] = a;
        part[1][warp][lane] = b;
        __syncthreads();
        if (warp == 0 && col < p.D) {
            float sa = 0.0f, sb = 0.0f;
            for (int w = 0; w < nw; w++) {
                sa += part[0][w][lane];
                sb += part[1][w][lane];
            }
            static_cast<TM *>(p.dscale)[g * p.scale_stride + col] = dt<TM>::from_f(sa);
            static_cast<TM *>(p.dshift)[g * p.shift_stride + col] = dt<TM>::from_f(sb);
        }
        __syncthreads(); // part is reused by the next item
    }
}

// Launches the finalize when the plan has partials (cpg > 1); nothing otherwise.
template <typename TM>
static inline lnmod_status lnmod_bwd_finalize(const lnmod_bparams &p, cudaStream_t stream)
{
    if (p.cpg <= 1) return LNMOD_OK;

    const int64_t items = p.ngroups * ((p.D + 31) / 32);
    const int64_t grid = items < (1 << 20) ? items : (1 << 20);
    // On compute capability 9.0 and later the finalize is a programmatic dependent launch:
    // its CTAs are scheduled while the partials' kernel drains and wait in
    // cudaGridDependencySynchronize, which hides the launch gap (a few us, several percent
    // of a Wan-sized backward). Elsewhere: an ordinary launch.
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3((unsigned)grid);
    cfg.blockDim = dim3(32 * lnmod_bwd_fin_warps(p.cpg));
    cfg.dynamicSmemBytes = 0;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = major >= 9 ? 1 : 0;
    if (cudaLaunchKernelEx(&cfg, bwd_fin_kernel<TM>, p) != cudaSuccess) return LNMOD_ERR_CUDA;
    return lnmod_launch_status();
}

// ---- the paths that re-read rows -----------------------------------------------------------
// Can every access of the backward use 16-byte vectors of dt<TX>::VEC elements? D a multiple
// of VEC, 16-byte aligned x, dy, dx, scale, dscale, dshift, modulation rows at 16-byte
// multiples (dy and the modulation may be fp32 while x is 16-bit: 32 bytes per vector).
template <typename TX, typename TM, typename TY>
static inline bool lnmod_bwd_vector_ok(const lnmod_bparams &p)
{
    constexpr int VEC = dt<TX>::VEC;
    const int64_t ss = p.scale_stride * (int64_t)sizeof(TM);
    const int64_t hs = p.shift_stride * (int64_t)sizeof(TM);
    return p.D % VEC == 0 && lnmod_al16(p.x) && lnmod_al16(p.dy) && lnmod_al16(p.dx) &&
           lnmod_al16(p.scale) && lnmod_al16(p.dscale) && lnmod_al16(p.dshift) &&
           ss % 16 == 0 && hs % 16 == 0;
}

// Row sums of row r for dx: *a = sum g, *b = sum g*xhat, with xhat = (x - mu)*rs and
// g = dy*(1 + scale[m(r)]), over this thread's vectors v = v0, v0 + step, ... < nv of VEC
// elements (the caller reduces them across threads).
template <typename TX, typename TM, typename TY, int VEC>
__device__ __forceinline__ void lnmod_bwd_rowsum(const lnmod_bparams &p, int64_t r, int64_t v0,
                                                 int64_t step, int64_t nv, float mu, float rs,
                                                 float *a, float *b)
{
    const int64_t m = lnmod_mod_row(p, r);
    const TX *xr = static_cast<const TX *>(p.x) + r * p.D;
    const TY *gr = static_cast<const TY *>(p.dy) + r * p.D;
    const TM *sc = static_cast<const TM *>(p.scale) + m * p.scale_stride;
    float sa = 0.0f, sb = 0.0f;
    for (int64_t v = v0; v < nv; v += step) {
        float f[VEC], d[VEC], s[VEC];
        lnmod_load_n<TX, VEC>(xr + v * VEC, f);
        lnmod_load_n<TY, VEC>(gr + v * VEC, d);
        lnmod_load_n<TM, VEC>(sc + v * VEC, s);
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const float g = d[e] * (1.0f + s[e]);
            sa += g;
            sb = fmaf(g, (f[e] - mu) * rs, sb);
        }
    }
    *a = sa;
    *b = sb;
}

// dx of row r: rs * (g - ca - xhat * cb), ca = mean(g), cb = mean(g*xhat); one rounding.
template <typename TX, typename TM, typename TY, int VEC>
__device__ __forceinline__ void lnmod_bwd_rowdx(const lnmod_bparams &p, int64_t r, int64_t v0,
                                                int64_t step, int64_t nv, float mu, float rs,
                                                float ca, float cb)
{
    const int64_t m = lnmod_mod_row(p, r);
    const TX *xr = static_cast<const TX *>(p.x) + r * p.D;
    const TY *gr = static_cast<const TY *>(p.dy) + r * p.D;
    const TM *sc = static_cast<const TM *>(p.scale) + m * p.scale_stride;
    TX *dr = static_cast<TX *>(p.dx) + r * p.D;
    for (int64_t v = v0; v < nv; v += step) {
        float f[VEC], d[VEC], s[VEC], o[VEC];
        lnmod_load_n<TX, VEC>(xr + v * VEC, f);
        lnmod_load_n<TY, VEC>(gr + v * VEC, d);
        lnmod_load_n<TM, VEC>(sc + v * VEC, s);
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const float xh = (f[e] - mu) * rs;
            o[e] = rs * (fmaf(d[e], 1.0f + s[e], -ca) - xh * cb);
        }
        lnmod_store_n<TX, VEC>(dr + v * VEC, o);
    }
}

// Column sums by chunk, re-reading x and dy: one thread per (chunk, vector of VEC columns),
// adding the chunk's rows in row order, then lnmod_bwd_flush.
constexpr int BWD_COL_THREADS = 256;

template <typename TX, typename TM, typename TY, int VEC>
__global__ void __launch_bounds__(BWD_COL_THREADS) bwd_col_kernel(lnmod_bparams p)
{
    const int64_t nv = p.D / VEC;
    const int64_t tiles = (nv + BWD_COL_THREADS - 1) / BWD_COL_THREADS;
    const int64_t items = p.nchunks * tiles;
    for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {
        const int64_t c = it / tiles;
        const int64_t v = (it - c * tiles) * BWD_COL_THREADS + threadIdx.x;
        int64_t g, r0, n;
        lnmod_chunk_rows(p, c, &g, &r0, &n);
        if (v >= nv || n == 0) continue; // no barrier in this kernel
        float ds[VEC], dh[VEC];
#pragma unroll
        for (int e = 0; e < VEC; e++) ds[e] = dh[e] = 0.0f;
#pragma unroll 4
        for (int64_t i = 0, r = r0; i < n; i++, r += p.cpg) {
            const float mu = p.mean[r], rs = p.rstd[r];
            float f[VEC], d[VEC];
            lnmod_load_n<TX, VEC>(static_cast<const TX *>(p.x) + r * p.D + v * VEC, f);
            lnmod_load_n<TY, VEC>(static_cast<const TY *>(p.dy) + r * p.D + v * VEC, d);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                ds[e] = fmaf(d[e], (f[e] - mu) * rs, ds[e]);
                dh[e] += d[e];
            }
        }
        lnmod_bwd_flush<TM, VEC, (VEC > 1)>(p, c, g, v * VEC, ds, dh);
    }
}

static inline unsigned lnmod_grid_cap(int64_t n)
{
    return (unsigned)(n < 1 ? 1 : n < (1 << 20) ? n : (1 << 20));
}

// The column sums and their finalize, after a row kernel wrote dx.
template <typename TX, typename TM, typename TY, int VEC>
static inline lnmod_status lnmod_bwd_columns(const lnmod_bparams &p, cudaStream_t stream)
{
    const int64_t nv = p.D / VEC;
    const int64_t items = p.nchunks * ((nv + BWD_COL_THREADS - 1) / BWD_COL_THREADS);
    bwd_col_kernel<TX, TM, TY, VEC><<<lnmod_grid_cap(items), BWD_COL_THREADS, 0, stream>>>(p);
    lnmod_status st = lnmod_launch_status();
    if (st != LNMOD_OK) return st;
    return lnmod_bwd_finalize<TM>(p, stream);
}

// One warp per row (8 rows per block, grid-stride): the row sums in one pass, a butterfly,
// then dx in a second pass over the row (from L1/L2).
constexpr int BWD_RPW_WARPS = 8;

template <typename TX, typename TM, typename TY, int VEC>
__global__ void __launch_bounds__(BWD_RPW_WARPS * 32) bwd_rpw_row_kernel(lnmod_bparams p)
{
    const int lane = threadIdx.x & 31;
    const int64_t nv = p.D / VEC;
    const float invd = 1.0f / (float)p.D;
    const int64_t stride = (int64_t)gridDim.x * BWD_RPW_WARPS;
    for (int64_t r = (int64_t)blockIdx.x * BWD_RPW_WARPS + (threadIdx.x >> 5); r < p.rows;
         r += stride) {
        const float mu = p.mean[r], rs = p.rstd[r];
        float a, b;
        lnmod_bwd_rowsum<TX, TM, TY, VEC>(p, r, lane, 32, nv, mu, rs, &a, &b);
        lnmod_warp_sum2(a, b);
        lnmod_bwd_rowdx<TX, TM, TY, VEC>(p, r, lane, 32, nv, mu, rs, a * invd, b * invd);
    }
}

// The whole re-reading backward: row_per_warp's, and dtile's for what its fused path does
// not take (unaligned data, D past its register budget).
template <typename TX, typename TM, typename TY>
static inline lnmod_status lnmod_bwd_reread_run(const lnmod_bparams &p, cudaStream_t stream)
{
    const unsigned grid = lnmod_grid_cap((p.rows + BWD_RPW_WARPS - 1) / BWD_RPW_WARPS);
    if (lnmod_bwd_vector_ok<TX, TM, TY>(p)) {
        constexpr int V = dt<TX>::VEC;
        bwd_rpw_row_kernel<TX, TM, TY, V><<<grid, BWD_RPW_WARPS * 32, 0, stream>>>(p);
        lnmod_status st = lnmod_launch_status();
        return st != LNMOD_OK ? st : lnmod_bwd_columns<TX, TM, TY, V>(p, stream);
    }
    bwd_rpw_row_kernel<TX, TM, TY, 1><<<grid, BWD_RPW_WARPS * 32, 0, stream>>>(p);
    lnmod_status st = lnmod_launch_status();
    return st != LNMOD_OK ? st : lnmod_bwd_columns<TX, TM, TY, 1>(p, stream);
}

// Bytes the re-reading backward moves: the row kernel reads x, dy and the modulation row
// twice and writes dx; the column kernel reads x, dy and the statistics again; partials
// are written and read once (8 * D bytes per chunk each way); the results once.
static inline int64_t lnmod_bwd_reread_bytes(const lnmod_desc *d)
{
    int64_t glen, cpg, ng;
    const int64_t ws = lnmod_bwd_plan(d, &glen, &cpg, &ng);
    const int64_t n = d->rows * d->D;
    const double xs = (double)lnmod_dtype_size(d->x_dtype), ys = (double)lnmod_dtype_size(d->y_dtype),
                 ms = (double)lnmod_dtype_size(d->mod_dtype);
    const double b = (double)n * (3 * xs + 3 * ys + xs + 2 * ms) + 16.0 * (double)d->rows +
                     2.0 * (double)(ws > 0 ? ws : 0) + 2.0 * ms * (double)ng * (double)d->D;
    return b >= 9.2e18 ? INT64_MAX : (int64_t)b;
}

} // namespace lnmod_detail

#endif
