#!/usr/bin/env python3
"""Partial-credit view of multicode runs for a model that does not pass yet: per asked code, the
digits in the right place, and whether the code written is one of the haystack's codes (copied from
some line) or the right one. Reads kvgate run directories and the tasks file they ran.

Usage: code_match.py TASKS.jsonl RUN_DIR...
"""
import json
import re
import sys


def main():
    tasks = {}
    for line in open(sys.argv[1]):
        t = json.loads(line)
        tasks[t["id"]] = t
    print(f"{'run':28s} {'trials':>6s} {'pass':>5s} {'codes right':>11s} {'copied a line':>13s} {'digits right':>12s}")
    for run in sys.argv[2:]:
        n = passed = codes = right = copied = digits = 0
        for line in open(run + "/results.jsonl"):
            r = json.loads(line)
            t = tasks[r["id"]]
            line_codes = {l["code"] for l in t["meta"]["lines"]}
            given = dict(re.findall(r"([A-Za-z]+-\d+): (\d{6})", r.get("response") or ""))
            n += 1
            passed += bool(r["passed"])
            for name, code in ((l["name"], l["code"]) for l in t["meta"]["lines"] if l["name"] in t["meta"]["asked"]):
                g = given.get(name, "")
                codes += 1
                right += g == code
                copied += g in line_codes
                digits += sum(a == b for a, b in zip(g, code))
        print(f"{run:28s} {n:6d} {passed:5d} {right / codes:11.3f} {copied / codes:13.3f} {digits / (6 * codes):12.3f}")


if __name__ == "__main__":
    main()
