// lnmod_registry.cu -- placeholder registry (filled by the kernels work).
#include <string.h>
#include "lnmod.h"
extern "C" const lnmod_variant lnmod_variants[] = {{NULL, NULL, NULL, NULL, NULL}};
extern "C" const lnmod_variant *lnmod_find_variant(const char *name)
{
    for (const lnmod_variant *v = lnmod_variants; v->name; v++)
        if (name && !strcmp(v->name, name)) return v;
    return NULL;
}
extern "C" lnmod_status lnmod_forward(const char *variant, const lnmod_desc *d, const void *, const void *,
                                      const void *, void *, float *, float *, cudaStream_t)
{
    lnmod_status st = lnmod_desc_validate(d);
    if (st != LNMOD_OK) return st;
    return lnmod_find_variant(variant) ? LNMOD_OK : LNMOD_ERR_UNKNOWN_VARIANT;
}
