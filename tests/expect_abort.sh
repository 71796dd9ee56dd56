#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: expect_abort.sh PATTERN COMMAND...
# Passes when COMMAND exits non-zero and its output contains PATTERN: for jobs that
# must be aborted by MPI's default error handler with a given message.
# Open MPI 4.1 relays an aborting process's message to mpirun through ORTE's show_help,
# which now and then loses it ("ORTE_ERROR_LOG: Data unpack would read past end of
# buffer"): 3-5 runs in 20 of tests/test_errors_fatal on the 2-core VM, whatever
# MALLOC_PERTURB_ says. Only then is the job run again, at most eight times in all, so
# that a lost message fails the test about once in 10^5 runs, not once in 100.
pattern=$1
shift
for attempt in 1 2 3 4 5 6 7 8; do
    output=$("$@" 2>&1)
    status=$?
    printf '%s\n' "$output"
    if [ "$status" -eq 0 ]; then
        echo "expect_abort: the job exited 0; it should have been aborted"
        exit 1
    fi
    if printf '%s' "$output" | grep -qF -- "$pattern"; then
        echo "expect_abort: aborted with status $status and the expected message"
        exit 0
    fi
    if ! printf '%s' "$output" | grep -q "ORTE_ERROR_LOG"; then
        break
    fi
    echo "expect_abort: Open MPI lost the abort message (attempt $attempt); running again"
done
echo "expect_abort: the job failed (status $status) but its output lacks: $pattern"
exit 1
