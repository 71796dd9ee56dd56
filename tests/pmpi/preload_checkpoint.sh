#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: preload_checkpoint.sh VENDOR LIBRARY PROGRAM MPIRUN [ARGS...]
# Runs PROGRAM (tests/pmpi/plain_checkpoint.c, an MPI program without mpix) under
# LD_PRELOAD=LIBRARY with MPIX_PMPI=storage, storage,guard and storage,zcopy (every large
# non-contiguous message zero-copy): each time once until it kills itself after its last
# sync, then again on the same files to check what the window holds.
vendor=$1 library=$2 program=$3
shift 3
mpirun_command=$1
shift
work=$(mktemp -d /tmp/mpix-checkpoint-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
status=0
for modules in storage storage,guard storage,zcopy; do
    dir=$work/$modules
    mkdir -p "$dir"
    if [ "$vendor" = openmpi ]; then
        settings="-x LD_PRELOAD=$library -x MPIX_PMPI=$modules -x MPIX_ZCOPY_METHOD=direct"
    else
        settings="-genv LD_PRELOAD $library -genv MPIX_PMPI $modules -genv MPIX_ZCOPY_METHOD direct"
    fi
    # shellcheck disable=SC2086 # the settings split into launcher arguments on purpose
    "$mpirun_command" "$@" $settings "$program" run "$dir" >"$work/run.log" 2>&1
    if ! ls "$dir"/state-* >/dev/null 2>&1; then
        echo "$modules: the run left no storage file"; cat "$work/run.log"; status=1; continue
    fi
    # shellcheck disable=SC2086
    if output=$("$mpirun_command" "$@" $settings "$program" check "$dir" 2>&1); then
        echo "$modules: $output"
    else
        echo "$modules: FAILED"; echo "$output"; status=1
    fi
done
exit $status
