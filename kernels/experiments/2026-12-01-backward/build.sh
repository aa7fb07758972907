#!/bin/bash
# build.sh OUT [extra nvcc flags] : bwdcheck linked with the kernels of this tree
set -e
out=$1; shift
K=/work/main/kernels
gcc -std=c11 -O2 -c $K/lnmod_desc.c -o desc.o
nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo "$@" -I$K -o $out bwdcheck.cu $K/lnmod_registry.cu $K/lnmod_fwd_naive.cu $K/lnmod_fwd_row_per_warp.cu $K/lnmod_fwd_dtile.cu $K/lnmod_bwd_naive.cu $K/lnmod_bwd_row_per_warp.cu $K/lnmod_bwd_dtile.cu desc.o -cudart static
