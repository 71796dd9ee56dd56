/* SPDX-License-Identifier: BSD-3-Clause */
/* zcopy for a program's own MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv and MPI_Sendrecv
 * (libmpix-pmpi.so with MPIX_PMPI=zcopy). The program's receives are MPI's, posted as
 * the program posts them, so matching, wildcards and ordering stay MPI's and messages
 * from anywhere else arrive as they were sent: only a large non-contiguous message to a
 * process of this node that can read the sender's memory becomes a zero-copy header of
 * fixed size, which MPI delivers into the receive's own buffer (the buffer is the
 * receive's until it completes). A completed receive of exactly a header's length is
 * read back; when it names a live message of that sender (magic, node, and a nonce the
 * sender keeps in its slot while the message lasts) the receiver copies the data over
 * it from the sender's memory and the status reports the real length. A sender whose
 * receiver does not come (it may wait in another call, a barrier, with the receive
 * posted) copies its data to a buffer of its own after a while and returns, as MPI's
 * own buffering would, and the receiver reads that copy instead.
 *
 * Zero-copy needs every receive of the program to pass by these wrappers: MPI_Init
 * enables it only where the program's calls reach the C wrappers (not where a Fortran
 * MPI binding is loaded), and only between processes that both enabled it. */
#include "interposed.h"
#include "common/api.h"
#include "common/arguments.h"
#include "common/empty_request.h"
#include "common/error.h"
#include "common/progress.h"
#include "common/relax.h"
#include "common/verbose.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A receiver in another call for this long makes the sender stage its data: longer
 * than a halo exchange's skew between neighbours, short against a compute phase. */
static const double STAGE_AFTER_SECONDS = 1e-3;

mpix_zcopy_interposed *mpix_interposed_state(mpix_zcopy_process **process)
{
    mpix_zcopy_process *found;
    if (mpix_zcopy_process_get(&found) != MPI_SUCCESS || !found)
        return NULL;
    if (process)
        *process = found;
    return found->interposed && found->interposed->active ? found->interposed : NULL;
}

void mpix_zcopy_interposed_destroy(mpix_zcopy_process *process)
{
    mpix_zcopy_interposed *state = process->interposed;
    if (!state)
        return;
    mpix_interposed_receive *receive, *next_receive;
    HASH_ITER(hh, state->receives, receive, next_receive) {
        HASH_DEL(state->receives, receive);
        if (receive->owns_datatype)
            (void)PMPI_Type_free(&receive->datatype);   /* at MPI_Finalize: nothing to report to */
        free(receive);
    }
    mpix_interposed_send *send, *next_send;
    HASH_ITER(hh, state->sends, send, next_send) {
        HASH_DEL(state->sends, send);
        free(send);
    }
    for (mpix_interposed_stashed *stashed = state->stash, *next; stashed; stashed = next) {
        next = stashed->next;
        free(stashed->packed);
        free(stashed);
    }
    for (int i = 0; i < state->staged_count; i++)
        free(state->staged[i].buffer);
    free(state->staged);
    pthread_mutex_destroy(&state->lock);
    free(state);
    process->interposed = NULL;
}

/* ---- MPI_Init: who on this node may send this process headers ------------------------ */

/* A Fortran MPI binding that calls MPI's receives and completions without passing by
 * the C wrappers (Open MPI's call the PMPI_ names, MPICH's mpi_f08 completes requests
 * through them), where the calling library does not wrap them itself, could let a
 * header land where no one reads it back. */
static const char *fortran_binding_loaded(void)
{
    static const char *const libraries[] = { "libmpi_mpifh.so.40", "libmpi_usempif08.so.40",
                                             "libmpi_usempi_ignore_tkr.so.40", "libmpifort.so.12",
                                             "libmpichfort.so.12" };
    for (size_t i = 0; i < sizeof libraries / sizeof *libraries; i++) {
        void *handle = dlopen(libraries[i], RTLD_LAZY | RTLD_NOLOAD);
        if (handle) {
            dlclose(handle);
            return libraries[i];
        }
    }
    return NULL;
}

typedef struct node_card {
    uint32_t node_key;
    int32_t pid;
    uint64_t directory;
    int32_t mailbox_fd;
    int32_t willing;
} node_card;

/* Each willing process writes itself into the directory of every process of its node it
 * can attach to: those then send it zero-copy headers. Collective over MPI_COMM_WORLD. */
