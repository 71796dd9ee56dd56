/* SPDX-License-Identifier: BSD-3-Clause */
/* Attribute keyvals for state that mpix hangs on user objects (communicators, windows,
 * datatypes): created on first use, freed at MPI_Finalize. Freeing the object runs the
 * delete callback, so state can never outlive its handle or be found through a reused
 * handle. */
#ifndef MPIX_COMMON_KEYVAL_H
#define MPIX_COMMON_KEYVAL_H

#include <mpi.h>

typedef enum { MPIX_KEYVAL_COMM, MPIX_KEYVAL_WIN, MPIX_KEYVAL_TYPE } mpix_keyval_kind;

typedef struct mpix_keyval {
    int keyval;                 /* MPI_KEYVAL_INVALID until first use */
    mpix_keyval_kind kind;
    union {
        MPI_Comm_delete_attr_function *comm;
        MPI_Win_delete_attr_function *win;
        MPI_Type_delete_attr_function *type;
    } delete_fn;
} mpix_keyval;

#define MPIX_COMM_KEYVAL_INIT(fn) { MPI_KEYVAL_INVALID, MPIX_KEYVAL_COMM, { .comm = (fn) } }
#define MPIX_WIN_KEYVAL_INIT(fn)  { MPI_KEYVAL_INVALID, MPIX_KEYVAL_WIN,  { .win = (fn) } }
#define MPIX_TYPE_KEYVAL_INIT(fn) { MPI_KEYVAL_INVALID, MPIX_KEYVAL_TYPE, { .type = (fn) } }

/* The keyval number, created on first call (attributes are not copied on dup). */
int mpix_keyval_get(mpix_keyval *kv, int *keyval);

/* Attribute access through a lazily created keyval; *value is NULL when absent. */
int mpix_comm_attr_get(MPI_Comm comm, mpix_keyval *kv, void **value);
int mpix_comm_attr_set(MPI_Comm comm, mpix_keyval *kv, void *value);
int mpix_win_attr_get(MPI_Win win, mpix_keyval *kv, void **value);
int mpix_win_attr_set(MPI_Win win, mpix_keyval *kv, void *value);
int mpix_type_attr_get(MPI_Datatype type, mpix_keyval *kv, void **value);
int mpix_type_attr_set(MPI_Datatype type, mpix_keyval *kv, void *value);

#endif
