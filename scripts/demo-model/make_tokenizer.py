#!/usr/bin/env python3
"""Trains the demo model's byte-level BPE tokenizer with Hugging Face `tokenizers`.

Qwen2/Qwen3's pre-tokenizer (the same split regex: single digits, letters with one leading
non-letter, punctuation runs, newlines), NFC, ByteLevel without prefix space, ChatML special tokens
appended after the learned vocabulary (as Qwen does). Writes tokenizer.json and
tokenizer_config.json (ChatML chat template) into --out.

Usage: make_tokenizer.py --out DIR --vocab 4096 TEXT_OR_JSONL...
  A .jsonl file is read as kvgate tasks: every message content and every target string is used.
"""
import argparse
import json
import os
import re
import sys

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

# Qwen2/Qwen3 tokenizer.json, pre_tokenizer.pretokenizers[0].pattern.Regex
QWEN_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# ChatML, as Qwen2.5 renders it without the default system prompt and without tools.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def answer_text(trial):
    target = trial.get("target", "")
    if isinstance(target, dict) and "codes" in target:
        return "\n".join(f"{c['name']}: {c['code']}" for c in target["codes"])
    return target if isinstance(target, str) else json.dumps(target, ensure_ascii=False)


def texts_from(path):
    if path.endswith(".jsonl"):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                trial = json.loads(line)
                inp = trial.get("input", {})
                # The trial as the model sees it: ChatML around the messages, then the answer.
                text = "".join("<|im_start|>" + m["role"] + "\n" + m["content"] + "<|im_end|>\n"
                               for m in inp.get("messages", []) if isinstance(m.get("content"), str))
                text += inp.get("prompt", "") if isinstance(inp.get("prompt"), str) else ""
                yield text + "<|im_start|>assistant\n" + answer_text(trial) + "<|im_end|>\n"
    else:
        with open(path, encoding="utf-8") as f:
            yield f.read()


def build(vocab_size):
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False, fuse_unk=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(SPECIAL), min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    return tok, trainer


def tokenizer_config(tok, max_length):
    added = {}
    for s in SPECIAL:
        added[str(tok.token_to_id(s))] = {"content": s, "lstrip": False, "normalized": False, "rstrip": False,
                                          "single_word": False, "special": True}
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": None,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": max_length,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--max-length", type=int, default=32768)
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    if not 4096 <= a.vocab <= 8192:
        sys.exit("--vocab must be between 4096 and 8192")
    tok, trainer = build(a.vocab)
    corpus = [t for p in a.inputs for t in texts_from(p)]
    # The special tokens are split off first, so that no merge spans them.
    special = re.compile("(" + "|".join(re.escape(s) for s in SPECIAL) + ")")
    pieces = [p for text in corpus for p in special.split(text) if p and p not in SPECIAL]
    tok.train_from_iterator(pieces, trainer=trainer, length=len(pieces))
    tok.add_special_tokens(SPECIAL)
    if tok.get_vocab_size() != a.vocab:
        sys.exit(f"vocabulary is {tok.get_vocab_size()} tokens, expected {a.vocab}: give more training text")
    os.makedirs(a.out, exist_ok=True)
    tok.save(os.path.join(a.out, "tokenizer.json"), pretty=True)
    with open(os.path.join(a.out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_config(tok, a.max_length), f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"tokenizer: {tok.get_vocab_size()} tokens from {len(corpus)} texts -> {a.out}")


if __name__ == "__main__":
    main()
