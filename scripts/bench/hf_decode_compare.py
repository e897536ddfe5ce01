#!/usr/bin/env python3
"""Greedy decode throughput of Hugging Face transformers on a random Qwen3-8B-shaped model, the
reference the CUDA decoder is compared with (issue #12: kvgate >= 20x HF at the same shape).

Runs on the lent GPU machine (torch + transformers installed, no network): the model is built from
a config (no download), on the GPU in bf16 (weights initialised there, so no slow CPU init), with
transformers' defaults otherwise: SDPA attention and the cache generate() picks by default (printed:
DynamicCache in transformers 5). Same shape as cuda-decode-bench's end-to-end section: prompts of
--context random tokens per sequence, batch 1 and 32. Decode time per step is taken as
(time of generate(1 + N new tokens) - time of generate(1 new token)) / N, so the prefill cancels.
With --kvgate-log (cuda-decode-bench's output from the same machine) the table shows kvgate's
tokens/s beside HF's and the ratio.

  python3 scripts/bench/hf_decode_compare.py [--context 2048] [--batches 1,32] [--steps 24]
                                             [--kvgate-log bench.txt]
"""
import argparse
import re
import sys
import time

import torch
import transformers
from transformers import Qwen3Config, Qwen3ForCausalLM


def qwen3_8b_config():
    # Qwen/Qwen3-8B's config.json shape (as tests/bench/cuda_decode_bench.cpp's qwen3_8b()).
    return Qwen3Config(
        hidden_size=4096,
        intermediate_size=12288,
        num_hidden_layers=36,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        vocab_size=151936,
        max_position_embeddings=40960,
        rms_norm_eps=1e-6,
        rope_theta=1000000.0,
        tie_word_embeddings=False,
        hidden_act="silu",
        attn_implementation="sdpa",
    )


def timed_generate(model, ids, new_tokens):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = model.generate(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        max_new_tokens=new_tokens,
        min_new_tokens=new_tokens,
        do_sample=False,
        pad_token_id=0,
        return_dict_in_generate=True,
    )
    torch.cuda.synchronize()
    return time.perf_counter() - t0, out


def kvgate_rows(path):
    """(batch -> (context, tokens/s)) of cuda-decode-bench's bf16 decode rows (kv batch context graphs
    gemv ms/step tokens/s ...): the fastest configuration measured at each batch."""
    rows = {}
    if not path:
        return rows
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^bf16\s+(\d+)\s+(\d+)\s+(?:on|off)\s+\S+\s+([\d.]+)\s+([\d.]+)\s", line)
        if m and float(m.group(4)) > rows.get(int(m.group(1)), (0, 0.0))[1]:
            rows[int(m.group(1))] = (int(m.group(2)), float(m.group(4)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--context", type=int, default=2048, help="prompt tokens per sequence (the cached tokens)")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--steps", type=int, default=24, help="decode steps timed (N)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kvgate-log", default="", help="cuda-decode-bench output of the same machine")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("hf_decode_compare: no CUDA device")
    torch.manual_seed(a.seed)
    cfg = qwen3_8b_config()
    t0 = time.perf_counter()
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = Qwen3ForCausalLM(cfg)  # weights initialised on the GPU (normal, std 0.02): seconds, not minutes
    torch.set_default_dtype(torch.float32)
    model.eval()
    model.generation_config.eos_token_id = None  # a random model must not stop early
    torch.cuda.synchronize()
    params = sum(p.numel() for p in model.parameters())
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {torch.cuda.get_device_name()}")
    print(f"random Qwen3-8B-shaped model: {params / 1e9:.2f} B parameters, "
          f"{next(model.parameters()).dtype}, attention {model.config._attn_implementation}, "
          f"built in {time.perf_counter() - t0:.1f} s")
    with torch.inference_mode():
        warm = torch.randint(0, cfg.vocab_size, (1, 64), device="cuda")
        _, out = timed_generate(model, warm, 4)
        print(f"cache generate() uses by default: {type(out.past_key_values).__name__}")
        kv = kvgate_rows(a.kvgate_log)
        print(f"\ngreedy decode, {a.context} cached tokens per sequence, {a.steps} steps timed")
        print(f"{'batch':>6} {'context':>8} {'prefill_s':>10} {'ms/step':>10} {'HF tok/s':>10} {'kvgate tok/s':>13} {'kvgate/HF':>10}")
        for b in [int(x) for x in a.batches.split(",")]:
            ids = torch.randint(0, cfg.vocab_size, (b, a.context), device="cuda")
            t1, _ = timed_generate(model, ids, 1)
            tn, out = timed_generate(model, ids, 1 + a.steps)
            assert out.sequences.shape == (b, a.context + 1 + a.steps), out.sequences.shape
            step = (tn - t1) / a.steps
            hf = b / step
            kctx, ktok = kv.get(b, (None, None))
            ktxt = f"{ktok:13.1f}" if ktok and kctx == a.context else f"{'-':>13}"
            ratio = f"{ktok / hf:9.1f}x" if ktok and kctx == a.context else f"{'-':>10}"
            print(f"{b:>6} {a.context:>8} {t1:>10.2f} {step * 1e3:>10.1f} {hf:>10.1f} {ktxt} {ratio}")
            sys.stdout.flush()
            del out
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
