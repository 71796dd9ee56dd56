#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds and runs tests/consumer/consumer.c the ways an outside project takes mpix, from
# the installed tree and with no environment variables (no PKG_CONFIG_PATH, no
# LD_LIBRARY_PATH):
#   pkgconfig  - plain cc with `pkg-config --cflags --libs mpix`
#   cmake      - find_package(mpix) and target mpix::mpix, beside find_package(MPI)
#   subproject - a Meson project with mpix copied into its subprojects/ folder
#   mixed      - a program built with the other MPI's mpicc and linked with this mpix:
#                it must stop at load with a message naming both MPIs, not crash
#   cmake-mixed - find_package(MPI) found the other MPI: find_package(mpix) must refuse
#   manuals    - `man 3 MPIX_Win_sync` from the prefix, one page per public function,
#                and the HTML reference under share/doc/mpix
#   fortran    - examples/zcopy_halo.f90 and examples/storage_checkpoint.f90 built as Fortran 2008 with
#                the MPI's mpif90 and the flags of `pkg-config --cflags --libs mpix`
#                (every module, mpix_storage, mpix_spin, mpix_hy, mpix_zcopy and
#                mpix_guard, is installed in the include directory)
#   headers    - every installed public header, alone, compiled by cc and c++ in each
#                language version a program may use (C89 to C17, C++98 to C++20) with
#                warnings as errors (-pedantic from C99 and C++11 on; MPI's own headers
#                are system headers there, so only mpix's are judged); then every C
#                example as a user copying it builds it: strict C11, no _GNU_SOURCE
# Usage: consumers.sh WAY MPI STAGE_PREFIX WORKDIR
# MPI is openmpi or mpich; STAGE_PREFIX is where `meson install` put mpix.
set -u
way=$1 mpi=$2 stage=$3 work=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
consumer=$root/tests/consumer

case $mpi in
openmpi) launcher="mpirun.openmpi --oversubscribe" other=mpich other_launcher="mpirun.mpich" ;;
mpich) launcher="mpirun.mpich" other=openmpi other_launcher="mpirun.openmpi --oversubscribe" ;;
*) echo "consumers.sh: unknown MPI '$mpi'" >&2; exit 2 ;;
esac
unset PKG_CONFIG_PATH LD_LIBRARY_PATH CMAKE_PREFIX_PATH

rm -rf "$work" && mkdir -p "$work" || exit 1
case $way in
pkgconfig)
    flags=$(pkg-config --with-path="$stage/lib/pkgconfig" --cflags --libs mpix) || exit 1
    echo "pkg-config --cflags --libs mpix: $flags"
    cc -std=c11 -o "$work/consumer" "$consumer/consumer.c" $flags || exit 1
    program=$work/consumer
    ;;
cmake)
    cmake -S "$consumer" -B "$work" -DCMAKE_PREFIX_PATH="$stage" -DCONSUMER_FIND_MPI=ON \
        -DMPI_C_COMPILER="mpicc.$mpi" >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
    grep "mpix .* for $mpi" "$work/cmake.log"
    cmake --build "$work" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
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
mixed)
    "mpicc.$other" -o "$work/consumer" "$consumer/consumer.c" -I"$stage/include" -L"$stage/lib" -lmpix \
        -Wl,-rpath,"$stage/lib" || exit 1
    output=$($other_launcher -np 1 "$work/consumer" 2>&1)
    status=$?
    printf '%s\n' "$output" | head -3
    # 127 is the library's exit status for a foreign MPI; a crash would be 139 or 134.
    printf '%s' "$output" | grep -q "^mpix: this libmpix was built for .*, but the program runs with" &&
        ! printf '%s' "$output" | grep -q "^consumer:" && [ "$status" -ne 0 ]
    exit $?
    ;;
cmake-mixed)
    cmake -S "$consumer" -B "$work" -DCMAKE_PREFIX_PATH="$stage" -DCONSUMER_FIND_MPI=ON \
        -DMPI_C_COMPILER="mpicc.$other" >"$work/cmake.log" 2>&1
    status=$?
    grep -A2 "was built for" "$work/cmake.log"
    # CMake wraps the message: join its lines before matching.
    [ "$status" -ne 0 ] && tr -s '\n ' '  ' <"$work/cmake.log" | grep -q "was built for $mpi, but find_package(MPI) found $other"
    exit $?
    ;;
