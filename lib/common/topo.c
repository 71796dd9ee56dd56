/* SPDX-License-Identifier: BSD-3-Clause */
#include "topo.h"
#include "mpix_config.h"
#include "self_state.h"

#include <mpi.h>
#include <unistd.h>

#if MPIX_HAVE_HWLOC
#include <hwloc.h>

/* Discovering the topology takes milliseconds: do it once per MPI lifetime. */
static int topology_create(void **state)
{
    hwloc_topology_t topology;
    if (hwloc_topology_init(&topology) < 0)
        return MPI_ERR_OTHER;
    if (hwloc_topology_load(topology) < 0) {
        hwloc_topology_destroy(topology);
        return MPI_ERR_OTHER;
    }
    *state = topology;
    return MPI_SUCCESS;
}

static void topology_destroy(void *state) { hwloc_topology_destroy(state); }

static mpix_self_slot topology_slot = MPIX_SELF_SLOT_INIT(topology_create, topology_destroy);

/* The object of @type whose cpuset holds @where, preferring one that holds it whole. */
static hwloc_obj_t covering_object(hwloc_topology_t topology, hwloc_obj_type_t type, hwloc_const_cpuset_t where)
{
    hwloc_obj_t overlapping = NULL;
    for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(topology, type, NULL); obj;
         obj = hwloc_get_next_obj_by_type(topology, type, obj)) {
        if (hwloc_bitmap_isincluded(where, obj->cpuset))
            return obj;
        if (!overlapping && hwloc_bitmap_intersects(where, obj->cpuset))
            overlapping = obj;
    }
    return overlapping;
}

int mpix_topo_locality(mpix_locality *locality)
{
    hwloc_topology_t topology;
    hwloc_cpuset_t where;
    hwloc_obj_t numa, package;
    int rc = mpix_self_state(&topology_slot, (void **)&topology);

    if (rc != MPI_SUCCESS)
        return rc;
    where = hwloc_bitmap_alloc();
    if (!where)
        return MPI_ERR_NO_MEM;
    locality->bound = 0;
    if (hwloc_get_cpubind(topology, where, HWLOC_CPUBIND_PROCESS) == 0 &&
        !hwloc_bitmap_isequal(where, hwloc_topology_get_topology_cpuset(topology)))
        locality->bound = 1;
    else
        hwloc_get_last_cpu_location(topology, where, HWLOC_CPUBIND_PROCESS);

    numa = covering_object(topology, HWLOC_OBJ_NUMANODE, where);
    package = covering_object(topology, HWLOC_OBJ_PACKAGE, where);
    locality->numa_node = numa ? (int)numa->logical_index : -1;
    locality->numa_os_index = numa ? (int)numa->os_index : -1;
    locality->package = package ? (int)package->logical_index : -1;
    locality->numa_nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
    locality->packages = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE);
    locality->cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    locality->pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
    hwloc_bitmap_free(where);
    return MPI_SUCCESS;
}

#else

int mpix_topo_locality(mpix_locality *locality)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    locality->numa_node = locality->numa_os_index = locality->package = -1;
    locality->numa_nodes = locality->packages = 0;
    locality->cores = locality->pus = online > 0 ? (int)online : 1;
    locality->bound = 0;
    return MPI_SUCCESS;
}

#endif
