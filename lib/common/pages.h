/* SPDX-License-Identifier: BSD-3-Clause */
/* Page sizes the library plans around. */
#ifndef MPIX_COMMON_PAGES_H
#define MPIX_COMMON_PAGES_H

/* A transparent huge page: the PMD size on x86-64 and on arm64 with 4 KiB pages. Storage
 * maps files in units of it so the page cache can hold 2 MiB folios (storage/tracking),
 * and zcopy folds reused message buffers into it (zcopy/collapse.c). */
#define MPIX_HUGE_PAGE_BYTES (2LL << 20)

#endif
