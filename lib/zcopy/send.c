/* MPIX_Send_zcopy: choose the path for this message and peer, send the one MPI message
 * that carries the user's envelope, and for a zero-copy message wait until the receiver
 * has read the data. */
#include "zcopy.h"
#include "common/api.h"
#include "common/error.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { STACK_EAGER = 4096 };

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* The receiver writes the word through process_vm_writev, which wakes no futex, so the
 * sender polls: a short spin, then yields (the receiver may need this core), then naps,
 * driving MPI progress now and then for the program's other requests. */
static void wait_for_receiver(const int32_t *done, MPI_Comm comm)
{
    for (unsigned long poll = 0; __atomic_load_n(done, __ATOMIC_ACQUIRE) == MPIX_ZCOPY_PENDING; poll++) {
        if (poll < 64) {
            cpu_relax();
            continue;
        }
        if (poll % 256 == 0) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
        }
        if (poll < 20000)
            sched_yield();
        else
            nanosleep(&(struct timespec){ 0, 20000 }, NULL);
    }
}

/* Bytes of @layout, in order, after a header: what a receiver scatters into its own
 * layout. Small messages only, so the copy is cheaper than a round trip. */
static int send_eager(const char *buf, const mpix_layout *layout, mpix_zcopy_header *header, int dest, int tag,
                      MPI_Comm comm)
{
    char stack[STACK_EAGER];
    size_t total = sizeof *header + layout->bytes;
    char *wire = total <= sizeof stack ? stack : malloc(total), *at = wire + sizeof *header;
    if (!wire)
        return MPI_ERR_NO_MEM;
    header->kind = MPIX_ZCOPY_EAGER;
    memcpy(wire, header, sizeof *header);
    for (MPI_Aint b = 0; b < layout->nblocks; b++) {
        memcpy(at, buf + layout->blocks[b].offset, layout->blocks[b].length);
        at += layout->blocks[b].length;
    }
    int rc = MPI_Send(wire, (int)total, MPI_BYTE, dest, tag, comm);
    if (wire != stack)
        free(wire);
    return rc;
}

static int send_mpi(const void *buf, int count, MPI_Datatype datatype, mpix_zcopy_header *header, int dest, int tag,
                    MPI_Comm comm)
{
    header->kind = MPIX_ZCOPY_MPI;
    int rc = MPI_Send(header, sizeof *header, MPI_BYTE, dest, tag, comm);
    return rc != MPI_SUCCESS ? rc : MPI_Send(buf, count, datatype, dest, tag, comm);
}

static int send_rts(const void *buf, int count, const mpix_layout_view *view, mpix_zcopy_header *header, int dest,
                    int tag, MPI_Comm comm)
{
    int32_t done = MPIX_ZCOPY_PENDING;
    header->kind = MPIX_ZCOPY_RTS;
    header->base = (uintptr_t)buf;
    header->layout_address = (uintptr_t)view->layout->blocks;
    header->nblocks = view->layout->nblocks;
    header->count = count;
    header->layout_id = view->id;
    header->global_id = view->global_comm == comm ? view->global_id : 0;
    header->done_address = (uintptr_t)&done;
    if (view->layout->nblocks <= MPIX_ZCOPY_INLINE_BLOCKS)
        memcpy(header->inline_blocks, view->layout->blocks, view->layout->nblocks * sizeof(mpix_block));
    int rc = MPI_Send(header, sizeof *header, MPI_BYTE, dest, tag, comm);
    if (rc == MPI_SUCCESS)
        wait_for_receiver(&done, comm);
    return rc;
}

static int send_checked(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    mpix_zcopy_comm *zc;
    mpix_layout_view view;
    MPI_Count type_size;
    int rc = mpix_zcopy_comm_get(comm, &zc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Send_zcopy: count %d is negative", count);
    if (dest < 0 || dest >= zc->peers)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Send_zcopy: destination %d is not a rank of 0..%d", dest,
                          zc->peers - 1);
    if ((rc = MPI_Type_size_x(datatype, &type_size)) != MPI_SUCCESS)
        return rc;

    mpix_zcopy_process *process = zc->process;
    int world = zc->world_rank[dest];
    mpix_zcopy_directory_entry *entry = world != MPI_UNDEFINED ? &process->directory[world] : NULL;
    int attachable = zc->enabled && entry && entry->can_read_me;
    mpix_zcopy_header header = { .magic = MPIX_ZCOPY_MAGIC, .bytes = type_size * count,
                                 .node_key = process->node_key, .pid = process->pid };
    if (zc->enabled && entry && !attachable)
        header.learn_address = (uintptr_t)entry;

    if (header.bytes > zc->eager_bytes && !attachable) {
        zc->stats.sent[MPIX_ZCOPY_MPI]++;
        return send_mpi(buf, count, datatype, &header, dest, tag, comm);
    }
    if ((rc = mpix_layout_view_get(datatype, count, &view)) != MPI_SUCCESS)
        return rc;
    if (header.bytes <= zc->eager_bytes) {
        zc->stats.sent[MPIX_ZCOPY_EAGER]++;
        rc = send_eager(buf, view.layout, &header, dest, tag, comm);
    } else if (mpix_zcopy_too_fragmented(view.layout, zc->coalesce_bytes)) {
        zc->stats.sent[MPIX_ZCOPY_MPI]++;
        zc->stats.sent_fragmented++;
        rc = send_mpi(buf, count, datatype, &header, dest, tag, comm);
    } else {
        zc->stats.sent[MPIX_ZCOPY_RTS]++;
        rc = send_rts(buf, count, &view, &header, dest, tag, comm);
    }
    mpix_layout_view_release(&view);
    return rc;
}

MPIX_API int MPIX_Send_zcopy(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    return mpix_raise_comm(comm, send_checked(buf, count, datatype, dest, tag, comm));
}
