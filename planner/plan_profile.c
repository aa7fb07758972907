/* plan_profile.c -- the measured-profile reader and its least-squares fits.
 *
 * A profile is a CSV (what harness/calibrate.py writes; a UTF-8 byte-order mark is fine):
 *   header    tokens and seconds required; batch, peak_bytes and seconds_cv optional;
 *             nothing else (a column the reader does not know is an error, so a typo
 *             cannot be ignored)
 *   rows      tokens (S, per sample) and batch (B, default 1) positive whole numbers; seconds
 *             (one training step of the micro-batch, whole model), peak_bytes (activation
 *             peak of that step above the model state) and seconds_cv (the spread of the
 *             repeats: stddev / median) positive numbers; blank lines skipped
 * Fits (ordinary least squares, columns scaled to 1 so the normal equations stay well
 * conditioned):
 *   seconds    = t0 + B (alpha S + beta S^2 + gamma)   when the rows have >= 2 batch sizes;
 *              =      B (alpha S + beta S^2 + gamma)   otherwise (t0 = 0), or when the fit
 *                                                      gives t0 < 0 (noise: refitted without)
 *   peak_bytes = c0 + B (bytes_per_token S + bytes_per_sample + bytes_per_token_sq S^2)
 *              when the column is there: the per-sample term needs >= 2 batch sizes, the
 *              S^2 term >= 3 token counts; a term that comes out negative is dropped and the
 *              rest refitted (S^2 first); bytes_per_token must be > 0. The residuals
 *              (relative to each row's peak: rms and max) are kept, as are the seconds fit's.
 *   range      with peak_bytes (the profile then is the memory model): tokens per sample
 *              min/max, batch max and B S max of the rows; the planner clamps batches to it.
 * Errors name the file and line (and column).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

enum { P_TOKENS = 0, P_SECONDS, P_BATCH, P_PEAK, P_CV, P_NCOL };
static const char *const pcol[P_NCOL] = {"tokens", "seconds", "batch", "peak_bytes", "seconds_cv"};

typedef struct {
    double s, b, t, peak, cv;
} prof_point;

static int parse_pos(csv_field v, int whole, double *out)
{
    v = csv_trim(v);
    char tmp[64];
    if (v.n == 0 || v.n >= sizeof tmp) return -1;
    memcpy(tmp, v.s, v.n);
    tmp[v.n] = '\0';
    char *end = NULL;
    errno = 0;
    double x = strtod(tmp, &end);
    if (errno || *end || !isfinite(x) || !(x > 0)) return -1;
    if (whole && (x != floor(x) || x > 9e15)) return -1;
    *out = x;
    return 0;
}

/* Solves a x = b (n <= 4) by Gaussian elimination with partial pivoting; -1 if singular
 * (a pivot below 1e-12 of the largest diagonal entry). */
static int solve(int n, double a[4][4], double b[4], double x[4])
{
    double scale = 0;
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(a[i][i]));
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
        if (!(fabs(a[piv][c]) > 1e-12 * scale)) return -1;
        if (piv != c) {
            for (int k = 0; k < n; k++) {
                double t = a[c][k];
                a[c][k] = a[piv][k];
                a[piv][k] = t;
            }
            double t = b[c];
            b[c] = b[piv];
            b[piv] = t;
        }
        for (int r = c + 1; r < n; r++) {
            double f = a[r][c] / a[c][c];
            for (int k = c; k < n; k++) a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        double s = b[r];
        for (int k = r + 1; k < n; k++) s -= a[r][k] * x[k];
        x[r] = s / a[r][r];
    }
    return 0;
}

/* Least squares of y on the n features phi(point) (each already scaled to about 1). */
typedef void (*feat_fn)(const prof_point *p, double smax, double bmax, double *phi);

