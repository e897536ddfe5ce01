#!/usr/bin/env python3
"""models/demo-outliers from models/demo: key outlier channels by a function-preserving rescaling.

In each chosen layer, the chosen rotary pairs (channel i and i + head_dim/2, which RoPE mixes) of
k_norm's weight are multiplied by 2**S and the same channels of q_norm's weight by 2**-S. Powers of
two are exact in bf16 and fp32 (no rounding, no overflow or underflow at these magnitudes), RMSNorm
multiplies by the weight last, RoPE is linear within a pair, and q_i * k_i is unchanged, so every
attention score and every logit is bit-identical to models/demo while those key channels are 2**S
times larger in the cache: thousands, as in models without QK-norm, far above FP8 E4M3's 448.

Standard library only: the safetensors header (8-byte length + JSON) is kept byte for byte and the
bf16 weights are edited in place (exponent field + S), so the derivation is deterministic and
`--check` re-derives it and compares every file with the committed checkpoint (sha256).

Usage: derive_outliers.py [--src models/demo] [--out models/demo-outliers] [--check]
"""
import argparse
import hashlib
import json
import os
import struct
import sys

# The rescaling. Layers and pairs chosen with kvgate's own diagnostics (models/demo-outliers/README.md).
S = 10
LAYERS = [2, 5]
PAIRS = [2, 3, 4, 5, 6, 7, 8, 10]  # i of the pair (i, i + head_dim/2): the pairs these layers weigh most
COPIED = ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "LICENSE"]
WEIGHTS = "model.safetensors"


def fail(msg):
    print("derive_outliers.py: " + msg, file=sys.stderr)
    sys.exit(2)


def scale_bf16(raw, index, shift, name):
    """Multiplies bf16 element `index` of bytearray `raw` by 2**shift by moving its exponent field."""
    (u,) = struct.unpack_from("<H", raw, 2 * index)
    exp = (u >> 7) & 0xFF
    if exp == 0:
        if u & 0x7FFF == 0:
            return  # zero stays zero
        fail(f"{name}[{index}] is subnormal: scaling it would not be exact")
    if not 1 <= exp + shift <= 254:
        fail(f"{name}[{index}]: 2**{shift} times it leaves bf16's normal range")
    struct.pack_into("<H", raw, 2 * index, (u & 0x807F) | ((exp + shift) << 7))


def derive(src, shift_s=S, layers=LAYERS, pairs=PAIRS):
    """Returns {file name: bytes} of the derived checkpoint."""
    with open(os.path.join(src, "config.json")) as f:
        config = json.load(f)
    head_dim = config["head_dim"]
    with open(os.path.join(src, WEIGHTS), "rb") as f:
        data = bytearray(f.read())
    (header_len,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    for layer in layers:
        for which, shift in (("k_norm", shift_s), ("q_norm", -shift_s)):
            name = f"model.layers.{layer}.self_attn.{which}.weight"
            if name not in header:
                fail(f"{src}/{WEIGHTS} has no {name}: expected the Qwen3 demo model")
            t = header[name]
            if t["dtype"] != "BF16" or t["shape"] != [head_dim]:
                fail(f"{name}: expected BF16 [{head_dim}], found {t['dtype']} {t['shape']}")
            begin, end = t["data_offsets"]
            view = memoryview(data)[base + begin:base + end]
            for i in pairs:
                if not 0 <= i < head_dim // 2:
                    fail(f"pair {i}: must be in [0, {head_dim // 2})")
                for channel in (i, i + head_dim // 2):
                    scale_bf16(view, channel, shift, name)
    out = {WEIGHTS: bytes(data)}
    for name in COPIED:
        with open(os.path.join(src, name), "rb") as f:
            out[name] = f.read()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default="models/demo")
    ap.add_argument("--out", default="models/demo-outliers")
    ap.add_argument("--check", action="store_true", help="compare with the files in --out instead of writing them")
    ap.add_argument("--s", type=int, default=S, help="the power of two (other values: to explore, not the checkpoint)")
    ap.add_argument("--layers", default=",".join(map(str, LAYERS)), help="comma-separated layers to rescale")
    ap.add_argument("--pairs", default=",".join(map(str, PAIRS)), help="comma-separated rotary pairs i (with i + head_dim/2)")
    a = ap.parse_args()
    files = derive(a.src, a.s, [int(x) for x in a.layers.split(",")], [int(x) for x in a.pairs.split(",")])
    if a.check:
        bad = 0
        for name, content in sorted(files.items()):
            want = hashlib.sha256(content).hexdigest()
            path = os.path.join(a.out, name)
            try:
                with open(path, "rb") as f:
                    have = hashlib.sha256(f.read()).hexdigest()
            except OSError as e:
                have = f"unreadable ({e.strerror})"
            print(f"{'ok  ' if have == want else 'DIFF'} {name} {want}")
            bad += have != want
        if bad:
            fail(f"{bad} file(s) of {a.out} differ from the derivation: re-run scripts/demo-model/derive_outliers.py")
        print(f"{a.out}: every file equals the derivation from {a.src}")
        return
    os.makedirs(a.out, exist_ok=True)
    for name, content in sorted(files.items()):
        tmp = os.path.join(a.out, name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(content)
        os.replace(tmp, os.path.join(a.out, name))
        print(f"{name} {hashlib.sha256(content).hexdigest()}")


if __name__ == "__main__":
    main()
