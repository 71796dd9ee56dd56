/* SPDX-License-Identifier: BSD-3-Clause */
#include "numa.h"
#include "mpix_config.h"

#if MPIX_HAVE_NUMA
#include <numa.h>

int mpix_numa_available(void) { return numa_available() >= 0; }

int mpix_numa_place(void *address, size_t length, int numa_os_index)
{
    if (numa_os_index < 0 || !mpix_numa_available())
        return 0;
    numa_tonode_memory(address, length, numa_os_index);
    return 1;
}

int mpix_numa_node_of(void *address)
{
    int status = -1;
    void *page = address;
    if (!mpix_numa_available() || numa_move_pages(0, 1, &page, NULL, &status, 0) != 0)
        return -1;
    return status;
}

#else

int mpix_numa_available(void) { return 0; }

int mpix_numa_place(void *address, size_t length, int numa_os_index)
{
    (void)address, (void)length, (void)numa_os_index;
    return 0;
}

int mpix_numa_node_of(void *address)
{
    (void)address;
    return -1;
}

#endif
