#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print every public identifier (MPIX_*, Wrapper_*) declared in the given headers,
one per line, so the build can check each against the mpi.h it compiles with."""
import re
import sys

names = set()
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as header:
        text = re.sub(r"/\*.*?\*/", " ", header.read(), flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
    names.update(re.findall(r"\b(?:MPIX_\w+|Wrapper_\w+)\b", text))
# Include guards and the headers' own spellings (a trailing underscore: MPIX_INLINE_)
# are ours alone and are defined, not declared, by the headers.
for name in sorted(names):
    if not name.endswith("_H") and not name.endswith("_"):
        print(name)
