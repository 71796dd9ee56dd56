#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: bench_plot.sh PLOT_SCRIPT OUTDIR LAUNCH_COMMAND...
# Runs a quick mpix-bench with --csv, renders it with bench/plot.py and checks that
# PNG files came out.
plot=$1 outdir=$2
shift 2
rm -rf "$outdir" && mkdir -p "$outdir" || exit 1
"$@" --quick --csv --reps 1 --warmup 0 storage rma >"$outdir/results.csv" || exit 1
python3 "$plot" "$outdir/results.csv" "$outdir" --prefix test || exit 1
count=0
for png in "$outdir"/*.png; do
    [ -f "$png" ] || continue
    head -c 8 "$png" | od -An -c | grep -q 'P   N   G' || { echo "bench_plot.sh: $png is not a PNG"; exit 1; }
    count=$((count + 1))
done
echo "bench_plot.sh: $count figures"
[ "$count" -ge 5 ]
