// bv3_main.cu -- the harness of round 3 (experiment; round 2's bv2_main.cu with round 3's
// kernels): the built dtile (lnmod_backward "dtile": version 2 per sample/frame, version 1
// per token) and the candidates of bv3.h on each shape -- per shape the kernels of its
// round-3 list (bv3_tables.h), or those of --kernels:
//   * dx, dscale, dshift against the float64 backward at the forward's fp32 statistics with
//     the verifier's allowances (bv2_check.h), every element, on fresh random inputs;
//   * the gaps between modulation rows (stride 6*D) and 16 bytes past every output keep
//     their poison; a second launch with other poison and a garbage workspace gives the
//     same bytes ("det");
//   * the median of --reps event-timed launches, L2 flushed (a 4 x L2 memset) before each,
//     against a device-to-device copy of lnmod_bwd_min_bytes timed the same way in the same
//     run ("% of copy": copy time / kernel time).
//   * on a timed shape, the first kernel (dtile) timed once more at the end ("again": the
//     run's own spread, which a difference between kernels must exceed to mean anything);
//   * "bits": a candidate's dx, dscale, dshift compared byte for byte with the built dtile's
//     (first launches, same inputs): half, k2 and k2half must match wherever their own kernel
//     ran (same plan, G and T, same order of every addition), else FAIL; tok's is reported.
// Prints one line per shape and kernel, then the table (one row per shape and kernel).
// Usage: bv3bench [--reps N] [--seed S] [--only SUBSTRING | --shape NAME] [--kernels A,B,..]
// [--quick: the untimed shapes only] [--threads N] [--list: round 3's shapes]
// [--self-test: the check against planted errors, no GPU].
// Exit: 0 all passed, 1 a check failed, 2 bad usage, 3 a CUDA or internal error, 77 no
// CUDA device.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bv2_check.h"
#include "bv3.h"
#include "bv3_tables.h"
#include "lnmod_variants.cuh"
extern "C" {
#include "ref_lnmod.h"
}

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "bv3bench: CUDA %s at line %d\n", cudaGetErrorString(e_), __LINE__); \
            std::exit(3);                                                                     \
        }                                                                                     \
    } while (0)

namespace {

uint64_t rng_seed = 1;
// xorshift64; each block of rows has its own stream (seed, shape, block) so that the
// inputs are the same however many threads make them.
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
    int reps = 9, threads = 16;
    bool quick = false, list = false;
    const char *only = "", *exact = nullptr, *kernels = nullptr;
    uint64_t seed = 1;
};

struct dev_bufs {
    char *x, *dy, *sc, *sh, *y, *dx, *ds, *dh; // base allocations (+16 bytes each)
    float *mean, *rstd;
    void *ws;
    size_t xb, yb, mb, wsb;
    int off;
};

struct result {
    float us = 0;
    bv3_info info = {1, 0, 0, 0, 0, 0, 0, 0};
    bool det = false, guard = false;
    std::vector<char> dx, ds, dh; // first launch, base allocations
};

lnmod_status launch(int k, const lnmod_desc *d, const dev_bufs &b, cudaStream_t st, bv3_info *info)
{
    const int o = b.off;
    return bv3_backward(KERNELS[k].id, d, b.x + o, b.sc + o, b.dy + o, b.mean, b.rstd, b.dx + o, b.ds + o, b.dh + o,
                        b.ws, b.wsb, st, info);
}

