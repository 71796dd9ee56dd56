/* SPDX-License-Identifier: BSD-3-Clause */
/* The path statistics of a communicator (lib/zcopy's internal counters), for tests that
 * assert which path a message took, not only its bytes. */
#ifndef MPIX_TEST_ZCOPY_STATS_H
#define MPIX_TEST_ZCOPY_STATS_H

#include "zcopy/zcopy.h"

static inline mpix_zcopy_stats zcopy_stats_of(MPI_Comm comm)
{
    mpix_zcopy_comm *zc = NULL;
    mpix_zcopy_comm_get(comm, &zc);
    return zc->stats;
}

#endif
