#!/bin/sh
# test_cli_defects.sh ADALOAD SRC WORK -- the defects of issue 9 that live in the CLI, each
# checked through the real program (CTest: cli_defects); every case failed on the build
# before the fix. Outputs: a device is written through, never replaced; an output naming
# the input is refused; a failed second output leaves the first target's old file; SIGTERM
# leaves no temporary; stale temporaries of dead processes are swept. Options: `--seed 010`
# is ten. Messages: control bytes never reach the terminal; the gate never prints "(null)";
# report does not leak on a malformed entry (LeakSanitizer, in the sanitizer build); a
# custom file that cannot be written is named, exit 2; kill -9 during bench leaves no visible
# run folder under results/ (staging folders, issue 9).
ada=$1
src=$2
work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
tiny=$src/datasets/tiny.csv
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
ok() { echo "ok   $*"; }
no_temps() { # no_temps WHAT: no *.tmp.* file anywhere under $work
  left=$(find "$work" -name '*.tmp.*')
  if [ -n "$left" ]; then fail "$1: temporaries left: $left"; else ok "$1: no temporaries"; fi
}

# 1. A device target is written through. As root, on a private null device (never /dev/null
#    itself: the old build replaced its target with a regular file).
if mknod "$work/null" c 1 3 2>/dev/null; then
  "$ada" plan --manifest "$tiny" --summary-json "$work/null" >/dev/null 2>err
  rc=$?
  if [ $rc -eq 0 ] && [ -c "$work/null" ]; then ok "device written through"; else fail "device: exit $rc, $(ls -l "$work/null")"; fi
else
  echo "skip device node (not root)"
fi

# 2. An output that names the input is refused; the input is intact.
cp "$tiny" m.csv
"$ada" plan --manifest m.csv --summary-json ./m.csv >/dev/null 2>err
rc=$?
if [ $rc -eq 2 ] && cmp -s m.csv "$tiny" && grep -q "names an input" err; then ok "output = input refused"; else fail "output = input: exit $rc, $(cat err)"; fi

# 3. The same file under two names is refused.
"$ada" plan --manifest "$tiny" --summary-json out.json --plan-out ./out.json >/dev/null 2>err
rc=$?
if [ $rc -eq 2 ] && [ ! -e out.json ]; then ok "two outputs, one file refused"; else fail "two outputs: exit $rc"; fi

# 4. A failed summary leaves the old plan as it was.
echo "OLD PLAN" >plan.jsonl
"$ada" plan --manifest "$tiny" --plan-out plan.jsonl --summary-json nodir/summary.json >/dev/null 2>err
rc=$?
if [ $rc -eq 2 ] && [ "$(cat plan.jsonl)" = "OLD PLAN" ]; then ok "failed summary keeps the old plan"; else fail "failed summary: exit $rc, plan.jsonl: $(head -c 40 plan.jsonl)"; fi
no_temps "failed summary"

# 5. SIGTERM while an output is open removes its temporary: the summary goes to a FIFO with
#    no reader, so the command waits in open() with the plan's temporary already made.
mkfifo fifo
"$ada" plan --manifest "$tiny" --plan-out sig.jsonl --summary-json fifo >/dev/null 2>err &
pid=$!
sleep 1
ls | grep -q 'sig.jsonl.tmp' || echo "note: the temporary was not there yet"
kill -TERM $pid
wait $pid
rc=$?
if [ $rc -eq 143 ] && [ ! -e sig.jsonl ]; then ok "SIGTERM: exit 143"; else fail "SIGTERM: exit $rc"; fi
no_temps "SIGTERM"
rm -f fifo

# 6. Stale temporaries of dead processes are swept; live ones stay.
sh -c 'exit 0' &
dead=$!
wait $dead
touch "plan2.jsonl.tmp.$dead.adaload" "keep.tmp.$$.adaload"
"$ada" plan --manifest "$tiny" --plan-out plan2.jsonl >/dev/null 2>err || fail "plan2: $(cat err)"
if [ ! -e "plan2.jsonl.tmp.$dead.adaload" ] && [ -e "keep.tmp.$$.adaload" ]; then ok "stale temporary swept"; else fail "sweep: $(ls)"; fi
rm -f "keep.tmp.$$.adaload"

# 7. --seed is decimal: 010 is ten.
"$ada" plan --manifest "$tiny" --seed 010 --summary-json s010.json >/dev/null 2>err || fail "seed 010: $(cat err)"
"$ada" plan --manifest "$tiny" --seed 10 --summary-json s10.json >/dev/null 2>err || fail "seed 10: $(cat err)"
if cmp -s s010.json s10.json; then ok "--seed 010 = --seed 10"; else fail "--seed 010 differs from --seed 10"; fi

