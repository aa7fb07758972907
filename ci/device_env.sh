# ci/device_env.sh -- sourced (not run) by ci/device_run.sh and ci/device_explore.sh on the GPU
# machine: goes to the repository root, exports the git facts that ci/device_bundle.sh wrote
# (.devbundle/git.env) and ADALOAD_ROOT, unpacks the carried libraries once, sets $out (the
# device tool's $OUT, else /tmp/adaload-out) and defines log().
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
set -a; . .devbundle/git.env; set +a
[ -d .devbundle/lib ] || tar -C .devbundle -xJf .devbundle/lib.tar.xz
# The carried programs come compressed (ci/device_bundle.sh): unpack each whose plain file is
# missing, through a temporary name so a cut unpack leaves nothing that looks whole.
for z in .devbundle/*.xz; do
  case $z in *.tar.xz|'.devbundle/*.xz') continue ;; esac
  [ -e "${z%.xz}" ] && continue
  xz -dc "$z" >"${z%.xz}.part" && chmod +x "${z%.xz}.part" && mv "${z%.xz}.part" "${z%.xz}" || exit 2
done
export ADALOAD_ROOT=$root
out=${OUT:-/tmp/adaload-out}
mkdir -p "$out"
log() { echo "== $(date -u +%H:%M:%S) $*"; }
