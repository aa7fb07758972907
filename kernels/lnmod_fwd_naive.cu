// lnmod_fwd_naive.cu -- placeholder
