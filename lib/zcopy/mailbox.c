/* SPDX-License-Identifier: BSD-3-Clause */
/* Mailboxes: the hand-shake of a zero-copy message (the receiver's "done", its request
 * that the sender copy a part, the sender's answer) in memory both processes map, so
 * that it costs loads and stores instead of a process_vm_writev per word (about 2 us
 * each on the development VM, where the kernel pins the page every time).
 *
 * Each process creates one memfd of slots at its first zcopy use; a send takes a free
 * slot for the duration of the message. The first MPIX_ZCOPY_PIPES slots have a pipe
 * each, after the slots in the same memfd (pipe.c): its pages exist once a send wrote
 * them. A receiver maps a sender's mailbox once, through
 * /proc/<pid>/fd/<fd>: opening it needs the same ptrace access as cross-memory attach,
 * so a peer that may attach may also map. The memfd is anonymous memory with no name
 * in any file system: nothing is left behind when a process dies. */
#include "zcopy.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <uthash.h>

struct mpix_zcopy_mapped {
    pid_t pid;
    mpix_zcopy_slot *slots;
    UT_hash_handle hh;
};

/* Receives on different communicators may run at once (MPI_THREAD_MULTIPLE). */
static pthread_mutex_t mapped_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slots, then the pipes, page-aligned. */
static size_t slots_bytes(void)
{
    size_t page = 4096;
    return (MPIX_ZCOPY_SLOTS * sizeof(mpix_zcopy_slot) + page - 1) / page * page;
}

static size_t mailbox_bytes(void) { return slots_bytes() + (size_t)MPIX_ZCOPY_PIPES * MPIX_ZCOPY_PIPE_BYTES; }

char *mpix_zcopy_pipe_of(mpix_zcopy_slot *mailbox, int index)
{
    return index >= 0 && index < MPIX_ZCOPY_PIPES ? (char *)mailbox + slots_bytes() + (size_t)index * MPIX_ZCOPY_PIPE_BYTES
                                                  : NULL;
}

int mpix_zcopy_mailbox_create(mpix_zcopy_process *process)
{
    size_t bytes = mailbox_bytes();
    process->mailbox_fd = memfd_create("mpix-zcopy-mailbox", MFD_CLOEXEC);
    if (process->mailbox_fd < 0)
        return MPI_ERR_OTHER;
    process->mailbox = MAP_FAILED;
    if (ftruncate(process->mailbox_fd, bytes) == 0)
        process->mailbox = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, process->mailbox_fd, 0);
    if (process->mailbox == MAP_FAILED) {
        close(process->mailbox_fd);
        process->mailbox_fd = -1;
        process->mailbox = NULL;
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

void mpix_zcopy_mailbox_destroy(mpix_zcopy_process *process)
{
    size_t bytes = mailbox_bytes();
    mpix_zcopy_mapped *mapped, *next;
    HASH_ITER(hh, process->mapped, mapped, next) {
        HASH_DEL(process->mapped, mapped);
        munmap(mapped->slots, bytes);
        free(mapped);
    }
    if (process->mailbox)
        munmap(process->mailbox, bytes);
    if (process->mailbox_fd >= 0)
        close(process->mailbox_fd);
}

int mpix_zcopy_slot_take(mpix_zcopy_process *process)
{
    for (int index = 0; process->mailbox && index < process->slots_in_use; index++) {
        int32_t free_slot = 0;
        if (atomic_compare_exchange_strong_explicit(&process->mailbox[index].taken, &free_slot, 1,
                                                    memory_order_acquire, memory_order_relaxed))
            return index;
    }
    return -1;
}

void mpix_zcopy_slot_release(mpix_zcopy_process *process, int index)
{
    /* A header of an ended message no longer names a live one (interposed.c). */
    atomic_store_explicit(&process->mailbox[index].nonce, 0, memory_order_relaxed);
    atomic_store_explicit(&process->mailbox[index].taken, 0, memory_order_release);
}

mpix_zcopy_slot *mpix_zcopy_peer_mailbox(mpix_zcopy_process *process, pid_t pid, int fd)
{
    mpix_zcopy_mapped *mapped = NULL;
    pthread_mutex_lock(&mapped_lock);
    HASH_FIND(hh, process->mapped, &pid, sizeof pid, mapped);
    if (!mapped && fd >= 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
        int peer_fd = open(path, O_RDWR | O_CLOEXEC);
        void *slots = MAP_FAILED;
        if (peer_fd >= 0) {
            slots = mmap(NULL, mailbox_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, peer_fd, 0);
            close(peer_fd);
        }
        if (slots != MAP_FAILED && (mapped = calloc(1, sizeof *mapped))) {
            mapped->pid = pid;
            mapped->slots = slots;
            HASH_ADD(hh, process->mapped, pid, sizeof mapped->pid, mapped);
        } else if (slots != MAP_FAILED)
            munmap(slots, mailbox_bytes());
    }
    pthread_mutex_unlock(&mapped_lock);
    return mapped ? mapped->slots : NULL;
}