static int lsq(const prof_point *pts, size_t np, int n, feat_fn f, double smax, double bmax,
               int target_peak, double x[4])
{
    double a[4][4] = {{0}}, b[4] = {0}, phi[4];
    for (size_t i = 0; i < np; i++) {
        f(&pts[i], smax, bmax, phi);
        double y = target_peak ? pts[i].peak : pts[i].t;
        for (int r = 0; r < n; r++) {
            for (int k = 0; k < n; k++) a[r][k] += phi[r] * phi[k];
            b[r] += phi[r] * y;
        }
    }
    return solve(n, a, b, x);
}

/* seconds: [B S, B S^2, B, 1] in units of smax and bmax. */
static void feat_time(const prof_point *p, double smax, double bmax, double *phi)
{
    double x = p->s / smax, bb = p->b / bmax;
    phi[0] = bb * x;
    phi[1] = bb * x * x;
    phi[2] = bb;
    phi[3] = 1.0;
}

/* peak: [B S, 1, B, B S^2] in units of smax and bmax; fitted with the first 2, 3 or 4. */
static void feat_peak(const prof_point *p, double smax, double bmax, double *phi)
{
    double x = p->s / smax, bb = p->b / bmax;
    phi[0] = bb * x;
    phi[1] = 1.0;
    phi[2] = bb;
    phi[3] = bb * x * x;
}

static plan_status read_header(csv_reader *rd, int64_t col[P_NCOL], int64_t *ncols, plan_error *err)
{
    char *line;
    size_t len;
    csv_field f[8];
    int got = csv_next_line(rd, &line, &len, err);
    if (got < 0) return (plan_status)-got;
    if (got == 0) return plan_fail(err, PLAN_ERR_INPUT, "%s:1: empty profile: no header (it needs tokens,seconds)", rd->path);
    int64_t nf = csv_split(rd, line, len, f, 8, err);
    if (nf < 0) return PLAN_ERR_INPUT;
    if (nf > 8) return plan_fail(err, PLAN_ERR_INPUT, "%s:1: %lld columns: a profile has at most 5 (batch,tokens,seconds,peak_bytes,seconds_cv)", rd->path, (long long)nf);
    for (int k = 0; k < P_NCOL; k++) col[k] = -1;
    for (int64_t i = 0; i < nf; i++) {
        csv_field h = csv_trim(f[i]);
        int role = -1;
        for (int k = 0; k < P_NCOL; k++)
            if (h.n == strlen(pcol[k]) && !memcmp(h.s, pcol[k], h.n)) role = k;
        int n = h.n > 40 ? 40 : (int)h.n;
        if (role < 0)
            return plan_fail(err, PLAN_ERR_INPUT, "%s:1: column %lld: unknown column '%.*s' (a profile has batch,tokens,seconds,peak_bytes,seconds_cv)",
                             rd->path, (long long)i + 1, n, h.s);
        if (col[role] >= 0)
            return plan_fail(err, PLAN_ERR_INPUT, "%s:1: column %lld: '%s' appears twice", rd->path, (long long)i + 1, pcol[role]);
        col[role] = i;
    }
    if (col[P_TOKENS] < 0 || col[P_SECONDS] < 0)
        return plan_fail(err, PLAN_ERR_INPUT, "%s:1: the header needs the columns tokens,seconds", rd->path);
    *ncols = nf;
    return PLAN_OK;
}

