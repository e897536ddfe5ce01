#!/usr/bin/env bash
# The demo tokenizer's training text and training, as models/demo's was made: kvgate niah and
# multicode trials (estimated lengths: the tokenizer does not exist yet) and GSM8K's training split.
# Usage: make_tokenizer.sh KVGATE GSM8K_TRAIN.jsonl OUT_DIR [PYTHON]
set -euo pipefail
kvgate=$1 gsm8k=$2 out=$3 py=${4:-python3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g() { "$kvgate" gen "$@" --threads 2 2>/dev/null; }
g multicode --out "$work/mc.jsonl" --seed 101 --lengths 4096 --per-bucket 40
g niah --out "$work/niah.jsonl" --seed 102 --lengths 4096 --per-bucket 40
g multicode --out "$work/mc1k.jsonl" --seed 103 --lengths 1024 --lines 16 --per-bucket 300
g niah --out "$work/niah1k.jsonl" --seed 104 --lengths 1024 --per-bucket 200
"$py" -c '
import json, sys
with open(sys.argv[2], "w") as o:
    for l in open(sys.argv[1]):
        d = json.loads(l); o.write(d["question"] + "\n" + d["answer"] + "\n\n")
' "$gsm8k" "$work/gsm8k.txt"
"$py" "$here/make_tokenizer.py" --out "$out" --vocab 4096 "$work/mc.jsonl" "$work/niah.jsonl" "$work/mc1k.jsonl" \
  "$work/niah1k.jsonl" "$work/gsm8k.txt"
