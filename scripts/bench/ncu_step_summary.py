#!/usr/bin/env python3
"""Per-kernel time of one decode step from `ncu --csv --metrics gpu__time_duration.sum` output
(cuda-decode-bench --ncu-step, scripts/device/step-profile): kernels grouped by name, with count,
total and mean microseconds, and the sum over the step. Reads the CSV rows from stdin or a file;
other lines (the bench's own output, ==PROF== messages) are skipped."""
import csv
import re
import sys
from collections import OrderedDict


def short(name):
    # "void kvgate::kernels::cuda::<unnamed>::gemv_kernel<1, (GemvInput)2, ...>(GemvArgs)" -> "gemv_kernel<1, 2, ...>"
    name = re.sub(r"\([^()]*\)$", "", name)  # the parameter list
    name = re.sub(r"\((?:kvgate::)?[\w:]+\)", "", name)  # enum casts
    name = re.sub(r"^void ", "", name)
    name = re.sub(r"^[\w:]*(?:\(anonymous namespace\)|<unnamed>)::", "", name)  # kvgate's kernels
    return name[:90]


def main():
    src = open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin
    lines = [l for l in src if l.startswith('"')]
    if not lines:
        sys.exit("ncu_step_summary: no CSV rows (was the bench run with --ncu-step under ncu --csv?)")
    rows = list(csv.DictReader(lines))
    groups = OrderedDict()  # kernel name -> [launches, microseconds]
    count = 0
    total = 0.0
    for r in rows:
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        us = float(r["Metric Value"].replace(",", "")) / 1e3  # --print-units base: nanoseconds
        g = groups.setdefault(short(r["Kernel Name"]), [0, 0.0])
        g[0] += 1
        g[1] += us
        count += 1
        total += us
    print(f"{count} kernels, {total:.1f} us of kernel time in all")
    print(f"{'kernel':<92} {'count':>6} {'total_us':>10} {'mean_us':>9}")
    for k, (n, t) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        print(f"{k:<92} {n:>6} {t:>10.1f} {t / n:>9.2f}")


if __name__ == "__main__":
    main()
