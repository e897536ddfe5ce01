#!/usr/bin/env python3
"""Makes the small tokenizer fixtures of kvgate's tokenizer tests with Hugging Face `tokenizers`:
one byte-level BPE trained on GSM8K text, saved under several pipelines (GPT-2, Llama-3 style,
normalizers and Digits, every Split behaviour, added tokens with lstrip/rstrip/single_word/
normalized), each with golden.jsonl: the ids HF gives (with and without special tokens) and its
decodes. kvgate must reproduce every line.

Run from the repository root: .venv-tests/bin/python tests/data/tokenizers/make_fixtures.py
"""
import copy
import json
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..")  # tests/data: the GSM8K and Qwen3 copies

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
                  r"|\s+(?!\S)|\s+")


def training_text():
    lines = []
    with open(os.path.join(DATA, "gsm8k", "train.jsonl"), encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= 1500:
                break
            row = json.loads(line)
            lines.append(row["question"])
            lines.append(row["answer"])
    return lines


def texts():
    out = []
    with open(os.path.join(DATA, "tokenizers", "qwen3", "golden.jsonl"), encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i % 10 == 0:
                out.append(json.loads(line)["text"])
    out += [
        "", " ", "  leading spaces", "trailing   ", "numbers 1234567 and 3.14159, 42", "a\u180eb", "a \u180eb",
        "x\u0085 y", "tabs\tand\nnewlines\r\n\r\nend", "don't I'LL we've THEY'RE", "e\u0301 NFD and \u00e9 NFC",
        "\ufb01 ligature \u2460 circled \uff21 fullwidth", "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8",
        "emoji \U0001F680\U0001F469\u200d\U0001F4BB", "<|im_start|>user\nhi<|im_end|>\n",
        "text<|endoftext|>more", "a <mask> b", "a<mask>b", "  <mask>  x", "<mask><mask>", "word<sw> <sw> x<sw>y <sw>",
        "\u00dfig <sw>\u00e9", "fix \ufb01x FIX", "price: $1,234.56; qty 7.", "x, y. z,,w", "Split   these    words",
        "abc123def456", "<|begin_of_text|>Hello", "MiXeD CaSe 'S 'T", "\u0661\u0662\u0663 arabic digits",
    ]
    return out


def train():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(training_text(), trainer)
    return json.loads(tok.to_str())


def added(content, id_, special=True, lstrip=False, rstrip=False, normalized=False, single_word=False):
    return {"id": id_, "content": content, "single_word": single_word, "lstrip": lstrip, "rstrip": rstrip,
            "normalized": normalized, "special": special}


def byte_level(use_regex, prefix=False):
    return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": True, "use_regex": use_regex}


def variants(base):
    n = len(base["model"]["vocab"])
    chatml = [added("<|endoftext|>", n), added("<|im_start|>", n + 1), added("<|im_end|>", n + 2)]
    out = {}

    v = copy.deepcopy(base)  # GPT-2 style, as a small trained demo model ships it; merges as "a b" strings
    v["added_tokens"] = chatml
    v["post_processor"] = byte_level(False)
    v["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in v["model"]["merges"]]
    out["tiny-bpe"] = v

    v = copy.deepcopy(base)  # Llama-3 style: Split + ByteLevel without regex, ignore_merges, BOS template
    v["added_tokens"] = chatml + [added("<|begin_of_text|>", n + 3), added("<mask>", n + 4, special=False, lstrip=True, rstrip=True),
                                  added("<sw>", n + 5, special=False, single_word=True)]
    v["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": LLAMA3_PATTERN}, "behavior": "Isolated", "invert": False}, byte_level(False)]}
    v["model"]["ignore_merges"] = True
    v["post_processor"] = {"type": "Sequence", "processors": [byte_level(False), {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [n + 3], "tokens": ["<|begin_of_text|>"]}}}]}
    out["llama3-like"] = v

    v = copy.deepcopy(base)  # NFKC, Digits, prefix space, normalized added tokens, RoBERTa post-processor
    v["added_tokens"] = [added("<s>", n), added("</s>", n + 1), added("fix", n + 2, special=False, normalized=True),
                         added("<mask>", n + 3, lstrip=True)]
    v["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFKC"}]}
    v["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True},
                                                                byte_level(True, prefix=True)]}
    v["post_processor"] = {"type": "RobertaProcessing", "sep": ["</s>", n + 1], "cls": ["<s>", n], "trim_offsets": True,
                           "add_prefix_space": True}
    out["nfkc-digits"] = v

    v = copy.deepcopy(base)  # Split behaviours, part 1
    v["added_tokens"] = chatml
    v["normalizer"] = {"type": "NFD"}
    v["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False},
        {"type": "Split", "pattern": {"Regex": "\\d"}, "behavior": "Contiguous", "invert": False},
        {"type": "Digits", "individual_digits": False}, byte_level(False)]}
    out["split-merged-previous"] = v

    v = copy.deepcopy(base)  # Split behaviours, part 2
    v["added_tokens"] = chatml
    v["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "[,.;]"}, "behavior": "MergedWithNext", "invert": False},
        {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Removed", "invert": False},
        {"type": "Split", "pattern": {"Regex": "[a-z]+"}, "behavior": "Isolated", "invert": True}, byte_level(False)]}
    out["split-merged-next"] = v
    return out


def main():
    base = train()
    sample = texts()
    for name, spec in variants(base).items():
        folder = os.path.join(HERE, name)
        os.makedirs(folder, exist_ok=True)
        text = json.dumps(spec, ensure_ascii=False)
        with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
            f.write(text)
        tok = Tokenizer.from_str(text)
        with open(os.path.join(folder, "golden.jsonl"), "w", encoding="utf-8") as f:
            for s in sample:
                ids = tok.encode(s, add_special_tokens=False).ids
                row = {"text": s, "ids": ids, "ids_special": tok.encode(s, add_special_tokens=True).ids,
                       "decoded": tok.decode(ids, skip_special_tokens=False),
                       "decoded_skip": tok.decode(ids, skip_special_tokens=True)}
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    # The demo-model shape: ChatML template and special tokens in tokenizer_config.json.
    config = {"bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
              "chat_template": "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content']"
                               " + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}"
                               "{{ '<|im_start|>assistant\n' }}{% endif %}"}
    with open(os.path.join(HERE, "tiny-bpe", "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)


if __name__ == "__main__":
    main()
