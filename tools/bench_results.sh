#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs mpix-bench for the results page: one CSV per (subcommand, MPI, ranks) in
# bench/results/, each opening with comment lines that give its command, machine and
# date; then tools/results_page.py turns them into bench/results/README.md and figures.
# Usage: tools/bench_results.sh [-np N] [MPI...] [-- SUBCOMMAND...]
#   MPI: openmpi, mpich (default both; the builds in build/<mpi> are used)
# Run it on an otherwise idle machine: the samples are timed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/deps.sh"
ranks=2 mpis="" subcommands=""
while [ $# -gt 0 ]; do
    case $1 in
    -np) ranks=$2; shift 2 ;;
    --) shift; subcommands="$*"; break ;;
    *) mpis="$mpis $1"; shift ;;
    esac
done
mpis=${mpis:-openmpi mpich}
subcommands=${subcommands:-common storage hy spin zcopy zcopy-halo guard rma}
machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r)"
virtual=$(systemd-detect-virt 2>/dev/null || echo unknown)
for mpi in $mpis; do
    case $mpi in
    openmpi) launcher="mpirun.openmpi --oversubscribe" name="Open MPI" ;;
    mpich) launcher="mpirun.mpich" name="MPICH" ;;
    *) echo "bench_results.sh: unknown MPI '$mpi'" >&2; exit 2 ;;
    esac
    bench=$root/build/$mpi/bench/mpix-bench
    [ -x "$bench" ] || { echo "bench_results.sh: build $bench first (ninja -C build/$mpi)" >&2; exit 1; }
    for subcommand in $subcommands; do
        out=$root/bench/results/$subcommand-$mpi-${ranks}ranks.csv
        command="$launcher -np $ranks build/$mpi/bench/mpix-bench --csv $subcommand"
        echo "== $command"
        {
            echo "# command: $command"
            echo "# machine: $machine, virtualization: $virtual"
            echo "# date: $(date -u +%Y-%m-%d)"
            echo "# mpi: $name $(${launcher%% *} --version 2>&1 | grep -m1 -oE '[0-9]+\.[0-9]+\.[0-9]+')"
            (cd "$root" && $launcher -np "$ranks" "$bench" --csv "$subcommand" 2>&1)
        } >"$out.tmp" && mv "$out.tmp" "$out"
    done
done
python3 "$root/tools/results_page.py" "$root/bench/results"
