/* The other side's layout of a message, by the cheapest name both processes know it
 * under: a few blocks travel inline, a collectively committed type has a global id, a
 * memoized layout an id remembered per peer; only a layout never seen before is read
 * from the peer's memory. Receivers resolve senders' layouts this way, and a sender
 * that copies part of a message resolves its receiver's the same way. */
#include "zcopy.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

void mpix_zcopy_layout_ref_set(mpix_zcopy_layout_ref *ref, const void *buf, int count, const mpix_layout_view *view,
                               MPI_Comm comm)
{
    ref->base = (uintptr_t)buf;
    ref->layout_address = (uintptr_t)view->layout->blocks;
    ref->nblocks = view->layout->nblocks;
    ref->count = count;
    ref->bytes = view->layout->bytes;
    ref->layout_id = view->id;
    ref->global_id = view->global_comm == comm ? view->global_id : 0;
    if (view->layout->nblocks <= MPIX_ZCOPY_INLINE_BLOCKS)
        memcpy(ref->inline_blocks, view->layout->blocks, view->layout->nblocks * sizeof(mpix_block));
}

int mpix_zcopy_peer_layout(mpix_zcopy_comm *zc, int peer, pid_t pid, const mpix_zcopy_layout_ref *ref,
                           mpix_layout *scratch, mpix_layout **layout)
{
    *scratch = (mpix_layout){ .nblocks = ref->nblocks, .capacity = ref->nblocks, .bytes = ref->bytes,
                              .costed_gap_limit = -1 };
    if (ref->nblocks <= MPIX_ZCOPY_INLINE_BLOCKS) {
        scratch->blocks = (mpix_block *)ref->inline_blocks;
        *layout = scratch;
        return MPI_SUCCESS;
    }
    if (ref->global_id && (*layout = mpix_zcopy_global_find(zc, ref->global_id, (int)ref->count))) {
        zc->stats.layouts_global++;
        return MPI_SUCCESS;
    }
    if (ref->layout_id && (*layout = mpix_zcopy_received_find(zc, peer, ref->layout_id)))
        return MPI_SUCCESS;
    if (!(scratch->blocks = malloc(ref->nblocks * sizeof(mpix_block))))
        return MPI_ERR_NO_MEM;
    int error = mpix_zcopy_read_remote(pid, ref->layout_address, scratch->blocks, ref->nblocks * sizeof(mpix_block));
    zc->stats.layouts_read++;
    if (error) {
        mpix_layout_free(scratch);
        return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "zcopy: reading the layout of rank %d (%lld blocks) failed: %s",
                          peer, (long long)ref->nblocks, strerror(error));
    }
    if (ref->layout_id && (*layout = mpix_zcopy_received_add(zc, peer, ref->layout_id, scratch)))
        return MPI_SUCCESS;
    /* Not memoizable (a predefined type's layout, or no memory): use it once. */
    *layout = scratch;
    return MPI_SUCCESS;
}

void mpix_zcopy_peer_layout_release(mpix_layout *scratch, const mpix_zcopy_layout_ref *ref)
{
    if (scratch->blocks && scratch->blocks != ref->inline_blocks)
        mpix_layout_free(scratch);
}
