// SPDX-License-Identifier: BSD-3-Clause
// plain_halo.c built by the C++ compiler: a C++ caller of the MPI C API, run under
// libmpix-pmpi.so as the C program is (tests/pmpi/meson.build).
#include "plain_halo.c"
