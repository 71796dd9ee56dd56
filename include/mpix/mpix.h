/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mpix/mpix.h
 * @brief Umbrella header: every mpix module plus the version macros.
 *
 * mpix is a C11 library of MPIX_ extensions layered on the standard MPI-3.1 API only.
 * Include this one header, link with `pkg-config --libs mpix`, and call MPIX_* after
 * MPI_Init, or, in a program of MPI-4 sessions alone, on communicators made from a
 * session's process sets (see @ref sessions "mpix/common.h"). Every MPIX_ function
 * returns an MPI error code and, on failure, calls the error handler of the object
 * involved, exactly as MPI does.
 */
#ifndef MPIX_MPIX_H
#define MPIX_MPIX_H

#include <mpix/version.h>
#include <mpix/common.h>
#include <mpix/storage.h>
#include <mpix/spin.h>
#include <mpix/hy.h>
#include <mpix/zcopy.h>
#include <mpix/guard.h>

#endif
