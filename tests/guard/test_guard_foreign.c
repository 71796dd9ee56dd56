/* SPDX-License-Identifier: BSD-3-Clause */
/* A thread other than the program's touches a page that a guarded receive keeps
 * inaccessible: the way an MPI or runtime thread does when its heap object shares a page
 * with the program's buffer. guard must not run MPI from that thread nor crash it: the
 * page opens for it at once, and the program's thread finishes the receive at its next
 * guarded call, with the received bytes in place and the other thread's byte kept.
 * The helper thread calls no MPI, as MPI_THREAD_SINGLE allows; it is started past the
 * pthread_create guard interposes, as MPI's own threads are told apart. A thread the
 * program starts the usual way is the program's: guard finishes the receive before it
 * runs, and it reads the message. Run with MPIX_GUARD_POLL_NS=0 so that the receive is
 * surely protected. */
#include "mpix_test.h"

#include <dlfcn.h>
#include <mpix/guard.h>
#include <pthread.h>
#include <sys/mman.h>

enum { ELEMENTS = 3000 };   /* several pages */

typedef int create_function(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* The C library's pthread_create, which guard does not see. */
static create_function *unseen_create(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    return libc ? (create_function *)dlsym(libc, "pthread_create") : NULL;
}

/* Ends by pthread_exit, which guard must count as an end too. */
static void *read_buffer(void *buffer)
{
    int same = 1;
    for (int i = 0; i < ELEMENTS; i++)
        same &= ((volatile int *)buffer)[i] == 3 * i + 1;
    pthread_exit(same ? buffer : NULL);
}

static void *touch_neighbour(void *byte)
{
    *(volatile char *)byte = 42;   /* faults: the page is the receive's */
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    if (ranks < 2 || rank > 1)
        return mpix_test_finish("guard_foreign");

    /* The first bytes of the first page belong to "someone else"; the buffer follows. */
    long page_size = sysconf(_SC_PAGESIZE);
    char *region = mmap(NULL, (size_t)page_size * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(region != MAP_FAILED, "mmap");
    int *buffer = (int *)(region + 64);
    if (rank == 0) {
        for (int i = 0; i < ELEMENTS; i++)
            buffer[i] = 3 * i + 1;
        CHECK(MPIX_Send_guarded(buffer, ELEMENTS, MPI_INT, 1, 5, MPI_COMM_WORLD) == MPI_SUCCESS, "send");
        CHECK(MPIX_Send_guarded(buffer, ELEMENTS, MPI_INT, 1, 6, MPI_COMM_WORLD) == MPI_SUCCESS, "second send");
    } else {
        memset(region, 0, (size_t)page_size * 8);
        CHECK(MPIX_Recv_guarded(buffer, ELEMENTS, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "receive");
        pthread_t helper;
        create_function *create = unseen_create();
        int started = create && create(&helper, NULL, touch_neighbour, region) == 0;
        CHECK(started, "thread");
        if (started)
            pthread_join(helper, NULL);
        if (mpix_test_pvar("guard.active", MPI_COMM_NULL))
            CHECK(mpix_test_pvar("guard.foreign_faults", MPI_COMM_NULL) == 1,
                  "the other thread's fault was not taken as foreign (%lld)",
                  mpix_test_pvar("guard.foreign_faults", MPI_COMM_NULL));
        CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "complete_all");
        int same = 1;
        for (int i = 0; i < ELEMENTS; i++)
            same &= buffer[i] == 3 * i + 1;
        CHECK(same, "the received data is in place");
        CHECK(region[0] == 42, "the other thread's byte was kept (%d)", region[0]);

        memset(buffer, 0, ELEMENTS * sizeof(int));
        CHECK(MPIX_Recv_guarded(buffer, ELEMENTS, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "second receive");
        long long faults = mpix_test_pvar("guard.foreign_faults", MPI_COMM_NULL);
        long long active = mpix_test_pvar("guard.active", MPI_COMM_NULL);
        void *result = NULL;
        CHECK(pthread_create(&helper, NULL, read_buffer, buffer) == 0, "program thread");
        pthread_join(helper, &result);
        CHECK(result == buffer, "the program's thread read the message");
        CHECK(mpix_test_pvar("guard.active", MPI_COMM_NULL) == active, "guarded calls did not resume (%lld, was %lld)",
              mpix_test_pvar("guard.active", MPI_COMM_NULL), active);
        CHECK(mpix_test_pvar("guard.foreign_faults", MPI_COMM_NULL) == faults, "its reads faulted (%lld, was %lld)",
              mpix_test_pvar("guard.foreign_faults", MPI_COMM_NULL), faults);
    }
    CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "complete_all");
    munmap(region, (size_t)page_size * 8);
    return mpix_test_finish("guard_foreign");
}
