/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mpix/zcopy.h
 * @brief Zero-copy derived-datatype send: the receiver copies straight from the
 *        sender's layout into its own, once, with memoized layouts.
 *
 * MPIX_Send_zcopy and MPIX_Recv_zcopy have the signatures and the observable results of
 * MPI_Send and MPI_Recv, MPIX_Isend_zcopy and MPIX_Irecv_zcopy those of MPI_Isend and
 * MPI_Irecv (at any thread level: see MPIX_Isend_zcopy); both sides of a message use
 * them. Between processes of one node
 * a large message is not packed: the receiver reads the sender's memory with the
 * kernel's cross-memory attach (`process_vm_readv`), block by block or in coalesced
 * spans, straight into its own layout, while the sender, which waits anyway, writes the
 * tail of the message into the receiver's layout (`process_vm_writev`); then the
 * receiver tells the sender it is done, through a small shared mailbox. Small
 * messages, processes on other nodes, peers the kernel refuses to attach to, and
 * `MPIX_ZCOPY=off` use plain MPI with the datatype, the message as MPI_Send sends it. A
 * layout too fragmented for a kernel copy goes through MPI with the datatype, or packed
 * by the sender (MPI_Pack, sent as
 * MPI_PACKED) and perhaps unpacked by the receiver, whichever the sender measured
 * fastest for layouts of its shape.
 *
 * @par Fortran
 * `use mpix_zcopy` (installed beside this header's folder, built with the MPI's own
 * Fortran wrapper) declares every call of this header for `use mpi` (integer handles,
 * IERROR last) and `use mpi_f08` (its handle types, IERROR optional); mpif.h programs
 * call the same names without it. Buffers are passed by their first element's address:
 * pass whole arrays or array elements, not array sections (docs/zcopy.md, "Fortran").
 *
 * @par Messages on the communicator
 * Every message travels on @p comm with the caller's tag, so matching, wildcards and
 * the non-overtaking order are MPI's own. A message carries no header unless it has
 * something to tell the receiver: data of up to 16 KiB, and larger data through MPI,
 * travel as MPI_Send would send them, so MPIX_Recv_zcopy receives a plain MPI_Send too.
 * A header of 1031 bytes travels alone in place of a zero-copy message's data; before
 * the data, as a question any receive answers and then receives on (whether the
 * receiver can attach to the sender, asked by the first messages to a peer); and, below
 * MPI_THREAD_MULTIPLE, before data that follows as the sender's next message (a blocking
 * send timed or packed by the sender): keep every process of a job on the same side of
 * MPI_THREAD_MULTIPLE. The rest of the protocol (the layout, the completion) goes
 * through the two processes' memory, never through @p comm, so no receive of the
 * program can consume it. Do not receive a zcopy message with MPI_Recv: a zero-copy one
 * would leave its header there. With Open MPI every receive is posted into the caller's
 * buffer at once (MPI_Recv, MPI_Irecv) and a header found there acted on; MPI refuses a
 * header into a buffer whose elements it ends inside with MPICH, so there a receive for
 * more than 16 KiB matches its message first (MPI_Mprobe, MPI_Improbe), a blocking one
 * for up to 16 KiB is posted at once, and on both a nonblocking one for less than 1031
 * bytes is MPI's own receive (its request). A zcopy message longer than a receive's
 * buffer is MPI_ERR_TRUNCATE there, as with MPI_Recv; if it went zero-copy to a receive
 * for less than 1031 bytes (with MPICH, one of a datatype the header ends inside an
 * element of, for up to 16 KiB), its sender is not released.
 *
 * @par Layouts and memoization
 * A datatype's flattened layout (offset, length blocks in type-map order, adjacent
 * blocks merged) is computed once from MPI_Type_get_envelope/MPI_Type_get_contents and
 * cached on the datatype as an attribute, with the expansion for the last count used. A
 * sender gives each cached layout an id never reused in its process; a receiver keeps
 * the layouts it has read under (sender, id), so a repeated send carries only the id.
 * Freeing a datatype deletes its cache, so a reused handle never meets a stale layout.
 * The first message of a long layout is read in chunks, each copied as it arrives.
 * MPIX_Type_commit_comm gives a datatype one id on every process of a communicator, and
 * then no layout is ever read from a peer.
 *
 * @par Knobs (environment variables, read by a process's first zcopy call)
 * - `MPIX_ZCOPY` (`on`|`off`, default on): off sends everything through plain MPI.
 * - `MPIX_ZCOPY_EAGER_BYTES` (default 16384): messages up to this size go through MPI,
 *   never zero-copy.
 * - `MPIX_ZCOPY_COALESCE_BYTES` (default 4096): blocks shorter than this are read as
 *   part of one span with their neighbours when the gap between them is shorter too,
 *   and scattered locally; a layout whose small blocks are mostly isolated goes
 *   through MPI instead. 0 turns coalescing off.
 * - `MPIX_ZCOPY_PTRACER` (`on`|`off`, default off): on kernels with Yama
 *   `ptrace_scope=1`, let any process of this user read this process's memory
 *   (`prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY)`). A security trade-off: opt in only
 *   where the node is trusted. Without it such kernels get the MPI path.
 * - `MPIX_ZCOPY_SPLIT_BYTES` (default 65536): zero-copy messages of at least this size
 *   are copied by both sides, each a part sized by a cost model; 0 never splits.
 * - `MPIX_ZCOPY_COLLAPSE` (`on`|`off`, default on): a buffer that zero-copy sends or
 *   receives meet again and again has the aligned 2 MiB units wholly inside the
 *   message's extent folded into transparent huge pages (madvise MADV_COLLAPSE, Linux
 *   6.1; the contents stay) once its copies have cost what a fold costs (about a dozen
 *   sights where the message fills the unit, more where it touches few of its pages; the
 *   process times its folds), because the kernel's cross-memory copy pins
 *   every page and runs about 1.8x faster from huge pages. The first fold copies each
 *   unit once; memory marked MADV_NOHUGEPAGE is left alone; older kernels, and a kernel
 *   with no huge page free at the time, just keep their pages (folding is best effort
 *   and never an error).
 * - `MPIX_ZCOPY_FOLD_THREAD` (default true): those folds run on a thread of the
 *   process's own, started at the first unit due, which makes no MPI call and ends at
 *   MPI_Finalize, so that a fold the kernel makes slow (3-7 ms where it must compact
 *   memory) stalls no call; false folds in the call that finds the unit due, at most
 *   16 units (32 MiB) and 1 ms of folding a call.
 * - `MPIX_VERBOSE=1`: print the settings in force, and the path chosen for each peer
 *   once, and why.
 * `mpix-settings` lists these with their defaults, and the settings that tests use
 *   to force each fallback.
 *
 * @par Thread safety
 * Under MPI_THREAD_MULTIPLE calls may run concurrently, on different communicators or
 * on one (threads receiving with wildcards on one communicator each get whole
 * messages), with the same datatype too: a datatype's memoized layout and a
 * communicator's tables of peers' layouts are shared under locks, and a thread that
 * would have to replace an entry another call may be using gets a layout of its own
 * for that call instead. Concurrent sends with the same (communicator, destination,
 * tag) have no defined order, as in MPI. The path statistics kept for tests and
 * MPIX_VERBOSE are plain counters that concurrent calls may undercount.
 */
