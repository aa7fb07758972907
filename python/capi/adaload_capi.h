/* adaload_capi.h -- the few flat C entry points of libadaload that need no structs, for
 * callers that reach the library through a foreign-function interface (the Python package
 * python/adaload/ loads it with ctypes). Everything else of the library is the kernels' C API
 * (kernels/lnmod.h, kernels/lnmod_desc.h; the fused residual op's kernels/lnmod_res.h,
 * kernels/lnmod_res_desc.h) and the planner's (planner/planner.h), exported unchanged.
 *
 *   char err[512];
 *   const char *opts[] = {"assign", "kk", "gpus", "2"};
 *   int st = adaload_capi_plan("datasets/tiny.csv", "datasets/models/wan2.1-1.3b.json",
 *                              opts, 4, "plan.jsonl", "summary.json", err, sizeof err);
 *   if (st) fprintf(stderr, "%s\n", err);            // st is a plan_status
 *
 * The library never exits or prints; every function returns a status. No global state
 * except what the CUDA runtime keeps (the current device of the calling thread).
 */
#ifndef ADALOAD_CAPI_H
#define ADALOAD_CAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever an entry point of this header changes. */
#define ADALOAD_CAPI_VERSION 5
int adaload_capi_version(void);

/* 1 when this library holds the CUDA kernels (lnmod_forward and friends), 0 when it was
 * built without a CUDA toolkit (the planner and the descriptor only). */
int adaload_capi_has_cuda(void);

/* The memory layout of lnmod_desc, so a foreign mirror of the struct can check itself:
 * out[0] = sizeof(lnmod_desc), out[1 + i] = offsetof of its i-th field in declaration order
 * (rows, D, rows_per_sample, frame_len, x_dtype, mod_dtype, y_dtype, layout, scale_stride,
 * shift_stride, eps). Writes min(n, 12) values; returns 12. */
int64_t adaload_capi_desc_layout(int64_t *out, int64_t n);

/* The memory layout of the fused residual op's structs (kernels/lnmod_res_desc.h), for the
 * same check: out[0] = sizeof(lnmod_res_desc), out[1 + i] = offsetof of its i-th field in
 * declaration order (rows, D, rows_per_sample, frame_len, layout, gate, norm, res_dtype,
 * branch_dtype, mod_dtype, out_dtype, gate_stride, scale_stride, shift_stride, eps), then
 * out[16..19] = sizeof lnmod_res_fwd_in, lnmod_res_bwd_in, lnmod_res_fwd_out,
 * lnmod_res_bwd_out (structs of pointers, in the header's field order). Writes min(n, 20)
 * values; returns 20. (Version 3.) */
int64_t adaload_capi_res_layout(int64_t *out, int64_t n);

/* Plans a manifest like `adaload plan` and writes the plan (the --plan-out format of
 * planner/README.md) to plan_out and the canonical summary JSON to summary_out; either may be
 * NULL. The files are written at exactly these paths (the caller chooses temporary names and
 * renames them). model_file is a model JSON (datasets/models/NAME.json). opts holds nopts
 * strings, name/value pairs with the names of `adaload plan`'s options without the dashes
 * ("assign", "kk", "window", "8", ...): policy, assign, window, grad-accum, gpus, gpu, gpu-mem-gib,
 * mem-margin, seed, epoch, mem-tokens, tok-budget, act, comp-model, step-time, comp-budget,
 * comp-ref-pct, p, flops, oversize, profile, jitter-cv, parallel, extrapolate (0 or 1).
 * What is not given keeps plan_config_default's
 * value, the command's default; every value goes through the planner's own checks (whole
 * numbers decimal digits below 2^63, reals finite), as the command's.
 * Returns a plan_status (0 ok); on failure err gets one line naming the file or option. */
int adaload_capi_plan(const char *manifest, const char *model_file, const char *const *opts,
                      int64_t nopts, const char *plan_out, const char *summary_out, char *err,
                      size_t errlen);

/* Makes `device` the calling thread's current CUDA device for the kernels of this library
 * (its CUDA runtime is linked statically, so it does not share the caller's notion of the
 * current device). Returns an lnmod_status: LNMOD_ERR_NO_DEVICE when built without CUDA or
 * when the device does not exist. */
int adaload_capi_set_device(int device);

#ifdef __cplusplus
}
#endif
#endif
