#!/usr/bin/env python3
"""Converts a Qwen3 checkpoint (config.json, model.safetensors, tokenizer.json, tokenizer_config.json),
such as models/demo, into a GGUF file llama.cpp loads, with the `gguf` package (scripts/python-requirements.txt).

Usage: llama-cpp-gguf.py MODEL_DIR OUT.gguf

Weights are written as F32: the checkpoint's bf16 values exactly, and no activation rounding in
llama.cpp's matrix products, so the engine differs from kvgate's reference decoder only where the KV
format and attention kernel differ. Written to OUT.gguf.part, then renamed: nothing half-written.
"""
import json
import os
import struct
import sys

import gguf
import numpy as np

# Hugging Face Qwen3 tensor names -> llama.cpp's (per layer: blk.N.*).
LAYER_TENSORS = {
    "input_layernorm": "attn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "self_attn.q_norm": "attn_q_norm",
    "self_attn.k_norm": "attn_k_norm",
    "post_attention_layernorm": "ffn_norm",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}


def fail(message):
    print(f"llama-cpp-gguf: {message}", file=sys.stderr)
    sys.exit(2)


def read_safetensors(path):
    """name -> float32 array; bf16 widened exactly (numpy has no bf16)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[begin:end]
        if info["dtype"] == "BF16":
            a = (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] == "F32":
            a = np.frombuffer(raw, dtype=np.float32)
        elif info["dtype"] == "F16":
            a = np.frombuffer(raw, dtype=np.float16).astype(np.float32)
        else:
            fail(f"{path}: tensor {name} has dtype {info['dtype']}: only BF16, F16 and F32 are converted")
        out[name] = a.reshape(info["shape"])
    return out


def gguf_name(hf_name):
    if hf_name == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf_name == "model.norm.weight":
        return "output_norm.weight"
    if hf_name == "lm_head.weight":
        return "output.weight"
    parts = hf_name.split(".")
    if parts[:2] == ["model", "layers"] and parts[-1] == "weight":
        key = ".".join(parts[3:-1])
        if key in LAYER_TENSORS:
            return f"blk.{parts[2]}.{LAYER_TENSORS[key]}.weight"
    fail(f"tensor {hf_name}: no llama.cpp name known for it (only Qwen3 checkpoints are converted)")


def main():
    if len(sys.argv) != 3:
        fail("usage: llama-cpp-gguf.py MODEL_DIR OUT.gguf")
    model_dir, out = sys.argv[1], sys.argv[2]
    try:
        with open(os.path.join(model_dir, "config.json")) as f:
            cfg = json.load(f)
        with open(os.path.join(model_dir, "tokenizer.json")) as f:
            tok = json.load(f)
        with open(os.path.join(model_dir, "tokenizer_config.json")) as f:
            tok_cfg = json.load(f)
        tensors = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    except (OSError, ValueError) as e:
        fail(f"{model_dir}: cannot read the checkpoint ({e}): pass a directory with config.json, "
             "model.safetensors, tokenizer.json and tokenizer_config.json")
    if cfg.get("model_type") != "qwen3":
        fail(f"{model_dir}/config.json: model_type {cfg.get('model_type')!r}: only qwen3 is converted")
    if tok["model"]["type"] != "BPE":
        fail(f"{model_dir}/tokenizer.json: model type {tok['model']['type']}: only byte-level BPE is converted")

    w = gguf.GGUFWriter(out + ".part", "qwen3")
    w.add_name(os.path.basename(os.path.normpath(model_dir)))
    head_dim = cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_rope_freq_base(cfg["rope_theta"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    # Vocabulary: ids 0..vocab_size-1, added tokens typed CONTROL (never split out of plain text by
    # llama.cpp unless parse_special, as Hugging Face's "special" added tokens).
    vocab_size = cfg["vocab_size"]
    tokens = [None] * vocab_size
    types = [gguf.TokenType.NORMAL] * vocab_size
    for piece, i in tok["model"]["vocab"].items():
        tokens[i] = piece
    for added in tok.get("added_tokens", []):
        tokens[added["id"]] = added["content"]
        types[added["id"]] = gguf.TokenType.CONTROL if added.get("special") else gguf.TokenType.USER_DEFINED
    for i, t in enumerate(tokens):
        if t is None:
            tokens[i] = f"[PAD{i}]"
            types[i] = gguf.TokenType.UNUSED
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")  # the Qwen2 split regex, which tokenizer.json's pre_tokenizer uses
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    ids = {t: i for i, t in enumerate(tokens)}
    if tok_cfg.get("eos_token") in ids:
        w.add_eos_token_id(ids[tok_cfg["eos_token"]])
    if tok_cfg.get("pad_token") in ids:
        w.add_pad_token_id(ids[tok_cfg["pad_token"]])
    if cfg.get("bos_token_id") is not None:
        w.add_bos_token_id(cfg["bos_token_id"])
    w.add_add_bos_token(bool(tok_cfg.get("add_bos_token", False)))
    if tok_cfg.get("chat_template"):
        w.add_chat_template(tok_cfg["chat_template"])

    for name in sorted(tensors):
        w.add_tensor(gguf_name(name), np.ascontiguousarray(tensors[name], dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(out + ".part", out)


if __name__ == "__main__":
    main()
