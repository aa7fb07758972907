// fv2_main.cu -- the harness of the forward v2 (experiment): v1's dtile and row_per_warp
// (lnmod_forward) and v2 (fv2_forward: the rule, and its alternatives v2a, v2b and v2c -- the
// odd kernel where the rule picks the chunk class, round 5's comparison the other way) on each shape:
//   * y, mean, rstd of every kernel against the float64 reference with the verifier's
//     tolerances (fv2_check.h), every element, on fresh random inputs (x with a row offset);
//   * the 16 bytes before and after y and the statistics keep their poison; a second launch,
//     with other poison and no statistics, gives the same y bytes ("det", compared on the GPU);
//   * the median of --reps timings, L2 flushed (a 4 x L2 memset) before each, two warm-ups,
//     against a device-to-device copy of lnmod_fwd_min_bytes timed the same way in the same
//     process ("% of copy" = copy time / kernel time). Shapes under 64 MiB are timed as
//     CUDA-graph replays of K launches (time / K) rotating over input sets of >= 2 x L2.
// Usage: fv2bench [--reps N>=9] [--seed S] [--threads N] [--group G | --shape NAME]
// [--list] [--self-test]. Exit: 0 all passed, 1 a check failed, 2 bad usage, 3 a CUDA or
// internal error, 77 no CUDA device.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fv2.h"
#include "fv2_check.h"
#include "fv2_rows.h"
extern "C" {
#include "ref_lnmod.h"
}

#define CK(call)                                                                                         \
    do {                                                                                                 \
        cudaError_t e_ = (call);                                                                         \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "fv2bench: CUDA %s at line %d\n", cudaGetErrorString(e_), __LINE__);    \
            std::exit(3);                                                                                \
        }                                                                                                \
    } while (0)

