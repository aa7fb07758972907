// res_inputs.cc -- see res_inputs.h.
#include "res_inputs.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>

#include "res_check.h"
extern "C" {
#include "ref_lnmod_res.h"
}

namespace {

double urand(uint64_t &s)
{
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return (double)(s >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t stream_of(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + a * 0xbf58476d1ce4e5b9ull + b * 0x94d049bb133111ebull + 1;
    z ^= z >> 31;
    z *= 0xd6e8feb86659fd93ull;
    z ^= z >> 29;
    return z ? z : 1;
}

// A strided modulation array: rows of D values from gen(), NaN in the gaps.
template <typename G>
void fill_mod(std::vector<char> &v, lnmod_dtype t, int64_t rows, int64_t stride, int64_t D, G gen)
{
    const int64_t n = res_mod_elems(rows, stride, D);
    v.assign((size_t)n * lnmod_dtype_size(t), 0);
    for (int64_t e = 0; e < n; e++) ref_store(t, v.data(), e, NAN);
    for (int64_t k = 0; k < rows; k++)
        for (int64_t j = 0; j < D; j++) ref_store(t, v.data(), k * stride + j, gen());
}

} // namespace

int64_t res_mod_elems(int64_t rows, int64_t stride, int64_t D) { return rows > 0 ? (rows - 1) * stride + D : 0; }

size_t res_gate_bytes(const lnmod_res_desc *d)
{
    if (d->gate != LNMOD_RES_GATE) return 0;
    return (size_t)res_mod_elems(lnmod_res_mod_rows(d), d->gate_stride, d->D) * lnmod_dtype_size(d->mod_dtype);
}

size_t res_norm_bytes(const lnmod_res_desc *d, int shift)
{
    if (d->norm == LNMOD_RES_AFFINE) return (size_t)d->D * lnmod_dtype_size(d->mod_dtype);
    const int64_t s = shift ? d->shift_stride : d->scale_stride;
    return (size_t)res_mod_elems(lnmod_res_mod_rows(d), s, d->D) * lnmod_dtype_size(d->mod_dtype);
}

void res_make_inputs(const lnmod_res_desc *d, uint64_t seed, uint64_t shape_no, int threads, res_host *h, bool large_mean)
{
    const int64_t D = d->D, n = d->rows * D;
    h->r.assign((size_t)n * lnmod_dtype_size(d->res_dtype), 0);
    h->dh.assign((size_t)n * lnmod_dtype_size(d->res_dtype), 0);
    h->y.assign((size_t)n * lnmod_dtype_size(d->branch_dtype), 0);
    h->dout.assign((size_t)n * lnmod_dtype_size(d->out_dtype), 0);
    const int64_t block = 256, nblk = (d->rows + block - 1) / block;
    std::atomic<int64_t> next{0};
    auto fill = [&] {
        for (int64_t b; (b = next.fetch_add(1)) < nblk;) {
            uint64_t s = stream_of(seed, shape_no, (uint64_t)b);
            const int64_t i1 = std::min(d->rows, (b + 1) * block);
            for (int64_t i = b * block; i < i1; i++) {
                const bool flat = i % 29 == 3;
                const double off = (double)(i % 7) * 3.0 + (large_mean && i % 13 == 5 ? 1000.0 : 0.0);
                for (int64_t e = i * D; e < (i + 1) * D; e++) {
                    ref_store(d->res_dtype, h->r.data(), e, flat ? 2.5 + (double)(i % 3) : (urand(s) - 0.5) * 4.0 + off);
                    ref_store(d->branch_dtype, h->y.data(), e, flat ? 0.0 : urand(s) - 0.5);
                    ref_store(d->out_dtype, h->dout.data(), e, urand(s) - 0.5);
                    ref_store(d->res_dtype, h->dh.data(), e, (urand(s) - 0.5) * 0.5);
                }
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < (threads > 0 ? threads : 1); t++) pool.emplace_back(fill);
    for (auto &t : pool) t.join();
    uint64_t s = stream_of(seed, shape_no, ~0ull);
    const int64_t nm = lnmod_res_mod_rows(d);
    const bool aff = d->norm == LNMOD_RES_AFFINE;
    if (d->gate == LNMOD_RES_GATE) fill_mod(h->gate, d->mod_dtype, nm, d->gate_stride, D, [&] { return (urand(s) - 0.5) * 2.0; });
    else h->gate.clear();
    fill_mod(h->scale, d->mod_dtype, aff ? 1 : nm, aff ? 0 : d->scale_stride, D,
             [&] { return (aff ? 1.0 : 0.0) + (urand(s) - 0.5) * 0.5; });
    fill_mod(h->shift, d->mod_dtype, aff ? 1 : nm, aff ? 0 : d->shift_stride, D, [&] { return urand(s) - 0.5; });
}

// ---- --self-test ---------------------------------------------------------------------------

namespace {

// 1% (+0.01) away from zero (a plain +0.01 could cancel the 1% of a negative value); 3% for a
// 16-bit output, whose allowance of one ULP is up to 0.8% (bf16) and which a 1% move may leave
// within it.
void plant(lnmod_dtype t, void *p, int64_t e)
{
    const double v = ref_load(t, p, e);
    ref_store(t, p, e, v * (t == LNMOD_F32 ? 1.01 : 1.03) + std::copysign(0.01, v));
}

int expect(const char *what, const res_verdict &v, int out, int64_t want)
{
    const int64_t total = res_verdict_fails(&v);
    // Clean: nothing fails. Planted: exactly the planted element of `out` fails (a planted h
    // also moves that row's reference out, which may fail too).
    const bool ok = out < 0 ? total == 0 : v.fails[out] == want && (out == RES_H || total == want);
    std::printf("self-test %-28s fails %lld (%s %lld), worst %.3f (%s)  %s\n", what, (long long)total,
                out < 0 ? "all" : res_out_name[out], out < 0 ? 0LL : (long long)v.fails[out], v.worst,
                v.worst_of < 0 ? "-" : res_out_name[v.worst_of], ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}

int self_test_one(const lnmod_res_desc *d, const char *name, int threads)
{
    const int64_t D = d->D, n = d->rows * D, nm = lnmod_res_mod_rows(d), nn = lnmod_res_norm_rows(d);
    res_host hi;
    res_make_inputs(d, 7, 999, threads, &hi);
    const lnmod_res_fwd_in in = {hi.r.data(), hi.y.data(), hi.gate.empty() ? nullptr : hi.gate.data(),
                                 hi.scale.data(), hi.shift.data()};
    std::vector<double> hx((size_t)n), ox((size_t)n), mx((size_t)d->rows), rx((size_t)d->rows);
    if (ref_lnmod_res_forward(d, &in, hx.data(), ox.data(), mx.data(), rx.data()) != LNMOD_OK) return 3;
    std::vector<char> h((size_t)n * lnmod_dtype_size(d->res_dtype)), o((size_t)n * lnmod_dtype_size(d->out_dtype));
    std::vector<float> fm((size_t)d->rows), fr((size_t)d->rows);
    for (int64_t e = 0; e < n; e++) {
        ref_store(d->res_dtype, h.data(), e, hx[(size_t)e]);
        ref_store(d->out_dtype, o.data(), e, ox[(size_t)e]);
    }
    for (int64_t i = 0; i < d->rows; i++) {
        fm[(size_t)i] = ref_f64_to_f32(mx[(size_t)i]);
        fr[(size_t)i] = ref_f64_to_f32(rx[(size_t)i]);
    }
    std::printf("self-test shape %s\n", name);
    int bad = 0;
    res_verdict v;
    const int64_t e0 = 7 * D + 5, i0 = 9;
    for (int k = -1; k < 4; k++) {
        std::vector<char> h2 = h, o2 = o;
        std::vector<float> m2 = fm, r2 = fr;
        if (k == RES_H) plant(d->res_dtype, h2.data(), e0);
        if (k == RES_OUT) plant(d->out_dtype, o2.data(), e0);
        if (k == RES_MEAN) m2[i0] = m2[i0] * 1.01f + 0.01f;
        if (k == RES_RSTD) r2[i0] = r2[i0] * 1.01f + 0.01f;
        const lnmod_res_fwd_out got = {h2.data(), o2.data(), m2.data(), r2.data()};
        if (res_check_fwd(d, &in, &got, threads, &v) != 0) return 3;
        bad += expect(k < 0 ? "forward clean" : res_out_name[k], v, k, 1);
    }
    // Backward at the stored h and the rounded statistics.
    const lnmod_res_bwd_in bi = {h.data(), hi.y.data(), in.gate, hi.scale.data(), hi.dout.data(), hi.dh.data(),
                                 fm.data(), fr.data()};
    std::vector<char> dr(h.size()), dy(hi.y.size()), dg(res_gate_bytes(d)), ds(res_norm_bytes(d, 0)),
        dsh(res_norm_bytes(d, 1));
    std::vector<double> a((size_t)D), b((size_t)D), c((size_t)D), e((size_t)D);
    std::vector<ref_bwd_row> info((size_t)d->rows);
    for (int64_t i = 0; i < d->rows; i++) {
        if (ref_lnmod_res_backward_row(d, i, &bi, a.data(), b.data(), c.data(), e.data(), &info[(size_t)i]) != LNMOD_OK)
            return 3;
        for (int64_t j = 0; j < D; j++) {
            ref_store(d->res_dtype, dr.data(), i * D + j, a[(size_t)j]);
            ref_store(d->branch_dtype, dy.data(), i * D + j, b[(size_t)j]);
        }
    }
    const bool aff = d->norm == LNMOD_RES_AFFINE;
    for (int64_t k = 0; k < nn; k++) {
        if (ref_lnmod_res_norm_colsums(d, k, 0, D, &bi, a.data(), b.data(), nullptr, nullptr) != LNMOD_OK) return 3;
        for (int64_t j = 0; j < D; j++) {
            ref_store(d->mod_dtype, ds.data(), (aff ? 0 : k * d->scale_stride) + j, a[(size_t)j]);
            ref_store(d->mod_dtype, dsh.data(), (aff ? 0 : k * d->shift_stride) + j, b[(size_t)j]);
        }
    }
    for (int64_t k = 0; d->gate == LNMOD_RES_GATE && k < nm; k++) {
        if (ref_lnmod_res_gate_colsums(d, k, 0, D, &bi, info.data(), a.data(), nullptr) != LNMOD_OK) return 3;
        for (int64_t j = 0; j < D; j++) ref_store(d->mod_dtype, dg.data(), k * d->gate_stride + j, a[(size_t)j]);
    }
    const int64_t em = 3;
    for (int k = -1; k < RES_NOUT; k++) {
        if (k >= 0 && k < RES_DR) continue;
        if (k == RES_DGATE && d->gate != LNMOD_RES_GATE) continue;
        std::vector<char> r2 = dr, y2 = dy, g2 = dg, s2 = ds, t2 = dsh;
        if (k == RES_DR) plant(d->res_dtype, r2.data(), e0);
        if (k == RES_DY) plant(d->branch_dtype, y2.data(), e0);
        if (k == RES_DGATE) plant(d->mod_dtype, g2.data(), (nm - 1) * d->gate_stride + em);
        if (k == RES_DSCALE) plant(d->mod_dtype, s2.data(), (aff ? 0 : (nm - 1) * d->scale_stride) + em);
        if (k == RES_DSHIFT) plant(d->mod_dtype, t2.data(), (aff ? 0 : (nm - 1) * d->shift_stride) + em);
        const lnmod_res_bwd_out got = {r2.data(), y2.data(), g2.empty() ? nullptr : g2.data(), s2.data(), t2.data()};
        if (res_check_bwd(d, &bi, &got, threads, &v) != 0) return 3;
        bad += expect(k < 0 ? "backward clean" : res_out_name[k], v, k, 1);
    }
    return bad;
}

} // namespace

int res_self_test(int threads)
{
    // Wan's third site per frame with a bf16 residual, and its first (gate + affine) in fp32
    // with an odd D.
    lnmod_res_desc a = lnmod_res_desc_default();
    a.rows = 96;
    a.D = 136;
    a.rows_per_sample = 32;
    a.frame_len = 10;
    a.layout = LNMOD_PER_FRAME;
    a.res_dtype = LNMOD_BF16;
    a.gate_stride = a.scale_stride = a.shift_stride = 6 * a.D;
    lnmod_res_desc b = lnmod_res_desc_default();
    b.rows = 64;
    b.D = 77;
    b.rows_per_sample = 32;
    b.norm = LNMOD_RES_AFFINE;
    b.branch_dtype = b.out_dtype = LNMOD_F32;
    b.gate_stride = b.scale_stride = b.shift_stride = 6 * b.D;
    if (lnmod_res_desc_validate(&a) != LNMOD_OK || lnmod_res_desc_validate(&b) != LNMOD_OK) return 3;
    int bad = self_test_one(&a, "site 3, frame, res bf16, D 136", threads);
    bad += self_test_one(&b, "site 1 (affine), sample, all fp32, D 77", threads);
    std::printf("self-test: %s\n", bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}
