// lnmod_fwd_dtile.cu -- placeholder
