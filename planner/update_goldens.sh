#!/usr/bin/env bash
# planner/update_goldens.sh [BUILD_DIR] -- rewrites planner/golden/ from the current build:
# runs every planner golden test with ADALOAD_UPDATE_GOLDENS=1, which writes the summaries
# and plan digests instead of comparing them. Review `git diff planner/golden` and commit
# with the reason for every changed golden in the message.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=${1:-$root/build}
cmake --build "$bdir" --target adaload gen_manifest
mkdir -p "$root/planner/golden"
ADALOAD_UPDATE_GOLDENS=1 ctest --test-dir "$bdir" -R '^planner_golden_' --output-on-failure
git -C "$root" status --short planner/golden
