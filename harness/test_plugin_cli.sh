#!/bin/sh
# test_plugin_cli.sh ADALOAD STUBDIR WORK [PLUGINDIR] -- `--plugin` of adaload verify and
# bench on the CPU: a good stub library is listed with its variants and the file's SHA-256;
# each refusal (missing file, not a library, no query symbol, another ABI version, a variant
# without a name, a duplicate name, across libraries too) exits 2 with one line naming the
# file and writes nothing; a plug-in that crashes while loading is reported by the
# supervising process (exit 1, the signal named), one killed by SIGTERM is an interrupt
# (128 + 15, no crash said); --plugin with --cpu-model is bad usage;
# without a GPU the run is skipped (77) after the plug-ins loaded. With PLUGINDIR (a CUDA
# build) the example plug-in and its planted-bug twin load and list "plugin:rowblock".
set -u
ada=$1 stubs=$2 work=$3 plugdir=${4:-}
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
# A crashing plug-in must die of its signal, not of ASan's report (the sanitizer build).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_abort=0"
good=$stubs/libadaload_stub_good.so

out=$("$ada" verify --list --plugin "$good" 2>&1) || fail "--list with a good plug-in exited $?: $out"
echo "$out" | grep -Eq '^  plugin:alpha +fwd only +forward only$' || fail "no plugin:alpha line: $out"
echo "$out" | grep -Eq '^  plugin:beta +fwd\+bwd ' || fail "no plugin:beta line: $out"
sha=$(sha256sum "$good" | cut -d' ' -f1)
echo "$out" | grep -q "library $good, sha256 $sha" || fail "the library line lacks the file's sha256 $sha: $out"

# A plug-in's own text reaches the terminal with its control bytes escaped.
out=$("$ada" verify --list --plugin "$stubs/libadaload_stub_other.so" 2>&1) || fail "--list other: $out"
echo "$out" | grep -Fq 'another library\x1b[2J' || fail "the description's escape byte is not escaped: $out"
printf '%s' "$out" | od -An -c | grep -q '033' && fail "a raw ESC byte reached the output"  # -An: no offsets, which can read 033

refuse() { # STUB-PATH WHAT
  : >"$work/err"
  (cd "$work" && "$ada" verify --plugin "$1" --out "$work/out" >"$work/stdout" 2>"$work/err")
  rc=$?
  [ "$rc" = 2 ] || fail "$1: exit $rc, want 2 ($(cat "$work/err"))"
  [ "$(wc -l <"$work/err")" = 1 ] || fail "$1: want one line on stderr: $(cat "$work/err")"
  grep -q "^adaload verify: --plugin $1: .*$2" "$work/err" || fail "$1: message lacks '$2': $(cat "$work/err")"
  [ -e "$work/out" ] && fail "$1: wrote $work/out"
  return 0
}
refuse "$work/missing.so" "No such file"
echo "text, not ELF" >"$work/text.so"
refuse "$work/text.so" "not a loadable library"
refuse "$stubs/libadaload_stub_noquery.so" "exports no adaload_plugin_query"
refuse "$stubs/libadaload_stub_abi2.so" "built for plug-in ABI version 2"
refuse "$stubs/libadaload_stub_noname.so" "variant 0 has no name"
refuse "$stubs/libadaload_stub_dup.so" "two variants are called alpha"
"$ada" verify --list --plugin "$good" --plugin "$stubs/libadaload_stub_other.so" >/dev/null 2>"$work/err"
rc=$?
[ "$rc" = 2 ] && grep -q "variant alpha is already loaded from $good" "$work/err" ||
  fail "duplicate across libraries: exit $rc, $(cat "$work/err")"

"$ada" verify --list --plugin "$stubs/libadaload_stub_crash.so" >"$work/stdout" 2>"$work/err"
rc=$?
[ "$rc" = 1 ] || fail "crashing plug-in: exit $rc, want 1 ($(cat "$work/err"))"
grep -q "a plug-in crashed the run: signal 11 .* $stubs/libadaload_stub_crash.so" "$work/err" ||
  fail "crash not reported: $(cat "$work/err")"

