/* adaload_capi.c -- the flat entry points of libadaload (adaload_capi.h). */
#include "adaload_capi.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lnmod_desc.h"
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
    for (int i = 0; i < 16; i++)
        if (!strcmp(plan_policy_name((plan_policy)i), name)) return i;
    return -1;
}

static int find_assign(const char *name)
{
    for (int i = 0; i < 16; i++)
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

int adaload_capi_plan(const char *manifest, const char *model_file, const char *policy,
                      const char *assign, int64_t gpus, double gpu_mem_gib, uint64_t seed,
                      double p, double flops, const char *profile, const char *plan_out,
                      const char *summary_out, char *err, size_t errlen)
{
    set_err(err, errlen, "%s", "");
    if (!manifest || !model_file || !policy || !assign) {
        set_err(err, errlen, "adaload_capi_plan: manifest, model_file, policy and assign are required");
        return PLAN_ERR_USAGE;
    }
    plan_config cfg;
    plan_config_default(&cfg);
    int pol = find_policy(policy), asg = find_assign(assign);
    if (pol < 0) {
        set_err(err, errlen, "policy '%s': not a policy of this planner", policy);
        return PLAN_ERR_USAGE;
    }
    if (asg < 0) {
        set_err(err, errlen, "assign '%s': not an assignment of this planner", assign);
        return PLAN_ERR_USAGE;
    }
    if (gpus < 1 || gpus > 1000000) {
        set_err(err, errlen, "gpus %lld: must be in [1, 1000000]", (long long)gpus);
        return PLAN_ERR_USAGE;
    }
    if (!(p <= 3.0)) { /* also NaN */
        set_err(err, errlen, "p %g: must be in (0, 3], or <= 0 for auto", p);
        return PLAN_ERR_USAGE;
    }
    if (seed > (uint64_t)INT64_MAX) {
        set_err(err, errlen, "seed: must be below 2^63");
        return PLAN_ERR_USAGE;
    }
    cfg.policy = (plan_policy)pol;
    cfg.assign = (plan_assign)asg;
    cfg.gpus = gpus;
    if (gpu_mem_gib > 0) {
        cfg.gpu_mem_bytes = gpu_mem_gib * 1073741824.0;
        cfg.gpu_name = NULL; /* not the preset's capacity any more */
    }
    cfg.seed = seed;
    cfg.p = p > 0 ? p : 0;
    if (flops > 0) cfg.flops = flops;
    cfg.manifest_name = base_name(manifest);

    plan_error e = {{0}};
    plan_model model;
    plan_cost prof;
    plan_manifest *mf = NULL;
    plan_result *r = NULL;
    plan_status st = plan_model_load(model_file, &model, &e);
    if (!st && profile) {
        st = plan_cost_from_profile(profile, &prof, &e);
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
