#!/usr/bin/env bash
# ci/test_ptx_entries.sh [WORK] -- ci/ptx_entries.py's verdicts on hand-written PTX (CTest;
# python3 and c++filt, no CUDA): a kernel whose registers are only numbered differently is
# "same"; one that gained an unused parameter (so another mangled name) is paired by its
# demangled name and "same-body"; swapped operands, another instruction and a moved label are
# "DIFFERS" (an anonymous namespace's "(anonymous namespace)" not taken for the parameter
# list); a kernel in one file only is "only-old"/"only-new"; the exit status follows; bad
# usage exits 2.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
py=$here/ptx_entries.py
# entry NAME PARAMS BODY: one .entry of a PTX file (BODY: the instructions)
entry() { printf '.visible .entry %s(\n%s\n)\n{\n%s\n}\n' "$1" "$2" "$3"; }
p1='	.param .u64 NAME_param_0'
p2='	.param .u64 NAME_param_0,
	.param .u64 NAME_param_1'
body_a='	.reg .b32 	%r<9>;
	ld.param.u64 	%rd1, [NAME_param_0];
	mov.u32 	%r5, %tid.x;
	add.s32 	%r6, %r5, %r4;
	setp.lt.s32 	%p1, %r6, 7;
	@%p1 bra 	$L__BB0_2;
	st.u32 	[%rd1], %r6;
$L__BB0_2:
	ret;'
# the same with the registers and the label numbered otherwise (another kernel's count before it)
body_a2=$(sed 's/%r5/%r15/g; s/%r6/%r16/g; s/%r4/%r14/g; s/%p1/%p3/g; s/%rd1/%rd7/g; s/BB0_2/BB3_5/g' <<<"$body_a")
body_swap=$(sed 's/add.s32 	%r6, %r5, %r4/add.s32 	%r6, %r4, %r5/' <<<"$body_a")
body_op=$(sed 's/add.s32/sub.s32/' <<<"$body_a")
body_lab=$(sed 's/^\$L__BB0_2:$/	ret;\n$L__BB0_2:/' <<<"$body_a")
k() { sed "s/NAME/$1/g" <<<"$2"; } # the parameter names carry the kernel's mangled name
mk() { # mk FILE NAME PARAMS BODY ... (pairs of NAME PARAMS BODY)
  local f=$1; shift; : >"$f"
  while [ $# -ge 3 ]; do entry "$1" "$(k "$1" "$2")" "$(k "$1" "$3")" >>"$f"; shift 3; done
}
# _Z4kernPf = kern(float*), _Z4kernPfS_ = kern(float*, float*), _Z5otherPf, _Z5thirdPf, ...
mk old.ptx _Z4kernPf "$p1" "$body_a"  _Z5otherPf "$p1" "$body_a"  _Z5thirdPf "$p1" "$body_a" \
  _Z6fourthPf "$p1" "$body_a"  _Z5fifthPf "$p1" "$body_a"  _Z4gonePf "$p1" "$body_a" \
  _ZN12_GLOBAL__N_14annoEPf "$p1" "$body_a"
mk new.ptx _Z4kernPfS_ "$p2" "$body_a"  _Z5otherPf "$p1" "$body_a2"  _Z5thirdPf "$p1" "$body_swap" \
  _Z6fourthPf "$p1" "$body_op"  _Z5fifthPf "$p1" "$body_lab"  _Z5addedPf "$p1" "$body_a" \
  _ZN12_GLOBAL__N_14annoEPfPi "$p2" "$body_a2"
out=$(python3 "$py" old.ptx new.ptx); rc=$?
echo "$out"
[ "$rc" = 1 ] || fail "exit $rc, want 1 (kernels differ)"
want() { grep -qE "^$1 +$2( |\$)" <<<"$out" || fail "want '$1 $2'"; }
want same-body kern
want same-body '\(anonymous namespace\)::anno' # "(anonymous namespace)": not the parameter list
want same other
want DIFFERS third
want DIFFERS fourth
want DIFFERS fifth
want only-old gone
want only-new added
grep -qx '1 same, 2 same-body, 3 DIFFERS, 1 only-old, 1 only-new' <<<"$out" ||
  fail "the counts line: $(tail -1 <<<"$out")"
# a file against itself (and against its renumbered twin): exit 0
mk a.ptx _Z5otherPf "$p1" "$body_a"
mk b.ptx _Z5otherPf "$p1" "$body_a2"
python3 "$py" a.ptx b.ptx >ab.txt || fail "renumbered twin: exit $?, want 0"
grep -q '^1 same, 0 same-body, 0 DIFFERS' ab.txt || fail "renumbered twin: $(tail -1 ab.txt)"
# bad usage and unreadable input
python3 "$py" a.ptx >/dev/null 2>&1; [ $? = 2 ] || fail "one argument: want exit 2"
python3 "$py" a.ptx missing.ptx >/dev/null 2>&1; [ $? = 2 ] || fail "a missing file: want exit 2"
echo "ptx_entries: ok"