#ifndef MPIX_ZCOPY_H
#define MPIX_ZCOPY_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Blocking send of @p count elements of @p datatype, zero-copy on the node.
 *
 * Returns when @p buf may be reused: as MPI_Send for a small or plain-MPI message, after the
 * receiver has copied the data for a zero-copy one (like a synchronous send).
 * @param buf      data (MPI_BOTTOM with absolute displacements is allowed)
 * @param count    elements, >= 0
 * @param datatype any committed datatype
 * @param dest     rank in @p comm, or MPI_PROC_NULL
 * @param tag      0 .. MPI_TAG_UB
 * @param comm     intra- or intercommunicator
 * @return MPI_SUCCESS or an error code raised on @p comm, once: an undecodable datatype
 *         is ::MPIX_ERRKIND_DATATYPE (naming the combiner); what MPI_Send itself rejects
 *         (a negative count, a bad rank, tag or communicator, an uncommitted datatype)
 *         MPI's error, raised by MPI; a receiver that exits (killed) in the middle of a
 *         zero-copy message ::MPIX_ERRKIND_PEER, naming its rank, where the launcher
 *         keeps this process running. A message of up to 16 KiB is MPI_Send's own
 *         call, and its error MPI_Send's.
 * @par Complexity a message of up to 16 KiB: MPI_Send's, plus the datatype's size and
 *      the communicator's state, found without an attribute lookup when the thread's
 *      previous call used the same communicator.
 * @par Complexity first zero-copy send of a (datatype, count): O(blocks) to flatten;
 *      afterwards O(1) to find the layout. Data: one copy, shared between receiver and
 *      sender for messages of at least `MPIX_ZCOPY_SPLIT_BYTES`. The way (zero-copy, or
 *      through MPI with the datatype, packed, or packed and unpacked) is learnt per
 *      shape of datatype from the sender's own sends: a few sends each way, then the
 *      fastest for a period of 64 to 4096 sends that opens with the next such duel; a
 *      datatype whose shape goes through MPI is not flattened.
 */
