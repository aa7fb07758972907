// fv2_check.cc -- see fv2_check.h. Rows in blocks of 64 handed out through an atomic counter;
// each block is visited by ref_lnmod_forward_visit (no rows*D doubles stored) and every
// kernel's row compared with verify_compare_y_span and the statistics' tolerances.
#include "fv2_check.h"

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

struct job {
    const lnmod_desc *d;
    const void *x, *scale, *shift;
    fv2_got *got;
    int n;
    std::atomic<int64_t> next{0};
    std::atomic<int> err{0};
    std::mutex mu;
    std::vector<verify_stats> y, m, r; // per kernel, merged
};

struct visit {
    job *J;
    std::vector<verify_stats> *y, *m, *r;
};

int on_row(void *arg, int64_t row, const double *yr, double mean, double rstd)
{
    visit *v = static_cast<visit *>(arg);
    const lnmod_desc *d = v->J->d;
    const verify_tol tm = verify_tol_mean(), tr = verify_tol_rstd();
    const double var = 1.0 / (rstd * rstd) - d->eps, sd = var > 0.0 ? std::sqrt(var) : 0.0;
    for (int k = 0; k < v->J->n; k++) {
        const fv2_got &g = v->J->got[k];
        verify_compare_y_span(d, row * d->D, d->D, g.y, yr, &(*v->y)[k]);
        if (g.mean) verify_stats_add(&(*v->m)[k], row, (double)g.mean[row], mean, tm.atol * sd, tm.rtol);
        if (g.rstd) verify_stats_add(&(*v->r)[k], row, (double)g.rstd[row], rstd, tr.atol, tr.rtol);
    }
    return 0;
}

void work(job *J)
{
    const int64_t block = 64, nb = (J->d->rows + block - 1) / block;
    std::vector<verify_stats> y(J->n), m(J->n), r(J->n);
    for (int k = 0; k < J->n; k++) {
        verify_stats_init(&y[k]);
        verify_stats_init(&m[k]);
        verify_stats_init(&r[k]);
    }
    visit v{J, &y, &m, &r};
    for (int64_t b; (b = J->next.fetch_add(1)) < nb;) {
        const int64_t r0 = b * block, r1 = r0 + block < J->d->rows ? r0 + block : J->d->rows;
        if (ref_lnmod_forward_visit(J->d, r0, r1, J->x, J->scale, J->shift, on_row, &v) != LNMOD_OK) {
            J->err = 1;
            break;
        }
    }
    std::lock_guard<std::mutex> lock(J->mu);
    for (int k = 0; k < J->n; k++) {
        verify_stats_merge(&J->y[k], &y[k]);
        verify_stats_merge(&J->m[k], &m[k]);
        verify_stats_merge(&J->r[k], &r[k]);
    }
}

} // namespace

int fv2_check(const lnmod_desc *d, const void *x, const void *scale, const void *shift, fv2_got *got,
              int n, int threads)
{
    job J;
    J.d = d;
    J.x = x;
    J.scale = scale;
    J.shift = shift;
    J.got = got;
    J.n = n;
    J.y.resize((size_t)n);
    J.m.resize((size_t)n);
    J.r.resize((size_t)n);
    for (int k = 0; k < n; k++) {
        verify_stats_init(&J.y[k]);
        verify_stats_init(&J.m[k]);
        verify_stats_init(&J.r[k]);
    }
    std::vector<std::thread> pool;
    for (int t = 0; t < (threads > 0 ? threads : 1); t++) pool.emplace_back(work, &J);
    for (auto &t : pool) t.join();
    for (int k = 0; k < n; k++) {
        const verify_stats *s[3] = {&J.y[k], &J.m[k], &J.r[k]};
        const char *name[3] = {"y", "mean", "rstd"};
        got[k].fails = 0;
        got[k].worst = 0.0;
        got[k].worst_of = "y";
        for (int i = 0; i < 3; i++) {
            got[k].fails += s[i]->failed;
            if (!(s[i]->worst_ratio <= got[k].worst)) {
                got[k].worst = s[i]->worst_ratio;
                got[k].worst_of = name[i];
            }
        }
    }
    return J.err ? -1 : 0;
}
