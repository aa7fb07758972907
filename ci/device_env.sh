# ci/device_env.sh -- sourced (not run) by ci/device_run.sh and ci/device_explore.sh on the GPU
# machine: goes to the repository root, exports the git facts that ci/device_bundle.sh wrote
# (.devbundle/git.env) and ADALOAD_ROOT, unpacks the carried libraries once, sets $out (the
# device tool's $OUT, else /tmp/adaload-out) and defines log().
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
set -a; . .devbundle/git.env; set +a
[ -d .devbundle/lib ] || tar -C .devbundle -xJf .devbundle/lib.tar.xz
export ADALOAD_ROOT=$root
out=${OUT:-/tmp/adaload-out}
mkdir -p "$out"
log() { echo "== $(date -u +%H:%M:%S) $*"; }