int MPIX_Send_zcopy(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);

/**
 * @brief Blocking receive, the counterpart of MPIX_Send_zcopy, with MPI_Recv semantics.
 *
 * @p source may be MPI_ANY_SOURCE and @p tag MPI_ANY_TAG; @p status (or
 * MPI_STATUS_IGNORE) gets the source, the tag and a count that MPI_Get_count and
 * MPI_Get_elements read in any datatype. A message longer than the buffer is
 * MPI_ERR_TRUNCATE (the sender still completes; not where the buffer holds less than 1031
 * bytes and the message went zero-copy: that sender waits; and where such a buffer meets
 * one of a sender's first large messages to a process of its node, the question ahead
 * of it takes the error and its data is left to the next receive).
 * To size the buffer by the message, probe with MPIX_Probe_zcopy or MPIX_Iprobe_zcopy:
 * MPI_Probe and its kin are MPI's and see zcopy's message, header included.
 * @param buf      where the data goes
 * @param count    elements the buffer holds, >= 0
 * @param datatype any committed datatype
 * @param source   rank in @p comm, MPI_ANY_SOURCE or MPI_PROC_NULL
 * @param tag      tag or MPI_ANY_TAG
 * @param comm     the communicator of the sender's MPIX_Send_zcopy
 * @param status   MPI_STATUS_IGNORE or the status to fill
 * @return MPI_SUCCESS or an error code raised on @p comm, once (as MPIX_Send_zcopy, a
 *         sender that exits in the middle of the message ::MPIX_ERRKIND_PEER; a receive
 *         for up to 16 KiB is MPI_Recv's own call).
 * @par Complexity a receive for up to 16 KiB: MPI_Recv's, plus what MPIX_Send_zcopy
 *      adds to MPI_Send.
 * @par Complexity a repeated (sender layout, own layout): O(blocks) kernel iovecs or
 *      coalesced spans, no layout transfer; a new sender layout is read once from the
 *      sender's memory (16 bytes a block).
 */
int MPIX_Recv_zcopy(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                    MPI_Status *status);

/**
 * @brief Nonblocking MPIX_Send_zcopy: the request completes (MPI_Wait, MPI_Waitall,
 *        MPI_Test, ...) when @p buf may be reused.
 *
 * Matched by MPIX_Recv_zcopy or MPIX_Irecv_zcopy, with the non-overtaking order of MPI:
 * the envelope goes out before the call returns.
 * @par Progress
 * Requests complete in the program's own MPI calls, at any thread level, as MPI's do.
 * A message of up to 16 KiB is MPI's own MPI_Isend, request included. Above that
 * @p request is a generalized request completed by a pass over the process's pending
 * calls, which MPI runs: with MPICH the request's poll and wait functions
 * (MPIX_Grequest_start) in MPI_Test and MPI_Wait*, with Open MPI its progress engine in
 * any MPI call that makes progress; a zero-copy message completes once its receiver
 * has read it, and MPI_Cancel has no effect. A nonblocking send never asks its receiver to share the
 * copy. A request freed with MPI_Request_free before it completed goes on (the buffer is
 * the caller's again only when the receiver says it has the data).
 * @param buf      data, not to be modified until the request completes
 * @param count    elements, >= 0
 * @param datatype any committed datatype (it may be freed once the call returned)
 * @param dest     rank in @p comm, or MPI_PROC_NULL (the request completes at once)
 * @param tag      0 .. MPI_TAG_UB
 * @param comm     intra- or intercommunicator; freeing it waits for its pending requests
 * @param request  the request, for MPI_Wait and its kin
 * @return MPI_SUCCESS or an error code raised on @p comm, as MPIX_Send_zcopy's, plus
 *         ::MPIX_ERRKIND_ARGUMENT for a NULL @p request. Errors of the transfer come back
 *         from MPI_Wait and in the status's MPI_ERROR (not for a send complete at once).
 * @par Complexity as MPIX_Send_zcopy, minus the copy the receiver would ask the sender
 *      to share. The way of a datatype's shape is the one its blocking sends learnt;
 *      where none did, the cheaper of the receiver's kernel copy and MPI's two copies,
 *      priced with rates the process measures once (about 0.1 ms, at its first such
 *      send): a halo's time is both ranks' together, which one rank's sends cannot time.
 */
