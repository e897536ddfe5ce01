#!/usr/bin/env python3
"""Golden logits from Hugging Face transformers for `kvgate make-model` checkpoints.

The reference decoder's CPU path must match transformers (fp32) to 1e-4 relative on these. The
checkpoints are random-weight models that `kvgate make-model` writes deterministically, so the
goldens hold only the make-model arguments, the sha256 of the files transformers read, the token
ids and transformers' logits; tests/decoder-parity-test.cpp rebuilds each checkpoint and compares.

Two steps (transformers and torch are only needed for the second):

  # here: write the checkpoints the goldens are made from
  python3 scripts/device/make_goldens.py --make build/kvgate DIR
  # where torch + transformers are installed (the lent GPU machine; runs on its CPU in fp32)
  python3 make_goldens.py --models DIR --out decoder-parity.json

Then commit the JSON as tests/golden/decoder-parity.json.
"""
import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import time
import traceback

COMMON = ["--seed", "11", "--merges", "256"]

# name, make-model arguments, sequence length. Together they cover Llama and Qwen3 shapes, Qwen2's
# q/k/v bias, Mistral's sliding window, GQA and MQA, tied and untied embeddings, rope scaling
# default/linear/llama3/yarn in both config styles, bf16/fp16/fp32 weights, sharded safetensors,
# a padded vocabulary and head_dim != hidden / heads.
SPECS = [
    ("qwen3-gqa-tied-bf16",
     ["--arch", "qwen3", "--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2", "--head-dim", "16",
      "--intermediate", "128", "--dtype", "bf16"], 48),
    ("qwen3-yarn-mqa-untied-fp32",
     ["--arch", "qwen3", "--layers", "3", "--hidden", "64", "--heads", "4", "--kv-heads", "1", "--head-dim", "32",
      "--intermediate", "160", "--tie-embeddings", "false", "--rope-scaling", "yarn", "--rope-factor", "4",
      "--max-position", "1024", "--dtype", "fp32"], 192),
    ("qwen3-yarn-parameters-bf16",
     ["--arch", "qwen3", "--layers", "2", "--hidden", "96", "--heads", "6", "--kv-heads", "2", "--head-dim", "16",
      "--intermediate", "192", "--rope-scaling", "yarn", "--rope-factor", "8", "--max-position", "2048",
      "--rope-config", "parameters", "--rope-theta", "10000", "--dtype", "bf16"], 160),
    ("llama-llama3-gqa-bf16",
     ["--arch", "llama", "--layers", "2", "--hidden", "96", "--heads", "8", "--kv-heads", "2", "--head-dim", "12",
      "--intermediate", "192", "--rope-scaling", "llama3", "--rope-factor", "8", "--max-position", "512",
      "--dtype", "bf16"], 192),
    ("llama-linear-tied-fp16-sharded",
     ["--arch", "llama", "--layers", "3", "--hidden", "64", "--heads", "4", "--kv-heads", "4", "--head-dim", "16",
      "--intermediate", "128", "--tie-embeddings", "true", "--rope-scaling", "linear", "--rope-factor", "2",
      "--rope-config", "parameters", "--dtype", "fp16", "--shards", "3"], 64),
    ("qwen2-bias-untied-bf16",
     ["--arch", "qwen2", "--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2", "--head-dim", "16",
      "--intermediate", "128", "--dtype", "bf16"], 48),
    ("mistral-window-fp32",
     ["--arch", "mistral", "--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2", "--head-dim", "16",
      "--intermediate", "128", "--sliding-window", "16", "--dtype", "fp32"], 64),
    ("qwen3-wide-padded-vocab-bf16",
     ["--arch", "qwen3", "--layers", "4", "--hidden", "256", "--heads", "8", "--kv-heads", "2", "--head-dim", "64",
      "--intermediate", "768", "--vocab", "1024", "--dtype", "bf16"], 256),
]
GENERATE_PROMPT = 12   # greedy generation from the first 12 tokens ...
GENERATE_TOKENS = 16   # ... for 16 tokens, through transformers' KV cache
CHAT = [{"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is the access code for the north gate?"}]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def make(kvgate, root):
    for name, args, _ in SPECS:
        cmd = [kvgate, "make-model", *COMMON, *args, "--out", os.path.join(root, name)]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def golden(name, args, length, root):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d = os.path.join(root, name)
    files = sorted(f for f in os.listdir(d) if f.endswith(".safetensors") or f.endswith(".json"))
    model, info = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32, attn_implementation="eager",
                                                       output_loading_info=True)
    model.eval()
    tok = AutoTokenizer.from_pretrained(d)
    vocab_tok = len(tok)
    rng = random.Random(f"kvgate-golden/{name}")
    tokens = [rng.randrange(vocab_tok) for _ in range(length)]
    positions = sorted({0, length // 2, length - 2, length - 1})
    with torch.no_grad():
        logits = model(torch.tensor([tokens])).logits[0]
        rows = {str(p): [float(f"{x:.8g}") for x in logits[p].tolist()] for p in positions}
        # Greedy decoding through transformers' own cache, with the top-2 margin at each step.
        out = model(torch.tensor([tokens[:GENERATE_PROMPT]]), use_cache=True)
        past, generated, margins = out.past_key_values, [], []
        last = out.logits[0, -1]
        for _ in range(GENERATE_TOKENS):
            top = torch.topk(last, 2)
            generated.append(int(top.indices[0]))
            margins.append(float(top.values[0] - top.values[1]))
            out = model(torch.tensor([[generated[-1]]]), past_key_values=past, use_cache=True)
            past, last = out.past_key_values, out.logits[0, -1]
    chat_text = tok.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    return {
        "name": name,
        "make_model_args": COMMON + args,
        "files": {f: sha256(os.path.join(d, f)) for f in files},
        "loading_info": {k: sorted(str(x) for x in v) if isinstance(v, (list, set, tuple)) else str(v)
                         for k, v in info.items()},
        "tokens": tokens,
        "logits": rows,
        "generate": {"prompt_tokens": GENERATE_PROMPT, "tokens": generated, "top2_margins": margins},
        "chat": {"messages": CHAT, "text": chat_text, "ids": tok(chat_text, add_special_tokens=False)["input_ids"]},
    }


def run(root, out):
    import torch
    import transformers
    torch.manual_seed(0)
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    result = {"transformers": transformers.__version__, "torch": torch.__version__, "device": "cpu",
              "dtype": "float32", "attn_implementation": "eager", "made": time.strftime("%Y-%m-%d"),
              "models": [], "errors": {}}
    for name, args, length in SPECS:
        t0 = time.time()
        try:
            result["models"].append(golden(name, args, length, root))
            print(f"{name}: ok ({time.time() - t0:.1f} s)", flush=True)
        except Exception:  # keep the other models' goldens; the error is in the file and the log
            result["errors"][name] = traceback.format_exc()
            print(f"{name}: FAILED\n{traceback.format_exc()}", flush=True)
    with open(out, "w") as f:
        json.dump(result, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {out}: {len(result['models'])} models, {len(result['errors'])} errors", flush=True)
    return 0 if not result["errors"] else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", nargs=2, metavar=("KVGATE", "DIR"), help="write the checkpoints with kvgate make-model")
    ap.add_argument("--models", help="directory holding the checkpoints")
    ap.add_argument("--out", help="golden JSON to write")
    a = ap.parse_args()
    if a.make:
        make(*a.make)
        return 0
    if not (a.models and a.out):
        ap.error("give --make KVGATE DIR, or --models DIR --out FILE")
    return run(a.models, a.out)


if __name__ == "__main__":
    sys.exit(main())
