#!/usr/bin/env bash
# device.sh -- the res-chunk round on a GPU machine, one call (96 s on an H100 in round 1, + the start), from the
# repository root. Two builds: RC_NEW (default .devbundle/adaload) built from a tree with
# res-chunk.patch applied, RC_BASE (default .devbundle/adaload-base) from the tree before it
# (ci/land_patch.sh prepare bundles both). Either may be an .xz file anywhere in the carried tree
# (e.g. build-rcbundle/adaload-rc.xz, built ahead: the same lease as chunk-land2's landing, whose
# .devbundle/adaload is then the base); it is unpacked into .devbundle/ beside lib/ (the builds'
# rpath). In order:
#   1. the fused op's full grid on dtile (no record): the chunk forward at D 264, 1000, 1536,
#      2056, 3072, 5120 and odd 1001, 5119, every site and map; a failure stops the call;
#   2. compute-sanitizer racecheck, then memcheck, over the fused op's sanitizer grid on dtile
#      (a hazard or an access error stops the call: the lesson of lnmod's landing try 1 -- the
#      sanitizers meet a new kernel here, before a landing's record);
#   3. A/B timing, rounds base new base new: the fused op's dtile forward at the wan set's 15
#      shapes (issue 22's bar and sites 1, 2) and the sweep set's 14 widths, each run folder to
#      $OUT/ab.tgz, and `adaload compare` of each pair (base->new in both rounds: drift between
#      rounds shows as a difference between them).
# RC_TIMING_ONLY=1 skips 1 and 2 (a landing call whose full record, run after the timing in the
# same call, holds them). Exit 0: all of it ran and passed; 1: a check failed (the rest skipped); 2: a build is missing.
set -uo pipefail
. "$(dirname "$0")/../../../ci/device_env.sh"
# A build as a runnable path in .devbundle/ (an .xz unpacked there once, through a temporary name).
prog() {
  case $1 in
    *.xz)
      local d
      d=.devbundle/$(basename "${1%.xz}")
      if [ ! -x "$d" ]; then
        xz -dc "$1" >"$d.part" && chmod +x "$d.part" && mv "$d.part" "$d" || return 1
      fi
      echo "$d" ;;
    *) echo "$1" ;;
  esac
}
if ! ada=$(prog "${RC_NEW:-.devbundle/adaload}") || ! base=$(prog "${RC_BASE:-.devbundle/adaload-base}"); then
  echo "device.sh: could not unpack ${RC_NEW:-} / ${RC_BASE:-}" >&2
  exit 2
fi
if [ ! -x "$ada" ] || [ ! -x "$base" ]; then echo "device.sh: no build at $ada or $base" >&2; exit 2; fi
echo "new: $ada ($("$ada" env | grep -m1 'kernel sources' || true))"
echo "base: $base ($("$base" env | grep -m1 'kernel sources' || true))"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv

if [ "${RC_TIMING_ONLY:-0}" = 1 ]; then
  echo "device.sh: RC_TIMING_ONLY=1: the checks are the same call's full record (timing first)"
else
log "verify --op lnmod_res --grid full --variant dtile"
"$ada" verify --op lnmod_res --grid full --variant dtile --no-record >"$out/verify-res-full.log" 2>&1
rc=$?
tail -3 "$out/verify-res-full.log"
if [ "$rc" != 0 ]; then
  grep ' FAIL' "$out/verify-res-full.log" | head -20
  echo "device.sh: the fused op's full grid failed (rc=$rc): nothing else run"
  exit 1
fi
for tool in racecheck memcheck; do
  log "compute-sanitizer $tool: verify --op lnmod_res --res-grid sanitizer --variant dtile"
  compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 \
    "$ada" verify --op lnmod_res --grid quick --res-grid sanitizer --variant dtile --no-record >"$out/$tool.log" 2>&1
  rc=$?
  grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid' "$out/$tool.log" | head -12
  echo "$tool rc=$rc"
  [ "$rc" = 0 ] || { echo "device.sh: $tool not clean: no timing"; exit 1; }
done
fi

exp=$(mktemp -d)
res='^lnmod_res_fwd/dtile/'
for round in 1 2; do
  for t in base new; do
    bin=$ada
    [ "$t" = base ] && bin=$base
    for set in wan sweep; do
      log "bench round $round: $t $set"
      "$bin" bench --set "$set" --filter "$res" --out "$exp/$set-$round-$t" >/dev/null 2>"$exp/$set-$round-$t.err"
      echo "bench $t $set rc=$?"
    done
  done
done
for set in wan sweep; do
  for round in 1 2; do
    log "compare $set round $round: base -> new"
    "$ada" compare "$exp/$set-$round-base" "$exp/$set-$round-new"
  done
  "$ada" report "$exp/$set-1-new" >"$out/report-$set-new.md" 2>&1
done
tar -C "$exp" -czf "$out/ab.tgz" .
log "done"
