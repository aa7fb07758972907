// probe.cu -- the backward's traffic with deterministic column sums, walked in four orders:
// which walk lets a persistent grid stream x and dy in and dx out near the copy's rate on this
// GPU, while dscale/dshift stay bit-identical for any grid?
//
// The backward (issue 18) reads x and dy and writes dx (6 bytes an element in bf16) and sums
// two columns' worth (dy * xhat, dy) over every row of a sample. dtile's bulk ring walks its
// chunks statically: chunk k of a sample holds rows k, k + cpg, k + 2 cpg, ... (cpg ~ 256
// chunks), one chunk a CTA, a partial a chunk in the workspace, then a finalize adds the
// partials in a fixed order. The stream probe (../2026-12-06-stream-probe/) showed that on an
// H200 persistent CTAs reach 96-97% of cudaMemcpy when they claim small tiles in order from one
// counter and 85% with a static grid-stride walk -- but a claimed tile cannot feed a fixed
// chunk's running sum without fixing the order of the adds. The forms timed here:
//   static      the bulk ring's association (the plan of lnmod_bwd_bulk_plan.h: R rows a chunk,
//               clamp(ceil(rows / target), 32, 256), cpg = rows / R chunks, chunk k = rows
//               k + i cpg), a CTA a chunk, grid-stride over chunks, a partial a chunk;
//   throttle L  static, plus a progress counter: a CTA starting its row step i waits (bounded:
//               ~5 us, then it stops waiting for good) until the grid has completed
//               grid x (i - L) steps -- the drift kept within L steps (L 2, 8). The sums are
//               the static form's, bit for bit: the wait changes timing only;
//   ticket R    tiles of R contiguous rows claimed in order from one counter (the next claim
//               taken while this tile runs), a partial a tile (R 32, 64, 128);
//   oneshot R   a CTA a tile of R rows (the block scheduler's order), a partial a tile.
// Each is timed with a finalize that adds the partials in a fixed order: "flat" (dtile's today:
// a CTA a 32-column tile, 32 warps over the partials, one launch) and "split" (two launches: 64
// partials a CTA per column tile, then the segments in order); the main kernel alone too.
// Every form's dx (3 x 4,096 elements) and its sums at 16 columns (host, double) are checked,
// and two launches of each form must give the same bits.
//
// Timed as bench times: L2 flushed before each repetition (untimed), events around the call,
// median. Output: a line a form: us (main kernel + finalize), % of cudaMemcpy of the same bytes
// in the same run, the main kernel alone. Exit 0 ok, 1 an output wrong or not reproducible, 2
// bad arguments, 3 a CUDA call failed.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                \
    do {                                                                                     \
        cudaError_t e_ = (x);                                                                \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "probe: %s failed: %s (line %d)\n", #x, cudaGetErrorString(e_), \
                    __LINE__);                                                               \
            exit(3);                                                                         \
        }                                                                                    \
    } while (0)

typedef unsigned long long u64;

// A thread owns 8 columns (one 16-byte vector of x, dy, dx); a CTA is D / 8 threads, one row a
// step. Row work: dx = bf16(dy * x), s += dy * x, t += dy (fp32, in row order).
struct sums {
    float s[8], t[8];
};

__device__ __forceinline__ void row8(uint4 xv, uint4 dv, uint4 *dxp, sums &a)
{
    const __nv_bfloat162 *x2 = reinterpret_cast<const __nv_bfloat162 *>(&xv);
    const __nv_bfloat162 *d2 = reinterpret_cast<const __nv_bfloat162 *>(&dv);
    __nv_bfloat162 o[4];
#pragma unroll
    for (int q = 0; q < 4; q++) {
        const float2 x = __bfloat1622float2(x2[q]), d = __bfloat1622float2(d2[q]);
        const float p0 = x.x * d.x, p1 = x.y * d.y;
        a.s[2 * q] += p0;
        a.s[2 * q + 1] += p1;
        a.t[2 * q] += d.x;
        a.t[2 * q + 1] += d.y;
        o[q] = __floats2bfloat162_rn(p0, p1);
    }
    uint4 ov;
    memcpy(&ov, o, sizeof ov);
    *dxp = ov;
}

struct args {
    const uint4 *x, *dy;
    uint4 *dx;
    float *part; // [n partials][2 D]: s then t
    int64_t rows, V; // V = D / 8
    int64_t R, nparts; // rows a chunk/tile; partials
    int64_t cpg; // static: chunks (rows k + i cpg)
    u64 *ctr; // ticket / throttle counter (zero before the launch)
    int lag; // throttle: steps of drift allowed (0: none)
};

