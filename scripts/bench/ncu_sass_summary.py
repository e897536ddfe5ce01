#!/usr/bin/env python3
"""Where one kernel's stall samples go, from Nsight Compute's SASS source page
(`ncu -i REPORT --page source --csv --print-source sass`, as scripts/device/prefill-profile saves it,
gzipped or not): the stall reasons' shares of all samples, then per opcode its share of the samples,
of the `wait` (fixed-latency dependency) samples and of the executed warp instructions."""
import csv
import gzip
import re
import sys
from collections import Counter


def number(x):
    try:
        return float(x)
    except ValueError:
        return 0.0


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ncu_sass_summary.py ncu-prefill-sass.csv[.gz]")
    path = sys.argv[1]
    try:
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            rows = list(csv.reader(f))
    except (OSError, csv.Error) as e:
        sys.exit(f"ncu_sass_summary: cannot read {path}: {e}")
    header = next((i for i, r in enumerate(rows) if "Source" in r and "# Samples" in r), None)
    if header is None:
        sys.exit(f"ncu_sass_summary: {path} has no SASS source table (ncu --page source --csv --print-source sass)")
    cols = {name: i for i, name in enumerate(rows[header])}
    body = [r for r in rows[header + 1:] if len(r) == len(rows[header])]
    samples = sum(number(r[cols["# Samples"]]) for r in body)
    executed = sum(number(r[cols["Instructions Executed"]]) for r in body)
    if samples == 0:
        sys.exit(f"ncu_sass_summary: {path} holds no stall samples")
    totals = {c: sum(number(r[cols[c]]) for r in body) for c in cols if c.startswith("stall_") and "(Not Issued)" not in c}
    reasons = sorted(totals, key=lambda c: -totals[c])
    print(f"{len(body)} instructions, {samples:.0f} samples, {executed:.3g} warp instructions executed")
    print("stall reasons (% of samples): " + ", ".join(f"{c[6:]} {100 * totals[c] / samples:.1f}" for c in reasons[:10]))
    by_op, wait, execs = Counter(), Counter(), Counter()
    for r in body:
        m = re.match(r"\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", r[cols["Source"]])
        op = m.group(1) if m else "?"
        by_op[op] += number(r[cols["# Samples"]])
        wait[op] += number(r[cols["stall_wait"]])
        execs[op] += number(r[cols["Instructions Executed"]])
    print(f"{'opcode':10s} {'samples%':>9s} {'wait%':>7s} {'executed%':>10s}")
    for op, v in by_op.most_common(16):
        print(f"{op:10s} {100 * v / samples:9.1f} {100 * wait[op] / samples:7.1f} {100 * execs[op] / max(executed, 1):10.1f}")


if __name__ == "__main__":
    main()