static int learn_node(mpix_zcopy_process *process, int willing)
{
    int world_rank, rc = PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (rc != MPI_SUCCESS)
        return rc;
    node_card mine = { process->node_key, process->pid, (uintptr_t)process->directory, process->mailbox_fd, willing };
    node_card *cards = malloc(process->world_size * sizeof *cards);
    if (!cards)
        return MPI_ERR_NO_MEM;
    rc = PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, cards, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
    mpix_zcopy_directory_entry entry = { process->pid, 1 };
    for (int peer = 0; rc == MPI_SUCCESS && willing && peer < process->world_size; peer++) {
        if (peer == world_rank || cards[peer].node_key != process->node_key)
            continue;
        int refused = process->attach == MPIX_ZCOPY_ATTACH_REFUSE ||
                      !mpix_zcopy_peer_mailbox(process, cards[peer].pid, cards[peer].mailbox_fd) ||
                      mpix_zcopy_write_remote(cards[peer].pid, cards[peer].directory + world_rank * sizeof entry,
                                              &entry, sizeof entry);
        process->access[peer] = refused ? MPIX_ZCOPY_ACCESS_REFUSED : MPIX_ZCOPY_ACCESS_OK;
    }
    free(cards);
    /* Every directory is written before any process sends. */
    return rc == MPI_SUCCESS ? PMPI_Barrier(MPI_COMM_WORLD) : rc;
}

MPIX_API int mpix_interpose_zcopy_init(int fortran_wrapped)
{
    mpix_zcopy_process *process;
    mpix_zcopy_comm *world;
    int rc = mpix_zcopy_process_get(&process);
    if (rc == MPI_SUCCESS)
        rc = mpix_zcopy_comm_get(MPI_COMM_WORLD, &world);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_zcopy_interposed *state = calloc(1, sizeof *state);
    if (!state)
        return MPI_ERR_NO_MEM;
    /* Recursive: a send completed under the lock may stage, and keeps its copy under it. */
    pthread_mutexattr_t recursive;
    pthread_mutexattr_init(&recursive);
    pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&state->lock, &recursive);
    pthread_mutexattr_destroy(&recursive);
    state->verbose = world->settings.verbose;
    state->stage_after = STAGE_AFTER_SECONDS;
    process->interposed = state;
    const char *fortran = fortran_wrapped ? NULL : fortran_binding_loaded();
    int willing = world->settings.enabled && process->mailbox && !fortran;
    rc = learn_node(process, willing);
    state->active = rc == MPI_SUCCESS && willing;
    if (state->verbose)
        mpix_verbose_print("zcopy", "interposed calls: %s",
                           state->active ? "large non-contiguous messages between processes of this node go zero-copy"
                           : fortran     ? "plain MPI: a Fortran MPI binding is loaded, whose receives pass by the wrappers"
                           : !world->settings.enabled ? "plain MPI (MPIX_ZCOPY=off)"
                                             : "plain MPI: no mailbox (memfd_create failed)");
    return rc;
}

/* ---- senders' staged copies ------------------------------------------------------------ */

void mpix_zcopy_staged_keep(mpix_zcopy_process *process, int slot_index, char *staged)
{
    mpix_zcopy_interposed *state = process->interposed;
    pthread_mutex_lock(&state->lock);
    if (state->staged_count == state->staged_capacity) {
        int capacity = state->staged_capacity ? 2 * state->staged_capacity : 8;
        mpix_interposed_staged *grown = realloc(state->staged, capacity * sizeof *grown);
        if (!grown) { /* cannot remember it: the copy stays, the slot stays taken */
            pthread_mutex_unlock(&state->lock);
            return;
        }
        state->staged = grown;
        state->staged_capacity = capacity;
    }
    state->staged[state->staged_count++] = (mpix_interposed_staged){ slot_index, staged };
    state->staged_sends++;
    atomic_store_explicit(&state->staged_pending, state->staged_count, memory_order_relaxed);
    pthread_mutex_unlock(&state->lock);
}

void mpix_zcopy_staged_reap(mpix_zcopy_process *process, double wait_seconds)
{
    mpix_zcopy_interposed *state = process->interposed;
    if (!state || !atomic_load_explicit(&state->staged_pending, memory_order_relaxed))
        return;
    double deadline = PMPI_Wtime() + wait_seconds;
    pthread_mutex_lock(&state->lock);
    for (unsigned long poll = 0;; poll++) {
        int kept = 0;
        for (int i = 0; i < state->staged_count; i++) {
            int32_t ended = atomic_load_explicit(&process->mailbox[state->staged[i].slot_index].state,
                                                 memory_order_acquire);
            if (ended == MPIX_ZCOPY_DONE || ended == MPIX_ZCOPY_ABANDONED) {
                free(state->staged[i].buffer);
                mpix_zcopy_slot_release(process, state->staged[i].slot_index);
            } else
                state->staged[kept++] = state->staged[i];
        }
        state->staged_count = kept;
        if (!kept || PMPI_Wtime() >= deadline)
            break;
        mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    }
    atomic_store_explicit(&state->staged_pending, state->staged_count, memory_order_relaxed);
    pthread_mutex_unlock(&state->lock);
}

