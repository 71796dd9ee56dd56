/* SPDX-License-Identifier: BSD-3-Clause */
/* Symbols of the public API are the only ones the shared library exports; everything
 * else is built with -fvisibility=hidden and named with the lowercase mpix_ prefix. */
#ifndef MPIX_COMMON_API_H
#define MPIX_COMMON_API_H

#include "mpix_config.h"
#include <mpix/mpix.h>

#define MPIX_API __attribute__((visibility("default")))

#endif
