#!/usr/bin/env bash
# emu.sh TREE BUILD [SUITES] -- the fused op's dtile kernels of TREE run from their own source on
# the CPU and judged by the verifier (emu_res.cc): `emu_res fwd` (the general forward), `emu_res
# bwd` (the bulk-ring backward at the modulate and affine sites, with its finalize and the
# library's plans) and `emu_res chunk` (the chunk ring's forward, lnmod_res_fwd_chunk.cuh: every
# set in five schedules of its bulk copies, at every phase of r and y). emu_prep.py rewrites the
# sources g++ cannot take (inline PTX, launches) into BUILD/emu-res/inc; the CPU libraries come
# from BUILD (a configured build of TREE: ada_verify, ada_verify_grid, ada_reference,
# lnmod_res_desc, lnmod_desc, ada_common are built here). Then each suite with its planted bugs,
# which must fail it: LNMOD_RES_FWD_PLANT_MERGE (every warp's count taken as full) for fwd;
# LNMOD_RES_BULK_PLANT_SHARE (a group's rows spaced 1 apart, not cpg) and EMU_PLANT_AFFINE_FIN
# (the affine dweight/dbias finalized per gate row, as under MODULATE) for bwd; FV2_EMU_PLANT_RCEDGE
# (h's whole 16-byte superset stored in bulk), _RCRING (a stage refilled before its store read
# it), _RCBAR (chunk k-1 stored before the barrier that completes it), _RCRUN (a chunk crossing
# a run of the map takes its first row's modulation), _RCTICK (CTA 1 drops every other ticket
# claim: caught only where the CTAs' claims interleave), _RCRESET (the counter not zeroed by the
# launch's last CTA) for chunk.
# SUITES: a subset of "fwd bwd chunk" (default all three). Exit 0: the suites passed and every
# planted bug of them was caught. ~4-6 min on 2 cores for fwd and bwd; chunk ~? min.
set -euo pipefail
[ $# -eq 2 ] || [ $# -eq 3 ] || { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
suites=${3:-fwd bwd chunk}
tree=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
fv2=$here/../../2026-12-02-fwd-v2
K=$tree/kernels
[ -f "$K/lnmod_res_fwd_gen.cuh" ] || { echo "emu.sh: $K has no lnmod_res_fwd_gen.cuh (apply res-v3.patch)" >&2; exit 2; }
out=$build/emu-res
rm -rf "$out/inc"
python3 "$here/emu_prep.py" "$tree" "$out/inc"
cmake --build "$build" -j2 --target ada_verify ada_verify_grid ada_reference lnmod_res_desc lnmod_desc ada_common >/dev/null
libs=("$build/verify/libada_verify.a" "$build/verify/libada_verify_grid.a" "$build/reference/libada_reference.a"
      "$build/kernels/liblnmod_res_desc.a" "$build/kernels/liblnmod_desc.a" "$build/common/libada_common.a")
lib=/usr/lib/x86_64-linux-gnu
declare -A plants=([fwd]="LNMOD_RES_FWD_PLANT_MERGE" [bwd]="LNMOD_RES_BULK_PLANT_SHARE EMU_PLANT_AFFINE_FIN"
                   [chunk]="FV2_EMU_PLANT_RCEDGE FV2_EMU_PLANT_RCRING FV2_EMU_PLANT_RCBAR FV2_EMU_PLANT_RCRUN FV2_EMU_PLANT_RCTICK FV2_EMU_PLANT_RCRESET")
build_list=("")
for suite in $suites; do
  [ -n "${plants[$suite]+x}" ] || { echo "emu.sh: no suite $suite (fwd, bwd, chunk)" >&2; exit 2; }
  for p in ${plants[$suite]}; do build_list+=("$p"); done
done
compile() {
  local plant=$1
  g++ -std=c++17 -O1 -Wall -Wextra -Werror -Wno-unknown-pragmas -DFV2_EMU ${plant:+-D$plant=1} \
    -I/usr/local/cuda/include -I"$out/inc" -I"$fv2" -I"$K" -I"$tree/verify" -I"$tree/reference" -I"$tree/common" \
    "$here/emu_res.cc" -Wl,--start-group "${libs[@]}" -Wl,--end-group \
    "$lib/openblas-pthread/libopenblas.a" "$lib/libjansson.a" -lpthread -lm -lgfortran -o "$out/emu_res${plant:+_$plant}"
}
pids=()
for plant in "${build_list[@]}"; do # two compilers at a time
  compile "$plant" & pids+=($!)
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}" || exit 3; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || exit 3; done
rc=0
for suite in $suites; do
  "$out/emu_res" "$suite" >"$out/emu_res_$suite.out" 2>&1 || rc=1
  grep -m5 'FAIL\|did not run' "$out/emu_res_$suite.out" || true
  tail -1 "$out/emu_res_$suite.out"
  for plant in ${plants[$suite]}; do
    if "$out/emu_res_$plant" "$suite" >"$out/emu_res_$plant.out" 2>&1; then
      echo "emu.sh: emu_res $suite passed with the planted bug $plant: it cannot catch it" >&2
      rc=1
    else
      echo "planted bug $plant: caught ($(tail -1 "$out/emu_res_$plant.out"))"
    fi
  done
done
exit $rc
