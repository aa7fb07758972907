#!/usr/bin/env bash
# round2.sh -- the ticket order's second device call (2026-12-06), from the repository root.
# Round 1 timed the counter's per-call cudaMallocAsync/memset/cudaFreeAsync with the kernel (the
# bench's events sit around the whole call): 1.04-1.42x slower, noise between rounds. Round 2's
# build (kernel sources 87df7c5a) takes the counter from a module global that each launch's last
# CTA leaves zeroed: no host call but the launch. Carry: .devbundle/adaload.xz (that build),
# .devbundle/adaload-base.xz (res-chunk-v2, fe1de37's kernels 39a1f906), lib.tar.xz, git.env.
#   1. ../2026-12-05-res-chunk/device.sh with RC_NEW = round 2's build, RC_BASE = v2: the fused
#      op's full grid on dtile (consecutive launches on one counter: a counter not left zeroed
#      loses the next call's chunks), racecheck and memcheck, A/B rounds base new base new;
#   2. the verdict by the rule written before (README): decide.sh --mean 0.98 --sweep-max 1.005.
set -uo pipefail
o=${OUT:?}
tmp=$(mktemp -d)
RC_NEW=.devbundle/adaload.xz RC_BASE=.devbundle/adaload-base.xz OUT=$tmp \
  kernels/experiments/2026-12-05-res-chunk/device.sh >"$tmp/device.log" 2>&1
rc=$?
tar -C "$tmp" -czf "$o/ab.tgz" --exclude=ab.tgz .
grep -E 'rc=|SUMMARY|^== .* compare|^lnmod_res_fwd|^new|^base|^NVIDIA|^[0-9]+ slower|passed' "$tmp/device.log" | sed 's/   */ /g' | sed 's/lnmod_res_fwd.dtile.f32-bf16-f32-bf16.sample.//' | cut -c1-100
echo "device.sh rc=$rc"
[ "$rc" = 0 ] || exit 1
kernels/experiments/2026-12-05-res-chunk/decide.sh --mean 0.98 --sweep-max 1.005 "$tmp/device.log"
echo "decide rc=$? (0: the ticket order gains by the rule; 1: it does not)"
