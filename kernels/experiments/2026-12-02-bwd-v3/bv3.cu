// bv3.cu -- bv3_backward (bv3.h): a round-3 candidate, or the built dtile where the candidate
// does not take the shape (info->path 1).
#include "bv3.h"

lnmod_status bv3_backward(int kernel, const lnmod_desc *d, const void *x, const void *scale, const void *dy,
                          const float *mean, const float *rstd, void *dx, void *dscale, void *dshift,
                          void *workspace, size_t workspace_bytes, cudaStream_t stream, bv3_info *info)
{
    bv3_info dummy;
    bv3_info *in = info ? info : &dummy;
    *in = bv3_info{1, 0, 0, 0, 0, 0, 0, 0};
    int ran = 0;
    lnmod_status st = LNMOD_OK;
    if (kernel < BV3_DTILE || kernel > BV3_TOK) return LNMOD_ERR_UNSUPPORTED;
    if (kernel != BV3_DTILE) {
        // The candidates check what lnmod_backward checks only where they differ: validate here.
        if (lnmod_desc_validate(d) != LNMOD_OK || !x || !scale || !dy || !mean || !rstd || !dx || !dscale ||
            !dshift)
            return LNMOD_ERR_UNSUPPORTED;
        size_t need = 0;
        if (lnmod_backward_workspace("dtile", d, &need) != LNMOD_OK || workspace_bytes < need)
            return LNMOD_ERR_WORKSPACE;
        switch (kernel) {
        case BV3_HALF:
            st = bv3_bulk_h1k0(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace, stream, in, &ran);
            break;
        case BV3_K2:
            st = bv3_bulk_h0k1(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace, stream, in, &ran);
            break;
        case BV3_K2HALF:
            st = bv3_bulk_h1k1(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace, stream, in, &ran);
            break;
        default:
            st = bv3_tok_launch(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace, stream, in, &ran);
            break;
        }
        if (st != LNMOD_OK || ran) {
            in->path = 3;
            return st;
        }
    }
    *in = bv3_info{1, 0, 0, 0, 0, 0, 0, 0};
    return lnmod_backward("dtile", d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace, workspace_bytes,
                          stream);
}
