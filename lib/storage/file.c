/* SPDX-License-Identifier: BSD-3-Clause */
#include "file.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Checks on an open storage file (or log): what it is, who owns it, and that writing it
 * is allowed. MPI_SUCCESS or a code naming @path. */
static int check_opened(int fd, const char *path, int created, struct stat *status)
{
    if (fstat(fd, status) != 0)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot stat '%.200s': %s", path, strerror(errno));
    if (!S_ISBLK(status->st_mode) && !S_ISREG(status->st_mode))
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "'%.200s' is neither a regular file nor a block device", path);
    /* Root may open a read-only file for writing; a window on it would still overwrite
     * what its owner marked read-only, so refuse it for everyone. */
    if (!S_ISBLK(status->st_mode) && (status->st_mode & 0222) == 0)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "storage file '%.200s' is read-only (mode %04o)", path,
                          (int)(status->st_mode & 07777));
    /* In a directory anyone may write to, a file of another user may have been planted
     * there to make the window grow and overwrite it (as the kernel's protected_regular
     * refuses O_CREAT opens of such files). */
    if (!created && status->st_uid != geteuid()) {
        char directory[PATH_MAX];
        struct stat parent;
        snprintf(directory, sizeof directory, "%s", path);
        if (stat(dirname(directory), &parent) == 0 && (parent.st_mode & S_IWOTH))
            return mpix_error(MPIX_ERRKIND_STORAGE_IO,
                              "storage file '%.200s' belongs to user %d, not to this process's user %d, in a "
                              "directory anyone may write to (mode %04o): refused",
                              path, (int)status->st_uid, (int)geteuid(), (int)(parent.st_mode & 07777));
    }
    return MPI_SUCCESS;
}

/* Open @path read-write without following a symbolic link, creating it with @mode if it
 * is missing. *created tells which. */
static int open_no_follow(const char *path, int mode, int *fd, int *created)
{
    *created = 0;
    *fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_CREAT | O_EXCL, mode);
    if (*fd >= 0) {
        *created = 1;
        /* The umask must not narrow or widen what file_perm (or the 0600 default) asks. */
        fchmod(*fd, mode);
    } else if (errno == EEXIST) {
        *fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    }
    if (*fd >= 0)
        return MPI_SUCCESS;
    if (errno == ELOOP)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO,
                          "storage file '%.200s' is a symbolic link: refused (name the file it points to)", path);
    return mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot open storage file '%.200s': %s", path, strerror(errno));
}

int mpix_storage_file_open(const mpix_storage_config *config, mpix_storage_file *file)
{
    struct stat status;
    int rc;

    snprintf(file->path, sizeof file->path, "%s", config->filename);
    file->original_size = -1;
    rc = open_no_follow(file->path, config->file_perm, &file->fd, &file->created);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = check_opened(file->fd, file->path, file->created, &status);
    if (rc != MPI_SUCCESS) {
        mpix_storage_file_close(file, file->created);
        return rc;
    }
    file->block_device = S_ISBLK(status.st_mode);
    file->device = (long long)status.st_dev;
    file->inode = (long long)status.st_ino;
    if (!file->created)
        file->original_size = (long long)status.st_size;
    return MPI_SUCCESS;
}

int mpix_storage_file_open_private(const char *path, int mode, int *fd, struct stat *status)
{
    int created, rc = open_no_follow(path, mode, fd, &created);
    if (rc == MPI_SUCCESS)
        rc = check_opened(*fd, path, created, status);
    if (rc == MPI_SUCCESS && !S_ISREG(status->st_mode))
        rc = mpix_error(MPIX_ERRKIND_STORAGE_IO, "'%.200s' is not a regular file", path);
    if (rc == MPI_SUCCESS) {
        struct flock whole = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
        if (fcntl(*fd, F_OFD_SETLK, &whole) != 0)
            rc = mpix_error(MPIX_ERRKIND_STORAGE_IO, "'%.200s' is in use by another storage window", path);
    }
    if (rc != MPI_SUCCESS && *fd >= 0) {
        close(*fd);
        *fd = -1;
        if (created)
            unlink(path);
    }
    return rc;
}

int mpix_storage_file_claim(mpix_storage_file *file, long long offset, long long length)
{
    if (length <= 0)
        return MPI_SUCCESS;
    struct flock range = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)offset, .l_len = (off_t)length };
    if (fcntl(file->fd, F_OFD_SETLK, &range) == 0)
        return MPI_SUCCESS;
    if (errno == EAGAIN || errno == EACCES)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO,
                          "storage file '%.200s': bytes %lld to %lld are in use by another storage window",
                          file->path, offset, offset + length);
    return mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot lock bytes %lld to %lld of '%.200s': %s", offset,
                      offset + length, file->path, strerror(errno));
}

void mpix_storage_file_restore_size(mpix_storage_file *file)
{
    struct stat status;
    if (file->fd < 0 || file->created || file->block_device || file->original_size < 0)
        return;
    if (fstat(file->fd, &status) == 0 && (long long)status.st_size > file->original_size &&
        ftruncate(file->fd, (off_t)file->original_size) == 0)
        fsync(file->fd);
}

int mpix_storage_file_reserve(mpix_storage_file *file, long long offset, long long length)
{
    if (length <= 0)
        return MPI_SUCCESS;
    if (file->block_device) {
        unsigned long long device_bytes = 0;
        if (ioctl(file->fd, BLKGETSIZE64, &device_bytes) != 0)
            return mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot read the size of block device '%.200s': %s",
                              file->path, strerror(errno));
        if ((unsigned long long)(offset + length) > device_bytes)
            return mpix_error(MPIX_ERRKIND_STORAGE_IO,
                              "block device '%.200s' holds %llu bytes; the window needs %lld (offset %lld + %lld)",
                              file->path, device_bytes, offset + length, offset, length);
        return MPI_SUCCESS;
    }
    int error = posix_fallocate(file->fd, (off_t)offset, (off_t)length);
    if (error != 0)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot reserve %lld bytes at offset %lld of '%.200s': %s",
                          length, offset, file->path, strerror(error));
    return MPI_SUCCESS;
}

void mpix_storage_file_advise(const mpix_storage_file *file, unsigned access_style, long long offset,
                              long long length)
{
    int advice = POSIX_FADV_RANDOM;
    if (access_style & (MPIX_ACCESS_SEQUENTIAL | MPIX_ACCESS_READ_ONCE))
        advice = POSIX_FADV_SEQUENTIAL;
    else if (access_style & (MPIX_ACCESS_READ_MOSTLY | MPIX_ACCESS_REVERSE_SEQUENTIAL))
        advice = POSIX_FADV_NORMAL;
    posix_fadvise(file->fd, (off_t)offset, (off_t)length, advice);
    if (access_style & MPIX_ACCESS_READ_ONCE)
        posix_fadvise(file->fd, (off_t)offset, (off_t)length, POSIX_FADV_NOREUSE);
}

void mpix_storage_file_close(mpix_storage_file *file, int remove)
{
    if (file->fd >= 0)
        close(file->fd);
    file->fd = -1;
    if (remove && !file->block_device && file->path[0])
        unlink(file->path);
}
