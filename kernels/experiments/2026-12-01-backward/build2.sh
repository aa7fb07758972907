#!/bin/bash
# build2.sh: common objects once, then one bwdcheck per experiment (only lnmod_bwd_dtile.cu rebuilt)
set -e
K=/work/main/kernels
F="-std=c++17 -O3 -arch=sm_90 -lineinfo -I$K"
mkdir -p obj
gcc -std=c11 -O2 -c $K/lnmod_desc.c -o obj/desc.o
for f in lnmod_registry lnmod_fwd_naive lnmod_fwd_row_per_warp lnmod_fwd_dtile lnmod_bwd_naive lnmod_bwd_row_per_warp; do nvcc $F -c $K/$f.cu -o obj/$f.o & done
nvcc $F -c bwdcheck.cu -o obj/bwdcheck.o &
wait
build() { n=$1; shift; nvcc $F "$@" -c $K/lnmod_bwd_dtile.cu -o obj/bd_$n.o && nvcc -arch=sm_90 -o bwd_$n obj/bwdcheck.o obj/lnmod_*.o obj/desc.o obj/bd_$n.o -cudart static; }
build K2 -DLNMOD_BWD_EXPLORE_K=2 &
build K4 -DLNMOD_BWD_EXPLORE_K=4 &
wait
build K2T640 -DLNMOD_BWD_EXPLORE_K=2 -DLNMOD_BWD_EXPLORE_MAXT=640 &
build K4T640 -DLNMOD_BWD_EXPLORE_K=4 -DLNMOD_BWD_EXPLORE_MAXT=640 &
build K2nofin -DLNMOD_BWD_EXPLORE_K=2 -DLNMOD_BWD_EXPLORE_NO_FINALIZE &
wait
ls -la bwd_*
