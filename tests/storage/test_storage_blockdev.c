/* SPDX-License-Identifier: BSD-3-Clause */
/* Windows on a block device (argv[1], a 1 MiB loop device from with_loopdev.sh): ranks
 * naming the same device and offset get consecutive slots, synced data is on the
 * device, a device too small is an error naming its size, and unlink never removes it. */
#include <mpix/mpix.h>
#include "mpix_test.h"

int main(int argc, char **argv)
{
    int rank, ranks;
    MPI_Info info;
    MPI_Win win;
    unsigned char *base;
    long long slot = 64 << 10, offset = 4096;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    if (argc != 2) {
        fprintf(stderr, "usage: %s BLOCK_DEVICE\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *device = argv[1];
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", device);
    MPI_Info_set(info, "storage_alloc_offset", "4096");
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    for (int shared = 0; shared < 2; shared++) {
        int rc = shared ? MPIX_Win_allocate_shared(slot, 1, info, MPI_COMM_WORLD, &base, &win)
                        : MPIX_Win_allocate(slot, 1, info, MPI_COMM_WORLD, &base, &win);
        CHECK(rc == MPI_SUCCESS, "window on %s: %s", device, mpix_test_error_string(rc));
        if (rc != MPI_SUCCESS)
            continue;
        for (long long i = 0; i < slot; i++)
            base[i] = (unsigned char)(rank * 37 + i + shared);
        CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "sync");
        unsigned char *on_device = malloc(slot);
        CHECK(mpix_test_read_file(device, offset + rank * slot, on_device, slot) == 0 &&
                  memcmp(on_device, base, slot) == 0,
              "rank %d's slot is not on the device at %lld", rank, offset + rank * slot);
        free(on_device);
        MPIX_Win_free(&win);
        CHECK(mpix_test_file_exists(device), "storage_alloc_unlink removed the block device");
    }
    int rc = MPIX_Win_allocate(2 << 20, 1, info, MPI_COMM_WORLD, &base, &win);
    int error_class, io_class;
    MPI_Error_class(rc, &error_class);
    MPIX_Query_error_class(MPIX_ERRKIND_STORAGE_IO, &io_class);
    CHECK(error_class == io_class, "too-small device: rc %d", rc);
    if (rank == 0)
        CHECK(strstr(mpix_test_error_string(rc), "holds 1048576 bytes"), "too-small device: '%s'",
              mpix_test_error_string(rc));
    MPI_Info_free(&info);
    return mpix_test_finish("storage_blockdev");
}