/* ---- receives ------------------------------------------------------------------------- */

/* The first sizeof *header bytes the message put into @buf through @datatype. */
static int read_header_back(mpix_zcopy_comm *zc, const void *buf, int count, MPI_Datatype datatype,
                            mpix_zcopy_header *header)
{
    mpix_layout_view view;
    int rc = mpix_layout_view_get(zc, datatype, count, &view);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_layout_cursor cursor;
    mpix_layout_cursor_at(&cursor, view.layout, 0);
    mpix_layout_gather(&cursor, buf, (char *)header, sizeof *header);
    int whole = view.layout->bytes >= (MPI_Count)sizeof *header;
    mpix_layout_view_release(&view);
    return whole ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
}

/* When @header, the first bytes of a message MPI matched (@status) of a header's length,
 * is a live one, reads the message it announces into @buf and answers 1 (as
 * mpix_interposed_inspect). */
static int deliver_header(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, MPI_Comm comm,
                          const MPI_Status *status, mpix_zcopy_header *header, int may_ask_help,
                          const char *call, int *rc,
                          MPI_Count *bytes)
{
    if (!mpix_zcopy_header_is_live(zc, status->MPI_SOURCE, header))
        return 0;
    *rc = mpix_zcopy_receive_header(zc, buf, count, datatype, status->MPI_SOURCE, header, comm, may_ask_help, call);
    *bytes = header->bytes;
    mpix_zcopy_process *process;
    mpix_zcopy_interposed *state = mpix_interposed_state(&process);
    if (state)
        state->received_zero_copy++;
    return 1;
}

/* Whether MPI delivered a message of a header's length (@status complete). */
static int header_length(const MPI_Status *status)
{
    int length, cancelled = 0;
    return status->MPI_SOURCE >= 0 && PMPI_Get_count(status, MPI_BYTE, &length) == MPI_SUCCESS &&
           length == (int)sizeof(mpix_zcopy_header) && PMPI_Test_cancelled(status, &cancelled) == MPI_SUCCESS &&
           !cancelled;
}

int mpix_interposed_inspect(void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, const MPI_Status *status,
                            int may_ask_help, const char *call, int *rc, MPI_Count *bytes)
{
    mpix_zcopy_comm *zc;
    mpix_zcopy_header header;
    return header_length(status) && mpix_zcopy_comm_get(comm, &zc) == MPI_SUCCESS &&
           read_header_back(zc, buf, count, datatype, &header) == MPI_SUCCESS &&
           deliver_header(zc, buf, count, datatype, comm, status, &header, may_ask_help, call, rc, bytes);
}

int mpix_interposed_status_set(MPI_Status *status, MPI_Count bytes, int count, MPI_Datatype datatype, int rc)
{
    MPI_Count type_size;
    int set_rc = PMPI_Type_size_x(datatype, &type_size);
    if (set_rc != MPI_SUCCESS)
        return set_rc;
    MPI_Count capacity = type_size * count;
    status->MPI_ERROR = rc;
    return PMPI_Status_set_elements_x(status, MPI_BYTE, bytes < capacity ? bytes : capacity);
}

/* Whether a header may land in this receive: a peer of this node may send zero-copy to
 * this process on @comm (@source, or any), and the buffer holds a header. */
static int may_get_header(int count, MPI_Datatype datatype, int source, MPI_Comm comm)
{
    mpix_zcopy_comm *zc;
    MPI_Count type_size;
    if (source == MPI_PROC_NULL || PMPI_Type_size_x(datatype, &type_size) != MPI_SUCCESS ||
        type_size * count < (MPI_Count)sizeof(mpix_zcopy_header) || mpix_zcopy_comm_get(comm, &zc) != MPI_SUCCESS ||
        !zc->settings.enabled)
        return 0;
    if (source != MPI_ANY_SOURCE)
        return mpix_zcopy_peer_attachable(zc, source);
    for (int peer = 0; peer < zc->peers; peer++)
        if (mpix_zcopy_peer_attachable(zc, peer))
            return 1;
    return 0;
}

