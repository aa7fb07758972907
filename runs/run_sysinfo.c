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
#include <dlfcn.h>

typedef int (*nvml_fn0)(void);
typedef int (*nvml_by_bus_fn)(const char *bus_id, void **device);
typedef int (*nvml_dev_str_fn)(void *device, char *buf, unsigned int n);
typedef int (*nvml_str_fn)(char *buf, unsigned int n);

/* NVML, loaded at run time (never linked: CI machines have no driver): the driver version
 * into o, and each device's serial (where the board reports one) into its object. */
static void nvml_facts(json_t *o, json_t *devs)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    nvml_fn0 init = (nvml_fn0)dlsym(lib, "nvmlInit_v2"), down = (nvml_fn0)dlsym(lib, "nvmlShutdown");
    nvml_by_bus_fn by_bus = (nvml_by_bus_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    nvml_dev_str_fn serial = (nvml_dev_str_fn)dlsym(lib, "nvmlDeviceGetSerial");
    nvml_str_fn driver = (nvml_str_fn)dlsym(lib, "nvmlSystemGetDriverVersion");
    if (init && down && init() == 0) {
        char buf[96];
        if (driver && driver(buf, sizeof buf) == 0) json_object_set_new(o, "driver_version", json_string(buf));
        size_t i;
        json_t *d;
        json_array_foreach(devs, i, d) {
            char bus[64];
            void *h = NULL;
            int idx = (int)json_integer_value(json_object_get(d, "index"));
            if (by_bus && serial && cudaDeviceGetPCIBusId(bus, sizeof bus, idx) == cudaSuccess && by_bus(bus, &h) == 0 &&
                serial(h, buf, sizeof buf) == 0 && buf[0])
                json_object_set_new(d, "serial", json_string(buf));
        }
        down();
    }
    dlclose(lib);
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it. */
static void uuid_text(const unsigned char *u, char *out, size_t n)
{
    snprintf(out, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}
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
        char uuid[64];
        uuid_text((const unsigned char *)p.uuid.bytes, uuid, sizeof uuid);
        json_object_set_new(d, "uuid", json_string(uuid));
        json_array_append_new(devs, d);
    }
    nvml_facts(o, devs);
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
    json_object_set_new(b, "c_flags", json_string(ADALOAD_C_FLAGS));
    json_object_set_new(b, "cuda_flags", json_string(ADALOAD_CUDA_FLAGS));
    json_object_set_new(b, "sanitized", json_boolean(ADALOAD_SANITIZED));
    json_object_set_new(b, "slow_variant_build", json_boolean(ADALOAD_SLOW_VARIANT_BUILD));
    json_object_set_new(b, "kernel_hash_v1", json_string(ADALOAD_KERNEL_HASH));
    json_object_set_new(b, "kernel_hash_v2", json_string(ADALOAD_KERNEL_HASH_V2));
    json_object_set_new(o, "build", b);
    return o;
}
