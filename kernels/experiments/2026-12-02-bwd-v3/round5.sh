#!/usr/bin/env bash
# round5.sh -- round 5 of bwd-v3 in one device call (README "Round 5"). Carried builds, each
# .devbundle/adaload-<tag>.xz built from main + a patch of this folder:
#   finw  explore-fin-warps.patch      fin16  explore-fin-warps16.patch
#   shape explore-bulk-shape.patch     res    finw + shape + ../2026-12-02-res/integration.patch
# 1. the finalize: base, finw, fin16 and res (= finw + shape) at the bar's shapes (per sample and
#    per frame, D 1536/3072/5120, 32,760 and 75,600 rows), each experiment build's quick check
#    first; Nsight Compute of fin16's finalize at sample D1536 (finw's is round4/finw-ncu.txt);
# 2. the fused residual op's GPU runner on a GPU for the first time: verify --op lnmod_res, quick;
# 3. the row shape: base, shape and res on the sweep's widths the rule changes, beside controls.
# Out: fin.log fin/explore.tgz fin/ncu.txt res-verify.log shape.log explore.tgz ncu.txt
# Run: run(command="kernels/experiments/2026-12-02-bwd-v3/round5.sh", carry=[.devbundle/adaload.xz,
#      lib.tar.xz, git.env, adaload-{finw,fin16,shape,res}.xz], timeout_s=540)
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
out=${OUT:-/tmp/adaload-out}; mkdir -p "$out/fin"
b=lnmod_bwd/dtile/bf16-f32-bf16/sample/D1536/rows32760
EXPLORE_TAGS="base finw fin16 res" \
EXPLORE_FILTER='^lnmod_bwd/dtile/bf16-f32-bf16/(sample|frame)/D(1536|3072|5120)/rows(32760|75600)$' \
EXPLORE_NCU="fin16:bwd_fin_kernel:$b" ci/device_explore.sh >"$out/fin.log" 2>&1
echo "explore 1 rc=$?" >>"$out/fin.log"
mv "$out/explore.tgz" "$out/ncu.txt" "$out/fin/"
. ci/device_env.sh
timeout 100 .devbundle/adaload-res verify --op lnmod_res --grid quick >"$out/res-verify.log" 2>&1
echo "verify --op lnmod_res rc=$?" >>"$out/res-verify.log"
EXPLORE_TAGS="base shape res" EXPLORE_VERIFY=0 EXPLORE_SET=sweep \
EXPLORE_FILTER='^lnmod_bwd/dtile/bf16-f32-bf16/sample/D(1536|1664|1792|1920|2048|3072|3200|3328|3584|3840|4096|5120)/rows32760$' \
ci/device_explore.sh >"$out/shape.log" 2>&1
echo "explore 2 rc=$?" >>"$out/shape.log"