namespace {

struct shape {
    std::string name, group;
    lnmod_dtype xt, mt, yt;
    lnmod_layout lay;
    int64_t D, rows, S, L;
    int misalign; // 1: every pointer 4 bytes past 16-byte alignment, strides 6*D + 1; 2: y one element further, strides + 2
    bool timed;
    int adv; // fv2_rows.h: 1 for the adversarial rows, 2 for outliers on the pivot
};

const lnmod_dtype BF = LNMOD_BF16, F32 = LNMOD_F32, H = LNMOD_F16;
const lnmod_layout SAM = LNMOD_PER_SAMPLE, TOK = LNMOD_PER_TOKEN, FRM = LNMOD_PER_FRAME;

const char *dn(lnmod_dtype t) { return lnmod_dtype_name(t); }

shape mk(const std::string &group, lnmod_dtype x, lnmod_dtype m, lnmod_dtype y, lnmod_layout lay, int64_t D,
         int64_t rows, int64_t S, int64_t L, int mis, bool timed, const char *extra = "")
{
    shape s{"", group, x, m, y, lay, D, rows, S, L, mis, timed, 0};
    s.name = std::string(dn(x)) + "-" + dn(m) + "-" + dn(y) + " " + lnmod_layout_name(lay) + " D" + std::to_string(D) +
             " r" + std::to_string(rows) + extra;
    return s;
}

// The sweep set of `adaload bench` (bench/bench_shapes.c: every multiple of 128 from 256 to
// 8192, 10240/12288/16384, and 1000/1537/5119) in groups of about 12, then the bar's other
// widths, odd D, the layouts and dtypes of the bar, the image shape, the check-only shapes.
std::vector<shape> all_shapes()
{
    std::vector<shape> v;
    std::vector<int64_t> sweep;
    for (int64_t D = 256; D <= 8192; D += 128) sweep.push_back(D);
    for (int64_t D : {10240, 12288, 16384, 1000, 1537, 5119}) sweep.push_back(D);
    for (size_t i = 0; i < sweep.size(); i++)
        v.push_back(mk("sweep" + std::to_string(i / 12), BF, F32, BF, SAM, sweep[i], 32760, 32760, 1, 0, true));
    for (int64_t D : {1088, 1216, 1344, 2112, 3136, 4160, 6208, 8256, 9280, 11328, 14400, 16320})
        v.push_back(mk("mult64", BF, F32, BF, SAM, D, 32760, 32760, 1, 0, true));
    for (int64_t D : {264, 520, 776, 1032, 1160, 2056, 3080, 5128, 9000})
        v.push_back(mk("mult8", BF, F32, BF, SAM, D, 32760, 32760, 1, 0, true));
    for (int64_t D : {255, 777, 3001, 16383}) v.push_back(mk("odd", BF, F32, BF, SAM, D, 32760, 32760, 1, 0, true));
    // round 5 (the flat chunk kernel: v2 since its landing, v2c the odd kernel it replaced): the
    // odd widths of issue 21's bar in one group, and
    // two aligned widths for reference (names as in the sweep: --shape runs the first match)
    for (int64_t D : {777, 1537, 3001, 5119, 16383, 1536, 5120})
        v.push_back(mk("odd3", BF, F32, BF, SAM, D, 32760, 32760, 1, 0, true));
    for (int64_t D : {1536, 2048, 3072, 4096, 5120}) {
        v.push_back(mk("token", BF, F32, BF, TOK, D, 32760, 32760, 1, 0, true));
        v.push_back(mk("frame", BF, F32, BF, FRM, D, 32760, 32760, 1560, 0, true));
        v.push_back(mk("dtype", H, F32, H, SAM, D, 32760, 32760, 1, 0, true));
        v.push_back(mk("dtype", F32, F32, F32, SAM, D, 32760, 32760, 1, 0, true));
    }
    for (int64_t D : {1536, 3072, 5120}) v.push_back(mk("image", BF, F32, BF, SAM, D, 1560, 1560, 1, 0, true));
    v.push_back(mk("check", BF, F32, BF, SAM, 1536, 2000, 1000, 1, 1, false, " misaligned"));
    v.push_back(mk("check", F32, F32, F32, SAM, 5120, 600, 300, 1, 1, false, " misaligned"));
    v.push_back(mk("check", BF, BF, F32, FRM, 3072, 3000, 1000, 300, 0, false));
    v.push_back(mk("check", H, H, H, TOK, 2048, 500, 500, 1, 0, false));
    v.push_back(mk("check", H, F32, F32, FRM, 1024, 3021, 1007, 5, 0, false, " short frames"));
    v.push_back(mk("check", BF, F32, BF, FRM, 1536, 3021, 1007, 500, 0, false, " short last frame"));
    v.push_back(mk("check", BF, F32, BF, SAM, 16384, 64, 32, 1, 0, false, " few rows"));
    v.push_back(mk("check", F32, F32, F32, SAM, 16383, 300, 100, 1, 1, false, " misaligned"));
    v.push_back(mk("check", F32, F32, F32, TOK, 8, 37, 37, 1, 0, false));
    for (int64_t D = 1; D <= 9; D++) v.push_back(mk("check", BF, F32, BF, SAM, D, 67, 67, 1, 0, false));
    v.push_back(mk("check", BF, F32, BF, SAM, 12288, 1000, 500, 1, 0, false));
    v.push_back(mk("check", BF, BF, BF, TOK, 5120, 700, 700, 1, 0, false));
    // y's phase not x's (the odd kernels' y windows: round 4)
    v.push_back(mk("check", BF, F32, BF, SAM, 1537, 1000, 500, 1, 2, false, " y apart"));
    v.push_back(mk("check", H, F32, F32, FRM, 777, 1000, 1000, 7, 2, false, " y apart"));
    // the adversarial rows (fv2_rows.h) through every path: a warp per row, the lag path,
    // clusters, streamed modulation, the odd kernel; fp32 and bf16 x
    const int64_t adv_D[] = {1536, 3072, 8192, 1537};
    for (int64_t D : adv_D)
        for (lnmod_dtype x : {BF, F32}) {
            shape a = mk("check", x, F32, x, SAM, D, 1000, 500, 1, 0, false, " adversarial");
            a.adv = 1;
            v.push_back(a);
        }
    shape a = mk("check", BF, F32, BF, TOK, 5120, 500, 500, 1, 0, false, " adversarial");
    a.adv = 1;
    v.push_back(a);
    // round 5: every other row's first element an outlier (the flat chunk kernel's second pass)
    for (int64_t D : {1537, 5119}) {
        shape o = mk("check", BF, F32, BF, SAM, D, 1000, 1000, 1, 0, false, " pivot outliers");
        o.adv = 2;
        v.push_back(o);
    }
    return v;
}

const int NK = 6;
const char *KNAME[NK] = {"v1", "rpw", "v2", "v2a", "v2b", "v2c"};

uint64_t rng_seed = 1;
double urand(uint64_t &s)
{
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return (double)(s >> 11) * (1.0 / 9007199254740992.0);
}
uint64_t stream_of(uint64_t a, uint64_t b)
{
    uint64_t z = rng_seed * 0x9e3779b97f4a7c15ull + a * 0xbf58476d1ce4e5b9ull + b * 0x94d049bb133111ebull + 1;
    z ^= z >> 31;
    return z ? z : 1;
}

struct opts {
    int reps = 11, threads = 16;
    bool list = false;
    const char *group = nullptr, *exact = nullptr;
};

lnmod_status launch(int k, const lnmod_desc *d, const void *x, const void *sc, const void *sh, void *y, float *mean,
                    float *rstd, cudaStream_t st, fv2_info *info)
{
    if (k == 0) return lnmod_forward("dtile", d, x, sc, sh, y, mean, rstd, st);
    if (k == 1) return lnmod_forward("row_per_warp", d, x, sc, sh, y, mean, rstd, st);
    const int alt = k == 2 ? FV2_ALT_RULE : k == 3 ? FV2_ALT_SHAPE : k == 4 ? FV2_ALT_DEEP : FV2_ALT_ODD3;
    return fv2_forward(alt, d, x, sc, sh, y, mean, rstd, st, info);
}

// Counts differing bytes of a and b (the two launches' y).
__global__ void diff_bytes(const unsigned char *a, const unsigned char *b, size_t n, unsigned long long *cnt)
{
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        c += a[i] != b[i];
    if (c) atomicAdd(cnt, c);
}

// Median of reps samples (after two warm-ups) of fn(i), each after an L2 flush; fn(i) may
// run K launches (graph replay): the caller divides.
template <typename F> float time_median(int reps, void *flush, size_t fb, cudaStream_t st, F fn)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int i = 0; i < reps + 2; i++) {
        CK(cudaMemsetAsync(flush, i & 0xff, fb, st));
        CK(cudaEventRecord(e0, st));
        fn(i);
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= 2) t.push_back(ms * 1000.0f);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct bufs {
    std::vector<char *> x, y; // input sets (graph timing rotates over them); set 0 is checked
    char *sc, *sh, *ycopy;
    float *mean, *rstd; // with 16 poison bytes after
    unsigned long long *cnt;
    size_t xb, yb, mb;
    int off, offy, sets, k; // off: x, scale, shift; offy: y; k: launches per graph (0: plain launches)
};

