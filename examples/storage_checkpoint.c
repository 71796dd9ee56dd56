/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoint/restart with a storage window: a 1D heat-diffusion loop keeps its state in
 * a window on a file and makes it durable every few steps with MPIX_Win_sync, which
 * writes only the pages that changed. When the program starts and finds a checkpoint
 * in the file, it resumes from there.
 * Run: mpirun -np 2 ./storage_checkpoint [DIR]   (run it twice: the second run resumes)
 * Without DIR it demonstrates both runs in one process lifetime: it stops after half of
 * the steps, frees the window, allocates it again on the same file and finishes, then
 * checks the result against an uninterrupted run. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, under -std=c11 too */
#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CELLS = 1 << 16, STEPS = 40, CHECKPOINT_EVERY = 5 };

typedef struct state {
    long long magic;     /* says a checkpoint is present */
    long long step;      /* steps completed */
    double cells[CELLS]; /* this rank's part of the rod */
} state;

#define MAGIC 0x6d7069785f636b70LL

static void step_once(double *cells, double left_ghost, double right_ghost)
{
    static double next[CELLS];
    for (int i = 0; i < CELLS; i++) {
        double left = i ? cells[i - 1] : left_ghost, right = i < CELLS - 1 ? cells[i + 1] : right_ghost;
        next[i] = cells[i] + 0.25 * (left - 2 * cells[i] + right);
    }
    memcpy(cells, next, sizeof next);
}

/* Advance @s to @until steps, exchanging ghost cells, checkpointing as it goes. */
static void run(state *s, long long until, MPI_Win win, int rank, int ranks)
{
    while (s->step < until) {
        double left_ghost = 0, right_ghost = 0;
        int left = rank ? rank - 1 : MPI_PROC_NULL, right = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;
        MPI_Sendrecv(&s->cells[0], 1, MPI_DOUBLE, left, 0, &right_ghost, 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(&s->cells[CELLS - 1], 1, MPI_DOUBLE, right, 1, &left_ghost, 1, MPI_DOUBLE, left, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        step_once(s->cells, left != MPI_PROC_NULL ? left_ghost : 100.0, right_ghost); /* left end held hot */
        s->step++;
        if (win != MPI_WIN_NULL && s->step % CHECKPOINT_EVERY == 0) {
            s->magic = MAGIC;
            MPIX_Win_sync(win); /* durable: what changed since the last checkpoint */
        }
    }
}

static MPI_Win open_state(const char *dir, state **s)
{
    char path[512];
    MPI_Info info;
    MPI_Win win;
    snprintf(path, sizeof path, "%s/heat-checkpoint.dat", dir);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path); /* one file: rank r gets the r-th slot */
    MPIX_Win_allocate(sizeof(state), 1, info, MPI_COMM_WORLD, s, &win);
    MPI_Info_free(&info);
    return win;
}

int main(int argc, char **argv)
{
    int rank, ranks, status = 0;
    char dir[256];
    state *s;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int demo = argc < 2;
    if (demo) {
        if (rank == 0 && !mkdtemp(strcpy(dir, "/tmp/mpix-checkpoint-XXXXXX")))
            MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    } else {
        snprintf(dir, sizeof dir, "%s", argv[1]);
    }

    MPI_Win win = open_state(dir, &s);
    if (s->magic != MAGIC) {
        memset(s, 0, sizeof *s);
        if (rank == 0)
            printf("checkpoint: no checkpoint in %s: starting at step 0\n", dir);
    } else if (rank == 0) {
        printf("checkpoint: resuming from step %lld\n", s->step);
    }
    run(s, demo ? STEPS / 2 : STEPS, win, rank, ranks);
    if (demo) {
        /* "Crash" after a checkpoint: the new window finds the state on the file. */
        MPIX_Win_free(&win);
        win = open_state(dir, &s);
        if (rank == 0)
            printf("checkpoint: restarted, the file says step %lld\n", s->step);
        run(s, STEPS, win, rank, ranks);
        state *reference = calloc(1, sizeof *reference);
        run(reference, STEPS, MPI_WIN_NULL, rank, ranks);
        int same = memcmp(reference->cells, s->cells, sizeof s->cells) == 0, all_same;
        MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (rank == 0)
            printf("checkpoint: %d steps with a restart at %d %s the uninterrupted run\n", STEPS, STEPS / 2,
                   all_same ? "match" : "DO NOT match");
        status = !all_same;
        free(reference);
    } else if (rank == 0) {
        printf("checkpoint: finished step %lld; the next run resumes here\n", s->step);
    }
    MPIX_Win_free(&win);
    if (demo && rank == 0) {
        char path[512];
        snprintf(path, sizeof path, "%s/heat-checkpoint.dat", dir);
        unlink(path);
        rmdir(dir);
    }
    MPI_Finalize();
    return status;
}
