/* SPDX-License-Identifier: BSD-3-Clause */
/* Which pages of a range changed since the last look, found by comparing a 128-bit
 * digest of every page with the one taken last time.
 *
 * Reading the range costs about as much as writing 1/20th of it to a disk, takes no page
 * faults and sees every kind of store: the process's own, another process's one-sided
 * copy into the pages, a DMA into pinned memory. Where the kernel can list the pages
 * written (written_pages.h), only those are read. Two different pages share a digest with
 * probability 2^-128. */
#ifndef MPIX_STORAGE_PAGE_DIGEST_H
#define MPIX_STORAGE_PAGE_DIGEST_H

#include <stdint.h>

/* Digests one page into out[0..1]. */
typedef void mpix_page_digest_function(const char *page, long long page_bytes, uint64_t out[2]);

typedef struct mpix_page_digests {
    uint64_t (*digest)[2]; /* per page: the XXH3 128-bit digest at the last look */
    uint64_t zero[2];      /* the digest of a page of zeros */
    double pass_seconds;   /* time spent in passes over ranges (mpix_page_digests_changed) */
    long long pass_pages;  /* and the pages they read */
    mpix_page_digest_function *digest_page; /* the build for this processor */
    long long pages;
    long long page_bytes;
} mpix_page_digests;

/* Take the first digests of the @pages pages at @start. MPI_SUCCESS or MPI_ERR_NO_MEM. */
int mpix_page_digests_init(mpix_page_digests *digests, const char *start, long long pages, long long page_bytes);

/* The first digests of @pages pages that hold zeros (fresh anonymous memory), without
 * reading them: one page is digested. MPI_SUCCESS or MPI_ERR_NO_MEM. */
int mpix_page_digests_init_zeros(mpix_page_digests *digests, long long pages, long long page_bytes);

/* Compare pages [first, first + count) of the range at @start with their last digests:
 * the indices of the pages that changed go to @changed, in increasing order, and their
 * digests are renewed. Returns how many changed. */
long long mpix_page_digests_changed(mpix_page_digests *digests, const char *start, long long first, long long count,
                                    long long *changed);

/* The same for the pages listed in @pages (@count of them, increasing): only those are
 * read. */
long long mpix_page_digests_changed_among(mpix_page_digests *digests, const char *start, const long long *pages,
                                          long long count, long long *changed);

/* What reading and digesting a page costs in a pass over a range, in nanoseconds: as
 * measured in this object's passes (mpix_page_digests_changed), or 200 until a thousand
 * pages were timed. */
double mpix_page_digests_ns_per_page(const mpix_page_digests *digests);

/* Whether page @i's last digest is that of a page of zeros (reads nothing). */
int mpix_page_digests_was_zero(const mpix_page_digests *digests, long long i);

/* Whether page @i differs from its last digest, leaving the digest as it is. */
int mpix_page_digests_differs(const mpix_page_digests *digests, const char *start, long long i);

/* Renew the digests of every page (after the range was replaced wholesale). */
void mpix_page_digests_renew(mpix_page_digests *digests, const char *start);

/* The same for pages [first, first + count) only. */
void mpix_page_digests_renew_pages(mpix_page_digests *digests, const char *start, long long first, long long count);

void mpix_page_digests_free(mpix_page_digests *digests);

/* The XXH3-128 digest of one page, built for AVX2 (page_digest_avx2.c, x86-64 only). */
void mpix_page_digest_avx2(const char *page, long long page_bytes, uint64_t out[2]);

#endif
