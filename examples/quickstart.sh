#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Quick start: installs what is missing (Debian 12), builds mpix with Open MPI, and runs
# the tour example on 2 ranks. Usage: sh examples/quickstart.sh
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/deps.sh"
mpix_install_deps
build=$root/build/quickstart
if [ -f "$build/build.ninja" ]; then reconfigure=--reconfigure; else reconfigure=; fi
meson setup $reconfigure "$build" "$root" -Dmpi=openmpi -Dtests=false -Dbench=true >/dev/null
ninja -C "$build" >/dev/null
echo "built mpix in $build; running the tour on 2 ranks:"
mpirun.openmpi --oversubscribe -np 2 "$build/examples/tour"
