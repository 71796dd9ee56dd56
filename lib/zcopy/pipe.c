/* SPDX-License-Identifier: BSD-3-Clause */
/* Pipes: a zero-copy message's data moved by two memcpys instead of the kernel's one
 * copy. The sender packs its layout's bytes, in type-map order, into its slot's pipe (in
 * its mailbox's memfd, which the receiver maps) chunk by chunk, while the receiver
 * unpacks the chunks already there into its own layout: the two copies overlap on two
 * cores. Each side walks only its own layout, so the receiver never reads the sender's.
 *
 * The pipe is a ring of MPIX_ZCOPY_PIPE_BYTES; the slot counts the bytes put in
 * (produced, the sender's) and taken out (consumed, the receiver's). A chunk never
 * straddles the ring's end: the ring is a whole number of chunks and chunks start at
 * multiples of the chunk size. Release on each count after the bytes it covers, acquire
 * before reading them.
 *
 * The sender claims each chunk before it packs it (reserved); a receiver that found
 * nothing new for a while claims the rest instead and reads it from the sender's memory
 * with the kernel, as a zero-copy receive does. So a receive never waits on a sender that
 * is not filling its pipe: one inside MPI_Send of its header, whose progress pass drains
 * a third rank's pipe, which is inside its own... (three ranks sending to each other in a
 * ring, their receives posted). */
#include "zcopy.h"
#include "common/relax.h"

/* Bytes a receive takes before it judges the pipe's speed: the first chunks may find the
 * pipe's pages not yet in the receiver's page tables. */
enum { PIPE_JUDGED_AFTER = 8 * MPIX_ZCOPY_PIPE_CHUNK };
/* A pipe is given up where it runs at less than this share of the kernel's copy rate: in
 * the test VM's minutes when data one core wrote reached the other at 2-3 GB/s, MILC's
 * face took 340 us through the pipe against 51 by the kernel; in the others the pipe ran
 * at 20-30 GB/s against the kernel's 10-13. Judged against the kernel's full rate, a pipe
 * was given up in the others too, and the bench's MILC rows lost what it had gained. */
#define PIPE_SLOWER_THAN_KERNEL 0.5
/* How long a sender whose message a receiver took over sends by the kernel: the test
 * VM's slow minutes last minutes. */
#define PIPE_PAUSE_SECONDS 0.1

void mpix_zcopy_pipe_open(mpix_zcopy_send *send)
{
    atomic_store_explicit(&send->slot->reserved, 0, memory_order_relaxed);
    atomic_store_explicit(&send->slot->produced, 0, memory_order_relaxed);
    atomic_store_explicit(&send->slot->consumed, 0, memory_order_relaxed);
    mpix_layout_cursor_at(&send->pipe_cursor, send->view.layout, 0);
    send->piped = 0;
    send->piping = 1;
    send->header.piped = 1;
}

void mpix_zcopy_pipe_fill(mpix_zcopy_send *send)
{
    MPI_Count bytes = send->header.bytes;
    char *pipe = mpix_zcopy_pipe_of(send->zc->process->mailbox, send->slot_index);
    int64_t consumed = atomic_load_explicit(&send->slot->consumed, memory_order_acquire);
    while (send->piped < bytes) {
        MPI_Count chunk = bytes - send->piped < MPIX_ZCOPY_PIPE_CHUNK ? bytes - send->piped : MPIX_ZCOPY_PIPE_CHUNK;
        if (send->piped + chunk - consumed > MPIX_ZCOPY_PIPE_BYTES)
            break;   /* no room until the receiver takes more */
        int64_t claimed = send->piped;
        if (!atomic_compare_exchange_strong_explicit(&send->slot->reserved, &claimed, send->piped + chunk,
                                                     memory_order_acq_rel, memory_order_acquire)) {
            /* The receiver reads the rest itself: this process stalled or its pipe ran
             * slower than the kernel's copy. Kernel copies for a while. */
            send->piping = 2;
            atomic_store_explicit(&send->zc->process->pipes_resume_at, PMPI_Wtime() + PIPE_PAUSE_SECONDS,
                                  memory_order_relaxed);
            break;
        }
        mpix_layout_gather(&send->pipe_cursor, send->buf, pipe + send->piped % MPIX_ZCOPY_PIPE_BYTES, chunk);
        send->piped += chunk;
        atomic_store_explicit(&send->slot->produced, send->piped, memory_order_release);
    }
}

/* Claims the rest of the message for the receiver: from what the sender claimed so far,
 * unless it finished meanwhile. Returns where the receiver's part begins, or -1. */
static int64_t take_over(mpix_zcopy_slot *message, MPI_Count bytes)
{
    int64_t claimed = atomic_load_explicit(&message->reserved, memory_order_acquire);
    while (claimed >= 0 && claimed < bytes)
        if (atomic_compare_exchange_weak_explicit(&message->reserved, &claimed, -1 - claimed, memory_order_acq_rel,
                                                  memory_order_acquire))
            return claimed;
    return -1;
}

MPI_Count mpix_zcopy_pipe_drain(mpix_zcopy_slot *mailbox, int slot, char *buf, const mpix_layout *local,
                                MPI_Count bytes, double kernel_bytes_per_ns, pid_t sender)
{
    mpix_zcopy_peer_watch watch = { 0 };
    mpix_zcopy_slot *message = &mailbox[slot];
    const char *pipe = mpix_zcopy_pipe_of(mailbox, slot);
    mpix_layout_cursor cursor;
    mpix_layout_cursor_at(&cursor, local, 0);
    MPI_Count taken = 0, until = bytes;   /* until: where the receiver's own part begins */
    unsigned long poll = 0;
    double stalled_since = 0, started = 0;
    while (taken < until) {
        int64_t produced = atomic_load_explicit(&message->produced, memory_order_acquire);
        if (produced == taken) {
            double now = PMPI_Wtime();
            int64_t from;
            if (poll == 0)
                stalled_since = now;
            else if (now - stalled_since > MPIX_ZCOPY_STALL_SECONDS) {
                if (until == bytes && (from = take_over(message, bytes)) >= 0)
                    until = from;   /* what the sender claimed before still comes through the pipe */
                else if (mpix_zcopy_peer_exit_check(&watch, sender))
                    return -1;   /* killed between claiming a chunk and putting it in */
            }
            mpix_backoff(poll++, MPIX_BACKOFF_SPINS);
            continue;
        }
        poll = 0;
        if (started == 0)
            started = PMPI_Wtime();
        while (taken < produced) {   /* chunk by chunk, so that the sender refills behind */
            MPI_Count chunk = produced - taken < MPIX_ZCOPY_PIPE_CHUNK ? produced - taken : MPIX_ZCOPY_PIPE_CHUNK;
            mpix_layout_scatter(&cursor, buf, pipe + taken % MPIX_ZCOPY_PIPE_BYTES, chunk);
            taken += chunk;
            atomic_store_explicit(&message->consumed, taken, memory_order_release);
        }
        /* Slower than the kernel would copy (the two cores' caches far apart, as on the
         * test VM some minutes): the kernel reads what the sender has not claimed yet. */
        int64_t from;
        if (until == bytes && taken >= PIPE_JUDGED_AFTER && taken < bytes &&
            taken < (PMPI_Wtime() - started) * 1e9 * kernel_bytes_per_ns * PIPE_SLOWER_THAN_KERNEL &&
            (from = take_over(message, bytes)) >= 0)
            until = from;
    }
    return until;
}
