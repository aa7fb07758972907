// res_check.cc -- see res_check.h. Work items (rows, or (group, block of 64 columns)) handed out
// through an atomic counter; each thread keeps its own verdict, merged at the end.
#include "res_check.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

extern "C" {
#include "ref_lnmod_res.h"
#include "verify_check.h"
}

const char *const res_out_name[RES_NOUT] = {"h", "out", "mean", "rstd", "dr", "dy", "dgate", "dscale", "dshift"};

int64_t res_verdict_fails(const res_verdict *v)
{
    int64_t n = 0;
    for (int k = 0; k < RES_NOUT; k++) n += v->fails[k];
    return n;
}

namespace {

constexpr double U23 = 0x1p-23;
constexpr int64_t COLS = 64;

struct acc {
    res_verdict v = {{0}, 0.0, -1};
    void add(int what, double got, double ref, double allow)
    {
        const double ratio = std::isfinite(got) && std::isfinite(ref) ? std::fabs(got - ref) / allow : INFINITY;
        if (!(ratio <= 1.0)) v.fails[what]++;
        if (v.worst_of < 0 || !(ratio <= v.worst)) {
            v.worst = ratio;
            v.worst_of = what;
        }
    }
    void merge(const res_verdict &o)
    {
        for (int k = 0; k < RES_NOUT; k++) v.fails[k] += o.fails[k];
        if (o.worst_of >= 0 && (v.worst_of < 0 || !(o.worst <= v.worst))) {
            v.worst = o.worst;
            v.worst_of = o.worst_of;
        }
    }
};

// Runs fn(item, acc&) for items [0, n) on `threads` threads; returns -1 when any call did.
int par(int64_t n, int threads, res_verdict *out, const std::function<int(int64_t, acc &)> &fn)
{
    std::atomic<int64_t> next{0};
    std::atomic<int> err{0};
    std::mutex mu;
    acc total;
    total.v = *out;
    auto work = [&] {
        acc mine;
        for (int64_t it; !err && (it = next.fetch_add(1)) < n;)
            if (fn(it, mine) != 0) err = 1;
        std::lock_guard<std::mutex> lock(mu);
        total.merge(mine.v);
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < (threads > 0 ? threads : 1); t++) pool.emplace_back(work);
    for (auto &t : pool) t.join();
    *out = total.v;
    return err ? -1 : 0;
}

// Rows per item of the row-wise phases.
constexpr int64_t ROWS_PER_ITEM = 16;

} // namespace

int res_check_fwd(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *got, int threads,
                  res_verdict *v)
{
    *v = res_verdict{{0}, 0.0, -1};
    const int64_t D = d->D, n = d->rows * D, items = (d->rows + ROWS_PER_ITEM - 1) / ROWS_PER_ITEM;
    std::vector<double> h, out((size_t)n), mean((size_t)d->rows), rstd((size_t)d->rows);
    try {
        h.resize((size_t)n);
    } catch (...) {
        return -1;
    }
    const verify_tol tr = verify_tol_round(d->res_dtype);
    // 1. h against the exact r + g*y.
    int rc = par(items, threads, v, [&](int64_t it, acc &a) {
        const int64_t i0 = it * ROWS_PER_ITEM, i1 = std::min(d->rows, i0 + ROWS_PER_ITEM);
        if (ref_lnmod_res_forward_rows(d, i0, i1, in, h.data(), out.data(), nullptr, nullptr) != LNMOD_OK) return -1;
        for (int64_t e = i0 * D; e < i1 * D; e++)
            a.add(RES_H, ref_load(d->res_dtype, got->h, e), h[e], tr.rtol * std::fabs(h[e]) + tr.atol);
        return 0;
    });
    if (rc) return rc;
    // 2. out, mean, rstd against LN of the kernel's stored h: r = that h, no gate, y = 0.
    lnmod_res_desc d2 = *d;
    d2.gate = LNMOD_RES_GATE_NONE;
    void *zero = std::calloc((size_t)n, lnmod_dtype_size(d->branch_dtype));
    if (!zero) return -1;
    const lnmod_res_fwd_in in2 = {got->h, zero, nullptr, in->scale, in->shift};
    const verify_tol ty = verify_tol_y(d->out_dtype), tm = verify_tol_mean(), ts = verify_tol_rstd();
    rc = par(items, threads, v, [&](int64_t it, acc &a) {
        const int64_t i0 = it * ROWS_PER_ITEM, i1 = std::min(d->rows, i0 + ROWS_PER_ITEM);
        if (ref_lnmod_res_forward_rows(&d2, i0, i1, &in2, h.data(), out.data(), mean.data(), rstd.data()) !=
            LNMOD_OK)
            return -1;
        for (int64_t e = i0 * D; e < i1 * D; e++)
            a.add(RES_OUT, ref_load(d->out_dtype, got->out, e), out[e], ty.atol + ty.rtol * std::fabs(out[e]));
        for (int64_t i = i0; i < i1; i++) {
            const double var = 1.0 / (rstd[i] * rstd[i]) - d->eps, sd = var > 0.0 ? std::sqrt(var) : 0.0;
            if (got->mean) a.add(RES_MEAN, got->mean[i], mean[i], tm.atol * sd + tm.rtol * std::fabs(mean[i]));
            if (got->rstd) a.add(RES_RSTD, got->rstd[i], rstd[i], ts.atol + ts.rtol * std::fabs(rstd[i]));
        }
        return 0;
    });
    std::free(zero);
    return rc;
}

