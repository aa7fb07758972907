// res_bench.cu -- resbench, the harness of the fused gated residual + LN-modulate kernels
// (issue 22, this experiment). For each shape (Wan's three sites x layouts x dtypes, odd and
// small D, in place h = r and dr = dh):
//   * fresh random inputs (res_inputs.h: constant-h rows, large-mean rows, NaN in the gaps of
//     the strided gate/scale/shift rows);
//   * every forward variant (naive, dtile) and backward variant (naive, dtile, dtile_bulk) twice: outputs
//     poisoned (0xff: NaN, then 0x5a) and the workspace filled with garbage; the 16 bytes past
//     every output and the gaps between strided column-sum rows must keep the poison, and the
//     two launches must give the same bytes ("det");
//   * every output of the first launch against the float64 reference (res_check.h); the
//     backward gets the naive forward's h, mean and rstd;
//   * timed shapes: the median of --reps event-timed launches, L2 flushed (a 4 x L2 memset)
//     before each, against a device-to-device copy of lnmod_res_fwd_min_bytes (mean/rstd
//     written) or lnmod_res_bwd_min_bytes (dh read) timed the same way in the same run.
// Usage: resbench [--reps N>=9] [--seed S] [--only SUBSTRING | --shape NAME] [--quick]
//                 [--threads N] [--list] [--self-test] [--model-test] [--plan-test]
// --self-test: the check against the reference's own rounded outputs and planted errors;
// --model-test: the check on verify's fp32 CPU models (res_model_test.cc); --plan-test: the
// column-sum plans and the workspace layout (res_plan_test.cu). All three on the CPU.
// Exit: 0 all passed, 1 a check failed, 2 bad usage, 3 a CUDA or internal error, 77 no CUDA
// device (--self-test, --model-test, --plan-test and --list need none).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lnmod_res.h"
#include "res_api_extra.h"
#include "res_bench.h"
#include "res_check.h"
#include "res_inputs.h"

#define CK(call)                                                                                         \
    do {                                                                                                 \
        cudaError_t e_ = (call);                                                                         \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "resbench: CUDA %s at line %d\n", cudaGetErrorString(e_), __LINE__);  \
            std::exit(3);                                                                                \
        }                                                                                                \
    } while (0)

