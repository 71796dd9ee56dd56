/* SPDX-License-Identifier: BSD-3-Clause */
#include "store_fault.h"
#include "written_pages.h"
#include "common/hint.h"
#include "common/self_state.h"
#include "common/clock.h"

#include <mpi.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Pages stored to per round, and rounds (the cheapest counts: a round the scheduler
 * interrupted is slow). */
enum { PROBE_PAGES = 64, PROBE_ROUNDS = 3 };

static int store_fault_create(void **state)
{
    double *fault_ns = malloc(sizeof *fault_ns);
    if (!fault_ns)
        return MPI_ERR_NO_MEM;
    long long assumed = 0;
    int rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_STORAGE_STORE_FAULT_NS, &assumed);
    if (rc != MPI_SUCCESS) {
        free(fault_ns);
        return rc;
    }
    if (assumed > 0) {
        *fault_ns = (double)assumed;
        *state = fault_ns;
        return MPI_SUCCESS;
    }
    *fault_ns = 0;
    long long page = sysconf(_SC_PAGESIZE);
    char *pages = mmap(NULL, (size_t)(PROBE_PAGES * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    long long *listed = malloc(PROBE_PAGES * sizeof *listed);
    mpix_written_pages tracker = MPIX_WRITTEN_PAGES_NONE;
    if (pages != MAP_FAILED && listed) {
        /* 4 KiB entries, as a tracked window's are after its first sync. */
        madvise(pages, (size_t)(PROBE_PAGES * page), MADV_NOHUGEPAGE);
        for (long long p = 0; p < PROBE_PAGES; p++)
            pages[p * page] = 1;
        if (mpix_written_pages_open(&tracker, pages, PROBE_PAGES, page) &&
            mpix_written_pages_populated(&tracker, listed) == PROBE_PAGES &&
            mpix_written_pages_arm(&tracker, listed, PROBE_PAGES) == 0) {
            double best = -1;
            for (int round = 0; round < PROBE_ROUNDS; round++) {
                double start = mpix_clock_seconds();
                for (long long p = 0; p < PROBE_PAGES; p++)
                    ((volatile char *)pages)[p * page] = (char)(round + 2);
                double took = mpix_clock_seconds() - start;
                if (best < 0 || took < best)
                    best = took;
                if (mpix_written_pages_look(&tracker, listed) < 0)
                    break;
            }
            *fault_ns = best * 1e9 / PROBE_PAGES;
        }
    }
    mpix_written_pages_close(&tracker);
    free(listed);
    if (pages != MAP_FAILED)
        munmap(pages, (size_t)(PROBE_PAGES * page));
    *state = fault_ns;
    return MPI_SUCCESS;
}

static void store_fault_destroy(void *state) { free(state); }

static mpix_self_slot store_fault_slot = MPIX_SELF_SLOT_INIT(store_fault_create, store_fault_destroy);

double mpix_storage_store_fault_ns(void)
{
    double *fault_ns;
    return mpix_self_state(&store_fault_slot, (void **)&fault_ns) == MPI_SUCCESS ? *fault_ns : 0;
}
