// probe.cu -- what share of a device-to-device cudaMemcpy of the same bytes can a kernel with
// the fused residual op's four streams reach on this GPU, with no LayerNorm at all?
//
// The fused op's forward moves r fp32 in, y bf16 in, h fp32 out, out bf16 out: 12 bytes an
// element, half read and half written, in four streams. Its two very different dtile kernels
// (the row kernels, a row per warp group; the flat chunk ring of bulk copies) both sit at
// 89.7-92.0% of copy on an H200 at every width (round 3), while on an H100 the ring reaches
// 94-96%. If a trivial elementwise kernel with the same four streams (h = r + y, out = bf16(h))
// also stops near 91% here, the H200's ceiling for this traffic is the hardware's and not the
// kernels'; if it reaches ~100%, the kernels leave the gap.
//
// Every variant is timed as bench does: L2 flushed (untimed memset of 2 x L2) before each
// repetition, events around one launch, median of the repetitions. Output: one line a case,
// bytes moved (reads + writes), us, TB/s, % of the memcpy of the same bytes in the same run.
// Exit 0 ok, 1 a kernel's output was wrong, 3 a CUDA call failed.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
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

// Eight elements a step: r as two float4, y as one uint4 of 8 bf16; h and out likewise.
struct step8 {
    float4 h0, h1;
    uint4 o;
};

__device__ __forceinline__ step8 res8(float4 r0, float4 r1, uint4 yv)
{
    const __nv_bfloat162 *y2 = reinterpret_cast<const __nv_bfloat162 *>(&yv);
    float2 a = __bfloat1622float2(y2[0]), b = __bfloat1622float2(y2[1]);
    float2 c = __bfloat1622float2(y2[2]), d = __bfloat1622float2(y2[3]);
    step8 s;
    s.h0 = make_float4(r0.x + a.x, r0.y + a.y, r0.z + b.x, r0.w + b.y);
    s.h1 = make_float4(r1.x + c.x, r1.y + c.y, r1.z + d.x, r1.w + d.y);
    __nv_bfloat162 p[4] = {__floats2bfloat162_rn(s.h0.x, s.h0.y), __floats2bfloat162_rn(s.h0.z, s.h0.w),
                           __floats2bfloat162_rn(s.h1.x, s.h1.y), __floats2bfloat162_rn(s.h1.z, s.h1.w)};
    memcpy(&s.o, p, sizeof s.o);
    return s;
}

// mode 0: plain loads and stores; 1: streaming (ld.global.cs / st.global.cs).
template <int MODE, int UNROLL>
__global__ void res4(const float4 *__restrict__ r, const uint4 *__restrict__ y, float4 *__restrict__ h,
                     uint4 *__restrict__ out, int64_t n8)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n8; i += UNROLL * stride) {
        float4 r0[UNROLL], r1[UNROLL];
        uint4 yv[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            int64_t k = i + u * stride;
            r0[u] = MODE ? __ldcs(r + 2 * k) : r[2 * k];
            r1[u] = MODE ? __ldcs(r + 2 * k + 1) : r[2 * k + 1];
            yv[u] = MODE ? __ldcs(y + k) : y[k];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            int64_t k = i + u * stride;
            step8 s = res8(r0[u], r1[u], yv[u]);
            if (MODE) {
                __stcs(h + 2 * k, s.h0);
                __stcs(h + 2 * k + 1, s.h1);
                __stcs(out + k, s.o);
            } else {
                h[2 * k] = s.h0;
                h[2 * k + 1] = s.h1;
                out[k] = s.o;
            }
        }
    }
    for (; i < n8; i += stride) {
        step8 s = res8(r[2 * i], r[2 * i + 1], y[i]);
        h[2 * i] = s.h0;
        h[2 * i + 1] = s.h1;
        out[i] = s.o;
    }
}

// Persistent CTAs that take tiles of blockDim.x steps in order from one global ticket counter
// (thread 0 claims the next tile while the CTA works on this one): the CTAs' accesses stay in one
// moving window of the arrays however their speeds drift -- what a one-shot grid gets from the
// block scheduler, with a persistent CTA's setup paid once.
__global__ void res4_ticket(const float4 *__restrict__ r, const uint4 *__restrict__ y, float4 *__restrict__ h,
                            uint4 *__restrict__ out, int64_t n8, unsigned long long *ctr)
{
    __shared__ unsigned long long tile[2];
    const unsigned long long tiles = (unsigned long long)((n8 + blockDim.x - 1) / blockDim.x);
    if (threadIdx.x == 0) tile[0] = atomicAdd(ctr, 1ull);
    __syncthreads();
    for (int par = 0;; par ^= 1) {
        const unsigned long long t = tile[par];
        if (t >= tiles) break;
        if (threadIdx.x == 0) tile[par ^ 1] = atomicAdd(ctr, 1ull);
        const int64_t k = (int64_t)t * blockDim.x + threadIdx.x;
        if (k < n8) {
            step8 s = res8(r[2 * k], r[2 * k + 1], y[k]);
            h[2 * k] = s.h0;
            h[2 * k + 1] = s.h1;
            out[k] = s.o;
        }
        __syncthreads();
    }
}

