#!/usr/bin/env bash
# ci/setup.sh -- install what adaload needs from Debian packages; idempotent (skips what is
# present, runs apt-get only when something is missing). The CUDA toolkit is optional and is
# never installed here: with it the GPU kernels are built, without it everything else is.
# chromium (headless) and a font are for the dashboard's browser test (dashboard_browser).
set -euo pipefail
# clang-14 + libclang-rt-14-dev: libFuzzer and the sanitizer runtimes for ci/fuzz.sh.
pkgs=(cmake make gcc g++ pkg-config libopenblas-dev libcriterion-dev libbenchmark-dev
      libjansson-dev python3 chromium fonts-dejavu-core clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "ci/setup.sh: all dependencies present"
  exit 0
fi
echo "ci/setup.sh: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
