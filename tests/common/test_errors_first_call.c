/* SPDX-License-Identifier: BSD-3-Clause */
/* A bad setting met by the first mpix call of the process, before mpix has reported
 * anything: the module's state is being made when the setting is read, and the error
 * must still come back from that call on every rank, of the bad-hint class and naming
 * the value, not hang. The environment (set by the test's registration) holds
 * MPIX_GUARD_POLL_NS=banana or MPIX_ZCOPY_SLOTS=banana, and MPIX_TEST_FIRST names the
 * module whose call comes first. */
#include <mpix/mpix.h>
#include "mpix_test.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    const char *module = getenv("MPIX_TEST_FIRST") ? getenv("MPIX_TEST_FIRST") : "guard";
    int peer = rank ^ 1;
    if (peer >= ranks)
        peer = MPI_PROC_NULL;
    double out = rank, in = -1;
    int rc;
    if (strcmp(module, "guard") == 0)
        rc = MPIX_Sendrecv_guarded(&out, 1, MPI_DOUBLE, peer, 0, &in, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE);
    else
        rc = rank % 2 == 0 ? MPIX_Send_zcopy(&out, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD)
                           : MPIX_Recv_zcopy(&in, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_BAD_HINT), "%s: first call gave '%s', want a bad-hint error", module,
          rc == MPI_SUCCESS ? "success" : mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        CHECK(strstr(mpix_test_error_string(rc), "banana") != NULL, "%s: '%s' does not name the value", module,
              mpix_test_error_string(rc));
    return mpix_test_finish("errors_first_call");
}
