/* SPDX-License-Identifier: BSD-3-Clause */
#include "control.h"
#include "common/agree.h"
#include "common/error.h"
#include "common/hint.h"
#include "common/keyval.h"
#include "common/lines.h"

#include <stdlib.h>
#include <string.h>


/* Freeing the user window frees its control window: the delete callback runs on every
 * process inside the collective MPI_Win_free, so the inner free matches up. */
static int delete_spin_state(MPI_Win win, int keyval, void *value, void *extra)
{
    mpix_spin_state *state = value;
    (void)win, (void)keyval, (void)extra;
    int rc = PMPI_Win_free(&state->control_win);
    free(state);
    return rc;
}

static mpix_keyval spin_keyval = MPIX_WIN_KEYVAL_INIT(delete_spin_state);

mpix_spin_state *mpix_spin_state_of(MPI_Win win)
{
    void *state = NULL;
    if (win == MPI_WIN_NULL || mpix_win_attr_get(win, &spin_keyval, &state) != MPI_SUCCESS)
        return NULL;
    return state;
}

/* The memory model of @win: on the separate model the atomics need MPI_Win_sync. */
static int separate_model_of(MPI_Win win, int *separate)
{
    int *model, found = 0;
    int rc = PMPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &found);
    *separate = rc == MPI_SUCCESS && found && *model == MPI_WIN_SEPARATE;
    return rc;
}

int mpix_spin_attach(MPI_Win win, MPI_Comm comm, MPI_Info info)
{
    mpix_spin_state *state = calloc(1, sizeof *state);
    mpix_hint_value polls;
    MPI_Aint size;
    int unit, rc;

    /* Agree before the collective allocation: a bad value or no memory on one rank must
     * not leave the others waiting in it. */
    rc = mpix_agree(comm, state ? mpix_hint_get(info, MPIX_HINT_SPIN_POLLS, &polls) : MPI_ERR_NO_MEM);
    if (rc != MPI_SUCCESS) {
        free(state);
        return rc;
    }
    state->control_win = MPI_WIN_NULL;
    state->win = win;
    state->polls = (int)polls.integer;
    mpix_hint_report(info, "spin");
    if ((rc = PMPI_Comm_rank(comm, &state->rank)) == MPI_SUCCESS)
        rc = PMPI_Comm_size(comm, &state->size);
    MPI_Aint bytes = (MPI_Aint)(sizeof(mpix_spin_block) + 2 * (size_t)state->size * sizeof(mpix_spin_word));
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_allocate_shared(state->rank == 0 ? mpix_aligned_bytes(bytes, MPIX_SPIN_STRIDE) : 0, 1,
                                      MPI_INFO_NULL, comm, &state->block, &state->control_win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_shared_query(state->control_win, 0, &size, &unit, &state->block);
    if (rc == MPI_SUCCESS) /* words on pairs of lines of their own (common/lines.h) */
        state->block = mpix_aligned(state->block, MPIX_SPIN_STRIDE);
    if (rc == MPI_SUCCESS && state->rank == 0)
        memset(state->block, 0, (size_t)bytes);
    if (rc == MPI_SUCCESS)
        rc = separate_model_of(win, &state->separate_model);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Barrier(comm); /* the block is zeroed before anyone uses it */
    if (rc == MPI_SUCCESS)
        rc = mpix_win_attr_set(win, &spin_keyval, state);
    if (rc != MPI_SUCCESS) {
        if (state->control_win != MPI_WIN_NULL)
            (void)PMPI_Win_free(&state->control_win); /* cleanup: rc is the error to report */
        free(state);
    }
    return rc;
}
