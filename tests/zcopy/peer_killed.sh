#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: peer_killed.sh WHO[,PIPES[,CALLS]] LAUNCHER ARGS... -np 2 test_zcopy_peer_killed
# Runs the program with WHO (sender or receiver) killed in the middle of a message, under
# a launcher told to keep the survivor running (MPICH's Hydra: -disable-auto-cleanup;
# Open MPI: --enable-recovery), zero-copy forced through the kernel, or through the pipe
# where PIPES is on (default off), by the CALLS the program names (blocking, the default,
# nonblocking, interposed or interposed_nonblocking), and passes when the survivor writes PASS within 60 s: its
# call returned instead of waiting for ever.
IFS=, read -r who pipes calls <<EOF
$1
EOF
pipes=${pipes:-off}
calls=${calls:-blocking}
shift
launcher=$1
shift
if "$launcher" --version 2>&1 | grep -q HYDRA; then
    keep=-disable-auto-cleanup
else
    keep=--enable-recovery
fi
method=direct
[ "$pipes" = on ] && method=piped
verdict=$(mktemp /tmp/mpix-test-peer-killed-XXXXXX) || exit 1
trap 'pkill -9 -f "$verdict" 2>/dev/null; rm -f "$verdict" "$verdict.out"' EXIT
# The launcher's arguments, the program last: each rank runs under a shell of its own,
# for Hydra's proxy, -disable-auto-cleanup or not, killed the survivor's process group
# once a rank it started itself died by a signal (a rank under a shell exits, status 137).
count=$#
launch=""
i=1
for argument in "$@"; do
    [ "$i" -eq "$count" ] && program=$argument || launch="$launch $argument"
    i=$((i + 1))
done
MPIX_ZCOPY_PIPES=$pipes MPIX_ZCOPY_METHOD=$method timeout -k 5 60 "$launcher" $keep $launch \
    sh -c '"$@"; exit $?' sh "$program" "$who" "$verdict" "$calls" > "$verdict.out" 2>&1
status=$?
cat "$verdict"
grep -q 'zcopy peer killed: PASS' "$verdict" && exit 0
[ "$status" = 124 ] && echo "peer_killed.sh: the survivor did not return within 60 s"
tail -20 "$verdict.out"
exit 1
