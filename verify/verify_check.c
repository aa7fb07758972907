/* verify_check.c -- tolerance table, pass condition, error statistics and guard-band check
 * of `adaload verify` (see verify_check.h for the table and its justification). */
#include "verify_check.h"

#include <math.h>
#include <string.h>

#include "verify_half.h"

verify_tol verify_tol_y(lnmod_dtype y_dtype)
{
    verify_tol t;
    t.atol = 1e-5;
    switch (y_dtype) {
    case LNMOD_BF16: t.rtol = 0x1p-7; break;  /* 1 bf16 ULP (8 significand bits) */
    case LNMOD_F16: t.rtol = 0x1p-10; break;  /* 1 fp16 ULP (11 significand bits) */
    case LNMOD_F32:
    default: t.rtol = 1e-5; break;
    }
    return t;
}

verify_tol verify_tol_mean(void) { return (verify_tol){.atol = 1e-5, .rtol = 1e-5}; }
verify_tol verify_tol_rstd(void) { return (verify_tol){.atol = 0.0, .rtol = 1e-5}; }

double verify_sum_factor(int64_t n)
{
    if (n <= 1) return 0.0;
    const double p = VERIFY_BWD_LAMBDA * sqrt((double)n);
    return (double)(n - 1) < p ? (double)(n - 1) : p;
}

verify_tol verify_tol_round(lnmod_dtype t)
{
    switch (t) {
    /* 1 ULP relative (twice the half ULP a round-to-nearest needs: the same rtol as y's), and
     * 1 ULP below the normal range (the subnormal step) */
    case LNMOD_BF16: return (verify_tol){.atol = 0x1p-133, .rtol = 0x1p-7};
    case LNMOD_F16: return (verify_tol){.atol = 0x1p-24, .rtol = 0x1p-10};
    case LNMOD_F32:
    default: return (verify_tol){.atol = 0x1p-149, .rtol = 0x1p-23};
    }
}

verify_dx_coef verify_dx_coef_of(const verify_dx_row *r)
{
    const double s = verify_sum_factor(r->D);
    const verify_tol t = verify_tol_round(r->dtype);
    const double k = r->rstd * VERIFY_U * (1.0 + t.rtol);
    /* E = rstd*u*(8(|g| + |mg| + |xhat||mgx|) + (s + 4) A_g + |xhat| (s + 7) A_gx) */
    return (verify_dx_coef){.c0 = k * (8.0 * fabs(r->mg) + (s + 4.0) * r->abs_g) + t.atol,
                            .c_g = k * 8.0,
                            .c_x = k * (8.0 * fabs(r->mgx) + (s + 7.0) * r->abs_gx),
                            .r = t.rtol};
}

double verify_dx_allow(const verify_dx_row *r, double ref, double g, double xhat)
{
    const verify_dx_coef c = verify_dx_coef_of(r);
    return verify_dx_allow_c(&c, ref, g, xhat);
}

verify_colsum_coef verify_colsum_coef_of(lnmod_dtype mod_dtype, int64_t n)
{
    const verify_tol t = verify_tol_round(mod_dtype);
    return (verify_colsum_coef){.c_abs = VERIFY_U * (verify_sum_factor(n) + 4.0) * (1.0 + t.rtol), .r = t.rtol,
                                .a = t.atol};
}

double verify_colsum_allow(lnmod_dtype mod_dtype, int64_t n, double ref, double abs_sum)
{
    const verify_colsum_coef c = verify_colsum_coef_of(mod_dtype, n);
    return verify_colsum_allow_c(&c, ref, abs_sum);
}

json_t *verify_tol_json(void)
{
    json_t *o = json_object();
    json_t *y = json_object();
    const lnmod_dtype dts[3] = {LNMOD_F32, LNMOD_F16, LNMOD_BF16};
    for (int i = 0; i < 3; i++) {
        verify_tol t = verify_tol_y(dts[i]);
        json_object_set_new(y, lnmod_dtype_name(dts[i]),
                            json_pack("{s:f, s:f}", "atol", t.atol, "rtol", t.rtol));
    }
    json_object_set_new(o, "rule", json_string("|got - ref| <= atol + rtol*|ref|; any NaN/Inf fails"));
    json_object_set_new(o, "y", y);
    verify_tol m = verify_tol_mean(), r = verify_tol_rstd();
    json_object_set_new(o, "mean", json_pack("{s:f, s:f, s:s}", "atol", m.atol, "rtol", m.rtol,
                                              "atol_scale", "row std"));
    json_object_set_new(o, "rstd", json_pack("{s:f, s:f}", "atol", r.atol, "rtol", r.rtol));
    json_t *rd = json_object();
    for (int i = 0; i < 3; i++) {
        verify_tol t = verify_tol_round(dts[i]);
        json_object_set_new(rd, lnmod_dtype_name(dts[i]), json_pack("{s:f, s:f}", "atol", t.atol, "rtol", t.rtol));
    }
    json_object_set_new(
        o, "backward",
        json_pack("{s:s, s:s, s:s, s:f, s:f, s:o}", "rule",
                  "|got - ref| <= E*(1 + rtol) + rtol*|ref| + atol, rtol/atol of the output dtype's rounding",
                  "dx", "E = rstd*u*(8(|g|+|mg|+|xhat*mgx|) + (sigma(D)+4)*A_g + |xhat|*(sigma(D)+7)*A_gx)",
                  "dscale_dshift", "E = u*(sigma(n)+4)*sum|term| over the n rows of the modulation row",
                  "u", VERIFY_U, "lambda", VERIFY_BWD_LAMBDA, "rounding", rd));
    json_object_set_new(o, "sigma", json_string("sigma(n) = min(n - 1, lambda*sqrt(n))"));
    return o;
}

