/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/common helpers that modules stand on: failure agreement across ranks, keyvals
 * whose state dies with the object (handle reuse included), hwloc locality, libnuma
 * placement, verbose output, typed hint shorthands, kept scratch buffers. */
#include <mpix/mpix.h>
#include "mpix_test.h"

#include "common/agree.h"
#include "common/error.h"
#include "common/hint.h"
#include "common/keyval.h"
#include "common/numa.h"
#include "common/scratch.h"
#include "common/topo.h"
#include "common/verbose.h"
#include "mpix_config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int deleted_comm_states, deleted_type_states;

static int delete_comm_state(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    free(value);
    deleted_comm_states++;
    return MPI_SUCCESS;
}

static int delete_type_state(MPI_Datatype type, int keyval, void *value, void *extra)
{
    (void)type, (void)keyval, (void)extra;
    free(value);
    deleted_type_states++;
    return MPI_SUCCESS;
}

static mpix_keyval comm_state_keyval = MPIX_COMM_KEYVAL_INIT(delete_comm_state);
static mpix_keyval type_state_keyval = MPIX_TYPE_KEYVAL_INIT(delete_type_state);

static void test_agree(int rank, int size)
{
    CHECK(mpix_agree(MPI_COMM_WORLD, MPI_SUCCESS) == MPI_SUCCESS, "nobody failed");
    for (int failing = 0; failing < size; failing++) {
        int local = rank == failing || rank == size - 1
                        ? mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot open '/nonexistent/%d'", rank)
                        : MPI_SUCCESS;
        int rc = mpix_agree(MPI_COMM_WORLD, local);
        int first = failing < size - 1 ? failing : size - 1;
        CHECK(rc != MPI_SUCCESS, "failing rank %d: rank %d got success", failing, rank);
        CHECK(mpix_error_kind_of(rc) == MPIX_ERRKIND_STORAGE_IO, "kind %d", mpix_error_kind_of(rc));
        if (local != MPI_SUCCESS) {
            CHECK(rc == local, "a failing rank keeps its own code");
        } else {
            char expected[160];
            snprintf(expected, sizeof expected, "failed on rank %d: mpix: cannot open '/nonexistent/%d'", first,
                     first);
            CHECK(strstr(mpix_test_error_string(rc), expected), "'%s' lacks '%s'", mpix_test_error_string(rc),
                  expected);
        }
    }
    /* A plain MPI code elsewhere becomes an mpix PEER error on the others. */
    int rc = mpix_agree(MPI_COMM_WORLD, rank == 0 ? MPI_ERR_NO_MEM : MPI_SUCCESS);
    if (rank != 0)
        CHECK(mpix_error_kind_of(rc) == MPIX_ERRKIND_PEER, "peer kind %d", mpix_error_kind_of(rc));
    else
        CHECK(rc == MPI_ERR_NO_MEM, "own code");
}

static void test_keyvals(void)
{
    MPI_Comm dup;
    void *value;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK(mpix_comm_attr_get(dup, &comm_state_keyval, &value) == MPI_SUCCESS && value == NULL, "absent");
    mpix_comm_attr_set(dup, &comm_state_keyval, malloc(16));
    CHECK(mpix_comm_attr_get(dup, &comm_state_keyval, &value) == MPI_SUCCESS && value != NULL, "present");
    MPI_Comm dup_of_dup;
    MPI_Comm_dup(dup, &dup_of_dup);
    CHECK(mpix_comm_attr_get(dup_of_dup, &comm_state_keyval, &value) == MPI_SUCCESS && value == NULL,
          "state must not be copied to a duplicate");
    MPI_Comm_free(&dup_of_dup);
    MPI_Comm_free(&dup);
    CHECK(deleted_comm_states == 1, "comm state deleted %d times", deleted_comm_states);

    /* A freed type's handle is often handed out again: it must come back clean. */
    for (int round = 0; round < 4; round++) {
        MPI_Datatype type;
        MPI_Type_vector(3, 1, 2 + round, MPI_INT, &type);
        MPI_Type_commit(&type);
        CHECK(mpix_type_attr_get(type, &type_state_keyval, &value) == MPI_SUCCESS && value == NULL,
              "round %d: reused handle carries stale state", round);
        mpix_type_attr_set(type, &type_state_keyval, malloc(8));
        MPI_Type_free(&type);
        CHECK(deleted_type_states == round + 1, "type state deleted %d times", deleted_type_states);
    }
}

