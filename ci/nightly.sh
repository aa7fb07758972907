#!/usr/bin/env bash
# ci/nightly.sh -- what a GPU machine's nightly job runs, in order:
#   1. set-up (ci/setup.sh) and a build (ci/build.sh BUILD);
#   2. verify --grid full --sanitizers          -> results/<gpu>/verify/<run>/
#   3. bench --set wan --with-peers              -> results/<gpu>/bench/<run>/
#      bench --set sweep                         -> results/<gpu>/bench/<run>/
#      the planner: plan summaries of the default manifest under both policies (simulated
#      metrics) and bench --no-gpu --filter ^cpu/planner/ (CPU speed), one run folder
#      results/<gpu>/planner/<run>/, indexed once complete;
#   4. judge the new wan run against its history: `adaload compare --history` (the one
#      regression rule, runfiles/run_history.h, which the dashboard applies too): against the
#      newest earlier wan run of the testbed with the same repetitions, each benchmark outside
#      its own noise band over the earlier runs of that run's kernel code; unchanged kernels
#      on another lease are environment drift, not a regression; then adaload results check;
#   5. the dashboard into SITE (see README, "Publishing the dashboard").
# Every step runs even when an earlier one failed, so the dashboard always shows the night.
#
#   ci/nightly.sh [--build DIR] [--site DIR] [--no-setup] [--no-build] [--dry-run]
#                 [--results DIR] [--only planner]
#     --build DIR  build folder (default <repo>/build)
#     --site DIR   where the dashboard goes (default BUILD/dashboard)
#     --no-setup   skip ci/setup.sh;  --no-build: use BUILD/adaload as it is
#     --dry-run    print the plan (the commands, in order) and run nothing
#     --only planner  run the planner step alone (it needs no GPU: tests and reruns), with
#                  --results DIR  its results folder (default <repo>/results)
# Exit: 0 all passed; 1 a check failed (verification, the gate, the index) or a benchmark
# regressed (`adaload compare --history`), even if another step could not run;
# 2 bad usage; 3 a step could not run (a build or program error); 77 no GPU here (nothing
# was written). Made for cron or a CI
# scheduler: no prompts, one log on stdout, a lock so two nights never overlap, e.g.
#   30 2 * * *  cd /srv/adaload && git pull --ff-only && ci/nightly.sh --site /srv/www/adaload >>/var/log/adaload-nightly.log 2>&1
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
site=""
results=$root/results
only=""
setup=1 dobuild=1 dry=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) [ $# -ge 2 ] || { echo "ci/nightly.sh: --build needs a folder" >&2; exit 2; }; build=$2; shift ;;
    --site) [ $# -ge 2 ] || { echo "ci/nightly.sh: --site needs a folder" >&2; exit 2; }; site=$2; shift ;;
    --results) [ $# -ge 2 ] || { echo "ci/nightly.sh: --results needs a folder" >&2; exit 2; }; results=$2; shift ;;
    --only) [ $# -ge 2 ] && [ "$2" = planner ] || { echo "ci/nightly.sh: --only takes 'planner'" >&2; exit 2; }; only=$2; shift ;;
    --no-setup) setup=0 ;;
    --no-build) dobuild=0 ;;
    --dry-run) dry=1 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "ci/nightly.sh: unknown argument '$1' (ci/nightly.sh --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$site" ] || site=$build/dashboard
[ "$results" = "$root/results" ] || [ -n "$only" ] || { echo "ci/nightly.sh: --results goes with --only planner" >&2; exit 2; }
ada=$build/adaload
failed=0 broken=0

log() { echo "== $(date -u +%FT%TZ) $*"; }
# step NAME CMD...: runs (or, with --dry-run, prints) one step; exit 1 counts as a failed
# check, 4 (compare: too few repetitions, or no earlier run like tonight's, to judge) as
# neither, anything else but 0 as a step that could not run.
step() {
  local name=$1; shift
  if [ $dry -eq 1 ]; then echo "would run ($name): $*"; return 0; fi
  log "$name: $*"
  "$@"
  local rc=$?
  case $rc in
    0) log "$name: ok" ;;
    1) log "$name: FAILED (a check failed)"; failed=1 ;;
    4) log "$name: undecided (too few repetitions or no earlier run like it to judge; adaload compare --help)" ;;
    *) log "$name: could not run (exit $rc)"; broken=1 ;;
  esac
  return $rc
}

