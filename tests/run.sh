#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The whole suite: installs what is missing, builds mpix against Open MPI and against
# MPICH, runs every test of each build one at a time, then the consumer tests per MPI
# (pkg-config, CMake, Meson subproject, a program of the other MPI refused, manual
# pages and HTML installed: tests/consumer/consumers.sh), and ends with one line
#   mpix: N passed, M failed
# Knobs: MPIX_TEST_MPIS="openmpi" (or "mpich") runs one MPI only;
#        MPIX_TEST_ARGS="--suite errors" is passed to `meson test`.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/deps.sh"

passed=0
failed=0
skipped=0
record() { # NAME STATUS
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "PASS $1"; else failed=$((failed + 1)); echo "FAIL $1"; echo "FAIL $1" >>"$root/build/failures.txt"; fi
}

if ! mpix_install_deps; then
    echo "mpix: 0 passed, 1 failed"
    exit 1
fi

mkdir -p "$root/build"
: >"$root/build/failures.txt"
for mpi in ${MPIX_TEST_MPIS:-openmpi mpich}; do
    build=$root/build/$mpi
    stage=$root/build/$mpi-install
    echo "=== mpix with $mpi"
    if [ -f "$build/build.ninja" ]; then reconfigure=--reconfigure; else reconfigure=; fi
    if ! meson setup $reconfigure "$build" "$root" -Dmpi="$mpi" --prefix="$stage" --libdir=lib >"$root/build/$mpi-setup.log" 2>&1; then
        cat "$root/build/$mpi-setup.log"
        record "configure/$mpi" 1
        continue
    fi
    if ! ninja -C "$build" >"$root/build/$mpi-build.log" 2>&1 || ! meson install -C "$build" --quiet >>"$root/build/$mpi-build.log" 2>&1; then
        cat "$root/build/$mpi-build.log"
        record "build/$mpi" 1
        continue
    fi
    rm -f "$build/meson-logs/testlog.json"
    meson test -C "$build" --no-rebuild --num-processes 1 --print-errorlogs ${MPIX_TEST_ARGS:-}
    counts=$(python3 - "$build/meson-logs/testlog.json" "$mpi" 2>>"$root/build/failures.txt" <<'PY'
import json, sys
ok = bad = skip = 0
try:
    with open(sys.argv[1]) as log:
        for line in log:
            test = json.loads(line)
            result = test["result"]
            if result in ("OK", "EXPECTEDFAIL"):
                ok += 1
            elif result == "SKIP":
                skip += 1
            else:
                bad += 1
                # The log's tail is all a reader of a long run may see: name the test
                # and repeat the end of what it printed.
                print("%s %s (%s)" % (result, test["name"], sys.argv[2]), file=sys.stderr)
                for text in (test.get("stdout") or "").splitlines()[-12:]:
                    print("    " + text, file=sys.stderr)
except FileNotFoundError:
    bad = 1
    print("no test log: %s" % sys.argv[1], file=sys.stderr)
print(ok, bad, skip)
PY
)
    set -- $counts
    passed=$((passed + $1))
    failed=$((failed + $2))
    skipped=$((skipped + $3))
    for way in pkgconfig cmake subproject mixed cmake-mixed manuals fortran headers; do
        sh "$root/tests/consumer/consumers.sh" "$way" "$mpi" "$stage" "$root/build/consumer-$way-$mpi"
        record "consumer-$way/$mpi" $?
    done
done

# The library must degrade cleanly without hwloc and libnuma: the common tests again,
# on a build without them. That build is made by clang with warnings as errors, so the
# library stays a C11 program of any C11 compiler, not of GCC alone.
if [ -z "${MPIX_TEST_MPIS:-}" ] || [ "${MPIX_TEST_MPIS:-}" = openmpi ]; then
    minimal=$root/build/openmpi-minimal-clang
    echo "=== mpix with openmpi, without hwloc and libnuma, built by clang"
    if [ -f "$minimal/build.ninja" ]; then reconfigure=--reconfigure; else reconfigure=; fi
    if CC=clang CXX=clang++ meson setup $reconfigure "$minimal" "$root" -Dmpi=openmpi -Dhwloc=disabled -Dnuma=disabled \
        -Dexamples=false -Dbench=false --werror >"$root/build/openmpi-minimal-setup.log" 2>&1 &&
        ninja -C "$minimal" >"$root/build/openmpi-minimal-build.log" 2>&1; then
        meson test -C "$minimal" --no-rebuild --num-processes 1 --print-errorlogs --suite internal --suite errors
        record "minimal-build-common-tests/openmpi" $?
    else
        cat "$root/build/openmpi-minimal-setup.log" "$root/build/openmpi-minimal-build.log" 2>/dev/null
        record "minimal-build/openmpi" 1
    fi
fi

# What failed, again just above the count: a long run's log is often read from its end.
if [ -s "$root/build/failures.txt" ]; then
    echo "=== failed"
    cat "$root/build/failures.txt"
fi

# Tests that need root (tmpfs mounts, loop devices) report skipped without it.
if [ "$skipped" -gt 0 ]; then
    echo "mpix: $passed passed, $failed failed, $skipped skipped"
else
    echo "mpix: $passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
