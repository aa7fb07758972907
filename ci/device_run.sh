#!/usr/bin/env bash
# ci/device_run.sh MODE -- run on a GPU machine after ci/device_bundle.sh built .devbundle/
# here. Writes run folders under results/<gpu>/<kind>/ (verify, bench, regression-check),
# each added to results/index.jsonl, and packs every new run folder and the index into
# $OUT/results.tgz (the device tool brings $OUT back; here, after unpacking, `adaload results
# check` says whether the index agrees, `adaload results index` rebuilds it). The full
# per-case verify.json stays out of git (.gitignore): verify-summary.json is the record.
#   MODE quick  env, verify --grid quick for every variant, bench --set quick
#   MODE verify env, verify --grid full --sanitizers (the CI gate's record)
#   MODE bench  bench --set wan (every shape), bench --set wan --with-peers on the shapes of
#               the speed bar (rows >= 32,760), and the regression check: the slowed build's
#               dtile against two runs of the normal build (adaload compare)
# (two calls, each inside the device tool's 10-minute limit)
set -uo pipefail
mode=${1:-quick}
. "$(dirname "$0")/device_env.sh"
ada=.devbundle/adaload
before=$(mktemp); find results -name meta.json ! -path "*/.*" 2>/dev/null | sort >"$before"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
log env;       $ada env
case "$mode" in
  quick)
    log verify quick; $ada verify --grid quick; echo "verify rc=$?"
    log bench quick;  $ada bench --set quick --with-peers; echo "bench rc=$?"
    ;;
  verify)
    log verify full;  $ada verify --grid full --sanitizers; echo "verify rc=$?"
    ;;
  bench)
    log bench wan;    $ada bench --set wan; echo "bench rc=$?"
    log bench wan bar shapes with peers
    $ada bench --set wan --with-peers --filter 'rows(32760|75600)$'; echo "bench peers rc=$?"
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
esac
find results -name meta.json ! -path "*/.*" | sort | comm -13 "$before" - | xargs -r -n1 dirname >"$out/new_runs.txt"
[ -n "${rc_dir:-}" ] && echo "$rc_dir" >>"$out/new_runs.txt"
cp "$out/new_runs.txt" "$out/new_runs.list"
echo results/index.jsonl >>"$out/new_runs.txt"
tar czf "$out/results.tgz" -T "$out/new_runs.txt" 2>/dev/null
log packed "$(wc -l <"$out/new_runs.txt")" run folders