if [ $dry -eq 0 ]; then
  mkdir -p "$build" || exit 3
  exec 9>"$build/nightly.lock"
  flock -n 9 || { echo "ci/nightly.sh: another nightly run holds $build/nightly.lock" >&2; exit 3; }
fi
[ $setup -eq 1 ] && { step setup "$root/ci/setup.sh" || exit 3; }
[ $dobuild -eq 1 ] && { step build "$root/ci/build.sh" "$build" || exit 3; }

# The planner step: one planner run folder -- the plans' simulated metrics, then the
# planner's CPU speed -- staged under a hidden name by the runs library (`adaload results
# new`, kept alive by this script's pid), published and indexed only once complete, and
# removed when its benchmark could not run; a kill -9 leaves only the hidden folder, which
# the catalog ignores and the next night's run removes.
planner_step() {
  local pdir
  if [ $dry -eq 1 ]; then
    pdir="$results/$tb/planner/<staged run>"
    echo "would run (planner-stage): $ada results new --kind planner --testbed $tb --results $results"
  else
    pdir=$("$ada" results new --kind planner --testbed "$tb" --results "$results" --owner-pid $$ \
             --command "ci/nightly.sh: planner step") || { log "planner: cannot stage a run folder"; broken=1; return; }
  fi
  for pol in equal-token dual; do
    step plan-$pol "$ada" plan --policy $pol --summary-json "$pdir/plan-$pol.json"
  done
  if step planner "$ada" bench --set wan --no-gpu --filter '^cpu/planner/' --kind planner --out "$pdir" ||
     [ -f "$pdir/bench.json" ]; then
    step planner-publish "$ada" results publish "$pdir" --results "$results"
  else
    step planner-discard "$ada" results discard "$pdir" --results "$results"
  fi
}

if [ $dry -eq 1 ]; then
  tb="<testbed>"
else
  [ -x "$ada" ] || { echo "ci/nightly.sh: no $ada (build first, or drop --no-build)" >&2; exit 3; }
  tb=$("$ada" results testbed) || exit 3
  if [ -n "$only" ]; then
    planner_step
    [ $failed -eq 1 ] && exit 1
    [ $broken -eq 1 ] && exit 3
    exit 0
  fi
  if ! "$ada" version | grep -q "^gpu kernels *built" || [ "${tb#cpu-}" != "$tb" ]; then
    echo "ci/nightly.sh: no GPU here (testbed $tb; $("$ada" version | grep '^gpu kernels')): nothing to run"
    exit 77
  fi
fi

# The newest wan run of this testbed before tonight's (from the index): tonight's must differ.
prev=""
if [ $dry -eq 0 ]; then
  prev=$("$ada" results list --kind bench --testbed "$tb" --json |
         grep '"measured":"set wan,' | tail -n 1 | sed 's/.*"path":"\([^"]*\)".*/\1/')
fi

step verify "$ada" verify --grid full --sanitizers
step gate "$ada" gate
step bench-wan "$ada" bench --set wan --with-peers
step bench-sweep "$ada" bench --set sweep
planner_step

if [ $dry -eq 1 ]; then
  echo "would run (compare): $ada compare --history results/$tb/bench/<tonight's wan run>"
else
  new=$("$ada" results list --kind bench --testbed "$tb" --json |
        grep '"measured":"set wan,' | tail -n 1 | sed 's/.*"path":"\([^"]*\)".*/\1/')
  if [ -z "$new" ] || [ "$new" = "$prev" ]; then
    log "compare: tonight's wan run is missing (see bench-wan above)"
    broken=1
  else
    # Exit 4 (nothing like it before, or too few repetitions) is logged as undecided.
    step compare "$ada" compare --history "$root/results/$new"
  fi
fi
step index "$ada" results check
step dashboard "$ada" dashboard --out "$site"

if [ $dry -eq 1 ]; then exit 0; fi
log "nightly of $tb done: $([ $failed -eq 1 ] && echo "a check FAILED" || echo "checks passed")$([ $broken -eq 1 ] && echo ", a step could not run")"
[ $failed -eq 1 ] && exit 1
[ $broken -eq 1 ] && exit 3
exit 0
