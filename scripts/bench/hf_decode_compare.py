#!/usr/bin/env python3
"""Greedy decode throughput of Hugging Face transformers on a random Qwen3-8B-shaped model, the
reference the CUDA decoder is compared with (kvgate >= 20x HF at the same shape).

Runs on the lent GPU machine (torch + transformers installed, no network): the model is built from
a config (no download), on the GPU in bf16 (weights initialised there, so no slow CPU init), with
transformers' defaults otherwise: SDPA attention and the cache generate() picks by default (printed:
DynamicCache in transformers 5). Same shape as cuda-decode-bench's end-to-end section: prompts of
--context random tokens per sequence, batch 1 and 32. A stopping criterion that never stops
stamps the time (after a device synchronize) at every generated token, so each decode step is timed
on its own. The table gives the median and the mean of the N steps after the first token; tokens/s
and the ratio come from the median (one run's steps at batch 1 ranged 61-525 ms). Timing
generate(1 + N) against generate(1) instead would carry the two prefills' jitter: 0.5 s of it is
30 ms a step at N = 16.
With --kvgate-log (cuda-decode-bench's output from the same machine) the table shows kvgate's
tokens/s beside HF's and the ratio.

  python3 scripts/bench/hf_decode_compare.py [--context 2048[,4096...]] [--batches 1,32] [--steps 24]
                                             [--kvgate-log bench.txt ...]

The product spec's HF figure (8.5 tokens/s at batch 1) was taken after a 4K prompt: --context 4096.
"""
import argparse
import re
import statistics
import sys
import time

import torch
import transformers
from transformers import Qwen3Config, Qwen3ForCausalLM, StoppingCriteria, StoppingCriteriaList


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


class StepClock(StoppingCriteria):
    """Never stops; records the time each token was generated (generate() calls it once a step)."""

    def __init__(self):
        self.stamps = []

    def __call__(self, input_ids, scores, **kwargs):
        torch.cuda.synchronize()
        self.stamps.append(time.perf_counter())
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)


def timed_generate(model, ids, new_tokens):
    """(seconds to the first token, the decode steps' seconds, generate()'s output)."""
    clock = StepClock()
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
        stopping_criteria=StoppingCriteriaList([clock]),
    )
    torch.cuda.synchronize()
    if len(clock.stamps) != new_tokens:  # a transformers version calling it differently: say so
        print(f"note: {len(clock.stamps)} step stamps for {new_tokens} new tokens")
    steps = [b - a for a, b in zip(clock.stamps, clock.stamps[1:])]
    return clock.stamps[0] - t0, steps, out


def kvgate_rows(paths):
    """((batch, context) -> tokens/s) of cuda-decode-bench's bf16 decode rows (kv batch context graphs
    gemv ms/step tokens/s ...) in the given logs: the fastest configuration measured at each."""
    rows = {}
    for path in paths:
        for line in open(path, encoding="utf-8"):
            m = re.match(r"^bf16\s+(\d+)\s+(\d+)\s+(?:on|off)\s+\S+\s+([\d.]+)\s+([\d.]+)\s", line)
            if not m:
                continue
            key, tok = (int(m.group(1)), int(m.group(2))), float(m.group(4))
            rows[key] = max(rows.get(key, 0.0), tok)
    return rows


def int_list(text):
    """argparse type: "2048" or "2048,4096" -> [2048, 4096], each a positive integer."""
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give positive integers separated by commas, e.g. 2048,4096")
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--context", type=int_list, default=[2048], help="prompt tokens per sequence (the cached tokens), or a list")
    ap.add_argument("--batches", type=int_list, default=[1, 32])
    ap.add_argument("--steps", type=int, default=24, help="decode steps timed (N)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kvgate-log", nargs="*", default=[], help="cuda-decode-bench output of the same machine")
    a = ap.parse_args()
    if a.steps < 1:
        ap.error("--steps: at least 1 decode step to time")
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
        _, _, out = timed_generate(model, warm, 4)
        print(f"cache generate() uses by default: {type(out.past_key_values).__name__}")
        kv = kvgate_rows(a.kvgate_log)
        print(f"\ngreedy decode, {','.join(map(str, a.context))} cached tokens per sequence, {a.steps} steps timed")
        print(f"{'batch':>6} {'context':>8} {'prefill_s':>10} {'ms/step':>10} {'mean ms':>8} {'min-max ms':>14} "
              f"{'HF tok/s':>10} {'kvgate tok/s':>13} {'kvgate/HF':>10}")
        for ctx in a.context:
            for b in a.batches:
                ids = torch.randint(0, cfg.vocab_size, (b, ctx), device="cuda")
                first, steps, out = timed_generate(model, ids, 1 + a.steps)
                assert out.sequences.shape == (b, ctx + 1 + a.steps), out.sequences.shape
                step, mean = statistics.median(steps), statistics.fmean(steps) * 1e3
                spread = f"{min(steps) * 1e3:.1f}-{max(steps) * 1e3:.1f}"
                hf = b / step
                ktok = kv.get((b, ctx))
                ktxt = f"{ktok:13.1f}" if ktok else f"{'-':>13}"
                ratio = f"{ktok / hf:9.1f}x" if ktok else f"{'-':>10}"
                print(f"{b:>6} {ctx:>8} {first:>10.2f} {step * 1e3:>10.1f} {mean:>8.1f} {spread:>14} {hf:>10.1f} {ktxt} {ratio}")
                sys.stdout.flush()
                del out
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