/* MPICH 4.0 moves a message of tiny blocks several times faster where the sender packs
 * it (MPI_Pack, sent as MPI_PACKED) and the receiver receives the MPI_PACKED bytes and
 * unpacks them itself: NAS MG's x-face (16,900 doubles at stride 130) took 296-334 us a
 * round trip so, 1041-1235 us packed and received with the datatype, 1189-1432 us with
 * the datatype on both sides (plain MPI, the 2-core test VM). Open MPI 4.1 took 494-515,
 * 454-475 and 422-442 us: its datatype engine receives as fast as a receiver unpacks. A
 * program's own MPI_Send of such a layout goes packed where its learner found that
 * faster (send.c), with no header to tell the receiver; so the receiver takes the
 * MPI_PACKED bytes where this process's own sends of the same shape go packed, as the
 * sends of a halo exchange or a ping-pong mirror their receives. MPI lets any message be
 * received as MPI_PACKED: one its sender did not pack arrives as right, more slowly (a
 * vector of 8-byte blocks, 270,400 bytes: 1276-1428 us a round trip against 886-1201 with
 * the datatype on both sides, MPICH). */
#if MPIX_MPI_IS_MPICH
enum { RECEIVER_UNPACKS = 1 };
#else
enum { RECEIVER_UNPACKS = 0 };
#endif

/* Whether a receive of @count of @datatype takes the message as MPI_PACKED bytes, at
 * most *@capacity: a large message of a shape this process sends packed, or every large
 * one where MPIX_ZCOPY_METHOD=packed packs them all. */
static int receives_packed(int count, MPI_Datatype datatype, int source, MPI_Comm comm, int *capacity)
{
    mpix_zcopy_comm *zc;
    MPI_Count type_size;
    mpix_type_shape shape;
    mpix_zcopy_shape_ref ref;
    int fragmented;
    if (!RECEIVER_UNPACKS || source == MPI_PROC_NULL || count <= 0 || datatype == MPI_DATATYPE_NULL ||
        mpix_type_is_named(datatype) || PMPI_Type_size_x(datatype, &type_size) != MPI_SUCCESS ||
        type_size * count > INT_MAX || mpix_zcopy_comm_get(comm, &zc) != MPI_SUCCESS || !zc->settings.enabled ||
        type_size * count <= zc->settings.eager_bytes)
        return 0;
    *capacity = (int)(type_size * count);
    if (zc->settings.method != MPIX_ZCOPY_METHOD_AUTO)
        return zc->settings.method == MPIX_ZCOPY_METHOD_PACKED;
    return mpix_type_shape_of(datatype, count, &shape) == MPI_SUCCESS &&
           mpix_zcopy_shape_find(zc->process, &shape, &ref, &fragmented) &&
           mpix_zcopy_shape_sends_packed(zc->process, &ref, 1);
}

void mpix_interposed_unpack_arrived(const char *packed, int capacity, const MPI_Status *status, int get_rc, void *buf,
                                    int count, MPI_Datatype datatype, MPI_Comm comm, int may_ask_help,
                                    const char *call, int *rc,
                                    MPI_Count *bytes)
{
    int error_class, cancelled = 0, length;
    *bytes = -1;
    *rc = get_rc;
    if (get_rc != MPI_SUCCESS) {
        if (PMPI_Error_class(get_rc, &error_class) == MPI_SUCCESS && error_class == MPI_ERR_TRUNCATE)
            (void)mpix_zcopy_unpack_received(packed, capacity, buf, count, datatype, comm);   /* get_rc is the error */
        return;
    }
    if ((*rc = PMPI_Test_cancelled(status, &cancelled)) != MPI_SUCCESS || cancelled)
        return;
    mpix_zcopy_comm *zc;
    mpix_zcopy_header header;
    if (header_length(status) && mpix_zcopy_comm_get(comm, &zc) == MPI_SUCCESS) {
        memcpy(&header, packed, sizeof header);
        if (deliver_header(zc, buf, count, datatype, comm, status, &header, may_ask_help, call, rc, bytes))
            return;
    }
    if ((*rc = PMPI_Get_count(status, MPI_BYTE, &length)) != MPI_SUCCESS)
        return;
    *rc = mpix_zcopy_unpack_received(packed, length, buf, count, datatype, comm);
    *bytes = length;
    mpix_zcopy_interposed *state = mpix_interposed_state(NULL);
    if (state)
        state->received_unpacked++;
}

/* The program's MPI_Recv as MPI_PACKED bytes (receives_packed), unpacked into its buffer;
 * a zero-copy header read as ever. */