__device__ __forceinline__ void zero(sums &a)
{
#pragma unroll
    for (int e = 0; e < 8; e++) a.s[e] = a.t[e] = 0.0f;
}

__device__ __forceinline__ void flush(const args &p, int64_t k, const sums &a)
{
    float4 *w = reinterpret_cast<float4 *>(p.part + k * 16 * p.V) + 2 * threadIdx.x;
    w[0] = make_float4(a.s[0], a.s[1], a.s[2], a.s[3]);
    w[1] = make_float4(a.s[4], a.s[5], a.s[6], a.s[7]);
    w += 2 * p.V;
    w[0] = make_float4(a.t[0], a.t[1], a.t[2], a.t[3]);
    w[1] = make_float4(a.t[4], a.t[5], a.t[6], a.t[7]);
}

// Rows lo, lo + step, ... below hi into a; four rows' loads in flight a thread.
__device__ __forceinline__ void walk(const args &p, int64_t lo, int64_t step, int64_t n, sums &a)
{
    const int64_t j = threadIdx.x;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint4 xv[4], dv[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int64_t o = (lo + (i + u) * step) * p.V + j;
            xv[u] = p.x[o];
            dv[u] = p.dy[o];
        }
#pragma unroll
        for (int u = 0; u < 4; u++) row8(xv[u], dv[u], p.dx + (lo + (i + u) * step) * p.V + j, a);
    }
    for (; i < n; i++) {
        const int64_t o = (lo + i * step) * p.V + j;
        row8(p.x[o], p.dy[o], p.dx + o, a);
    }
}

// static / throttle: chunk k holds rows k, k + cpg, ...; a CTA a chunk, grid-stride.
__global__ void k_static(args p)
{
    __shared__ int stop_waiting;
    if (threadIdx.x == 0) stop_waiting = 0;
    int64_t done = 0; // row steps (of 4 rows) this CTA completed
    for (int64_t c = blockIdx.x; c < p.cpg; c += gridDim.x) {
        const int64_t n = (p.rows - c + p.cpg - 1) / p.cpg;
        sums a;
        zero(a);
        if (p.lag == 0) {
            walk(p, c, p.cpg, n, a);
        } else {
            for (int64_t i = 0; i < n; i += 4, done++) {
                if (threadIdx.x == 0 && !stop_waiting && done >= p.lag) {
                    const u64 want = (u64)gridDim.x * (u64)(done - p.lag);
                    const long long t0 = clock64();
                    while (*(volatile u64 *)p.ctr < want) {
                        if (clock64() - t0 > 10000) { // ~5 us: a CTA that ended or never ran
                            stop_waiting = 1;
                            break;
                        }
                    }
                }
                __syncthreads();
                walk(p, c + i * p.cpg, p.cpg, n - i < 4 ? n - i : 4, a);
                __syncthreads();
                if (threadIdx.x == 0) atomicAdd(p.ctr, 1ull);
            }
        }
        flush(p, c, a);
    }
}

// ticket: tiles of R contiguous rows in claim order.
__global__ void k_ticket(args p)
{
    __shared__ u64 tile[2];
    if (threadIdx.x == 0) tile[0] = atomicAdd(p.ctr, 1ull);
    __syncthreads();
    for (int par = 0;; par ^= 1) {
        const u64 t = tile[par];
        if (t >= (u64)p.nparts) break;
        if (threadIdx.x == 0) tile[par ^ 1] = atomicAdd(p.ctr, 1ull);
        const int64_t lo = (int64_t)t * p.R, n = p.rows - lo < p.R ? p.rows - lo : p.R;
        sums a;
        zero(a);
        walk(p, lo, 1, n, a);
        flush(p, (int64_t)t, a);
        __syncthreads();
    }
}

// oneshot: CTA b the tile b.
__global__ void k_oneshot(args p)
{
    const int64_t lo = (int64_t)blockIdx.x * p.R, n = p.rows - lo < p.R ? p.rows - lo : p.R;
    sums a;
    zero(a);
    walk(p, lo, 1, n, a);
    flush(p, blockIdx.x, a);
}

