/* test_stub.c -- CPU-only plug-ins for the loader's tests (test_plugin.c), one shared module
 * per STUB_<kind> definition: a good library and one of each defect the loader must refuse.
 * Their "kernels" run on host memory: forward writes 1 + the first x into y[0] (fp32), so a
 * test sees that its call arrived with the variant's own name. Not GPU code, never shipped. */
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "adaload_variant.h"

__attribute__((unused)) static lnmod_status fwd(const char *variant, const lnmod_desc *d, const void *x, const void *scale,
                        const void *shift, void *y, float *mean, float *rstd, cudaStream_t stream)
{
    (void)d, (void)scale, (void)shift, (void)mean, (void)rstd, (void)stream;
    if (strcmp(variant, "alpha") && strcmp(variant, "beta") && strcmp(variant, "gamma")) return LNMOD_ERR_UNKNOWN_VARIANT;
    ((float *)y)[0] = 1.0f + ((const float *)x)[0];
#ifdef STUB_badstatus
    return (lnmod_status)1234;
#else
    return LNMOD_OK;
#endif
}

__attribute__((unused)) static lnmod_status ws(const char *variant, const lnmod_desc *d, size_t *bytes)
{
    (void)variant;
    *bytes = (size_t)(16 * d->D);
    return LNMOD_OK;
}

__attribute__((unused)) static lnmod_status bwd(const char *variant, const lnmod_desc *d, const void *x, const void *scale,
                        const void *dy, const float *mean, const float *rstd, void *dx, void *dscale,
                        void *dshift, void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)variant, (void)d, (void)x, (void)scale, (void)dy, (void)mean, (void)rstd, (void)dscale, (void)dshift;
    (void)workspace, (void)workspace_bytes, (void)stream;
    ((float *)dx)[0] = 7.0f;
    return LNMOD_OK;
}

/* beta handles only D <= 64. */
__attribute__((unused)) static int small_d(const lnmod_desc *d) { return d->D <= 64; }

static const adaload_variant variants[] = {
#if defined(STUB_noname)
    {.name = NULL, .forward = fwd},
#elif defined(STUB_emptyname)
    {.name = "", .forward = fwd},
#elif defined(STUB_badname)
    {.name = "a/b", .forward = fwd},
#elif defined(STUB_dup)
    {.name = "alpha", .forward = fwd},
    {.name = "alpha", .forward = fwd},
#elif defined(STUB_noforward)
    {.name = "alpha"},
#elif defined(STUB_halfbwd)
    {.name = "alpha", .forward = fwd, .backward = bwd},
#elif defined(STUB_other)
    {.name = "gamma", .description = "another library\x1b[2J", .forward = fwd},
    {.name = "alpha", .forward = fwd},
#else
    {.name = "alpha", .description = "forward only", .forward = fwd},
    {.name = "beta", .description = "with a backward, D <= 64", .supports = small_d, .forward = fwd,
     .backward_workspace = ws, .backward = bwd},
#endif
};

__attribute__((unused)) static const adaload_plugin table = {
#ifdef STUB_abi2
    2u,
#else
    ADALOAD_VARIANT_ABI_VERSION,
#endif
#ifdef STUB_size
    sizeof(adaload_variant) + 8,
#else
    sizeof(adaload_variant),
#endif
    sizeof(lnmod_desc), "test stub", (int32_t)(sizeof variants / sizeof variants[0]), variants};

#ifdef STUB_undefined
void adaload_stub_not_defined_anywhere(void);
#endif

#ifdef STUB_noquery
ADALOAD_PLUGIN_EXPORT const adaload_plugin *adaload_plugin_query_misspelled(uint32_t host_abi);
ADALOAD_PLUGIN_EXPORT const adaload_plugin *adaload_plugin_query_misspelled(uint32_t host_abi)
#else
ADALOAD_PLUGIN_EXPORT const adaload_plugin *adaload_plugin_query(uint32_t host_abi);
ADALOAD_PLUGIN_EXPORT const adaload_plugin *adaload_plugin_query(uint32_t host_abi)
#endif
{
#ifdef STUB_crash
    raise(SIGSEGV); /* a plug-in whose host code crashes */
#endif
#ifdef STUB_term
    raise(SIGTERM); /* as if the run were killed from outside while loading */
#endif
#ifdef STUB_undefined
    adaload_stub_not_defined_anywhere();
#endif
#ifdef STUB_nulltable
    return (void)host_abi, (const adaload_plugin *)NULL;
#else
    return host_abi == ADALOAD_VARIANT_ABI_VERSION ? &table : NULL;
#endif
}