// The opposite order: CTA b owns one contiguous 1/grid of the arrays (as many windows open at
// once as CTAs).
__global__ void res4_blocked(const float4 *__restrict__ r, const uint4 *__restrict__ y, float4 *__restrict__ h,
                             uint4 *__restrict__ out, int64_t n8)
{
    const int64_t per = (n8 + gridDim.x - 1) / gridDim.x;
    const int64_t lo = (int64_t)blockIdx.x * per, hi = lo + per < n8 ? lo + per : n8;
    for (int64_t k = lo + threadIdx.x; k < hi; k += blockDim.x) {
        step8 s = res8(r[2 * k], r[2 * k + 1], y[k]);
        h[2 * k] = s.h0;
        h[2 * k + 1] = s.h1;
        out[k] = s.o;
    }
}

// The two pairs of streams apart: the first two thirds of the CTAs copy r to h (fp32), the rest
// y to out (bf16) -- the same bytes, each CTA with one read and one write stream.
__global__ void split2(const uint4 *__restrict__ r, const uint4 *__restrict__ y, uint4 *__restrict__ h,
                       uint4 *__restrict__ out, int64_t n8)
{
    const int64_t gr = (int64_t)gridDim.x * 2 / 3;
    const bool first = blockIdx.x < gr;
    const int64_t nb = first ? gr : (int64_t)gridDim.x - gr;
    const int64_t b = first ? blockIdx.x : blockIdx.x - gr;
    const uint4 *src = first ? r : y;
    uint4 *dst = first ? h : out;
    const int64_t n16 = first ? 2 * n8 : n8;
    const int64_t stride = nb * blockDim.x;
    for (int64_t i = b * blockDim.x + threadIdx.x; i < n16; i += stride) dst[i] = src[i];
}

// A copy kernel of 16-byte words (two streams), for comparison with cudaMemcpy.
template <int UNROLL>
__global__ void copy16(const uint4 *__restrict__ a, uint4 *__restrict__ b, int64_t n16)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n16; i += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = a[i + u * stride];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) b[i + u * stride] = v[u];
    }
    for (; i < n16; i += stride) b[i] = a[i];
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

static void line(const char *shape, const char *name, double bytes, double us, double copy_us)
{
    printf("%-22s %-26s %8.3f GB %9.1f us %6.3f TB/s %6.1f%% of copy\n", shape, name, bytes / 1e9, us,
           bytes / us / 1e6, 100.0 * copy_us / us);
}

