/* SPDX-License-Identifier: BSD-3-Clause */
/* factor=auto: how much of a window stays in memory. */
#ifndef MPIX_STORAGE_NODE_MEMORY_H
#define MPIX_STORAGE_NODE_MEMORY_H

#include <mpi.h>

/* Bytes this node can give to windows now: @override when >= 0 (hint
 * mpix_storage_node_memory / MPIX_STORAGE_NODE_MEMORY), else the kernel's estimate of
 * available memory, bounded by what the job's memory cgroup still allows. */
long long mpix_storage_node_memory(long long override);

/* Collective over @node_comm: this rank's memory share of @node_budget when every rank
 * of the node asks for its request. Water-filling: no rank gets more than it asks,
 * and what small requests leave is split evenly among the larger ones. */
int mpix_storage_fair_share(MPI_Comm node_comm, long long request, long long node_budget, long long *fair_share);

#endif
