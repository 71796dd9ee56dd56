/* SPDX-License-Identifier: BSD-3-Clause */
/* What the first store into a write-protected page costs on this machine, measured once
 * per process: it decides whether a logged window's syncs track written pages or read
 * every page. The kernel resolves the fault by itself (asynchronous userfaultfd), but its
 * price depends on the virtualization: 0.8-1 us on one VM, about 15 us on a guest whose
 * page tables the hypervisor shadows in software (PVM), where a sync tracking 10% of a
 * 64 MiB window cost 35 ms and reading every page 13 ms. */
#ifndef MPIX_STORAGE_STORE_FAULT_H
#define MPIX_STORAGE_STORE_FAULT_H

/* Nanoseconds per first store into a tracked page: the cheapest of three rounds of 64
 * stores into 4 KiB pages, on the first call (0.2-3 ms), or the testing setting
 * mpix_storage_store_fault_ns; 0 where the kernel cannot track written pages, MPI is not
 * running or the setting is malformed. */
double mpix_storage_store_fault_ns(void);

#endif
