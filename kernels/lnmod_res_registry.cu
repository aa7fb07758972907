// lnmod_res_registry.cu -- the fused residual op's checked entry points (lnmod_res.h) over the
// registry's entries (lnmod_registry.cu: res_forward, res_backward, res_bwd_workspace of
// "naive" and "dtile"; NULL elsewhere).
//
// Each validates on the host before any CUDA call, in this order: the inputs with the
// descriptor (lnmod_res_check_fwd_in / _bwd_in: NULL pointers first, then the descriptor), the
// outputs (lnmod_res_check_fwd_out / _bwd_out), the variant's name (LNMOD_ERR_UNKNOWN_VARIANT),
// whether it has the fused op (LNMOD_ERR_UNSUPPORTED), then the workspace; then it
// launches and maps a launch failure to LNMOD_ERR_CUDA. Nothing prints, nothing exits.
// The two directions' workspaces are checked alike (ws_check); the forward's is state (zero on
// entry, left zero: lnmod_res.h), the backward's scratch.
#include <stdint.h>

#include "lnmod.h"
#include "lnmod_res.h"

// The variant called name with a fused forward (fwd != 0) or backward.
static lnmod_status res_variant(const char *variant, int fwd, const lnmod_variant **out)
{
    const lnmod_variant *v = lnmod_find_variant(variant);
    if (!v) return LNMOD_ERR_UNKNOWN_VARIANT;
    if (fwd ? (!v->res_forward || !v->res_fwd_workspace) : (!v->res_backward || !v->res_bwd_workspace))
        return LNMOD_ERR_UNSUPPORTED;
    *out = v;
    return LNMOD_OK;
}

// A workspace of `need` bytes (-1: overflow) as the caller passed it.
static lnmod_status ws_check(int64_t need, const void *workspace, size_t workspace_bytes)
{
    if (need < 0) return LNMOD_ERR_OVERFLOW;
    if (need == 0) return LNMOD_OK;
    if (!workspace) return LNMOD_ERR_NULL_POINTER;
    if ((uint64_t)workspace_bytes < (uint64_t)need || ((uintptr_t)workspace & 15u) != 0) return LNMOD_ERR_WORKSPACE;
    return LNMOD_OK;
}

// The workspace bytes of one direction (fwd != 0: the forward's).
static lnmod_status ws_bytes(const char *variant, const lnmod_res_desc *d, int fwd, size_t *bytes)
{
    if (!bytes) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = lnmod_res_desc_validate(d);
    if (st != LNMOD_OK) return st;
    const lnmod_variant *v = NULL;
    if ((st = res_variant(variant, fwd, &v)) != LNMOD_OK) return st;
    const int64_t need = fwd ? v->res_fwd_workspace(d) : v->res_bwd_workspace(d);
    if (need < 0) return LNMOD_ERR_OVERFLOW;
    *bytes = (size_t)need;
    return LNMOD_OK;
}

extern "C" lnmod_status lnmod_res_forward_workspace(const char *variant, const lnmod_res_desc *d, size_t *bytes)
{
    return ws_bytes(variant, d, 1, bytes);
}

extern "C" lnmod_status lnmod_res_forward(const char *variant, const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                          const lnmod_res_fwd_out *out, void *workspace, size_t workspace_bytes,
                                          cudaStream_t stream)
{
    lnmod_status st = lnmod_res_check_fwd_in(d, in);
    if (st != LNMOD_OK) return st;
    if ((st = lnmod_res_check_fwd_out(d, out)) != LNMOD_OK) return st;
    const lnmod_variant *v = NULL;
    if ((st = res_variant(variant, 1, &v)) != LNMOD_OK) return st;
    if ((st = ws_check(v->res_fwd_workspace(d), workspace, workspace_bytes)) != LNMOD_OK) return st;
    return v->res_forward(d, in, out, workspace, stream);
}

extern "C" lnmod_status lnmod_res_backward_workspace(const char *variant, const lnmod_res_desc *d, size_t *bytes)
{
    return ws_bytes(variant, d, 0, bytes);
}

extern "C" lnmod_status lnmod_res_backward(const char *variant, const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                                           const lnmod_res_bwd_out *out, void *workspace, size_t workspace_bytes,
                                           cudaStream_t stream)
{
    lnmod_status st = lnmod_res_check_bwd_in(d, in);
    if (st != LNMOD_OK) return st;
    if ((st = lnmod_res_check_bwd_out(d, out)) != LNMOD_OK) return st;
    const lnmod_variant *v = NULL;
    if ((st = res_variant(variant, 0, &v)) != LNMOD_OK) return st;
    if ((st = ws_check(v->res_bwd_workspace(d), workspace, workspace_bytes)) != LNMOD_OK) return st;
    return v->res_backward(d, in, out, workspace, workspace_bytes, stream);
}