static void test_topology(void)
{
    mpix_locality where;
    CHECK(mpix_topo_locality(&where) == MPI_SUCCESS, "locality");
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK(where.pus == online, "pus %d, online %ld", where.pus, online);
    CHECK(where.cores >= 1 && where.cores <= where.pus, "cores %d pus %d", where.cores, where.pus);
#if MPIX_HAVE_HWLOC
    CHECK(where.numa_nodes >= 1 && where.numa_node >= 0 && where.numa_node < where.numa_nodes, "numa %d of %d",
          where.numa_node, where.numa_nodes);
    CHECK(where.packages >= 1 && where.package >= 0 && where.package < where.packages, "package %d of %d",
          where.package, where.packages);
#else
    CHECK(where.numa_node == -1 && where.package == -1, "no hwloc: unknown locality");
#endif

    size_t length = 4 * (size_t)sysconf(_SC_PAGESIZE);
    char *pages = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int placed = mpix_numa_place(pages, length, where.numa_os_index);
    memset(pages, 1, length);
#if MPIX_HAVE_NUMA && MPIX_HAVE_HWLOC
    if (mpix_numa_available()) {
        CHECK(placed == 1, "placement not applied");
        CHECK(mpix_numa_node_of(pages + length - 1) == where.numa_os_index, "page on node %d, want %d",
              mpix_numa_node_of(pages + length - 1), where.numa_os_index);
    }
#else
    CHECK(placed == 0, "placement reported without libnuma");
#endif
    munmap(pages, length);
}

static void test_verbose_and_hints(void)
{
    mpix_test_capture capture;
    char text[2048];
    mpix_test_capture_begin(&capture);
    unsetenv("MPIX_VERBOSE");
    mpix_verbose(MPI_INFO_NULL, "test", "hidden %d", 1);
    setenv("MPIX_VERBOSE", "1", 1);
    mpix_verbose(MPI_INFO_NULL, "test", "shown %d", 2);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_verbose", "false");
    mpix_verbose(info, "test", "hidden by info %d", 3);
    unsetenv("MPIX_VERBOSE");
    mpix_test_capture_end(&capture, text, sizeof text);
    CHECK(strstr(text, "test: shown 2") && !strstr(text, "hidden"), "verbose output '%s'", text);
    CHECK(strstr(text, "mpix[world rank "), "verbose prefix '%s'", text);

    int order = -1, unlink_file = -1;
    MPI_Info_set(info, "storage_alloc_order", "storage_first");
    CHECK(mpix_hint_keyword(info, MPIX_HINT_STORAGE_ORDER, &order) == MPI_SUCCESS && order == 1, "order %d",
          order);
    CHECK(mpix_hint_bool(info, MPIX_HINT_STORAGE_UNLINK, &unlink_file) == MPI_SUCCESS && unlink_file == 0,
          "the table's default (false) applies when absent: %d", unlink_file);
    mpix_hint_value value;
    CHECK(mpix_hint_get(info, MPIX_HINT_STORAGE_UNLINK, &value) == MPI_SUCCESS && !value.present && value.has_value &&
              strcmp(value.origin, "default") == 0,
          "origin of a default '%s'", value.origin);

    /* Every default in the table is a well-formed value of its setting. */
    for (int id = 0; id < MPIX_HINT_COUNT; id++) {
        const mpix_hint_spec *spec = mpix_hint_spec_of((mpix_hint_id)id);
        CHECK(!spec->default_value || mpix_hint_parse(spec, spec->default_value, &value), "default '%s' of %s",
              spec->default_value, spec->key);
        CHECK(spec->key && spec->module && spec->description, "setting %d is fully described", id);
    }
    /* A setting read from the environment only ignores an info key of its name. */
    MPI_Info_set(info, "mpix_zcopy_slots", "1");
    CHECK(mpix_hint_get(info, MPIX_HINT_ZCOPY_SLOTS, &value) == MPI_SUCCESS && !value.present && value.integer == 64,
          "environment-only setting read from info: %lld", value.integer);
    MPI_Info_delete(info, "mpix_zcopy_slots");
    /* MPIX_VERBOSE reports the settings in force, with where each came from. */
    mpix_test_capture_begin(&capture);
    setenv("MPIX_VERBOSE", "1", 1);
    setenv("MPIX_ZCOPY_EAGER_BYTES", "777", 1);
    mpix_hint_report(MPI_INFO_NULL, "zcopy");
    unsetenv("MPIX_ZCOPY_EAGER_BYTES");
    unsetenv("MPIX_VERBOSE");
    mpix_test_capture_end(&capture, text, sizeof text);
    CHECK(strstr(text, "setting mpix_zcopy=true (default)") &&
              strstr(text, "setting mpix_zcopy_eager_bytes=777 (environment variable MPIX_ZCOPY_EAGER_BYTES)"),
          "settings report '%s'", text);
    MPI_Info_set(info, "storage_alloc_factor", "0.75");
    CHECK(mpix_hint_get(info, MPIX_HINT_STORAGE_FACTOR, &value) == MPI_SUCCESS && value.present &&
              value.keyword == -1 && value.number == 0.75,
          "factor %g", value.number);
    MPI_Info_set(info, "access_style", "random,write_mostly");
    CHECK(mpix_hint_get(info, MPIX_HINT_ACCESS_STYLE, &value) == MPI_SUCCESS && value.keyword_mask == (1u << 6 | 1u << 3),
          "mask %#x", value.keyword_mask);
    MPI_Info_set(info, "file_perm", "0640");
    CHECK(mpix_hint_get(info, MPIX_HINT_FILE_PERM, &value) == MPI_SUCCESS && value.integer == 0640, "perm %llo",
          value.integer);
    MPI_Info_free(&info);
}

