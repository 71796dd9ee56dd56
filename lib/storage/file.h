/* SPDX-License-Identifier: BSD-3-Clause */
/* The file or block device behind a storage window. */
#ifndef MPIX_STORAGE_FILE_H
#define MPIX_STORAGE_FILE_H

#include "config.h"

#include <sys/types.h>

#include <sys/stat.h>

typedef struct mpix_storage_file {
    int fd;             /* -1 when closed */
    int created;        /* this allocation created it: removed if the allocation fails */
    int block_device;
    long long device, inode;
    long long original_size; /* of a file that existed: restored if the allocation fails */
    char path[PATH_MAX];
} mpix_storage_file;

#define MPIX_STORAGE_FILE_CLOSED { -1, 0, 0, 0, 0, -1, "" }

/* Open config->filename read-write, creating it with config->file_perm if missing.
 * Refused, with an MPIX_ERRKIND_STORAGE_IO code naming the path: a symbolic link, a file
 * without any write permission bit, anything but a regular file or block device, and in
 * a directory that anyone may write to (such as /tmp), a file another user owns. */
int mpix_storage_file_open(const mpix_storage_config *config, mpix_storage_file *file);

/* Open or create @path (mode @mode) for mpix's own use, under the same rules as a storage
 * file, locked whole against other windows. *fd and *status receive it. */
int mpix_storage_file_open_private(const char *path, int mode, int *fd, struct stat *status);

/* Claim [offset, offset + length) of the file for this window (an open-file-description
 * lock): another window on overlapping bytes, in any process, is an error naming the
 * file. Released when the file closes. */
int mpix_storage_file_claim(mpix_storage_file *file, long long offset, long long length);

/* A failed allocation: give an existing file back its size. */
void mpix_storage_file_restore_size(mpix_storage_file *file);

/* Make sure [offset, offset + length) exists and its blocks are reserved, so a later
 * store cannot fail for lack of space (SIGBUS). Never shrinks the file. */
int mpix_storage_file_reserve(mpix_storage_file *file, long long offset, long long length);

/* Apply access_style as posix_fadvise advice on the range. */
void mpix_storage_file_advise(const mpix_storage_file *file, unsigned access_style, long long offset,
                              long long length);

/* Close; with @remove, unlink it (block devices are never unlinked). */
void mpix_storage_file_close(mpix_storage_file *file, int remove);

#endif
