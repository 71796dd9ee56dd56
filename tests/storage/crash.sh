#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: crash.sh TRIALS LAUNCH_COMMAND...  (e.g. crash.sh 6 mpirun -np 2 ./test_storage_crash)
# Each trial starts "loop" on one directory, kills every rank with SIGKILL at a random
# instant, and runs "check": the window must hold exactly one completed generation.
# As root, the directory is an ext4 file system on a loop device, and each kill also
# copies the image: the copy is what a node that lost power would find on its disk
# (what the file system had not yet written is not in it), and is checked too.
trials=$1
shift
work=$(mktemp -d /tmp/mpix-test-crash-XXXXXX) || exit 1
dir=$work/dir
mkdir -p "$dir"
image=""
if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null 2>&1; then
    image=$work/disk.img
    truncate -s 64m "$image" && mkfs.ext4 -q -F "$image" && mount -o loop "$image" "$dir" || image=""
fi
[ -n "$image" ] || echo "crash.sh: no loop-mounted ext4 (not root?): process crashes only"
mkdir -p "$work/copy"
cleanup() {
    pkill -9 -f "test_storage_crash loop $dir" 2>/dev/null
    mountpoint -q "$work/copy" && umount "$work/copy"
    mountpoint -q "$dir" && umount "$dir"
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
status=0
trial=1
while [ "$trial" -le "$trials" ] && [ "$status" -eq 0 ]; do
    "$@" loop "$dir" >/dev/null 2>&1 &
    # 0.3 to 1.8 s: MPI start-up, then some hundred syncs, killed anywhere in them.
    sleep "$(awk -v seed="$$$trial" 'BEGIN { srand(seed); printf "%.3f", 0.3 + rand() * 1.5 }')"
    pkill -9 -f "test_storage_crash loop $dir"
    [ -n "$image" ] && cp --sparse=always "$image" "$work/copy.img"
    wait
    echo "crash.sh: trial $trial: killed; checking the file system as the processes left it"
    "$@" check "$dir" || status=1
    if [ -n "$image" ] && [ "$status" -eq 0 ]; then
        echo "crash.sh: trial $trial: checking the disk image copied at the kill"
        mount -o loop "$work/copy.img" "$work/copy" &&
            cp "$dir"/progress-* "$work/copy/" 2>/dev/null
        # The progress records of the live run are the reference: the image may hold older
        # ones, since they were synced after the window's own sync.
        "$@" check "$work/copy" || status=1
        umount "$work/copy"
    fi
    trial=$((trial + 1))
done
exit $status