/* A scratch keeps the larger buffer given back and hands it out again; a second taker
 * while it is out gets one of its own; every buffer is writable to its size. */
static void test_scratch(void)
{
    mpix_scratch scratch = { NULL };
    char *small = mpix_scratch_take(&scratch, 100), *large = mpix_scratch_take(&scratch, 1 << 20);
    CHECK(small && large && small != large, "two takes: %p and %p", (void *)small, (void *)large);
    memset(small, 1, 100);
    memset(large, 2, 1 << 20);
    mpix_scratch_give(&scratch, large);
    mpix_scratch_give(&scratch, small);   /* smaller than the kept one: freed */
    char *again = mpix_scratch_take(&scratch, 4096);
    CHECK(again == large, "a take of 4096 bytes got %p, not the kept 1 MiB buffer %p", (void *)again, (void *)large);
    CHECK(again[(1 << 20) - 1] == 2, "the kept buffer's last byte changed");
    char *other = mpix_scratch_take(&scratch, 4096);
    CHECK(other && other != again, "a take while the buffer is out got %p", (void *)other);
    mpix_scratch_give(&scratch, other);
    mpix_scratch_give(&scratch, again);   /* larger: replaces the one kept */
    char *larger = mpix_scratch_take(&scratch, 2 << 20);
    CHECK(larger && larger != again, "a take above the kept size got the kept buffer");
    memset(larger, 3, 2 << 20);
    mpix_scratch_give(&scratch, larger);
    char *huge = mpix_scratch_take(&scratch, (size_t)MPIX_SCRATCH_KEEP_MAX + 1);
    CHECK(huge != NULL, "no buffer above the keep limit");
    mpix_scratch_give(&scratch, huge);    /* above the limit: freed, the 2 MiB one stays */
    CHECK(mpix_scratch_take(&scratch, 1) == larger, "the buffer above the keep limit was kept");
    mpix_scratch_give(&scratch, larger);
    mpix_scratch_release(&scratch);
    CHECK(atomic_load(&scratch.kept) == NULL, "a released scratch still keeps a buffer");
}

int main(int argc, char **argv)
{
    int rank, size;
    mpix_test_start(&argc, &argv, &rank, &size);
    test_agree(rank, size);
    test_keyvals();
    test_topology();
    test_verbose_and_hints();
    test_scratch();
    return mpix_test_finish("internal");
}
