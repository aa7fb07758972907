/* adaload_capi.c -- the flat entry points of libadaload (adaload_capi.h). */
#include "adaload_capi.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "lnmod_desc.h"
#include "lnmod_res_desc.h"
#include "planner.h"

#if ADALOAD_CAPI_CUDA
#include <cuda_runtime_api.h>
#endif

int adaload_capi_version(void)
{
    return ADALOAD_CAPI_VERSION;
}

int adaload_capi_has_cuda(void)
{
    return ADALOAD_CAPI_CUDA ? 1 : 0;
}

int64_t adaload_capi_desc_layout(int64_t *out, int64_t n)
{
    const int64_t v[12] = {
        (int64_t)sizeof(lnmod_desc),
        (int64_t)offsetof(lnmod_desc, rows),
        (int64_t)offsetof(lnmod_desc, D),
        (int64_t)offsetof(lnmod_desc, rows_per_sample),
        (int64_t)offsetof(lnmod_desc, frame_len),
        (int64_t)offsetof(lnmod_desc, x_dtype),
        (int64_t)offsetof(lnmod_desc, mod_dtype),
        (int64_t)offsetof(lnmod_desc, y_dtype),
        (int64_t)offsetof(lnmod_desc, layout),
        (int64_t)offsetof(lnmod_desc, scale_stride),
        (int64_t)offsetof(lnmod_desc, shift_stride),
        (int64_t)offsetof(lnmod_desc, eps),
    };
    for (int64_t i = 0; out && i < n && i < 12; i++) out[i] = v[i];
    return 12;
}

