// lnmod_fwd_row_per_warp.cu -- placeholder
