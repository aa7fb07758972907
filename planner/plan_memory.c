/* plan_memory.c -- GPU presets: the capacity the planner assumes per GPU, each with its
 * source. What CUDA reports (cudaGetDeviceProperties' totalGlobalMem) is below the marketing
 * figure; where this project has a record of it, that is the preset; elsewhere the datasheet
 * figure is taken as 10^9 bytes per GB, which is below what CUDA reports for those parts
 * (80 GB parts report about 79 GiB = 85e9 bytes), so the plan errs on the safe side.
 */
#include <string.h>

#include "planner.h"

static const plan_gpu gpus[] = {
    {"h200", 150109880320.0,
     "NVIDIA H200 (141 GB HBM3e): totalGlobalMem as CUDA reports it, 150,109,880,320 bytes = "
     "139.80 GiB, recorded by `adaload env` in results/nvidia-h200/*/meta.json"},
    {"h100-80gb", 80e9,
     "NVIDIA H100 SXM/PCIe datasheet: 80 GB, taken as 80e9 bytes (not measured here)"},
    {"a100-80gb", 80e9,
     "NVIDIA A100 datasheet: 80 GB HBM2e, taken as 80e9 bytes (not measured here)"},
    {"a100-40gb", 40e9,
     "NVIDIA A100 datasheet: 40 GB HBM2, taken as 40e9 bytes (not measured here)"},
    {"b200", 180e9,
     "NVIDIA DGX B200 datasheet: 1,440 GB GPU memory for 8 GPUs = 180 GB each, taken as "
     "180e9 bytes (not measured here)"},
};

const plan_gpu *plan_gpu_find(const char *name)
{
    for (size_t i = 0; i < sizeof gpus / sizeof *gpus; i++)
        if (!strcmp(gpus[i].name, name)) return &gpus[i];
    return NULL;
}

const plan_gpu *plan_gpu_at(size_t i)
{
    return i < sizeof gpus / sizeof *gpus ? &gpus[i] : NULL;
}
