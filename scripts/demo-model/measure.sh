#!/usr/bin/env bash
# The model card's measurements, in one command: multicode (64 lines, 4 asked) at 4K/8K/16K and
# MRCR (2 asks) at 2K/4K/8K, with seed 1 (none of the training or held-out seeds), through kvgate's
# reference decoder with bf16 KV and each candidate format, then `kvgate compare` of each against
# bf16 on multicode. MRCR runs apart (compare refuses a task the baseline never scores): with bf16,
# and with the candidates only when bf16 scores above 0. kivi2 runs on the CPU (THREADS sequences at
# once), multicode only, as the v4 card measured it (its CUDA path, an fp32 materialization, is newer).
# Usage: measure.sh KVGATE MODEL_DIR OUT [DEVICE=cuda] [PER_BUCKET=32] [THREADS=$(nproc)]
# Writes OUT/tasks/*.jsonl, OUT/runs/<format>/, OUT/compare/<format>.json and OUT/summary.txt.
set -euo pipefail
kvgate=$1 model=$2 out=$3 device=${4:-cuda} per=${5:-32} threads=${6:-$(nproc)}
formats=(fp8_e4m3 int8_per_token_head int4_per_token_head q4_0 turboquant_3bit_nc kivi2)
mkdir -p "$out/tasks" "$out/runs" "$out/compare"
tok=$model/tokenizer.json
"$kvgate" gen multicode --out "$out/tasks/multicode.jsonl" --lengths 4096,8192 --lines 64 --ask 4 \
  --per-bucket "$per" --seed 1 --tokenizer "$tok" 2>/dev/null
"$kvgate" gen multicode --out "$out/tasks/multicode-16k.jsonl" --lengths 16384 --lines 64 --ask 4 \
  --per-bucket $(( (per + 1) / 2 )) --seed 1 --tokenizer "$tok" 2>/dev/null
"$kvgate" gen mrcr --out "$out/tasks/mrcr.jsonl" --lengths 2048,4096,8192 --needles 2 \
  --per-bucket $(( (per + 1) / 2 )) --seed 1 --tokenizer "$tok" 2>/dev/null
run() {  # FORMAT DEVICE TASKS NAME
  local concurrency=$threads; [[ $2 == cuda ]] && concurrency=64
  local t0=$SECONDS
  "$kvgate" run --backend reference --device "$2" --model-dir "$model" --kv-format "$1" --tasks "$3" \
    --out "$out/runs/$4" --label "$1" --concurrency "$concurrency" --max-tokens 1024 >"$out/runs/$4.log" 2>&1 ||
    { echo "run $4 failed:"; tail -5 "$out/runs/$4.log"; return 1; }
  echo "$4 ($1, $2): $(grep -E '^ +(multicode|mrcr):' "$out/runs/$4.log" | tr -s ' ' | paste -sd';') $(( SECONDS - t0 )) s"
}
# 1 when any result of the run scores above 0, else 0.
mrcr_scored() { python3 -c 'import json,sys; print(int(any((json.loads(l).get("score") or 0) > 0 for l in open(sys.argv[1]))))' "$1/results.jsonl"; }
{
  run bf16 "$device" "$out/tasks/multicode.jsonl" bf16
  run bf16 "$device" "$out/tasks/multicode-16k.jsonl" bf16-16k
  run bf16 "$device" "$out/tasks/mrcr.jsonl" bf16-mrcr
  mrcr_scored=$(mrcr_scored "$out/runs/bf16-mrcr")
  for f in "${formats[@]}"; do
    d=$device; [[ $f == kivi2 ]] && d=cpu
    run "$f" "$d" "$out/tasks/multicode.jsonl" "$f" || continue
    "$kvgate" compare "$out/runs/bf16" "$out/runs/$f" --json "$out/compare/$f.json" >"$out/compare/$f.txt" 2>&1 || true
    if [[ $d == "$device" && $mrcr_scored == 1 ]]; then run "$f" "$d" "$out/tasks/mrcr.jsonl" "$f-mrcr" || true; fi
  done
} | tee "$out/summary.txt"
python3 - "$out" "${formats[@]}" <<'EOF' | tee -a "$out/summary.txt"
import json, sys
out, formats = sys.argv[1], sys.argv[2:]
print("format | task | passed per bucket (cand) | passed (cand / bf16) | mean score (cand / bf16) | lost / gained | McNemar exact p | ratio [95% lcb] | verdict")
for f in formats:
    try:
        c = json.load(open(f"{out}/compare/{f}.json"))
    except OSError:
        print(f"{f}: no comparison"); continue
    for t in c["pairs"][0]["tasks"]:
        fl, r = t["flips"], t["ratio"]
        est = "-" if r["estimate"] is None else f"{r['estimate']:.3f}"
        lcb = "-" if r["lcb"] is None else f"{r['lcb']:.3f}"
        per = ", ".join(f"{b['bucket']}: {b['candidate']['passes']}/{b['candidate']['results']}" for b in t["buckets"])
        print(f"{f} | {t['task']} | {per} | {t['candidate']['passes']}/{t['candidate']['results']} / "
              f"{t['reference']['passes']}/{t['reference']['results']} | "
              f"{t['candidate']['score_mean']:.3f} / {t['reference']['score_mean']:.3f} | {fl['lost']} / {fl['gained']} | "
              f"{fl['mcnemar']['exact']:.2g} | {est} [{lcb}] | {t['verdict']}")
EOF
