#!/usr/bin/env bash
# ci/test_kernel_barriers.sh [WORK] -- ci/kernel_barriers.sh without a CUDA toolkit (CTest:
# kernel_barriers): a stand-in cuobjdump prints, for each object, `-elf` text of the shape the
# real one prints (a .nv.info.<kernel> section, EIATTR_NUM_BARRIERS, Format, Value); the check
# must pass one barrier everywhere and an allowed kernel's 16, fail an unlisted kernel's 16
# (naming it) and a 2, and say 77 without a cuobjdump and 2 without objects. Prints PASS, or
# FAIL and what differed.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-}
if [ -z "$work" ]; then work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; else rm -rf "$work"; mkdir -p "$work"; fi
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$work/b/kernels/CMakeFiles/k.dir"
# The stand-in reads the object's two lines "kernel value" and prints them as cuobjdump -elf does.
cat >"$work/cuobjdump" <<'STUB'
#!/usr/bin/env bash
[ "$1" = -elf ] || exit 9
while read -r fn v; do
  printf '.nv.info.%s\n\tAttribute:\tEIATTR_MAX_THREADS\n\tValue:\t0x100\n' "$fn"
  printf '\tAttribute:\tEIATTR_NUM_BARRIERS\n\tFormat:\tEIFMT_BVAL\n\tValue:\t%s\n\t<0x7>\n' "$v"
done <"$2"
STUB
chmod +x "$work/cuobjdump"
run() { CUOBJDUMP=$1 bash "$src/ci/kernel_barriers.sh" "$work/b" >"$work/out" 2>&1; echo $?; }
o=$work/b/kernels/CMakeFiles/k.dir
printf '_Z8fwd_tilev 0x1\n_Z7fwd_oddv 0x1\n' >"$o/a.cu.o"
printf '_ZN17lnmod_bulk_detail9bk_kernelEv 0x10\n' >"$o/b.cu.o"
[ "$(run "$work/cuobjdump")" = 0 ] || fail "one barrier, and an allowed kernel's 16: $(cat "$work/out")"
grep -q '(allowed)' "$work/out" || fail "the allowed kernel is not listed as allowed: $(cat "$work/out")"
printf '_Z8fwd_tilev 0x10\n_Z7fwd_oddv 0x1\n' >"$o/a.cu.o"
[ "$(run "$work/cuobjdump")" = 1 ] || fail "an unlisted kernel with 16 barriers passed: $(cat "$work/out")"
grep -q '^16 fwd_tile()' "$work/out" || fail "the unlisted kernel is not named: $(cat "$work/out")"
printf '_Z8fwd_tilev 0x1\n_Z7fwd_oddv 0x2\n' >"$o/a.cu.o"
[ "$(run "$work/cuobjdump")" = 1 ] || fail "an unlisted kernel with 2 barriers passed: $(cat "$work/out")"
[ "$(run "$work/none")" = 77 ] || fail "no cuobjdump: want 77: $(cat "$work/out")"
rm -f "$o"/*.o
[ "$(run "$work/cuobjdump")" = 2 ] || fail "no objects: want 2: $(cat "$work/out")"
echo PASS
