/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory placement through libnuma; a no-op reporting 0 where libnuma is missing. */
#ifndef MPIX_COMMON_NUMA_H
#define MPIX_COMMON_NUMA_H

#include <stddef.h>

/* Place the pages of [address, address + length) on NUMA node @numa_os_index (an OS
 * index, as mpix_locality.numa_os_index). Returns 1 when the policy was applied, 0 when
 * this build or this kernel has no NUMA support. Pages already touched stay where they
 * are; call it before first touch. */
int mpix_numa_place(void *address, size_t length, int numa_os_index);

/* 1 when the pages were placed by libnuma and it can be asked (libnuma present). */
int mpix_numa_available(void);

/* NUMA node (OS index) holding the page at @address, -1 when unknown. */
int mpix_numa_node_of(void *address);

#endif
