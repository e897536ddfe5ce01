#!/usr/bin/env python3
"""torch SDPA (the FlashAttention backend) on the prefill shapes cuda-decode-bench times.

The reference the reference decoder's prefill attention is measured against, in the same run on the
same GPU: Qwen3-8B's attention (32 query heads over 8 KV heads, head_dim 128, bf16):

  full    one layer's causal attention over N tokens (is_causal, queries = keys = N): the
          engine's whole-prompt prefill, and what a 36-layer model's prefill attention takes
  chunk   a 512-row chunk at the end of an N-token sequence (lower-right causal), cuda-decode-bench
          --prefill-attention's shape (where torch's flash backend takes it; else said)

TFLOPS count 4 x head_dim flops per (query head, visible key) pair, as cuda-decode-bench does.
Usage: sdpa_prefill.py [--contexts 32768,131072] [--reps 5]
"""
import argparse
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from unfused_fp8_attention import timed  # this folder's CUDA-event timer

HEADS, KV_HEADS, D, LAYERS = 32, 8, 128, 36


def median_ms(fn, reps):
    return timed(fn, reps) / 1000.0  # timed: the median of reps CUDA-event timings, in us


def attention(q, k, v, **kw):
    # GQA through enable_gqa where the flash backend takes it (torch >= 2.5); K/V repeated otherwise.
    try:
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
    except (TypeError, RuntimeError):
        rep = q.shape[1] // k.shape[1]
        return F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1), **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--contexts", default="32768,131072", help="comma-separated token counts (default 32768,131072)")
    ap.add_argument("--reps", type=int, default=5, help="timed runs, the median reported (default 5)")
    args = ap.parse_args()
    try:
        contexts = [int(c) for c in args.contexts.split(",")]
    except ValueError:
        sys.exit(f"sdpa_prefill.py: --contexts takes comma-separated integers, not {args.contexts!r}")
    if not torch.cuda.is_available():
        sys.exit("sdpa_prefill.py: needs a CUDA device")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, SDPA flash backend, bf16, "
          f"{HEADS}/{KV_HEADS} heads, d {D}")
    print(f"{'shape':<8} {'context':>8} {'ms':>10} {'TFLOPS':>8} {'est_prefill_s':>14}")
    gen = torch.Generator(device="cuda").manual_seed(3)
    for n in contexts:
        k = torch.randn(1, KV_HEADS, n, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        v = torch.randn(1, KV_HEADS, n, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        full_pairs = HEADS * n * (n + 1) / 2
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            q = torch.randn(1, HEADS, n, D, device="cuda", dtype=torch.bfloat16, generator=gen)
            ms = median_ms(lambda: attention(q, k, v, is_causal=True), args.reps)
            tflops = 4 * D * full_pairs / (ms * 1e-3) / 1e12
            print(f"{'full':<8} {n:>8} {ms:>10.2f} {tflops:>8.1f} {LAYERS * ms * 1e-3:>14.1f}", flush=True)
            del q
            rows = min(512, n)
            q = torch.randn(1, HEADS, rows, D, device="cuda", dtype=torch.bfloat16, generator=gen)
            pairs = HEADS * sum(n - rows + r + 1 for r in range(rows))
            try:
                from torch.nn.attention.bias import causal_lower_right
                mask = causal_lower_right(rows, n)
                ms = median_ms(lambda: attention(q, k, v, attn_mask=mask), args.reps)
                tflops = 4 * D * pairs / (ms * 1e-3) / 1e12
                est = LAYERS * 4 * D * full_pairs / (tflops * 1e12)
                print(f"{'chunk':<8} {n:>8} {ms:>10.3f} {tflops:>8.1f} {est:>14.1f}", flush=True)
            except RuntimeError as e:
                print(f"{'chunk':<8} {n:>8}   the flash backend does not take it: {str(e).splitlines()[0][:100]}", flush=True)
            del q


if __name__ == "__main__":
    main()
