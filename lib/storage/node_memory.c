/* SPDX-License-Identifier: BSD-3-Clause */
#include "node_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A number from a one-value kernel file; -1 when absent or "max". */
static long long read_number(const char *path)
{
    long long value = -1;
    FILE *file = fopen(path, "r");
    if (file) {
        if (fscanf(file, "%lld", &value) != 1)
            value = -1;
        fclose(file);
    }
    return value;
}

/* MemAvailable counts reclaimable page cache, which a window may take over. */
static long long available_memory(void)
{
    char line[256];
    long long kib = -1;
    FILE *meminfo = fopen("/proc/meminfo", "r");
    while (meminfo && fgets(line, sizeof line, meminfo))
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1)
            break;
    if (meminfo)
        fclose(meminfo);
    if (kib >= 0)
        return kib * 1024;
    return (long long)sysconf(_SC_AVPHYS_PAGES) * sysconf(_SC_PAGESIZE);
}

/* What the job's memory cgroup (v2, else v1) still allows; -1 when unlimited. */
static long long cgroup_headroom(void)
{
    char line[512], path[1024];
    long long limit = -1, usage = -1;
    FILE *cgroups = fopen("/proc/self/cgroup", "r");
    while (cgroups && fgets(line, sizeof line, cgroups)) {
        char *group = strrchr(line, ':');
        if (!group)
            continue;
        group[strcspn(group, "\n")] = '\0';
        if (strncmp(line, "0::", 3) == 0) {
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", group + 1);
            limit = read_number(path);
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", group + 1);
            usage = read_number(path);
        } else if (strstr(line, ":memory:")) {
            snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", group + 1);
            limit = read_number(path);
            snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", group + 1);
            usage = read_number(path);
        }
        if (limit >= 0)
            break;
    }
    if (cgroups)
        fclose(cgroups);
    /* v1 reports "no limit" as a page-rounded LLONG_MAX */
    if (limit < 0 || limit > (1LL << 60))
        return -1;
    return usage >= 0 && usage < limit ? limit - usage : 0;
}

long long mpix_storage_node_memory(long long override)
{
    long long available, headroom;
    if (override >= 0)
        return override;
    available = available_memory();
    headroom = cgroup_headroom();
    return headroom >= 0 && headroom < available ? headroom : available;
}

static int compare_long_long(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int mpix_storage_fair_share(MPI_Comm node_comm, long long request, long long node_budget, long long *fair_share)
{
    int ranks, rc;
    long long mine[2] = { request, node_budget }, *all, *requests, budget = node_budget, share = 0;

    if ((rc = PMPI_Comm_size(node_comm, &ranks)) != MPI_SUCCESS)
        return rc;
    all = malloc(2 * ranks * sizeof *all);
    requests = malloc(ranks * sizeof *requests);
    if (!all || !requests) {
        free(all);
        free(requests);
        return MPI_ERR_NO_MEM;
    }
    if ((rc = PMPI_Allgather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, node_comm)) != MPI_SUCCESS) {
        free(all);
        free(requests);
        return rc;
    }
    for (int r = 0; r < ranks; r++) {
        requests[r] = all[2 * r];
        if (all[2 * r + 1] < budget)
            budget = all[2 * r + 1]; /* ranks may see slightly different figures: agree on the smallest */
    }
    qsort(requests, ranks, sizeof *requests, compare_long_long);
    for (int r = 0; r < ranks; r++) {
        share = budget / (ranks - r);
        if (requests[r] > share)
            break;
        budget -= requests[r];
        share = requests[r];
    }
    free(all);
    free(requests);
    *fair_share = request < share ? request : share;
    return MPI_SUCCESS;
}
