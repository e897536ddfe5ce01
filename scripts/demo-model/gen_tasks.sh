#!/usr/bin/env bash
# The demo model's data recipe: kvgate's own generators (filler prose, niah, multicode, mrcr) at
# 1K-16K tokens, exact lengths in the demo tokenizer, fixed seeds. Training and held-out trials use
# different seeds. Usage: gen_tasks.sh KVGATE TOKENIZER_DIR OUT_DIR
set -euo pipefail
kvgate=$1 tok=$2/tokenizer.json out=$3
mkdir -p "$out/train" "$out/eval" "$out/eval-mrcr"
g() { "$kvgate" gen "$@" --tokenizer "$tok" --threads 2 >/dev/null 2>"$out/gen.log.tmp" || { cat "$out/gen.log.tmp"; exit 2; }; }
# multicode: LENGTH LINES ASK TRIALS SEED
mc() { g multicode --out "$out/train/mc-$1-$2-$3.jsonl" --lengths "$1" --lines "$2" --ask "$3" --per-bucket "$4" --seed "$5"; }
niah() { g niah --out "$out/train/niah-$1.jsonl" --lengths "$1" --per-bucket "$2" --seed "$3"; }
# mrcr: LENGTH TRIALS SEED NEEDLES (asks per conversation, cycled)
mrcr() { g mrcr --out "$out/train/mrcr-$1.jsonl" --lengths "$1" --per-bucket "$2" --seed "$3" --needles "$4"; }
mc 1024 16 4 1500 1001;  mc 1024 24 8 1500 1002;  niah 1024 500 1003
mc 2048 32 4 750 2001;   mc 2048 40 8 750 2002;   niah 2048 250 2003
mc 4096 64 4 500 4001;   mc 4096 96 16 500 4002;  niah 4096 120 4003
mc 8192 64 4 250 8001;   mc 8192 96 16 250 8002;  niah 8192 60 8003
mc 16384 64 4 150 16001; mc 16384 96 16 150 16002; niah 16384 30 16003
# Since v2 (not in v1's data): 1K haystacks with every line asked. train_on_device.sh also strips
# the prose from every multicode trial here for v3's warm-up (make_data.py --strip-prose).
mc 1024 16 16 1500 1004
# Since v4: MRCR conversations, about 12% of each bucket's trials. None at 1K: with this tokenizer
# the shortest MRCR conversation (the examples, two asks, their replies) needs about 1.5K tokens,
# and more than 2 asks do not fit in 2K.
mrcr 2048 240 2004 2; mrcr 4096 150 4004 2,4,8; mrcr 8192 75 8004 2,4,8; mrcr 16384 45 16004 2,4,8
# Held out: the measured configuration (64 lines, 4 asked; fewer lines where they would not fit).
g multicode --out "$out/eval/mc-short.jsonl" --lengths 1024 --lines 16 --ask 4 --per-bucket 32 --seed 9001
g multicode --out "$out/eval/mc-2k.jsonl" --lengths 2048 --lines 32 --ask 4 --per-bucket 32 --seed 9002
g multicode --out "$out/eval/mc-long.jsonl" --lengths 4096,8192,16384 --lines 64 --ask 4 --per-bucket 32 --seed 9003
# Held out MRCR (train.py --mrcr-eval; kept apart so the multicode evaluations stay comparable).
g mrcr --out "$out/eval-mrcr/mrcr-2k.jsonl" --lengths 2048 --per-bucket 16 --seed 9004 --needles 2
g mrcr --out "$out/eval-mrcr/mrcr-long.jsonl" --lengths 4096,8192 --per-bucket 16 --seed 9005 --needles 2,4,8
rm -f "$out/gen.log.tmp"
