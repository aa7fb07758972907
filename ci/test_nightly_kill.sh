#!/usr/bin/env bash
# ci/test_nightly_kill.sh ADALOAD WORK -- the nightly cannot poison itself (CTest:
# nightly_kill): its planner step is killed with SIGKILL while a plan runs (a wrapper makes
# `adaload plan` slow), then `adaload results check`, `results index` and `dashboard` of that
# results folder must still pass (exit 0) and no visible run folder may be left; the next
# staged run of the planner kind sweeps the dead one away.
set -uo pipefail
ada=$1 work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work" && mkdir -p "$work/build" "$work/results" || exit 1
cat >"$work/build/adaload" <<WRAP
#!/bin/sh
[ "\$1" = plan ] && { : >"$work/plan-started"; sleep 60; }
exec "$ada" "\$@"
WRAP
chmod +x "$work/build/adaload"
fail() { echo "FAIL: $*"; exit 1; }

setsid bash "$root/ci/nightly.sh" --no-setup --no-build --build "$work/build" --only planner \
  --results "$work/results" >"$work/nightly.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do [ -e "$work/plan-started" ] && break; sleep 0.1; done
[ -e "$work/plan-started" ] || { cat "$work/nightly.log"; fail "the planner step never started a plan"; }
kill -9 -- "-$pid"
wait "$pid" 2>/dev/null

visible=$(find "$work/results" -mindepth 3 -maxdepth 3 -type d ! -name '.*')
[ -z "$visible" ] || fail "kill -9 left a visible run folder: $visible"
"$ada" results check --results "$work/results" || fail "results check after kill -9 exited $?"
"$ada" results index --results "$work/results" >/dev/null || fail "results index after kill -9 exited $?"
"$ada" dashboard --results "$work/results" --out "$work/site" >/dev/null || fail "dashboard after kill -9 exited $?"

# The next night: a new staged planner run removes the dead one's folder.
tb=$(cd "$work/results" && ls -d */ | tr -d /)
dead=$(find "$work/results/$tb/planner" -mindepth 1 -maxdepth 1 -name '.*')
[ -n "$dead" ] || fail "no staged folder of the killed run (the step made none?)"
next=$("$ada" results new --kind planner --testbed "$tb" --results "$work/results" --owner-pid $$) ||
  fail "results new exited $?"
[ ! -e "$dead" ] || fail "the killed run's staging folder $dead was not swept"
"$ada" results discard "$next" || fail "results discard exited $?"
[ -z "$(ls -A "$work/results/$tb/planner")" ] || fail "left: $(ls -A "$work/results/$tb/planner")"
echo "ok: a nightly killed in its planner step leaves results/ checkable; the next run sweeps it"
