/* SPDX-License-Identifier: BSD-3-Clause */
/* Bad arguments to the common calls are errors raised on MPI_COMM_WORLD: no crash. */
#include "mpix_test.h"

int main(int argc, char **argv)
{
    int rank, size, length, error_class;
    char version[MPIX_MAX_LIBRARY_VERSION_STRING];
    MPI_Count value;
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    EXPECT_ERROR(MPIX_Get_library_version(NULL, &length), "version, NULL buffer");
    EXPECT_ERROR(MPIX_Get_library_version(version, NULL), "version, NULL length");
    EXPECT_ERROR(MPIX_Query_error_class(MPIX_ERRKIND_COUNT, &error_class), "error class, kind out of range");
    EXPECT_ERROR(MPIX_Query_error_class(-1, &error_class), "error class, negative kind");
    EXPECT_ERROR(MPIX_Query_error_class(MPIX_ERRKIND_ARGUMENT, NULL), "error class, NULL output");
    EXPECT_ERROR(MPIX_Pvar_read(NULL, MPI_COMM_WORLD, &value), "pvar, NULL name");
    EXPECT_ERROR(MPIX_Pvar_read("zcopy.sent_zero_copy", MPI_COMM_WORLD, NULL), "pvar, NULL value");
    int rc = MPIX_Pvar_read("zcopy.no_such_counter", MPI_COMM_WORLD, &value);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_ARGUMENT) && strstr(mpix_test_error_string(rc), "zcopy.no_such_counter"),
          "unknown pvar: %s", mpix_test_error_string(rc));
    EXPECT_ERROR(MPIX_Pvar_read("zcopy.sent_zero_copy", MPI_COMM_NULL, &value), "pvar, null communicator");
    CHECK(MPIX_Pvar_read("guard.faults", MPI_COMM_NULL, &value) == MPI_SUCCESS && value == 0,
          "guard counters read 0 before any guarded call");
    CHECK(MPIX_Pvar_read("zcopy.sent_zero_copy", MPI_COMM_WORLD, &value) == MPI_SUCCESS && value == 0,
          "zcopy counters read 0 before any message");

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_hy_split", "-3");
    EXPECT_ERROR(MPIX_Info_validate(info), "validate, out-of-range split");
    MPI_Info_free(&info);
    return mpix_test_finish("arguments");
}
