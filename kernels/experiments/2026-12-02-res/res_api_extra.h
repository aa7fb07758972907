/* res_api_extra.h -- what the experiment adds to kernels/pending/lnmod_res.h for its harness. */
#ifndef ADALOAD_RES_API_EXTRA_H
#define ADALOAD_RES_API_EXTRA_H

#ifdef __cplusplus
extern "C" {
#endif

/* The path the last lnmod_res_forward / _backward of this host thread ran: 2 dtile_bulk's fused
 * backward, 1 dtile's fused kernel, 0 naive's (the naive variant, or a fallback). */
int res_last_path(void);

#ifdef __cplusplus
}
#endif
#endif