static int receive_unpacking(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                             int capacity, MPI_Status *status)
{
    /* MPI_Recv's check that the datatype is committed: MPI_PACKED has none to make. */
    int rc = mpix_check_datatype(datatype, comm);
    mpix_zcopy_comm *zc;
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = mpix_zcopy_comm_get(comm, &zc)) != MPI_SUCCESS)
        return mpix_raise_comm(comm, rc);
    char *packed = mpix_scratch_take(&zc->unpacking, (size_t)capacity);
    if (!packed)
        return mpix_raise_comm(comm, MPI_ERR_NO_MEM);
    MPI_Status received;
    MPI_Count bytes;
    int recv_rc = PMPI_Recv(packed, capacity, MPI_PACKED, source, tag, comm, &received);
    mpix_interposed_unpack_arrived(packed, capacity, &received, recv_rc, buf, count, datatype, comm, 1, "MPI_Recv", &rc,
                                   &bytes);
    mpix_scratch_give(&zc->unpacking, packed);
    if (bytes >= 0) {
        int set_rc = mpix_interposed_status_set(&received, bytes, count, datatype, rc);
        if (rc == MPI_SUCCESS)
            rc = set_rc;
    }
    if (status != MPI_STATUS_IGNORE)
        *status = received;
    /* An error of MPI_Recv's own MPI raised already. */
    return recv_rc != MPI_SUCCESS ? recv_rc : mpix_raise_comm(comm, rc);
}

MPIX_API int mpix_interpose_zcopy_recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                                       MPI_Comm comm, MPI_Status *status)
{
    mpix_zcopy_interposed *state = mpix_interposed_state(NULL);
    if (!state)
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    if (atomic_load_explicit(&state->stashed, memory_order_acquire)) {
        pthread_mutex_lock(&state->lock);
        mpix_interposed_stashed *stashed = mpix_interposed_stash_take(state, source, tag, comm);
        pthread_mutex_unlock(&state->lock);
        if (stashed)
            return mpix_raise_comm(comm, mpix_interposed_stash_deliver(stashed, buf, count, datatype, status, "MPI_Recv"));
    }
    int capacity;
    if (receives_packed(count, datatype, source, comm, &capacity))
        return receive_unpacking(buf, count, datatype, source, tag, comm, capacity, status);
    MPI_Status received;
    int rc = PMPI_Recv(buf, count, datatype, source, tag, comm, &received), zero_copy_rc;
    MPI_Count bytes;
    if (rc == MPI_SUCCESS &&
        mpix_interposed_inspect(buf, count, datatype, comm, &received, 1, "MPI_Recv", &zero_copy_rc, &bytes)) {
        rc = mpix_interposed_status_set(&received, bytes, count, datatype, zero_copy_rc);
        if (rc == MPI_SUCCESS)
            rc = zero_copy_rc;
        rc = mpix_raise_comm(comm, rc);
    }
    if (status != MPI_STATUS_IGNORE)
        *status = received;
    return rc;
}

static void track_receive(mpix_zcopy_interposed *state, mpix_interposed_receive *entry, MPI_Request request)
{
    entry->request = request;
    pthread_mutex_lock(&state->lock);
    HASH_ADD(hh, state->receives, request, sizeof entry->request, entry);
    atomic_fetch_add_explicit(&state->tracked, 1, memory_order_relaxed);
    pthread_mutex_unlock(&state->lock);
}

/* Posts the receive, and remembers it where a header may land in it, or where it is
 * taken as @capacity (above 0) MPI_PACKED bytes, unpacked once complete (receives_packed). */