bufs alloc_bufs(const lnmod_desc *d, int misalign, size_t l2)
{
    bufs b;
    b.xb = (size_t)(d->rows * d->D) * lnmod_dtype_size(d->x_dtype);
    b.yb = (size_t)(d->rows * d->D) * lnmod_dtype_size(d->y_dtype);
    b.mb = (size_t)((lnmod_mod_rows(d) - 1) * d->scale_stride + d->D) * lnmod_dtype_size(d->mod_dtype);
    b.off = misalign ? 4 : 0;
    b.offy = misalign == 2 ? b.off + (int)lnmod_dtype_size(d->y_dtype) : b.off; // 2: y's phase is not x's
    const int64_t minb = lnmod_fwd_min_bytes(d, 0);
    const int64_t small = (int64_t)64 << 20;
    b.k = minb < small ? (int)std::min<int64_t>(64, std::max<int64_t>(2, (small + minb - 1) / minb)) : 0;
    b.sets = b.k ? (int)std::min<int64_t>(b.k, (int64_t)(2 * l2) / std::max<int64_t>(minb, 1) + 1) : 1;
    for (int i = 0; i < b.sets; i++) {
        char *px, *py;
        CK(cudaMalloc(&px, b.xb + 32));
        CK(cudaMalloc(&py, b.yb + 32));
        b.x.push_back(px);
        b.y.push_back(py);
    }
    CK(cudaMalloc(&b.sc, b.mb + 32));
    CK(cudaMalloc(&b.sh, b.mb + 32));
    CK(cudaMalloc(&b.ycopy, b.yb + 32));
    CK(cudaMalloc(&b.mean, (size_t)d->rows * 4 + 16));
    CK(cudaMalloc(&b.rstd, (size_t)d->rows * 4 + 16));
    CK(cudaMalloc(&b.cnt, sizeof *b.cnt));
    return b;
}

void free_bufs(bufs &b)
{
    for (char *p : b.x) CK(cudaFree(p));
    for (char *p : b.y) CK(cudaFree(p));
    for (void *p : {(void *)b.sc, (void *)b.sh, (void *)b.ycopy, (void *)b.mean, (void *)b.rstd, (void *)b.cnt})
        CK(cudaFree(p));
}

// Host inputs: x by fv2_input (a per-row offset, or the adversarial rows), scale, shift.
void make_inputs(const lnmod_desc *d, uint64_t shape_no, int adv, int threads, std::vector<char> &hx,
                 std::vector<char> &hs, std::vector<char> &hh)
{
    const int64_t block = 256, nblk = (d->rows + block - 1) / block;
    const double huge = d->x_dtype == LNMOD_F16 ? 1e4 : 1e15;
    std::atomic<int64_t> next{0};
    auto fill = [&] {
        for (int64_t b; (b = next.fetch_add(1)) < nblk;) {
            uint64_t s = stream_of(shape_no, (uint64_t)b);
            const int64_t r1 = std::min(d->rows, (b + 1) * block);
            for (int64_t i = b * block * d->D; i < r1 * d->D; i++)
                ref_store(d->x_dtype, hx.data(), i, fv2_input(adv, huge, i / d->D, i % d->D, d->D, urand(s)));
        }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) pool.emplace_back(fill);
    for (auto &t : pool) t.join();
    uint64_t s = stream_of(shape_no, ~0ull);
    const int64_t nmod = (int64_t)(hs.size() / lnmod_dtype_size(d->mod_dtype));
    for (int64_t i = 0; i < nmod; i++) {
        ref_store(d->mod_dtype, hs.data(), i, (urand(s) - 0.5) * 0.5);
        ref_store(d->mod_dtype, hh.data(), i, urand(s) - 0.5);
    }
}

struct result {
    float us = 0;
    fv2_info info{};
    bool det = false, guard = false;
    std::vector<char> y;
    std::vector<float> mean, rstd;
};

bool poison_kept(const std::vector<char> &h, size_t from, size_t to, unsigned char p)
{
    for (size_t i = from; i < to; i++)
        if ((unsigned char)h[i] != p) return false;
    return true;
}

#include "fv2_main_run.cuh"

} // namespace

int main(int argc, char **argv) { return fv2_main(argc, argv); }
