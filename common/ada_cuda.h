/* ada_cuda.h -- the CUDA runtime as every module uses it: how many devices there are, and
 * one check for a CUDA call that gives the caller the error instead of printing it.
 *
 *   int n = ada_cuda_device_count();                 // 0 without CUDA or without a device
 *   #if ADALOAD_HAVE_CUDA
 *   cudaError_t e = ADA_CUDA_CHECK(cudaMemcpy(...), "cudaMemcpy", msg, sizeof msg);
 *   if (e != cudaSuccess) return -1;                 // msg: "cudaMemcpy: cudaErrorX (text)"
 *   #endif
 *
 * ADA_CUDA_CHECK evaluates the call once; on an error it writes "<what>: <name> (<text>)"
 * into msg and returns the error code, which the caller keeps (it says whether the
 * context is lost: a sticky error comes back from every later call). It does not clear
 * the error state. Built with ADALOAD_HAVE_CUDA from build_info.h.
 */
#ifndef ADALOAD_ADA_CUDA_H
#define ADALOAD_ADA_CUDA_H

#include <stddef.h>
#include <stdio.h>

#include "build_info.h"

/* Number of usable CUDA devices (0 without CUDA or without a device). */
int ada_cuda_device_count(void);

#if ADALOAD_HAVE_CUDA
#include <cuda_runtime_api.h>

static inline cudaError_t ada_cuda_check_(cudaError_t e, const char *what, char *msg, size_t n)
{
    if (e != cudaSuccess && msg && n > 0)
        snprintf(msg, n, "%s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return e;
}
#define ADA_CUDA_CHECK(call, what, msg, n) ada_cuda_check_((call), (what), (msg), (n))
#endif

#endif
