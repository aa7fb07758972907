/* run_sysinfo.c -- what this machine has (`adaload env`, and meta.json of every run):
 * CUDA devices or "no CUDA device", OpenBLAS config and core, library versions, the build. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>
#include <jansson.h>

#include "ada_cuda.h"
#include "build_info.h"
#include "kernel_hash_v2.h"
#include "run_sysinfo.h"

#if ADALOAD_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static json_t *cuda_info(void)
{
    json_t *o = json_object();
#if ADALOAD_HAVE_CUDA
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    char buf[32];
    snprintf(buf, sizeof buf, "%d.%d", drv / 1000, (drv % 1000) / 10);
    json_object_set_new(o, "driver_cuda_version", json_string(buf));
    snprintf(buf, sizeof buf, "%d.%d", rt / 1000, (rt % 1000) / 10);
    json_object_set_new(o, "runtime_version", json_string(buf));
    json_t *devs = json_array();
    int n = ada_cuda_device_count();
    for (int i = 0; i < n; i++) {
        struct cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
        int sm_clock_khz = 0, mem_clock_khz = 0, bus_width = 0;
        cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, i);
        cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, i);
        cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, i);
        json_t *d = json_object();
        json_object_set_new(d, "index", json_integer(i));
        json_object_set_new(d, "name", json_string(p.name));
        snprintf(buf, sizeof buf, "sm_%d%d", p.major, p.minor);
        json_object_set_new(d, "arch", json_string(buf));
        json_object_set_new(d, "sm_count", json_integer(p.multiProcessorCount));
        json_object_set_new(d, "l2_bytes", json_integer(p.l2CacheSize));
        json_object_set_new(d, "memory_bytes", json_integer((json_int_t)p.totalGlobalMem));
        json_object_set_new(d, "max_sm_clock_mhz", json_integer(sm_clock_khz / 1000));
        json_object_set_new(d, "max_mem_clock_mhz", json_integer(mem_clock_khz / 1000));
        json_object_set_new(d, "memory_bus_bits", json_integer(bus_width));
        json_array_append_new(devs, d);
    }
    json_object_set_new(o, "devices", devs);
    if (n == 0) json_object_set_new(o, "note", json_string("no CUDA device"));
#else
    json_object_set_new(o, "devices", json_array());
    json_object_set_new(o, "note", json_string("GPU kernels not built (no CUDA toolkit)"));
#endif
    return o;
}

json_t *ada_sysinfo(void)
{
    json_t *o = json_object();
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    json_object_set_new(o, "host", json_string(host));
    json_object_set_new(o, "adaload_version", json_string(ADALOAD_VERSION));
    json_object_set_new(o, "cuda", cuda_info());

    json_t *blas = json_object();
    json_object_set_new(blas, "config", json_string(openblas_get_config()));
    json_object_set_new(blas, "corename", json_string(openblas_get_corename()));
    json_object_set_new(blas, "version", json_string(ADALOAD_OPENBLAS_VERSION));
    json_object_set_new(o, "openblas", blas);

    json_t *libs = json_object();
    json_object_set_new(libs, "jansson", json_string(JANSSON_VERSION));
    json_object_set_new(libs, "google_benchmark", json_string(ADALOAD_GBENCH_VERSION));
    json_object_set_new(libs, "criterion", json_string(ADALOAD_CRITERION_VERSION));
    json_object_set_new(o, "libraries", libs);

    json_t *b = json_object();
    json_object_set_new(b, "have_cuda", json_boolean(ADALOAD_HAVE_CUDA));
    json_object_set_new(b, "cuda_architectures", json_string(ADALOAD_CUDA_ARCHS));
    json_object_set_new(b, "nvcc_version", json_string(ADALOAD_CUDA_COMPILER_VERSION));
    json_object_set_new(b, "c_compiler", json_string(ADALOAD_C_COMPILER));
    json_object_set_new(b, "build_type", json_string(ADALOAD_BUILD_TYPE));
    json_object_set_new(b, "sanitized", json_boolean(ADALOAD_SANITIZED));
    json_object_set_new(b, "slow_variant_build", json_boolean(ADALOAD_SLOW_VARIANT_BUILD));
    json_object_set_new(b, "kernel_hash_v1", json_string(ADALOAD_KERNEL_HASH));
    json_object_set_new(b, "kernel_hash_v2", json_string(ADALOAD_KERNEL_HASH_V2));
    json_object_set_new(o, "build", b);
    return o;
}
