/* SPDX-License-Identifier: BSD-3-Clause */
/* This process's side of cross-memory attach: who it is (a node key that only processes
 * able to name it by pid share), the directory its peers write into once they have
 * proved they can attach to it, and the counter of layout ids. It lives on
 * MPI_COMM_SELF, so it ends with MPI.
 *
 * Why a directory: whether a peer is on this node and allowed to attach can only be
 * learnt by trying, and a point-to-point call cannot run a collective to ask. So the
 * first message to each peer goes through MPI carrying the address of the peer's entry
 * here; a receiver on the same node writes its pid into it with process_vm_writev, which
 * succeeds exactly when it may also read this process. From then on messages to it go
 * zero-copy. */
#include "zcopy.h"
#include "interposed.h"
#include "common/hint.h"
#include "common/self_state.h"
#include "common/verbose.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>

/* Processes that can name each other by pid: same boot, same pid namespace, and (for
 * clusters of cloned nodes) same host name. With MPIX_VIRTUAL_NODE_RANKS=k, also the same
 * block of k MPI_COMM_WORLD ranks: virtual nodes, so that the other-node path runs on
 * one machine. */
static uint32_t node_key(long long node_ranks)
{
    char identity[512] = "", boot[64] = "", host[256] = "";
    struct stat pid_namespace = { 0 };
    int file = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);   /* no stdio buffer to allocate */
    if (file >= 0) {
        ssize_t length = read(file, boot, sizeof boot - 1);
        boot[length > 0 ? length : 0] = '\0';
        close(file);
    }
    stat("/proc/self/ns/pid", &pid_namespace);
    gethostname(host, sizeof host - 1);
    int world_rank = 0;
    if (!mpix_mpi_is_active() || PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank) != MPI_SUCCESS)
        node_ranks = 0; /* no virtual nodes without a rank to place (MPI-4 sessions alone) */
    int length = snprintf(identity, sizeof identity, "%s|%lu|%s|%lld", boot, (unsigned long)pid_namespace.st_ino,
                          host, node_ranks > 0 ? world_rank / node_ranks : 0);
    unsigned key;
    HASH_JEN(identity, (unsigned)length, key);
    return key;
}

/* Entries of the per-peer tables: one per MPI_COMM_WORLD rank, and one that no peer
 * indexes where there is no world (MPI-4 sessions alone), so that they are never empty. */
static size_t table_entries(const mpix_zcopy_process *process)
{
    return process->world_size > 0 ? (size_t)process->world_size : 1;
}

static void process_destroy(void *state)
{
    mpix_zcopy_process *process = state;
    mpix_zcopy_folder_destroy(process->folder);
    mpix_zcopy_progress_destroy(process->progress);
    mpix_zcopy_handover_destroy(process);
    mpix_zcopy_interposed_destroy(process);
    mpix_zcopy_mailbox_destroy(process);
    mpix_layout_table_destroy(process->layouts);
    munmap(process->directory, table_entries(process) * sizeof *process->directory);
    free(process->access);
    free((void *)process->learn_asks);
    free(process);
}

/* The settings every communicator copies (mpix_zcopy_settings), reported once with
 * MPIX_VERBOSE. */
static int read_settings(mpix_zcopy_settings *settings)
{
    long long eager_bytes = 0, coalesce_bytes = 0, split_bytes = 0;
    int rc = mpix_hint_bool(MPI_INFO_NULL, MPIX_HINT_ZCOPY, &settings->enabled);
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_ZCOPY_EAGER_BYTES, &eager_bytes);
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_ZCOPY_COALESCE_BYTES, &coalesce_bytes);
    settings->eager_bytes = eager_bytes;
    settings->coalesce_bytes = (MPI_Aint)coalesce_bytes;
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_ZCOPY_SPLIT_BYTES, &split_bytes);
    settings->split_bytes = split_bytes;
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_keyword(MPI_INFO_NULL, MPIX_HINT_ZCOPY_METHOD, &settings->method);
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_keyword(MPI_INFO_NULL, MPIX_HINT_ZCOPY_PIPES, &settings->pipes);
    settings->verbose = mpix_verbose_enabled(MPI_INFO_NULL);
    int thread_level = MPI_THREAD_MULTIPLE;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Query_thread(&thread_level);
    settings->one_caller = thread_level < MPI_THREAD_MULTIPLE;
    int by_copy = 1;
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_bool(MPI_INFO_NULL, MPIX_HINT_ZCOPY_PACK_BY_COPY, &by_copy);
    if (rc == MPI_SUCCESS)
        rc = mpix_zcopy_packs_natively(&settings->packs_natively);
    settings->packs_natively = settings->packs_natively && by_copy;
    if (rc == MPI_SUCCESS)
        rc = mpix_zcopy_receives_part_elements(&settings->receives_in_place);
    if (rc == MPI_SUCCESS)
        mpix_hint_report(MPI_INFO_NULL, "zcopy");
    return rc;
}

