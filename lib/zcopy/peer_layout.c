/* SPDX-License-Identifier: BSD-3-Clause */
/* The other side's layout of a message, by the cheapest name both processes know it
 * under: a few blocks travel inline, a collectively committed type has a global id, a
 * memoized layout an id remembered per peer; only a layout never seen before is read
 * from the peer's memory, and a long one is read in chunks with the copy of each chunk's
 * bytes behind it (seed 004's pipelined zero-copy). Receivers resolve senders' layouts
 * this way, and a sender that copies part of a message resolves its receiver's the same
 * way. */
#include "zcopy.h"
#include "common/error.h"

#include <errno.h>
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

int mpix_zcopy_peer_layout_find(mpix_zcopy_comm *zc, int peer, const mpix_zcopy_layout_ref *ref,
                                mpix_layout *scratch, mpix_layout **layout)
{
    *scratch = (mpix_layout){ .nblocks = ref->nblocks, .capacity = ref->nblocks, .bytes = ref->bytes,
                              .costed_gap_limit = -1 };
    if (ref->nblocks <= MPIX_ZCOPY_INLINE_BLOCKS) {
        scratch->blocks = (mpix_block *)ref->inline_blocks;
        *layout = scratch;
        return 1;
    }
    if (ref->global_id && (*layout = mpix_zcopy_global_find(zc, ref->global_id, (int)ref->count))) {
        zc->stats.layouts_global++;
        return 1;
    }
    return ref->layout_id && (*layout = mpix_zcopy_received_find(zc, peer, ref->layout_id));
}

/* The first chunk of a pipelined read, in blocks; each next one twice as long, so the
 * copy starts after a short read and the number of chunks grows with the log of the
 * layout's length. */
enum { FIRST_CHUNK = 64 };

/* Reads the blocks in chunks and copies type-map bytes [0, along->bytes) of each chunk
 * as soon as it is in: the layout's transfer overlaps the copy (and the sender's part,
 * which needs only this process's layout). A layout of one chunk is read, then copied. */
static int read_pipelined(mpix_zcopy_comm *zc, pid_t pid, const mpix_zcopy_layout_ref *ref, mpix_layout *read,
                          const mpix_zcopy_copy_along *along)
{
    MPI_Aint done = 0, chunk = FIRST_CHUNK;
    MPI_Count covered = 0, copied = 0;
    while (done < ref->nblocks) {
        MPI_Aint take = chunk < ref->nblocks - done ? chunk : ref->nblocks - done;
        int error = mpix_zcopy_read_remote(pid, ref->layout_address + done * sizeof(mpix_block), read->blocks + done,
                                           take * sizeof(mpix_block));
        if (error)
            return error;
        for (MPI_Aint b = done; b < done + take; b++)
            covered += read->blocks[b].length;
        done += take;
        chunk *= 2;
        if (copied < along->bytes && *along->error == 0) {
            MPI_Count upto = covered < along->bytes ? covered : along->bytes;
            mpix_layout part = { .blocks = read->blocks, .nblocks = done, .capacity = done, .bytes = covered,
                                 .costed_gap_limit = -1 };
            *along->error = mpix_zcopy_pull(zc, pid, ref->base, &part, along->local_base, along->local, copied,
                                            upto - copied);
            copied = upto;
        }
    }
    if (ref->nblocks > FIRST_CHUNK)
        zc->stats.layouts_pipelined++;
    return 0;
}

int mpix_zcopy_peer_layout_read(mpix_zcopy_comm *zc, int peer, pid_t pid, const mpix_zcopy_layout_ref *ref,
                                mpix_layout *scratch, mpix_layout **layout, const mpix_zcopy_copy_along *along,
                                const char *call)
{
    *scratch = (mpix_layout){ .blocks = malloc(ref->nblocks * sizeof(mpix_block)), .nblocks = ref->nblocks,
                              .capacity = ref->nblocks, .bytes = ref->bytes, .costed_gap_limit = -1 };
    if (!scratch->blocks)
        return MPI_ERR_NO_MEM;
    int error = along ? read_pipelined(zc, pid, ref, scratch, along)
                      : mpix_zcopy_read_remote(pid, ref->layout_address, scratch->blocks,
                                               ref->nblocks * sizeof(mpix_block));
    zc->stats.layouts_read++;
    if (error) {
        mpix_layout_free(scratch);
        if (error == ESRCH)   /* the sender was killed */
            return mpix_zcopy_peer_exit_error(call, peer, pid);
        return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "%s: reading the layout of rank %d (%lld blocks) failed: %s", call,
                          peer, (long long)ref->nblocks, strerror(error));
    }
    if (ref->layout_id && (*layout = mpix_zcopy_received_add(zc, peer, ref->layout_id, scratch)))
        return MPI_SUCCESS;
    /* Not memoizable (a predefined type's layout, or no memory): use it once. */
    *layout = scratch;
    return MPI_SUCCESS;
}

int mpix_zcopy_peer_layout(mpix_zcopy_comm *zc, int peer, pid_t pid, const mpix_zcopy_layout_ref *ref,
                           mpix_layout *scratch, mpix_layout **layout, const char *call)
{
    if (mpix_zcopy_peer_layout_find(zc, peer, ref, scratch, layout))
        return MPI_SUCCESS;
    return mpix_zcopy_peer_layout_read(zc, peer, pid, ref, scratch, layout, NULL, call);
}

void mpix_zcopy_peer_layout_release(mpix_layout *scratch, const mpix_zcopy_layout_ref *ref)
{
    if (scratch->blocks && scratch->blocks != ref->inline_blocks)
        mpix_layout_free(scratch);
}
