#!/usr/bin/env bash
# ci/test_device_run.sh ADALOAD -- ci/device_run.sh's bench-bwd and bench-res plans, checked without a GPU:
# --dry-run prints its two bench steps, and each step's filter, given to this build's
# adaload here (no GPU: every selected benchmark is listed as skipped, exit 77), selects
# exactly the bar shapes of issue 18 -- bf16, fp32 modulation, D 1536/3072/5120, rows 32,760
# and 75,600 (and per sample two 32,760-row samples in one call); per sample in the peers' step, per token and per frame in the other -- in both
# directions for every variant, each with its copy ceiling, and nothing else. And MODE aa's
# plan (issue 17's GPU A/A check): both leases run the same bench step, which selects every
# forward kernel benchmark of the wan set with its copy ceiling and nothing else; the second
# lease then compares the first lease's run with its own (pair and --history); a first-lease
# run that is not a bench run folder under results/ is refused (exit 2). And MODE e2e and
# MODE e2e-ddp, MODE ncu's profiler plan, and MODE sweep's same-lease baseline (below).
set -uo pipefail
ada=$1
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
plan=$("$root/ci/device_run.sh" --dry-run bench-bwd) || fail "--dry-run exited $?"
echo "$plan"
[ "$(grep -c '^adaload bench ' <<<"$plan")" = 2 ] || fail "want 2 bench steps"
grep -q -- '--with-peers' <<<"$(grep '^adaload bench ' <<<"$plan" | head -1)" || fail "step 1 has no peers"
"$root/ci/device_run.sh" --dry-run verify >/dev/null 2>&1 && fail "--dry-run of another mode must be refused"
nvar=$(grep -c . <<<"$("$ada" verify --list 2>/dev/null | grep -E '^(naive|row_per_warp|dtile)\b' || true)")
[ "$nvar" -gt 0 ] || nvar=3  # a build without kernels names the three shipped variants
k=0
while read -r line; do
  k=$((k + 1))
  eval "set -- ${line#adaload }"
  "$ada" "$@" --out "$tmp/run$k" >"$tmp/out$k" 2>&1
  rc=$?
  [ "$rc" = 77 ] || { cat "$tmp/out$k"; fail "step $k: exit $rc (want 77: no GPU here)"; }
  sel=$(sed -n 's/^skipped ([^)]*): //p' "$tmp/out$k")
  layouts=$([ "$k" = 1 ] && echo sample || echo '(token|frame)')
  shapes=$([ "$k" = 1 ] && echo 9 || echo 12)
  for dir in fwd bwd; do
    got=$(grep -cE "^lnmod_$dir/[a-z_]+/bf16-f32-bf16/$layouts/D(1536|3072|5120)/rows(32760|75600|65520/B2)\$" <<<"$sel")
    [ "$got" = $((shapes * nvar)) ] || fail "step $k: $got lnmod_$dir benchmarks, want $((shapes * nvar))"
  done
  other=$(grep -vE '^(lnmod_(fwd|bwd)/|copy/bytes[0-9]+$)' <<<"$sel" || true)
  [ -z "$other" ] || fail "step $k selects more: $other"
  # One copy ceiling per distinct byte count of the selected benchmarks (two shapes of the
  # same bytes share one: D1536 at 2 x 32,760 rows and D3072 at 32,760 rows).
  filt=""; prev=""
  for x in "$@"; do [ "$prev" = --filter ] && filt=$x; prev=$x; done
  want=$("$ada" bench --list-shapes --set wan | python3 -c '
import json, re, sys
pat = re.compile(sys.argv[1])
names = set()
for s in json.load(sys.stdin):
    if pat.search("lnmod_fwd/dtile/" + s["suffix"]): names.add(s["copy_name"])
    if pat.search("lnmod_bwd/dtile/" + s["bwd_suffix"]): names.add(s["bwd_copy_name"])
print(len(names))' "$filt")
  copies=$(grep -c '^copy/' <<<"$sel")
  if [ "$copies" != "$want" ] || [ "$want" -lt "$shapes" ]; then fail "step $k: $copies copy ceilings, want $want"; fi
  [ -e "$tmp/run$k" ] && fail "step $k left a run folder"
done < <(grep '^adaload bench ' <<<"$plan")
echo "device_run bench-bwd plan: ok"

# MODE bench-res (issue 22): the fused op's quick grid of dtile (no record), then one bench
# step, with the peers, whose filter selects exactly the
# fused residual op's 9 bar shapes (site 3, fp32 residual, bf16 branch and out, D 1536/3072/
# 5120, rows 32,760, 75,600 and 2 x 32,760) and the 6 of sites 1 and 2 (the same D, 32,760
# rows), both directions of naive and dtile, and one copy ceiling per distinct byte count of
# them (site 1's bytes are site 3's at one sample: 24 ceilings), nothing else.
plan=$("$root/ci/device_run.sh" --dry-run bench-res) || fail "--dry-run bench-res exited $?"
echo "$plan"
# First the fused op's quick grid of dtile, without a record (a failing kernel build is not timed).
[ "$(grep -c '^adaload verify ' <<<"$plan")" = 1 ] || fail "bench-res: want 1 verify step before the bench"
[ "$(grep -m1 '^adaload ' <<<"$plan")" = "adaload verify --op lnmod_res --grid quick --variant dtile --no-record" ] ||
  fail "bench-res: the first step is not the fused op's quick grid of dtile without a record"
[ "$(grep -c '^adaload bench ' <<<"$plan")" = 1 ] || fail "bench-res: want 1 bench step"
line=$(grep '^adaload bench ' <<<"$plan")
grep -q -- '--with-peers' <<<"$line" || fail "bench-res: no peers"
eval "set -- ${line#adaload }"
"$ada" "$@" --out "$tmp/res" >"$tmp/res.out" 2>&1
rc=$?
[ "$rc" = 77 ] || { cat "$tmp/res.out"; fail "bench-res: exit $rc (want 77: no GPU here)"; }
sel=$(sed -n 's/^skipped ([^)]*): //p' "$tmp/res.out")
for dir in fwd bwd; do
  got=$(grep -cE "^lnmod_res_$dir/(naive|dtile)/f32-bf16-f32-bf16/sample/D(1536|3072|5120)/rows(32760|75600|65520/B2)\$" <<<"$sel")
  [ "$got" = 18 ] || fail "bench-res: $got site-3 lnmod_res_$dir benchmarks, want 18 (9 shapes x naive, dtile)"
  for site in 1 2; do
    got=$(grep -cE "^lnmod_res_$dir/(naive|dtile)/f32-bf16-f32-bf16/sample/site$site/D(1536|3072|5120)/rows32760\$" <<<"$sel")
    [ "$got" = 6 ] || fail "bench-res: $got site-$site lnmod_res_$dir benchmarks, want 6 (3 shapes x naive, dtile)"
  done
done
[ "$(grep -c '^lnmod_res_' <<<"$sel")" = 60 ] || fail "bench-res: $(grep -c '^lnmod_res_' <<<"$sel") benchmarks, want 60"
other=$(grep -vE '^(lnmod_res_(fwd|bwd)/|copy/bytes[0-9]+$)' <<<"$sel" || true)
[ -z "$other" ] || fail "bench-res selects more: $other"
filt=""; prev=""
for x in "$@"; do [ "$prev" = --filter ] && filt=$x; prev=$x; done
want=$("$ada" bench --list-shapes --set wan | python3 -c '
import json, re, sys
pat = re.compile(sys.argv[1])
names = set()
for s in json.load(sys.stdin):
    if pat.search("lnmod_res_fwd/dtile/" + s["suffix"]): names.add(s["copy_name"])
    if pat.search("lnmod_res_bwd/dtile/" + s["bwd_suffix"]): names.add(s["bwd_copy_name"])
print(len(names))' "$filt")
copies=$(grep -c '^copy/' <<<"$sel")
[ "$copies" = "$want" ] && [ "$want" = 24 ] || fail "bench-res: $copies copy ceilings, want $want (24)"
[ -e "$tmp/res" ] && fail "bench-res left a run folder"
echo "device_run bench-res plan: ok"

# MODE plugin: its plan, run here against this build's example plug-ins (a CUDA build puts
# them in <build>/plugins): every step parses, loads its plug-in and, without a GPU, exits 77.
plan=$(PLUGIN_DIR=/p "$root/ci/device_run.sh" --dry-run plugin) || fail "--dry-run plugin exited $?"
echo "$plan"
[ "$(grep -c '^adaload verify .*--plugin /p/libadaload_example_rowblock.so .*--variant plugin:rowblock --variant dtile' <<<"$plan")" = 1 ] ||
  fail "plugin: no verify of rowblock beside dtile"
grep -q '^adaload verify .*--plugin /p/libadaload_example_rowblock_noeps.so' <<<"$plan" || fail "plugin: no planted-bug verify"
grep -q '^adaload bench .*--plugin /p/libadaload_example_rowblock.so .*--peer bench/peers/example_peer.py:lnmod_fp32' <<<"$plan" ||
  fail "plugin: no bench with the example peer"
plugdir=$(dirname "$ada")/plugins
if [ -e "$plugdir/libadaload_example_rowblock.so" ]; then
  k=0
  while read -r line; do
    k=$((k + 1))
    eval "set -- ${line#adaload }"
    extra=(--out "$tmp/p$k")
    grep -q -- --no-record <<<"$line" && extra=()
    "$ada" "$@" "${extra[@]}" >"$tmp/pout$k" 2>&1
    rc=$?
    [ "$rc" = 77 ] || { cat "$tmp/pout$k"; fail "plugin step $k: exit $rc (want 77: no GPU here)"; }
    if [ "$1" = bench ]; then
      for w in lnmod_fwd/plugin:rowblock/ lnmod_bwd/plugin:rowblock/ lnmod_fwd/dtile/ copy/; do
        grep -q "^skipped (.*): $w" "$tmp/pout$k" || fail "plugin bench: selects no $w"
      done
    fi
  done < <(PLUGIN_DIR=$plugdir "$root/ci/device_run.sh" --dry-run plugin | grep -E '^adaload (verify|bench) ')
  echo "device_run plugin plan: ok"
else
  echo "device_run plugin plan: the steps not run ($plugdir has no example plug-in: a build without CUDA)"
fi

aa1=$("$root/ci/device_run.sh" --dry-run aa) || fail "aa --dry-run exited $?"
aa2=$("$root/ci/device_run.sh" --dry-run aa results/nvidia-h200/bench/2026-12-02T010000Z_abcdef0) || fail "aa LEASE1 --dry-run exited $?"
echo "$aa1"; echo "$aa2"
b1=$(grep '^adaload bench ' <<<"$aa1"); b2=$(grep '^adaload bench ' <<<"$aa2")
[ "$(grep -c . <<<"$b1")" = 1 ] && [ "$b1" = "$b2" ] || fail "aa: want one bench step, the same on both leases"
grep -q '^adaload compare' <<<"$aa1" && fail "aa: the first lease has nothing to compare"
grep -qx 'adaload compare results/nvidia-h200/bench/2026-12-02T010000Z_abcdef0 results/\\<gpu\\>/bench/\\<this\\ lease\\'"'"'s\\ run\\>' <<<"$aa2" ||
  fail "aa: the second lease must compare the first lease's run with its own"
grep -q '^adaload compare --history ' <<<"$aa2" || fail "aa: the second lease must judge its run against the history"
"$root/ci/device_run.sh" --dry-run aa /tmp/elsewhere >/dev/null 2>&1
[ $? = 2 ] || fail "aa: a first-lease run outside results/<gpu>/bench/ must be refused (exit 2)"
eval "set -- ${b1#adaload }"
"$ada" "$@" --out "$tmp/aa" >"$tmp/aa.out" 2>&1
rc=$?
[ "$rc" = 77 ] || { cat "$tmp/aa.out"; fail "aa bench: exit $rc (want 77: no GPU here)"; }
sel=$(sed -n 's/^skipped ([^)]*): //p' "$tmp/aa.out")
# The LayerNorm-Modulate shapes of the set (the fused residual op's, "op": "lnmod_res", have
# lnmod_res_fwd names, which the aa filter leaves out).
nshapes=$("$ada" bench --list-shapes --set wan | grep -o '"suffix"' | wc -l)
nres=$("$ada" bench --list-shapes --set wan | grep -o '"op": *"lnmod_res"' | wc -l)
nshapes=$((nshapes - nres))
got=$(grep -cE '^lnmod_fwd/(naive|row_per_warp|dtile)/' <<<"$sel")
[ "$got" = $((nshapes * nvar)) ] || fail "aa bench: $got forward kernel benchmarks, want $((nshapes * nvar))"
other=$(grep -vE '^(lnmod_fwd/(naive|row_per_warp|dtile)/|copy/bytes[0-9]+(/graph[0-9]+)?$)' <<<"$sel" || true)
[ -z "$other" ] || fail "aa bench selects more: $other"
[ "$(grep -c '^copy/' <<<"$sel")" -gt 0 ] || fail "aa bench: no copy ceilings"
[ -e "$tmp/aa" ] && fail "aa bench left a run folder"
echo "device_run aa plan: ok"

# MODE e2e (issue 20, replayed ranks): one replay.py command, run here with --dry-run against
# this build (slice, fake calibration, every plan for real): its plan of work lists every
# configuration at W 2 and 8 with both kernels, and nothing is written under results/.
e2e=$("$root/ci/device_run.sh" --dry-run e2e) || fail "e2e --dry-run exited $?"
echo "$e2e"
line=$(grep '^python3 harness/e2e/replay.py run ' <<<"$e2e")
[ "$(grep -c . <<<"$line")" = 1 ] || fail "e2e: want one replay.py run command"
grep -q -- '--adaload .devbundle/adaload' <<<"$line" || fail "e2e: the command must use the bundle's adaload"
grep -q -- '--budget-s ' <<<"$line" || fail "e2e: the command must bound its time (--budget-s)"
eval "set -- ${line#python3 }"
(cd "$root" && python3 "$@" --dry-run --samples 600 --adaload "$ada" --work "$tmp/e2e" --results "$tmp/e2e-results") >"$tmp/e2e.out" 2>&1 ||
  { cat "$tmp/e2e.out"; fail "e2e: the command's dry run failed"; }
for c in dual verl-kk sort-by-length eqtok-random dual-random; do
  for w in 2 8; do
    for k in torch adaload; do
      grep -qE "^  $c-w$w-$k +$w " "$tmp/e2e.out" || { cat "$tmp/e2e.out"; fail "e2e: no replay of $c at W $w with $k"; }
    done
  done
done
grep -q '^  total estimate ' "$tmp/e2e.out" || fail "e2e: no total estimate"
[ -e "$tmp/e2e-results" ] && fail "e2e: the dry run wrote results"
echo "device_run e2e plan: ok"

# MODE e2e-ddp (issue 23, two GPUs with real DDP): the multicast-off variables exported, one
# ddp.py command, its dry run here against this build (replay.py's plans at W 2 for real): every
# configuration in the replay's and in DDP's plan of work, one two-process torchrun launch per
# kernel carrying every configuration's per-rank folder, nothing under results/; and the real
# mode refuses (exit 77) on a machine without two GPUs, here, before anything runs.
ddp=$("$root/ci/device_run.sh" --dry-run e2e-ddp) || fail "e2e-ddp --dry-run exited $?"
echo "$ddp"
exp=$(grep '^export ' <<<"$ddp")
for v in NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1; do
  grep -qw -- "$v" <<<"$exp" || fail "e2e-ddp: the launcher must export $v"
done
line=$(grep '^python3 harness/e2e/ddp.py run ' <<<"$ddp")
[ "$(grep -c . <<<"$line")" = 1 ] || fail "e2e-ddp: want one ddp.py run command"
grep -q -- '--adaload .devbundle/adaload' <<<"$line" || fail "e2e-ddp: the command must use the bundle's adaload"
grep -q -- '--budget-s ' <<<"$line" || fail "e2e-ddp: the command must bound its time (--budget-s)"
eval "set -- ${line#python3 }"
(cd "$root" && python3 "$@" --dry-run --samples 600 --adaload "$ada" --work "$tmp/ddp" --results "$tmp/ddp-results") >"$tmp/ddp.out" 2>&1 ||
  { cat "$tmp/ddp.out"; fail "e2e-ddp: the command's dry run failed"; }
for c in dual verl-kk sort-by-length eqtok-random dual-random; do
  for k in torch adaload; do
    grep -qE "^  $c-w2-$k +2 " "$tmp/ddp.out" || { cat "$tmp/ddp.out"; fail "e2e-ddp: no one-GPU replay of $c at W 2 with $k"; }
  done
  grep -qE "^  $c +[0-9]+ +[0-9]+ " "$tmp/ddp.out" || { cat "$tmp/ddp.out"; fail "e2e-ddp: $c not in the DDP plan of work"; }
done
grep -q -- '--ranks 2 ' "$tmp/ddp.out" || fail "e2e-ddp: the replay must plan for 2 ranks"
for k in torch adaload; do
  l=$(grep -E "torch\.distributed\.run --standalone --nproc-per-node 2 .*train\.py train --kernel $k " "$tmp/ddp.out")
  [ "$(grep -c . <<<"$l")" = 1 ] || fail "e2e-ddp: want one two-process launch with $k"
  [ "$(grep -o -- '--per-rank [^ ]*/plans/[a-z-]*-w2 ' <<<"$l" | wc -l)" = 5 ] || fail "e2e-ddp: the $k launch must carry the 5 per-rank folders"
done
[ -e "$tmp/ddp-results" ] && fail "e2e-ddp: the dry run wrote results"
# A stand-in nvidia-smi that lists one GPU: the one-GPU kind must be refused too.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "GPU 0: NVIDIA H200 (UUID: GPU-0)"\n' >"$tmp/bin/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi"
msg=$(PATH="$tmp/bin:$PATH" "$root/ci/device_run.sh" e2e-ddp 2>&1); rc=$?
[ "$rc" = 77 ] || { echo "$msg"; fail "e2e-ddp: want exit 77 with one GPU, got $rc"; }
grep -q '1 GPU(s) visible; the experiment needs 2' <<<"$msg" || fail "e2e-ddp: the refusal must say that two GPUs are needed"
echo "device_run e2e-ddp plan: ok"
# MODE ncu: the profiler's plan keeps the clocks (--clock-control none), selects the named
# kernels only, times nothing into results/ (bench --out /tmp/...), and the filter given to
# this build's adaload selects exactly the one benchmark (and its copy); without FILTER and
# KERNEL it is refused (exit 2).
f='lnmod_bwd/dtile/bf16-f32-bf16/sample/D1536/rows32760$'
plan=$("$root/ci/device_run.sh" --dry-run ncu "$f" 'bk_kernel|bwd_fin_kernel') || fail "ncu --dry-run exited $?"
l=$(grep '^ncu ' <<<"$plan")
for want in '--clock-control none ' '--kernel-name regex:bk_kernel\|bwd_fin_kernel ' ' --out /tmp/adaload-ncu-bench' \
            "--repetitions 1 " "--filter lnmod_bwd/dtile/bf16-f32-bf16/sample/D1536/rows32760\\\$ "; do
  grep -qF -- "$want" <<<"$l" || fail "ncu: the plan lacks '$want': $l"
done
grep -q -- '--out results' <<<"$l" && fail "ncu: the profiled bench must not write into results/"
"$ada" bench --filter "$f" --repetitions 1 --out "$tmp/ncu-run" >"$tmp/ncu.out" 2>&1
[ "$(sed -n 's/^skipped ([^)]*): //p' "$tmp/ncu.out" | grep -vc '^copy/')" = 1 ] || { cat "$tmp/ncu.out"; fail "ncu: the filter must select one kernel benchmark"; }
"$root/ci/device_run.sh" --dry-run ncu "$f" >/dev/null 2>&1; [ $? = 2 ] || fail "ncu without KERNEL: want exit 2"
echo "device_run ncu plan: ok"
# MODE sweep: the same-lease A/B/A only with a baseline build; the baseline and this build
# time the same benchmarks (one filter) outside results/, compared A-B and A-A2; and the
# filter, given to this build's adaload, selects dtile's forward at every shape of the sweep
# set with the copies, each a benchmark the sweep's own step selects too.
plan=$(ADALOAD_BASE=$tmp/no-base "$root/ci/device_run.sh" --dry-run sweep) || fail "sweep --dry-run exited $?"
grep -q 'compare' <<<"$plan" && fail "sweep: a compare without a baseline build"
printf '#!/bin/sh\nexit 0\n' >"$tmp/base" && chmod +x "$tmp/base"
plan=$(ADALOAD_BASE=$tmp/base "$root/ci/device_run.sh" --dry-run sweep) || fail "sweep --dry-run exited $?"
echo "$plan"
[ "$(grep -c '^adaload bench --set sweep$' <<<"$plan")" = 1 ] || fail "sweep: want the sweep's own bench step"
bl=$(grep "^$tmp/base bench " <<<"$plan")
[ "$(grep -c . <<<"$bl")" = 2 ] || fail "sweep: want the baseline's bench twice (A/B/A)"
nl=$(grep '^adaload bench --set sweep --filter ' <<<"$plan")
[ "$(grep -c . <<<"$nl")" = 1 ] || fail "sweep: want this build's filtered bench once (A/B/A)"
# the three the same but for --out: the same benchmarks in the same order
strip() { sed -e "s|^$tmp/base ||; s|^adaload ||; s| --out [^ ]*||"; }
[ "$(strip <<<"$bl" | sort -u | grep -c .)" = 1 ] && [ "$(strip <<<"$bl" | head -1)" = "$(strip <<<"$nl")" ] ||
  fail "sweep: the baseline and this build must time the same benchmarks: $bl / $nl"
grep -q -- ' --out /tmp/' <<<"$bl" || fail "sweep: the baseline's bench must write outside results/: $bl"
grep -q -- ' --out /tmp/' <<<"$nl" || fail "sweep: this build's A/B bench must write outside results/: $nl"
grep -qx 'adaload compare /tmp/adaload-base-sweep/A /tmp/adaload-base-sweep/B' <<<"$plan" || fail "sweep: no compare of the baseline with this build"
grep -qx 'adaload compare /tmp/adaload-base-sweep/A /tmp/adaload-base-sweep/A2' <<<"$plan" || fail "sweep: no drift check (the baseline against itself)"
bl=$(head -1 <<<"$bl")
eval "set -- ${bl#"$tmp/base" }"
args=(); prev=""
for a in "$@"; do if [ "$prev" = --out ]; then args+=("$tmp/base-run"); else args+=("$a"); fi; prev=$a; done
"$ada" "${args[@]}" >"$tmp/base.out" 2>&1; rc=$?
[ "$rc" = 77 ] || { cat "$tmp/base.out"; fail "sweep baseline bench: exit $rc (want 77: no GPU here)"; }
# (the sweep's GPU benchmarks: its CPU ones, cpu/..., would run here)
"$ada" bench --set sweep --filter '^(lnmod|copy)' --out "$tmp/sweep-run" >"$tmp/sweep.out" 2>&1; rc=$?
[ "$rc" = 77 ] || { cat "$tmp/sweep.out"; fail "sweep bench: exit $rc (want 77: no GPU here)"; }
sed -n 's/^skipped ([^)]*): //p' "$tmp/base.out" | sort >"$tmp/base.sel"
sed -n 's/^skipped ([^)]*): //p' "$tmp/sweep.out" | sort >"$tmp/sweep.sel"
nb=$(grep -c '^lnmod_fwd/dtile/' "$tmp/base.sel"); ns=$(grep -c '^lnmod_fwd/dtile/' "$tmp/sweep.sel")
[ "$nb" -gt 0 ] && [ "$nb" = "$ns" ] || fail "sweep baseline: $nb dtile forward benchmarks, the sweep has $ns"
[ "$(grep -c '^copy/' "$tmp/base.sel")" -gt 0 ] || fail "sweep baseline: no copy ceiling"
other=$(grep -vE '^(lnmod_fwd/dtile/|copy/)' "$tmp/base.sel" || true)
[ -z "$other" ] || fail "sweep baseline selects more: $(head -3 <<<"$other")"
surplus=$(comm -23 "$tmp/base.sel" "$tmp/sweep.sel")
[ -z "$surplus" ] || fail "sweep baseline: benchmarks the sweep does not time: $(head -3 <<<"$surplus")"
[ -e "$tmp/base-run" ] && fail "sweep baseline left a run folder"
echo "device_run sweep plan: ok"