static int check(const float *r, const __nv_bfloat16 *y, const float *h, const __nv_bfloat16 *out, int64_t n,
                 const char *name)
{
    // the first and last 4096 elements and a stride through the middle
    const int64_t m = 4096;
    std::vector<float> hr(m), hh(m);
    std::vector<__nv_bfloat16> hy(m), ho(m);
    for (int part = 0; part < 3; part++) {
        int64_t off = part == 0 ? 0 : part == 1 ? n - m : (n / 2) / 8 * 8;
        CK(cudaMemcpy(hr.data(), r + off, m * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hh.data(), h + off, m * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hy.data(), y + off, m * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(ho.data(), out + off, m * 2, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < m; i++) {
            float want = hr[i] + __bfloat162float(hy[i]);
            if (hh[i] != want || __bfloat162float(ho[i]) != __bfloat162float(__float2bfloat16_rn(want))) {
                fprintf(stderr, "probe: %s wrong at element %lld: h %g out %g, want %g\n", name,
                        (long long)(off + i), hh[i], __bfloat162float(ho[i]), want);
                return 1;
            }
        }
    }
    return 0;
}

__global__ void fill(float *r, __nv_bfloat16 *y, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t v = (uint32_t)(i * 2654435761u);
        r[i] = (float)(v & 0xFFFF) / 4096.0f - 8.0f;
        y[i] = __float2bfloat16_rn((float)(v >> 16) / 8192.0f - 4.0f);
    }
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    if (reps < 1 || reps > 1000) {
        fprintf(stderr, "probe: repetitions must be 1..1000, got %s\n", argv[1]);
        return 2;
    }
    int dev = 0, sms = 0, l2 = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    printf("probe: %s, %d SMs, L2 %d MB, %d repetitions a case, L2 flushed before each\n", p.name, sms, l2 >> 20,
           reps);
    ctx c;
    c.reps = reps;
    c.flush_bytes = 2 * (size_t)l2;
    CK(cudaStreamCreate(&c.s));
    CK(cudaEventCreate(&c.e0));
    CK(cudaEventCreate(&c.e1));
    CK(cudaMalloc(&c.flush, c.flush_bytes));

    struct shape {
        int64_t rows, D;
    } shapes[] = {{65520, 1536}, {65520, 3072}, {32760, 5120}, {32760, 1536}};
    const int64_t nmax = 65520 * 3072;
    float *r, *h;
    __nv_bfloat16 *y, *out;
    // r and h hold 6 bytes an element: the copies move half the fused op's 12 bytes from r to h
    CK(cudaMalloc(&r, nmax * 6));
    CK(cudaMalloc(&h, nmax * 6));
    CK(cudaMalloc(&y, nmax * 2));
    CK(cudaMalloc(&out, nmax * 2));
    unsigned long long *ctr; // one ticket counter a launch, zeroed before each case
    const int nctr = reps + 2;
    CK(cudaMalloc(&ctr, nctr * sizeof *ctr));
    fill<<<4 * sms, 256, 0, c.s>>>(r, y, nmax);
    CK(cudaGetLastError());
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, res4<0, 2>, 256, 0));
    const int persist = sms * occ;
    int bad = 0;
    for (const shape &s : shapes) {
        const int64_t n = s.rows * s.D, n8 = n / 8;
        const double bytes = 12.0 * (double)n;
        char name[32];
        snprintf(name, sizeof name, "D%lld/rows%lld", (long long)s.D, (long long)s.rows);
        // the reference: bench's copy, cudaMemcpy of bytes / 2 (reads + writes = bytes)
        double cu = median_us(c, [&] { CK(cudaMemcpyAsync(h, r, (size_t)(bytes / 2), cudaMemcpyDeviceToDevice, c.s)); });
        line(name, "cudaMemcpy", bytes, cu, cu);
        const int64_t n16 = (int64_t)(bytes / 2) / 16;
        const int one = (int)((n16 + 255) / 256);
        line(name, "copy16 oneshot", bytes,
             median_us(c, [&] { copy16<1><<<one, 256, 0, c.s>>>((const uint4 *)r, (uint4 *)h, n16); }), cu);
        line(name, "copy16 persist x4", bytes,
             median_us(c, [&] { copy16<4><<<persist, 256, 0, c.s>>>((const uint4 *)r, (uint4 *)h, n16); }), cu);
        const int one8 = (int)((n8 + 255) / 256);
        struct {
            const char *name;
            void (*k)(const float4 *, const uint4 *, float4 *, uint4 *, int64_t);
            int grid;
        } v[] = {{"res4 oneshot", res4<0, 1>, one8},       {"res4 oneshot cs", res4<1, 1>, one8},
                 {"res4 persist x1", res4<0, 1>, persist}, {"res4 persist x2", res4<0, 2>, persist},
                 {"res4 persist x4", res4<0, 4>, persist}, {"res4 persist x2 cs", res4<1, 2>, persist}};
        for (auto &k : v) {
            CK(cudaMemsetAsync(h, 0, n * 4, c.s));
            double us = median_us(c, [&] {
                k.k<<<k.grid, 256, 0, c.s>>>((const float4 *)r, (const uint4 *)y, (float4 *)h, (uint4 *)out, n8);
            });
            CK(cudaStreamSynchronize(c.s));
            bad |= check(r, y, h, out, n, k.name);
            line(name, k.name, bytes, us, cu);
        }
        {
            CK(cudaMemsetAsync(ctr, 0, nctr * sizeof *ctr, c.s));
            CK(cudaMemsetAsync(h, 0, n * 4, c.s));
            int launch = 0;
            double us = median_us(c, [&] {
                res4_ticket<<<persist, 256, 0, c.s>>>((const float4 *)r, (const uint4 *)y, (float4 *)h, (uint4 *)out,
                                                      n8, ctr + launch++);
            });
            CK(cudaStreamSynchronize(c.s));
            bad |= check(r, y, h, out, n, "res4 ticket");
            line(name, "res4 persist ticket", bytes, us, cu);
            CK(cudaMemsetAsync(h, 0, n * 4, c.s));
            us = median_us(c, [&] {
                res4_blocked<<<persist, 256, 0, c.s>>>((const float4 *)r, (const uint4 *)y, (float4 *)h, (uint4 *)out, n8);
            });
            CK(cudaStreamSynchronize(c.s));
            bad |= check(r, y, h, out, n, "res4 blocked");
            line(name, "res4 persist blocked", bytes, us, cu);
        }
        line(name, "split2 (r->h | y->out)", bytes, median_us(c, [&] {
                 split2<<<persist, 256, 0, c.s>>>((const uint4 *)r, (const uint4 *)y, (uint4 *)h, (uint4 *)out, n8);
             }), cu);
    }
    // the copy's own curve: cudaMemcpy at lnmod's 4 bytes an element up to the fused op's 12
    for (double gb : {0.1, 0.2, 0.4, 0.8, 1.2, 2.4}) {
        const double bytes = gb * 1e9;
        double cu = median_us(c, [&] { CK(cudaMemcpyAsync(h, r, (size_t)(bytes / 2), cudaMemcpyDeviceToDevice, c.s)); });
        char name[32];
        snprintf(name, sizeof name, "%.1f GB", gb);
        printf("%-22s %-26s %8.3f GB %9.1f us %6.3f TB/s\n", name, "cudaMemcpy curve", bytes / 1e9, cu, bytes / cu / 1e6);
    }
    printf("probe: %s\n", bad ? "a kernel's output was WRONG" : "outputs checked (3 x 4096 elements a kernel and shape)");
    return bad ? 1 : 0;
}