// flat finalize (dtile's today): CTA = a 32-column tile of the 2D sums, W warps; warp w adds
// partials w, w + W, ... in order, warp 0 adds the W sums in order.
__global__ void k_fin_flat(const float *part, int64_t nparts, int64_t D2, float *out)
{
    __shared__ float sm[32][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const int64_t col = (int64_t)blockIdx.x * 32 + lane;
    float a = 0.0f;
#pragma unroll 8
    for (int64_t k = warp; k < nparts; k += nw) a += part[k * D2 + col];
    sm[warp][lane] = a;
    __syncthreads();
    if (warp == 0) {
        float s = 0.0f;
        for (int w = 0; w < nw; w++) s += sm[w][lane];
        out[col] = s;
    }
}

// split finalize, level 1: CTA (tile, seg) adds partials seg*64 .. +63 of its 32 columns
// (8 warps, 8 partials each, in order) into seg2[seg][col].
__global__ void k_fin_l1(const float *part, int64_t nparts, int64_t D2, float *seg2)
{
    __shared__ float sm[8][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t col = (int64_t)blockIdx.x * 32 + lane, k0 = (int64_t)blockIdx.y * 64 + warp * 8;
    float a = 0.0f;
#pragma unroll
    for (int u = 0; u < 8; u++)
        if (k0 + u < nparts) a += part[(k0 + u) * D2 + col];
    sm[warp][lane] = a;
    __syncthreads();
    if (warp == 0) {
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < 8; w++) s += sm[w][lane];
        seg2[blockIdx.y * D2 + col] = s;
    }
}

// level 2: the segments in order, a thread a column.
__global__ void k_fin_l2(const float *seg2, int64_t nseg, int64_t D2, float *out)
{
    const int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= D2) return;
    float s = 0.0f;
    for (int64_t k = 0; k < nseg; k++) s += seg2[k * D2 + col];
    out[col] = s;
}

__global__ void fill(__nv_bfloat16 *x, __nv_bfloat16 *dy, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const uint32_t v = (uint32_t)(i * 2654435761u) ^ (uint32_t)(i >> 17);
        x[i] = __float2bfloat16_rn((float)(v & 0xFFFF) / 8192.0f - 4.0f);
        dy[i] = __float2bfloat16_rn((float)(v >> 16) / 16384.0f - 2.0f);
    }
}

struct ctx {
    cudaStream_t s;
    cudaEvent_t e0, e1;
    void *flush;
    size_t flush_bytes;
    int reps;
};

