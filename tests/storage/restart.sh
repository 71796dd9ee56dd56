#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: restart.sh LAUNCH_COMMAND...  (e.g. mpirun -np 2 ./test_storage_restart)
# Runs the job twice on one fresh directory: "write" syncs its windows and then every
# rank dies by SIGKILL; "check" allocates the same windows and must find the data.
dir=$(mktemp -d /tmp/mpix-test-restart-XXXXXX) || exit 1
"$@" write "$dir"
status=$?
if [ "$status" -eq 0 ]; then
    echo "restart.sh: the writing job exited 0; its ranks should have been killed"
    rm -rf "$dir"
    exit 1
fi
echo "restart.sh: the writing job died as planned (status $status); restarting"
"$@" check "$dir"
status=$?
rm -rf "$dir"
exit $status
