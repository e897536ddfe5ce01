#!/usr/bin/env python3
"""The reference decoder's prefill table (issue item 2's columns) from one GPU call's logs: per KV
format, the prefill attention's TFLOPS at each context against torch SDPA's (scripts/bench/
sdpa_prefill.py: its chunk and full-causal rows), the chunk's us a launch, and each whole prefill's
seconds and trials an hour (cuda-decode-bench --prefill-attention and --prefill), with the 128K
target: <= 12 s for bf16 and the fp8 formats, <= 18 s (1.5x) for the others.

    prefill_table.py LOG... [--before LOG...]

Rows are read from anywhere in the logs, so a call's whole output can be given as it came back.
Lines after a header ("== ..." or "## ...") that names old-bench or main-bench, up to the next
header, are the build before (an older build packed beside the new one, scripts/device/pack-binaries'
EXTRA), as are the --before logs; their values appear in parentheses. A value measured more than once
is the median of its runs. Prints a markdown table."""
import argparse
import re
import statistics
import sys

TARGET_TOKENS = 131072
OLD_HEADER = re.compile(r"^(==|##).*\b(old-bench|main-bench)\b")
NUM = r"[0-9]+(?:\.[0-9]+)?"
# cuda-decode-bench --prefill-attention: kv, kernel, context, us/launch, TFLOPS, est_prefill_s
CHUNK = re.compile(rf"^(\S+)\s+(\S*tensor_core\S*|generic|mma_sync|bf16x3\S*)\s+([0-9]+)\s+({NUM})\s+({NUM})\s+{NUM}\s*$")
# cuda-decode-bench --prefill: kv, kernel, tokens, chunk, batch, seconds, tokens/s, decode32_s, trials/h
WHOLE = re.compile(rf"^(\S+)\s+(\S*tensor_core\S*|generic|mma_sync|bf16x3\S*)\s+([0-9]+)\s+([0-9]+)\s+([0-9]+)\s+({NUM})\s+{NUM}\s+{NUM}\s+({NUM})\s*$")
# sdpa_prefill.py: shape, context, ms, TFLOPS, est_prefill_s
SDPA = re.compile(rf"^(full|chunk)\s+([0-9]+)\s+{NUM}\s+({NUM})\s+{NUM}\s*$")


def target_s(kv):
    """The 128K target: 12 s for bf16 and the fp8 formats, 1.5 x that for the others."""
    return 12.0 if kv == "bf16" or kv.startswith("fp8") else 18.0


class Runs:
    """Every measured value by key, for one build."""

    def __init__(self):
        self.chunk = {}  # (kv, context) -> [(us, tflops)]
        self.whole = {}  # (kv, tokens) -> [(seconds, trials/h)]
        self.sdpa = {}  # (shape, context) -> [tflops]

    @staticmethod
    def median(values, i=None):
        if not values:
            return None
        return statistics.median(v if i is None else v[i] for v in values)


def read(path, new, old, all_old):
    with open(path, encoding="utf-8", errors="replace") as f:
        in_old = all_old
        for line in f:
            line = line.rstrip("\n")
            if line.startswith(("==", "##")):
                in_old = all_old or bool(OLD_HEADER.match(line))
                continue
            runs = old if in_old else new
            if m := WHOLE.match(line):
                runs.whole.setdefault((m[1], int(m[3])), []).append((float(m[6]), float(m[7])))
            elif m := CHUNK.match(line):
                runs.chunk.setdefault((m[1], int(m[3])), []).append((float(m[4]), float(m[5])))
            elif m := SDPA.match(line):
                runs.sdpa.setdefault((m[1], int(m[2])), []).append(float(m[3]))


def fmt(x, digits):
    return "-" if x is None else f"{x:.{digits}f}"


def with_before(now, before, digits):
    return fmt(now, digits) + (f" ({fmt(before, digits)})" if before is not None else "")


def table(new, old):
    kvs = list(dict.fromkeys(kv for kv, _ in [*new.chunk, *new.whole]))  # in order of first appearance
    contexts = sorted({c for _, c in new.chunk})
    tokens = sorted({t for _, t in new.whole})
    head = ["kv"]
    head += [f"attention {c // 1024}K TFLOPS (of SDPA chunk / full)" for c in contexts]
    if contexts:
        head.append("chunk us/launch " + " / ".join(f"{c // 1024}K" for c in contexts) + (" (before)" if old.chunk else ""))
    for t in tokens:
        head += [f"{t // 1024}K prefill s" + (" (before)" if old.whole else ""), f"{t // 1024}K trials/h" + (" (before)" if old.whole else "")]
    if TARGET_TOKENS in tokens:
        head.append(f"target at {TARGET_TOKENS // 1024}K")
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    for kv in kvs:
        row = [kv]
        for c in contexts:
            tf = Runs.median(new.chunk.get((kv, c)), 1)
            shares = []
            for shape in ("chunk", "full"):
                ref = Runs.median(new.sdpa.get((shape, c)))
                shares.append(f"{100 * tf / ref:.0f}%" if tf is not None and ref else "-")
            row.append(f"{fmt(tf, 1)} ({' / '.join(shares)})")
        if contexts:
            now = " / ".join(fmt(Runs.median(new.chunk.get((kv, c)), 0), 0) for c in contexts)
            was = [Runs.median(old.chunk.get((kv, c)), 0) for c in contexts]
            row.append(now + (f" ({' / '.join(fmt(w, 0) for w in was)})" if any(w is not None for w in was) else ""))
        for t in tokens:
            row.append(with_before(Runs.median(new.whole.get((kv, t)), 0), Runs.median(old.whole.get((kv, t)), 0), 2))
            row.append(with_before(Runs.median(new.whole.get((kv, t)), 1), Runs.median(old.whole.get((kv, t)), 1), 0))
        if TARGET_TOKENS in tokens:
            s = Runs.median(new.whole.get((kv, TARGET_TOKENS)), 0)
            limit = target_s(kv)
            row.append("-" if s is None else f"<= {limit:.0f} s: {'met' if s <= limit else 'missed'}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+", help="a GPU call's output (bench tables, SDPA's rows)")
    ap.add_argument("--before", nargs="*", default=[], help="logs of the build before (values in parentheses)")
    args = ap.parse_args()
    new, old = Runs(), Runs()
    for path, all_old in [(p, False) for p in args.logs] + [(p, True) for p in args.before]:
        try:
            read(path, new, old, all_old)
        except OSError as e:
            sys.exit(f"prefill_table: cannot read {path}: {e.strerror} (give the log a GPU call wrote)")
    if not new.chunk and not new.whole:
        sys.exit("prefill_table: no cuda-decode-bench rows (--prefill-attention or --prefill) in " + ", ".join(args.logs))
    print(table(new, old))


if __name__ == "__main__":
    main()
