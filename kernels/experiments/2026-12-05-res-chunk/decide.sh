#!/usr/bin/env bash
# decide.sh [--mean M] [--sweep-max S] DEVICE_LOG -- a landing rule read from device.sh's log:
# over the `adaload compare` rows of the wan set (issue 22's 15 shapes at D 1536/3072/5120), both
# rounds, new against base. Exit 0 (land new) when no wan ratio new/base passes 1.005 and their
# mean is at most M (default 0.99: round 2's rule for res-chunk against keep), and, with
# --sweep-max, no sweep row (both rounds) passes S; exit 1 (keep base) otherwise; exit 2 when the
# log has not all 30 wan rows (or, with --sweep-max, not all 28 sweep rows) or on bad usage.
# Prints the counts, the mean and the largest ratios.
set -uo pipefail
mean=0.99 smax=
while [ $# -gt 1 ]; do
  case $1 in
    --mean) mean=${2:-}; shift 2 ;;
    --sweep-max) smax=${2:-}; shift 2 ;;
    *) break ;;
  esac
done
if [ $# -ne 1 ] || [ ! -f "$1" ] || ! [[ "$mean" =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! [[ "$smax" =~ ^([0-9]+(\.[0-9]+)?)?$ ]]; then
  echo "usage: decide.sh [--mean M] [--sweep-max S] DEVICE_LOG" >&2
  exit 2
fi
awk -v mean="$mean" -v smax="$smax" '
  /compare wan round/   { set = "wan"; next }
  /compare sweep round/ { set = "sweep"; next }
  /^== /                { set = "" }
  set != "" && $1 ~ /^lnmod_res_fwd\/dtile\// {
    r = $(NF - 2) + 0
    if (set == "wan") { n++; s += r; if (r > mx) mx = r }
    else { ns++; if (r > smx) smx = r }
  }
  END {
    if (n != 30 || (smax != "" && ns != 28)) { printf "decide: %d wan rows (want 30), %d sweep rows (want 28 with --sweep-max)\n", n, ns; exit 2 }
    ok = mx <= 1.005 && s / n <= mean + 0 && (smax == "" || smx <= smax + 0)
    printf "decide: %d wan rows, mean new/base %.4f (at most %s), largest %.4f (at most 1.005)", n, s / n, mean, mx
    if (smax != "") printf "; %d sweep rows, largest %.4f (at most %s)", ns, smx, smax
    printf " -> %s\n", ok ? "land new" : "keep base"
    exit ok ? 0 : 1
  }' "$1"
