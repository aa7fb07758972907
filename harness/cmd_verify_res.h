/* cmd_verify_res.h -- `adaload verify --op lnmod_res`: the fused gated residual +
 * LayerNorm-Modulate op's cases (verify/verify_res.h) on the CPU models (--cpu-model) or the
 * GPU (the registry's variants with the fused op), alone and printed; no record is written (the
 * default --op all runs them in verify's session, into the record). */
#ifndef ADALOAD_CMD_VERIFY_RES_H
#define ADALOAD_CMD_VERIFY_RES_H

#include <stdint.h>

/* Runs grid `grid` ("smoke", "quick", "full") over the models named in models[0..nmodels)
 * (verify_res_models' names; none: "res_model"), directions VERIFY_DIR_* bits (a case of a
 * direction not asked is run but not counted), printing one line a case (not for "full") and
 * a summary on stdout. Exit code: 0 every counted case passed, 1 one failed, 2 an unknown
 * model, 3 out of memory. */
int cmd_verify_res_cpu(const char *grid, const char *const *models, int nmodels, int directions, uint64_t seed,
                       int threads);
/* The same on the GPU for the named kernel variants (none: every registry variant with
 * res_forward); 2 for a variant without the fused op, 77 without a CUDA device (or build). */
int cmd_verify_res_gpu(const char *grid, const char *const *variants, int nvariants, int directions, uint64_t seed,
                       int threads);

#endif
