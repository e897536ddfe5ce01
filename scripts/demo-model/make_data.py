#!/usr/bin/env python3
"""Turns kvgate tasks files into the demo model's training (or held-out) token data.

Each trial becomes one ChatML sequence: the trial's messages rendered as tokenizer_config.json's
template does (with the generation prompt), then the answer the grader wants and <|im_end|>.
Answers: multicode "<name>: <code>" lines in the asked order; niah the needle's value; mrcr the asked
assistant turn with the random prefix the question names (the grader's target, verbatim).
Training puts loss only on the answer tokens. Every digit-only value (multicode codes, niah numbers)
is recorded as a group of digit-token runs (in the haystack and in the answer) so that train.py can
draw fresh digits for it each time the trial is used: the haystacks are kvgate's, the codes are new.

Usage: make_data.py --tokenizer DIR --out data.npz TASKS.jsonl...
"""
import argparse
import json
import re
import sys

import numpy as np
from tokenizers import Tokenizer


TASK_IDS = {"multicode": 0, "niah": 1, "mrcr": 2}  # train.py weights mrcr's long answers (--mrcr-answer-cap)


def render_chatml(messages):
    out = []
    for m in messages:
        out.append("<|im_start|>" + m["role"] + "\n" + m["content"] + "<|im_end|>\n")
    out.append("<|im_start|>assistant\n")
    return "".join(out)


def strip_prose(trial):
    """The trial with its filler prose removed: the instruction, the code lines in haystack order, the
    question. A short, dense warm-up where the look-up circuit forms before prose dilutes it."""
    content = trial["input"]["messages"][-1]["content"]
    head = content[: content.index("\n") + 1]
    question = content[content.rindex("\nWhat are the access codes"):]
    lines = sorted(trial["meta"]["lines"], key=lambda l: l["offset"])
    stripped = dict(trial)
    stripped["input"] = {"messages": trial["input"]["messages"][:-1] +
                         [{"role": "user", "content": head + " ".join(l["text"] for l in lines) + question}]}
    return stripped


def answer_and_values(trial):
    task, target = trial["task"], trial["target"]
    if task == "multicode":
        codes = target["codes"]
        answer = "\n".join(f"{c['name']}: {c['code']}" for c in codes)
        values = [line["code"] for line in trial["meta"]["lines"]]
    elif task == "niah":
        value = target["value"] if isinstance(target, dict) else str(target)
        answer = value
        values = [value] if value.isdigit() else []
    elif task == "mrcr":
        answer, values = target, []  # the prefix is alphanumeric, not a digit group to redraw
    else:
        raise SystemExit(f"{trial['id']}: task {task} has no answer rendering in make_data.py")
    return answer, values


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizer", required=True, help="folder with tokenizer.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--strip-prose", action="store_true",
                    help="multicode trials without their filler prose (bucket: the length rounded up to a power of two)")
    ap.add_argument("tasks", nargs="+")
    a = ap.parse_args()
    tok = Tokenizer.from_file(a.tokenizer + "/tokenizer.json")
    digit_ids = [tok.token_to_id(str(d)) for d in range(10)]
    if None in digit_ids:
        sys.exit("tokenizer lacks single-digit tokens")
    digit_of = {t: d for d, t in enumerate(digit_ids)}

    trials = []
    for path in a.tasks:
        with open(path, encoding="utf-8") as f:
            trials += [json.loads(line) for line in f if line.strip()]
    if a.strip_prose:
        trials = [strip_prose(t) for t in trials if t["task"] == "multicode"]
    prompts, fulls, metas = [], [], []
    for t in trials:
        prompt = render_chatml(t["input"]["messages"])
        answer, values = answer_and_values(t)
        prompts.append(prompt)
        fulls.append(prompt + answer + "<|im_end|>")
        metas.append((t, values))
    enc_f = tok.encode_batch(fulls, add_special_tokens=False)

    tokens, starts, lengths, plen, buckets, tasks = [], [], [], [], [], []
    grp_sample, grp_ndig, grp_occ_start, grp_occ_count, occ_pos = [], [], [], [], []
    pos = 0
    for i, (t, values) in enumerate(metas):
        ids = enc_f[i].ids
        tok_start = np.asarray([o[0] for o in enc_f[i].offsets], dtype=np.int64)
        # The answer starts a token of its own: the prompt ends with "assistant\n", the answer with a
        # letter or digit, which the pre-tokenizer always splits apart.
        p = int(np.searchsorted(tok_start, len(prompts[i]), side="left"))
        if p >= len(ids) or tok_start[p] != len(prompts[i]):
            sys.exit(f"{t['id']}: no token boundary between prompt and answer")
        text = fulls[i]
        runs = {}  # every maximal digit run of the text: value -> character offsets
        for m in re.finditer(r"\d+", text):
            runs.setdefault(m.group(), []).append(m.start())
        for v in values:
            occ = []
            for c in runs.get(v, []):
                first = int(np.searchsorted(tok_start, c, side="right")) - 1
                run = ids[first: first + len(v)]
                if tok_start[first] != c or len(run) != len(v) or any(r not in digit_of for r in run) or \
                        "".join(str(digit_of[r]) for r in run) != v:
                    sys.exit(f"{t['id']}: value {v} is not one digit token per character")
                occ.append(first)
            if not occ:
                sys.exit(f"{t['id']}: value {v} not found in the rendered trial")
            grp_sample.append(i)
            grp_ndig.append(len(v))
            grp_occ_start.append(len(occ_pos))
            grp_occ_count.append(len(occ))
            occ_pos += occ
        tokens.append(np.asarray(ids, dtype=np.uint16))
        starts.append(pos)
        lengths.append(len(ids))
        plen.append(p)
        buckets.append(1 << (len(ids) - 1).bit_length() if a.strip_prose else int(t["bucket"]))
        tasks.append(TASK_IDS[t["task"]])
        pos += len(ids)
    grp_sample = np.asarray(grp_sample, dtype=np.int32)
    # Groups of each sample are contiguous: first group and count per sample.
    first = np.searchsorted(grp_sample, np.arange(len(metas)), side="left")
    count = np.searchsorted(grp_sample, np.arange(len(metas)), side="right") - first
    np.savez(a.out,
             tokens=np.concatenate(tokens), starts=np.asarray(starts, np.int64), lengths=np.asarray(lengths, np.int32),
             prompt_len=np.asarray(plen, np.int32), bucket=np.asarray(buckets, np.int32),
             task=np.asarray(tasks, np.int8), grp_first=first.astype(np.int32), grp_count=count.astype(np.int32),
             grp_ndig=np.asarray(grp_ndig, np.int8), grp_occ_start=np.asarray(grp_occ_start, np.int32),
             grp_occ_count=np.asarray(grp_occ_count, np.int32), occ_pos=np.asarray(occ_pos, np.int32),
             digit_ids=np.asarray(digit_ids, np.int32), ids=np.asarray([t["id"] for t, _ in metas]))
    ub, cnt = np.unique(buckets, return_counts=True)
    print(f"{a.out}: {len(metas)} sequences, {pos} tokens; per bucket " +
          ", ".join(f"{b}:{c}" for b, c in zip(ub, cnt)))


if __name__ == "__main__":
    main()
