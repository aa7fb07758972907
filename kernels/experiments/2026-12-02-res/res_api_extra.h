/* res_api_extra.h -- what the experiment adds to kernels/pending/lnmod_res.h for its harness. */
#ifndef ADALOAD_RES_API_EXTRA_H
#define ADALOAD_RES_API_EXTRA_H

#ifdef __cplusplus
extern "C" {
#endif

/* The path the last lnmod_res_forward / _backward of this host thread ran: 1 the dtile fused
 * kernel, 0 naive's (the naive variant, or dtile's fallback). */
int res_last_path(void);

#ifdef __cplusplus
}
#endif
#endif