static int post_receive(mpix_zcopy_interposed *state, void *buf, int count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, MPI_Request *request, int persistent, int capacity)
{
    mpix_interposed_stashed *stashed = NULL;
    if (!persistent && atomic_load_explicit(&state->stashed, memory_order_acquire)) {
        pthread_mutex_lock(&state->lock);
        stashed = mpix_interposed_stash_take(state, source, tag, comm);
        pthread_mutex_unlock(&state->lock);
    }
    if (!stashed && capacity == 0 && !may_get_header(count, datatype, source, comm))
        return persistent ? PMPI_Recv_init(buf, count, datatype, source, tag, comm, request)
                          : PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    mpix_interposed_receive *entry = calloc(1, sizeof *entry);
    if (!entry)
        return MPI_ERR_NO_MEM;
    *entry = (mpix_interposed_receive){ .buf = buf, .count = count, .datatype = datatype, .comm = comm,
                                        .persistent = persistent, .active = !persistent, .bytes = -1,
                                        .call = persistent ? "MPI_Recv_init" : "MPI_Irecv" };
    int rc;
    if (stashed) {
        /* Delivered now, behind a request this library completes. */
        entry->from_stash = 1;
        entry->inspected = 1;
        rc = mpix_interposed_stash_deliver(stashed, buf, count, datatype, &entry->stash_status, entry->call);
        entry->rc = rc;
        rc = mpix_empty_request_start(request);
    } else {
        /* The program may free its datatype once the call returned. */
        rc = MPI_SUCCESS;
        if (!mpix_type_is_named(datatype) && (rc = PMPI_Type_dup(datatype, &entry->datatype)) == MPI_SUCCESS)
            entry->owns_datatype = 1;
        if (rc == MPI_SUCCESS && capacity > 0 && !(entry->packed = malloc((size_t)capacity)))
            rc = MPI_ERR_NO_MEM;
        entry->capacity = capacity;
        if (rc == MPI_SUCCESS)
            rc = entry->packed ? PMPI_Irecv(entry->packed, capacity, MPI_PACKED, source, tag, comm, request)
                 : persistent  ? PMPI_Recv_init(buf, count, datatype, source, tag, comm, request)
                               : PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    }
    if (rc != MPI_SUCCESS) {
        if (entry->owns_datatype)
            (void)PMPI_Type_free(&entry->datatype);   /* rc is the error to report */
        free(entry->packed);
        free(entry);
        return rc;
    }
    track_receive(state, entry, *request);
    return MPI_SUCCESS;
}

int mpix_interposed_receive_done(void *buf, int count, MPI_Datatype datatype, const MPI_Status *status, int rc,
                                    MPI_Comm comm, MPI_Request *request)
{
    mpix_zcopy_interposed *state = mpix_interposed_state(NULL);
    mpix_interposed_receive *entry = calloc(1, sizeof *entry);
    if (!state || !entry) {
        free(entry);
        return MPI_ERR_NO_MEM;
    }
    *entry = (mpix_interposed_receive){ .buf = buf, .count = count, .datatype = datatype, .comm = comm, .active = 1,
                                        .inspected = 1, .rc = rc, .bytes = -1, .from_stash = 1,
                                        .stash_status = *status };
    int post_rc = mpix_empty_request_start(request);
    if (post_rc != MPI_SUCCESS) {
        free(entry);
        return post_rc;
    }
    track_receive(state, entry, *request);
    return MPI_SUCCESS;
}

MPIX_API int mpix_interpose_zcopy_irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                                        MPI_Comm comm, MPI_Request *request)
{
    mpix_zcopy_interposed *state = mpix_interposed_state(NULL);
    if (!state)
        return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    int capacity;
    if (!receives_packed(count, datatype, source, comm, &capacity))
        capacity = 0;
    else {
        /* MPI_Irecv's check that the datatype is committed: MPI_PACKED has none to make. */
        int rc = mpix_check_datatype(datatype, comm);
        if (rc != MPI_SUCCESS)
            return rc;   /* raised by MPI */
    }
    return mpix_raise_comm(comm, post_receive(state, buf, count, datatype, source, tag, comm, request, 0, capacity));
}

MPIX_API int mpix_interpose_zcopy_recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                                            MPI_Comm comm, MPI_Request *request)
{
    mpix_zcopy_interposed *state = mpix_interposed_state(NULL);
    if (!state)
        return PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
    return mpix_raise_comm(comm, post_receive(state, buf, count, datatype, source, tag, comm, request, 1, 0));
}

/* ---- sends ------------------------------------------------------------------------------ */

static void count_send(mpix_zcopy_interposed *state, const mpix_zcopy_send *send)
{
    if (send->kind == MPIX_ZCOPY_RTS)
        state->sent_zero_copy++;
    else {
        state->sent_plain++;
        state->sent_packed += send->way == MPIX_ZCOPY_WAY_PACKED;
    }
}

/* A zero-copy message shows MPI only its header, so MPI's own check that a derived
 * datatype is committed comes first (raised by MPI, as from MPI_Send). MPI checks a
 * predefined or null datatype as it sends, and any datatype of a send too small to go
 * zero-copy (@eager_bytes or less), which MPI sends as it is. */
static int check_derived(int count, MPI_Datatype datatype, MPI_Comm comm, MPI_Count eager_bytes)
{
    MPI_Count type_size;
    if (datatype == MPI_DATATYPE_NULL ||
        (PMPI_Type_size_x(datatype, &type_size) == MPI_SUCCESS && type_size * count <= eager_bytes) ||
        mpix_type_is_named(datatype))
        return MPI_SUCCESS;
    return mpix_check_datatype(datatype, comm);
}

