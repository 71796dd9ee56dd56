/* SPDX-License-Identifier: BSD-3-Clause */
/* A distributed hash table on storage windows: every rank owns a slice of the table in a
 * window mapped onto a file; inserts claim a slot with MPI_Compare_and_swap and store
 * the value with MPI_Put, from any rank, with no participation of the owner.
 * MPIX_Win_sync on every rank makes the table durable, and a new window on the same
 * files finds every key again.
 * Run: mpirun -np 2 ./rma_dht [DIR]  (with DIR, the table stays there: run again to
 * look the keys up after a restart; without, it shows both in one run). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, under -std=c11 too */
#include <mpix/mpix.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SLOTS_PER_RANK = 4096, KEYS_PER_RANK = 1500 };

/* 32-bit keys and values: Open MPI 4.1's osc/rdma crashes on a 64-bit compare-and-swap
 * that targets the calling process (docs/rma.md), which every owner of a slice does. */
typedef struct slot {
    int32_t key;   /* 0: empty */
    int32_t value;
} slot;

static int rank, ranks;

static uint32_t hash(int32_t key)
{
    uint32_t h = (uint32_t)key * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}

static int32_t key_of(int inserting_rank, int i) { return inserting_rank * 100003 + i + 1; }

static MPI_Win open_table(const char *dir, slot **table)
{
    char path[512];
    MPI_Info info;
    MPI_Win win;
    snprintf(path, sizeof path, "%s/dht-%d.table", dir, rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "access_style", "random");
    MPIX_Win_allocate(SLOTS_PER_RANK * sizeof(slot), sizeof(int32_t), info, MPI_COMM_WORLD, table, &win);
    MPI_Info_free(&info);
    return win;
}

/* Linear probing across the owner's slice; returns 0 when the slice is full. */
static int insert(MPI_Win win, int32_t key, int32_t value)
{
    uint32_t h = hash(key);
    int owner = (int)(h % (uint32_t)ranks);
    for (int probe = 0; probe < SLOTS_PER_RANK; probe++) {
        MPI_Aint index = (MPI_Aint)((h / (uint32_t)ranks + probe) % SLOTS_PER_RANK);
        int32_t empty = 0, found = -1;
        MPI_Compare_and_swap(&key, &empty, &found, MPI_INT32_T, owner, index * 2, win);
        MPI_Win_flush(owner, win);
        if (found == 0 || found == key) {
            MPI_Put(&value, 1, MPI_INT32_T, owner, index * 2 + 1, 1, MPI_INT32_T, win);
            MPI_Win_flush(owner, win);
            return 1;
        }
    }
    return 0;
}

static int32_t lookup(MPI_Win win, int32_t key)
{
    uint32_t h = hash(key);
    int owner = (int)(h % (uint32_t)ranks);
    for (int probe = 0; probe < SLOTS_PER_RANK; probe++) {
        MPI_Aint index = (MPI_Aint)((h / (uint32_t)ranks + probe) % SLOTS_PER_RANK);
        slot s;
        MPI_Get(&s, 2, MPI_INT32_T, owner, index * 2, 2, MPI_INT32_T, win);
        MPI_Win_flush(owner, win);
        if (s.key == key)
            return s.value;
        if (s.key == 0)
            return -1;
    }
    return -1;
}

int main(int argc, char **argv)
{
    char dir[256];
    slot *table;
    int demo = argc < 2, missing = 0, total_missing = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    /* The window's displacement unit is one int32_t so that key and value are
     * addressed as 2i and 2i+1; the table holds slots of two of them. */
    if (demo) {
        if (rank == 0 && !mkdtemp(strcpy(dir, "/tmp/mpix-dht-XXXXXX")))
            MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    } else {
        snprintf(dir, sizeof dir, "%s", argv[1]);
    }
    MPI_Win win = open_table(dir, &table);

    int already = 0;
    for (int i = 0; i < SLOTS_PER_RANK; i++)
        already += table[i].key != 0;
    MPI_Allreduce(MPI_IN_PLACE, &already, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (already == 0) {
        MPI_Win_lock_all(0, win);
        for (int i = 0; i < KEYS_PER_RANK; i++)
            missing += !insert(win, key_of(rank, i), key_of(rank, i) * 2);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        /* Durable on every rank; the exclusive lock keeps late writers out (there are none). */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        MPIX_Win_sync(win);
        MPI_Win_unlock(rank, win);
        if (rank == 0)
            printf("dht: %d ranks inserted %d keys with compare-and-swap into tables on %s\n", ranks,
                   ranks * KEYS_PER_RANK, dir);
    } else if (rank == 0) {
        printf("dht: found %d keys already in the tables on %s\n", already, dir);
    }
    if (demo) {
        /* Restart: a new window on the same files. */
        MPIX_Win_free(&win);
        win = open_table(dir, &table);
    }
    MPI_Win_lock_all(0, win);
    for (int r = 0; r < ranks; r++)
        for (int i = rank; i < KEYS_PER_RANK; i += ranks)
            missing += lookup(win, key_of(r, i)) != key_of(r, i) * 2;
    MPI_Win_unlock_all(win);
    MPI_Allreduce(&missing, &total_missing, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("dht: after %s, %d of %d keys looked up %s\n", demo ? "a restart" : "opening the files",
               ranks * KEYS_PER_RANK - total_missing, ranks * KEYS_PER_RANK,
               total_missing ? "correctly; some were LOST" : "with the right values");
    MPIX_Win_free(&win);
    if (demo) {
        char path[512];
        snprintf(path, sizeof path, "%s/dht-%d.table", dir, rank);
        unlink(path);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            rmdir(dir);
    }
    MPI_Finalize();
    return total_missing != 0;
}
