#!/usr/bin/env bash
# ci/device_run.sh MODE -- run on a GPU machine after ci/device_bundle.sh built .devbundle/
# here. Writes run folders under results/<gpu>/<kind>/ (verify, bench, regression-check),
# each added to results/index.jsonl, and packs every new run folder and the index into
# $OUT/results.tgz (ci/pack_runs.sh: at the end, and after each verify-shards step, so that a
# call killed at its time limit keeps the steps that ended -- a run folder left on the device
# loses its meta.json and summary at the next call's copy of the tree; give a call timeout_s
# above VERIFY_BUDGET_S) (the device tool brings $OUT back, at most 8 files: the step logs are packed
# into $OUT/logs.tgz at the end; here, after unpacking, `adaload results
# check` says whether the index agrees, `adaload results index` rebuilds it). The full
# per-case verify.json stays out of git (.gitignore): verify-summary.json is the record.
#   MODE quick  env, verify --grid quick for every variant (forward and backward), bench --set quick
#   MODE verify env, verify --grid smoke (stops here when it fails), then verify --grid full
#               --sanitizers: forward and backward of every variant (--direction both, the
#               default), the sanitizers over both after the grid (the CI gate's record; ~860 s
#               on an H200 since the backward: longer than one device-tool call, use verify-shards)
#   MODE verify-shards N K... the full grid's shards K of N (verify --shard K/N), "san" for the
#               quick grid with --sanitizers: records the gate joins; each step only when
#               the time left allows it (VERIFY_BUDGET_S, default 570); VERIFY_PARALLEL=1 runs them
#               at once, the CPUs split among them
#   MODE bench  the forward: bench --set wan (every shape), bench --set wan --with-peers on the shapes of
#               the speed bar (rows >= 32,760), and the regression check: the slowed build's
#               dtile against two runs of the normal build (adaload compare)
#   MODE sweep  verify --grid quick of dtile's forward (no record; when it fails nothing is
#               timed), then bench --set sweep (the widths of issue 21, forward and backward, with
#               the copy; then the fused op's 14 widths); then, when the call carries a
#               baseline build (.devbundle/adaload-base, `BASE_REV=... ci/device_bundle.sh`;
#               ADALOAD_BASE names another), the A/B/A check in the same lease: dtile's forward
#               over the sweep with the copies (one filter), by the baseline, this build, the
#               baseline again (outside results/: the three come back in logs.tgz as
#               base-sweep.tgz), then `adaload compare` A B into $OUT/sweep-compare.md (the
#               verdict: "the widths fast today lose nothing", judged on this card whatever card
#               the committed baselines were timed on) and A A' into $OUT/sweep-drift.md (the
#               same code twice: what moved there moved without a code change). Both builds
#               time the same benchmarks in the same order: on 2026-12-05 (H100) the odd widths,
#               byte-identical SASS, read 3-5% slower in the full sweep than in the baseline's
#               shorter filtered run of the same lease
#   MODE bench-bwd  the shapes of issue 18's bar (bf16, fp32 modulation, D 1536/3072/5120,
#               rows 32,760 and 75,600, and two 32,760-row samples in one call, where
#               torch.compile's gradients are right), forward and backward of every variant: per sample with
#               the PyTorch peers (eager, torch.compile, Wan's table form, Liger where the
#               carried .whl/liger_kernel-*.whl installs), per token and per frame without;
#               then `adaload report` of each run into $OUT/report-<n>.md
#   MODE bench-res  issue 22's bar shapes of the fused gated residual op (site 3: fp32 residual,
#               bf16 branch and out, per-sample fp32 gate and modulation, D 1536/3072/5120, rows
#               32,760 and 75,600 and two 32,760-row samples in one call) and the block's other
#               two residual sites at the same widths and dtypes, one sample of 32,760 rows
#               (.../sample/site1/... and .../sample/site2/...: 6 shapes): lnmod_res_fwd and
#               lnmod_res_bwd of naive and dtile with their copy ceilings and the PyTorch peers
#               (Wan's chain at each site, eager and torch.compile, each checked against float64
#               first; bench/peers/res_peers.py) in one run folder; then `adaload report` of it
#               into $OUT/report-res.md. ~100-150 s for the 9 site-3 shapes (2026-12-04); sites 1
#               and 2 add an estimated ~50-70 s (6 more shapes, each the size of the smallest of
#               the 9; not yet run): ~150-220 s, one call. First the fused op's quick grid of
#               dtile (verify --op lnmod_res, no record; $OUT/verify-res-quick.log): when it
#               fails nothing is timed
#   MODE plugin  the example plug-in (kernels/plugin/example/rowblock.cu, built by
#               ci/device_bundle.sh into .devbundle/plugins/): verify --grid quick of
#               plugin:rowblock beside dtile (want exit 0, a record), the planted-bug build
#               (eps ignored) over the same grid (want exit 1, its failing cases named in
#               $OUT/verify-noeps.log), then bench --set quick, forward and backward, of
#               plugin:rowblock beside dtile and the copy ceiling, with the example Python peer
#               (bench/peers/example_peer.py: lnmod_fp32 timed, the planted lnmod_no_shift
#               "wrong result"), and `adaload report` of that run into $OUT/report-plugin.md
#   MODE aa [LEASE1_RUN]  the GPU A/A check of issue 17: the same sources timed on two leases.
#               Without LEASE1_RUN (first lease): bench --set wan of the forward kernels and
#               their copies (aa_filter below) into a new run folder. With it (second lease,
#               a fresh machine; LEASE1_RUN = results/<gpu>/bench/<run> that the first call
#               brought back, unpacked here so it travels with the tree): the same bench
#               again, then `adaload compare LEASE1_RUN <new run>` (want: exit 0, 0 slower --
#               environment drift where the fingerprints differ) and `adaload compare
#               --history <new run>`, both into $OUT/aa-compare*.txt. Refuses a LEASE1_RUN
#               of other kernel sources (that is no A/A pair).
#   MODE python-gpu  python/tests/test_torch_gpu.py (ctest python_torch_gpu, which CI cannot run)
#               with .devbundle/libadaload.so: adaload.torch's forward and backward against
#               float64 on the GPU (carry .devbundle/libadaload.so.xz too); then the fused
#               residual op's (issue 22): test_torch_res_gpu.py, and the PyTorch tests CI skips
#               for want of PyTorch: test_torch_res_cpu.py and harness/e2e/test_e2e.py's
#               TinyModelOnCPU (the fused model against the unfused one); log $OUT/python-gpu.log
#   MODE e2e    issue 20's experiment with replayed ranks (harness/e2e/replay.py): calibration,
#               `adaload plan --per-rank` for dual, verl-kk, sort-by-length, equal-token +
#               random and dual + random at W 2 and 8, every rank replayed on this GPU with
#               PyTorch's chain and adaload's kernel (.devbundle/libadaload.so) inside
#               E2E_BUDGET_S (default 420 s; what does not fit is listed as not run; E2E_ARGS:
#               more replay.py options, e.g. "--ranks 8 --steps 2 --repeats 0"; issue 22's
#               fused residual op: "--kernels adaload --fused-residual", then compare with a run
#               of the same plans without it: replay.py compare RUN_A RUN_B), op-bench,
#               one run folder results/<gpu>/e2e/<run>/; its report into $OUT/report-e2e.md
#               and the log into $OUT/e2e.log
#   MODE e2e-ddp  issue 23's experiment on the TWO GPUs of nvidia-h200-x2 (harness/e2e/ddp.py):
#               replay.py --ranks 2 (calibration, the same five plans at W 2, replayed on one
#               GPU, its own run folder), then `torchrun --nproc-per-node 2 train.py train` per
#               kernel: real DDP, each rank its per-rank file, no_sync between the plan's syncs,
#               NCCL with NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
#               NVSHMEM_DISABLE_NVLS=1 exported for every process; inside E2E_DDP_BUDGET_S
#               (default 520 s); both run folders under results/<gpu>-x2/e2e/ (the DDP one
#               with emulated: false).
#               Refuses (exit 77) unless two GPUs are visible. Reports into
#               $OUT/report-e2e-ddp.md and $OUT/report-e2e-replay.md, the log into $OUT/e2e-ddp.log
#   MODE ncu FILTER KERNEL  Nsight Compute over `adaload bench --filter FILTER --repetitions 1`
#               (into /tmp, never results/: times under a profiler are not timings): the
#               launches of the kernels whose names match the regex KERNEL (e.g. bk_kernel,
#               rk_kernel), NCU_COUNT of them (default 2) after NCU_SKIP (default 4: past the
#               warm-up), sections SpeedOfLight, MemoryWorkloadAnalysis, Occupancy, LaunchStats,
#               WarpStateStats, SchedulerStats, with --clock-control none (METHOD.md: the
#               clocks stay as they are); the report into $OUT/ncu.ncu-rep, its details page
#               as text into $OUT/ncu.txt (H200.md: ncu reads the counters on Firecracker only)
# (one call each, inside the device tool's 10-minute limit)
#   ci/device_run.sh --dry-run MODE [ARG]  prints the adaload commands of MODE (bench-bwd, bench-res,
#                                     plugin, aa, ncu, sweep; e2e: the replay.py command; e2e-ddp: the
#                                     exported variables and the ddp.py command; nothing runs;
#                                     PLUGIN_DIR overrides .devbundle/plugins)
# Size: the device tool copies the tracked tree, untracked files not ignored and the carry
# paths, 64 MiB in all, and results/ is most of the tracked tree: before a call whose carry
# would push it over, `ci/device_tree.sh lean [KEEP...]`, after it `ci/device_tree.sh restore`
# (ci/device_tree.sh --help: what stays tracked and which modes need which run folders).
set -uo pipefail
dry=0
[ "${1:-}" = --dry-run ] && { dry=1; shift; }
mode=${1:-quick}
bar='bf16-f32-bf16/%s/D(1536|3072|5120)/rows(32760|75600|65520/B2)$'
# shellcheck disable=SC2059
# The peers of the backward only (their forwards too, for fwd+bwd): Wan's fp32 chain, a
# forward-only peer timed by MODE bench, is left out here to keep the call inside 10 minutes.
peers='torch_eager|torch_compile|torch_eager_table|torch_compile_table|liger'
bwd_sample="^lnmod_(fwd|bwd)/(naive|row_per_warp|dtile|$peers)/$(printf "$bar" sample)"
# shellcheck disable=SC2059
bwd_layouts="^lnmod_(fwd|bwd)/[a-z_]+/$(printf "$bar" '(token|frame)')"
# MODE bench-res: the fused residual op's bar shapes (site 3) and sites 1 and 2 at one
# 32,760-row sample, ours and the peers of its chain.
res_bar='f32-bf16-f32-bf16/sample/(D(1536|3072|5120)/rows(32760|75600|65520/B2)|site[12]/D(1536|3072|5120)/rows32760)$'
res_filter="^lnmod_res_(fwd|bwd)/(naive|dtile|torch_eager|torch_compile)/$res_bar"
plugdir=${PLUGIN_DIR:-.devbundle/plugins}
rowblock=$plugdir/libadaload_example_rowblock.so noeps=$plugdir/libadaload_example_rowblock_noeps.so
plugin_bench='^(lnmod_(fwd|bwd)/(dtile|plugin:rowblock|peer:lnmod_fp32|peer:lnmod_no_shift)|copy)/'
peer=bench/peers/example_peer.py
# The planted bug's verify: its output kept, the cases it failed counted (want > 0).
noeps_step() {
  if [ "$dry" = 1 ]; then step verify --grid quick --no-record --plugin "$noeps" --variant plugin:rowblock; return; fi
  step verify --grid quick --no-record --plugin "$noeps" --variant plugin:rowblock | tee "$out/verify-noeps.log"
  echo "planted bug: $(grep -c ' FAIL' "$out/verify-noeps.log") failing cases named (want > 0, verify rc=1)"
}
# MODE sweep's same-lease baseline: the baseline build's dtile forward over the sweep set with
# the copies (the compare judges the benchmarks both runs have).
base=${ADALOAD_BASE:-.devbundle/adaload-base}
base_filter='^(lnmod_fwd/dtile|copy)/'
base_dir=/tmp/adaload-base-sweep
# One of the A/B/A runs: ab_bench BUILD TAG (printed under --dry-run, like step).
ab_bench() {
  local args=(bench --set sweep --filter "$base_filter" --out "$base_dir/$2")
  if [ "$dry" = 1 ]; then printf '%q' "$1"; printf ' %q' "${args[@]}"; echo; return 0; fi
  log "$1 ${args[*]}"; "$1" "${args[@]}" >"$out/base-sweep-$2.log" 2>&1; echo "bench $2 rc=$?"
}
# MODE aa: every forward kernel benchmark of the wan set (their copy ceilings come along);
# naive and row_per_warp are the ones that moved 5-9% from lease to lease.
aa_filter='^lnmod_fwd/(naive|row_per_warp|dtile)/'
aa_prev=${2:-}
e2e_cmd="python3 harness/e2e/replay.py run --adaload .devbundle/adaload --budget-s ${E2E_BUDGET_S:-420} --work /tmp/adaload-e2e${E2E_ARGS:+ $E2E_ARGS}"
# NVLink multicast stays off in every process of the two-GPU run (the launcher exports them;
# each worker refuses to start without them).
no_multicast="NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1"
# MODE ncu: the profiler's command line (an array: the regexes stay one word each).
ncu_cmd() {
  local f=${2:-} k=${3:-}
  [ -n "$f" ] && [ -n "$k" ] || { echo "ci/device_run.sh ncu: name the bench FILTER and the KERNEL regex" >&2; exit 2; }
  ncu_argv=(ncu --clock-control none --kernel-name "regex:$k" --launch-skip "${NCU_SKIP:-4}" --launch-count "${NCU_COUNT:-2}"
            --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats
            --section WarpStateStats --section SchedulerStats --export "$out/ncu" --force-overwrite
            .devbundle/adaload bench --filter "$f" --repetitions 1 --min-time 0.001 --out /tmp/adaload-ncu-bench)
}
e2e_ddp_cmd="python3 harness/e2e/ddp.py run --adaload .devbundle/adaload --budget-s ${E2E_DDP_BUDGET_S:-520} --work /tmp/adaload-e2e-ddp"
if [ "$mode" = aa ] && [ -n "$aa_prev" ]; then
  case "$aa_prev" in
    results/*/bench/*) ;;
    *) echo "ci/device_run.sh aa: LEASE1_RUN must be results/<gpu>/bench/<run> (got '$aa_prev')" >&2; exit 2 ;;
  esac
fi
# The A/A bench of one lease; prints its run folder on the last line of the output.
aa_bench() {
  step bench --set wan --filter "$aa_filter"
}
aa_compare() { # aa_compare LEASE1_RUN LEASE2_RUN
  step compare "$1" "$2"
  step compare --history "$2"
}
# One adaload step: printed (--dry-run) or run with its exit status said.
step() {
  if [ "$dry" = 1 ]; then printf 'adaload'; printf ' %q' "$@"; echo; return 0; fi
  log "adaload $*"; $ada "$@"; echo "$1 rc=$?"
}
if [ "$dry" = 1 ]; then
  case "$mode" in
    bench-bwd)
      step bench --set wan --with-peers --filter "$bwd_sample"
      step bench --set wan --filter "$bwd_layouts"
      echo "adaload report <each new run folder> > \$OUT/report-<n>.md" ;;
    bench-res)
      step verify --op lnmod_res --grid quick --variant dtile --no-record
      echo "(the bench below only when that verify passes)"
      step bench --set wan --with-peers --filter "$res_filter"
      echo "(15 shapes: site 3's 9 of issue 22's bar, sites 1 and 2 at D 1536/3072/5120 x 32,760 rows; both directions)"
      echo "adaload report <the new run folder> > \$OUT/report-res.md" ;;
    plugin)
      step verify --grid quick --plugin "$rowblock" --variant plugin:rowblock --variant dtile
      noeps_step
      step bench --set quick --plugin "$rowblock" --peer "$peer:lnmod_fp32" --peer "$peer:lnmod_no_shift" --filter "$plugin_bench"
      echo "adaload report <the new bench run folder> > \$OUT/report-plugin.md" ;;
    aa)
      aa_bench
      [ -n "$aa_prev" ] && aa_compare "$aa_prev" "results/<gpu>/bench/<this lease's run>"
      [ -n "$aa_prev" ] || echo "(first lease: bring the run back, then ci/device_run.sh aa results/<gpu>/bench/<that run> on a fresh lease)" ;;
    e2e)
      echo "$e2e_cmd"
      echo "then: python3 harness/e2e/replay.py report <the new e2e run folder> > \$OUT/report-e2e.md" ;;
    sweep)
      step verify --op lnmod --grid quick --variant dtile --direction fwd --no-record
      echo "(the bench below only when that verify passes)"
      step bench --set sweep
      if [ -x "$base" ] || [ -e "$base.xz" ]; then
        ab_bench "$base" A; ab_bench adaload B; ab_bench "$base" A2
        step compare "$base_dir/A" "$base_dir/B"
        step compare "$base_dir/A" "$base_dir/A2"
        echo "(the compares into \$OUT/sweep-compare.md and \$OUT/sweep-drift.md; the three run folders into logs.tgz as base-sweep.tgz)"
      else
        echo "(no $base: no same-lease baseline; BASE_REV=<rev> ci/device_bundle.sh builds one)"
      fi ;;
    ncu)
      out='$OUT' ncu_cmd "$@"
      printf '%q ' "${ncu_argv[@]}"; echo
      echo "then: ncu --import \$OUT/ncu.ncu-rep --page details > \$OUT/ncu.txt" ;;
    e2e-ddp)
      echo "(refused with exit 77 unless nvidia-smi lists 2 GPUs)"
      echo "export $no_multicast"
      echo "$e2e_ddp_cmd"
      echo "then: python3 harness/e2e/ddp.py report <the new DDP run folder> > \$OUT/report-e2e-ddp.md" ;;
    *) echo "--dry-run: only bench-bwd, bench-res, plugin, aa, ncu, sweep, e2e and e2e-ddp print their plan" >&2; exit 2 ;;
  esac
  exit 0
fi
if [ "$mode" = e2e-ddp ]; then
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  [ "$ngpu" -ge 2 ] || { echo "ci/device_run.sh e2e-ddp: $ngpu GPU(s) visible; the experiment needs 2 (the nvidia-h200-x2 kind)" >&2; exit 77; }
fi
. "$(dirname "$0")/device_env.sh"
ada=.devbundle/adaload
# What $OUT held before this run (a caller's own log, redirected there, among them): the
# packing of the step logs at the end leaves those alone.
outs_before=$(mktemp); find "$out" -maxdepth 1 -type f -printf '%f\n' | sort >"$outs_before"
before=$(mktemp); find results -name meta.json ! -path "*/.*" 2>/dev/null | sort >"$before"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
log env;       $ada env
case "$mode" in
  quick)
    log verify quick; $ada verify --grid quick; echo "verify rc=$?"
    log bench quick;  $ada bench --set quick --with-peers; echo "bench rc=$?"
    ;;
  verify)
    # The smoke grid first (seconds): a build that fails it would only burn the call's 10 minutes.
    log verify smoke; $ada verify --grid smoke --no-record | tail -3; src=${PIPESTATUS[0]}; echo "verify smoke rc=$src"
    if [ "$src" = 0 ]; then
      log verify full;  $ada verify --grid full --sanitizers --reuse-buffers; echo "verify rc=$?"
    else
      echo "verify full: not run (the smoke grid failed)"
    fi
    ;;
  bench)
    # The forward only (the backward has MODE bench-bwd): one call stays inside 10 minutes.
    log bench wan;    $ada bench --set wan --filter '^(lnmod_fwd|cpu)/'; echo "bench rc=$?"
    log bench wan bar shapes with peers
    $ada bench --set wan --with-peers --filter '^(lnmod_fwd|layer_norm)/.*rows(32760|75600)$'; echo "bench peers rc=$?"
    log "regression check: normal build twice, then the slowed build (dtile does its work twice)"
    # Staged by the runs library like every run folder (hidden until published: a kill here
    # leaves nothing that breaks results check), published and indexed at the end.
    rc_dir=$($ada results new --kind regression-check --owner-pid $$ --command "ci/device_run.sh bench: regression check") ||
      { echo "regression check: cannot stage a run folder"; rc_dir=/nonexistent; }
    f='^(lnmod_fwd/dtile|copy)/'
    $ada bench --set quick --repetitions 9 --filter "$f" --out "$rc_dir/normal" >/dev/null; echo "bench normal rc=$?"
    $ada bench --set quick --repetitions 9 --filter "$f" --out "$rc_dir/normal-again" >/dev/null; echo "bench normal-again rc=$?"
    .devbundle/adaload-slow bench --set quick --repetitions 9 --filter "$f" --out "$rc_dir/slowed" >/dev/null; echo "bench slowed rc=$?"
    $ada compare "$rc_dir/normal" "$rc_dir/normal-again" | tee "$rc_dir/compare-same.txt"; echo "compare same build rc=${PIPESTATUS[0]} (want 0)"
    $ada compare "$rc_dir/normal" "$rc_dir/slowed" | tee "$rc_dir/compare-slowed.txt"; echo "compare slowed rc=${PIPESTATUS[0]} (want 1)"
    if published=$($ada results publish "$rc_dir"); then rc_dir=${published#"$PWD/"}; echo "results publish rc=0"
    else echo "results publish rc=$? (not published)"; $ada results discard "$rc_dir"; rc_dir=""; fi
    ;;
  verify-shards)
    # verify-shards N K... : shards K of N of the full grid one after another (each its own
    # record, the gate joins them), "san" for verify --grid quick --sanitizers (the sanitizer
    # record); a step is skipped when the previous one took longer than what is left of
    # VERIFY_BUDGET_S (default 570 s). Logs: $OUT/verify-<K>.log (stdout) and .err (progress).
    n=${2:?verify-shards N K...}; shift 2
    t0=$(date +%s); last=0
    # cmd := the verify command of step K
    # (--reuse-buffers: no cudaMalloc per input set -- 42 s of shard 1's 385 s on 2026-12-04 --
    # outside compute-sanitizer; the sanitizer children keep exact sizes whatever the parent says.
    # san: each child may take 540 s, not verify's default 420 -- racecheck's took 346-368 s alone
    # on 2026-12-04, 415 s on 2026-12-05 with the long-sample sets -- and the step still ends
    # inside VERIFY_BUDGET_S.)
    shard_cmd() { if [ "$1" = san ]; then cmd=(verify --grid quick --sanitizers --sanitizer-timeout 540); else cmd=(verify --grid full --shard "$1/$n" --reuse-buffers); fi; }
    if [ "${VERIFY_PARALLEL:-0}" = 1 ]; then
      # The steps at once, the host's CPUs split among them (two shards together took 220 s
      # on 2026-12-04 where one alone took ~200 s: three at once oversubscribe 16 cores).
      th=$(( $(nproc) / $# )); [ "$th" -ge 1 ] || th=1
      pids=()
      for k in "$@"; do
        shard_cmd "$k"
        log "adaload ${cmd[*]} --threads $th (in parallel, at most ${VERIFY_BUDGET_S:-570} s)"
        ( s=$(date +%s); timeout "${VERIFY_BUDGET_S:-570}" $ada "${cmd[@]}" --threads "$th" >"$out/verify-$k.log" 2>"$out/verify-$k.err"
          echo "verify $k rc=$? in $(( $(date +%s) - s )) s" >"$out/verify-$k.rc" ) &
        pids+=($!); sleep 2 # distinct run folder times
      done
      # each step's run folder packed as the step ends, should the call be killed before the end
      for _ in "${pids[@]}"; do wait -n || true; "$root/ci/pack_runs.sh" "$out" "$before"; done
      for k in "$@"; do cat "$out/verify-$k.rc"; rm -f "$out/verify-$k.rc"; tail -4 "$out/verify-$k.log"; tail -2 "$out/verify-$k.err"; done
    else
      for k in "$@"; do
        shard_cmd "$k"
        left=$(( ${VERIFY_BUDGET_S:-570} - ($(date +%s) - t0) ))
        if [ "$left" -lt 20 ] || { [ "$last" -gt 0 ] && [ "$last" -gt "$left" ]; }; then
          echo "verify $k: skipped (the last step took $last s, $left s left)"; continue
        fi
        s=$(date +%s)
        log "adaload ${cmd[*]} (at most $left s)"
        timeout "$left" $ada "${cmd[@]}" >"$out/verify-$k.log" 2>"$out/verify-$k.err"; rc=$?
        last=$(( $(date +%s) - s ))
        echo "verify $k rc=$rc in $last s"; tail -4 "$out/verify-$k.log"; tail -2 "$out/verify-$k.err"
        "$root/ci/pack_runs.sh" "$out" "$before" # what ended so far, should the call be killed
      done
    fi
    ;;
  sweep)
    # First lnmod's quick grid of dtile's forward (no record; ~10-20 s): a build whose forward
    # fails it is not timed (a kernel patch before its record: land_patch.sh prepare, then this).
    # Then bench --set sweep: dtile forward and backward over the widths of issue 21 (bf16, per
    # sample, 32,760 rows) beside the copy, then the fused op (site 3) at 14 widths 1024-10240;
    # ~100 s on the H200 before the fused op's widths (estimated ~60 s more; not yet run).
    log "verify --op lnmod --grid quick --variant dtile --direction fwd --no-record"
    $ada verify --op lnmod --grid quick --variant dtile --direction fwd --no-record >"$out/verify-fwd-quick.log" 2>&1
    vrc=$?; echo "verify fwd quick rc=$vrc"; tail -3 "$out/verify-fwd-quick.log"
    if [ "$vrc" != 0 ]; then
      grep ' FAIL' "$out/verify-fwd-quick.log" | head -20
      echo "sweep: dtile's forward failed the quick grid (rc=$vrc): nothing timed"
    else
      step bench --set sweep
      if [ ! -x "$base" ]; then
        echo "sweep: no $base: no same-lease baseline"
      else
        rm -rf "$base_dir"; mkdir -p "$base_dir"
        ab_bench "$base" A; ab_bench "$ada" B; ab_bench "$base" A2
        $ada compare "$base_dir/A" "$base_dir/B" >"$out/sweep-compare.md" 2>&1; echo "compare A B rc=$? (0: none slower, 1: slower)"
        tail -3 "$out/sweep-compare.md"
        $ada compare "$base_dir/A" "$base_dir/A2" >"$out/sweep-drift.md" 2>&1; echo "compare A A2 rc=$? (the same code: want 0, nothing flagged)"
        tail -3 "$out/sweep-drift.md"
        tar czf "$out/base-sweep.tgz" -C "$(dirname "$base_dir")" "$(basename "$base_dir")"
      fi
    fi
    ;;
  bench-bwd)
    whl=$(ls .whl/liger_kernel-*.whl 2>/dev/null | head -1)
    if [ -n "$whl" ]; then
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$whl" \
        && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
      python3 -c 'import liger_kernel.ops.layer_norm as m; print("liger:", m.__file__)' || echo "liger: does not import"
    else
      echo "liger: no .whl/liger_kernel-*.whl carried (its peer is left out)"
    fi
    step bench --set wan --with-peers --filter "$bwd_sample"
    step bench --set wan --filter "$bwd_layouts"
    n=0
    find results -name meta.json ! -path "*/.*" | sort | comm -13 "$before" - | xargs -r -n1 dirname |
      while read -r run; do
        n=$((n + 1)); $ada report "$run" >"$out/report-$n.md"; echo "report $run rc=$? -> report-$n.md"
      done
    ;;
  bench-res)
    # The fused op's quick grid of dtile first (no record; ~30 s): a build whose kernels fail it
    # is not timed (a kernel patch before its record: land_patch.sh prepare, then this).
    log "verify --op lnmod_res --grid quick --variant dtile --no-record"
    $ada verify --op lnmod_res --grid quick --variant dtile --no-record >"$out/verify-res-quick.log" 2>&1
    vrc=$?; echo "verify res quick rc=$vrc"; tail -3 "$out/verify-res-quick.log"
    if [ "$vrc" != 0 ]; then
      grep ' FAIL' "$out/verify-res-quick.log" | head -20
      echo "bench-res: the fused op's quick grid failed (rc=$vrc): nothing timed"
    else
      step bench --set wan --with-peers --filter "$res_filter"
      run=$(find results -path '*/bench/*' -name meta.json ! -path "*/.*" | sort | comm -13 "$before" - | tail -1)
      [ -n "$run" ] && { $ada report "$(dirname "$run")" >"$out/report-res.md"; echo "report rc=$? -> report-res.md"; }
    fi
    ;;
  plugin)
    ls -l "$rowblock" "$noeps" || echo "plugin: the example plug-ins are not in $plugdir (ci/device_bundle.sh)"
    step verify --grid quick --plugin "$rowblock" --variant plugin:rowblock --variant dtile
    noeps_step
    step bench --set quick --plugin "$rowblock" --peer "$peer:lnmod_fp32" --peer "$peer:lnmod_no_shift" --filter "$plugin_bench"
    run=$(find results -path '*/bench/*' -name meta.json ! -path "*/.*" | sort | comm -13 "$before" - | tail -1)
    [ -n "$run" ] && { $ada report "$(dirname "$run")" >"$out/report-plugin.md"; echo "report rc=$? -> report-plugin.md"; }
    ;;
  aa)
    if [ -n "$aa_prev" ]; then
      [ -f "$aa_prev/bench.json" ] && [ -f "$aa_prev/meta.json" ] ||
        { echo "aa: $aa_prev: no run folder here (unpack the first lease's results.tgz before this call)"; exit 2; }
      hv() { sed -n "s/.*\"kernel_hash_v2\": *\"\([0-9a-f]*\)\".*/\1/p" | head -1; }
      h1=$(hv <"$aa_prev/meta.json")
      h2=$($ada env --json | hv)
      [ -n "$h1" ] && [ "$h1" = "$h2" ] ||
        { echo "aa: $aa_prev has other kernel sources ($h1) than this build ($h2): no A/A pair"; exit 2; }
    fi
    aa_bench | tee "$out/aa-bench.txt"
    new=$(sed -n 's/^run folder: //p' "$out/aa-bench.txt" | tail -1)
    new=${new#"$PWD/"}
    if [ -n "$aa_prev" ] && [ -n "$new" ]; then
      $ada compare "$aa_prev" "$new" | tee "$out/aa-compare.txt"; echo "compare lease1 lease2 rc=${PIPESTATUS[0]} (want 0: 0 slower)"
      $ada compare --history "$new" | tee "$out/aa-compare-history.txt"; echo "compare --history rc=${PIPESTATUS[0]} (want 0)"
    elif [ -n "$aa_prev" ]; then
      echo "aa: the second lease's bench wrote no run folder: nothing to compare"
    else
      echo "aa: first lease done: $new -- next, on a fresh lease: ci/device_run.sh aa $new"
    fi
    ;;
  ncu)
    ncu_cmd "$@"
    command -v ncu >/dev/null || { echo "ncu: not on the PATH here"; exit 77; }
    log "${ncu_argv[*]}"
    rm -rf /tmp/adaload-ncu-bench
    "${ncu_argv[@]}" >"$out/ncu-run.log" 2>&1; echo "ncu rc=$? (its log: ncu-run.log)"
    tail -5 "$out/ncu-run.log"
    if [ -f "$out/ncu.ncu-rep" ]; then
      ncu --import "$out/ncu.ncu-rep" --page details >"$out/ncu.txt" 2>&1; echo "ncu details rc=$? -> ncu.txt"
    fi
    ;;
  python-gpu)
    # python_torch_gpu (ctest label gpu: CI has no GPU) with the bundle's library: adaload.torch's
    # forward and its kernel backward against float64 autograd, on the GPU.
    export ADALOAD_LIB=$root/.devbundle/libadaload.so ADALOAD_BIN=$root/.devbundle/adaload ADALOAD_SOURCE_DIR=$root \
      ADALOAD_EXPECT_CUDA=1 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$root/python:$root/python/tests${PYTHONPATH:+:$PYTHONPATH}
    log "python_torch_gpu"
    timeout 300 python3 python/tests/test_torch_gpu.py -v 2>&1 | tee "$out/python-gpu.log"; echo "python-gpu rc=${PIPESTATUS[0]}"
    log "python_torch_res_gpu, python_torch_res_cpu, e2e TinyModelOnCPU (issue 22)"
    timeout 300 python3 python/tests/test_torch_res_gpu.py -v 2>&1 | tee -a "$out/python-gpu.log"; echo "python-res-gpu rc=${PIPESTATUS[0]}"
    timeout 120 python3 python/tests/test_torch_res_cpu.py -v 2>&1 | tee -a "$out/python-gpu.log"; echo "python-res-cpu rc=${PIPESTATUS[0]}"
    timeout 120 python3 harness/e2e/test_e2e.py -v TinyModelOnCPU 2>&1 | tee -a "$out/python-gpu.log"; echo "e2e-tiny-model rc=${PIPESTATUS[0]}"
    ;;
  e2e)
    export ADALOAD_LIB=$root/.devbundle/libadaload.so PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
    [ -e "$ADALOAD_LIB" ] || echo "e2e: no $ADALOAD_LIB (ci/device_bundle.sh builds it): the adaload kernel's replays will be listed as failed"
    python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available() and torch.cuda.get_device_name(0))'
    log "$e2e_cmd"
    $e2e_cmd 2>&1 | tee "$out/e2e.log"; echo "e2e rc=${PIPESTATUS[0]}"
    run=$(find results -path '*/e2e/*' -name meta.json ! -path "*/.*" | sort | comm -13 "$before" - | tail -1)
    [ -n "$run" ] && { python3 harness/e2e/replay.py report "$(dirname "$run")" >"$out/report-e2e.md"; echo "report rc=$? -> report-e2e.md"; }
    ;;
  e2e-ddp)
    export ADALOAD_LIB=$root/.devbundle/libadaload.so PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
    # shellcheck disable=SC2086,SC2163  # split into its three NAME=value words on purpose
    export $no_multicast
    env | grep -E '^(NCCL_NVLS_ENABLE|TORCH_SYMM_MEM_DISABLE_MULTICAST|NVSHMEM_DISABLE_NVLS)='
    [ -e "$ADALOAD_LIB" ] || echo "e2e-ddp: no $ADALOAD_LIB (ci/device_bundle.sh builds it): the adaload kernel's runs will fail"
    python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.device_count(), "GPUs")'
    log "$e2e_ddp_cmd"
    $e2e_ddp_cmd 2>&1 | tee "$out/e2e-ddp.log"; echo "e2e-ddp rc=${PIPESTATUS[0]}"
    find results -path '*/e2e/*' -name meta.json ! -path "*/.*" | sort | comm -13 "$before" - | xargs -r -n1 dirname |
      while read -r run; do
        if grep -q '"emulated": false' "$run/e2e.json"; then
          python3 harness/e2e/ddp.py report "$run" >"$out/report-e2e-ddp.md"; echo "report rc=$? $run -> report-e2e-ddp.md"
        else
          python3 harness/e2e/replay.py report "$run" >"$out/report-e2e-replay.md"; echo "report rc=$? $run -> report-e2e-replay.md"
        fi
      done
    ;;
esac
log pack; "$root/ci/pack_runs.sh" "$out" "$before" "${rc_dir:-}"
# The device tool brings back at most 8 files a call (device README): the step logs
# (verify-K.log/.err, new_runs.*, e2e.log, ...) go into one logs.tgz, so one call can chain
# two modes (OUT=$o/a ...; OUT=$o/b ...) and lose nothing -- on 2026-12-02 a chained call's
# full-grid shards 1-2 never came back. Left as files: results.tgz, logs.tgz, the reports, and
# whatever was there before the run (a caller's log still being written).
logs=$(mktemp)
find "$out" -maxdepth 1 -type f ! -name results.tgz ! -name logs.tgz ! -name '*.md' -printf '%f\n' | sort |
  comm -23 - "$outs_before" >"$logs"
[ -s "$logs" ] && (cd "$out" && tar czf logs.tgz -T "$logs" && xargs -r rm -f <"$logs")
rm -f "$logs" "$outs_before"
