// res_api.cu -- kernels/pending/lnmod_res.h's C API over this experiment's variants:
// "naive", "dtile" (forward and backward) and "dtile_bulk" (backward; its forward is dtile's);
// a shape a variant's fused kernel does not take runs the next one (dtile_bulk: dtile's, then
// naive's; res_last_path says which ran). The workspace is naive's layout for all.
// Validation first, as the header says: inputs, outputs, the variant, the workspace.
#include "lnmod_res.h"
#include "res_api_extra.h"
#include "res_variants.h"

#include <cstring>

using namespace res_detail;

namespace {
thread_local int last_path = 0;

int variant_of(const char *v)
{
    if (!v) return -1;
    if (!std::strcmp(v, "naive")) return 0;
    if (!std::strcmp(v, "dtile")) return 1;
    if (!std::strcmp(v, "dtile_bulk")) return 2;
    return -1;
}
} // namespace

extern "C" int res_last_path(void) { return last_path; }

extern "C" lnmod_status lnmod_res_forward(const char *variant, const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                          const lnmod_res_fwd_out *out, cudaStream_t stream)
{
    lnmod_status st = lnmod_res_check_fwd_in(d, in);
    if (st != LNMOD_OK) return st;
    if ((st = lnmod_res_check_fwd_out(d, out)) != LNMOD_OK) return st;
    const int v = variant_of(variant);
    if (v < 0) return LNMOD_ERR_UNKNOWN_VARIANT;
    if (v >= 1 && res_fwd_dtile_takes(d, in, out)) {
        last_path = 1;
        return res_fwd_dtile(d, in, out, stream);
    }
    last_path = 0;
    return res_fwd_naive(d, in, out, stream);
}

extern "C" lnmod_status lnmod_res_backward_workspace(const char *variant, const lnmod_res_desc *d, size_t *bytes)
{
    if (!bytes) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = lnmod_res_desc_validate(d);
    if (st != LNMOD_OK) return st;
    if (variant_of(variant) < 0) return LNMOD_ERR_UNKNOWN_VARIANT;
    const int64_t w = res_bwd_naive_workspace(d);
    if (w < 0) return LNMOD_ERR_OVERFLOW;
    *bytes = (size_t)w;
    return LNMOD_OK;
}

extern "C" lnmod_status lnmod_res_backward(const char *variant, const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                                           const lnmod_res_bwd_out *out, void *workspace, size_t workspace_bytes,
                                           cudaStream_t stream)
{
    lnmod_status st = lnmod_res_check_bwd_in(d, in);
    if (st != LNMOD_OK) return st;
    if ((st = lnmod_res_check_bwd_out(d, out)) != LNMOD_OK) return st;
    size_t need = 0;
    if ((st = lnmod_res_backward_workspace(variant, d, &need)) != LNMOD_OK) return st;
    if (need > 0) {
        if (!workspace) return LNMOD_ERR_NULL_POINTER;
        if (workspace_bytes < need || ((uintptr_t)workspace & 15u)) return LNMOD_ERR_WORKSPACE;
    }
    const int v = variant_of(variant);
    if (v == 2 && res_bwd_bulk_takes(d, in, out)) {
        int ran = 0;
        st = res_bwd_bulk(d, in, out, workspace, stream, &ran);
        if (st != LNMOD_OK || ran) {
            last_path = 2;
            return st;
        }
    }
    if (v >= 1 && res_bwd_dtile_takes(d, in, out)) {
        last_path = 1;
        return res_bwd_dtile(d, in, out, workspace, stream);
    }
    last_path = 0;
    return res_bwd_naive(d, in, out, workspace, stream);
}