int MPIX_Isend_zcopy(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     MPI_Request *request);

/**
 * @brief Nonblocking MPIX_Recv_zcopy: the request completes when the data is in @p buf,
 *        and its status is MPI_Recv's.
 *
 * Receives posted on one communicator match in posting order, as MPI's do: a receive
 * waits while one posted before it (nonblocking, by this process) could take the same
 * message, and a blocking MPIX_Recv_zcopy waits for those too. With Open MPI the
 * receive is matched and read by a pass that Open MPI's progress engine runs, in
 * whatever MPI call of the program makes progress. With MPICH the request's poll
 * and wait functions match and read the message in MPI_Test and MPI_Wait* given this
 * request (or another zcopy request of the process) and in zcopy's own calls, and in no
 * other MPI call (MPI_Request_get_status included): a sender blocked on the match (its
 * large or zero-copy send) waits while this process waits for anything else (MPI_Recv,
 * MPI_Barrier, MPI_Wait on another request), so complete the request together with the
 * others before such a call. A
 * receive for less than 1031 bytes that no earlier receive waits before is MPI's own
 * MPI_Irecv, request included. MPI_Cancel
 * ends a receive that has not matched a message yet (MPI_Test_cancelled then says so).
 * @param buf      where the data goes, not to be read until the request completes
 * @param count    elements the buffer holds, >= 0
 * @param datatype any committed datatype (it may be freed once the call returned)
 * @param source   rank in @p comm, MPI_ANY_SOURCE or MPI_PROC_NULL
 * @param tag      tag or MPI_ANY_TAG
 * @param comm     the communicator of the sender's zcopy call
 * @param request  the request
 * @return as MPIX_Isend_zcopy. MPI_ERR_TRUNCATE comes back from MPI_Wait with the status
 *         filled, as for MPI_Irecv.
 * @par Complexity as MPIX_Recv_zcopy; one MPI_Irecv (with MPICH, for more than 16 KiB,
 *      MPI_Improbe in MPI's waits and tests until the message is there, then
 *      MPI_Imrecv), a datatype duplicated unless predefined (none for MPI's own receive).
 */
int MPIX_Irecv_zcopy(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                     MPI_Request *request);

/**
 * @brief Blocking probe for a zcopy message, with MPI_Probe semantics: the status counts
 *        the message's data, as MPIX_Recv_zcopy's status would.
 *
 * Returns once a message from @p source with @p tag is there for the next matching
 * MPIX_Recv_zcopy or MPIX_Irecv_zcopy, which then receives that message: MPI_Get_count
 * on the status gives the count to receive, in any datatype the data fits. MPI_Probe
 * would count zcopy's header, for a zero-copy message only the header. A message that
 * carries no header is left to MPI; a header is received at once into a buffer of the
 * library's and kept on the communicator until a receive takes it (a receive looks there
 * before MPI's queue; a question is answered and the probe goes on): a zero-copy
 * message's data is read from the sender only by the receive, which the sender waits for, as MPI_Send of a large
 * message waits for its receive. Hints: receive with the source and tag the status
 * names (the probed message is the oldest of that sender with that tag); with threads,
 * as with MPI_Probe, another thread's receive may take the message first: with threads,
 * use MPIX_Mprobe_zcopy.
 * @param source   rank in @p comm, MPI_ANY_SOURCE or MPI_PROC_NULL (at once: source
 *                 MPI_PROC_NULL, tag MPI_ANY_TAG, count 0)
 * @param tag      tag or MPI_ANY_TAG
 * @param comm     the communicator of the sender's zcopy call
 * @param status   MPI_STATUS_IGNORE or the status to fill: source, tag, the data's count
 * @return MPI_SUCCESS or an error code raised on @p comm, once: a tag, communicator or
 *         rank MPI_Probe would reject (MPI's error, raised by MPI),
 *         MPI_ERR_NO_MEM for a message no buffer could be found for.
 * @par Complexity MPI_Probe's; for a header, one MPI_Mprobe and MPI_Mrecv of it.
 */