# 8. Control bytes quoted by the JSON parser never reach the terminal.
mkdir -p esc
printf '{"benchmarks": [\033[31m]}' >esc/bench.json
"$ada" report esc >/dev/null 2>err
rc=$?
if [ $rc -eq 2 ] && ! grep -q "$(printf '\033')" err && [ "$(wc -l <err)" -eq 1 ]; then ok "control bytes escaped"; else fail "control bytes: exit $rc: $(od -c err | head -3)"; fi

# 9. A malformed entry after a good one: exit 2 (and, under the sanitizers, no leak).
mkdir -p bad
printf '{"benchmarks": [{"name": "a", "run_type": "iteration", "real_time": 1, "time_unit": "us"}, {"name": "b", "run_type": "iteration", "time_unit": "us"}]}' >bad/bench.json
"$ada" report bad >/dev/null 2>err
rc=$?
if [ $rc -eq 2 ]; then ok "report on a malformed entry: exit 2"; else fail "report malformed: exit $rc: $(head -3 err)"; fi

# 10. The gate never formats NULL: a failing case of this hash without its fields.
hash=$("$ada" version | sed -n 's/^kernel sources *\([0-9a-f]*\).*/\1/p')
mkdir -p gate/results/tb/verify/run
cat >gate/results/tb/verify/run/verify.json <<EOF
{"schema": "adaload.verify/1", "kernel_source_hash": "$hash", "backend": "cuda", "grid": "full",
 "all_passed": false, "sanitizers": {}, "cases": [{"pass": false}]}
EOF
"$ada" gate --results gate/results >/dev/null 2>err
rc=$?
if [ $rc -eq 1 ] && ! grep -q "(null)" err && grep -q "case 0" err; then ok "gate without case fields"; else fail "gate: exit $rc: $(cat err)"; fi

# 11. A custom file that cannot be written is named; exit 2; bench.json not left behind.
mkdir -p benchout/customSmallerIsBetter.json
"$ada" bench --set quick --no-gpu --filter '^cpu/ref' --out benchout >/dev/null 2>err
rc=$?
if [ $rc -eq 2 ] && grep -q "customSmallerIsBetter.json" err && [ ! -e benchout/bench.json ]; then ok "unwritable custom file"; else fail "custom file: exit $rc: $(cat err)"; fi

# 12. verify's files are one transaction: a summary that cannot be written leaves no
#     verify.json either (and exit 2).
mkdir -p vout/verify-summary.json
"$ada" verify --cpu-model --grid smoke --seed 5 --threads 2 --out vout >out 2>err
rc=$?
if [ $rc -eq 2 ] && [ ! -e vout/verify.json ] && grep -q "verify-summary.json" err && ! grep -q '^record:' out; then ok "verify: one transaction"; else fail "verify transaction: exit $rc, $(ls vout): $(cat err)"; fi
no_temps "verify transaction"

# 13. A run killed with SIGKILL leaves no visible run folder under results/ (only a hidden
#     staging folder, which `results check` ignores); the next run sweeps it and is published
#     whole and indexed.
mkdir -p kroot
ADALOAD_ROOT=$work/kroot ADALOAD_GIT_SHA=abcdef0123456789 "$ada" bench --set quick --no-gpu --filter '^cpu/ref' \
  --min-time 5 >/dev/null 2>&1 &
bpid=$!
i=0
until [ -n "$(find kroot/results -name '.*.partial.*' 2>/dev/null)" ] || [ $i -ge 300 ]; do
  sleep 0.1
  i=$((i + 1))
done
kill -9 $bpid
wait $bpid 2>/dev/null
kdir=$(find kroot/results -mindepth 2 -maxdepth 2 -type d -name bench)
visible=$(find "$kdir" -mindepth 1 -maxdepth 1 ! -name '.*')
staged=$(find "$kdir" -mindepth 1 -maxdepth 1 -name ".*.partial.$bpid")
if [ -z "$visible" ] && [ -n "$staged" ]; then ok "kill -9: no visible run folder"; else fail "kill -9: left '$visible', staged '$staged'"; fi
"$ada" results check --results kroot/results >/dev/null 2>err || fail "results check with a staging folder: $(cat err)"
ADALOAD_ROOT=$work/kroot ADALOAD_GIT_SHA=abcdef0123456789 "$ada" bench --set quick --no-gpu --filter '^cpu/ref' >out 2>err
rc=$?
run=$(sed -n 's/^run folder: //p' out)
case $run in */.*) run= ;; esac
if [ $rc -eq 0 ] && [ -f "$run/bench.json" ] && [ -f "$run/meta.json" ] && [ -z "$(find "$kdir" -name '.*')" ] &&
  "$ada" results check --results kroot/results >/dev/null 2>&1; then
  ok "the next run sweeps the stale staging folder, is published and indexed"
else
  fail "next run: exit $rc, '$run', $(ls -a "$kdir"): $(cat err)"
fi

if [ $fails -ne 0 ]; then
  echo "$fails case(s) failed"
  exit 1
fi
echo "all defect cases passed"
