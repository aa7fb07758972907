#!/bin/sh
# test_cli_defects17.sh ADALOAD SRC WORK -- the loud failures of issue 17 that live in the
# CLI, each through the real program (CTest: cli_defects17); every case failed on the build
# before the fix: standard output that cannot be written (/dev/full) is exit 2 in every
# subcommand; dashboard --results of a missing folder is exit 2 with no site written; compare
# of two runs with no benchmark in common is exit 2; results list --since of a non-date is
# exit 2; --summary-json /dev/stdout into a pipe is written through; calibrate --points
# garbage is 2, not 77; the site does not publish the results folder's absolute path;
# terminal escapes in model and benchmark names never reach stdout raw.
ada=$1
src=$2
work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
ok() { echo "ok   $*"; }
esc=$(printf '\033')

# A bench run folder with one benchmark named $2 (9 repetitions).
bench_dir() {
  mkdir -p "$1"
  python3 - "$1" "$2" <<'PY'
import json, sys
d, n = sys.argv[1], sys.argv[2]
b = [{"name": n, "run_name": n, "run_type": "iteration", "repetitions": 9, "repetition_index": k,
      "real_time": 5.0 + 0.01 * k, "time_unit": "us", "pct_copy_bw": 50.0} for k in range(9)]
json.dump({"context": {"adaload_set": "wan"}, "benchmarks": b}, open(d + "/bench.json", "w"))
PY
}
bench_dir A "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760"
bench_dir B "lnmod_fwd/dtile/bf16-f32-bf16/sample/D3072/rows32760"
bench_dir E "lnmod_fwd/dt${esc}[31mile/bf16-f32-bf16/sample/D1536/rows32760"

# 1. Standard output that cannot be written: exit 2 and one line naming it, in every subcommand.
if [ -w /dev/full ]; then
  for c in "env" "env --json" "version" "gate --help" "results list" "results testbed" "results check" "plan --manifest $src/datasets/tiny.csv" \
           "verify --list" "report A" "compare A A" "dashboard --help" "calibrate --help" "bench --help" "run --help"; do
    # shellcheck disable=SC2086
    "$ada" $c >/dev/full 2>err
    rc=$?
    if [ $rc -eq 2 ] && grep -q "cannot write standard output" err; then ok "/dev/full: $c"; else fail "/dev/full: $c: exit $rc: $(cat err)"; fi
  done
else
  echo "skip /dev/full (not writable here)"
fi

# 2. dashboard --results of a folder that does not exist: exit 2, no site.
"$ada" dashboard --results nope --out site >/dev/null 2>err
rc=$?
if [ $rc -eq 2 ] && [ ! -e site ]; then ok "dashboard --results nope"; else fail "dashboard --results nope: exit $rc, $(ls site 2>&1)"; fi

# 3. compare of two runs with no benchmark in common.
"$ada" compare A B >/dev/null 2>err
rc=$?
if [ $rc -eq 2 ] && grep -q "no benchmark in common" err; then ok "compare: nothing in common"; else fail "compare A B: exit $rc: $(cat err)"; fi

# 4. results list --since / --until of a non-date.
for d in yesterday 29.11.2026 2026-13x; do
  "$ada" results list --since "$d" >/dev/null 2>err
  rc=$?
  if [ $rc -eq 2 ] && grep -q -- "--since $d" err; then ok "results list --since $d"; else fail "--since $d: exit $rc: $(cat err)"; fi
done
"$ada" results list --since 2026-11-29 >/dev/null 2>err || fail "--since 2026-11-29: $(cat err)"

# 5. --summary-json /dev/stdout into a pipe: written through, not refused as a dangling link.
"$ada" plan --manifest "$src/datasets/tiny.csv" --summary-json /dev/stdout 2>err | cat >piped
if grep -q '"buckets"' piped && [ ! -s err ]; then ok "--summary-json /dev/stdout into a pipe"; else fail "/dev/stdout pipe: $(cat err)"; fi

# 6. calibrate --points garbage: bad usage (2) before "nothing can run here" (77).
"$ada" calibrate --points garbage --out p.csv >/dev/null 2>err
rc=$?
if [ $rc -eq 2 ] && [ ! -e p.csv ]; then ok "calibrate --points garbage"; else fail "calibrate --points garbage: exit $rc"; fi

# 7. The site names the results folder, not the machine's absolute path.
mkdir -p res/tb/bench && cp -r A res/tb/bench/2026-01-01T000000Z_aaaaaaa
printf '{"git_sha": "%s", "git_dirty": false, "kernel_source_hash": "k", "command_line": "b"}\n' aaaaaaa >res/tb/bench/2026-01-01T000000Z_aaaaaaa/meta.json
"$ada" dashboard --results "$work/res" --out site2 >/dev/null 2>err
if [ $? -eq 0 ] && ! grep -q "$work" site2/data.js site2/index.html; then ok "no absolute path in the site"; else fail "site: $(grep -o "\"results\":\"[^\"]*\"" site2/data.js) $(cat err)"; fi

# 8. Terminal escapes in names: escaped on stdout (plan's model name, compare, report).
python3 - "$src/datasets/models/wan2.1-14b.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["name"] = "evil\u001b[31mred\u001b]0;title\u0007"
json.dump(m, open("evil.json", "w"))
PY
"$ada" plan --model-file evil.json --manifest "$src/datasets/tiny.csv" >out 2>err
if grep -q "$esc" out; then fail "plan: an escape byte of the model name reached stdout"; elif grep -q 'evil\\x1b' out; then ok "plan: model name escaped"; else fail "plan: $(head -3 out) $(cat err)"; fi
"$ada" compare E E >out 2>err
if grep -q "$esc" out || ! grep -q 'dt\\x1b\[31mile' out; then fail "compare: escape byte on stdout: $(cat out)"; else ok "compare: benchmark name escaped"; fi
"$ada" report E >out 2>err
if grep -q "$esc" out || ! grep -q 'dt\\x1b\[31mile' out; then fail "report: escape byte on stdout: $(cat out)"; else ok "report: benchmark name escaped"; fi

echo "$fails failure(s)"
[ $fails -eq 0 ]