int64_t adaload_capi_res_layout(int64_t *out, int64_t n)
{
    const int64_t v[20] = {
        (int64_t)sizeof(lnmod_res_desc),
        (int64_t)offsetof(lnmod_res_desc, rows),
        (int64_t)offsetof(lnmod_res_desc, D),
        (int64_t)offsetof(lnmod_res_desc, rows_per_sample),
        (int64_t)offsetof(lnmod_res_desc, frame_len),
        (int64_t)offsetof(lnmod_res_desc, layout),
        (int64_t)offsetof(lnmod_res_desc, gate),
        (int64_t)offsetof(lnmod_res_desc, norm),
        (int64_t)offsetof(lnmod_res_desc, res_dtype),
        (int64_t)offsetof(lnmod_res_desc, branch_dtype),
        (int64_t)offsetof(lnmod_res_desc, mod_dtype),
        (int64_t)offsetof(lnmod_res_desc, out_dtype),
        (int64_t)offsetof(lnmod_res_desc, gate_stride),
        (int64_t)offsetof(lnmod_res_desc, scale_stride),
        (int64_t)offsetof(lnmod_res_desc, shift_stride),
        (int64_t)offsetof(lnmod_res_desc, eps),
        (int64_t)sizeof(lnmod_res_fwd_in),
        (int64_t)sizeof(lnmod_res_bwd_in),
        (int64_t)sizeof(lnmod_res_fwd_out),
        (int64_t)sizeof(lnmod_res_bwd_out),
    };
    for (int64_t i = 0; out && i < n && i < 20; i++) out[i] = v[i];
    return 20;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* The enum value whose name is `name`, searching the first `limit` values; -1 if none.
 * Searching by name keeps this file right when the planner gains policies or assignments. */
static int find_policy(const char *name)
{
    for (int i = 0; i < 2; i++)
        if (!strcmp(plan_policy_name((plan_policy)i), name)) return i;
    return -1;
}

static int find_assign(const char *name)
{
    for (int i = 0; i < PLAN_NASSIGN; i++)
        if (!strcmp(plan_assign_name((plan_assign)i), name)) return i;
    return -1;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Writes the plan and the summary; PLAN_ERR_WRITE names the file that failed. */
static plan_status write_files(const plan_result *r, const plan_baselines *bl, const plan_manifest *mf,
                               const char *plan_out, const char *summary_out, char *err, size_t errlen)
{
    if (plan_out) {
        FILE *f = fopen(plan_out, "wb");
        plan_status st = f ? plan_write_plan(r, mf, f, 0, -1) : PLAN_ERR_WRITE;
        if (f && fclose(f) != 0) st = PLAN_ERR_WRITE;
        if (st) {
            set_err(err, errlen, "cannot write %s", plan_out);
            return st;
        }
    }
    if (summary_out) {
        json_t *j = plan_summary_json(r, bl);
        FILE *f = j ? fopen(summary_out, "wb") : NULL;
        int bad = !f;
        if (f) {
            bad = json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) != 0;
            bad = (fputc('\n', f) == EOF) || bad;
            bad = (fclose(f) != 0) || bad;
        }
        json_decref(j);
        if (bad) {
            set_err(err, errlen, "cannot write %s", summary_out);
            return PLAN_ERR_WRITE;
        }
    }
    return PLAN_OK;
}

/* Strict numbers, as `adaload plan` reads them: whole numbers are decimal digits only; reals
 * are finite. 0 ok, -1 not a number of that kind. */
static int parse_u64(const char *v, uint64_t *out)
{
    if (!*v || strlen(v) > 19) return -1;
    uint64_t x = 0;
    for (const char *c = v; *c; c++) {
        if (*c < '0' || *c > '9') return -1;
        x = x * 10 + (uint64_t)(*c - '0');
    }
    *out = x;
    return 0;
}

static int parse_f64(const char *v, double *out)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || errno || *end || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

typedef struct {
    const char *profile;
    int window_given;
} capi_extra;

/* One option (the name `adaload plan` takes, without the dashes) into cfg. The ranges are
 * checked by plan_build (the same check as the command's). */
static int set_option(plan_config *c, capi_extra *x, const char *k, const char *v, char *err, size_t errlen)
{
    uint64_t u = 0;
    double d = 0;
    int whole = !strcmp(k, "gpus") || !strcmp(k, "window") || !strcmp(k, "grad-accum") || !strcmp(k, "seed") || !strcmp(k, "epoch") ||
                !strcmp(k, "mem-tokens") || !strcmp(k, "tok-budget");
    int real = !strcmp(k, "gpu-mem-gib") || !strcmp(k, "mem-margin") || !strcmp(k, "flops") ||
               !strcmp(k, "step-time") || !strcmp(k, "comp-budget") || !strcmp(k, "comp-ref-pct") ||
               !strcmp(k, "p") || !strcmp(k, "jitter-cv");
    if (whole && (parse_u64(v, &u) || u > (uint64_t)INT64_MAX)) {
        set_err(err, errlen, "%s %s: must be a whole number in [0, 2^63) (decimal digits)", k, v);
        return -1;
    }
    if (real && (parse_f64(v, &d))) {
        set_err(err, errlen, "%s %s: must be a finite number", k, v);
        return -1;
    }
    if (!strcmp(k, "policy")) {
        int i = find_policy(v);
        if (i < 0) goto bad;
        c->policy = (plan_policy)i;
    } else if (!strcmp(k, "assign")) {
        int i = find_assign(v);
        if (i < 0) goto bad;
        c->assign = (plan_assign)i;
    } else if (!strcmp(k, "oversize")) {
        if (strcmp(v, "error") && strcmp(v, "drop")) goto bad;
        c->oversize_drop = !strcmp(v, "drop");
    } else if (!strcmp(k, "comp-model")) {
        if (strcmp(v, "cost") && strcmp(v, "power")) goto bad;
        c->comp_model = strcmp(v, "cost") ? PLAN_COMP_POWER : PLAN_COMP_COST;
    } else if (!strcmp(k, "gpu")) {
        const plan_gpu *g = plan_gpu_find(v);
        if (!g) goto bad;
        c->gpu_mem_bytes = g->bytes;
        c->gpu_name = g->name;
    } else if (!strcmp(k, "parallel")) {
        int i = -1;
        for (int j = 0; j <= PLAN_PARALLEL_ZERO3; j++)
            if (!strcmp(plan_parallel_name((plan_parallel)j), v)) i = j;
        if (i < 0) goto bad;
        c->parallel = (plan_parallel)i;
    } else if (!strcmp(k, "extrapolate")) {
        if (strcmp(v, "0") && strcmp(v, "1")) goto bad;
        c->extrapolate = !strcmp(v, "1");
    } else if (!strcmp(k, "act")) {
        c->act = v;
    } else if (!strcmp(k, "profile")) {
        x->profile = v;
    } else if (!strcmp(k, "gpus")) {
        c->gpus = (int64_t)u;
    } else if (!strcmp(k, "window")) {
        c->window = (int64_t)u;
        x->window_given = 1;
    } else if (!strcmp(k, "grad-accum")) {
        c->grad_accum = (int64_t)u;
    } else if (!strcmp(k, "seed")) {
        c->seed = u;
    } else if (!strcmp(k, "epoch")) {
        c->epoch = u;
    } else if (!strcmp(k, "mem-tokens")) {
        c->mem_tokens = (int64_t)u;
    } else if (!strcmp(k, "tok-budget")) {
        c->tok_budget = (int64_t)u;
    } else if (!strcmp(k, "gpu-mem-gib")) {
        if (!(d > 0)) goto bad;
        c->gpu_mem_bytes = d * 1073741824.0;
        c->gpu_name = NULL; /* not the preset's capacity any more */
    } else if (!strcmp(k, "mem-margin")) {
        c->mem_margin = d;
    } else if (!strcmp(k, "flops")) {
        if (!(d > 0)) goto bad;
        c->flops = d;
    } else if (!strcmp(k, "step-time") || !strcmp(k, "comp-budget")) {
        if (!(d > 0)) goto bad;
        c->comp_budget = d;
    } else if (!strcmp(k, "jitter-cv")) {
        c->jitter_cv = d;
    } else if (!strcmp(k, "comp-ref-pct")) {
        c->comp_ref_pct = d;
    } else if (!strcmp(k, "p")) {
        if (!(d > 0 && d <= 3)) goto bad;
        c->p = d;
    } else {
        set_err(err, errlen, "%s: not an option of the planner", k);
        return -1;
    }
    return 0;
bad:
    set_err(err, errlen, "%s %s: not a valid value (see adaload plan --help)", k, v);
    return -1;
}

int adaload_capi_plan(const char *manifest, const char *model_file, const char *const *opts,
                      int64_t nopts, const char *plan_out, const char *summary_out, char *err,
                      size_t errlen)
{
    set_err(err, errlen, "%s", "");
    if (!manifest || !model_file || nopts < 0 || (nopts % 2) || (nopts && !opts)) {
        set_err(err, errlen, "adaload_capi_plan: manifest and model_file are required, options come in name/value pairs");
        return PLAN_ERR_USAGE;
    }
    plan_config cfg;
    plan_config_default(&cfg);
    capi_extra x = {NULL, 0};
    for (int64_t i = 0; i < nopts; i += 2) {
        if (!opts[i] || !opts[i + 1]) {
            set_err(err, errlen, "adaload_capi_plan: option %lld is NULL", (long long)i / 2);
            return PLAN_ERR_USAGE;
        }
        if (set_option(&cfg, &x, opts[i], opts[i + 1], err, errlen)) return PLAN_ERR_USAGE;
    }
    if (cfg.grad_accum && !x.window_given) cfg.window = cfg.grad_accum; /* as adaload plan */
    cfg.manifest_name = base_name(manifest);

    plan_error e = {{0}};
    plan_model model;
    plan_cost prof;
    plan_manifest *mf = NULL;
    plan_result *r = NULL;
    plan_status st = plan_model_load(model_file, &model, &e);
    if (!st && x.profile) {
        st = plan_cost_from_profile(x.profile, &prof, &e);
        cfg.cost = &prof;
    }
    if (!st) st = plan_manifest_read(manifest, &model, plan_out != NULL, &mf, &e);
    if (!st) st = plan_build(mf, &model, &cfg, &r, &e);
    /* The summary carries the baselines, as `adaload plan`'s does. */
    plan_baselines bl = {{NULL}};
    if (!st && summary_out) st = plan_build_baselines(mf, &model, &cfg, r, &bl, &e);
    if (st) set_err(err, errlen, "%s", e.msg);
    else st = write_files(r, &bl, mf, plan_out, summary_out, err, errlen);
    plan_baselines_free(&bl);
    plan_result_free(r);
    plan_manifest_free(mf);
    return st;
}

int adaload_capi_set_device(int device)
{
#if ADALOAD_CAPI_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return LNMOD_ERR_NO_DEVICE;
    if (device < 0 || device >= n) return LNMOD_ERR_NO_DEVICE;
    return cudaSetDevice(device) == cudaSuccess ? LNMOD_OK : LNMOD_ERR_CUDA;
#else
    (void)device;
    return LNMOD_ERR_NO_DEVICE;
#endif
}