template <typename F> float time_median(int reps, void *flush, size_t fb, cudaStream_t st, F fn)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int i = 0; i < reps + 2; i++) { // two warm-up launches
        CK(cudaMemsetAsync(flush, i & 0xff, fb, st));
        CK(cudaEventRecord(e0, st));
        fn();
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

std::vector<char> fetch(const char *p, size_t n)
{
    std::vector<char> h(n);
    CK(cudaMemcpy(h.data(), p, n, cudaMemcpyDeviceToHost));
    return h;
}

// Poison 0x7f/0xff (pass 0) or 0x11/0x22 and a garbage workspace (pass 1).
void poison(const dev_bufs &b, int pass)
{
    CK(cudaMemset(b.ds, pass ? 0x11 : 0x7f, b.mb + 16));
    CK(cudaMemset(b.dh, pass ? 0x11 : 0x7f, b.mb + 16));
    CK(cudaMemset(b.dx, pass ? 0x22 : 0xff, b.xb + 16));
    if (b.ws) CK(cudaMemset(b.ws, pass ? 0x3c : 0xa5, b.wsb));
}

// Bytes of a modulation output that no element owns (the stride gaps, the 16 + off bytes
// around it) still hold the poison byte p.
bool guard_ok(const lnmod_desc *d, const std::vector<char> &h, int off, size_t esz, unsigned char p)
{
    const int64_t nm = lnmod_mod_rows(d);
    std::vector<bool> owned(h.size(), false);
    for (int64_t m = 0; m < nm; m++)
        for (int64_t j = 0; j < d->D; j++)
            for (size_t q = 0; q < esz; q++) owned[off + (size_t)(m * d->scale_stride + j) * esz + q] = true;
    for (size_t i = 0; i < h.size(); i++)
        if (!owned[i] && (unsigned char)h[i] != p) return false;
    return true;
}

bool dx_guard_ok(const std::vector<char> &h, int off, size_t xb)
{
    for (size_t i = 0; i < h.size(); i++)
        if ((i < (size_t)off || i >= off + xb) && (unsigned char)h[i] != 0xff) return false;
    return true;
}

// The host inputs of a shape (x with a per-row offset, so that the statistics matter).
void make_inputs(const lnmod_desc *d, uint64_t shape_no, int threads, std::vector<char> &hx,
                 std::vector<char> &hdy, std::vector<char> &hs, std::vector<char> &hsh)
{
    const int64_t block = 256, nblk = (d->rows + block - 1) / block;
    std::atomic<int64_t> next{0};
    auto fill = [&] {
        for (int64_t b; (b = next.fetch_add(1)) < nblk;) {
            uint64_t s = stream_of(shape_no, (uint64_t)b);
            const int64_t r1 = std::min(d->rows, (b + 1) * block);
            for (int64_t i = b * block * d->D; i < r1 * d->D; i++) {
                ref_store(d->x_dtype, hx.data(), i, (urand(s) - 0.5) * 4.0 + (double)((i / d->D) % 7) * 3.0);
                ref_store(d->y_dtype, hdy.data(), i, urand(s) - 0.5);
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) pool.emplace_back(fill);
    for (auto &t : pool) t.join();
    uint64_t s = stream_of(shape_no, ~0ull);
    const int64_t nmod = (int64_t)(hs.size() / lnmod_dtype_size(d->mod_dtype));
    for (int64_t i = 0; i < nmod; i++) {
        ref_store(d->mod_dtype, hs.data(), i, (urand(s) - 0.5) * 0.5);
        ref_store(d->mod_dtype, hsh.data(), i, urand(s) - 0.5);
    }
}

dev_bufs alloc_bufs(const lnmod_desc *d, int misalign)
{
    dev_bufs b;
    b.xb = (size_t)(d->rows * d->D) * lnmod_dtype_size(d->x_dtype);
    b.yb = (size_t)(d->rows * d->D) * lnmod_dtype_size(d->y_dtype);
    b.mb = (size_t)((lnmod_mod_rows(d) - 1) * d->scale_stride + d->D) * lnmod_dtype_size(d->mod_dtype);
    b.off = misalign ? 4 : 0;
    char **bufs[] = {&b.x, &b.dy, &b.sc, &b.sh, &b.y, &b.dx, &b.ds, &b.dh};
    const size_t sz[] = {b.xb, b.yb, b.mb, b.mb, b.yb, b.xb, b.mb, b.mb};
    for (int i = 0; i < 8; i++) CK(cudaMalloc(reinterpret_cast<void **>(bufs[i]), sz[i] + 16));
    CK(cudaMalloc(&b.mean, (size_t)d->rows * 4));
    CK(cudaMalloc(&b.rstd, (size_t)d->rows * 4));
    size_t w1 = 0; // the candidates use the production's plan: dtile's workspace covers them
    if (lnmod_backward_workspace("dtile", d, &w1) != LNMOD_OK) std::exit(3);
    b.wsb = w1;
    b.ws = nullptr;
    if (b.wsb) CK(cudaMalloc(&b.ws, b.wsb));
    return b;
}

void free_bufs(dev_bufs &b)
{
    char *bufs[] = {b.x, b.dy, b.sc, b.sh, b.y, b.dx, b.ds, b.dh};
    for (char *p : bufs) CK(cudaFree(p));
    CK(cudaFree(b.mean));
    CK(cudaFree(b.rstd));
    if (b.ws) CK(cudaFree(b.ws));
}

// Kernel k on the shape: two poisoned launches (bytes compared), then the timing.
void run_kernel(int k, const lnmod_desc *d, const dev_bufs &b, bool timed, const opts &o,
                void *flush, size_t fb, cudaStream_t st, result &res)
{
    for (int pass = 0; pass < 2; pass++) {
        poison(b, pass);
        lnmod_status q = launch(k, d, b, st, &res.info);
        if (q != LNMOD_OK) {
            std::fprintf(stderr, "bv3bench: %s: %s\n", KERNELS[k].name, lnmod_status_name(q));
            std::exit(3);
        }
        CK(cudaStreamSynchronize(st));
        CK(cudaGetLastError());
        std::vector<char> hx = fetch(b.dx, b.xb + 16), hs = fetch(b.ds, b.mb + 16),
                          hh = fetch(b.dh, b.mb + 16);
        if (pass == 0) {
            const size_t es = lnmod_dtype_size(d->mod_dtype);
            res.guard = dx_guard_ok(hx, b.off, b.xb) && guard_ok(d, hs, b.off, es, 0x7f) &&
                        guard_ok(d, hh, b.off, es, 0x7f);
            res.dx.swap(hx);
            res.ds.swap(hs);
            res.dh.swap(hh);
        } else {
            // The poison differs between the passes, so compare only the owned bytes: all of
            // dx, and the modulation rows.
            bool same = std::memcmp(hx.data() + b.off, res.dx.data() + b.off, b.xb) == 0;
            const size_t es = lnmod_dtype_size(d->mod_dtype);
            for (int64_t m = 0; same && m < lnmod_mod_rows(d); m++) {
                const size_t at = b.off + (size_t)(m * d->scale_stride) * es;
                same = std::memcmp(hs.data() + at, res.ds.data() + at, (size_t)d->D * es) == 0 &&
                       std::memcmp(hh.data() + at, res.dh.data() + at, (size_t)d->D * es) == 0;
            }
            res.det = same;
        }
    }
    if (timed)
        res.us = time_median(o.reps, flush, fb, st, [&] {
            if (launch(k, d, b, st, nullptr) != LNMOD_OK) std::exit(3);
        });
}

// dx and every owned byte of dscale/dshift of two kernels' first launches equal.
bool same_bits(const lnmod_desc *d, const dev_bufs &b, const result &p, const result &q)
{
    if (std::memcmp(p.dx.data() + b.off, q.dx.data() + b.off, b.xb) != 0) return false;
    const size_t es = lnmod_dtype_size(d->mod_dtype);
    for (int64_t m = 0; m < lnmod_mod_rows(d); m++) {
        const size_t at = b.off + (size_t)(m * d->scale_stride) * es;
        if (std::memcmp(p.ds.data() + at, q.ds.data() + at, (size_t)d->D * es) != 0 ||
            std::memcmp(p.dh.data() + at, q.dh.data() + at, (size_t)d->D * es) != 0)
            return false;
    }
    return true;
}

// One shape: inputs, the forward's statistics, every kernel, the checks. Returns the
// failures; appends the shape's table row.
int run_shape(const shape &s, uint64_t shape_no, const std::vector<int> &ks, const opts &o, void *flush,
              size_t fb, cudaStream_t st, std::vector<std::string> &table)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = s.rows;
    d.D = s.D;
    d.rows_per_sample = s.S;
    d.frame_len = s.L;
    d.x_dtype = s.xt;
    d.mod_dtype = s.mt;
    d.y_dtype = s.yt;
    d.layout = s.lay;
    // Wan's [B, 6, D] modulation: stride 6*D (+1 misaligned); per token a plain [rows, D]
    // (a 6*D stride there would make each of the four modulation buffers 4 GB at D5120).
    d.scale_stride = d.shift_stride = s.lay == TOK ? s.D : 6 * s.D + (s.misalign ? 1 : 0);
    if (lnmod_desc_validate(&d) != LNMOD_OK) {
        std::fprintf(stderr, "bv3bench: bad shape %s\n", s.name);
        std::exit(3);
    }
    dev_bufs b = alloc_bufs(&d, s.misalign);
    std::vector<char> hx(b.xb), hdy(b.yb), hs(b.mb), hsh(b.mb);
    make_inputs(&d, shape_no, o.threads, hx, hdy, hs, hsh);
    const int off = b.off;
    CK(cudaMemcpy(b.x + off, hx.data(), b.xb, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.dy + off, hdy.data(), b.yb, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.sc + off, hs.data(), b.mb, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.sh + off, hsh.data(), b.mb, cudaMemcpyHostToDevice));
    if (lnmod_forward("dtile", &d, b.x + off, b.sc + off, b.sh + off, b.y + off, b.mean, b.rstd, st) != LNMOD_OK)
        std::exit(3);
    CK(cudaStreamSynchronize(st));
    std::vector<float> hm((size_t)d.rows), hr((size_t)d.rows);
    CK(cudaMemcpy(hm.data(), b.mean, (size_t)d.rows * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hr.data(), b.rstd, (size_t)d.rows * 4, cudaMemcpyDeviceToHost));

    const bool timed = s.timed;
    const int64_t minb = lnmod_bwd_min_bytes(&d);
    float tc = 0;
    if (timed) {
        char *ca, *cb;
        const size_t half = (size_t)minb / 2;
        CK(cudaMalloc(&ca, half));
        CK(cudaMalloc(&cb, half));
        CK(cudaMemset(ca, 0x5a, half));
        tc = time_median(o.reps, flush, fb, st, [&] { CK(cudaMemcpyAsync(cb, ca, half, cudaMemcpyDeviceToDevice, st)); });
        CK(cudaFree(ca));
        CK(cudaFree(cb));
    }
    const int nk = (int)ks.size();
    std::vector<result> res(nk);
    for (int i = 0; i < nk; i++) run_kernel(ks[i], &d, b, timed, o, flush, fb, st, res[i]);
    float again = 0; // the first kernel timed once more: the run's own spread
    if (timed)
        again = time_median(o.reps, flush, fb, st, [&] {
            if (launch(ks[0], &d, b, st, nullptr) != LNMOD_OK) std::exit(3);
        });
    std::vector<bv2_got> got(nk);
    for (int i = 0; i < nk; i++)
        got[i] = bv2_got{res[i].dx.data() + off, res[i].ds.data() + off, res[i].dh.data() + off, 0, 0, nullptr};
    if (bv2_check(&d, hx.data(), hs.data(), hdy.data(), hm.data(), hr.data(), got.data(), nk, o.threads) != 0) {
        std::fprintf(stderr, "bv3bench: the reference refused %s\n", s.name);
        std::exit(3);
    }
    int fails = 0;
    std::printf("== %s  rows %lld D %lld  min bytes %lld", s.name, (long long)d.rows, (long long)d.D, (long long)minb);
    if (timed) std::printf("  copy %.1f us (%.2f TB/s)", tc, (double)minb / tc / 1e6);
    std::printf("\n");
    // The built dtile's outputs, where it is in the list: the reference of "bits".
    int base = -1;
    for (int i = 0; i < nk; i++)
        if (KERNELS[ks[i]].id == BV3_DTILE && base < 0) base = i;
    int64_t T0 = 0, G0 = 0;
    {
        int t = 0, g = 0;
        if (lnmod_bwd_bulk_takes(&d, &t, &g)) T0 = t, G0 = g;
    }
    std::string fell, bad;
    for (int i = 0; i < nk; i++) {
        const result &r = res[i];
        const kern &kn = KERNELS[ks[i]];
        const char *name = kn.name;
        const bool own = kn.id != BV3_DTILE && r.info.path == 3, fb = kn.id != BV3_DTILE && !own;
        const int same = base < 0 || kn.id == BV3_DTILE ? -1 : same_bits(&d, b, res[i], res[base]) ? 1 : 0;
        // Must match: a bulk candidate that ran its own kernel where the built dtile's bulk
        // path has the same shape (G, T) -- it then ran the bulk path too (same checks).
        const bool must = kn.must_match && own && same >= 0 && T0 == r.info.threads && G0 == r.info.groups;
        const bool bits_ok = !must || same == 1;
        const bool ok = got[i].fails == 0 && r.det && r.guard && bits_ok;
        fails += ok ? 0 : 1;
        const char *bits = same < 0 ? "-" : same ? (must ? "same" : "same (info)") : (must ? "DIFFER" : "differ (info)");
        std::printf("  %-7s %8.1f us %6.1f%% of copy  %s T %d G %d ns %d per_sm %d smem %d grid %d cpg %lld  "
                    "worst %.3f (%s) fails %lld det %s guard %s bits %s  %s\n",
                    name, r.us, timed ? 100.0 * tc / r.us : 0.0, own ? "own" : fb ? "=dtile" : "dtile",
                    r.info.threads, r.info.groups, r.info.stages, r.info.per_sm, r.info.smem, r.info.grid,
                    (long long)r.info.cpg, got[i].worst, got[i].worst_of, (long long)got[i].fails,
                    r.det ? "yes" : "NO", r.guard ? "ok" : "BAD", bits, ok ? "ok" : "FAIL");
        if (fb) fell += std::string(fell.empty() ? "" : ",") + name;
        if (!ok) bad += std::string(bad.empty() ? "" : ",") + name;
        if (!timed) continue;
        char cell[320];
        if (!own)
            std::snprintf(cell, sizeof cell, "| %s | %s | %.1f | %.1f | %s | %s | %s |", s.name, name,
                          100.0 * tc / r.us, r.us, fb ? "=dtile" : "built", bits, ok ? "ok" : "FAIL");
        else
            std::snprintf(cell, sizeof cell, "| %s | %s | %.1f | %.1f | %dx2 G%d ns%d %d/SM grid %d cpg %lld | %s | %s |",
                          s.name, name, 100.0 * tc / r.us, r.us, r.info.threads, r.info.groups, r.info.stages,
                          r.info.per_sm, r.info.grid, (long long)r.info.cpg, bits, ok ? "ok" : "FAIL");
        table.push_back(cell);
    }
    char cell[320];
    if (timed) {
        std::printf("  %-9s %8.1f us %6.1f%% of copy  (%s timed again: %+.1f points)\n", "again", again,
                    100.0 * tc / again, KERNELS[ks[0]].name, 100.0 * tc / again - 100.0 * tc / res[0].us);
        std::snprintf(cell, sizeof cell, "| %s | %s again | %.1f | %.1f | A/A %+.1f points | - | - |", s.name,
                      KERNELS[ks[0]].name, 100.0 * tc / again, again, 100.0 * tc / again - 100.0 * tc / res[0].us);
    } else {
        std::snprintf(cell, sizeof cell, "| %s | %d kernels | - | - | =dtile: %s | - | %s |", s.name, nk,
                      fell.empty() ? "none" : fell.c_str(), bad.empty() ? "ok" : ("FAIL " + bad).c_str());
    }
    table.push_back(cell);
    std::fflush(stdout);
    free_bufs(b);
    return fails;
}

// --self-test (no GPU): the check itself must be able to fail. The reference's own outputs,
// rounded to their dtypes, pass; the same with one dx, one dscale or one dshift element
// moved by 1% fail exactly once each. Returns 0 when all of that holds.
int self_test(int threads)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = 96;
    d.D = 136;
    d.rows_per_sample = 32;
    d.frame_len = 10;
    d.layout = LNMOD_PER_FRAME;
    d.scale_stride = d.shift_stride = 6 * d.D;
    const int64_t n = d.rows * d.D, nm = lnmod_mod_rows(&d);
    const size_t mb = (size_t)((nm - 1) * d.scale_stride + d.D) * 4;
    std::vector<char> hx((size_t)n * 2), hdy((size_t)n * 2), hs(mb), hsh(mb), dx((size_t)n * 2), ds(mb), dh(mb);
    make_inputs(&d, 999, threads, hx, hdy, hs, hsh);
    std::vector<double> y((size_t)n), mean((size_t)d.rows), rstd((size_t)d.rows), rdx((size_t)d.D), g((size_t)d.D),
        xh((size_t)d.D), s((size_t)d.D), h((size_t)d.D);
    if (ref_lnmod_forward(&d, hx.data(), hs.data(), hsh.data(), y.data(), mean.data(), rstd.data()) != LNMOD_OK) return 3;
    std::vector<float> fm((size_t)d.rows), fr((size_t)d.rows);
    for (int64_t r = 0; r < d.rows; r++) {
        fm[r] = ref_f64_to_f32(mean[r]);
        fr[r] = ref_f64_to_f32(rstd[r]);
    }
    for (int64_t r = 0; r < d.rows; r++) {
        ref_bwd_row info;
        if (ref_lnmod_backward_row(&d, r, hx.data(), hs.data(), hdy.data(), fm.data(), fr.data(), rdx.data(),
                                   g.data(), xh.data(), &info) != LNMOD_OK)
            return 3;
        for (int64_t i = 0; i < d.D; i++) ref_store(d.x_dtype, dx.data(), r * d.D + i, rdx[i]);
    }
    for (int64_t m = 0; m < nm; m++) {
        if (ref_lnmod_backward_colsums(&d, m, 0, d.D, hx.data(), hdy.data(), fm.data(), fr.data(), s.data(),
                                       h.data(), nullptr, nullptr) != LNMOD_OK)
            return 3;
        for (int64_t j = 0; j < d.D; j++) {
            ref_store(d.mod_dtype, ds.data(), m * d.scale_stride + j, s[j]);
            ref_store(d.mod_dtype, dh.data(), m * d.shift_stride + j, h[j]);
        }
    }
    std::vector<char> bx = dx, bs = ds, bh = dh;
    const int64_t ix = 77 * d.D + 5, im = 4 * d.scale_stride + 100;
    ref_store(d.x_dtype, bx.data(), ix, ref_load(d.x_dtype, dx.data(), ix) * 1.01 + 0.01);
    ref_store(d.mod_dtype, bs.data(), im, ref_load(d.mod_dtype, ds.data(), im) * 1.01 + 0.01);
    ref_store(d.mod_dtype, bh.data(), im, ref_load(d.mod_dtype, dh.data(), im) * 1.01 + 0.01);
    bv2_got got[4] = {{dx.data(), ds.data(), dh.data(), 0, 0, nullptr},
                      {bx.data(), ds.data(), dh.data(), 0, 0, nullptr},
                      {dx.data(), bs.data(), dh.data(), 0, 0, nullptr},
                      {dx.data(), ds.data(), bh.data(), 0, 0, nullptr}};
    if (bv2_check(&d, hx.data(), hs.data(), hdy.data(), fm.data(), fr.data(), got, 4, threads) != 0) return 3;
    const int64_t want[4] = {0, 1, 1, 1};
    int bad = 0;
    for (int k = 0; k < 4; k++) {
        std::printf("self-test %d: fails %lld (want %lld), worst %.3f (%s)\n", k, (long long)got[k].fails,
                    (long long)want[k], got[k].worst, got[k].worst_of);
        bad += got[k].fails != want[k];
    }
    std::printf("self-test: %s\n", bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}

int usage(const char *msg)
{
    std::fprintf(stderr, "bv3bench: %s\nusage: bv3bench [--reps N>=9] [--seed S] [--only SUBSTRING | --shape NAME] "
                         "[--kernels A,B,..] [--quick] [--threads N] [--list] [--self-test]\nkernels:", msg);
    for (int k = 0; k < NK; k++) std::fprintf(stderr, " %s", KERNELS[k].name);
    std::fprintf(stderr, "\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    opts o;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        const bool has = i + 1 < argc;
        if (a == "--reps" && has) o.reps = std::atoi(argv[++i]);
        else if (a == "--seed" && has) o.seed = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--only" && has) o.only = argv[++i];
        else if (a == "--threads" && has) o.threads = std::atoi(argv[++i]);
        else if (a == "--shape" && has) o.exact = argv[++i];
        else if (a == "--kernels" && has) o.kernels = argv[++i];
        else if (a == "--list") o.list = true;
        else if (a == "--self-test") return self_test(o.threads);
        else if (a == "--quick") o.quick = true;
        else return usage(("unknown or incomplete option '" + a + "'").c_str());
    }
    if (o.reps < 9) return usage("--reps must be at least 9 (the method's median of >= 9)");
    if (o.threads < 1 || o.threads > 256) return usage("--threads must be 1..256");
    std::vector<int> ks;
    if (o.kernels && !kernel_list(o.kernels, ks)) return usage("--kernels: a name not in the kernel list");
    if (o.list) { // "timed|check<TAB>name<TAB>kernels" a line for round 3's shapes (device.sh)
        for (const shape &s : SHAPES)
            std::printf("%s\t%s\t%s\n", s.timed ? "timed" : "check", s.name, o.kernels ? o.kernels : s.r3);
        return 0;
    }
    if (o.exact) {
        bool known = false;
        for (const shape &s : SHAPES) known = known || !std::strcmp(s.name, o.exact);
        if (!known) return usage((std::string("no shape named '") + o.exact + "' (--list)").c_str());
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        std::printf("bv3bench: no CUDA device: nothing can run here\n");
        return 77;
    }
    rng_seed = o.seed;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s  SMs %d  L2 %d MB  seed %llu  reps %d\n", prop.name, prop.multiProcessorCount,
                prop.l2CacheSize >> 20, (unsigned long long)o.seed, o.reps);
    const size_t fb = (size_t)prop.l2CacheSize * 4;
    void *flush;
    CK(cudaMalloc(&flush, fb));
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    std::vector<std::string> table;
    int fails = 0;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        const shape &s = SHAPES[i];
        if (*o.only && !std::strstr(s.name, o.only)) continue;
        if (o.exact && std::strcmp(s.name, o.exact)) continue;
        if (o.quick && s.timed) continue;
        if (!o.kernels && !kernel_list(s.r3, ks)) return usage("internal: a shape's kernel list");
        fails += run_shape(s, i, ks, o, flush, fb, st, table);
    }
    std::printf("\n%% of copy (median of %d, L2 flushed; '=dtile': the candidate ran the built dtile; check-only shapes: one row)\n",
                o.reps);
    std::printf("| shape | kernel | %% of copy | us | T x vpt, groups, stages, CTAs/SM, grid, chunks/group | bits vs dtile | check |\n");
    std::printf("|---|---|---:|---:|---|---|---|\n");
    for (const std::string &r : table) std::printf("%s\n", r.c_str());
    std::printf("FAILS %d\n", fails);
    return fails ? 1 : 0;
}
