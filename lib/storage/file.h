/* The file or block device behind a storage window. */
#ifndef MPIX_STORAGE_FILE_H
#define MPIX_STORAGE_FILE_H

#include "config.h"

#include <sys/types.h>

typedef struct mpix_storage_file {
    int fd;             /* -1 when closed */
    int created;        /* this allocation created it: removed if the allocation fails */
    int block_device;
    long long device, inode;
    char path[PATH_MAX];
} mpix_storage_file;

#define MPIX_STORAGE_FILE_CLOSED { -1, 0, 0, 0, 0, "" }

/* Open config->filename read-write, creating it with config->file_perm if missing.
 * A file without any write permission bit, or anything but a regular file or block
 * device, is refused. MPI_SUCCESS or an MPIX_ERRKIND_STORAGE_IO code naming the path. */
int mpix_storage_file_open(const mpix_storage_config *config, mpix_storage_file *file);

/* Make sure [offset, offset + length) exists and its blocks are reserved, so a later
 * store cannot fail for lack of space (SIGBUS). Never shrinks the file. */
int mpix_storage_file_reserve(mpix_storage_file *file, long long offset, long long length);

/* Apply access_style as posix_fadvise advice on the range. */
void mpix_storage_file_advise(const mpix_storage_file *file, unsigned access_style, long long offset,
                              long long length);

/* Close; with @remove, unlink it (block devices are never unlinked). */
void mpix_storage_file_close(mpix_storage_file *file, int remove);

#endif
