#include "file.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

int mpix_storage_file_open(const mpix_storage_config *config, mpix_storage_file *file)
{
    struct stat status;

    snprintf(file->path, sizeof file->path, "%s", config->filename);
    file->created = 0;
    file->fd = open(file->path, O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, config->file_perm);
    if (file->fd >= 0) {
        file->created = 1;
        /* The umask must not narrow or widen what file_perm (or the 0600 default) asks. */
        fchmod(file->fd, config->file_perm);
    } else if (errno == EEXIST) {
        file->fd = open(file->path, O_RDWR | O_CLOEXEC);
    }
    if (file->fd < 0)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot open storage file '%.200s': %s", file->path,
                          strerror(errno));
    if (fstat(file->fd, &status) != 0) {
        int code = mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot stat '%.200s': %s", file->path, strerror(errno));
        mpix_storage_file_close(file, file->created);
        return code;
    }
    file->block_device = S_ISBLK(status.st_mode);
    file->device = (long long)status.st_dev;
    file->inode = (long long)status.st_ino;
    if (!file->block_device && !S_ISREG(status.st_mode)) {
        mpix_storage_file_close(file, 0);
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "'%.200s' is neither a regular file nor a block device",
                          file->path);
    }
    /* Root may open a read-only file for writing; a window on it would still overwrite
     * what its owner marked read-only, so refuse it for everyone. */
    if (!file->block_device && (status.st_mode & 0222) == 0) {
        int mode = (int)(status.st_mode & 07777);
        mpix_storage_file_close(file, 0);
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "storage file '%.200s' is read-only (mode %04o)", file->path,
                          mode);
    }
    return MPI_SUCCESS;
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
