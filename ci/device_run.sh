#!/usr/bin/env bash
# ci/device_run.sh MODE -- run on a GPU machine after ci/device_bundle.sh built build-device/
# (and build-device-slow/) here. Writes run folders under results/<gpu>/ and packs every new
# run folder into $OUT/results.tgz (the device tool brings $OUT back).
#   MODE quick  env, verify --grid quick for every variant, bench --set quick
#   MODE full   env, verify --grid full --sanitizers (the CI gate's record), bench --set wan
#               --with-peers, and the slowed build's quick bench compared against a normal one
set -uo pipefail
mode=${1:-quick}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
set -a; . build-device/git.env; set +a
export ADALOAD_ROOT=$root
out=${OUT:-/tmp/adaload-out}
mkdir -p "$out"
ada=build-device/adaload
log() { echo "== $(date -u +%H:%M:%S) $*"; }
before=$(mktemp); find results -name meta.json 2>/dev/null | sort >"$before"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
log env;       $ada env
case "$mode" in
  quick)
    log verify quick; $ada verify --grid quick; echo "verify rc=$?"
    log bench quick;  $ada bench --set quick --with-peers; echo "bench rc=$?"
    ;;
  full)
    log verify full;  $ada verify --grid full --sanitizers; echo "verify rc=$?"
    log bench wan;    $ada bench --set wan --with-peers; echo "bench rc=$?"
    log regression check: normal vs slowed build
    a=$(mktemp -d); b=$(mktemp -d)
    $ada bench --set quick --variant dtile --no-cpu --out "$a" >/dev/null; echo "bench a rc=$?"
    $ada bench --set quick --variant dtile --no-cpu --out "$a.2" >/dev/null 2>&1 || mkdir -p "$a.2"
    build-device-slow/adaload bench --set quick --variant dtile --no-cpu --out "$b" >/dev/null; echo "bench b rc=$?"
    $ada compare "$a" "$a.2"; echo "compare same-build rc=$? (want 0)"
    $ada compare "$a" "$b"; echo "compare slowed rc=$? (want 1)"
    mkdir -p results/regression-check; cp -r "$a" results/regression-check/normal; cp -r "$a.2" results/regression-check/normal-again; cp -r "$b" results/regression-check/slowed
    ;;
esac
find results -name meta.json | sort | comm -13 "$before" - | xargs -r -n1 dirname >"$out/new_runs.txt"
[ -d results/regression-check ] && echo results/regression-check >>"$out/new_runs.txt"
tar czf "$out/results.tgz" -T "$out/new_runs.txt" 2>/dev/null
log packed "$(wc -l <"$out/new_runs.txt")" run folders
