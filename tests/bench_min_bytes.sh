#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: bench_min_bytes.sh LAUNCH_COMMAND...
# mpix-bench --min-bytes: hy's sweep skips the smaller sizes and still times the rest
# (quick sizes: 8 B, 4 KiB, 1 MiB).
out=$("$@" --quick --csv --reps 1 --warmup 0 --min-bytes 4096 hy) || exit 1
rows() { printf '%s\n' "$out" | awk -F, -v bytes="$1" '$1 == "hy" && $3 == bytes' | wc -l; }
small=$(rows 8) page=$(rows 4096) large=$(rows 1048576)
echo "bench_min_bytes.sh: rows of 8 B: $small, 4 KiB: $page, 1 MiB: $large"
[ "$small" -eq 0 ] && [ "$page" -eq 9 ] && [ "$large" -eq 9 ]
