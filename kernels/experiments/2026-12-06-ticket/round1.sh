#!/usr/bin/env bash
# round1.sh -- the ticket order's first device call (2026-12-06), from the repository root.
# Carry: .devbundle/adaload.xz (the ticket build: res-chunk-v2 + ticket.patch, built in a
# worktree at fe1de37 + the patch), .devbundle/adaload-base.xz (res-chunk-v2's build, fe1de37),
# .devbundle/lib.tar.xz, .devbundle/git.env, kernels/experiments/2026-12-06-stream-probe/probe.
#   1. the stream probe (which card this is, and the four streams' forms on it: on an H200 the
#      answer to the probe's question);
#   2. ../2026-12-05-res-chunk/device.sh with RC_NEW = the ticket build, RC_BASE = v2: the fused
#      op's full grid on dtile, racecheck and memcheck over its sanitizer grid, then A/B rounds
#      base new base new over the wan set's 15 fused shapes and the sweep's 14 widths;
#   3. the verdict by the rule written before the run (README): decide.sh --mean 0.98 --sweep-max 1.005.
set -uo pipefail
o=${OUT:?}
p=kernels/experiments/2026-12-06-stream-probe/probe
if [ -x "$p" ]; then "$p" 21 >"$o/probe.txt" 2>&1; echo "probe rc=$?"; grep -E '^probe:|ticket|oneshot  |persist x1 |blocked|cudaMemcpy  ' "$o/probe.txt" | cut -c1-100; fi
tmp=$(mktemp -d)
RC_NEW=.devbundle/adaload.xz RC_BASE=.devbundle/adaload-base.xz OUT=$tmp \
  kernels/experiments/2026-12-05-res-chunk/device.sh >"$tmp/device.log" 2>&1
rc=$?
tar -C "$tmp" -czf "$o/ab.tgz" --exclude=ab.tgz .
grep -E 'rc=|SUMMARY|^== .* compare|^lnmod_res_fwd|^new|^base|^NVIDIA|^[0-9]+ slower' "$tmp/device.log" | sed 's/   */ /g' | cut -c1-118
echo "device.sh rc=$rc"
[ "$rc" = 0 ] || exit 1
kernels/experiments/2026-12-05-res-chunk/decide.sh --mean 0.98 --sweep-max 1.005 "$tmp/device.log"
echo "decide rc=$? (0: the ticket order gains by the rule; 1: it does not)"
