#!/usr/bin/env bash
# decide.sh DEVICE_LOG -- the landing rule of the H200 round, read from device.sh's log: over the
# `adaload compare` rows of the wan set (issue 22's 15 shapes at D 1536/3072/5120), both rounds,
# the chunk forward (new) against the row kernels (base). Exit 0 (land res-chunk.patch, the chunk
# ring at the Wan widths too) when no ratio new/base passes 1.005 and their mean is at most 0.99;
# exit 1 (land res-chunk-keep.patch: the three widths stay on the row kernels) otherwise; exit 2
# when the log has not all 30 rows. Prints the count, mean and largest ratio.
set -uo pipefail
if [ $# -ne 1 ] || [ ! -f "$1" ]; then echo "usage: decide.sh DEVICE_LOG" >&2; exit 2; fi
awk '
  /compare wan round/   { inwan = 1; next }
  /compare sweep round/ { inwan = 0 }
  inwan && $1 ~ /^lnmod_res_fwd\/dtile\// {
    r = $(NF - 2) + 0; n++; s += r; if (r > mx) mx = r
  }
  END {
    if (n != 30) { printf "decide: %d wan rows, not 30\n", n; exit 2 }
    printf "decide: %d rows, mean new/base %.4f, largest %.4f -> %s\n", n, s / n, mx,
           (mx <= 1.005 && s / n <= 0.99) ? "res-chunk (chunk at the Wan widths)" : "res-chunk-keep"
    exit (mx <= 1.005 && s / n <= 0.99) ? 0 : 1
  }' "$1"
