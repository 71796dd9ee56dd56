#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: preload_storage.sh VENDOR LIBRARY PROGRAM MPIRUN [ARGS...]
# Runs PROGRAM (tests/pmpi/plain_storage.c, an MPI program without mpix) five ways and
# has it check its files: plain MPI (no file may appear); LD_PRELOAD=LIBRARY with the
# hints in the program (files appear and hold the data); LD_PRELOAD with the hints on odd
# ranks only (their files appear, even ranks' windows stay memory); LD_PRELOAD with
# MPI_INFO_NULL and the hints from MPIX_STORAGE_DEFAULT_HINTS; LD_PRELOAD with
# MPIX_PMPI=none (plain).
vendor=$1 library=$2 program=$3
shift 3
work=$(mktemp -d /tmp/mpix-pmpi-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
status=0

# run NAME MODE EXPECT [VARIABLE=VALUE...]: one job in a fresh folder
run() {
    name=$1 mode=$2 expect=$3
    shift 3
    dir=$work/$name
    mkdir -p "$dir"
    environment=""
    for setting in "$@"; do
        setting=$(printf '%s' "$setting" | sed "s|@DIR@|$dir|g")
        if [ "$vendor" = openmpi ]; then
            environment="$environment -x $setting"
        else
            environment="$environment -genv ${setting%%=*} ${setting#*=}"
        fi
    done
    # shellcheck disable=SC2086 # the settings split into launcher arguments on purpose
    if output=$("$mpirun_command" $mpirun_args $environment "$program" "$mode" "$dir" "$expect" 2>&1); then
        echo "$name: $output"
    else
        echo "$name: FAILED"; echo "$output"; status=1
    fi
}
mpirun_command=$1
shift
mpirun_args="$*"

run plain hints none
run preloaded hints files "LD_PRELOAD=$library"
run odd_ranks odd files "LD_PRELOAD=$library"
run environment environment files "LD_PRELOAD=$library" \
    "MPIX_STORAGE_DEFAULT_HINTS=alloc_type=storage;storage_alloc_filename=@DIR@/env-%r-%w"
run switched_off hints none "LD_PRELOAD=$library" "MPIX_PMPI=none"
exit $status
