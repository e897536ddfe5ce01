#!/usr/bin/env python3
"""kvgate's tokenizer against Hugging Face `tokenizers`, on the same texts, in the same run.

Runs tests/bench/tokenizer_bench (the GSM8K train text as one string and as 7,473 documents
encoded one by one, and a 128K-token haystack), then HF tokenizers on exactly the texts it wrote,
single-threaded, and prints both throughputs and their ratio. It also checks that both produced
the same ids (an FNV-1a hash over the whole id sequence).

  .venv-tests/bin/python scripts/bench/tokenizer_vs_hf.py [--build build] [--tokenizer PATH] [--repeats 5]

Needs scripts/setup (the test venv with `tokenizers`) and a build of the tokenizer_bench target.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # HF: one thread, as kvgate's bench
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

try:
    from tokenizers import Tokenizer
    import tokenizers
except ImportError:
    sys.exit("tokenizer_vs_hf: HF tokenizers is missing: run scripts/setup, then use .venv-tests/bin/python")


def fnv1a(h, ids):
    for i in ids:
        h ^= i & 0xFFFFFFFF
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="CMake build folder holding tests/tokenizer_bench")
    ap.add_argument("--tokenizer", default="tests/data/tokenizers/qwen3/tokenizer.json")
    ap.add_argument("--data", default="tests/data")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    bench = os.path.join(args.build, "tests", "tokenizer_bench")
    if not os.access(bench, os.X_OK):
        sys.exit(f"tokenizer_vs_hf: {bench} not found: cmake --build {args.build} --target tokenizer_bench")
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([bench, "--tokenizer", args.tokenizer, "--data", args.data, "--repeats", str(args.repeats),
                              "--write-texts", tmp, "--json"], check=True, capture_output=True, text=True).stdout
        ours = json.loads(out)
        texts = {}
        for name in ours["corpora"]:
            with open(os.path.join(tmp, name + ".jsonl"), encoding="utf-8") as f:
                texts[name] = [json.loads(line) for line in f]

    t0 = time.perf_counter()
    Tokenizer.from_file(args.tokenizer)
    hf_load = time.perf_counter() - t0

    print(f"tokenizer: {args.tokenizer}; HF tokenizers {tokenizers.__version__}; single thread; best of {args.repeats}")
    print(f"load: kvgate {ours['load_seconds']:.3f} s, HF {hf_load:.3f} s")
    print(f"{'corpus':<15}{'bytes':>10}{'tokens':>9}  {'kvgate MB/s':>12}{'HF MB/s':>10}{'ratio':>8}   "
          f"{'cold kvgate':>12}{'cold HF':>9}{'ratio':>7}   {'kvgate ms':>10}{'HF ms':>8}  same ids")
    all_same = True
    for name, row in ours["corpora"].items():
        docs = texts[name]
        fresh = Tokenizer.from_file(args.tokenizer)
        t0 = time.perf_counter()
        encodings = [fresh.encode(d, add_special_tokens=False).ids for d in docs]
        cold = time.perf_counter() - t0
        warm = min(timed(fresh, docs) for _ in range(args.repeats))
        mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
        h = 1469598103934665603
        for ids in encodings:
            h = fnv1a(h, ids)
        same = h == row["ids_fnv1a"] and sum(len(i) for i in encodings) == row["tokens"]
        all_same = all_same and same
        print(f"{name:<15}{row['bytes']:>10}{row['tokens']:>9}  {row['warm_mb_per_s']:>12.1f}{mb / warm:>10.1f}"
              f"{row['warm_mb_per_s'] / (mb / warm):>7.2f}x   {row['cold_mb_per_s']:>12.1f}{mb / cold:>9.1f}"
              f"{row['cold_mb_per_s'] / (mb / cold):>6.2f}x   {row['warm_seconds'] * 1e3:>10.1f}{warm * 1e3:>8.1f}  "
              f"{'yes' if same else 'NO'}")
    if not all_same:
        sys.exit("tokenizer_vs_hf: kvgate and HF gave different ids")


def timed(tok, docs):
    t0 = time.perf_counter()
    for d in docs:
        tok.encode(d, add_special_tokens=False)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