int MPIX_Probe_zcopy(int source, int tag, MPI_Comm comm, MPI_Status *status);

/**
 * @brief Nonblocking MPIX_Probe_zcopy, with MPI_Iprobe semantics.
 *
 * Sets @p flag to 1 and fills @p status as MPIX_Probe_zcopy when a matching message is
 * there, else sets @p flag to 0. A nonblocking zcopy receive of this process posted
 * before that could take the same message takes it first: while one is not through,
 * the call makes MPI's progress and sets @p flag to 0.
 * @param source   rank in @p comm, MPI_ANY_SOURCE or MPI_PROC_NULL
 * @param tag      tag or MPI_ANY_TAG
 * @param comm     the communicator of the sender's zcopy call
 * @param flag     set to 1 when a message was found, else 0
 * @param status   MPI_STATUS_IGNORE or the status to fill when @p flag is 1
 * @return as MPIX_Probe_zcopy; a NULL @p flag is ::MPIX_ERRKIND_ARGUMENT.
 * @par Complexity MPI_Iprobe's; for a message found, as MPIX_Probe_zcopy.
 */
int MPIX_Iprobe_zcopy(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);

/**
 * @brief Matched probe of a zcopy message, with MPI_Mprobe semantics: the message found
 *        is taken out of matching and only a receive of @p message gets it.
 *
 * Blocks until a message from @p source with @p tag sent by the zcopy calls on @p comm
 * is there, fills @p status as MPIX_Probe_zcopy (the count of the data), and sets
 * @p message to a handle that MPIX_Mrecv_zcopy or MPIX_Imrecv_zcopy receives (for
 * MPI_PROC_NULL, MPI_MESSAGE_NO_PROC). No other receive or probe, of this thread or
 * another, can match the message afterwards: the probe of choice where several threads
 * receive on one communicator. A message that carries no header is matched by MPI_Mprobe and the handle is MPI's own. Any other is received
 * at once and its data read (from a zero-copy sender, which is released then), and the
 * handle is MPI's own handle of that data sent to this process on a private
 * communicator; MPIX_Mrecv_zcopy reports the envelope matched here.
 * @param source   rank in @p comm, MPI_ANY_SOURCE or MPI_PROC_NULL
 * @param tag      tag or MPI_ANY_TAG
 * @param comm     the communicator of the sender's zcopy call
 * @param message  set to the message's handle
 * @param status   MPI_STATUS_IGNORE or the status to fill: source, tag, the data's count
 * @return as MPIX_Probe_zcopy; a NULL @p message is ::MPIX_ERRKIND_ARGUMENT.
 * @par Complexity MPI_Mprobe's; for a message with a header, MPIX_Probe_zcopy's, a copy
 *      of the data into a buffer of its length, and a send of it to this process.
 */
int MPIX_Mprobe_zcopy(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);

