/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Get_library_version before, during and after MPI, and the version macros. */
#include <mpix/mpix.h>
#include "mpix_test.h"

#include <stdlib.h>

static void check_version_string(void)
{
    char version[MPIX_MAX_LIBRARY_VERSION_STRING], expected[64];
    int length = -1;
    int rc = MPIX_Get_library_version(version, &length);
    snprintf(expected, sizeof expected, "mpix %d.%d.%d (", MPIX_VERSION_MAJOR, MPIX_VERSION_MINOR,
             MPIX_VERSION_PATCH);
    CHECK(rc == MPI_SUCCESS, "rc %d", rc);
    CHECK(length == (int)strlen(version), "resultlen %d, strlen %zu", length, strlen(version));
    CHECK(strncmp(version, expected, strlen(expected)) == 0, "'%s' does not start with '%s'", version, expected);
#if defined(OPEN_MPI)
    CHECK(strstr(version, "Open MPI") != NULL, "'%s' does not name Open MPI", version);
#elif defined(MPICH)
    CHECK(strstr(version, "MPICH") != NULL, "'%s' does not name MPICH", version);
#endif
}

int main(int argc, char **argv)
{
    char macro_version[32];
    snprintf(macro_version, sizeof macro_version, "%d.%d.%d", MPIX_VERSION_MAJOR, MPIX_VERSION_MINOR,
             MPIX_VERSION_PATCH);
    CHECK(strcmp(macro_version, MPIX_VERSION_STRING) == 0, "%s vs %s", macro_version, MPIX_VERSION_STRING);
    check_version_string(); /* before MPI_Init, as MPI_Get_library_version allows */
    CHECK(MPIX_Get_library_version(NULL, NULL) == MPI_ERR_ARG, "NULL args before init");

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check_version_string();

    int length, error_class, argument_class;
    int rc = MPIX_Get_library_version(NULL, &length);
    MPI_Error_class(rc, &error_class);
    MPIX_Query_error_class(MPIX_ERRKIND_ARGUMENT, &argument_class);
    CHECK(rc != MPI_SUCCESS && error_class == argument_class, "NULL version: rc %d class %d", rc, error_class);
    CHECK(strstr(mpix_test_error_string(rc), "version is NULL") != NULL, "'%s'", mpix_test_error_string(rc));
    return mpix_test_finish("version");
}
