#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: with_tmpfs.sh SIZE COMMAND...
# Runs COMMAND DIR where DIR is a fresh tmpfs of SIZE (e.g. 1m), so a test can fill a
# real file system. Needs root (mount); exits 77 (skipped) without it.
size=$1
shift
dir=$(mktemp -d /tmp/mpix-test-tmpfs-XXXXXX) || exit 1
if ! mount -t tmpfs -o size="$size",mode=0700 mpix-test "$dir" 2>/dev/null; then
    echo "with_tmpfs.sh: cannot mount a tmpfs (not root?): skipped"
    rmdir "$dir"
    exit 77
fi
"$@" "$dir"
status=$?
umount "$dir" && rmdir "$dir"
exit $status