namespace {

const char *const FWD_V[] = {"naive", "dtile"};
const char *const BWD_V[] = {"naive", "dtile", "dtile_bulk"};
const char *const PATH_NAME[] = {"naive", "fused", "bulk"}; // res_last_path()
constexpr int NFWD = 2, NBWD = 3;

// A device allocation of n bytes plus a 16-byte guard band after it (and `off` bytes before
// the data: misaligned shapes).
struct dbuf {
    char *base = nullptr;
    size_t n = 0;
    int off = 0;
    void *p() const { return base ? base + off : nullptr; }
    size_t total() const { return n + (size_t)off + 16; }
};

dbuf dalloc(size_t n, int off)
{
    dbuf b;
    b.n = n;
    b.off = off;
    if (n) CK(cudaMalloc(&b.base, b.total()));
    return b;
}
void dfree(dbuf &b)
{
    if (b.base) CK(cudaFree(b.base));
    b.base = nullptr;
}
void up(dbuf &b, const void *h) { if (b.n) CK(cudaMemcpy(b.p(), h, b.n, cudaMemcpyHostToDevice)); }
std::vector<char> down(const dbuf &b)
{
    std::vector<char> h(b.n ? b.total() : 0); // nothing for an absent output
    if (b.n) CK(cudaMemcpy(h.data(), b.base, b.total(), cudaMemcpyDeviceToHost));
    return h;
}
void poison(dbuf &b, int v) { if (b.n) CK(cudaMemset(b.base, v, b.total())); }

// The bytes of b that an output owns: `rows` rows of D elements of size es at `stride`
// elements from b's data; one row (stride 0) is a contiguous range, checked with memcmp and
// plain loops over the few bytes around it (the big [rows, D] outputs), strided rows through
// a map (the column sums: small).
struct owned {
    size_t lo = 0, hi = 0;    // contiguous: [lo, hi)
    std::vector<bool> map;    // strided: one flag a byte of b.total()
    bool has(size_t i) const { return map.empty() ? (i >= lo && i < hi) : (bool)map[i]; }
};

owned owned_of(const dbuf &b, int64_t rows, int64_t stride, int64_t D, size_t es)
{
    owned o;
    if (rows <= 1) {
        o.lo = (size_t)b.off;
        o.hi = o.lo + (rows == 1 ? (size_t)D * es : 0);
        return o;
    }
    o.map.assign(b.total(), false);
    for (int64_t k = 0; k < rows; k++)
        for (size_t q = 0; q < (size_t)D * es; q++) o.map[(size_t)b.off + (size_t)(k * stride) * es + q] = true;
    return o;
}

bool guard_ok(const std::vector<char> &h, const owned &own, unsigned char p)
{
    if (h.empty()) return true; // an absent output
    if (own.map.empty()) {
        for (size_t i = 0; i < own.lo; i++)
            if ((unsigned char)h[i] != p) return false;
        for (size_t i = own.hi; i < h.size(); i++)
            if ((unsigned char)h[i] != p) return false;
        return true;
    }
    for (size_t i = 0; i < h.size(); i++)
        if (!own.has(i) && (unsigned char)h[i] != p) return false;
    return true;
}

bool same_owned(const std::vector<char> &a, const std::vector<char> &b, const owned &own)
{
    if (a.empty() || b.empty()) return a.size() == b.size();
    if (own.map.empty()) return std::memcmp(a.data() + own.lo, b.data() + own.lo, own.hi - own.lo) == 0;
    for (size_t i = 0; i < a.size(); i++)
        if (own.has(i) && a[i] != b[i]) return false;
    return true;
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

// The in-run copy of `bytes` (half read, half written), timed like the kernels.
float copy_us(int64_t bytes, int reps, void *flush, size_t fb, cudaStream_t st)
{
    char *a, *b;
    const size_t half = (size_t)bytes / 2;
    CK(cudaMalloc(&a, half));
    CK(cudaMalloc(&b, half));
    CK(cudaMemset(a, 0x5a, half));
    const float t = time_median(reps, flush, fb, st, [&] { CK(cudaMemcpyAsync(b, a, half, cudaMemcpyDeviceToDevice, st)); });
    CK(cudaFree(a));
    CK(cudaFree(b));
    return t;
}

struct run_ctx {
    const res_opts *o;
    void *flush;
    size_t fb;
    cudaStream_t st;
};

} // namespace

namespace {

struct fwd_bufs {
    dbuf r, y, gate, scale, shift, h, out, mean, rstd;
};
struct bwd_bufs {
    dbuf h, y, gate, scale, dout, dh, mean, rstd, dr, dy, dgate, dscale, dshift, ws;
};

struct kres {
    bool ok = false, det = false, guard = false;
    float us = 0;
    int path = 0;
    res_verdict v = {{0}, 0.0, -1};
};

void print_k(const char *dir, const char *name, const kres &k, float copy, bool timed)
{
    std::printf("  %s %-10s %9.1f us %6.1f%% of copy  path %s  worst %.3f (%s) fails %lld det %s guard %s  %s\n", dir,
                name, k.us, timed && k.us > 0 ? 100.0 * copy / k.us : 0.0, PATH_NAME[k.path >= 0 && k.path <= 2 ? k.path : 0], k.v.worst,
                k.v.worst_of < 0 ? "-" : res_out_name[k.v.worst_of], (long long)res_verdict_fails(&k.v),
                k.det ? "yes" : "NO", k.guard ? "ok" : "BAD", k.ok ? "ok" : "FAIL");
    for (int q = 0; q < RES_NOUT; q++)
        if (k.v.fails[q]) std::printf("      %s: %lld elements past their allowance\n", res_out_name[q], (long long)k.v.fails[q]);
}

// The forward variant fv on the shape: two poisoned launches, the check, the timing. host_out
// (when not NULL) gets the first launch's h, mean and rstd (the backward's inputs).
kres run_fwd(int fv, const lnmod_res_desc *d, const res_shape &s, const res_host &hi, fwd_bufs &b, const run_ctx &c,
             std::vector<char> *keep_h, std::vector<float> *keep_m, std::vector<float> *keep_r)
{
    kres k;
    const int64_t n = d->rows * d->D;
    dbuf &hb = s.inplace ? b.r : b.h;
    const lnmod_res_fwd_in in = {b.r.p(), b.y.p(), b.gate.p(), b.scale.p(), b.shift.p()};
    const lnmod_res_fwd_out out = {hb.p(), b.out.p(), static_cast<float *>(b.mean.p()), static_cast<float *>(b.rstd.p())};
    std::vector<char> first[4];
    dbuf *outs[4] = {&hb, &b.out, &b.mean, &b.rstd};
    owned own[4];
    for (int q = 0; q < 4; q++) own[q] = owned_of(*outs[q], 1, 0, (int64_t)outs[q]->n, 1);
    k.guard = true;
    for (int pass = 0; pass < 2; pass++) {
        for (int q = 0; q < 4; q++) poison(*outs[q], pass ? 0x5a : 0xff);
        up(b.r, hi.r.data()); // in place: r was overwritten by the last launch
        const lnmod_status st = lnmod_res_forward(FWD_V[fv], d, &in, &out, c.st);
        if (st != LNMOD_OK) {
            std::fprintf(stderr, "resbench: forward %s: %s\n", FWD_V[fv], lnmod_status_name(st));
            std::exit(3);
        }
        k.path = res_last_path();
        CK(cudaStreamSynchronize(c.st));
        CK(cudaGetLastError());
        for (int q = 0; q < 4; q++) {
            std::vector<char> h = down(*outs[q]);
            if (pass == 0) {
                k.guard = k.guard && guard_ok(h, own[q], 0xff);
                first[q].swap(h);
            } else {
                k.det = (q == 0 || k.det) && same_owned(first[q], h, own[q]);
            }
        }
    }
    const int o = hb.off;
    const lnmod_res_fwd_in hin = {hi.r.data(), hi.y.data(), hi.gate.empty() ? nullptr : hi.gate.data(),
                                  hi.scale.data(), hi.shift.data()};
    const lnmod_res_fwd_out got = {first[0].data() + o, first[1].data() + b.out.off,
                                   reinterpret_cast<float *>(first[2].data() + b.mean.off),
                                   reinterpret_cast<float *>(first[3].data() + b.rstd.off)};
    if (res_check_fwd(d, &hin, &got, c.o->threads, &k.v) != 0) {
        std::fprintf(stderr, "resbench: the reference refused the forward of %s\n", s.name);
        std::exit(3);
    }
    if (keep_h) {
        keep_h->assign(first[0].begin() + o, first[0].begin() + o + (size_t)n * lnmod_dtype_size(d->res_dtype));
        keep_m->assign((const float *)got.mean, (const float *)got.mean + d->rows);
        keep_r->assign((const float *)got.rstd, (const float *)got.rstd + d->rows);
    }
    k.ok = res_verdict_fails(&k.v) == 0 && k.det && k.guard;
    if (s.timed)
        k.us = time_median(c.o->reps, c.flush, c.fb, c.st, [&] {
            if (lnmod_res_forward(FWD_V[fv], d, &in, &out, c.st) != LNMOD_OK) std::exit(3);
        });
    return k;
}

// The backward variant bv: the same discipline (the workspace garbage differs between passes).
kres run_bwd(int bv, const lnmod_res_desc *d, const res_shape &s, const res_host &hi, const std::vector<char> &hh,
             const std::vector<float> &hm, const std::vector<float> &hr, bwd_bufs &b, const run_ctx &c)
{
    kres k;
    const bool gate = d->gate == LNMOD_RES_GATE, aff = d->norm == LNMOD_RES_AFFINE;
    dbuf &drb = s.inplace ? b.dh : b.dr;
    const lnmod_res_bwd_in in = {b.h.p(), gate ? b.y.p() : nullptr, b.gate.p(), b.scale.p(), b.dout.p(),
                                 s.dh ? b.dh.p() : nullptr, static_cast<float *>(b.mean.p()),
                                 static_cast<float *>(b.rstd.p())};
    const lnmod_res_bwd_out out = {drb.p(), b.dy.p(), b.dgate.p(), b.dscale.p(), b.dshift.p()};
    dbuf *outs[5] = {&drb, &b.dy, &b.dgate, &b.dscale, &b.dshift};
    const size_t es = lnmod_dtype_size(d->mod_dtype);
    const int64_t nm = lnmod_res_mod_rows(d), nn = lnmod_res_norm_rows(d);
    const owned own[5] = {owned_of(drb, 1, 0, (int64_t)drb.n, 1), owned_of(b.dy, 1, 0, (int64_t)b.dy.n, 1),
                          owned_of(b.dgate, gate ? nm : 0, d->gate_stride, d->D, es),
                          owned_of(b.dscale, nn, aff ? 0 : d->scale_stride, d->D, es),
                          owned_of(b.dshift, nn, aff ? 0 : d->shift_stride, d->D, es)};
    std::vector<char> first[5];
    k.guard = true;
    k.det = true;
    for (int pass = 0; pass < 2; pass++) {
        for (int q = 0; q < 5; q++) poison(*outs[q], pass ? 0x5a : 0xff);
        if (b.ws.n) CK(cudaMemset(b.ws.base, pass ? 0x3c : 0xa5, b.ws.total()));
        if (s.dh) up(b.dh, hi.dh.data()); // in place: dh was overwritten by the last launch
        const lnmod_status st = lnmod_res_backward(BWD_V[bv], d, &in, &out, b.ws.p(), b.ws.n, c.st);
        if (st != LNMOD_OK) {
            std::fprintf(stderr, "resbench: backward %s: %s\n", BWD_V[bv], lnmod_status_name(st));
            std::exit(3);
        }
        k.path = res_last_path();
        CK(cudaStreamSynchronize(c.st));
        CK(cudaGetLastError());
        for (int q = 0; q < 5; q++) {
            std::vector<char> h = down(*outs[q]);
            if (pass == 0) {
                k.guard = k.guard && guard_ok(h, own[q], 0xff);
                first[q].swap(h);
            } else {
                k.det = k.det && same_owned(first[q], h, own[q]);
            }
        }
    }
    const lnmod_res_bwd_in hin = {hh.data(), hi.y.data(), hi.gate.empty() ? nullptr : hi.gate.data(), hi.scale.data(),
                                  hi.dout.data(), s.dh ? hi.dh.data() : nullptr, hm.data(), hr.data()};
    const lnmod_res_bwd_out got = {first[0].data() + drb.off, first[1].data() + b.dy.off,
                                   gate ? first[2].data() + b.dgate.off : nullptr, first[3].data() + b.dscale.off,
                                   first[4].data() + b.dshift.off};
    if (res_check_bwd(d, &hin, &got, c.o->threads, &k.v) != 0) {
        std::fprintf(stderr, "resbench: the reference refused the backward of %s\n", s.name);
        std::exit(3);
    }
    k.ok = res_verdict_fails(&k.v) == 0 && k.det && k.guard;
    if (s.timed)
        k.us = time_median(c.o->reps, c.flush, c.fb, c.st, [&] {
            if (lnmod_res_backward(BWD_V[bv], d, &in, &out, b.ws.p(), b.ws.n, c.st) != LNMOD_OK) std::exit(3);
        });
    return k;
}

} // namespace

namespace {

int run_shape(const res_shape &s, int shape_no, const run_ctx &c, std::vector<std::string> &table)
{
    const lnmod_res_desc d = res_desc_of(s);
    if (lnmod_res_desc_validate(&d) != LNMOD_OK) {
        std::fprintf(stderr, "resbench: bad shape %s\n", s.name);
        std::exit(3);
    }
    res_host hi;
    res_make_inputs(&d, c.o->seed, (uint64_t)shape_no, c.o->threads, &hi);
    const int off = s.misalign ? 4 : 0;
    const int64_t n = d.rows * d.D;
    const size_t rb = (size_t)n * lnmod_dtype_size(d.res_dtype), yb = (size_t)n * lnmod_dtype_size(d.branch_dtype),
                 ob = (size_t)n * lnmod_dtype_size(d.out_dtype), sb = (size_t)d.rows * 4;
    fwd_bufs f;
    f.r = dalloc(rb, off);
    f.y = dalloc(yb, off);
    f.gate = dalloc(hi.gate.size(), off);
    f.scale = dalloc(hi.scale.size(), off);
    f.shift = dalloc(hi.shift.size(), off);
    f.h = dalloc(s.inplace ? 0 : rb, off);
    f.out = dalloc(ob, off);
    f.mean = dalloc(sb, 0);
    f.rstd = dalloc(sb, 0);
    up(f.y, hi.y.data());
    up(f.gate, hi.gate.data());
    up(f.scale, hi.scale.data());
    up(f.shift, hi.shift.data());
    const int64_t fmin = lnmod_res_fwd_min_bytes(&d, 1), bmin = lnmod_res_bwd_min_bytes(&d, s.dh ? 1 : 0);
    const float fcopy = s.timed ? copy_us(fmin, c.o->reps, c.flush, c.fb, c.st) : 0.0f;
    std::printf("== %s  rows %lld D %lld  fwd min bytes %lld", s.name, (long long)d.rows, (long long)d.D, (long long)fmin);
    if (s.timed) std::printf("  copy %.1f us (%.2f TB/s)", fcopy, (double)fmin / fcopy / 1e6);
    std::printf("\n");
    std::vector<char> hh;
    std::vector<float> hm, hr;
    kres fk[NFWD];
    for (int v = 0; v < NFWD; v++) {
        fk[v] = run_fwd(v, &d, s, hi, f, c, v == 0 ? &hh : nullptr, &hm, &hr);
        print_k("fwd", FWD_V[v], fk[v], fcopy, s.timed);
    }
    fwd_bufs *fp = &f;
    for (dbuf *p : {&fp->r, &fp->y, &fp->gate, &fp->scale, &fp->shift, &fp->h, &fp->out, &fp->mean, &fp->rstd}) dfree(*p);

    bwd_bufs b;
    const bool gate = d.gate == LNMOD_RES_GATE;
    b.h = dalloc(rb, off);
    b.y = dalloc(gate ? yb : 0, off);
    b.gate = dalloc(hi.gate.size(), off);
    b.scale = dalloc(hi.scale.size(), off);
    b.dout = dalloc(ob, off);
    b.dh = dalloc(s.dh ? rb : 0, off);
    b.mean = dalloc(sb, 0);
    b.rstd = dalloc(sb, 0);
    b.dr = dalloc(s.inplace ? 0 : rb, off);
    b.dy = dalloc(yb, off);
    b.dgate = dalloc(res_gate_bytes(&d), off);
    b.dscale = dalloc(res_norm_bytes(&d, 0), off);
    b.dshift = dalloc(res_norm_bytes(&d, 1), off);
    size_t wsb = 0;
    if (lnmod_res_backward_workspace("naive", &d, &wsb) != LNMOD_OK) std::exit(3);
    b.ws = dalloc(wsb, 0);
    up(b.h, hh.data());
    if (gate) up(b.y, hi.y.data());
    up(b.gate, hi.gate.data());
    up(b.scale, hi.scale.data());
    up(b.dout, hi.dout.data());
    up(b.mean, hm.data());
    up(b.rstd, hr.data());
    const float bcopy = s.timed ? copy_us(bmin, c.o->reps, c.flush, c.fb, c.st) : 0.0f;
    std::printf("   bwd min bytes %lld  workspace %zu", (long long)bmin, wsb);
    if (s.timed) std::printf("  copy %.1f us (%.2f TB/s)", bcopy, (double)bmin / bcopy / 1e6);
    std::printf("\n");
    kres bk[NBWD];
    for (int v = 0; v < NBWD; v++) {
        bk[v] = run_bwd(v, &d, s, hi, hh, hm, hr, b, c);
        print_k("bwd", BWD_V[v], bk[v], bcopy, s.timed);
    }
    bwd_bufs *bp = &b;
    for (dbuf *p : {&bp->h, &bp->y, &bp->gate, &bp->scale, &bp->dout, &bp->dh, &bp->mean, &bp->rstd, &bp->dr, &bp->dy,
                    &bp->dgate, &bp->dscale, &bp->dshift, &bp->ws})
        dfree(*p);

    int fails = 0;
    std::string row = std::string("| ") + s.name;
    auto cell = [&](const kres &k, float copy) {
        char t[64];
        if (s.timed) std::snprintf(t, sizeof t, " | %.1f%s", 100.0 * copy / k.us, k.ok ? "" : " FAIL");
        else std::snprintf(t, sizeof t, " | %s", k.ok ? "ok" : "FAIL");
        row += t;
        fails += k.ok ? 0 : 1;
    };
    row += s.timed ? " | " + std::to_string((int)(fcopy + 0.5)) : std::string(" | -");
    for (int v = 0; v < NFWD; v++) {
        cell(fk[v], fcopy);
        if (v == 1 && !fk[v].path) row += " =naive";
    }
    row += s.timed ? " | " + std::to_string((int)(bcopy + 0.5)) : std::string(" | -");
    for (int v = 0; v < NBWD; v++) {
        cell(bk[v], bcopy);
        if (v >= 1 && !bk[v].path) row += " =naive";
        if (v == 2 && bk[v].path == 1) row += " =dtile";
    }
    table.push_back(row + " |");
    std::fflush(stdout);
    return fails;
}

int usage(const char *msg)
{
    std::fprintf(stderr,
                 "resbench: %s\nusage: resbench [--reps N>=9] [--seed S] [--only SUBSTRING | --shape NAME] [--quick] "
                 "[--threads N] [--list] [--self-test] [--model-test] [--plan-test]\n",
                 msg);
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    res_opts o;
    bool self = false, model = false, plan = false;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        const bool has = i + 1 < argc;
        char *end = nullptr;
        if ((a == "--reps" || a == "--threads" || a == "--seed") && has) {
            const unsigned long long v = std::strtoull(argv[++i], &end, 10);
            if (!*argv[i] || *end) return usage(("not a number: '" + std::string(argv[i]) + "'").c_str());
            if (a == "--reps") o.reps = v > 1000 ? 1001 : (int)v;
            else if (a == "--threads") o.threads = v > 1000 ? 1001 : (int)v;
            else o.seed = v;
        } else if (a == "--only" && has) o.only = argv[++i];
        else if (a == "--shape" && has) o.exact = argv[++i];
        else if (a == "--list") o.list = true;
        else if (a == "--self-test") self = true;
        else if (a == "--model-test") model = true;
        else if (a == "--plan-test") plan = true;
        else if (a == "--quick") o.quick = true;
        else return usage(("unknown or incomplete option '" + a + "'").c_str());
    }
    if (o.reps < 9 || o.reps > 1000) return usage("--reps must be 9..1000 (the method's median of >= 9)");
    if (o.threads < 1 || o.threads > 256) return usage("--threads must be 1..256");
    if (o.exact) {
        bool known = false;
        for (int i = 0; i < RES_NSHAPES; i++) known = known || !std::strcmp(RES_SHAPES[i].name, o.exact);
        if (!known) return usage((std::string("no shape named '") + o.exact + "' (--list)").c_str());
    }
    if (self) return res_self_test(o.threads);
    if (model) return res_model_test(o.threads);
    if (plan) return res_plan_test();
    if (o.list) { // "timed|check<TAB>name" a line (device.sh runs each timed shape alone)
        for (int i = 0; i < RES_NSHAPES; i++)
            std::printf("%s\t%s\n", RES_SHAPES[i].timed ? "timed" : "check", RES_SHAPES[i].name);
        return 0;
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        std::printf("resbench: no CUDA device: nothing can run here\n");
        return 77;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s  SMs %d  L2 %d MB  seed %llu  reps %d\n", prop.name, prop.multiProcessorCount,
                prop.l2CacheSize >> 20, o.seed, o.reps);
    run_ctx c;
    c.o = &o;
    c.fb = (size_t)prop.l2CacheSize * 4;
    CK(cudaMalloc(&c.flush, c.fb));
    CK(cudaStreamCreate(&c.st));
    std::vector<std::string> table;
    int fails = 0;
    for (int i = 0; i < RES_NSHAPES; i++) {
        const res_shape &s = RES_SHAPES[i];
        if (*o.only && !std::strstr(s.name, o.only)) continue;
        if (o.exact && std::strcmp(s.name, o.exact)) continue;
        if (o.quick && s.timed) continue;
        fails += run_shape(s, i, c, table);
    }
    std::printf("\n%% of copy (median of %d, L2 flushed; '=naive' / '=dtile': the variant ran that path; untimed shapes: "
                "checks)\n",
                o.reps);
    std::printf("| shape | fwd copy us | fwd naive | fwd dtile | bwd copy us | bwd naive | bwd dtile | bwd dtile_bulk "
                "|\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const std::string &r : table) std::printf("%s\n", r.c_str());
    std::printf("FAILS %d\n", fails);
    return fails ? 1 : 0;
}
