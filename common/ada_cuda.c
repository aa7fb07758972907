/* ada_cuda.c -- CUDA device count (ada_cuda.h). */
#include "ada_cuda.h"

int ada_cuda_device_count(void)
{
#if ADALOAD_HAVE_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the "no device" error */
        return 0;
    }
    return n;
#else
    return 0;
#endif
}
