#!/bin/sh
# test_exit_codes.sh ADALOAD SRC WORK [FAILALLOC_SO] -- every subcommand through every exit
# class it can produce (the rule in README.md, "Exit codes"; CTest: cli_exit_codes):
#   0 ok, 1 a check failed, 2 bad usage / bad input / an output that cannot be written,
#   3 an internal or resource failure (driven here by FAILALLOC_SO, an LD_PRELOAD library
#     that makes big allocations fail; skipped when not given, e.g. under the sanitizers),
#   77 nothing can run here (no GPU; skipped where this machine has one).
# Classes a subcommand cannot produce are named in the table at the end, with why.
ada=$1
src=$2
work=$3
failalloc=${4:-}
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
fails=0
# A copy: an output-names-the-input case must never risk a file of the source tree.
cp "$src/datasets/tiny.csv" "$work/tiny.csv" || exit 1
tiny=$work/tiny.csv

# expect CODE WHAT CMD... : runs CMD (stdout to $work/out, stderr to $work/err) and checks
# the exit code, and that a failure said something on one line.
expect() {
  want=$1 what=$2
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want: $*"
    sed 's/^/  stderr: /' "$work/err" | head -5
    fails=$((fails + 1))
  elif [ "$want" -ne 0 ] && [ "$want" -ne 77 ] && ! grep -q . "$work/err" && ! grep -q . "$work/out"; then
    echo "FAIL: $what: exit $want without a message: $*"
    fails=$((fails + 1))
  else
    echo "ok   $want  $what"
  fi
}

oom() { # oom LIMIT WHAT CMD... : exit 3 when allocations above LIMIT bytes fail
  limit=$1 what=$2
  shift 2
  if [ -n "$failalloc" ]; then
    expect 3 "$what" env LD_PRELOAD="$failalloc" ADALOAD_FAIL_ABOVE="$limit" "$@"
  else
    echo "skip 3  $what (no allocation-failure library in this build)"
  fi
}

gpu=0
"$ada" env --json 2>/dev/null | grep -q '"sm_count"' && gpu=1

# Synthetic Google Benchmark files: a, a 2x slower b.
gb() { # gb FILE BASE_US [REPETITIONS]
  printf '{"context": {}, "benchmarks": [' >"$1"
  i=0
  while [ $i -lt "${3:-9}" ]; do
    [ $i -gt 0 ] && printf ',' >>"$1"
    printf '{"name": "lnmod_fwd/dtile/bf16-f32-bf16/sample/D8/rows8", "run_name": "lnmod_fwd/dtile/bf16-f32-bf16/sample/D8/rows8", "run_type": "iteration", "real_time": %s.%s, "time_unit": "us", "bytes_per_second": 1e12}' "$2" "$i" >>"$1"
    i=$((i + 1))
  done
  printf ']}\n' >>"$1"
}
# 2000 names: the loader's tables outgrow the allocation limit of the out-of-memory case.
gbmany() {
  printf '{"context": {}, "benchmarks": [' >"$1"
  i=0
  while [ $i -lt 2000 ]; do
    [ $i -gt 0 ] && printf ',' >>"$1"
    printf '{"name": "n%s", "run_type": "iteration", "real_time": 1.5, "time_unit": "us"}' "$i" >>"$1"
    i=$((i + 1))
  done
  printf ']}\n' >>"$1"
}
mkdir -p runa runb runq runq3 nobench many
gb runq/bench.json 100 3
gb runq3/bench.json 300 3
gbmany many/bench.json
gb runa/bench.json 100
gb runb/bench.json 200
echo "plain text" >notafolder

# ---- version, env, run -----------------------------------------------------------------------
expect 0 "version" "$ada" version
expect 2 "version: unexpected argument" "$ada" version extra
expect 0 "env" "$ada" env
expect 0 "env --json" "$ada" env --json
expect 2 "env: unknown option" "$ada" env --bogus
expect 2 "env: repeated option" "$ada" env --json --json
expect 0 "run (env, GPU steps skipped or run, the planner)" "$ada" run
expect 2 "run: unknown option" "$ada" run --bogus
expect 2 "adaload: unknown command" "$ada" nosuchcommand

# ---- plan -----------------------------------------------------------------------------------
expect 0 "plan" "$ada" plan --manifest "$tiny" --summary-json plan-summary.json
expect 2 "plan: bad option value" "$ada" plan --manifest "$tiny" --gpus 0
expect 2 "plan: repeated option" "$ada" plan --manifest "$tiny" --gpus 4 --gpus 8
expect 2 "plan: bad input" "$ada" plan --manifest "$src/planner/testdata/fraction.csv"
expect 2 "plan: output that cannot be written" "$ada" plan --manifest "$tiny" --summary-json notafolder/x.json
expect 2 "plan: output names the input" "$ada" plan --manifest "$tiny" --summary-json "$tiny"
oom 100000 "plan: out of memory" "$ada" plan --manifest "$src/datasets/default.csv"

