#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The settings tables of the documentation are mpix-settings' output: every block
#   <!-- settings: MODULE -->  ...  <!-- /settings -->
# in docs/*.md must equal `mpix-settings --markdown MODULE` ("all" for every setting).
# Usage: settings_docs.sh MPIX_SETTINGS [--update]   (--update rewrites the blocks)
set -u
settings=$1 mode=${2:-check}
root=$(cd "$(dirname "$0")/../.." && pwd)
status=0 blocks=0
for doc in "$root"/docs/*.md; do
    grep -q "^<!-- settings: " "$doc" || continue
    python3 - "$settings" "$doc" "$mode" <<'PY' || status=1
import re, subprocess, sys
settings, doc, mode = sys.argv[1:]
text = open(doc, encoding="utf-8").read()
def table(module):
    args = [settings, "--markdown"] + ([] if module == "all" else [module])
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout
pattern = re.compile(r"(<!-- settings: (\w+) -->\n)(.*?)(<!-- /settings -->)", re.S)
stale = []
def replace(match):
    wanted = table(match.group(2))
    if match.group(3) != wanted:
        stale.append(match.group(2))
    return match.group(1) + wanted + match.group(4)
updated = pattern.sub(replace, text)
if mode == "--update":
    open(doc, "w", encoding="utf-8").write(updated)
elif stale:
    print(f"{doc}: settings table of {', '.join(stale)} differs from mpix-settings --markdown; "
          "run tests/common/settings_docs.sh <build>/mpix-settings --update")
    sys.exit(1)
print(f"{doc}: {len(pattern.findall(text))} settings table(s) checked")
PY
    blocks=$((blocks + 1))
done
[ "$blocks" -gt 0 ] || { echo "no settings tables found in docs/"; exit 1; }
exit $status
