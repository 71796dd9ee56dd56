/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the benchmarks put their scratch files (storage windows, MPI-IO checkpoints):
 * $MPIX_BENCH_DIR, so a run can measure the file system it names; /tmp otherwise. */
#include "bench.h"

#include <stdlib.h>

const char *bench_dir(void)
{
    const char *dir = getenv("MPIX_BENCH_DIR");
    return dir && *dir ? dir : "/tmp";
}
