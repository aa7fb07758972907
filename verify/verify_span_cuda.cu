/* verify_span_cuda.cu -- the byte checks of verify_span.h on the GPU (verify_span_cuda.h). One
 * grid-stride pass over the buffer, a byte per thread and step (consecutive threads read
 * consecutive bytes); a byte is inside the rows when it lies in [front, end) at an offset
 * whose remainder by the row pitch is below the row's data bytes. */
#include "verify_span_cuda.h"

#include <cuda_runtime.h>

__global__ void span_check_kernel(const unsigned char *buf, const unsigned char *ref, unsigned long long bytes,
                                  unsigned long long front, unsigned long long end, unsigned long long pitch,
                                  unsigned long long data, unsigned char poison, unsigned long long *bad)
{
    unsigned long long nout = 0, ndat = 0;
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += step) {
        const unsigned char v = buf[i];
        const bool inside = i >= front && i < end && (i - front) % pitch < data;
        if (!inside) nout += v != poison;
        else if (ref) ndat += v != ref[i];
    }
    if (nout) atomicAdd(&bad[0], nout);
    if (ndat) atomicAdd(&bad[1], ndat);
}

extern "C" int verify_cuda_span_check(const verify_span *sp, const unsigned char *buf, const unsigned char *ref,
                                      unsigned char poison, unsigned long long *dcount, unsigned long long bad[2])
{
    bad[0] = bad[1] = 0;
    const unsigned long long front = sp->front;
    const unsigned long long pitch = (unsigned long long)(sp->stride > 0 ? sp->stride : 1) * sp->es;
    const unsigned long long data = (unsigned long long)sp->D * sp->es;
    const unsigned long long end =
        sp->nrows < 1 ? front : front + ((unsigned long long)(sp->nrows - 1) * (unsigned long long)sp->stride +
                                         (unsigned long long)sp->D) * sp->es;
    cudaError_t e = cudaMemset(dcount, 0, 2 * sizeof *dcount);
    if (e != cudaSuccess) return (int)e;
    const int threads = 256;
    unsigned long long want = (sp->bytes + threads - 1) / threads;
    const int blocks = want < 1 ? 1 : (want > 132 * 64 ? 132 * 64 : (int)want);
    span_check_kernel<<<blocks, threads>>>(buf, ref, sp->bytes, front, end, pitch, data, poison, dcount);
    if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    if ((e = cudaMemcpy(bad, dcount, 2 * sizeof *dcount, cudaMemcpyDeviceToHost)) != cudaSuccess) return (int)e;
    return 0;
}
