#!/bin/sh
# test_scale.sh ADALOAD WORK -- compare and report on 20,000 benchmark names (10,000 shapes x
# 2 variants, one repetition each, ~4.7 MB of bench.json per run) must each finish within
# 10 s (CTest: compare_report_scale). Before the hashed loader (issue 9) they took 9.95 s and
# 14.7 s (1.3 GB and 0.67 GB) on the CI machine even without the sanitizers; now ~0.3 s.
ada=$1
work=$2
rm -rf "$work" && mkdir -p "$work/a" "$work/b" || exit 1
cd "$work" || exit 1
gen() { # gen FILE BASE
  awk -v base="$2" 'BEGIN {
    printf "{\"context\": {}, \"benchmarks\": [";
    k = 0;
    for (i = 0; i < 10000; i++) for (v = 0; v < 2; v++) {
      n = sprintf("lnmod_fwd/%s/bf16-f32-bf16/sample/D%d/rows32760", v ? "naive" : "dtile", i);
      printf "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", \"real_time\": %d, \"time_unit\": \"us\", \"bytes_per_second\": 1e12}", k++ ? "," : "", n, n, base + i % 7;
    }
    print "]}" }' >"$1"
}
gen a/bench.json 100
gen b/bench.json 101
fails=0
for cmd in "compare a b" "report a"; do
  start=$(date +%s)
  # shellcheck disable=SC2086
  timeout 60 "$ada" $cmd >out.txt 2>err.txt
  rc=$?
  secs=$(( $(date +%s) - start ))
  # One repetition a side: compare says "too few repetitions to judge" (exit 4).
  ok=0; [ "$cmd" = "compare a b" ] && ok=4
  if [ $rc -ne $ok ] || [ $secs -gt 10 ]; then
    echo "FAIL: adaload $cmd: exit $rc after $secs s (limit 10 s)"; head -3 err.txt; fails=$((fails + 1))
  else
    echo "ok   adaload $cmd: $secs s, $(wc -l <out.txt) lines"
  fi
done
exit $fails
