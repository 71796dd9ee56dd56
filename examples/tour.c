/* A tour of mpix: every module that exists shows what it does, on any number of ranks.
 * Run with: sh examples/quickstart.sh   (or mpirun -np 2 ./tour) */
#include <mpix/mpix.h>
#include <stdio.h>
#include <string.h>

static int rank;

#define SAY(...) do { if (rank == 0) { printf(__VA_ARGS__); fflush(stdout); } } while (0)

/* common: version, and hints checked up front with errors that name the bad value. */
static int tour_common(void)
{
    char version[MPIX_MAX_LIBRARY_VERSION_STRING], message[MPI_MAX_ERROR_STRING];
    int length, bad_hint_class, error_class, rc;
    MPI_Info info;

    MPIX_Get_library_version(version, &length);
    SAY("[common] library: %s\n", version);

    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_factor", "0.5");
    rc = MPIX_Info_validate(info);
    SAY("[common] hints alloc_type=storage storage_alloc_factor=0.5: %s\n", rc == MPI_SUCCESS ? "valid" : "rejected");

    MPI_Info_set(info, "storage_alloc_factor", "half");
    rc = MPIX_Info_validate(info); /* MPI_ERRORS_RETURN is set on MPI_COMM_WORLD below */
    MPI_Error_class(rc, &error_class);
    MPIX_Query_error_class(MPIX_ERRKIND_BAD_HINT, &bad_hint_class);
    MPI_Error_string(rc, message, &length);
    SAY("[common] hint storage_alloc_factor=half: rejected, class %s: %s\n",
        error_class == bad_hint_class ? "MPIX_ERRKIND_BAD_HINT" : "unexpected", message);
    MPI_Info_free(&info);
    return rc != MPI_SUCCESS && error_class == bad_hint_class ? 0 : 1;
}

int main(int argc, char **argv)
{
    int size, failures = 0, total;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    SAY("mpix tour on %d ranks\n", size);

    failures += tour_common();

    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    SAY("tour %s\n", total ? "FAILED" : "done: every module did what it says");
    MPI_Finalize();
    return total != 0;
}
