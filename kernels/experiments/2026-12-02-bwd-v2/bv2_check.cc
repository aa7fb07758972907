// bv2_check.cc -- see bv2_check.h. dx row by row (ref_lnmod_backward_row, verify_dx_coef_of),
// dscale/dshift per (modulation row, block of 64 columns) (ref_lnmod_backward_colsums,
// verify_colsum_coef_of); work items handed out through an atomic counter.
#include "bv2_check.h"

#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>
#include <vector>

extern "C" {
#include "ref_lnmod.h"
#include "verify_check.h"
}

namespace {

struct acc {
    int64_t fails = 0;
    double worst = 0.0;
    const char *worst_of = "dx";
    void add(double got, double ref, double allow, const char *what)
    {
        const double e = std::fabs(got - ref);
        const double ratio = std::isfinite(got) ? e / allow : INFINITY;
        if (!(ratio <= 1.0)) fails++;
        if (!(ratio <= worst)) {
            worst = ratio;
            worst_of = what;
        }
    }
};

struct job {
    const lnmod_desc *d;
    const void *x, *scale, *dy;
    const float *mean, *rstd;
    bv2_got *got;
    int n;
    std::atomic<int64_t> next{0};
    std::atomic<int> err{0};
    std::mutex mu;
    std::vector<acc> total;
};

constexpr int64_t COLS = 64;

// Item i < rows: dx of row i; then (modulation row, column block) items.
void work(job *J)
{
    const lnmod_desc *d = J->d;
    const int64_t D = d->D, nm = lnmod_mod_rows(d), nb = (D + COLS - 1) / COLS;
    const int64_t items = d->rows + nm * nb;
    std::vector<double> dx(D), g(D), xh(D);
    double s[COLS], h[COLS], as[COLS], ah[COLS];
    std::vector<acc> mine((size_t)J->n);
    for (int64_t it; (it = J->next.fetch_add(1)) < items;) {
        if (it < d->rows) {
            ref_bwd_row info;
            if (ref_lnmod_backward_row(d, it, J->x, J->scale, J->dy, J->mean, J->rstd, dx.data(),
                                       g.data(), xh.data(), &info) != LNMOD_OK) {
                J->err = 1;
                break;
            }
            const verify_dx_row vr = {J->rstd[it], info.mg, info.mgx, info.abs_g, info.abs_gx, D,
                                      d->x_dtype};
            const verify_dx_coef c = verify_dx_coef_of(&vr);
            for (int k = 0; k < J->n; k++)
                for (int64_t i = 0; i < D; i++)
                    mine[k].add(ref_load(d->x_dtype, J->got[k].dx, it * D + i), dx[i],
                                verify_dx_allow_c(&c, dx[i], g[i], xh[i]), "dx");
            continue;
        }
        const int64_t m = (it - d->rows) / nb, j0 = (it - d->rows - m * nb) * COLS;
        const int64_t j1 = j0 + COLS < D ? j0 + COLS : D;
        if (ref_lnmod_backward_colsums(d, m, j0, j1, J->x, J->dy, J->mean, J->rstd, s, h, as, ah) !=
            LNMOD_OK) {
            J->err = 1;
            break;
        }
        int64_t r0, r1;
        ref_mod_row_range(d, m, &r0, &r1);
        const verify_colsum_coef c = verify_colsum_coef_of(d->mod_dtype, r1 - r0);
        for (int k = 0; k < J->n; k++)
            for (int64_t j = j0; j < j1; j++) {
                mine[k].add(ref_load(d->mod_dtype, J->got[k].dscale, m * d->scale_stride + j),
                            s[j - j0], verify_colsum_allow_c(&c, s[j - j0], as[j - j0]), "dscale");
                mine[k].add(ref_load(d->mod_dtype, J->got[k].dshift, m * d->shift_stride + j),
                            h[j - j0], verify_colsum_allow_c(&c, h[j - j0], ah[j - j0]), "dshift");
            }
    }
    std::lock_guard<std::mutex> lock(J->mu);
    for (int k = 0; k < J->n; k++) {
        J->total[k].fails += mine[k].fails;
        if (!(mine[k].worst <= J->total[k].worst)) {
            J->total[k].worst = mine[k].worst;
            J->total[k].worst_of = mine[k].worst_of;
        }
    }
}

} // namespace

int bv2_check(const lnmod_desc *d, const void *x, const void *scale, const void *dy,
              const float *mean, const float *rstd, bv2_got *got, int n, int threads)
{
    job J;
    J.d = d;
    J.x = x;
    J.scale = scale;
    J.dy = dy;
    J.mean = mean;
    J.rstd = rstd;
    J.got = got;
    J.n = n;
    J.total.resize((size_t)n);
    std::vector<std::thread> pool;
    for (int t = 0; t < (threads > 0 ? threads : 1); t++) pool.emplace_back(work, &J);
    for (auto &t : pool) t.join();
    for (int k = 0; k < n; k++) {
        got[k].fails = J.total[k].fails;
        got[k].worst = J.total[k].worst;
        got[k].worst_of = J.total[k].worst_of;
    }
    return J.err ? -1 : 0;
}
