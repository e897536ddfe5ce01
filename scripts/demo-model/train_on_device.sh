#!/usr/bin/env bash
# The one training command, as run on the GPU machine (python3 there has torch, transformers,
# tokenizers, safetensors): kvgate tasks -> token data -> train -> export into OUT, all inside
# LIMIT seconds (the device's per-command limit, less a margin).
# Usage: train_on_device.sh OUT TASKS.tgz TOKENIZER_DIR [LIMIT_S=540] [MINUTES=8] [train.py options...]
# v1: no options, no warm-up. v2: --lm-weight 0.1 --early-tokens-per-step 32768 (no warm-up: 0/32).
# v3: the prose-free warm-up, always on here, with the options in the model card.
# v4 (models/demo): v3 plus MRCR trials in the data (gen_tasks.sh) and the held-out MRCR evaluation.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1 tasks=$2 tok=$3 limit=${4:-540} minutes=${5:-8}
end_by=$(( $(date +%s) + limit ))
work=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader || true
tar xzf "$tasks" -C "$work"
python3 "$here/make_data.py" --tokenizer "$tok" --out "$work/train.npz" "$work"/tasks/train/*.jsonl
python3 "$here/make_data.py" --tokenizer "$tok" --out "$work/eval.npz" "$work"/tasks/eval/*.jsonl
# v4: held-out MRCR, evaluated apart (train.py --mrcr-eval).
python3 "$here/make_data.py" --tokenizer "$tok" --out "$work/mrcr-eval.npz" "$work"/tasks/eval-mrcr/*.jsonl
# v3: the same multicode trials without their prose, the warm-up phase (train.py --warm-data).
python3 "$here/make_data.py" --strip-prose --tokenizer "$tok" --out "$work/strip.npz" "$work"/tasks/train/mc-*.jsonl
python3 "$here/make_data.py" --strip-prose --tokenizer "$tok" --out "$work/strip-eval.npz" "$work"/tasks/eval/*.jsonl
python3 "$here/train.py" --data "$work/train.npz" --eval "$work/eval.npz" --tokenizer "$tok" --out "$out" \
  --warm-data "$work/strip.npz" --warm-eval "$work/strip-eval.npz" --mrcr-eval "$work/mrcr-eval.npz" \
  --minutes "$minutes" --end-by "$end_by" --check-transformers "${@:6}"
# Golden ids made with transformers' tokenizer and chat template (tests/demo-model-test.cpp).
timeout 60 python3 "$here/make_golden.py" --tokenizer "$tok" --out "$out/tokenizer_golden.json" \
  "$work/tasks/eval/mc-2k.jsonl" "$work/tasks/train/niah-1024.jsonl" || echo "golden ids: failed (made locally instead)"
