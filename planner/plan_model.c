/* plan_model.c -- model presets (JSON files under datasets/models/) with their activation
 * setups, the snapping rule and token count, the FLOP and memory models, and the fit of the
 * exponent p. Formulas and their sources: datasets/models/README.md. (Measured profiles:
 * plan_profile.c; GPU presets: plan_memory.c.)
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

/* "activations": [{"name", "bytes_per_token", "status", ...}, ...] and "activation_default". */
static plan_status get_activations(json_t *o, const char *path, plan_model *m, plan_error *err)
{
    json_t *a = json_object_get(o, "activations"), *legacy = json_object_get(o, "mem_bytes_per_token");
    if (legacy && a) return key_error(err, path, "mem_bytes_per_token", "give it or 'activations', not both");
    if (legacy) {
        /* The format before activation setups: one number, taken as one setup "file"
         * (estimated: the file does not say how it was obtained). */
        m->nact = 1;
        m->default_act = 0;
        snprintf(m->act[0].name, sizeof m->act[0].name, "file");
        m->act[0].measured = 0;
        return get_int(o, path, "mem_bytes_per_token", &m->act[0].bytes_per_token, err);
    }
    if (!json_is_array(a) || json_array_size(a) < 1 || json_array_size(a) > PLAN_MAX_ACT)
        return key_error(err, path, "activations", "must be an array of 1 to 8 setups");
    m->nact = (int)json_array_size(a);
    for (int i = 0; i < m->nact; i++) {
        json_t *e = json_array_get(a, (size_t)i);
        plan_act_setup *s = &m->act[i];
        char key[48];
        snprintf(key, sizeof key, "activations[%d]", i);
        if (!json_is_object(e)) return key_error(err, path, key, "must be an object");
        json_t *n = json_object_get(e, "name"), *st = json_object_get(e, "status");
        if (!json_is_string(n) || json_string_length(n) == 0 || json_string_length(n) >= sizeof s->name)
            return key_error(err, path, key, "'name' must be a string of 1 to 31 characters");
        snprintf(s->name, sizeof s->name, "%s", json_string_value(n));
        for (int j = 0; j < i; j++)
            if (!strcmp(m->act[j].name, s->name)) return key_error(err, path, key, "'name' appears twice");
        plan_status r = get_int(e, path, "bytes_per_token", &s->bytes_per_token, err);
        if (r) return key_error(err, path, key, "'bytes_per_token' must be a positive whole number");
        const char *sv = json_is_string(st) ? json_string_value(st) : "";
        if (!strcmp(sv, "measured")) s->measured = 1;
        else if (!strcmp(sv, "estimated, not yet measured")) s->measured = 0;
        else return key_error(err, path, key, "'status' must be \"measured\" or \"estimated, not yet measured\"");
    }
    json_t *d = json_object_get(o, "activation_default");
    const char *dn = json_is_string(d) ? json_string_value(d) : NULL;
    m->default_act = -1;
    for (int i = 0; dn && i < m->nact; i++)
        if (!strcmp(m->act[i].name, dn)) m->default_act = i;
    if (m->default_act < 0)
        return key_error(err, path, "activation_default", "must name one of the activation setups");
    return PLAN_OK;
}

const plan_act_setup *plan_model_act(const plan_model *m, const char *name)
{
    if (!name) return &m->act[m->default_act];
    for (int i = 0; i < m->nact; i++)
        if (!strcmp(m->act[i].name, name)) return &m->act[i];
    return NULL;
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
    if ((st = get_real(o, path, "train_flop_factor", &m->train_flop_factor, err))) goto out;
    json_t *sh = json_object_get(o, "shard_states");
    if (!json_is_boolean(sh)) {
        st = key_error(err, path, "shard_states", sh ? "must be true or false" : "missing");
        goto out;
    }
    m->shard_states = json_is_true(sh);
    st = get_activations(o, path, m, err);
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
    return plan_state_bytes(m, gpus, PLAN_PARALLEL_MODEL, 0) + (double)m->reserve_bytes;
}

double plan_state_bytes(const plan_model *m, int64_t gpus, plan_parallel par, int unsharded_grads)
{
    if (par == PLAN_PARALLEL_MODEL) par = m->shard_states ? PLAN_PARALLEL_ZERO3 : PLAN_PARALLEL_DDP;
    double P = m->params, N = (double)gpus;
    double w = 2.0, g = 2.0, o = m->state_bytes_per_param - 4.0;
    if (o < 0) { /* a model file with fewer than 4 bytes per parameter: all of it weights */
        w = m->state_bytes_per_param;
        g = o = 0;
    }
    double ws = par >= PLAN_PARALLEL_ZERO3 ? w / N : w;
    double gs = par >= PLAN_PARALLEL_ZERO2 && !unsharded_grads ? g / N : g;
    double os = par >= PLAN_PARALLEL_ZERO1 ? o / N : o;
    /* the original formula for the model file's own layout, so its numbers stay bit-equal */
    if (par == PLAN_PARALLEL_ZERO3 && !unsharded_grads) return P * m->state_bytes_per_param / N;
    if (par == PLAN_PARALLEL_DDP) return P * m->state_bytes_per_param;
    return P * (ws + gs + os);
}

void plan_cost_from_flops(const plan_model *m, double flops, plan_cost *c)
{
    double a1, b1, g1;
    plan_model_flops(m, &a1, &b1, &g1);
    double k = m->train_flop_factor / flops;
    c->alpha = k * a1;
    c->beta = k * b1;
    c->gamma = k * g1;
    c->overhead = 0;
    c->from_profile = 0;
    c->profile_points = 0;
    c->mem_bytes_per_token = 0;
    c->mem_intercept_bytes = 0;
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