namespace {

// Per-row coefficients of allow_t (res_check.h): c0 + c_g|gm| + c_x|xhat| + 2^-23(|t| + |dh| + |t - dh|).
struct trow {
    ref_bwd_row info;
    verify_dx_coef c;
};

double allow_t(const verify_dx_coef &c, double gm, double xh, double t, double dh)
{
    return c.c0 + c.c_g * std::fabs(gm) + c.c_x * std::fabs(xh) + U23 * (std::fabs(t) + std::fabs(dh) + std::fabs(t - dh));
}

} // namespace

int res_check_bwd(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *got, int threads,
                  res_verdict *v)
{
    *v = res_verdict{{0}, 0.0, -1};
    const int64_t D = d->D, rows = d->rows, items = (rows + ROWS_PER_ITEM - 1) / ROWS_PER_ITEM;
    const bool gate = d->gate == LNMOD_RES_GATE, affine = d->norm == LNMOD_RES_AFFINE;
    std::vector<trow> tr((size_t)rows);
    std::vector<ref_bwd_row> info((size_t)rows);
    const verify_tol rr = verify_tol_round(d->res_dtype), rb = verify_tol_round(d->branch_dtype),
                     rm = verify_tol_round(d->mod_dtype);
    // 1. dr and dy, row by row.
    int rc = par(items, threads, v, [&](int64_t it, acc &a) {
        std::vector<double> dr((size_t)D), dy((size_t)D), gm((size_t)D), xh((size_t)D);
        const int64_t i0 = it * ROWS_PER_ITEM, i1 = std::min(rows, i0 + ROWS_PER_ITEM);
        for (int64_t i = i0; i < i1; i++) {
            trow &t = tr[(size_t)i];
            if (ref_lnmod_res_backward_row(d, i, in, dr.data(), dy.data(), gm.data(), xh.data(), &t.info) != LNMOD_OK)
                return -1;
            info[(size_t)i] = t.info;
            const verify_dx_row vr = {in->rstd[i], t.info.mg, t.info.mgx, t.info.abs_g, t.info.abs_gx, D, LNMOD_F32};
            t.c = verify_dx_coef_of(&vr);
            const int64_t m = gate ? lnmod_res_mod_index(d, i) : 0;
            for (int64_t j = 0; j < D; j++) {
                const double dh = in->dh ? ref_load(d->res_dtype, in->dh, i * D + j) : 0.0;
                const double at = allow_t(t.c, gm[j], xh[j], dr[j], dh);
                const double g = gate ? ref_load(d->mod_dtype, in->gate, m * d->gate_stride + j) : 1.0;
                a.add(RES_DR, ref_load(d->res_dtype, got->dr, i * D + j), dr[j],
                      at * (1.0 + rr.rtol) + rr.rtol * std::fabs(dr[j]) + rr.atol);
                a.add(RES_DY, ref_load(d->branch_dtype, got->dy, i * D + j), dy[j],
                      std::fabs(g) * at * (1.0 + rb.rtol) + (rb.rtol + U23) * std::fabs(dy[j]) + rb.atol);
            }
        }
        return 0;
    });
    if (rc) return rc;
    // 2. dscale and dshift per (norm row, block of columns).
    const int64_t nb = (D + COLS - 1) / COLS, nn = lnmod_res_norm_rows(d);
    const lnmod_desc map = lnmod_res_map_desc(d);
    rc = par(nn * nb, threads, v, [&](int64_t it, acc &a) {
        double s[COLS], h[COLS], as[COLS], ah[COLS];
        const int64_t k = it / nb, j0 = (it - k * nb) * COLS, j1 = std::min(D, j0 + COLS);
        if (ref_lnmod_res_norm_colsums(d, k, j0, j1, in, s, h, as, ah) != LNMOD_OK) return -1;
        int64_t r0 = 0, r1 = rows;
        if (!affine) ref_mod_row_range(&map, k, &r0, &r1);
        const verify_colsum_coef c = verify_colsum_coef_of(d->mod_dtype, r1 - r0);
        const int64_t ss = affine ? 0 : d->scale_stride, hs = affine ? 0 : d->shift_stride;
        for (int64_t j = j0; j < j1; j++) {
            a.add(RES_DSCALE, ref_load(d->mod_dtype, got->dscale, k * ss + j), s[j - j0],
                  verify_colsum_allow_c(&c, s[j - j0], as[j - j0]));
            a.add(RES_DSHIFT, ref_load(d->mod_dtype, got->dshift, k * hs + j), h[j - j0],
                  verify_colsum_allow_c(&c, h[j - j0], ah[j - j0]));
        }
        return 0;
    });
    if (rc || !gate) return rc;
    // 3. dgate per (gate row, block of columns), with t's own error in every term.
    const int64_t ng = lnmod_res_mod_rows(d);
    return par(ng * nb, threads, v, [&](int64_t it, acc &a) {
        double g[COLS], ag[COLS], ex[COLS];
        const int64_t k = it / nb, j0 = (it - k * nb) * COLS, j1 = std::min(D, j0 + COLS);
        if (ref_lnmod_res_gate_colsums(d, k, j0, j1, in, info.data(), g, ag) != LNMOD_OK) return -1;
        int64_t r0, r1;
        ref_mod_row_range(&map, k, &r0, &r1);
        for (int64_t j = j0; j < j1; j++) ex[j - j0] = 0.0;
        for (int64_t i = r0; i < r1; i++) {
            const trow &t = tr[(size_t)i];
            const double mu = in->mean[i], rs = in->rstd[i];
            const int64_t kn = lnmod_res_norm_index(d, i);
            for (int64_t j = j0; j < j1; j++) {
                const double sc = ref_load(d->mod_dtype, in->scale, (affine ? 0 : kn * d->scale_stride) + j);
                const double gm = ref_load(d->out_dtype, in->dout, i * D + j) * (affine ? sc : 1.0 + sc);
                const double xh = (ref_load(d->res_dtype, in->h, i * D + j) - mu) * rs;
                const double dh = in->dh ? ref_load(d->res_dtype, in->dh, i * D + j) : 0.0;
                const double tv = dh + rs * (gm - t.info.mg - xh * t.info.mgx);
                ex[j - j0] += std::fabs(ref_load(d->branch_dtype, in->y, i * D + j)) * allow_t(t.c, gm, xh, tv, dh);
            }
        }
        const verify_colsum_coef c = verify_colsum_coef_of(d->mod_dtype, r1 - r0);
        for (int64_t j = j0; j < j1; j++)
            a.add(RES_DGATE, ref_load(d->mod_dtype, got->dgate, k * d->gate_stride + j), g[j - j0],
                  verify_colsum_allow_c(&c, g[j - j0], ag[j - j0]) + (1.0 + rm.rtol) * ex[j - j0]);
        return 0;
    });
}
