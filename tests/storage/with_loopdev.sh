#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: with_loopdev.sh SIZE COMMAND...
# Runs COMMAND DEVICE where DEVICE is a fresh loop block device of SIZE bytes over a
# temporary image. Needs root (losetup); exits 77 (skipped) without it.
size=$1
shift
image=$(mktemp /tmp/mpix-test-image-XXXXXX) || exit 1
truncate -s "$size" "$image"
if ! device=$(losetup -f --show "$image" 2>/dev/null); then
    echo "with_loopdev.sh: cannot attach a loop device (not root?): skipped"
    rm -f "$image"
    exit 77
fi
"$@" "$device"
status=$?
losetup -d "$device"
rm -f "$image"
exit $status
