#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: preload_check.sh VENDOR GUARD_LIBRARY PLAIN INJECTED MPIRUN [ARGS...] -np N
# Runs PLAIN (an MPI program without mpix) as it is and under LD_PRELOAD=GUARD_LIBRARY,
# and INJECTED (the same source built with -include mpix/guard_inject.h; "-" for none,
# as for a Fortran program). All runs must print the same thing, and the guarded runs
# must report guarded transfers
# (MPIX_VERBOSE=1 prints guard's counters at MPI_Finalize). MPIX_PMPI, when set, is
# passed to the preloaded run (libmpix-pmpi.so guards only with MPIX_PMPI=guard).
# MPIX_TEST_GUARD=plain: the guarded runs must instead have chosen the plain calls (an
# OpenMP program, whose worker threads read the buffers); MPIX_TEST_GUARD=paused: both,
# plain calls while the program's own threads ran and guarded transfers otherwise.
# MPIX_TEST_GUARD_EXPOSED=N: the guarded runs' ranks together must have finished at
# least N transfers on memory other processes reach (windows) in their call.
vendor=$1 library=$2 plain=$3 injected=$4
shift 4
mpirun=$1
shift
if [ "$vendor" = openmpi ]; then
    pass_env="-x LD_PRELOAD=$library -x MPIX_VERBOSE=1${MPIX_PMPI:+ -x MPIX_PMPI=$MPIX_PMPI}"
else
    pass_env="-genv LD_PRELOAD $library -genv MPIX_VERBOSE 1${MPIX_PMPI:+ -genv MPIX_PMPI $MPIX_PMPI}"
fi
expected=$("$mpirun" "$@" "$plain") || { echo "plain run failed"; exit 1; }
preloaded=$("$mpirun" $pass_env "$@" "$plain" 2>/tmp/mpix-preload-$$.err) || {
    cat /tmp/mpix-preload-$$.err; echo "preloaded run failed"; exit 1; }
runs=preload
if [ "$injected" != - ]; then
    runs="preload inject"
    injected_out=$(MPIX_VERBOSE=1 "$mpirun" "$@" "$injected" 2>/tmp/mpix-inject-$$.err) || {
        cat /tmp/mpix-inject-$$.err; echo "injected run failed"; exit 1; }
fi
printf 'plain:\n%s\npreloaded:\n%s\n' "$expected" "$preloaded"
status=0
for run in $runs; do
    if [ "${MPIX_TEST_GUARD:-}" = plain ] || [ "${MPIX_TEST_GUARD:-}" = paused ]; then
        choice=$(grep "guard: plain blocking calls" /tmp/mpix-$run-$$.err | head -1)
        echo "$run: $choice"
        [ -n "$choice" ] || { echo "$run: guard did not choose the plain calls"; status=1; }
        [ "$MPIX_TEST_GUARD" = plain ] && continue
    fi
    counters=$(grep "guard:.*receives" /tmp/mpix-$run-$$.err | head -1)
    echo "$run: $counters"
    # Every rank's total ("N receives,", not "N receives done while polled" further on):
    # some programs receive on one rank only.
    received=$(grep "guard:.*receives" /tmp/mpix-$run-$$.err | grep -o "[0-9]* receives," |
               awk '{ total += $1 } END { print total + 0 }')
    [ "$received" -gt 0 ] || { echo "$run: no guarded receive was made"; status=1; }
    if [ -n "${MPIX_TEST_GUARD_EXPOSED:-}" ]; then
        exposed=$(grep -o "[0-9]* on memory other processes reach" /tmp/mpix-$run-$$.err |
                  awk '{ total += $1 } END { print total + 0 }')
        echo "$run: $exposed transfers on memory other processes reach finished in their call"
        [ "$exposed" -ge "$MPIX_TEST_GUARD_EXPOSED" ] || {
            echo "$run: expected at least $MPIX_TEST_GUARD_EXPOSED"; status=1; }
    fi
done
rm -f /tmp/mpix-preload-$$.err /tmp/mpix-inject-$$.err
[ "$expected" = "$preloaded" ] || { echo "LD_PRELOAD changed the results"; status=1; }
if [ "$injected" != - ]; then
    printf 'injected:\n%s\n' "$injected_out"
    [ "$expected" = "$injected_out" ] || { echo "guard_inject.h changed the results"; status=1; }
fi
exit $status
