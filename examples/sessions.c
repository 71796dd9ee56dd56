/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix in a program of MPI-4 sessions alone: no MPI_Init, no MPI_COMM_WORLD. A solver
 * component starts MPI for itself with a session, makes its communicator from the
 * "mpi://WORLD" process set, sums a residual with the hybrid allreduce (one shared copy
 * per node) and keeps its state in a window on a file, synced to storage.
 *
 *   mpiexec -n 4 ./sessions [DIRECTORY]     (an MPI-4 library, such as MPICH 4)
 */
#include <mpi.h>
#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>

#if MPI_VERSION >= 4
enum { POINTS = 1 << 16 };

int main(int argc, char **argv)
{
    MPI_Session session;
    MPI_Group world;
    MPI_Comm comm, hybrid;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &session);
    MPI_Group_from_session_pset(session, "mpi://WORLD", &world);
    MPI_Comm_create_from_group(world, "org.example.solver", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &comm);
    MPI_Group_free(&world);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    /* The solver's state in a window on a file of its own, one per rank. */
    char path[256];
    snprintf(path, sizeof path, "%s/solver.%d", argc > 1 ? argv[1] : "/tmp", rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    double *state;
    MPI_Win state_win;
    MPIX_Win_allocate(POINTS * sizeof(double), sizeof(double), info, comm, &state, &state_win);
    MPI_Info_free(&info);

    /* The residual, summed over every rank with one shared copy per node. */
    MPIX_Hy_comm_create(comm, MPI_INFO_NULL, &hybrid);
    void *slot;
    double *residual;
    MPI_Win sum;
    MPIX_Hy_allreduce_create(hybrid, 1, MPI_DOUBLE, MPI_SUM, &slot, &residual, &sum);

    for (int step = 1; step <= 5; step++) {
        double local = 0;
        for (int i = 0; i < POINTS; i++) {
            state[i] = (rank + 1) * 0.5 / step + i * 1e-6;
            local += state[i] * 1e-3;
        }
        MPIX_Hy_allreduce(&local, sum);
        MPIX_Win_sync(state_win);   /* the step's state is on storage */
        if (rank == 0)
            printf("step %d: residual %.6f, state synced to %s and its %d peers' files\n", step, *residual, path,
                   size - 1);
    }

    MPIX_Hy_free(&sum);
    MPI_Comm_free(&hybrid);
    MPIX_Win_free(&state_win);
    remove(path);
    MPI_Comm_free(&comm);
    MPI_Session_finalize(&session);
    return 0;
}
#else
int main(void)
{
    puts("sessions: needs an MPI-4 library (MPI_Session_init)");
    return 0;
}
#endif
