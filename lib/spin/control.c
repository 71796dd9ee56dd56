#include "control.h"
#include "common/agree.h"
#include "common/error.h"
#include "common/hint.h"
#include "common/keyval.h"

#include <stdlib.h>
#include <string.h>

enum { DEFAULT_POLLS = 2000 };

/* Freeing the user window frees its control window: the delete callback runs on every
 * process inside the collective MPI_Win_free, so the inner free matches up. */
static int delete_spin_state(MPI_Win win, int keyval, void *value, void *extra)
{
    mpix_spin_state *state = value;
    (void)win, (void)keyval, (void)extra;
    MPI_Win_free(&state->control_win);
    free(state);
    return MPI_SUCCESS;
}

static mpix_keyval spin_keyval = MPIX_WIN_KEYVAL_INIT(delete_spin_state);

mpix_spin_state *mpix_spin_state_of(MPI_Win win)
{
    void *state = NULL;
    if (win == MPI_WIN_NULL || mpix_win_attr_get(win, &spin_keyval, &state) != MPI_SUCCESS)
        return NULL;
    return state;
}

int mpix_spin_attach(MPI_Win win, MPI_Comm comm, MPI_Info info)
{
    mpix_spin_state *state = calloc(1, sizeof *state);
    mpix_hint_value polls;
    MPI_Aint size;
    int unit, rc, *model, found = 0;

    if (!state)
        return MPI_ERR_NO_MEM;
    state->control_win = MPI_WIN_NULL;
    /* Agree before the collective allocation: a bad value on one rank must not leave
     * the others waiting in it. */
    rc = mpix_agree(comm, mpix_hint_get(info, MPIX_HINT_SPIN_POLLS, &polls));
    state->polls = rc == MPI_SUCCESS && polls.present ? (int)polls.integer : DEFAULT_POLLS;
    MPI_Comm_rank(comm, &state->rank);
    MPI_Comm_size(comm, &state->size);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_allocate_shared(state->rank == 0 ? sizeof(mpix_spin_block) : 0, 1, MPI_INFO_NULL, comm,
                                     &state->block, &state->control_win);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Win_shared_query(state->control_win, 0, &size, &unit, &state->block);
        if (state->rank == 0)
            memset(state->block, 0, sizeof *state->block);
        MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &found);
        state->separate_model = found && *model == MPI_WIN_SEPARATE;
        MPI_Barrier(comm); /* the block is zeroed before anyone uses it */
    }
    if (rc == MPI_SUCCESS)
        rc = mpix_win_attr_set(win, &spin_keyval, state);
    if (rc != MPI_SUCCESS) {
        if (state->control_win != MPI_WIN_NULL && state->block)
            MPI_Win_free(&state->control_win);
        free(state);
    }
    return rc;
}