int verify_elem_ok(double got, double ref, double atol, double rtol)
{
    /* Written as the pass condition: a NaN anywhere makes the comparison false. */
    if (!isfinite(got) || !isfinite(ref)) return 0;
    return fabs(got - ref) <= atol + rtol * fabs(ref);
}

void verify_stats_init(verify_stats *s)
{
    memset(s, 0, sizeof *s);
    s->worst_index = -1;
}

/* Keeps the VERIFY_FIRST_FAILS smallest failing indices, sorted. */
static void note_failure(verify_stats *s, int64_t index, double got, double ref)
{
    int k = s->nfirst;
    if (k == VERIFY_FIRST_FAILS && index >= s->first_index[k - 1]) return;
    if (k < VERIFY_FIRST_FAILS) s->nfirst = ++k;
    int i = k - 1;
    while (i > 0 && s->first_index[i - 1] > index) {
        s->first_index[i] = s->first_index[i - 1];
        s->first_got[i] = s->first_got[i - 1];
        s->first_ref[i] = s->first_ref[i - 1];
        i--;
    }
    s->first_index[i] = index;
    s->first_got[i] = got;
    s->first_ref[i] = ref;
}

static void note_worst(verify_stats *s, double ratio, int64_t index, double got, double ref)
{
    /* Ties go to the smaller index so the result does not depend on the thread split. */
    if (s->worst_index < 0 || ratio > s->worst_ratio ||
        (ratio == s->worst_ratio && index < s->worst_index)) {
        s->worst_ratio = ratio;
        s->worst_index = index;
        s->worst_got = got;
        s->worst_ref = ref;
    }
}

void verify_stats_add(verify_stats *s, int64_t index, double got, double ref, double atol,
                      double rtol)
{
    s->n++;
    if (!isfinite(got) || !isfinite(ref)) {
        if (!isfinite(got)) s->nonfinite++;
        s->failed++;
        note_failure(s, index, got, ref);
        note_worst(s, INFINITY, index, got, ref);
        return;
    }
    double err = fabs(got - ref);
    double allow = atol + rtol * fabs(ref);
    if (err > s->max_abs) s->max_abs = err;
    if (ref != 0.0 && err / fabs(ref) > s->max_rel) s->max_rel = err / fabs(ref);
    s->sum_sq_err += err * err;
    s->sum_sq_ref += ref * ref;
    double ratio = allow > 0.0 ? err / allow : (err > 0.0 ? INFINITY : 0.0);
    note_worst(s, ratio, index, got, ref);
    if (!verify_elem_ok(got, ref, atol, rtol)) {
        s->failed++;
        note_failure(s, index, got, ref);
    }
}

void verify_stats_merge(verify_stats *a, const verify_stats *b)
{
    a->n += b->n;
    a->failed += b->failed;
    a->nonfinite += b->nonfinite;
    if (b->max_abs > a->max_abs) a->max_abs = b->max_abs;
    if (b->max_rel > a->max_rel) a->max_rel = b->max_rel;
    a->sum_sq_err += b->sum_sq_err;
    a->sum_sq_ref += b->sum_sq_ref;
    if (b->worst_index >= 0) note_worst(a, b->worst_ratio, b->worst_index, b->worst_got, b->worst_ref);
    for (int i = 0; i < b->nfirst; i++)
        note_failure(a, b->first_index[i], b->first_got[i], b->first_ref[i]);
}

double verify_stats_l2_rel(const verify_stats *s)
{
    if (s->sum_sq_ref > 0.0) return sqrt(s->sum_sq_err) / sqrt(s->sum_sq_ref);
    return s->sum_sq_err > 0.0 ? INFINITY : 0.0;
}