MPIX_API int mpix_interpose_zcopy_send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                                       MPI_Comm comm)
{
    mpix_zcopy_process *process;
    mpix_zcopy_interposed *state = mpix_interposed_state(&process);
    if (!state || dest == MPI_PROC_NULL || count <= 0)
        return PMPI_Send(buf, count, datatype, dest, tag, comm);
    int checked_rc = check_derived(count, datatype, comm, process->settings.eager_bytes);
    if (checked_rc != MPI_SUCCESS)
        return checked_rc;   /* raised by MPI */
    mpix_zcopy_staged_reap(process, 0);
    mpix_zcopy_send send;
    int done = 0, rc = mpix_zcopy_send_start_interposed(&send, buf, count, datatype, dest, tag, comm, 1);
    if (!send.zc)
        return mpix_raise_comm(comm, rc);
    count_send(state, &send);
    /* Waiting for the receiver, this process reads what its own posted receives got:
     * two processes sending to each other before they wait would wait for ever. */
    for (unsigned long poll = 0; rc == MPI_SUCCESS && send.kind == MPIX_ZCOPY_RTS; poll++) {
        int helped = send.helped;
        if ((rc = mpix_zcopy_send_test_interposed(&send, state->stage_after, &done)) != MPI_SUCCESS || done)
            break;
        if (send.helped != helped) {
            poll = 0;
            continue;
        }
        if (atomic_load_explicit(&state->tracked, memory_order_relaxed)) {
            pthread_mutex_lock(&state->lock);
            mpix_interposed_progress_locked(state, 0);
            pthread_mutex_unlock(&state->lock);
        }
        if (poll >= 64 && poll % 256 == 0)
            (void)mpix_mpi_progress(); /* a failure shows in the calls of what it moves */
        mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    }
    return mpix_raise_comm(comm, mpix_zcopy_send_end(&send, rc));
}

MPIX_API int mpix_interpose_zcopy_isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                                        MPI_Comm comm, MPI_Request *request)
{
    mpix_zcopy_process *process;
    mpix_zcopy_interposed *state = mpix_interposed_state(&process);
    if (!state || dest == MPI_PROC_NULL || count <= 0)
        return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
    int checked_rc = check_derived(count, datatype, comm, process->settings.eager_bytes);
    if (checked_rc != MPI_SUCCESS)
        return checked_rc;   /* raised by MPI */
    mpix_zcopy_staged_reap(process, 0);
    /* Not calloc: the send's start sets what it reads, and its 2 KiB of headers are
     * not worth clearing for every small send. */
    mpix_interposed_send *entry = malloc(sizeof *entry);
    if (!entry)
        return mpix_raise_comm(comm, MPI_ERR_NO_MEM);
    entry->request = MPI_REQUEST_NULL;
    entry->generalized_completed = 0;
    memset(&entry->hh, 0, sizeof entry->hh);
    int rc = mpix_zcopy_send_start_interposed(&entry->send, buf, count, datatype, dest, tag, comm, 0);
    if (!entry->send.zc) {
        free(entry);
        return mpix_raise_comm(comm, rc);
    }
    count_send(state, &entry->send);
    if (rc != MPI_SUCCESS || entry->send.kind != MPIX_ZCOPY_RTS) {
        /* MPI's own request: the wrappers leave it to MPI. */
        *request = entry->send.inner;
        rc = mpix_zcopy_send_end(&entry->send, rc);
        free(entry);
        return mpix_raise_comm(comm, rc);
    }
    /* A request of the program's alone (an MPI may hand out one shared handle for every
     * send it completed at once, so the header's own request cannot be the key), which
     * this library completes; cancelling it does nothing: a zero-copy send cannot be
     * taken back once its header left. */
    if ((rc = mpix_empty_request_start(request)) != MPI_SUCCESS) {
        /* The header is on its way: the message must still end. */
        int done = 0;
        for (unsigned long poll = 0; !done && mpix_zcopy_send_test_interposed(&entry->send, 0, &done) == MPI_SUCCESS;
             poll++)
            mpix_backoff(poll, MPIX_BACKOFF_SPINS);
        (void)PMPI_Wait(&entry->send.inner, MPI_STATUS_IGNORE);   /* rc is the error to report */
        mpix_zcopy_send_end(&entry->send, rc);
        free(entry);
        return mpix_raise_comm(comm, rc);
    }
    entry->request = *request;
    entry->send.start = PMPI_Wtime();   /* stage_after counts from here */
    pthread_mutex_lock(&state->lock);
    HASH_ADD(hh, state->sends, request, sizeof entry->request, entry);
    atomic_fetch_add_explicit(&state->tracked, 1, memory_order_relaxed);
    pthread_mutex_unlock(&state->lock);
    return MPI_SUCCESS;
}

