#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check that <mpix/guard_inject.h> and libmpix-guard.so (lib/guard/preload.c and
preload_large_count.c) guard the same MPI calls: every FENCED(name, ...) and exported
MPI_<name> wrapper of the preload library has its MPI_<name> macro in the header, and
the header defines no other, so compile-time and run-time injection behave alike.
Usage: guard_lists.py PRELOAD_C... INJECT_H"""
import re
import sys

preload = "".join(open(path, encoding="utf-8").read() for path in sys.argv[1:-1])
inject = open(sys.argv[-1], encoding="utf-8").read()
fenced = set(re.findall(r"^FENCED\((\w+),", preload, re.M))
guarded = set(re.findall(r"^EXPORT int MPI_(\w+)\(", preload, re.M))
guarded |= set(re.findall(r"^WINDOW_CREATED\((\w+),", preload, re.M))
macros = set(re.findall(r"^#define MPI_(\w+)\(", inject, re.M))
missing = sorted((fenced | guarded) - macros)
extra = sorted(macros - fenced - guarded)
if missing or extra:
    print("in libmpix-guard.so only:", " ".join(missing) or "-")
    print("in guard_inject.h only:", " ".join(extra) or "-")
    sys.exit(1)
print("%d calls guarded or fenced by both" % len(macros))
