// res_dtile.cu -- placeholder until the dtile forward is written: takes nothing.
#include "res_common.cuh"
#include "res_variants.h"

namespace res_detail {
int res_fwd_dtile_takes(const lnmod_res_desc *, const lnmod_res_fwd_in *, const lnmod_res_fwd_out *) { return 0; }
lnmod_status res_fwd_dtile(const lnmod_res_desc *, const lnmod_res_fwd_in *, const lnmod_res_fwd_out *, cudaStream_t)
{
    return LNMOD_ERR_UNSUPPORTED;
}
} // namespace res_detail
