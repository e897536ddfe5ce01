#!/usr/bin/env python3
"""The issue-12 reference points for decode attention, measured with torch on the GPU machine:
torch SDPA on a bf16 cache, and the unfused FP8 path (an fp8_e4m3 cache with a per-tensor scale,
dequantized to bf16 by a separate kernel, then SDPA), on the shape of cuda-decode-bench's attention
table: Qwen3-8B heads (32 q / 8 kv, head_dim 128), 131072 cached tokens per launch, one query per
sequence. Prints microseconds per launch and stored bytes / time, to set beside cuda-decode-bench.

Usage: unfused_fp8_attention.py [--contexts 8192,32768,131072] [--reps 20]
"""
import argparse

import torch
import torch.nn.functional as F


def timed(fn, reps):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    return sorted(times)[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--contexts", default="8192,32768,131072")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    torch.manual_seed(0)
    heads, kv_heads, d, total = 32, 8, 128, 131072
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(f"{'path':<26}{'context':>8}{'batch':>6}{'time_us':>10}{'bytes_MB':>10}{'TB/s':>8}")
    for ctx in (int(c) for c in a.contexts.split(",")):
        b = total // ctx
        q = torch.randn(b, heads, 1, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, kv_heads, ctx, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, kv_heads, ctx, d, device="cuda", dtype=torch.bfloat16)
        bf16_bytes = 2 * k.numel() * 2
        sdpa = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        t = timed(sdpa, a.reps)
        print(f"{'sdpa bf16':<26}{ctx:>8}{b:>6}{t:>10.1f}{bf16_bytes / 1e6:>10.1f}{bf16_bytes / t / 1e6:>8.3f}")
        ks, vs = 0.05, 0.02
        k8, v8 = (k / ks).to(torch.float8_e4m3fn), (v / vs).to(torch.float8_e4m3fn)
        del k, v
        fp8_bytes = 2 * k8.numel()

        def unfused():
            kd = k8.to(torch.bfloat16) * ks
            vd = v8.to(torch.bfloat16) * vs
            return F.scaled_dot_product_attention(q, kd, vd, enable_gqa=True)

        t = timed(unfused, a.reps)
        print(f"{'unfused fp8_e4m3 + sdpa':<26}{ctx:>8}{b:>6}{t:>10.1f}{fp8_bytes / 1e6:>10.1f}{fp8_bytes / t / 1e6:>8.3f}")
        del k8, v8
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
