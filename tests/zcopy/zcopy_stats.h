/* SPDX-License-Identifier: BSD-3-Clause */
/* zcopy's path counters of a communicator, read through MPIX_Pvar_read, for tests that
 * assert which path a message took, not only its bytes. */
#ifndef MPIX_TEST_ZCOPY_STATS_H
#define MPIX_TEST_ZCOPY_STATS_H

#include <mpix/mpix.h>

typedef struct zcopy_counters {
    unsigned long sent_plain, sent_eager, sent_mpi, sent_zero_copy, sent_fragmented, sent_by_shape, sent_slower;
    unsigned long sent_deferred, sent_priced;
    unsigned long sent_packed, sent_unpacked, sent_data_apart, sent_without_header, sent_questions;
    unsigned long pulled_direct, pulled_staged, pulled_shared, pulled_piped, pipes_taken_over, helps_taken_back, pushed, push_refused;
    unsigned long layouts_flattened, layouts_read, layouts_global, layouts_pipelined;
    unsigned long collapsed_units, collapse_deferred, collapse_refused;
} zcopy_counters;

static inline unsigned long zcopy_counter(MPI_Comm comm, const char *name)
{
    MPI_Count value = 0;
    char full_name[64];
    snprintf(full_name, sizeof full_name, "zcopy.%s", name);
    if (MPIX_Pvar_read(full_name, comm, &value) != MPI_SUCCESS) {
        fprintf(stderr, "MPIX_Pvar_read(%s) failed\n", full_name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return (unsigned long)value;
}

static inline zcopy_counters zcopy_stats_of(MPI_Comm comm)
{
    zcopy_counters c;
#define READ(field) c.field = zcopy_counter(comm, #field)
    READ(sent_plain); READ(sent_eager); READ(sent_mpi); READ(sent_zero_copy); READ(sent_fragmented); READ(sent_by_shape); READ(sent_slower);
    READ(sent_deferred); READ(sent_priced);
    READ(sent_packed); READ(sent_unpacked); READ(sent_data_apart); READ(sent_without_header); READ(sent_questions);
    READ(pulled_direct); READ(pulled_staged); READ(pulled_shared); READ(pulled_piped); READ(pipes_taken_over); READ(helps_taken_back); READ(pushed); READ(push_refused);
    READ(layouts_flattened); READ(layouts_read); READ(layouts_global); READ(layouts_pipelined);
    READ(collapsed_units); READ(collapse_deferred); READ(collapse_refused);
#undef READ
    return c;
}

#endif
