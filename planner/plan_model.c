/* plan_model.c -- model presets (JSON files under datasets/models/), the snapping rule and
 * token count, the FLOP and memory models, the least-squares cost fit to a measured profile
 * and the fit of the exponent p. Formulas and their sources: datasets/models/README.md.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

/* ---- model files ---------------------------------------------------------------------- */

static plan_status key_error(plan_error *err, const char *path, const char *key, const char *what)
{
    return plan_fail(err, PLAN_ERR_INPUT, "%s: key '%s': %s", path, key, what);
}

static plan_status get_int(json_t *o, const char *path, const char *key, int64_t *out, plan_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!v) return key_error(err, path, key, "missing");
    if (!json_is_integer(v) || json_integer_value(v) <= 0)
        return key_error(err, path, key, "must be a positive whole number");
    *out = (int64_t)json_integer_value(v);
    return PLAN_OK;
}

static plan_status get_real(json_t *o, const char *path, const char *key, double *out, plan_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!v) return key_error(err, path, key, "missing");
    if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v)))
        return key_error(err, path, key, "must be a positive number");
    *out = json_number_value(v);
    return PLAN_OK;
}

static plan_status get_triple(json_t *o, const char *path, const char *key, int64_t out[3],
                              plan_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!v) return key_error(err, path, key, "missing");
    if (!json_is_array(v) || json_array_size(v) != 3)
        return key_error(err, path, key, "must be an array of 3 positive whole numbers [t, h, w]");
    for (size_t i = 0; i < 3; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e) || json_integer_value(e) <= 0 || json_integer_value(e) > 64)
            return key_error(err, path, key, "must be an array of 3 whole numbers in [1, 64]");
        out[i] = (int64_t)json_integer_value(e);
    }
    return PLAN_OK;
}