"$ada" verify --list --plugin "$stubs/libadaload_stub_term.so" >"$work/stdout" 2>"$work/err"
rc=$?
[ "$rc" = 143 ] && grep -q "^adaload verify: interrupted (signal 15" "$work/err" && ! grep -q crashed "$work/err" ||
  fail "a run killed from outside is an interrupt, not a crash: exit $rc, $(cat "$work/err")"

"$ada" verify --cpu-model --plugin "$good" --grid smoke 2>/dev/null
[ $? = 2 ] || fail "--plugin with --cpu-model: want exit 2"
"$ada" verify --plugin "$good" --no-record --grid smoke >/dev/null 2>&1
rc=$?
[ "$rc" = 77 ] || fail "no GPU here: want 77, got $rc"

# bench: refusals and crashes the same way; a run names the library and its hash in
# meta.json, and report says which variants are plug-ins.
"$ada" bench --set quick --no-gpu --plugin "$work/missing.so" --out "$work/b0" 2>"$work/err"
[ $? = 2 ] && grep -q "^adaload bench: --plugin $work/missing.so: cannot open it" "$work/err" && [ ! -e "$work/b0" ] ||
  fail "bench refusal: $(cat "$work/err")"
"$ada" bench --set quick --no-gpu --plugin "$stubs/libadaload_stub_crash.so" --out "$work/b1" 2>"$work/err" >/dev/null
[ $? = 1 ] && grep -q "adaload bench: a plug-in crashed the run: signal 11" "$work/err" || fail "bench crash: $(cat "$work/err")"
"$ada" bench --set quick --plugin "$good" --filter '^lnmod_fwd/plugin:alpha/' --out "$work/b2" >"$work/stdout" 2>&1
rc=$?
[ "$rc" = 77 ] || fail "bench of a plug-in without a GPU: exit $rc, want 77"
grep -q '^skipped (.*): lnmod_fwd/plugin:alpha/bf16-f32-bf16/sample/D1536/rows1560/graph7$' "$work/stdout" ||
  fail "no skip line of lnmod_fwd/plugin:alpha: $(head -5 "$work/stdout")"
"$ada" bench --set quick --no-gpu --plugin "$good" --filter '^cpu/ref_lnmod_fwd/' --repetitions 1 --min-time 0.001 \
  --out "$work/b3" >/dev/null 2>&1 || fail "bench --no-gpu with a plug-in exited $?"
python3 - "$work/b3/meta.json" "$good" "$sha" <<'PY' || fail "meta.json lacks the plug-in"
import json, sys
p = json.load(open(sys.argv[1]))["plugins"]
assert p == [{"path": sys.argv[2], "file_sha256": sys.argv[3], "abi_version": 1, "library": "test stub",
              "variants": ["plugin:alpha", "plugin:beta"]}], p
PY
"$ada" report "$work/b3" | grep -q "^Plug-in variants (.*): $good (sha256 $sha: plugin:alpha, plugin:beta)\.$" ||
  fail "report does not name the plug-ins: $("$ada" report "$work/b3" | head -4)"

if [ -n "$plugdir" ]; then
  for lib in libadaload_example_rowblock.so libadaload_example_rowblock_noeps.so; do
    out=$("$ada" verify --list --plugin "$plugdir/$lib" 2>&1) || fail "$lib: --list exited $?: $out"
    echo "$out" | grep -Eq '^  plugin:rowblock +fwd\+bwd +example plug-in' || fail "$lib: no plugin:rowblock: $out"
  done
  "$ada" verify --list --plugin "$plugdir/libadaload_example_rowblock_noeps.so" | grep -q "PLANTED BUG" ||
    fail "the planted-bug build does not say so"
fi
echo "plugin CLI: ok"
