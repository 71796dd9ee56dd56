/* SPDX-License-Identifier: BSD-3-Clause */
#include "api.h"
#include "error.h"
#include "self_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Each message needs its own code (MPI attaches strings to codes), and codes cannot
 * be removed in MPI-3: a ring of codes per class, whose strings are rewritten
 * (MPI_Add_error_string replaces), bounds what a long run with many errors consumes. */
#define CODES_PER_CLASS 32

typedef struct error_state {
    int error_class[MPIX_ERRKIND_COUNT];
    int codes[MPIX_ERRKIND_COUNT][CODES_PER_CLASS];
    int codes_made[MPIX_ERRKIND_COUNT];
    int next_code[MPIX_ERRKIND_COUNT];
} error_state;

static const char *const kind_summary[MPIX_ERRKIND_COUNT] = {
    [MPIX_ERRKIND_BAD_HINT] = "mpix: bad hint value",
    [MPIX_ERRKIND_STORAGE_IO] = "mpix: storage I/O failure",
    [MPIX_ERRKIND_DATATYPE] = "mpix: unsupported datatype",
    [MPIX_ERRKIND_UNSUPPORTED] = "mpix: facility not supported here",
    [MPIX_ERRKIND_ARGUMENT] = "mpix: invalid argument",
    [MPIX_ERRKIND_PEER] = "mpix: the call failed on another rank",
};

static int error_state_create(void **state)
{
    error_state *errors = calloc(1, sizeof *errors);
    if (!errors)
        return MPI_ERR_NO_MEM;
    for (int kind = 0; kind < MPIX_ERRKIND_COUNT; kind++) {
        int rc = PMPI_Add_error_class(&errors->error_class[kind]);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Add_error_string(errors->error_class[kind], kind_summary[kind]);
        if (rc != MPI_SUCCESS) {
            free(errors);
            return rc;
        }
    }
    *state = errors;
    return MPI_SUCCESS;
}

static void error_state_destroy(void *state) { free(state); }

static mpix_self_slot error_slot = MPIX_SELF_SLOT_INIT(error_state_create, error_state_destroy);

int mpix_error(MPIX_Error_kind kind, const char *format, ...)
{
    char message[MPI_MAX_ERROR_STRING];
    error_state *errors;
    int code = MPI_ERR_OTHER, length;
    va_list args;

    if (mpix_self_state(&error_slot, (void **)&errors) != MPI_SUCCESS)
        return MPI_ERR_OTHER;
    length = snprintf(message, sizeof message, "mpix: ");
    va_start(args, format);
    vsnprintf(message + length, sizeof message - length, format, args);
    va_end(args);

    mpix_lock();
    if (errors->codes_made[kind] < CODES_PER_CLASS) {
        if (PMPI_Add_error_code(errors->error_class[kind], &code) == MPI_SUCCESS)
            errors->codes[kind][errors->codes_made[kind]++] = code;
        else
            code = errors->error_class[kind];
    } else {
        code = errors->codes[kind][errors->next_code[kind]];
        errors->next_code[kind] = (errors->next_code[kind] + 1) % CODES_PER_CLASS;
    }
    /* Without its string the code still has the right class, whose summary MPI prints. */
    if (PMPI_Add_error_string(code, message) != MPI_SUCCESS)
        code = errors->error_class[kind];
    mpix_unlock();
    return code;
}

int mpix_error_kind_of(int code)
{
    error_state *errors;
    int error_class;

    if (code == MPI_SUCCESS || mpix_self_state(&error_slot, (void **)&errors) != MPI_SUCCESS)
        return -1;
    if (PMPI_Error_class(code, &error_class) != MPI_SUCCESS)
        return -1;
    for (int kind = 0; kind < MPIX_ERRKIND_COUNT; kind++)
        if (errors->error_class[kind] == error_class)
            return kind;
    return -1;
}

int mpix_raise_comm(MPI_Comm comm, int code)
{
    /* The caller's code is the answer whatever the handler does; a bad handle is
     * reported by MPI itself, on MPI_COMM_WORLD. */
    if (code != MPI_SUCCESS)
        (void)PMPI_Comm_call_errhandler(comm, code);
    return code;
}

int mpix_raise_win(MPI_Win win, int code)
{
    if (code != MPI_SUCCESS)
        (void)PMPI_Win_call_errhandler(win, code); /* as mpix_raise_comm */
    return code;
}

/* Without the world model (MPI-4 sessions alone) there is no communicator to raise on
 * and the code is only returned. */
int mpix_raise(int code) { return mpix_mpi_is_active() ? mpix_raise_comm(MPI_COMM_WORLD, code) : code; }

MPIX_API int MPIX_Query_error_class(int kind, int *errorclass)
{
    error_state *errors;
    int rc;

    if (kind < 0 || kind >= MPIX_ERRKIND_COUNT)
        return mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT,
                                     "MPIX_Query_error_class: kind %d is not an MPIX_Error_kind (0..%d)",
                                     kind, MPIX_ERRKIND_COUNT - 1));
    if (!errorclass)
        return mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Query_error_class: errorclass is NULL"));
    rc = mpix_self_state(&error_slot, (void **)&errors);
    if (rc != MPI_SUCCESS)
        return mpix_raise(rc);
    *errorclass = errors->error_class[kind];
    return MPI_SUCCESS;
}
