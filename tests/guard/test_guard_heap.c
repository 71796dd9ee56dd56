/* SPDX-License-Identifier: BSD-3-Clause */
/* A guarded receive into a heap buffer whose last page also holds the next heap chunk:
 * freeing and allocating that chunk makes malloc touch the receive's inaccessible page
 * from inside malloc, under malloc's lock. guard must not finish the receive there (MPI
 * may need malloc, and would wait for its lock forever): malloc's touches are let
 * through one instruction at a time and the receive stays in flight; the program's own
 * touches then finish it, with the data in place. Run with MPIX_GUARD_POLL_NS=0 so that the receive
 * is surely protected. The layout (two chunks in a row) is glibc's. */
#include "mpix_test.h"

#include <mpix/guard.h>
#include <stdint.h>
#include <unistd.h>

enum { ELEMENTS = 5000, NEIGHBOUR_BYTES = 48, TRIES = 4096 };   /* the buffer spans several pages */

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    if (ranks < 2 || rank > 1)
        return mpix_test_finish("guard_heap");

    uintptr_t page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    int *buffer = malloc(sizeof(int) * ELEMENTS);
    CHECK(buffer != NULL, "malloc");
    uintptr_t last_page = ((uintptr_t)(buffer + ELEMENTS) - 1) / page_size;
    /* Small chunks come from the free lists first: take them until one comes from the
     * memory right after the buffer. */
    char *neighbour = NULL, *taken[TRIES];
    int tries = 0;
    while (tries < TRIES) {
        char *chunk = malloc(NEIGHBOUR_BYTES);
        CHECK(chunk != NULL, "malloc");
        if ((uintptr_t)chunk > (uintptr_t)buffer && (uintptr_t)chunk / page_size == last_page) {
            neighbour = chunk;
            break;
        }
        taken[tries++] = chunk;
    }
    CHECK(neighbour != NULL, "no chunk of %d allocations came after the buffer (%p): another allocator?", TRIES,
          (void *)buffer);
    for (int i = 0; i < tries; i++)
        free(taken[i]);
    if (rank == 0) {
        for (int i = 0; i < ELEMENTS; i++)
            buffer[i] = 7 * i + 3;
        CHECK(MPIX_Send_guarded(buffer, ELEMENTS, MPI_INT, 1, 9, MPI_COMM_WORLD) == MPI_SUCCESS, "send");
    } else {
        memset(buffer, 0, sizeof(int) * ELEMENTS);
        CHECK(MPIX_Recv_guarded(buffer, ELEMENTS, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "receive");
        long long faults = mpix_test_pvar("guard.faults", MPI_COMM_NULL);
        free(neighbour);                    /* the allocator writes its list into the chunk */
        neighbour = malloc(NEIGHBOUR_BYTES);  /* and reads it back */
        CHECK(neighbour != NULL, "malloc again");
        if (mpix_test_pvar("guard.active", MPI_COMM_NULL)) {
            CHECK(mpix_test_pvar("guard.neighbour_steps", MPI_COMM_NULL) > 0,
                  "malloc's touches of the receive's page were not let through (%lld steps)",
                  mpix_test_pvar("guard.neighbour_steps", MPI_COMM_NULL));
            CHECK(mpix_test_pvar("guard.faults", MPI_COMM_NULL) == faults,
                  "malloc's touch finished the receive (%lld faults, %lld before)",
                  mpix_test_pvar("guard.faults", MPI_COMM_NULL), faults);
        }
        /* The program's own touches, outside the allocator, finish the receive (if MPI
         * has not retired it meanwhile): its data is there to read. */
        for (int i = 0; i < NEIGHBOUR_BYTES; i++)
            ((volatile char *)neighbour)[i] = 5;
        int same = 1;
        for (int i = 0; i < ELEMENTS; i++)
            same &= buffer[i] == 7 * i + 3;
        CHECK(same, "the received data is in place");
        CHECK(neighbour[NEIGHBOUR_BYTES - 1] == 5, "the neighbour's bytes were kept");
    }
    CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "complete_all");
    free(neighbour);
    free(buffer);
    return mpix_test_finish("guard_heap");
}