manuals)
    man -M "$stage/share/man" 3 MPIX_Win_sync 2>/dev/null | col -b >"$work/page.txt"
    head -12 "$work/page.txt"
    grep -q "int MPIX_Win_sync(MPI_Win win);" "$work/page.txt" || exit 1
    for name in $(python3 "$root/tools/public_names.py" "$stage"/include/mpix/*.h | grep -v "^MPIX_ERRKIND\|^MPIX_MAX\|^MPIX_Error_kind\|^MPIX_VERSION"); do
        [ -f "$stage/share/man/man3/$name.3" ] || { echo "no manual page for $name"; exit 1; }
    done
    grep -q "mpix" "$stage/share/doc/mpix/api/html/index.html" || { echo "no HTML reference installed"; exit 1; }
    exit 0
    ;;
headers)
    # MPI's include directories as system ones: its headers are not ours to judge.
    flags=$(pkg-config --with-path="$stage/lib/pkgconfig" --cflags mpix |
        sed "s|-I$stage/include|@mpix@|; s|-I|-isystem |g; s|@mpix@|-I$stage/include|") || exit 1
    echo "flags: $flags"
    failed=0
    for header in "$stage"/include/mpix/*.h; do
        name=mpix/$(basename "$header")
        for mode in "cc c -std=c89" "cc c -std=c99 -pedantic" "cc c -std=c17 -pedantic" "c++ c++ -std=c++98" \
            "c++ c++ -std=c++11 -pedantic" "c++ c++ -std=c++20 -pedantic"; do
            set -- $mode
            compiler=$1 language=$2
            shift 2
            printf '#include <%s>\nint mpix_header_check;\n' "$name" >"$work/check.src"
            if ! $compiler -x "$language" "$@" -Wall -Wextra -Werror $flags -c "$work/check.src" \
                -o "$work/check.o" >"$work/check.log" 2>&1; then
                echo "$name does not compile with $compiler $*:"
                head -5 "$work/check.log"
                failed=1
            fi
        done
    done
    [ "$failed" -eq 0 ] && echo "every public header compiles alone from C89 to C17 and C++98 to C++20"
    for example in "$root"/examples/*.c; do
        if ! cc -std=c11 -pedantic -Wall -Wextra -Werror $flags -I"$root/examples" -c "$example" \
            -o "$work/example.o" >"$work/check.log" 2>&1; then
            echo "$(basename "$example") does not compile as strict C11:"
            head -5 "$work/check.log"
            failed=1
        fi
    done
    [ "$failed" -eq 0 ] && echo "every C example compiles as strict C11"
    exit $failed
    ;;
fortran)
    flags=$(pkg-config --with-path="$stage/lib/pkgconfig" --cflags --libs mpix) || exit 1
    for module in storage spin hy zcopy guard; do
        [ -f "$stage/include/mpix_$module.mod" ] || { echo "no mpix_$module.mod installed in $stage/include"; exit 1; }
    done
    for example in zcopy_halo storage_checkpoint; do
        "mpif90.$mpi" -std=f2008 -o "$work/$example" "$root/examples/$example.f90" $flags || exit 1
    done
    output=$($launcher -np 2 "$work/zcopy_halo" 2>&1 && cd "$work" && $launcher -np 2 "$work/storage_checkpoint" 2>&1)
    status=$?
    printf '%s\n' "$output"
    [ "$status" -eq 0 ] && printf '%s' "$output" | grep -q "^zcopy_halo: 10 steps on 2 ranks, grids identical" &&
        printf '%s' "$output" | grep -q "^checkpoint: 40 steps with a restart at 20 match the uninterrupted run"
    exit $?
    ;;
*) echo "consumers.sh: unknown way '$way'" >&2; exit 2 ;;
esac

output=$($launcher -np 2 "$program" 2>&1)
status=$?
printf '%s\n' "$output"
[ "$status" -eq 0 ] && printf '%s' "$output" | grep -q "^consumer: OK on 2 ranks"
