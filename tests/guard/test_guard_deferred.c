/* SPDX-License-Identifier: BSD-3-Clause */
/* An error a guarded transfer meets after its call returned (a message longer than the
 * receive, received without a status) reaches the program once: MPI gives it to one
 * handler when guard waits for the transfer (the handler MPI uses for completion calls:
 * the communicator's with Open MPI, MPI_COMM_WORLD's with MPICH), guard raises it no
 * more, and the program gets the code from the next MPIX_Guard_complete or
 * MPIX_Guard_complete_all, or, in a program built with <mpix/guard_inject.h>, from the
 * next fenced MPI call that succeeds. Handlers here count their calls and return. */
#include "../common/mpix_test.h"
#include <mpix/guard_inject.h>

static int world_calls, comm_calls, last_class;

#ifdef MPICH
enum { WAIT_USES_WORLD = 1 };
#else
enum { WAIT_USES_WORLD = 0 };
#endif

/* Exactly one handler call for the @errors errors so far, on the one MPI's completion
 * calls use. */
static void check_handlers(int errors, const char *when)
{
    int want_world = WAIT_USES_WORLD ? errors : 0, want_comm = WAIT_USES_WORLD ? 0 : errors;
    CHECK(world_calls == want_world && comm_calls == want_comm,
          "%s: MPI_COMM_WORLD's handler called %d times, the communicator's %d (class %d); want %d and %d", when,
          world_calls, comm_calls, last_class, want_world, want_comm);
}

static void count_world(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    world_calls++;
    MPI_Error_class(*code, &last_class);
}

static void count_comm(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    comm_calls++;
    MPI_Error_class(*code, &last_class);
}

static int error_class_of(int code)
{
    int error_class = MPI_SUCCESS;
    MPI_Error_class(code, &error_class);
    return error_class;
}

/* Rank 1 receives 4 of the 8 ints rank 0 sends, without a status: MPI_Recv is guarded
 * (the injected macro), so the truncation is found after it returned. */
static int truncated_receive(MPI_Comm comm, int rank)
{
    int data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, into[4] = { 0 };
    if (rank == 0)
        return MPI_Send(data, 8, MPI_INT, 1, 5, comm);
    if (rank == 1)
        return MPI_Recv(into, 4, MPI_INT, 0, 5, comm, MPI_STATUS_IGNORE);
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank, size;
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Errhandler world_handler, comm_handler;
    MPI_Comm_create_errhandler(count_world, &world_handler);
    MPI_Comm_create_errhandler(count_comm, &comm_handler);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_handler);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, comm_handler);

    /* Explicit completion returns the code, once. */
    CHECK(truncated_receive(comm, rank) == MPI_SUCCESS, "guarded receive returned an error at once");
    int rc = MPIX_Guard_complete_all();
    if (rank == 1) {
        CHECK(error_class_of(rc) == MPI_ERR_TRUNCATE, "MPIX_Guard_complete_all gave class %d (%s), want truncate",
              error_class_of(rc), mpix_test_error_string(rc));
        check_handlers(1, "after MPIX_Guard_complete_all");
    } else {
        CHECK(rc == MPI_SUCCESS, "MPIX_Guard_complete_all on rank %d: %s", rank, mpix_test_error_string(rc));
    }
    CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "the error was returned twice");
    check_handlers(rank == 1, "after a second MPIX_Guard_complete_all");

    /* A fenced call (here MPI_Barrier) returns it when nothing else completed it. */
    CHECK(truncated_receive(comm, rank) == MPI_SUCCESS, "guarded receive returned an error at once");
    rc = MPI_Barrier(comm);
    if (rank == 1) {
        CHECK(error_class_of(rc) == MPI_ERR_TRUNCATE, "the fenced MPI_Barrier gave class %d (%s), want truncate",
              error_class_of(rc), mpix_test_error_string(rc));
    } else {
        CHECK(rc == MPI_SUCCESS, "MPI_Barrier on rank %d: %s", rank, mpix_test_error_string(rc));
    }
    CHECK(MPI_Barrier(comm) == MPI_SUCCESS, "the error was returned twice");
    check_handlers(rank == 1 ? 2 : 0, "after the fenced calls");

    MPI_Comm_free(&comm);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&world_handler);
    MPI_Errhandler_free(&comm_handler);
    return mpix_test_finish("guard deferred errors");
}