int verify_stats_pass(const verify_stats *s) { return s->failed == 0 && s->nonfinite == 0; }

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *verify_stats_json(const verify_stats *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "n", json_integer(s->n));
    json_object_set_new(o, "failed", json_integer(s->failed));
    json_object_set_new(o, "nonfinite", json_integer(s->nonfinite));
    json_object_set_new(o, "max_abs", num_or_null(s->max_abs));
    json_object_set_new(o, "max_rel", num_or_null(s->max_rel));
    json_object_set_new(o, "l2_rel", num_or_null(verify_stats_l2_rel(s)));
    json_object_set_new(o, "worst_ratio", num_or_null(s->worst_ratio));
    json_object_set_new(o, "worst_index", json_integer(s->worst_index));
    json_object_set_new(o, "worst_got", num_or_null(s->worst_got));
    json_object_set_new(o, "worst_ref", num_or_null(s->worst_ref));
    json_t *ff = json_array();
    for (int i = 0; i < s->nfirst; i++)
        json_array_append_new(ff, json_pack("{s:I, s:o, s:o}", "index", (json_int_t)s->first_index[i],
                                            "got", num_or_null(s->first_got[i]), "ref",
                                            num_or_null(s->first_ref[i])));
    json_object_set_new(o, "first_failures", ff);
    return o;
}

static inline double load_y(lnmod_dtype t, const void *base, int64_t i)
{
    switch (t) {
    case LNMOD_F32: return (double)((const float *)base)[i];
    case LNMOD_F16: return (double)verify_f16_to_f32(((const uint16_t *)base)[i]);
    default: return (double)verify_bf16_to_f32(((const uint16_t *)base)[i]);
    }
}

void verify_compare_y_span(const lnmod_desc *d, int64_t i0, int64_t n, const void *got_y, const double *ref,
                           verify_stats *s)
{
    const verify_tol t = verify_tol_y(d->y_dtype);
    const lnmod_dtype yt = d->y_dtype;
    /* Fast path: an element that passes and breaks none of the running maxima only adds to
     * the sums. Everything else -- a failure (ratio > 1), a new maximum, NaN or Inf (every
     * comparison with NaN is false; max_abs is finite, so err = Inf fails it too) -- takes
     * verify_stats_add, so the result equals calling it for every element. */
    double sse = 0.0, ssr = 0.0;
    int64_t nfast = 0;
    double lim_abs = s->max_abs, lim_rel = s->max_rel;
    double lim_ratio = s->worst_index < 0 ? 0.0 : (s->worst_ratio < 1.0 ? s->worst_ratio : 1.0);
    for (int64_t k = 0; k < n; k++) {
        const double got = load_y(yt, got_y, i0 + k), rv = ref[k];
        const double err = fabs(got - rv), aref = fabs(rv);
        if (err <= lim_abs && err <= lim_rel * aref && err <= lim_ratio * (t.atol + t.rtol * aref) &&
            s->worst_index >= 0) {
            sse += err * err;
            ssr += rv * rv;
            nfast++;
            continue;
        }
        verify_stats_add(s, i0 + k, got, rv, t.atol, t.rtol);
        lim_abs = s->max_abs;
        lim_rel = s->max_rel;
        lim_ratio = s->worst_ratio < 1.0 ? s->worst_ratio : 1.0;
    }
    s->n += nfast;
    s->sum_sq_err += sse;
    s->sum_sq_ref += ssr;
}

void verify_compare_y_rows(const lnmod_desc *d, int64_t r0, int64_t r1, const void *got_y,
                           const double *ref_y, verify_stats *s)
{
    const int64_t i0 = r0 * d->D, i1 = r1 * d->D;
    verify_compare_y_span(d, i0, i1 - i0, got_y, ref_y + i0, s);
}

void verify_compare_stats_rows(const lnmod_desc *d, int64_t r0, int64_t r1,
                               const float *got_mean, const float *got_rstd,
                               const double *ref_mean, const double *ref_rstd,
                               verify_stats *s_mean, verify_stats *s_rstd)
{
    verify_tol tm = verify_tol_mean(), tr = verify_tol_rstd();
    for (int64_t r = r0; r < r1; r++) {
        double rs = ref_rstd[r];
        double var = 1.0 / (rs * rs) - d->eps;
        double sd = var > 0.0 ? sqrt(var) : 0.0;
        verify_stats_add(s_mean, r, (double)got_mean[r], ref_mean[r], tm.atol * sd, tm.rtol);
        verify_stats_add(s_rstd, r, (double)got_rstd[r], rs, tr.atol, tr.rtol);
    }
}

int verify_guard_ok(const void *buf, size_t n, size_t *first_bad)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != VERIFY_POISON_BYTE) {
            if (first_bad) *first_bad = i;
            return 0;
        }
    }
    return 1;
}
