/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the calling process runs, through hwloc. Without hwloc the indices are -1 and
 * the counts come from the OS (one NUMA node, one package assumed unknown: 0). */
#ifndef MPIX_COMMON_TOPO_H
#define MPIX_COMMON_TOPO_H

typedef struct mpix_locality {
    int numa_node;      /* logical index of the calling process's NUMA node, -1 if unknown */
    int numa_os_index;  /* the same node's OS index (what libnuma takes), -1 if unknown */
    int package;        /* logical index of its package (socket), -1 if unknown */
    int numa_nodes;     /* NUMA nodes on this machine, 0 if unknown */
    int packages;       /* packages on this machine, 0 if unknown */
    int cores;          /* physical cores on this machine */
    int pus;            /* hardware threads on this machine */
    int bound;          /* 1 if the process is bound to a subset of the machine */
} mpix_locality;

/* Fills @locality for the calling process. An unbound process is located where it last
 * ran, which the OS may change. MPI_SUCCESS or an MPI error code (not raised). */
int mpix_topo_locality(mpix_locality *locality);

#endif
