/* adaload_variant.h -- the plug-in ABI of adaload, version 1: your own LayerNorm-Modulate
 * kernel, verified and benchmarked by adaload without editing it.
 *
 * A plug-in is a shared library (a CUDA .so built by you) that exports ONE function,
 * adaload_plugin_query, returning a table of its variants. `adaload verify|bench --plugin
 * LIB.so` loads it (plugin/ada_plugin.h is the loader), and each variant then runs through
 * exactly what the built-in variants run through: verify's grid, poisoned outputs, guard
 * bands, tolerances, the backward's determinism check, compute-sanitizer, bench's timing
 * method and copy ceiling. A variant called "rowblock" appears everywhere (records,
 * benchmark names, reports) as "plugin:rowblock"; the run's meta.json and the verification
 * record name the library by path and the SHA-256 of its file ("plugins").
 *
 * Build it against this header and kernels/lnmod_desc.h (the descriptor and the statuses):
 *   nvcc -shared -Xcompiler -fPIC -I adaload/kernels -I adaload/kernels/plugin my.cu -o my.so
 * (kernels/plugin/example/ is a complete one, built by CMake.)
 *
 *   #include "adaload_variant.h"
 *   static lnmod_status fwd(const char *variant, const lnmod_desc *d, const void *x,
 *                           const void *scale, const void *shift, void *y, float *mean,
 *                           float *rstd, cudaStream_t stream)
 *   {   ... launch on stream ...; return cudaGetLastError() ? LNMOD_ERR_CUDA : LNMOD_OK; }
 *   static const adaload_variant vs[] = {{.name = "mine", .description = "one line",
 *                                         .forward = fwd}};
 *   static const adaload_plugin table = {ADALOAD_VARIANT_ABI_VERSION, sizeof(adaload_variant),
 *                                        sizeof(lnmod_desc), "my kernels", 1, vs};
 *   ADALOAD_PLUGIN_EXPORT const adaload_plugin *adaload_plugin_query(uint32_t host_abi)
 *   {   return host_abi == ADALOAD_VARIANT_ABI_VERSION ? &table : NULL; }
 *
 * The contract of each entry point:
 * - forward: the arguments of lnmod_forward (kernels/lnmod.h), the first being the variant's
 *   own name (without "plugin:"), so one function may serve several variants. adaload calls
 *   it only after lnmod_desc_validate(d) passed, x, scale, shift and y are non-NULL device
 *   pointers and supports(d) said yes; mean and rstd are NULL or [rows] fp32 outputs. The
 *   op, layouts, strides and dtypes are lnmod_desc.h's; the tolerances are verify's
 *   (README "Tolerances"). The launch is asynchronous on stream; return LNMOD_OK, or
 *   LNMOD_ERR_CUDA when the launch failed (another lnmod_status where it applies). Any
 *   value that is not an lnmod_status of the adaload build is reported as "unknown status N"
 *   and the case fails.
 * - supports (optional, NULL = every valid descriptor): non-zero when the variant handles d.
 *   Verify records a descriptor it refuses as a failed case: a variant is checked over the
 *   whole grid (say so in the description when it is meant for a subset).
 * - backward_workspace and backward (optional, both or neither): the arguments of
 *   lnmod_backward_workspace and lnmod_backward of the backward's API (dx, dscale and dshift
 *   overwritten, with the modulation strides; accumulation order a function of d alone, so
 *   two launches are bit-identical; the workspace is device memory of at least the queried
 *   bytes, 16-byte aligned, content undefined on entry, NULL when 0 bytes).
 * - every call returns; adaload never frees what the plug-in allocated and never unloads a
 *   library while its variants run. Names: 1 to 40 characters of [A-Za-z0-9_.-], unique in
 *   everything loaded in one run (two plug-ins may not both have "mine").
 *
 * What adaload refuses at load time, with a message naming the library (exit 2):
 * a file that cannot be opened or is not a loadable library; no adaload_plugin_query; a
 * query returning NULL or a table of another abi_version, variant_size or desc_size (built
 * against another version of this header or of lnmod_desc.h); no variants or more than
 * ADALOAD_PLUGIN_MAX_VARIANTS; a variant without a name, with a bad or duplicate name,
 * without forward, or with only half a backward.
 * A plug-in that crashes the process (a segfault in its host code, an abort) is reported
 * by the supervising adaload process (README "Verify and benchmark your own kernel"); one
 * that writes out of bounds or leaves the device context broken fails its cases like any
 * variant (guard bands, memcheck, "context lost").
 *
 * Version rule: ADALOAD_VARIANT_ABI_VERSION changes whenever this header's structures or
 * function types, or lnmod_desc's layout, change in a way an old plug-in cannot serve; a
 * plug-in built for another version is refused, never called.
 */
#ifndef ADALOAD_VARIANT_H
#define ADALOAD_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#include "lnmod_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA runtime's stream type, spelled as cuda_runtime_api.h spells it (an identical
 * typedef may be repeated), so the loader builds without the CUDA toolkit. */
struct CUstream_st;
typedef struct CUstream_st *cudaStream_t;

#define ADALOAD_VARIANT_ABI_VERSION 1u
#define ADALOAD_PLUGIN_MAX_VARIANTS 16
#define ADALOAD_PLUGIN_NAME_MAX 40
/* The name of the one exported symbol. */
#define ADALOAD_PLUGIN_QUERY_SYMBOL "adaload_plugin_query"

#ifdef __cplusplus
#define ADALOAD_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define ADALOAD_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

typedef lnmod_status (*adaload_forward_fn)(const char *variant, const lnmod_desc *d, const void *x,
                                           const void *scale, const void *shift, void *y, float *mean,
                                           float *rstd, cudaStream_t stream);
typedef lnmod_status (*adaload_backward_workspace_fn)(const char *variant, const lnmod_desc *d, size_t *bytes);
typedef lnmod_status (*adaload_backward_fn)(const char *variant, const lnmod_desc *d, const void *x,
                                            const void *scale, const void *dy, const float *mean,
                                            const float *rstd, void *dx, void *dscale, void *dshift,
                                            void *workspace, size_t workspace_bytes, cudaStream_t stream);

typedef struct {
    const char *name;        /* [A-Za-z0-9_.-]{1,40}; shown as "plugin:<name>" */
    const char *description; /* one line, or NULL */
    int (*supports)(const lnmod_desc *d);              /* NULL: every valid descriptor */
    adaload_forward_fn forward;                        /* required */
    adaload_backward_workspace_fn backward_workspace;  /* optional, with backward */
    adaload_backward_fn backward;                      /* optional, with backward_workspace */
} adaload_variant;

typedef struct {
    uint32_t abi_version;   /* ADALOAD_VARIANT_ABI_VERSION the library was built with */
    uint32_t variant_size;  /* sizeof(adaload_variant) */
    uint32_t desc_size;     /* sizeof(lnmod_desc) */
    const char *library;    /* a name for messages, or NULL */
    int32_t nvariants;      /* 1..ADALOAD_PLUGIN_MAX_VARIANTS */
    const adaload_variant *variants;
} adaload_plugin;

/* The exported function: the table for host ABI version host_abi, or NULL when the library
 * cannot serve that version. The table must stay valid while the library is loaded. */
typedef const adaload_plugin *(*adaload_plugin_query_fn)(uint32_t host_abi);

#ifdef __cplusplus
}
#endif
#endif