static plan_status read_points(csv_reader *rd, const int64_t col[P_NCOL], int64_t ncols,
                               prof_point **out, size_t *nout, plan_error *err)
{
    char *line;
    size_t len, cap = 0, np = 0;
    csv_field f[8];
    prof_point *pts = NULL;
    int got;
    while ((got = csv_next_line(rd, &line, &len, err)) > 0) {
        if (csv_blank(line, len)) continue;
        int64_t nf = csv_split(rd, line, len, f, 8, err);
        if (nf < 0) goto bad;
        if (nf != ncols) {
            plan_fail(err, PLAN_ERR_INPUT, "%s:%llu: %lld fields, the header has %lld", rd->path,
                      (unsigned long long)rd->line, (long long)nf, (long long)ncols);
            goto bad;
        }
        prof_point p = {0, 1, 0, 0, 0};
        double *dst[P_NCOL] = {&p.s, &p.t, &p.b, &p.peak, &p.cv};
        for (int k = 0; k < P_NCOL; k++) {
            if (col[k] < 0) continue;
            int whole = k == P_TOKENS || k == P_BATCH;
            if (parse_pos(f[col[k]], whole, dst[k])) {
                plan_fail(err, PLAN_ERR_INPUT, "%s:%llu: column %lld (%s): not a positive %s", rd->path,
                          (unsigned long long)rd->line, (long long)col[k] + 1, pcol[k],
                          whole ? "whole number" : "number");
                goto bad;
            }
        }
        if (np == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            prof_point *q = realloc(pts, ncap * sizeof *q);
            if (!q) {
                plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory", rd->path);
                free(pts);
                return PLAN_ERR_NOMEM;
            }
            pts = q;
            cap = ncap;
        }
        pts[np++] = p;
    }
    if (got < 0) {
        free(pts);
        return (plan_status)-got;
    }
    *out = pts;
    *nout = np;
    return PLAN_OK;
bad:
    free(pts);
    return PLAN_ERR_INPUT;
}

/* How many distinct values of v(point) there are, counting stops at `stop`. */
static int distinct(const prof_point *pts, size_t np, int which, int stop)
{
    double seen[8];
    int n = 0;
    for (size_t i = 0; i < np && n < stop; i++) {
        double v = which == 0 ? pts[i].s : which == 1 ? pts[i].b : pts[i].s * pts[i].b;
        int known = 0;
        for (int j = 0; j < n; j++) known |= seen[j] == v;
        if (!known) seen[n++] = v;
    }
    return n;
}

/* rms and max of |model - measured| / measured over the rows: seconds (peak = 0) or peak. */
static void residuals(const prof_point *pts, size_t np, const plan_cost *c, int peak, double *rms, double *mx)
{
    double sq = 0, m = 0;
    for (size_t i = 0; i < np; i++) {
        const prof_point *p = &pts[i];
        double model = peak ? c->mem_intercept_bytes + p->b * (p->s * (double)c->mem_bytes_per_token +
                                                                c->mem_bytes_per_sample + p->s * p->s * c->mem_bytes_per_token_sq)
                            : c->overhead + p->b * (c->alpha * p->s + c->beta * p->s * p->s + c->gamma);
        double y = peak ? p->peak : p->t, e = fabs(model - y) / y;
        sq += e * e;
        if (e > m) m = e;
    }
    *rms = sqrt(sq / (double)np);
    *mx = m;
}

static void set_range(const prof_point *pts, size_t np, plan_cost *c)
{
    c->range_s_min = INT64_MAX;
    for (size_t i = 0; i < np; i++) {
        const prof_point *p = &pts[i];
        int64_t s = (int64_t)p->s, b = (int64_t)p->b;
        if (s < c->range_s_min) c->range_s_min = s;
        if (s > c->range_s_max) c->range_s_max = s;
        if (b > c->range_batch_max) c->range_batch_max = b;
        if (s * b > c->range_tokens_max) c->range_tokens_max = s * b;
    }
}

static double median_cv(const prof_point *pts, size_t np)
{
    double *v = malloc(np * sizeof *v);
    if (!v) return 0;
    for (size_t i = 0; i < np; i++) v[i] = pts[i].cv;
    for (size_t i = 1; i < np; i++) { /* insertion sort: profiles are small */
        double t = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > t) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = t;
    }
    double m = np % 2 ? v[np / 2] : 0.5 * (v[np / 2 - 1] + v[np / 2]);
    free(v);
    return m;
}

/* peak_bytes = c0 + B (bpt S + bps + bsq S^2): the terms the rows can tell apart, none
 * negative (a negative one is dropped, S^2 first, and the rest refitted). */