template <class F>
static double median_us(ctx &c, F launch)
{
    std::vector<double> t;
    for (int k = 0; k < c.reps + 2; k++) {
        CK(cudaMemsetAsync(c.flush, k & 0x7F, c.flush_bytes, c.s));
        CK(cudaEventRecord(c.e0, c.s));
        launch();
        CK(cudaGetLastError());
        CK(cudaEventRecord(c.e1, c.s));
        CK(cudaEventSynchronize(c.e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, c.e0, c.e1));
        if (k >= 2) t.push_back(1e3 * ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

enum kind { STATIC, TICKET, ONESHOT };
struct form {
    const char *name;
    kind k;
    int64_t R; // ticket / oneshot: rows a tile
    int lag; // static: throttle (0 none)
};

struct bufs {
    __nv_bfloat16 *x, *dy, *dx;
    float *part, *seg2, *out;
    u64 *ctr;
    int64_t nctr;
};

// The columns the host checks: 0..7 and D-8..D-1.
struct colref {
    std::vector<double> s, t, abs_s, abs_t; // 16 each
};

static colref host_sums(const bufs &b, int64_t rows, int64_t D)
{
    colref r;
    r.s.assign(16, 0.0);
    r.t.assign(16, 0.0);
    r.abs_s.assign(16, 0.0);
    r.abs_t.assign(16, 0.0);
    std::vector<__nv_bfloat16> hx(rows * 8), hd(rows * 8);
    for (int half = 0; half < 2; half++) {
        const int64_t c0 = half ? D - 8 : 0;
        CK(cudaMemcpy2D(hx.data(), 16, b.x + c0, D * 2, 16, rows, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy2D(hd.data(), 16, b.dy + c0, D * 2, 16, rows, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < rows; i++)
            for (int e = 0; e < 8; e++) {
                const double x = __bfloat162float(hx[i * 8 + e]), d = __bfloat162float(hd[i * 8 + e]);
                r.s[half * 8 + e] += x * d;
                r.abs_s[half * 8 + e] += fabs(x * d);
                r.t[half * 8 + e] += d;
                r.abs_t[half * 8 + e] += fabs(d);
            }
    }
    return r;
}

// dx at the first, middle and last 4,096 elements; the sums at the 16 columns.
static int check(const bufs &b, int64_t rows, int64_t D, const colref &ref, const std::vector<float> &out,
                 const char *name)
{
    const int64_t n = rows * D, m = 4096;
    std::vector<__nv_bfloat16> hx(m), hd(m), ho(m);
    for (int part = 0; part < 3; part++) {
        const int64_t off = part == 0 ? 0 : part == 1 ? n - m : (n / 2) / 8 * 8;
        CK(cudaMemcpy(hx.data(), b.x + off, m * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hd.data(), b.dy + off, m * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(ho.data(), b.dx + off, m * 2, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < m; i++) {
            const float want = __bfloat162float(__float2bfloat16_rn(__bfloat162float(hx[i]) * __bfloat162float(hd[i])));
            if (__bfloat162float(ho[i]) != want) {
                fprintf(stderr, "probe: %s: dx wrong at element %lld: %g, want %g\n", name, (long long)(off + i),
                        __bfloat162float(ho[i]), want);
                return 1;
            }
        }
    }
    for (int q = 0; q < 16; q++) {
        const int64_t col = q < 8 ? q : D - 16 + q;
        const double gs = out[col], gt = out[D + col];
        if (fabs(gs - ref.s[q]) > 2e-5 * ref.abs_s[q] + 1e-6 || fabs(gt - ref.t[q]) > 2e-5 * ref.abs_t[q] + 1e-6) {
            fprintf(stderr, "probe: %s: column %lld sums %.6g / %.6g, want %.6g / %.6g\n", name, (long long)col, gs,
                    gt, ref.s[q], ref.t[q]);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (reps < 1 || reps > 200) {
        fprintf(stderr, "probe: repetitions must be 1..200, got %s\n", argv[1]);
        return 2;
    }
    int dev = 0, sms = 0, l2 = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("probe: %s, %d SMs, L2 %d MB, %d repetitions a case (median), L2 flushed before each\n", prop.name, sms,
           l2 >> 20, reps);
    ctx c;
    c.reps = reps;
    c.flush_bytes = 2 * (size_t)l2;
    CK(cudaStreamCreate(&c.s));
    CK(cudaEventCreate(&c.e0));
    CK(cudaEventCreate(&c.e1));
    CK(cudaMalloc(&c.flush, c.flush_bytes));

    struct shape {
        int64_t rows, D;
    } shapes[] = {{32760, 1536}, {75600, 1536}, {32760, 3072}, {32760, 5120}, {75600, 5120}};
    const int64_t nmax = 75600 * 5120, pmax = 75600 / 32 + 1, D2max = 2 * 5120;
    bufs b;
    CK(cudaMalloc(&b.x, nmax * 2));
    CK(cudaMalloc(&b.dy, nmax * 2));
    CK(cudaMalloc(&b.dx, nmax * 2));
    CK(cudaMalloc(&b.part, pmax * D2max * 4));
    CK(cudaMalloc(&b.seg2, (pmax / 64 + 1) * D2max * 4));
    CK(cudaMalloc(&b.out, D2max * 4));
    // the copy's own buffers: cudaMemcpy of bytes / 2 = 3 n bytes (x alone holds 2 n)
    void *csrc, *cdst;
    CK(cudaMalloc(&csrc, nmax * 3));
    CK(cudaMalloc(&cdst, nmax * 3));
    CK(cudaMemset(csrc, 0x3c, nmax * 3));
    b.nctr = 4096;
    CK(cudaMalloc(&b.ctr, b.nctr * sizeof(u64)));
    const form forms[] = {{"static", STATIC, 0, 0},       {"static throttle 2", STATIC, 0, 2},
                          {"static throttle 8", STATIC, 0, 8}, {"ticket R32", TICKET, 32, 0},
                          {"ticket R64", TICKET, 64, 0},    {"ticket R128", TICKET, 128, 0},
                          {"oneshot R32", ONESHOT, 32, 0},  {"oneshot R64", ONESHOT, 64, 0}};
    int bad = 0;
    for (const shape &sh : shapes) {
        const int64_t rows = sh.rows, D = sh.D, n = rows * D, V = D / 8, D2 = 2 * D;
        fill<<<4 * sms, 256, 0, c.s>>>(b.x, b.dy, n);
        CK(cudaGetLastError());
        const colref ref = host_sums(b, rows, D);
        const double bytes = 6.0 * (double)n;
        char sname[32];
        snprintf(sname, sizeof sname, "D%lld/rows%lld", (long long)D, (long long)rows);
        const double cu = median_us(c, [&] {
            CK(cudaMemcpyAsync(cdst, csrc, (size_t)(bytes / 2), cudaMemcpyDeviceToDevice, c.s));
        });
        printf("%-18s %-20s %8.3f GB %9.1f us %6.3f TB/s\n", sname, "cudaMemcpy", bytes / 1e9, cu, bytes / cu / 1e6);
        for (const form &f : forms) {
            args p = {(const uint4 *)b.x, (const uint4 *)b.dy, (uint4 *)b.dx, b.part, rows, V, 0, 0, 0, b.ctr, f.lag};
            int grid = 0, occ = 0;
            if (f.k == STATIC) {
                const int64_t target = rows > 65536 ? 512 : 256;
                int64_t R = (rows + target - 1) / target;
                R = R < 32 ? 32 : R > 256 ? 256 : R;
                p.R = R;
                p.cpg = rows / R < 1 ? 1 : rows / R;
                p.nparts = p.cpg;
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_static, (int)V, 0));
                grid = (int)std::min<int64_t>(p.cpg, (int64_t)occ * sms);
            } else {
                p.R = f.R;
                p.nparts = (rows + f.R - 1) / f.R;
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, f.k == TICKET ? k_ticket : k_oneshot, (int)V,
                                                                 0));
                grid = f.k == TICKET ? (int)std::min<int64_t>(p.nparts, (int64_t)occ * sms) : (int)p.nparts;
            }
            int64_t next = 0; // the counter of the next launch (each starts at zero)
            CK(cudaMemsetAsync(b.ctr, 0, b.nctr * sizeof(u64), c.s));
            auto main_k = [&] {
                if (next >= b.nctr) {
                    fprintf(stderr, "probe: out of counters\n");
                    exit(3);
                }
                p.ctr = b.ctr + next++;
                if (f.k == STATIC) k_static<<<grid, (int)V, 0, c.s>>>(p);
                else if (f.k == TICKET) k_ticket<<<grid, (int)V, 0, c.s>>>(p);
                else k_oneshot<<<grid, (int)V, 0, c.s>>>(p);
            };
            const int fw = (int)std::min<int64_t>(32, std::max<int64_t>(8, (p.nparts + 7) / 8));
            auto flat = [&] { k_fin_flat<<<(unsigned)(D2 / 32), 32 * fw, 0, c.s>>>(b.part, p.nparts, D2, b.out); };
            const int64_t nseg = (p.nparts + 63) / 64;
            auto split = [&] {
                k_fin_l1<<<dim3((unsigned)(D2 / 32), (unsigned)nseg), 256, 0, c.s>>>(b.part, p.nparts, D2, b.seg2);
                k_fin_l2<<<(unsigned)((D2 + 255) / 256), 256, 0, c.s>>>(b.seg2, nseg, D2, b.out);
            };
            CK(cudaMemsetAsync(b.dx, 0, n * 2, c.s));
            const double t_main = median_us(c, main_k);
            const double t_flat = median_us(c, [&] { main_k(); flat(); });
            const double t_split = median_us(c, [&] { main_k(); split(); });
            // checks: two launches with the split finalize give the same bits; sums and dx right
            std::vector<float> o1(D2), o2(D2), o3(D2);
            main_k();
            split();
            CK(cudaMemcpy(o1.data(), b.out, D2 * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemsetAsync(b.dx, 0, n * 2, c.s));
            CK(cudaMemsetAsync(b.out, 0, D2 * 4, c.s));
            main_k();
            split();
            CK(cudaMemcpy(o2.data(), b.out, D2 * 4, cudaMemcpyDeviceToHost));
            main_k();
            flat();
            CK(cudaMemcpy(o3.data(), b.out, D2 * 4, cudaMemcpyDeviceToHost));
            char fname[64];
            snprintf(fname, sizeof fname, "%s %s", sname, f.name);
            if (memcmp(o1.data(), o2.data(), D2 * 4) != 0) {
                fprintf(stderr, "probe: %s: two launches gave different sums\n", fname);
                bad = 1;
            }
            bad |= check(b, rows, D, ref, o2, fname);
            bad |= check(b, rows, D, ref, o3, fname);
            printf("%-18s %-20s %6lld parts grid %5d: %8.1f us %5.1f%% (flat fin) %8.1f us %5.1f%% (split fin);"
                   " main alone %8.1f us %5.1f%%\n",
                   sname, f.name, (long long)p.nparts, grid, t_flat, 100.0 * cu / t_flat, t_split,
                   100.0 * cu / t_split, t_main, 100.0 * cu / t_main);
            fflush(stdout);
        }
    }
    printf("probe: %s\n", bad ? "an output was WRONG or not reproducible" : "outputs checked (dx at 3 x 4,096 "
                                                                            "elements, sums at 16 columns, two "
                                                                            "launches bit-identical)");
    return bad ? 1 : 0;
}