static int process_create(void **state)
{
    mpix_zcopy_process *process = calloc(1, sizeof *process);
    if (!process)
        return MPI_ERR_NO_MEM;
    /* Without the world model (MPI-4 sessions alone) no peer has a world rank, and every
     * message goes through MPI (mpix_zcopy_world_rank). */
    if (mpix_mpi_is_active() && PMPI_Comm_size(MPI_COMM_WORLD, &process->world_size) != MPI_SUCCESS) {
        free(process);
        return MPI_ERR_INTERN;
    }
    process->pid = getpid();
    process->mailbox_fd = -1;
    /* Mapped, not malloc'd: a peer's late write after MPI_Finalize unmapped it fails
     * with EFAULT instead of landing in reused heap. */
    size_t bytes = table_entries(process) * sizeof *process->directory;
    process->directory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    process->access = calloc(table_entries(process), 1);
    process->learn_asks = calloc(table_entries(process), sizeof *process->learn_asks);
    if (process->directory == MAP_FAILED || !process->access || !process->learn_asks) {
        if (process->directory != MAP_FAILED)
            munmap(process->directory, bytes);
        free(process->access);
        free((void *)process->learn_asks);
        free(process);
        return MPI_ERR_NO_MEM;
    }
    long long node_ranks = 0, slots_in_use = 0, fold_sight = 0, fold_call_us = 0, kernel_iovec_ns = 0, pull_delay_us = 0,
              mpi_bytes_per_ns = 0;
    int ptracer = 0, rc = read_settings(&process->settings);
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_bool(MPI_INFO_NULL, MPIX_HINT_ZCOPY_PTRACER, &ptracer);
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_VIRTUAL_NODE_RANKS, &node_ranks);
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_keyword(MPI_INFO_NULL, MPIX_HINT_ZCOPY_ATTACH, &process->attach);
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_ZCOPY_SLOTS, &slots_in_use);
    process->slots_in_use = (int)slots_in_use;
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_bool(MPI_INFO_NULL, MPIX_HINT_ZCOPY_COLLAPSE, &process->collapse);
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_ZCOPY_FOLD_SIGHT, &fold_sight);
    process->fold_sight = (int)fold_sight;
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_ZCOPY_FOLD_CALL_US, &fold_call_us);
    process->fold_call_seconds = (double)fold_call_us * 1e-6;
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_ZCOPY_KERNEL_IOVEC_NS, &kernel_iovec_ns);
    process->kernel_iovec_ns = (double)kernel_iovec_ns;
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_ZCOPY_MPI_BYTES_PER_NS, &mpi_bytes_per_ns);
    process->mpi_bytes_per_ns = (double)mpi_bytes_per_ns;
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_ZCOPY_PULL_DELAY_US, &pull_delay_us);
    process->pull_delay_seconds = (double)pull_delay_us * 1e-6;
    atomic_init(&process->fold_ns, MPIX_ZCOPY_FOLD_NS_PRIOR);
    int fold_thread = 0;
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_bool(MPI_INFO_NULL, MPIX_HINT_ZCOPY_FOLD_THREAD, &fold_thread);
    if (rc == MPI_SUCCESS && process->collapse && fold_thread)
        rc = mpix_zcopy_folder_create(&process->folder);
    if (rc == MPI_SUCCESS)
        rc = mpix_layout_table_create(&process->layouts);
    process->node_key = node_key(node_ranks);
    /* Without a mailbox (no memfd) this process sends everything through MPI. */
    if (rc == MPI_SUCCESS)
        mpix_zcopy_mailbox_create(process);
    if (rc == MPI_SUCCESS && ptracer)
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    if (rc != MPI_SUCCESS) {
        process_destroy(process);
        return rc;
    }
    *state = process;
    return MPI_SUCCESS;
}

static mpix_self_slot process_slot = MPIX_SELF_SLOT_INIT(process_create, process_destroy);

int mpix_zcopy_process_get(mpix_zcopy_process **process)
{
    return mpix_self_state(&process_slot, (void **)process);
}
