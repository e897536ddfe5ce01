#!/usr/bin/env python3
"""Golden token ids and chat renders of the demo tokenizer, made with Hugging Face's own code
(transformers' AutoTokenizer and apply_chat_template; without transformers, `tokenizers` and jinja2
render the same template). tests/demo-model-test.cpp compares kvgate's tokenizer with them.

Usage: make_golden.py --tokenizer DIR --out golden.json [TASKS.jsonl...]
"""
import argparse
import json

TEXTS = [
    "The access code for Juniper-24 is 951936.",
    "What are the access codes for Cedar-7, Cedar-71, and Cedar-107? Answer with one line for each name.",
    "One of the special magic numbers for elfin-goblet is: 3463620.",
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.",
    "  leading spaces, trailing spaces   \n\n\ttabs\tand\r\nwindows newlines\n",
    "I'm sure they'll say we've done what you'd expect; it's THEIR choice, isn't it?",
    "Ünïcödé: café, naïve, Zürich, 東京, Москва, ελληνικά, emoji 🙂👍🏽, combining e\u0301.",
    "def f(x):\n    return {'a': [1, 2, 3], \"b\": x ** 2}  # comment\n",
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|endoftext|>",
    "1234567890 3.14159 -42 1e-6 0x1F 100,000 $5.00 50%",
    "",
    " ",
    "\n",
]
CHATS = [
    [{"role": "user", "content": "What is the access code for Juniper-24?"}],
    [{"role": "system", "content": "You are a careful assistant."},
     {"role": "user", "content": "Say hello."},
     {"role": "assistant", "content": "Hello."},
     {"role": "user", "content": "Again, in French: café?"}],
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("tasks", nargs="*", help="kvgate tasks files: the first 3000 characters of one trial each are added")
    a = ap.parse_args()
    texts = list(TEXTS)
    for path in a.tasks:
        with open(path, encoding="utf-8") as f:
            trial = json.loads(f.readline())
        texts.append(trial["input"]["messages"][0]["content"][:3000])
    try:
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained(a.tokenizer)
        encode = lambda t: tok.encode(t, add_special_tokens=False)
        render = lambda m, g: tok.apply_chat_template(m, tokenize=False, add_generation_prompt=g)
        maker = "transformers " + __import__("transformers").__version__
    except ImportError:
        import jinja2
        from tokenizers import Tokenizer
        tk = Tokenizer.from_file(a.tokenizer + "/tokenizer.json")
        template = json.load(open(a.tokenizer + "/tokenizer_config.json"))["chat_template"]
        env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)  # transformers' settings
        encode = lambda t: tk.encode(t, add_special_tokens=False).ids
        render = lambda m, g: env.from_string(template).render(messages=m, add_generation_prompt=g)
        maker = "tokenizers " + __import__("tokenizers").__version__ + " + jinja2"
    golden = {"made_with": maker,
              "texts": [{"text": t, "ids": encode(t)} for t in texts],
              "chats": [{"messages": m, "add_generation_prompt": g, "text": render(m, g), "ids": encode(render(m, g))}
                        for m in CHATS for g in (True, False)]}
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{a.out}: {len(golden['texts'])} texts, {len(golden['chats'])} chats ({maker})")


if __name__ == "__main__":
    main()