# ---- verify -----------------------------------------------------------------------------------
expect 0 "verify (CPU model)" "$ada" verify --cpu-model --grid smoke --seed 1 --threads 2
expect 1 "verify: a wrong model is caught" "$ada" verify --cpu-model --grid smoke --seed 1 --threads 2 --variant model_onepass
expect 2 "verify: bad option" "$ada" verify --grid huge
expect 2 "verify: --seed in octal is not octal, 0x is junk" "$ada" verify --cpu-model --seed 0x10
expect 2 "verify: --out that cannot be a folder" "$ada" verify --cpu-model --grid smoke --out notafolder/run
oom 100000 "verify: out of memory" "$ada" verify --cpu-model --grid smoke --seed 1 --threads 1
if [ $gpu -eq 0 ]; then
  expect 77 "verify: no GPU here" "$ada" verify --grid smoke
else
  echo "skip 77 verify (this machine has a GPU)"
fi

# ---- gate -------------------------------------------------------------------------------------
expect 0 "gate (the committed record)" "$ada" gate
expect 1 "gate: no record for this hash" "$ada" gate --hash 0000000000000000000000000000000000000000000000000000000000000000 --hash-v2 0000000000000000000000000000000000000000000000000000000000000000
expect 2 "gate: bad hash" "$ada" gate --hash nothex
expect 2 "gate: --results not a folder" "$ada" gate --results "$work/nonexistent"

# ---- bench --------------------------------------------------------------------------------------
expect 0 "bench (CPU reference only)" "$ada" bench --set quick --no-gpu --filter '^cpu/ref' --out "$work/bench-ok"
expect 2 "bench: unknown set" "$ada" bench --set nope
expect 2 "bench: --out is a file" "$ada" bench --set quick --no-gpu --out notafolder
expect 2 "bench: a filter that selects nothing" "$ada" bench --set quick --no-gpu --filter nomatch --out "$work/bench-none"
[ ! -e "$work/bench-none" ] || { echo "FAIL: bench --filter nomatch left $work/bench-none"; fails=$((fails + 1)); }
if [ $gpu -eq 0 ]; then
  expect 77 "bench: only GPU benchmarks, no GPU" "$ada" bench --set quick --filter '^lnmod_fwd/' --out "$work/bench-gpu"
  [ ! -e "$work/bench-gpu" ] || { echo "FAIL: bench exit 77 left $work/bench-gpu"; fails=$((fails + 1)); }
else
  echo "skip 77 bench (this machine has a GPU)"
fi

# ---- compare, report -------------------------------------------------------------------------------
expect 0 "compare: same" "$ada" compare runa runa
expect 1 "compare: B is 2x slower" "$ada" compare runa runb
expect 4 "compare: 3 repetitions a side cannot judge a 3x slowdown" "$ada" compare runq runq3
expect 2 "compare: missing run" "$ada" compare runa "$work/nonexistent"
expect 2 "compare: --alpha out of range" "$ada" compare runa runb --alpha 2
oom 100000 "compare: out of memory" "$ada" compare many many
expect 0 "report" "$ada" report runa
expect 2 "report: --variant not in the run" "$ada" report runa --variant nosuch
expect 2 "report: folder without bench.json" "$ada" report nobench
grep -q "cannot open" "$work/err" || { echo "FAIL: report nobench: $(cat "$work/err")"; fails=$((fails + 1)); }

# ---- results, dashboard, calibrate -------------------------------------------------------------
mkdir -p rs/tb/bench/2026-01-01T000000Z_abcdef0
echo '{"git_sha": "abcdef0123", "git_dirty": false, "kernel_source_hash": "x", "command_line": "adaload bench"}' \
  >rs/tb/bench/2026-01-01T000000Z_abcdef0/meta.json
echo '{"benchmarks": []}' >rs/tb/bench/2026-01-01T000000Z_abcdef0/bench.json
expect 0 "results list" "$ada" results list
expect 1 "results check: a run the index lacks" "$ada" results check --results rs
expect 2 "results: unknown action" "$ada" results bogus
expect 2 "results: --results not a folder" "$ada" results list --results "$work/nonexistent"
expect 0 "dashboard" "$ada" dashboard --out "$work/site"
expect 2 "dashboard: --out is a file" "$ada" dashboard --out notafolder
expect 2 "calibrate: no --out" "$ada" calibrate
if ! python3 -c 'import torch' 2>/dev/null || [ $gpu -eq 0 ]; then
  expect 77 "calibrate: no PyTorch or no GPU here" "$ada" calibrate --out "$work/profile.csv"
else
  echo "skip 77 calibrate (PyTorch and a GPU are here)"
fi

cat <<'EOF'
classes a subcommand cannot produce:
  version, env    only 0 and 2 (nothing to check, nothing that can run out)
  run             the worst of its steps (1 when a step failed; its steps are tested above)
  plan, report    no check to fail (1); report and compare need no GPU (77)
  gate, compare   no GPU needed (77); gate's allocations are small (3)
  bench           1 needs a benchmark that reports an error (covered by bench_cli on a GPU)
  results         1 only for check; dashboard none (it checks nothing); calibrate 0/1 need a GPU
EOF
if [ $fails -ne 0 ]; then
  echo "$fails case(s) failed"
  exit 1
fi
echo "all exit-code cases passed"
