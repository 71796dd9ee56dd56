/* SPDX-License-Identifier: BSD-3-Clause */
/* zcopy's performance variables (MPIX_Pvar_read): the path statistics of a communicator. */
#include "zcopy.h"
#include "common/pvar.h"

#include <stddef.h>
#include <string.h>

static const struct {
    const char *name;
    size_t offset;
} counters[] = {
    { "sent_eager", offsetof(mpix_zcopy_stats, sent[MPIX_ZCOPY_EAGER]) },
    { "sent_mpi", offsetof(mpix_zcopy_stats, sent[MPIX_ZCOPY_MPI]) },
    { "sent_zero_copy", offsetof(mpix_zcopy_stats, sent[MPIX_ZCOPY_RTS]) },
    { "sent_fragmented", offsetof(mpix_zcopy_stats, sent_fragmented) },
    { "sent_slower", offsetof(mpix_zcopy_stats, sent_slower) },
    { "pulled_direct", offsetof(mpix_zcopy_stats, pulled_direct) },
    { "pulled_staged", offsetof(mpix_zcopy_stats, pulled_staged) },
    { "pulled_shared", offsetof(mpix_zcopy_stats, pulled_shared) },
    { "pushed", offsetof(mpix_zcopy_stats, pushed) },
    { "push_refused", offsetof(mpix_zcopy_stats, push_refused) },
    { "layouts_read", offsetof(mpix_zcopy_stats, layouts_read) },
    { "layouts_global", offsetof(mpix_zcopy_stats, layouts_global) },
    { "layouts_pipelined", offsetof(mpix_zcopy_stats, layouts_pipelined) },
    { "collapsed_units", offsetof(mpix_zcopy_stats, collapsed_units) },
    { "collapse_deferred", offsetof(mpix_zcopy_stats, collapse_deferred) },
    { "collapse_refused", offsetof(mpix_zcopy_stats, collapse_refused) },
};

int mpix_zcopy_pvar_read(const char *name, MPI_Comm comm, MPI_Count *value, int *rc)
{
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        if (strcmp(name, counters[i].name) != 0)
            continue;
        mpix_zcopy_comm *zc = NULL;
        if ((*rc = mpix_zcopy_comm_get(comm, &zc)) != MPI_SUCCESS)
            return 1;
        /* Plain counters (threads may lose an increment): a read needs no lock. */
        *value = (MPI_Count) * (const unsigned long *)((const char *)&zc->stats + counters[i].offset);
        return 1;
    }
    return 0;
}
