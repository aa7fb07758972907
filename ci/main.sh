#!/usr/bin/env bash
# ci/main.sh -- the main job: install what is missing, build, run `adaload run` on the
# embedded defaults (env; verification and quick benchmarks when a GPU is present; the
# planner on the default manifest under both policies).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/ci/setup.sh"
"$root/ci/build.sh" "$root/build"
exec "$root/build/adaload" run
