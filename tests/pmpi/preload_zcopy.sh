#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Usage: preload_zcopy.sh VENDOR LIBRARY PROGRAM EXPECT MPIRUN [ARGS...]
# Runs PROGRAM (an MPI program without mpix that checks every value it receives and
# exits non-zero on a wrong one: tests/pmpi/plain_halo.c, or a Fortran program) plain,
# then under LD_PRELOAD=LIBRARY with MPIX_PMPI=zcopy and MPIX_VERBOSE=1, whose zcopy
# lines at MPI_Finalize count the sends and receives that went zero-copy. EXPECT:
#   zero-copy  every rank sent and received zero-copy, as the path choice gives it
#              (the kernel's iovecs priced low);
#   direct     MPIX_ZCOPY_METHOD=direct (every large non-contiguous message
#              zero-copy), and some sender staged its data (plain_halo.c sends to a
#              rank that waits in a barrier with the receive posted);
#   plain      no rank sent zero-copy (ranks on different virtual nodes, a Fortran
#              binding loaded), and the data is still right;
#   packed     MPIX_ZCOPY_METHOD=packed: no rank sent zero-copy, some sent their
#              large non-contiguous messages packed (MPI_PACKED, which the program's
#              receive datatype matches), and the data is still right;
#   unpacked   the path choice's own: ranks 0 and 1 sent packed and, with MPICH,
#              received as MPI_PACKED and unpacked; with Open MPI no rank unpacked
#              (tests/pmpi/plain_tiny_blocks.c);
#   mixed      MPICH, two ranks started apart: rank 0 with MPIX_ZCOPY_METHOD=packed
#              (its large receives taken as MPI_PACKED), rank 1 with =direct (its
#              large sends zero-copy), so zero-copy headers land in rank 0's packed
#              receives: rank 0 received zero-copy, and the data is still right;
#   none       MPIX_PMPI=none: no zcopy line at all.
vendor=$1 library=$2 program=$3 expect=$4
shift 4
mpirun=$1
shift
settings="LD_PRELOAD=$library MPIX_PMPI=zcopy MPIX_VERBOSE=1"
case $expect in
# The kernel's iovecs priced low and MPI's copies slow: a layout the machine's measured
# rates price to lose opens its first duel with MPI's datatype, and a short program might
# never reach zero-copy's burst.
zero-copy) settings="$settings MPIX_ZCOPY_KERNEL_IOVEC_NS=1 MPIX_ZCOPY_MPI_BYTES_PER_NS=1" ;;
direct) settings="$settings MPIX_ZCOPY_METHOD=direct" ;;
packed) settings="$settings MPIX_ZCOPY_METHOD=packed" ;;
none) settings="LD_PRELOAD=$library MPIX_PMPI=none MPIX_VERBOSE=1" ;;
esac
pass_env=""
for setting in $settings $MPIX_EXTRA_SETTINGS; do
    if [ "$vendor" = openmpi ]; then
        pass_env="$pass_env -x $setting"
    else
        pass_env="$pass_env -genv ${setting%%=*} ${setting#*=}"
    fi
done
expected=$("$mpirun" "$@" "$program") || { echo "plain run failed"; exit 1; }
if [ "$expect" = mixed ]; then
    # shellcheck disable=SC2086 # the settings split into launcher arguments on purpose
    output=$("$mpirun" $pass_env -n 1 -env MPIX_ZCOPY_METHOD packed "$program" : \
        -n 1 -env MPIX_ZCOPY_METHOD direct "$program" 2>&1) || { echo "$output"; echo "preloaded run failed"; exit 1; }
else
    # shellcheck disable=SC2086 # the settings split into launcher arguments on purpose
    output=$("$mpirun" $pass_env "$@" "$program" 2>&1) || { echo "$output"; echo "preloaded run failed"; exit 1; }
fi
# The program's own lines, in rank order where ranks print: as the plain run's.
printed=$(printf '%s\n' "$output" | grep -v '^mpix\[' | sort)
[ "$printed" = "$(printf '%s\n' "$expected" | sort)" ] || {
    printf 'plain:\n%s\npreloaded:\n%s\n' "$expected" "$printed"; echo "FAILED: the output differs"; exit 1; }
summary=$(printf '%s\n' "$output" | grep 'sends zero-copy')
printf '%s\n' "$output" | grep -v 'setting mpix_'
ranks=$(printf '%s\n' "$summary" | grep -c .)
zero_copy_ranks=$(printf '%s\n' "$summary" | grep 'sends' | grep -c -v ' 0 sends zero-copy.*; 0 receives')
staged=$(printf '%s\n' "$summary" | sed -n 's/.*(\([0-9]*\) staged).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
case $expect in
zero-copy | direct)
    senders=$(printf '%s\n' "$summary" | grep 'sends' | grep -c -v ' 0 sends zero-copy')
    receivers=$(printf '%s\n' "$summary" | grep 'sends' | grep -c -v '; 0 receives zero-copy')
    [ "$ranks" -gt 0 ] && [ "$senders" -eq "$ranks" ] && [ "$receivers" -eq "$ranks" ] || {
        echo "FAILED: not every rank sent and received zero-copy"; exit 1; }
    if [ "$expect" = direct ] && [ "$staged" -eq 0 ]; then
        echo "FAILED: no sender staged its data for a receiver in a barrier"; exit 1
    fi ;;
plain)
    [ "$zero_copy_ranks" -eq 0 ] || { echo "FAILED: zero-copy where none may be"; exit 1; } ;;
packed)
    packed=$(printf '%s\n' "$summary" | sed -n 's/.*(\([0-9]*\) packed).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
    [ "$zero_copy_ranks" -eq 0 ] && [ "$packed" -gt 0 ] || {
        echo "FAILED: zero-copy, or nothing packed ($packed)"; exit 1; } ;;
unpacked)
    packers=$(printf '%s\n' "$summary" | grep -c -v '(0 packed)')
    unpackers=$(printf '%s\n' "$summary" | grep -c -v ', 0 unpacked here')
    if [ "$vendor" = mpich ]; then wanted=2; else wanted=0; fi
    [ "$packers" -ge 2 ] && [ "$unpackers" -eq "$wanted" ] || {
        echo "FAILED: $packers ranks sent packed, $unpackers unpacked ($wanted expected)"; exit 1; } ;;
mixed)
    printf '%s\n' "$summary" | grep 'rank 0:' | grep -q -v '; 0 receives zero-copy' || {
        echo "FAILED: rank 0 received nothing zero-copy"; exit 1; } ;;
none)
    [ "$ranks" -eq 0 ] || { echo "FAILED: zcopy acted with MPIX_PMPI=none"; exit 1; } ;;
*)
    echo "preload_zcopy.sh: unknown expectation $expect"; exit 2 ;;
esac
echo "preload_zcopy.sh: $expect: ok ($ranks ranks reporting, $staged staged, ${packed:-0} packed)"