int mpix_interpose_zcopy_wait(MPI_Request *request, MPI_Status *status);

/* MPI_Sendrecv does nothing when an argument of either half is wrong; its halves here
 * run one after the other, so both are judged first (by MPI, with its classes). */
static int check_sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm)
{
    int rc = mpix_check_transfer("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, comm, MPIX_SENDING);
    if (rc == MPI_SUCCESS)
        rc = mpix_check_transfer("MPI_Sendrecv", recvbuf, recvcount, recvtype, source, recvtag, comm,
                                 MPIX_RECEIVING);
    return rc;   /* raised */
}

MPIX_API int mpix_interpose_zcopy_sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                                           int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                           int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (!mpix_interposed_state(NULL))
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                             recvtag, comm, status);
    int rc = check_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                            recvtag, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        /* MPI_Recv's empty status (source MPI_PROC_NULL, tag MPI_ANY_TAG): MPICH 4.0's
         * MPI_Irecv from MPI_PROC_NULL completes with source 0 and tag 0. */
        int send_rc = mpix_interpose_zcopy_send(sendbuf, sendcount, sendtype, dest, sendtag, comm);
        int rc = PMPI_Recv(recvbuf, recvcount, recvtype, MPI_PROC_NULL, recvtag, comm, status);   /* MPI raised it */
        return send_rc != MPI_SUCCESS ? send_rc : rc;
    }
    MPI_Request receive;
    rc = mpix_interpose_zcopy_irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &receive);
    if (rc != MPI_SUCCESS)
        return rc;
    int send_rc = mpix_interpose_zcopy_send(sendbuf, sendcount, sendtype, dest, sendtag, comm);
    rc = mpix_interpose_zcopy_wait(&receive, status);
    return send_rc != MPI_SUCCESS ? send_rc : rc;
}

/* The data to send leaves packed, so the buffer can take what arrives. */
MPIX_API int mpix_interpose_zcopy_sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                                                   int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (!mpix_interposed_state(NULL))
        return PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
    int rc = check_sendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    int packed_bytes = 0, position = 0;
    mpix_zcopy_comm *zc = NULL;
    if ((rc = PMPI_Pack_size(count, datatype, comm, &packed_bytes)) == MPI_SUCCESS)
        rc = mpix_zcopy_comm_get(comm, &zc);
    char *packed = rc == MPI_SUCCESS ? mpix_scratch_take(&zc->packing, (size_t)packed_bytes) : NULL;
    if (rc == MPI_SUCCESS && !packed)
        rc = MPI_ERR_NO_MEM;
    MPI_Request send = MPI_REQUEST_NULL;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Pack(buf, count, datatype, packed, packed_bytes, &position, comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Isend(packed, position, MPI_PACKED, dest, sendtag, comm, &send);
    if (rc == MPI_SUCCESS)
        rc = mpix_interpose_zcopy_recv(buf, count, datatype, source, recvtag, comm, status);
    if (send != MPI_REQUEST_NULL) {
        int send_rc = PMPI_Wait(&send, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = send_rc;
    }
    if (zc)
        mpix_scratch_give(&zc->packing, packed);
    return mpix_raise_comm(comm, rc);
}

/* ---- MPI_Finalize ---------------------------------------------------------------------- */

MPIX_API int mpix_interpose_zcopy_finalize(void)
{
    mpix_zcopy_process *process;
    mpix_zcopy_interposed *state = mpix_interposed_state(&process);
    if (!state)
        return MPI_SUCCESS;
    /* Receivers read staged copies before they finalize; one that failed never will. */
    mpix_zcopy_staged_reap(process, 10.0);
    if (state->verbose) {
        int rank = 0;
        (void)PMPI_Comm_rank(MPI_COMM_WORLD, &rank);   /* for the line only */
        mpix_verbose_print("zcopy",
                           "rank %d: %lu sends zero-copy (%lu staged), %lu through MPI (%lu packed); %lu receives "
                           "zero-copy, %lu unpacked here",
                           rank, state->sent_zero_copy, state->staged_sends, state->sent_plain, state->sent_packed,
                           state->received_zero_copy, state->received_unpacked);
    }
    if (state->staged_count)
        mpix_verbose_print("zcopy", "%d zero-copy messages were never received", state->staged_count);
    return MPI_SUCCESS;
}
