#!/bin/sh
# Usage: expect_abort.sh PATTERN COMMAND...
# Passes when COMMAND exits non-zero and its output contains PATTERN: for jobs that
# must be aborted by MPI's default error handler with a given message.
pattern=$1
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 0 ]; then
    echo "expect_abort: the job exited 0; it should have been aborted"
    exit 1
fi
if ! printf '%s' "$output" | grep -qF -- "$pattern"; then
    echo "expect_abort: the job failed (status $status) but its output lacks: $pattern"
    exit 1
fi
echo "expect_abort: aborted with status $status and the expected message"
exit 0
