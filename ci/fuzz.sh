#!/usr/bin/env bash
# ci/fuzz.sh [SECONDS] [TARGET...] -- build the libFuzzer targets of fuzz/ with clang
# (ASan + UBSan + libFuzzer, build-fuzz/) and run each for SECONDS (default 30) from its
# seed corpus fuzz/corpus/<target>/; new inputs go to build-fuzz/corpus/<target>/, never
# into the committed seeds. Fails (exit 1) on any finding: a crash, a sanitizer report, a
# leak, a timeout (10 s per input) or an input over 2 GB of memory; the input that found it
# is saved as build-fuzz/artifacts/<target>-crash-<sha1> (reproduce:
# build-fuzz/fuzz/<target> <that file>). CI (ci/test.sh) runs it with 30 s per target.
# To fuzz longer, e.g. an hour per target on all cores:
#   ci/fuzz.sh 3600              # or one target: ci/fuzz.sh 3600 fuzz_manifest
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_manifest fuzz_model fuzz_runs fuzz_lnmod_desc fuzz_catalog fuzz_dashboard fuzz_output)
bdir=$root/build-fuzz
if ! command -v clang >/dev/null 2>&1; then
  echo "ci/fuzz.sh: clang not found (ci/setup.sh installs it)" >&2
  exit 1
fi
CC=clang CXX=clang++ cmake -S "$root" -B "$bdir" -DADALOAD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >"$bdir.configure.log" 2>&1 || { cat "$bdir.configure.log"; exit 1; }
cmake --build "$bdir" -j "$(nproc)" --target fuzz_all
mkdir -p "$bdir/artifacts"
# libFuzzer writes what it finds to -artifact_prefix, and anything else (fork-mode logs, a
# minimized input) into the folder it runs in: that is build-fuzz/, never the source tree.
cd "$bdir"
status=0
for t in "${targets[@]}"; do
  name=${t#fuzz_}
  mkdir -p "$bdir/corpus/$name"
  echo "== fuzzing $t for $secs s"
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$bdir/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$bdir/artifacts/$t-" "$bdir/corpus/$name" "$root/fuzz/corpus/$name" \
       >"$bdir/$t.log" 2>&1; then
    grep -E "^Done|stat::number_of_executed_units" "$bdir/$t.log" | head -2
  else
    echo "ci/fuzz.sh: $t FOUND A PROBLEM (log: $bdir/$t.log):"
    grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$bdir/$t.log" | head -10
    status=1
  fi
done
# A target run by hand from the source tree (build-fuzz/fuzz/<target> without
# -artifact_prefix) leaves crash-<sha1> files where it ran: say so (.gitignore keeps them out
# of git, ci/layout_check.sh fails on a committed one).
stray=$(find "$root" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
          -o -name 'oom-*' -o -name 'slow-unit-*' \) 2>/dev/null || true)
[ -z "$stray" ] || echo "ci/fuzz.sh: libFuzzer artifacts in $root (from a run by hand; reproduce with" \
                        "build-fuzz/fuzz/<target> FILE, then keep as a named seed or delete):" $stray
exit $status