plan_status plan_model_load(const char *path, plan_model *m, plan_error *err)
{
    memset(m, 0, sizeof *m);
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    if (!o) {
        if (je.line < 0) {
            FILE *f = fopen(path, "rb");
            if (!f) return plan_fail(err, PLAN_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
            fclose(f);
        }
        return plan_fail(err, PLAN_ERR_INPUT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    }
    plan_status st = PLAN_OK;
    if (!json_is_object(o)) {
        st = plan_fail(err, PLAN_ERR_INPUT, "%s: a model file is a JSON object", path);
        goto out;
    }
    json_t *name = json_object_get(o, "name");
    if (!json_is_string(name) || json_string_length(name) == 0 || json_string_length(name) >= sizeof m->name) {
        st = key_error(err, path, "name", "must be a string of 1 to 63 characters");
        goto out;
    }
    strcpy(m->name, json_string_value(name));
    if ((st = get_int(o, path, "hidden_size", &m->hidden_size, err))) goto out;
    if ((st = get_int(o, path, "layers", &m->layers, err))) goto out;
    if ((st = get_int(o, path, "heads", &m->heads, err))) goto out;
    if ((st = get_int(o, path, "ffn_size", &m->ffn_size, err))) goto out;
    if ((st = get_int(o, path, "text_len", &m->text_len, err))) goto out;
    if ((st = get_triple(o, path, "vae_stride", m->vae_stride, err))) goto out;
    if ((st = get_triple(o, path, "patch", m->patch, err))) goto out;
    if ((st = get_real(o, path, "params", &m->params, err))) goto out;
    if ((st = get_real(o, path, "state_bytes_per_param", &m->state_bytes_per_param, err))) goto out;
    if ((st = get_int(o, path, "reserve_bytes", &m->reserve_bytes, err))) goto out;
    if ((st = get_int(o, path, "mem_bytes_per_token", &m->mem_bytes_per_token, err))) goto out;
    if ((st = get_real(o, path, "train_flop_factor", &m->train_flop_factor, err))) goto out;
    json_t *sh = json_object_get(o, "shard_states");
    if (!json_is_boolean(sh)) {
        st = key_error(err, path, "shard_states", sh ? "must be true or false" : "missing");
        goto out;
    }
    m->shard_states = json_is_true(sh);
out:
    json_decref(o);
    return st;
}

/* ---- shapes and tokens ---------------------------------------------------------------- */

void plan_snap(const plan_model *m, int64_t *frames, int64_t *height, int64_t *width)
{
    int64_t qt = m->vae_stride[0];
    int64_t qh = m->vae_stride[1] * m->patch[1];
    int64_t qw = m->vae_stride[2] * m->patch[2];
    *frames = 1 + qt * ((*frames - 1) / qt); /* the VAE keeps frame 1, then groups of qt */
    *height = *height < qh ? qh : qh * (*height / qh);
    *width = *width < qw ? qw : qw * (*width / qw);
}

int64_t plan_tokens(const plan_model *m, int64_t frames, int64_t height, int64_t width)
{
    int64_t lt = 1 + (frames - 1) / m->vae_stride[0];
    int64_t tt = (lt + m->patch[0] - 1) / m->patch[0];
    int64_t th = height / (m->vae_stride[1] * m->patch[1]);
    int64_t tw = width / (m->vae_stride[2] * m->patch[2]);
    return tt * th * tw;
}

/* ---- FLOP, memory and cost models ----------------------------------------------------- */

void plan_model_flops(const plan_model *m, double *a1, double *b1, double *g1)
{
    double L = (double)m->layers, D = (double)m->hidden_size, F = (double)m->ffn_size;
    double T = (double)m->text_len;
    *a1 = L * (12.0 * D * D + 4.0 * D * F + 4.0 * D * T);
    *b1 = 4.0 * L * D;
    *g1 = 4.0 * L * T * D * D;
}

double plan_model_fixed_bytes(const plan_model *m, int64_t gpus)
{
    double state = m->params * m->state_bytes_per_param;
    if (m->shard_states) state /= (double)gpus;
    return state + (double)m->reserve_bytes;
}

void plan_cost_from_flops(const plan_model *m, double flops, plan_cost *c)
{
    double a1, b1, g1;
    plan_model_flops(m, &a1, &b1, &g1);
    double k = m->train_flop_factor / flops;
    c->alpha = k * a1;
    c->beta = k * b1;
    c->gamma = k * g1;
    c->from_profile = 0;
    c->profile_points = 0;
}

double plan_cost_eval(const plan_cost *c, double S)
{
    return c->alpha * S + c->beta * S * S + c->gamma;
}

double plan_fit_p(const plan_cost *c, int64_t smin, int64_t smax)
{
    if (smin >= smax) {
        double S = (double)smin;
        return (c->alpha * S + 2.0 * c->beta * S * S) / plan_cost_eval(c, S);
    }
    enum { N = 65 };
    double x[N], y[N], mx = 0, my = 0;
    double l0 = log((double)smin), l1 = log((double)smax);
    for (int k = 0; k < N; k++) {
        x[k] = l0 + (l1 - l0) * k / (N - 1);
        y[k] = log(plan_cost_eval(c, exp(x[k])));
        mx += x[k];
        my += y[k];
    }
    mx /= N;
    my /= N;
    double sxy = 0, sxx = 0;
    for (int k = 0; k < N; k++) {
        sxy += (x[k] - mx) * (y[k] - my);
        sxx += (x[k] - mx) * (x[k] - mx);
    }
    return sxy / sxx;
}

/* ---- profile fit ---------------------------------------------------------------------- */

static int parse_real(csv_field v, double *out)
{
    v = csv_trim(v);
    char tmp[64];
    if (v.n == 0 || v.n >= sizeof tmp) return -1;
    memcpy(tmp, v.s, v.n);
    tmp[v.n] = '\0';
    char *end = NULL;
    errno = 0;
    double x = strtod(tmp, &end);
    if (errno || *end || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

/* Solves the 3x3 system a x = b by Gaussian elimination with partial pivoting; -1 if singular. */
static int solve3(double a[3][3], double b[3], double x[3])
{
    for (int c = 0; c < 3; c++) {
        int piv = c;
        for (int r = c + 1; r < 3; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
        if (fabs(a[piv][c]) < 1e-300) return -1;
        if (piv != c) {
            for (int k = 0; k < 3; k++) {
                double t = a[c][k];
                a[c][k] = a[piv][k];
                a[piv][k] = t;
            }
            double t = b[c];
            b[c] = b[piv];
            b[piv] = t;
        }
        for (int r = c + 1; r < 3; r++) {
            double f = a[r][c] / a[c][c];
            for (int k = c; k < 3; k++) a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int r = 2; r >= 0; r--) {
        double s = b[r];
        for (int k = r + 1; k < 3; k++) s -= a[r][k] * x[k];
        x[r] = s / a[r][r];
    }
    return 0;
}

plan_status plan_cost_from_profile(const char *path, plan_cost *c, plan_error *err)
{
    plan_heap heap = {0, 0};
    csv_reader rd;
    plan_status st = csv_open(&rd, path, &heap, err);
    if (st) return st;
    char *line;
    size_t len;
    csv_field fields[65];
    int got = csv_next_line(&rd, &line, &len, err);
    int64_t pt = -1, ps = -1, ncols = 0;
    double (*pts)[2] = NULL;
    size_t npts = 0, cap = 0;
    if (got < 0) {
        st = (plan_status)-got;
        goto out;
    }
    if (got == 0) {
        st = plan_fail(err, PLAN_ERR_INPUT, "%s:1: empty profile: no header (it needs tokens,seconds)", path);
        goto out;
    }
    ncols = csv_split(&rd, line, len, fields, 64, err);
    if (ncols < 0) {
        st = PLAN_ERR_INPUT;
        goto out;
    }
    if (ncols > 64) ncols = 64;
    for (int64_t i = 0; i < ncols; i++) {
        csv_field h = csv_trim(fields[i]);
        if (h.n == 6 && !memcmp(h.s, "tokens", 6)) pt = i;
        if (h.n == 7 && !memcmp(h.s, "seconds", 7)) ps = i;
    }
    if (pt < 0 || ps < 0) {
        st = plan_fail(err, PLAN_ERR_INPUT, "%s:1: the header needs the columns tokens,seconds", path);
        goto out;
    }
    while ((got = csv_next_line(&rd, &line, &len, err)) > 0) {
        size_t k = 0;
        while (k < len && (line[k] == ' ' || line[k] == '\t')) k++;
        if (k == len) continue;
        int64_t nf = csv_split(&rd, line, len, fields, 64, err);
        if (nf < 0) {
            st = PLAN_ERR_INPUT;
            goto out;
        }
        double v[2];
        int64_t col[2] = {pt, ps};
        for (int j = 0; j < 2; j++) {
            if (col[j] >= nf || parse_real(fields[col[j]], &v[j]) || !(v[j] > 0)) {
                st = plan_fail(err, PLAN_ERR_INPUT, "%s:%llu: column %lld (%s): not a positive number",
                               path, (unsigned long long)rd.line, (long long)col[j] + 1,
                               j ? "seconds" : "tokens");
                goto out;
            }
        }
        if (npts == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            double(*np)[2] = realloc(pts, ncap * sizeof *np);
            if (!np) {
                st = plan_fail(err, PLAN_ERR_NOMEM, "%s: out of memory", path);
                goto out;
            }
            pts = np;
            cap = ncap;
        }
        pts[npts][0] = v[0];
        pts[npts][1] = v[1];
        npts++;
    }
    if (got < 0) {
        st = (plan_status)-got;
        goto out;
    }
    /* Three coefficients need three distinct token counts (counting stops at three). */
    double smax = 0, seen[3];
    int distinct = 0;
    for (size_t i = 0; i < npts; i++) {
        if (pts[i][0] > smax) smax = pts[i][0];
        int known = 0;
        for (int j = 0; j < distinct; j++) known |= seen[j] == pts[i][0];
        if (!known && distinct < 3) seen[distinct++] = pts[i][0];
    }
    if (distinct < 3) {
        st = plan_fail(err, PLAN_ERR_INPUT,
                       "%s:%llu: the profile needs at least 3 distinct token counts to fit "
                       "alpha*S + beta*S^2 + gamma (it has %d)",
                       path, (unsigned long long)rd.line, distinct);
        goto out;
    }
    /* Normal equations in x = S/smax, so the matrix stays well conditioned. */
    double a[3][3] = {{0}}, b[3] = {0}, sol[3];
    for (size_t i = 0; i < npts; i++) {
        double x = pts[i][0] / smax, phi[3] = {x, x * x, 1.0};
        for (int r = 0; r < 3; r++) {
            for (int k = 0; k < 3; k++) a[r][k] += phi[r] * phi[k];
            b[r] += phi[r] * pts[i][1];
        }
    }
    if (solve3(a, b, sol)) {
        st = plan_fail(err, PLAN_ERR_INPUT, "%s: the profile's least-squares system is singular", path);
        goto out;
    }
    c->alpha = sol[0] / smax;
    c->beta = sol[1] / (smax * smax);
    c->gamma = sol[2];
    c->from_profile = 1;
    c->profile_points = (int64_t)npts;
out:
    free(pts);
    csv_close(&rd);
    return st;
}
