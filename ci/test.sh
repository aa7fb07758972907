#!/usr/bin/env bash
# ci/test.sh -- the whole test suite: install what is missing, then
#   1. an AddressSanitizer + UndefinedBehaviorSanitizer build of the CPU code and its tests
#      (build-asan/);
#   2. the libFuzzer targets, $ADALOAD_FUZZ_SECONDS (default 30) seconds each (ci/fuzz.sh);
#   3. the normal build (build/, GPU kernels too when a CUDA toolkit is present) and all
#      tests; GPU tests report "skipped" by name on a machine without a GPU.
# Exits non-zero if any step fails; the last line is ctest's summary of the normal build.
# .ci/run runs exactly this.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/ci/setup.sh"
jobs=$(nproc)
echo "== ASan + UBSan build and tests (CPU code)"
"$root/ci/build.sh" "$root/build-asan" -DADALOAD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" -LE gpu
echo "== fuzzing"
"$root/ci/fuzz.sh" "${ADALOAD_FUZZ_SECONDS:-30}"
echo "== build and tests"
"$root/ci/build.sh" "$root/build"
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"