/**
 * @brief Nonblocking MPIX_Mprobe_zcopy, with MPI_Improbe semantics.
 *
 * Sets @p flag to 1, @p message and @p status as MPIX_Mprobe_zcopy when a matching
 * message is there, else sets @p flag to 0 (a nonblocking zcopy receive posted before
 * that could take the same message is served first, as in MPIX_Iprobe_zcopy).
 * @param source   rank in @p comm, MPI_ANY_SOURCE or MPI_PROC_NULL
 * @param tag      tag or MPI_ANY_TAG
 * @param comm     the communicator of the sender's zcopy call
 * @param flag     set to 1 when a message was matched, else 0
 * @param message  set to the message's handle when @p flag is 1
 * @param status   MPI_STATUS_IGNORE or the status to fill when @p flag is 1
 * @return as MPIX_Mprobe_zcopy; a NULL @p flag is ::MPIX_ERRKIND_ARGUMENT.
 * @par Complexity MPI_Improbe's; for a message matched, as MPIX_Mprobe_zcopy.
 */
int MPIX_Improbe_zcopy(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status);

/**
 * @brief Receive of a message matched by MPIX_Mprobe_zcopy or MPIX_Improbe_zcopy, with
 *        MPI_Mrecv semantics.
 *
 * Receives the message @p message names into @p count elements of @p datatype at @p buf
 * and sets @p message to MPI_MESSAGE_NULL. MPI judges the datatype, the count and
 * truncation (the data longer than the buffer: MPI_ERR_TRUNCATE, the buffer filled as
 * far as it goes); @p status has the source and tag the probe matched and the count
 * received. MPI_MESSAGE_NO_PROC receives nothing, as MPI_Mrecv.
 * @param buf      receive buffer
 * @param count    elements of @p datatype that fit in @p buf
 * @param datatype any committed datatype
 * @param message  the handle MPIX_Mprobe_zcopy or MPIX_Improbe_zcopy set
 * @param status   MPI_STATUS_IGNORE or the status to fill
 * @return MPI_SUCCESS or an error code raised on the communicator of the probe (MPI's
 *         own errors of MPI_Mrecv); a NULL @p message is ::MPIX_ERRKIND_ARGUMENT.
 * @par Complexity MPI_Mrecv's: the data is in this process already (one copy by MPI) or,
 *      for a message without header, MPI's own.
 */
int MPIX_Mrecv_zcopy(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status);

/**
 * @brief Nonblocking MPIX_Mrecv_zcopy, with MPI_Imrecv semantics.
 *
 * A message matched by MPI (no header) is MPI_Imrecv's own request. Any other is
 * received by the call (its data is in this process already), and @p request is a
 * request complete at once whose status and error MPI_Wait reports.
 * @param buf      receive buffer
 * @param count    elements of @p datatype that fit in @p buf
 * @param datatype any committed datatype
 * @param message  the handle MPIX_Mprobe_zcopy or MPIX_Improbe_zcopy set
 * @param request  set to the receive's request
 * @return as MPIX_Mrecv_zcopy, except that the receive's own error is MPI_Wait's; a NULL
 *         @p request is ::MPIX_ERRKIND_ARGUMENT.
 * @par Complexity as MPIX_Mrecv_zcopy.
 */
int MPIX_Imrecv_zcopy(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request);

/**
 * @brief Collective commit: MPI_Type_commit, plus one layout id agreed by every process
 *        of @p comm, so that zcopy messages of this datatype on @p comm never carry or
 *        read a layout.
 *
 * Every process must pass a datatype with the same type map (the same construction);
 * each process's layout is then known to all its peers without exchange.
 * @param datatype the datatype to commit (committed in place, as MPI_Type_commit)
 * @param comm     the communicator the id is valid on
 * @return MPI_SUCCESS or an error code raised on @p comm (agreed: all fail together).
 * @par Complexity one MPI_Allreduce of one integer, plus flattening the type once.
 */
int MPIX_Type_commit_comm(MPI_Datatype *datatype, MPI_Comm comm);

/**
 * @brief Collective free of a datatype committed with MPIX_Type_commit_comm on @p comm:
 *        forgets the id on every process and frees the datatype (MPI_Type_free).
 * Messages already sent with the id stay receivable: a receiver that no longer knows
 * an id reads the sender's layout instead.
 * @param datatype the datatype to free; MPI_DATATYPE_NULL on return
 * @param comm     the communicator MPIX_Type_commit_comm was called on
 * @return MPI_SUCCESS or an error code raised on @p comm; *datatype is MPI_DATATYPE_NULL.
 * @par Complexity O(1), no communication (collective by contract only).
 */
int MPIX_Type_free_comm(MPI_Datatype *datatype, MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif
