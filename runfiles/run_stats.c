/* run_stats.c -- Mann-Whitney U test and compare's verdict (run_stats.h). */
#include "run_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ada_util.h" /* ada_median */

enum { EXACT_MAX = 25 };

/* P(U <= u) under H0 for sample sizes m, n without ties: f[i][j][k] = number of
 * arrangements of i a's and j b's with U = k; f(i,j,k) = f(i-1,j,k-j) + f(i,j-1,k). */
static double exact_cdf(int64_t m, int64_t n, int64_t u)
{
    int64_t umax = m * n;
    size_t w = (size_t)umax + 1;
    /* Two layers over j for the current i, each (n+1) x w. */
    double *prev = calloc((size_t)(n + 1) * w, sizeof *prev);
    double *cur = calloc((size_t)(n + 1) * w, sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return -1;
    }
    for (int64_t j = 0; j <= n; j++) prev[(size_t)j * w] = 1; /* i = 0: U = 0, one way */
    for (int64_t i = 1; i <= m; i++) {
        memset(cur, 0, (size_t)(n + 1) * w * sizeof *cur);
        cur[0] = 1; /* j = 0 */
        for (int64_t j = 1; j <= n; j++)
            for (int64_t k = 0; k <= i * j; k++) {
                /* The largest element is an a (it beats all j b's) or a b. */
                double v = cur[(size_t)(j - 1) * w + (size_t)k];
                if (k >= j) v += prev[(size_t)j * w + (size_t)(k - j)];
                cur[(size_t)j * w + (size_t)k] = v;
            }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    double below = 0, total = 0;
    for (int64_t k = 0; k <= umax; k++) {
        double c = prev[(size_t)n * w + (size_t)k];
        total += c;
        if (k <= u) below += c;
    }
    free(prev);
    free(cur);
    return below / total;
}

typedef struct {
    double v;
    int from_a;
} tagged;

static int cmp_tagged(const void *x, const void *y)
{
    double a = ((const tagged *)x)->v, b = ((const tagged *)y)->v;
    return (a > b) - (a < b);
}

int ada_mann_whitney(const double *a, int64_t na, const double *b, int64_t nb, ada_mwu *out)
{
    if (na < 1 || nb < 1 || !out) return -1;
    int64_t n = na + nb;
    tagged *all = malloc((size_t)n * sizeof *all);
    if (!all) return -1;
    for (int64_t i = 0; i < na; i++) all[i] = (tagged){a[i], 1};
    for (int64_t i = 0; i < nb; i++) all[na + i] = (tagged){b[i], 0};
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(all[i].v)) {
            free(all);
            return -1;
        }
    qsort(all, (size_t)n, sizeof *all, cmp_tagged);
    /* Mid-ranks; the tie term sum(t^3 - t) feeds the variance correction. */
    double rank_sum_a = 0, ties = 0;
    for (int64_t i = 0; i < n;) {
        int64_t j = i;
        while (j + 1 < n && all[j + 1].v == all[i].v) j++;
        double mid = 0.5 * (double)(i + j) + 1.0; /* ranks are 1-based */
        int64_t t = j - i + 1;
        for (int64_t k = i; k <= j; k++)
            if (all[k].from_a) rank_sum_a += mid;
        ties += (double)t * (double)t * (double)t - (double)t;
        i = j + 1;
    }
    free(all);
    double u = rank_sum_a - (double)na * (double)(na + 1) / 2.0;
    double mn = (double)na * (double)nb;
    out->u = u;
    if (ties == 0 && na <= EXACT_MAX && nb <= EXACT_MAX) {
        double lo = u < mn - u ? u : mn - u; /* the distribution is symmetric */
        double c = exact_cdf(na, nb, (int64_t)llround(lo));
        if (c >= 0) {
            out->p = 2 * c > 1 ? 1 : 2 * c;
            out->exact = 1;
            return 0;
        }
    }
    double var = mn / 12.0 * ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
    out->exact = 0;
    if (!(var > 0)) { /* every value tied: no evidence of a difference */
        out->p = 1;
        return 0;
    }
    double z = (fabs(u - mn / 2.0) - 0.5) / sqrt(var);
    if (z < 0) z = 0;
    out->p = erfc(z / sqrt(2.0));
    if (out->p > 1) out->p = 1;
    return 0;
}

double ada_mwu_min_p(int64_t na, int64_t nb)
{
    if (na < 1 || nb < 1) return 1;
    double c = 1; /* C(na + nb, na), as a double: it only needs to pass 2 / alpha */
    int64_t k = na < nb ? na : nb, n = na + nb;
    for (int64_t i = 1; i <= k && c < 1e12; i++) c = c * (double)(n - k + i) / (double)i;
    double p = 2.0 / c;
    return p > 1 ? 1 : p;
}

ada_verdict ada_compare_samples(const double *a, int64_t na, const double *b, int64_t nb,
                                double threshold, double alpha, double *ratio, ada_mwu *t)
{
    ada_mwu tmp;
    if (!t) t = &tmp;
    double ma = ada_median(a, na), mb = ada_median(b, nb);
    *ratio = (ma > 0 && isfinite(ma) && isfinite(mb)) ? mb / ma : 1.0;
    if (ada_mann_whitney(a, na, b, nb, t)) {
        t->u = 0;
        t->p = 1;
        t->exact = 0;
        return ADA_SAME;
    }
    if (t->p < alpha && *ratio > 1.0 + threshold) return ADA_SLOWER;
    if (t->p < alpha && *ratio < 1.0 - threshold) return ADA_FASTER;
    if (ada_mwu_min_p(na, nb) >= alpha) return ADA_TOO_FEW;
    return ADA_SAME;
}

ada_verdict ada_history_verdict(const double *prior, int64_t nprior, const double *prev, int64_t nprev,
                                const double *cur, int64_t ncur, double threshold, double alpha, double *ratio,
                                double *band, int *banded, ada_mwu *t)
{
    ada_mwu tmp;
    if (!t) t = &tmp;
    *banded = 0;
    *band = threshold;
    ada_verdict pair = ada_compare_samples(prev, nprev, cur, ncur, threshold, alpha, ratio, t);
    if (nprior > ADA_BAND_RUNS) {
        prior += nprior - ADA_BAND_RUNS;
        nprior = ADA_BAND_RUNS;
    }
    double c = nprior >= ADA_BAND_MIN ? ada_median(prior, nprior) : 0;
    if (pair == ADA_TOO_FEW || !(c > 0) || !isfinite(c)) return pair;
    double dev[ADA_BAND_RUNS];
    for (int64_t i = 0; i < nprior; i++) dev[i] = fabs(prior[i] / c - 1.0);
    double s = 1.4826 * ada_median(dev, nprior);
    double need = ADA_BAND_K * s > ADA_BAND_FLOOR ? ADA_BAND_K * s : ADA_BAND_FLOOR;
    *banded = 1;
    *band = need;
    /* Out of the band, and a change since the run before: a step is flagged once, not again
     * on every later run until the history has caught up with it. */
    double to_c = ada_median(cur, ncur) / c;
    if (t->p < alpha && to_c > 1.0 + need && *ratio > 1.0 + need) return ADA_SLOWER;
    if (t->p < alpha && to_c < 1.0 - need && *ratio < 1.0 - need) return ADA_FASTER;
    return ADA_SAME;
}

const char *ada_verdict_name(ada_verdict v)
{
    switch (v) {
    case ADA_SLOWER: return "slower";
    case ADA_FASTER: return "faster";
    case ADA_TOO_FEW: return "too few repetitions";
    case ADA_DRIFT: return "environment drift";
    case ADA_SAME:
    default: return "same";
    }
}
