#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Render `mpix-bench --csv` output to PNG figures with gnuplot.

Usage: python3 bench/plot.py RESULTS.csv OUTDIR [--prefix NAME]

Rows are grouped into figures by family: the case name up to its first comma
("put latency, storage allocate" -> "put latency"), else up to its first space
("put + flush vs unlock" -> "put"). Each case is a line of median time against
bytes (log-log); each distinct baseline a dashed line. One PNG per
(subcommand, family): OUTDIR/NAME-SUBCOMMAND-FAMILY.png. Lines starting with '#'
(mpix-bench notes, the banner) are skipped. Needs gnuplot (Debian: gnuplot-nox).
"""
import csv
import os
import re
import subprocess
import sys
import tempfile
from collections import OrderedDict


def family_of(case):
    if "," in case:
        return case.split(",", 1)[0].strip()
    return case.split(" ", 1)[0]


def label_of(case, family):
    rest = case[len(family):].lstrip(", ").strip().split(" vs ", 1)[0]
    return rest or case


def baseline_of(case):
    return case.split(" vs ", 1)[1] if " vs " in case else "baseline"


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def read_rows(path):
    with open(path, newline="") as source:
        lines = [line for line in source if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines))


def plot(rows, outdir, prefix):
    figures = OrderedDict()
    for row in rows:
        key = (row["subcommand"], family_of(row["case"]))
        figures.setdefault(key, []).append(row)
    written = []
    with tempfile.TemporaryDirectory() as scratch:
        for (subcommand, family), group in figures.items():
            series = OrderedDict()
            for row in group:
                bytes_ = int(row["bytes"])
                if bytes_ <= 0:
                    continue
                label = label_of(row["case"], family)
                series.setdefault(("mpix", label), {})[bytes_] = float(row["mpix_median_us"])
                series.setdefault(("base", baseline_of(row["case"])), {})[bytes_] = float(row["baseline_median_us"])
            if not series:
                continue
            commands = []
            for index, ((kind, label), points) in enumerate(series.items()):
                data = os.path.join(scratch, "series%d.dat" % index)
                with open(data, "w") as out:
                    for bytes_ in sorted(points):
                        out.write("%d %g\n" % (bytes_, points[bytes_]))
                style = "linespoints lw 2" if kind == "mpix" else "lines dt 2 lw 1"
                title = label if kind == "mpix" else "baseline: " + label
                commands.append("'%s' using 1:2 with %s title '%s'" % (data, style, title.replace("'", "")))
            png = os.path.join(outdir, "%s-%s-%s.png" % (prefix, slug(subcommand), slug(family)))
            script = "\n".join([
                "set terminal pngcairo size 900,560 noenhanced",
                "set output '%s'" % png,
                "set title 'mpix-bench %s: %s'" % (subcommand, family.replace("'", "")),
                "set logscale xy",
                "set xlabel 'bytes'",
                "set ylabel 'median time (us)'",
                "set key outside right top",
                "set grid",
                "plot " + ", \\\n     ".join(commands),
            ])
            subprocess.run(["gnuplot"], input=script, text=True, check=True)
            written.append(png)
    return written


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    prefix = "mpix"
    if "--prefix" in argv:
        prefix = argv[argv.index("--prefix") + 1]
    os.makedirs(argv[2], exist_ok=True)
    rows = read_rows(argv[1])
    if not rows:
        sys.stderr.write("plot.py: no rows in %s\n" % argv[1])
        return 1
    for png in plot(rows, argv[2], prefix):
        print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
