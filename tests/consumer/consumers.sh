#!/bin/sh
# Builds and runs tests/consumer/consumer.c the two ways an outside project takes mpix:
#   pkgconfig  - plain cc with `pkg-config --cflags --libs mpix` against an installed copy
#   subproject - a Meson project with mpix copied into its subprojects/ folder
# Usage: consumers.sh pkgconfig|subproject MPI STAGE_PREFIX WORKDIR
# MPI is openmpi or mpich; STAGE_PREFIX is where `meson install` put mpix.
set -u
way=$1 mpi=$2 stage=$3 work=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
consumer=$root/tests/consumer

case $mpi in
openmpi) launcher="mpirun.openmpi --oversubscribe" ;;
mpich) launcher="mpirun.mpich" ;;
*) echo "consumers.sh: unknown MPI '$mpi'" >&2; exit 2 ;;
esac

rm -rf "$work" && mkdir -p "$work" || exit 1
case $way in
pkgconfig)
    export PKG_CONFIG_PATH="$stage/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    echo "pkg-config --cflags --libs mpix: $(pkg-config --cflags --libs mpix)"
    # The rpath stands in for installing into a system prefix.
    cc -std=c11 -o "$work/consumer" "$consumer/consumer.c" $(pkg-config --cflags --libs mpix) \
        -Wl,-rpath,"$(pkg-config --variable=libdir mpix)" || exit 1
    program=$work/consumer
    ;;
subproject)
    mkdir -p "$work/subprojects/mpix"
    cp "$consumer/consumer.c" "$work/"
    cp "$consumer/meson.build.in" "$work/meson.build"
    (cd "$root" && tar cf - --exclude=./build --exclude=./.git .) | (cd "$work/subprojects/mpix" && tar xf -) || exit 1
    meson setup "$work/build" "$work" -Dmpix:mpi="$mpi" --force-fallback-for=mpix >"$work/setup.log" 2>&1 ||
        { cat "$work/setup.log"; exit 1; }
    ninja -C "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
    program=$work/build/consumer
    ;;
*) echo "consumers.sh: unknown way '$way'" >&2; exit 2 ;;
esac

output=$($launcher -np 2 "$program" 2>&1)
status=$?
printf '%s\n' "$output"
[ "$status" -eq 0 ] && printf '%s' "$output" | grep -q "^consumer: OK on 2 ranks"
