/* SPDX-License-Identifier: BSD-3-Clause */
/* Folding on a thread of the process's own (MPIX_ZCOPY_FOLD_THREAD, on by default).
 *
 * Why: a fold is madvise(MADV_COLLAPSE), which takes a huge page from the kernel then
 * and there: 0.1-0.5 ms where one is free, but 3-7 ms where the kernel must compact
 * memory or the virtual machine must back it first (strace of mpix-bench zcopy on the
 * development VM: 5 of 44 folds). Inside the call that made a unit due, that stall is
 * the program's: a halo exchange's first iterations ran 3-14 ms instead of 0.2-1 ms.
 * Here the call only queues the unit and returns; the thread folds while the copy goes
 * on from 4 KiB pages (the kernel keeps the contents right under concurrent use, as for
 * its own khugepaged), and the next copies of the unit find it folded.
 *
 * The thread makes no MPI call, blocks every signal (the program's handlers stay the
 * program's threads'), starts at the first unit due and ends with the process state at
 * MPI_Finalize. A unit it holds is counted on its communicator's state
 * (folds_pending), which a communicator's deletion waits for, so the statistics it
 * writes there are never written after the state is gone. A full queue leaves the unit
 * due for its next sight; a thread that cannot be started leaves folding to the calls. */
#include "zcopy.h"
#include "common/thread.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

/* Units waiting: more than one call makes due (FOLDS_PER_CALL in collapse.c), so a
 * message's units all queue while the thread works on an earlier one's. */
enum { FOLDER_QUEUE = 64 };

typedef struct folder_job {
    mpix_zcopy_comm *zc;
    uintptr_t unit;
    int folded;        /* folded before: a refold */
    uint64_t due;      /* the sight it was due at, for a deferral */
} folder_job;

struct mpix_zcopy_folder {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int started, failed, stopping;
    unsigned first, count;   /* a ring of FOLDER_QUEUE jobs */
    folder_job jobs[FOLDER_QUEUE];
};

static void *fold_units(void *argument)
{
    mpix_zcopy_folder *folder = argument;
    pthread_mutex_lock(&folder->lock);
    for (;;) {
        while (folder->count == 0 && !folder->stopping)
            pthread_cond_wait(&folder->wake, &folder->lock);
        if (folder->stopping)
            break;
        folder_job job = folder->jobs[folder->first];
        folder->first = (folder->first + 1) % FOLDER_QUEUE;
        folder->count--;
        pthread_mutex_unlock(&folder->lock);
        mpix_zcopy_fold_unit(job.zc, job.unit, job.folded, job.due);
        atomic_fetch_sub_explicit(&job.zc->folds_pending, 1, memory_order_release);
        pthread_mutex_lock(&folder->lock);
    }
    pthread_mutex_unlock(&folder->lock);
    return NULL;
}

int mpix_zcopy_folder_create(mpix_zcopy_folder **folder)
{
    mpix_zcopy_folder *made = calloc(1, sizeof *made);
    if (!made)
        return MPI_ERR_NO_MEM;
    if (pthread_mutex_init(&made->lock, NULL) != 0) {
        free(made);
        return MPI_ERR_NO_MEM;
    }
    if (pthread_cond_init(&made->wake, NULL) != 0) {
        pthread_mutex_destroy(&made->lock);
        free(made);
        return MPI_ERR_NO_MEM;
    }
    *folder = made;
    return MPI_SUCCESS;
}

/* Under the lock: starts the thread with every signal blocked. */
static int start(mpix_zcopy_folder *folder)
{
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    folder->started = mpix_thread_create(&folder->thread, fold_units, folder) == 0;
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    folder->failed = !folder->started;
    return folder->started;
}

int mpix_zcopy_folder_post(mpix_zcopy_folder *folder, mpix_zcopy_comm *zc, uintptr_t unit, int folded, uint64_t due)
{
    int posted = 0;
    pthread_mutex_lock(&folder->lock);
    if (folder->failed || folder->stopping || (!folder->started && !start(folder)))
        posted = -1;
    else if (folder->count < FOLDER_QUEUE) {
        atomic_fetch_add_explicit(&zc->folds_pending, 1, memory_order_relaxed);
        folder->jobs[(folder->first + folder->count) % FOLDER_QUEUE] = (folder_job){ zc, unit, folded, due };
        folder->count++;
        posted = 1;
        pthread_cond_signal(&folder->wake);
    }
    pthread_mutex_unlock(&folder->lock);
    return posted;
}

void mpix_zcopy_folder_destroy(mpix_zcopy_folder *folder)
{
    if (!folder)
        return;
    pthread_mutex_lock(&folder->lock);
    folder->stopping = 1;
    pthread_cond_signal(&folder->wake);
    pthread_mutex_unlock(&folder->lock);
    if (folder->started)
        pthread_join(folder->thread, NULL);
    /* Jobs never run: their communicators' states outlive this one's at MPI_Finalize
     * (a freed communicator's deletion waited for its jobs), so their counts drop. */
    for (; folder->count > 0; folder->count--, folder->first = (folder->first + 1) % FOLDER_QUEUE)
        atomic_fetch_sub_explicit(&folder->jobs[folder->first].zc->folds_pending, 1, memory_order_release);
    pthread_cond_destroy(&folder->wake);
    pthread_mutex_destroy(&folder->lock);
    free(folder);
}
