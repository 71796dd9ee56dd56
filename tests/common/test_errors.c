/* SPDX-License-Identifier: BSD-3-Clause */
/* Hint validation through a public call: every hint type, good and bad values, info
 * and environment origins, the error class and the text naming key and value, the
 * user's error handler being called, and the pool of codes wrapping around. */
#include <mpix/mpix.h>
#include "mpix_test.h"

#include <stdlib.h>

static int handler_calls, handler_last_code;

static void recording_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_last_code = *code;
}

/* Validate one key=value; expect success, or an error naming key, value and origin. */
static void expect(const char *key, const char *value, int should_pass, int bad_hint_class)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
    int rc = MPIX_Info_validate(info);
    MPI_Info_free(&info);
    if (should_pass) {
        CHECK(rc == MPI_SUCCESS, "%s=%s rejected: %s", key, value, mpix_test_error_string(rc));
        return;
    }
    int error_class = -1;
    MPI_Error_class(rc, &error_class);
    const char *text = mpix_test_error_string(rc);
    CHECK(rc != MPI_SUCCESS, "%s=%s accepted", key, value);
    CHECK(error_class == bad_hint_class, "%s=%s: class %d, want %d", key, value, error_class, bad_hint_class);
    CHECK(strstr(text, key) && strstr(text, value) && strstr(text, "(info)"),
          "%s=%s: message '%s' names neither", key, value, text);
}

int main(int argc, char **argv)
{
    int bad_hint_class, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPIX_Query_error_class(MPIX_ERRKIND_BAD_HINT, &bad_hint_class) == MPI_SUCCESS, "query class");

    CHECK(MPIX_Info_validate(MPI_INFO_NULL) == MPI_SUCCESS, "no info, clean environment");
    expect("storage_alloc_factor", "banana", 0, bad_hint_class);
    expect("storage_alloc_factor", "1.5", 0, bad_hint_class);
    expect("storage_alloc_factor", "-0.1", 0, bad_hint_class);
    expect("storage_alloc_factor", "0.25", 1, bad_hint_class);
    expect("storage_alloc_factor", "auto", 1, bad_hint_class);
    expect("alloc_type", "disk", 0, bad_hint_class);
    expect("alloc_type", "storage", 1, bad_hint_class);
    expect("storage_alloc_unlink", "maybe", 0, bad_hint_class);
    expect("storage_alloc_unlink", "true", 1, bad_hint_class);
    expect("storage_alloc_discard", "0", 1, bad_hint_class);
    expect("storage_alloc_offset", "12abc", 0, bad_hint_class);
    expect("storage_alloc_offset", "-4096", 0, bad_hint_class);
    expect("storage_alloc_offset", "8192", 1, bad_hint_class);
    expect("storage_alloc_order", "middle_first", 0, bad_hint_class);
    expect("storage_alloc_order", "storage_first", 1, bad_hint_class);
    expect("file_perm", "0999", 0, bad_hint_class);
    expect("file_perm", "0640", 1, bad_hint_class);
    expect("file_perm", "384", 1, bad_hint_class);   /* decimal S_IRUSR | S_IWUSR, as "%d" prints it */
    expect("file_perm", "640", 0, bad_hint_class);   /* decimal 640 is 01200: not a mode */
    expect("file_perm", "-384", 0, bad_hint_class);
    expect("file_perm", "0x180", 0, bad_hint_class);
    expect("access_style", "sequential,sideways", 0, bad_hint_class);
    expect("access_style", "read_once, sequential", 1, bad_hint_class);
    expect("striping_factor", "0", 0, bad_hint_class);
    expect("striping_unit", "1048576", 1, bad_hint_class);
    expect("mpix_hy_split", "banana", 0, bad_hint_class);
    expect("mpix_hy_split", "numa", 1, bad_hint_class);
    expect("mpix_hy_split", "2", 1, bad_hint_class);
    expect("mpix_hy_split", "0", 0, bad_hint_class);
    expect("some_other_libs_key", "anything", 1, bad_hint_class);

    /* Environment defaults are checked, named as such, and info overrides them. */
    setenv("MPIX_HY_SPLIT", "banana", 1);
    int rc = MPIX_Info_validate(MPI_INFO_NULL);
    const char *text = mpix_test_error_string(rc);
    CHECK(rc != MPI_SUCCESS && strstr(text, "environment variable MPIX_HY_SPLIT") && strstr(text, "banana"),
          "environment: rc %d '%s'", rc, text);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_hy_split", "socket");
    CHECK(MPIX_Info_validate(info) == MPI_SUCCESS, "info value should override the environment");
    MPI_Info_free(&info);
    /* Set but empty counts as not set (MPIX_HY_SPLIT= prog). */
    setenv("MPIX_HY_SPLIT", "", 1);
    rc = MPIX_Info_validate(MPI_INFO_NULL);
    CHECK(rc == MPI_SUCCESS, "an empty MPIX_HY_SPLIT: '%s'", mpix_test_error_string(rc));
    unsetenv("MPIX_HY_SPLIT");

    /* The object's handler is called with the code it then returns. */
    MPI_Errhandler handler;
    MPI_Comm_create_errhandler(recording_handler, &handler);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "tape");
    rc = MPIX_Info_validate(info);
    CHECK(handler_calls == 1 && handler_last_code == rc && rc != MPI_SUCCESS, "handler calls %d code %d rc %d",
          handler_calls, handler_last_code, rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&handler);

    /* More errors than the pool holds: the newest text is right, the class unchanged. */
    for (int i = 0; i < 70; i++) {
        char value[32];
        snprintf(value, sizeof value, "tape%d", i);
        MPI_Info_set(info, "alloc_type", value);
        rc = MPIX_Info_validate(info);
        int error_class;
        MPI_Error_class(rc, &error_class);
        CHECK(error_class == bad_hint_class && strstr(mpix_test_error_string(rc), value),
              "error %d: class %d text '%s'", i, error_class, mpix_test_error_string(rc));
    }
    MPI_Info_free(&info);

    int argument_class, peer_class, error_class;
    MPIX_Query_error_class(MPIX_ERRKIND_ARGUMENT, &argument_class);
    MPIX_Query_error_class(MPIX_ERRKIND_PEER, &peer_class);
    CHECK(argument_class != bad_hint_class && peer_class != argument_class, "classes must differ");
    rc = MPIX_Query_error_class(MPIX_ERRKIND_COUNT, &error_class);
    MPI_Error_class(rc, &error_class);
    CHECK(error_class == argument_class && strstr(mpix_test_error_string(rc), "kind 6"),
          "bad kind: '%s'", mpix_test_error_string(rc));
    return mpix_test_finish("errors");
}
