#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian packages mpix builds, tests and runs with, only those missing.
# Sourced by tests/run.sh and examples/quickstart.sh; safe to run alone.
mpix_packages="g++ gfortran clang cmake doxygen man-db libopenmpi-dev openmpi-bin libmpich-dev mpich libhwloc-dev libnuma-dev libxxhash-dev uthash-dev liburing-dev libopenblas-pthread-dev meson ninja-build pkg-config python3 gnuplot-nox iproute2 util-linux procps"

mpix_missing_packages() {
    for package in $mpix_packages; do
        dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q '^install ok installed$' ||
            printf '%s ' "$package"
    done
}

mpix_install_deps() {
    missing=$(mpix_missing_packages)
    [ -z "$missing" ] && return 0
    echo "mpix: installing missing packages: $missing"
    if [ "$(id -u)" -eq 0 ]; then
        sudo=""
    elif command -v sudo >/dev/null 2>&1; then
        sudo="sudo"
    else
        echo "mpix: need root (or sudo) to install: $missing" >&2
        return 1
    fi
    $sudo apt-get update -q &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
}

# Open MPI refuses to run as root, and needs leave to put more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI 4.1: osc/rdma cannot MPI_Win_create over one process (ompi#10726), nor over
# any group where the shared-memory transport has no single-copy mechanism (meson.build).
if [ "${OMPI_MCA_btl_vader_single_copy_mechanism:-}" = none ]; then
    export OMPI_MCA_osc="${OMPI_MCA_osc:-sm,pt2pt}"
else
    export OMPI_MCA_osc="${OMPI_MCA_osc:-sm,ucx,rdma}"
fi

if [ "${0##*/}" = "deps.sh" ]; then
    mpix_install_deps
fi
