/* SPDX-License-Identifier: BSD-3-Clause */
/* Guarded SOR gives the blocking program's grid bit for bit, and so does the hand-written
 * overlap; for halo rows that share pages with the rows sent (narrow grids: several rows
 * a page), that fill whole pages, and that straddle them. MPIX_TEST_GUARD_EXPECT=guarded
 * also asserts the guarded path ran (transfers started; with MPIX_GUARD_POLL_NS=0 also
 * faults, mprotect, learned chains, /proc/self/mem copies); =blocking asserts that it
 * did not (MPIX_GUARD=off). */
#include "mpix_test.h"
#include "../../examples/guard_sor.h"

#include <mpix/guard.h>
#include <errno.h>
#include <sys/syscall.h>

static int run(sor_grid *grid, MPI_Comm comm, int rows, int cols, int iterations, enum sor_method method)
{
    if (sor_init(grid, comm, rows, cols) != 0)
        return -1;
    sor_run(grid, method, iterations, MPIX_Sendrecv_guarded);
    return 0;
}

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    const char *expect = getenv("MPIX_TEST_GUARD_EXPECT");
    const int shapes[][2] = { { 3 * ranks + 1, 100 }, { 2 * ranks, 510 }, { 2 * ranks + 3, 1000 }, { ranks, 3001 } };

    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int rows = shapes[s][0], cols = shapes[s][1], iterations = 25;
        sor_grid reference, guarded, overlap;
        CHECK(run(&reference, MPI_COMM_WORLD, rows, cols, iterations, SOR_BLOCKING) == 0, "init");
        CHECK(run(&guarded, MPI_COMM_WORLD, rows, cols, iterations, SOR_GUARDED) == 0, "init");
        /* Reading the whole grid completes whatever the last exchange left in flight. */
        size_t bytes = sizeof(double) * (size_t)(reference.rows + 2) * (size_t)(cols + 2);
        CHECK(memcmp(reference.cells, guarded.cells, bytes) == 0, "guarded grid %dx%d differs from blocking", rows,
              cols);
        CHECK(run(&overlap, MPI_COMM_WORLD, rows, cols, iterations, SOR_OVERLAP) == 0, "init");
        CHECK(memcmp(reference.cells, overlap.cells, bytes) == 0, "overlap grid %dx%d differs from blocking", rows,
              cols);
        CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "complete_all");
        sor_free(&reference);
        sor_free(&guarded);
        sor_free(&overlap);
    }

    /* A receive without a status that turns out truncated: MPI reports it when the
     * transfer completes, and MPIX_Guard_complete_all returns it afterwards. */
    if (ranks > 1 && rank < 2) {
        int long_message[100] = { 0 }, short_buffer[10];
        if (rank == 0) {
            CHECK(MPIX_Send_guarded(long_message, 100, MPI_INT, 1, 77, MPI_COMM_WORLD) == MPI_SUCCESS, "send");
        } else {
            /* Guarded, the receive returns at once; with MPIX_GUARD=off it is MPI_Recv. */
            int active = mpix_test_pvar("guard.active", MPI_COMM_NULL) != 0;
            int rc = MPIX_Recv_guarded(short_buffer, 10, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int class = MPI_SUCCESS;
            if (active) {
                CHECK(rc == MPI_SUCCESS, "receive posted");
                rc = MPIX_Guard_complete_all();
            }
            MPI_Error_class(rc, &class);
            CHECK(class == MPI_ERR_TRUNCATE, "truncated receive reported as %d (class %d)", rc, class);
            CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "the error is returned once");
        }
        CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "complete_all");
    }

    /* A received buffer handed to the kernel: a raw system call meets the protected pages
     * (EFAULT, no signal), which shows the receive guarded; the C library's write, which
     * libmpix defines, finishes the transfer first and writes the received data. */
    if (ranks > 1 && rank < 2) {
        enum { N = 3000 };   /* several pages */
        int *message = malloc(N * sizeof(int));
        for (int i = 0; i < N; i++)
            message[i] = 7 * i + 1;
        if (rank == 0) {
            CHECK(MPIX_Send_guarded(message, N, MPI_INT, 1, 78, MPI_COMM_WORLD) == MPI_SUCCESS, "send");
        } else {
            char path[] = "/tmp/mpix-guard-complete-XXXXXX";
            int file = mkstemp(path);
            unlink(path);
            memset(message, 0, N * sizeof(int));
            CHECK(MPIX_Recv_guarded(message, N, MPI_INT, 0, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "receive");
            if (mpix_test_pvar("guard.active", MPI_COMM_NULL) && mpix_test_pvar("guard.poll_ns", MPI_COMM_NULL) == 0) {
                errno = 0;
                CHECK(syscall(SYS_write, file, message, N * sizeof(int)) < 0 && errno == EFAULT,
                      "a raw write system call on a guarded buffer should fail with EFAULT (errno %d)", errno);
            }
            CHECK(write(file, message, N * sizeof(int)) == (ssize_t)(N * sizeof(int)),
                  "write(2) of a received buffer at once");
            CHECK(MPIX_Guard_complete(message, 0) == MPI_SUCCESS, "zero length");
            CHECK(MPIX_Guard_complete(message + 10, 4) == MPI_SUCCESS, "complete");
            int *back = malloc(N * sizeof(int)), same = 1;
            CHECK(pread(file, back, N * sizeof(int), 0) == (ssize_t)(N * sizeof(int)), "read back");
            for (int i = 0; i < N; i++)
                same &= back[i] == 7 * i + 1;
            CHECK(same, "the file holds what was received");
            int rc = MPIX_Guard_complete(message, -1);
            CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_ARGUMENT) &&
                      strstr(mpix_test_error_string(rc), "-1"),
                  "negative length: %s", mpix_test_error_string(rc));
            free(back);
            close(file);
        }
        CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "complete_all");
        free(message);
    }

#define PVAR(name) mpix_test_pvar("guard." name, MPI_COMM_NULL)
    long long active = PVAR("active");
    if (expect && strcmp(expect, "guarded") == 0 && ranks > 1) {
        CHECK(active, "guard should be active");
        if (active) {
            CHECK(PVAR("receives") > 0 && PVAR("sends_copied") + PVAR("sends_in_place") > 0,
                  "receives %lld, copied sends %lld", PVAR("receives"), PVAR("sends_copied"));
            /* With polling off (MPIX_GUARD_POLL_NS=0) every receive is protected, so the
             * protection paths must all have run. */
            if (PVAR("poll_ns") == 0) {
                CHECK(PVAR("faults") > 0, "no fault was taken: the guarded path did not wait on a touch");
                CHECK(PVAR("mprotect_calls") > 0, "no mprotect call");
                /* The exchange repeats, so with chains on it is learned and its last call
                 * completes it (chain.c); with chains off it never is. */
                if (PVAR("chain"))
                    CHECK(PVAR("chains_completed_at_last_call") > 0, "no chain was learned");
                else
                    CHECK(PVAR("chains_completed_at_last_call") == 0, "%lld chains completed with chains off",
                          PVAR("chains_completed_at_last_call"));
                /* Interior ranks send a row whose page a receive hides: read through
                 * /proc/self/mem where the kernel allows it. */
                if (PVAR("self_memory") && rank > 0 && rank < ranks - 1)
                    CHECK(PVAR("hidden_reads") > 0, "no send was copied through /proc/self/mem");
            }
        }
    }
    if (expect && strcmp(expect, "blocking") == 0)
        CHECK(!active, "MPIX_GUARD=off should leave the calls blocking");
#undef PVAR
    return mpix_test_finish("guard_sor");
}
