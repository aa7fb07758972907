#!/usr/bin/env bash
# build.sh [OUT_DIR] -- builds resbench HERE (no GPU needed; the device machine runs the
# result): OUT_DIR (default build-res/ at the repository root, ignored by git) gets
#   resbench      the harness, sm_90, CUDA runtime, OpenBLAS and jansson linked statically
#                 (the device machine has the driver, glibc and libstdc++ only)
#   resbench.xz   the same compressed: what device.sh unpacks (the device call carries it)
#   ptxas.txt     registers / spills / stack of every kernel of this experiment
# Every compile nice -n 10, at most 2 at a time (RES_JOBS), warnings as errors (nvcc:
# --Werror all-warnings), and then resbench --self-test and --model-test run here (no GPU).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-$root/build-res}
jobs=${RES_JOBS:-2}
mkdir -p "$out/obj"
export PATH=/usr/local/cuda/bin:$PATH
K=$root/kernels P=$root/kernels/pending R=$root/reference V=$root/verify
o=$out/obj
cw=(-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wvla)
# shellcheck disable=SC2054 # the commas belong to -Xcompiler's one argument
nv=(nice -n 10 nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -Xcompiler=-Wall,-Wextra,-Werror --Werror all-warnings
    -I"$K" -I"$P" -I"$R" -I"$V" -I"$here")
read -r -a blas_inc <<<"$(pkg-config --cflags openblas)"

pids=()
names=()
# spawn NAME CMD...: runs CMD in the background (output into $o/NAME.log), at most $jobs at once.
spawn() {
  local name=$1; shift
  "$@" >"$o/$name.log" 2>&1 &
  pids+=($!)
  names+=("$name")
  if [ "${#pids[@]}" -ge "$jobs" ]; then reap_one; fi
}
reap_one() {
  if ! wait "${pids[0]}"; then
    echo "build.sh: ${names[0]} failed:" >&2
    grep -vE '^ptxas info|^    [0-9]+ bytes stack' "$o/${names[0]}.log" | head -30 >&2
    exit 1
  fi
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
}

spawn lnmod_desc nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -I"$K" -c "$K/lnmod_desc.c" -o "$o/lnmod_desc.o"
spawn lnmod_res_desc nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -I"$K" -c "$P/lnmod_res_desc.c" -o "$o/lnmod_res_desc.o"
for f in ref_lnmod ref_convert ref_lnmod_res; do
  spawn "$f" nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -ffp-contract=off -fno-fast-math "${blas_inc[@]}" -I"$K" -I"$P" \
    -c "$R/$f.c" -o "$o/$f.o"
done
spawn verify_check nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -D_POSIX_C_SOURCE=200809L -I"$K" -I"$R" \
  -c "$V/verify_check.c" -o "$o/verify_check.o"
for f in verify_model_res verify_par; do
  spawn "$f" nice -n 10 gcc -std=c11 -O2 "${cw[@]}" -ffp-contract=off -D_POSIX_C_SOURCE=200809L -I"$K" -I"$P" -I"$R" \
    -c "$V/$f.c" -o "$o/$f.o"
done
for f in res_check res_inputs res_shapes res_model_test; do
  spawn "$f" nice -n 10 g++ -std=c++17 -O2 -Wall -Wextra -Werror -Wshadow -I"$K" -I"$P" -I"$R" -I"$V" -I"$here" \
    -c "$here/$f.cc" -o "$o/$f.o"
done
for f in res_common res_naive res_dtile res_dtile_bwd res_api res_plan_test res_bench; do
  spawn "$f" "${nv[@]}" -Xptxas -v -c "$here/$f.cu" -o "$o/$f.o"
done
while [ "${#pids[@]}" -gt 0 ]; do reap_one; done
# Registers, spills and stack of every kernel (demangled names).
for f in res_common res_naive res_dtile res_dtile_bwd; do
  { grep -E "Compiling entry|registers|spill|stack frame" "$o/$f.log" || true; } | sed 's/ptxas info    : //' | c++filt
done >"$out/ptxas.txt"
if grep -E '[1-9][0-9]* bytes spill' "$out/ptxas.txt"; then echo "build.sh: a kernel spills (ptxas.txt)" >&2; fi

lib=/usr/lib/x86_64-linux-gnu
nice -n 10 nvcc -arch=sm_90 -o "$out/resbench" "$o"/res_*.o "$o"/lnmod_desc.o "$o"/lnmod_res_desc.o "$o"/ref_*.o \
  "$o"/verify_check.o "$o"/verify_model_res.o "$o"/verify_par.o "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a" -cudart static -lpthread -lm
strip "$out/resbench"
nice -n 10 xz -T2 -6 -kf "$out/resbench"
ls -la "$out/resbench" "$out/resbench.xz"
# The shared libraries it still needs: glibc, libstdc++ and libgcc only (the device has them).
ldd "$out/resbench" | awk '{print "  " $1}'
"$out/resbench" --plan-test
"$out/resbench" --self-test --threads 2
"$out/resbench" --model-test --threads 2
