/* SPDX-License-Identifier: BSD-3-Clause */
/* zcopy's performance variables (MPIX_Pvar_read): the path statistics of a communicator. */
#include "zcopy.h"
#include "common/pvar.h"


static const mpix_pvar_counter counters[] = {
    { "sent_plain", offsetof(mpix_zcopy_stats, sent[MPIX_ZCOPY_PLAIN]) },
    { "sent_eager", offsetof(mpix_zcopy_stats, sent[MPIX_ZCOPY_EAGER]) },
    { "sent_mpi", offsetof(mpix_zcopy_stats, sent[MPIX_ZCOPY_MPI]) },
    { "sent_zero_copy", offsetof(mpix_zcopy_stats, sent[MPIX_ZCOPY_RTS]) },
    { "sent_fragmented", offsetof(mpix_zcopy_stats, sent_fragmented) },
    { "sent_by_shape", offsetof(mpix_zcopy_stats, sent_by_shape) },
    { "sent_slower", offsetof(mpix_zcopy_stats, sent_slower) },
    { "sent_deferred", offsetof(mpix_zcopy_stats, sent_deferred) },
    { "sent_priced", offsetof(mpix_zcopy_stats, sent_priced) },
    { "sent_packed", offsetof(mpix_zcopy_stats, sent_packed) },
    { "sent_unpacked", offsetof(mpix_zcopy_stats, sent_unpacked) },
    { "sent_data_apart", offsetof(mpix_zcopy_stats, sent_data_apart) },
    { "sent_without_header", offsetof(mpix_zcopy_stats, sent_without_header) },
    { "sent_questions", offsetof(mpix_zcopy_stats, sent_questions) },
    { "pulled_direct", offsetof(mpix_zcopy_stats, pulled_direct) },
    { "pulled_staged", offsetof(mpix_zcopy_stats, pulled_staged) },
    { "pulled_shared", offsetof(mpix_zcopy_stats, pulled_shared) },
    { "pulled_piped", offsetof(mpix_zcopy_stats, pulled_piped) },
    { "pipes_taken_over", offsetof(mpix_zcopy_stats, pipes_taken_over) },
    { "helps_taken_back", offsetof(mpix_zcopy_stats, helps_taken_back) },
    { "pushed", offsetof(mpix_zcopy_stats, pushed) },
    { "push_refused", offsetof(mpix_zcopy_stats, push_refused) },
    { "layouts_flattened", offsetof(mpix_zcopy_stats, layouts_flattened) },
    { "layouts_read", offsetof(mpix_zcopy_stats, layouts_read) },
    { "layouts_global", offsetof(mpix_zcopy_stats, layouts_global) },
    { "layouts_pipelined", offsetof(mpix_zcopy_stats, layouts_pipelined) },
    { "collapsed_units", offsetof(mpix_zcopy_stats, collapsed_units) },
    { "collapse_deferred", offsetof(mpix_zcopy_stats, collapse_deferred) },
    { "collapse_refused", offsetof(mpix_zcopy_stats, collapse_refused) },
};

int mpix_zcopy_pvar_read(const char *name, MPI_Comm comm, MPI_Count *value, int *rc)
{
    const mpix_pvar_counter *counter = mpix_pvar_counter_find(counters, sizeof counters / sizeof counters[0], name);
    mpix_zcopy_comm *zc = NULL;
    if (!counter)
        return 0;
    if ((*rc = mpix_zcopy_comm_get(comm, &zc)) == MPI_SUCCESS)
        *value = mpix_pvar_counter_value(counter, &zc->stats); /* plain counters: a read needs no lock */
    return 1;
}