static plan_status fit_peak(const char *path, const prof_point *pts, size_t np, double smax, double bmax,
                            plan_cost *c, plan_error *err)
{
    if (distinct(pts, np, 2, 2) < 2)
        return plan_fail(err, PLAN_ERR_INPUT,
                         "%s: peak_bytes needs rows with at least 2 different batch x tokens", path);
    int n = 2;
    if (distinct(pts, np, 1, 2) >= 2) n = 3;
    if (n == 3 && distinct(pts, np, 0, 3) >= 3) n = 4;
    double y[4] = {0, 0, 0, 0};
    for (;; n--) {
        if (lsq(pts, np, n, feat_peak, smax, bmax, 1, y)) {
            if (n > 2) continue;
            return plan_fail(err, PLAN_ERR_INPUT, "%s: the peak_bytes least-squares system is singular", path);
        }
        if (n == 2 || y[n - 1] >= 0) break;
    }
    double bpt = y[0] / (smax * bmax);
    if (!(bpt >= 1) || !(bpt < 1e12))
        return plan_fail(err, PLAN_ERR_INPUT,
                         "%s: peak_bytes does not grow with batch x tokens (fitted %.6g bytes per token)",
                         path, bpt);
    c->mem_bytes_per_token = (int64_t)llround(bpt);
    c->mem_intercept_bytes = y[1];
    c->mem_bytes_per_sample = n >= 3 ? y[2] / bmax : 0;
    c->mem_bytes_per_token_sq = n >= 4 ? y[3] / (bmax * smax * smax) : 0;
    residuals(pts, np, c, 1, &c->mem_fit_rms_rel, &c->mem_fit_max_rel);
    return PLAN_OK;
}

static plan_status fit(const char *path, uint64_t last_line, const prof_point *pts, size_t np,
                       int have_peak, int have_cv, plan_cost *c, plan_error *err)
{
    int ds = distinct(pts, np, 0, 3);
    if (ds < 3)
        return plan_fail(err, PLAN_ERR_INPUT,
                         "%s:%llu: the profile needs at least 3 distinct token counts to fit "
                         "alpha*S + beta*S^2 + gamma (it has %d)",
                         path, (unsigned long long)last_line, ds);
    double smax = 0, bmax = 0;
    for (size_t i = 0; i < np; i++) {
        smax = fmax(smax, pts[i].s);
        bmax = fmax(bmax, pts[i].b);
    }
    double x[4] = {0, 0, 0, 0};
    int with_t0 = distinct(pts, np, 1, 2) >= 2;
    if (with_t0 && (lsq(pts, np, 4, feat_time, smax, bmax, 0, x) || !(x[3] >= 0))) with_t0 = 0;
    if (!with_t0) {
        x[3] = 0;
        if (lsq(pts, np, 3, feat_time, smax, bmax, 0, x))
            return plan_fail(err, PLAN_ERR_INPUT, "%s: the profile's least-squares system is singular", path);
    }
    memset(c, 0, sizeof *c);
    c->alpha = x[0] / (bmax * smax);
    c->beta = x[1] / (bmax * smax * smax);
    c->gamma = x[2] / bmax;
    c->overhead = x[3];
    c->from_profile = 1;
    c->profile_points = (int64_t)np;
    residuals(pts, np, c, 0, &c->time_fit_rms_rel, &c->time_fit_max_rel);
    if (have_peak) set_range(pts, np, c);
    if (have_cv) c->seconds_cv = median_cv(pts, np);
    if (have_peak) {
        plan_status st = fit_peak(path, pts, np, smax, bmax, c, err);
        if (st) return st;
    }
    return PLAN_OK;
}

plan_status plan_cost_from_profile(const char *path, plan_cost *c, plan_error *err)
{
    plan_heap heap = {0, 0};
    csv_reader rd;
    plan_status st = csv_open(&rd, path, &heap, err);
    if (st) return st;
    int64_t col[P_NCOL], ncols = 0;
    prof_point *pts = NULL;
    size_t np = 0;
    st = read_header(&rd, col, &ncols, err);
    if (!st) st = read_points(&rd, col, ncols, &pts, &np, err);
    if (!st) st = fit(path, rd.line, pts, np, col[P_PEAK] >= 0, col[P_CV] >= 0, c, err);
    free(pts);
    csv_close(&rd);
    return st;
}
