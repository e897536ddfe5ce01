#!/usr/bin/env python3
"""Trains kvgate's demo model: a small Qwen3ForCausalLM that retrieves access codes from 16K tokens.

The model is written here in plain PyTorch with Hugging Face's parameter names and Qwen3's exact
forward pass (RMSNorm, q/k RMSNorm per head before RoPE, GQA, SwiGLU, tied embeddings), so the
export is a standard Qwen3 checkpoint; --check-transformers loads it back with transformers and
compares logits.

Training is scheduled by wall-clock time (--minutes), not steps: the learning rate (warm-up, cosine)
and the curriculum (1K -> 16K tokens) follow the fraction of the time budget used, so one command
fits the GPU machine's 10-minute limit on any speed. The first --warm-until of the budget trains on
--warm-data only: the multicode trials with their prose stripped (instruction, code lines, question),
where the look-up circuit forms in seconds; v1 and v2, without it, never left the plateau of a model
that writes the format but guesses the codes. The loss is on the answer tokens, plus --lm-weight
times a next-token loss on every token. Each time a trial is drawn, its codes (every digit-only
value) get fresh random digits in the haystack and the answer alike.

The export (config.json, generation_config.json, model.safetensors in bf16) is written into --out
every --save-every seconds and at the end, each file atomically; train_log.json holds the loss curve
and the held-out evaluations.

Usage: train.py --data train.npz --eval eval.npz --warm-data strip.npz --out DIR [--minutes 7] [--device cuda]
"""
import argparse
import json
import math
import os
import time
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelConfig:
    vocab_size: int = 4096
    hidden_size: int = 256
    num_hidden_layers: int = 8
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    head_dim: int = 64
    intermediate_size: int = 640
    rope_theta: float = 1000000.0
    rms_norm_eps: float = 1e-6
    max_position_embeddings: int = 32768


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):  # Qwen3RMSNorm: normalise in fp32, cast back, then scale
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rope_cos_sin(cfg, length, device):
    inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2, dtype=torch.int64).float().to(device) / cfg.head_dim))
    pos = torch.arange(length, device=device, dtype=torch.float32)
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h, d = cfg.hidden_size, cfg.head_dim
        self.cfg = cfg
        self.q_proj = nn.Linear(h, cfg.num_attention_heads * d, bias=False)
        self.k_proj = nn.Linear(h, cfg.num_key_value_heads * d, bias=False)
        self.v_proj = nn.Linear(h, cfg.num_key_value_heads * d, bias=False)
        self.o_proj = nn.Linear(cfg.num_attention_heads * d, h, bias=False)
        self.q_norm = RMSNorm(d, cfg.rms_norm_eps)
        self.k_norm = RMSNorm(d, cfg.rms_norm_eps)

    def forward(self, x, cos, sin):
        c = self.cfg
        b, t, _ = x.shape
        q = self.q_norm(self.q_proj(x).view(b, t, c.num_attention_heads, c.head_dim)).transpose(1, 2)
        k = self.k_norm(self.k_proj(x).view(b, t, c.num_key_value_heads, c.head_dim)).transpose(1, 2)
        v = self.v_proj(x).view(b, t, c.num_key_value_heads, c.head_dim).transpose(1, 2)
        cos, sin = cos.to(q.dtype), sin.to(q.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        q, k = q.to(v.dtype), k.to(v.dtype)  # the norms' fp32 weights promote; attention runs in v's (autocast) dtype
        rep = c.num_attention_heads // c.num_key_value_heads
        k = k.repeat_interleave(rep, dim=1)  # head i reads kv head i // rep, as transformers' repeat_kv
        v = v.repeat_interleave(rep, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(o.transpose(1, 2).reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self_attn = Attention(cfg)
        self.mlp = MLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Body(nn.Module):  # "model." in Hugging Face names
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class Qwen3(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.model = Body(cfg)
        std = 0.02
        for name, p in self.named_parameters():
            if p.dim() == 2:
                scale = 1.0 / math.sqrt(2 * cfg.num_hidden_layers) if name.endswith(("o_proj.weight", "down_proj.weight")) else 1.0
                nn.init.normal_(p, std=std * scale)

    def hidden(self, ids):
        x = self.model.embed_tokens(ids)
        cos, sin = rope_cos_sin(self.cfg, ids.shape[1], ids.device)
        for layer in self.model.layers:
            x = layer(x, cos, sin)
        return self.model.norm(x)

    def logits(self, h):  # tied embeddings
        return F.linear(h, self.model.embed_tokens.weight)


# ---------------------------------------------------------------------------------------------- data

TASK_MRCR = 2  # make_data.py TASK_IDS["mrcr"]


class Data:
    """A make_data.py npz: sequences, answer starts, and the digit groups to redraw."""

    def __init__(self, path):
        z = np.load(path)
        self.tokens = z["tokens"].astype(np.int64)
        self.starts, self.lengths, self.prompt_len = z["starts"], z["lengths"], z["prompt_len"]
        self.bucket, self.task = z["bucket"], z["task"]
        self.grp_first, self.grp_count, self.grp_ndig = z["grp_first"], z["grp_count"], z["grp_ndig"]
        self.grp_occ_start, self.grp_occ_count, self.occ_pos = z["grp_occ_start"], z["grp_occ_count"], z["occ_pos"]
        self.digit_ids = z["digit_ids"].astype(np.int64)
        self.buckets = sorted(set(int(b) for b in self.bucket))
        self.by_bucket = {b: np.nonzero(self.bucket == b)[0] for b in self.buckets}

    def batch(self, samples, rng, redraw):
        """Token ids (B, T) padded with the last token, and the loss mask: mask[b, i] when position i
        predicts ids[b, i + 1], an answer token."""
        samples = np.asarray(samples)
        lens = self.lengths[samples]
        t = int(lens.max())
        ids = np.zeros((len(samples), t), dtype=np.int64)
        mask = np.zeros((len(samples), t), dtype=bool)
        for r, s in enumerate(samples):
            ids[r, : lens[r]] = self.tokens[self.starts[s]: self.starts[s] + lens[r]]
            ids[r, lens[r]:] = ids[r, lens[r] - 1]
            mask[r, self.prompt_len[s] - 1: lens[r] - 1] = True
        if redraw:
            self.redraw(ids, samples, rng)
        return ids, mask

    def redraw(self, ids, samples, rng):
        """Fresh digits for every digit group of the batch, the same in each of its occurrences."""
        counts = self.grp_count[samples]
        if counts.sum() == 0:
            return
        gs = np.concatenate([np.arange(self.grp_first[s], self.grp_first[s] + c) for s, c in zip(samples, counts)])
        rows = np.repeat(np.arange(len(samples)), counts)
        ndig = self.grp_ndig[gs].astype(np.int64)
        digits = rng.integers(0, 10, size=(len(gs), int(ndig.max())))
        digits[:, 0] = rng.integers(1, 10, size=len(gs))  # kvgate's codes and values have no leading zero
        occ_n = self.grp_occ_count[gs]
        occ_g = np.repeat(np.arange(len(gs)), occ_n)  # occurrence -> index into gs
        first = np.repeat(self.grp_occ_start[gs] - (np.cumsum(occ_n) - occ_n), occ_n)
        pos = self.occ_pos[first + np.arange(occ_n.sum())]
        for k in range(int(ndig.max())):
            m = ndig[occ_g] > k
            ids[rows[occ_g[m]], pos[m] + k] = self.digit_ids[digits[occ_g[m], k]]


# ---------------------------------------------------------------------------------------- schedule

# Curriculum over the fraction of the time budget used: (until, {bucket: weight}). Short trials
# first, where the retrieval circuit forms cheaply; 16K only in the last part, mixed with shorter
# ones so they are not forgotten.
CURRICULUM = [
    (0.12, {512: 1.0, 1024: 1.0}),  # 512: the dense start of gen_tasks.sh DENSE=1 (v1 had none)
    (0.25, {512: 0.2, 1024: 0.4, 2048: 0.4}),
    (0.40, {1024: 0.2, 2048: 0.4, 4096: 0.4}),
    (0.60, {2048: 0.2, 4096: 0.4, 8192: 0.4}),
    (0.80, {2048: 0.1, 4096: 0.3, 8192: 0.3, 16384: 0.3}),
    (1.01, {4096: 0.25, 8192: 0.35, 16384: 0.4}),
]


# The prose-free warm-up (make_data.py --strip-prose; v3): the instruction, the code lines and the
# question only, few lines first. Over the fraction of the warm-up phase.
WARM_CURRICULUM = [
    (0.35, {512: 1.0}),
    (0.65, {512: 0.3, 1024: 0.7}),
    (1.01, {512: 0.1, 1024: 0.3, 2048: 0.4, 4096: 0.2}),
]


def pick_bucket(progress, buckets, rng, curriculum=CURRICULUM):
    w = {}
    for until, weights in curriculum:
        if progress < until:
            w = {b: v for b, v in weights.items() if b in buckets}
            break
    if not w:
        w = {b: 1.0 for b in buckets}
    keys = sorted(w)
    p = np.asarray([w[k] for k in keys], dtype=np.float64)
    return keys[int(rng.choice(len(keys), p=p / p.sum()))]


def learning_rate(progress, peak, warmup):
    if progress < warmup:
        return peak * progress / warmup
    x = (progress - warmup) / (1 - warmup)
    return peak * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, x))))


# -------------------------------------------------------------------------------------- evaluation

@torch.no_grad()
def evaluate(model, data, device, dtype, max_tokens_per_batch):
    """Teacher-forced greedy check per held-out trial: passes when every answer token is the argmax
    (then greedy decoding writes exactly the answer). Returns {bucket: (passed, total, token_acc)}."""
    model.eval()
    out = {}
    for b in data.buckets:
        idx = data.by_bucket[b]
        per = max(1, max_tokens_per_batch // b)
        passed = total = tok_ok = tok_n = 0
        for i in range(0, len(idx), per):
            ids, mask = data.batch(idx[i: i + per], None, redraw=False)
            ids_t = torch.from_numpy(ids).to(device)
            mask_t = torch.from_numpy(mask).to(device)
            with torch.autocast(device_type=device.type, dtype=dtype, enabled=dtype != torch.float32):
                h = model.hidden(ids_t)
            sel = mask_t.nonzero(as_tuple=True)
            logits = model.logits(h[sel].float())
            right = logits.argmax(-1) == ids_t[sel[0], sel[1] + 1]
            per_seq = torch.zeros(ids.shape[0], dtype=torch.int64, device=device).index_add_(0, sel[0], (~right).long())
            passed += int((per_seq == 0).sum())
            total += ids.shape[0]
            tok_ok += int(right.sum())
            tok_n += int(right.numel())
        out[b] = (passed, total, tok_ok / max(1, tok_n))
    model.train()
    return out


# -------------------------------------------------------------------------------------------- export

def atomic_write(path, write):
    tmp = path + ".tmp.partial"
    write(tmp)
    os.replace(tmp, path)


def export(model, cfg, out, special_ids):
    from safetensors.torch import save_file
    os.makedirs(out, exist_ok=True)
    tensors = {k: v.detach().to(torch.bfloat16).contiguous().cpu() for k, v in model.state_dict().items()}
    atomic_write(os.path.join(out, "model.safetensors"), lambda p: save_file(tensors, p, metadata={"format": "pt"}))
    config = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": special_ids["<|endoftext|>"],
        "eos_token_id": special_ids["<|im_end|>"],
        "pad_token_id": special_ids["<|endoftext|>"],
        "head_dim": cfg.head_dim,
        "hidden_act": "silu",
        "hidden_size": cfg.hidden_size,
        "initializer_range": 0.02,
        "intermediate_size": cfg.intermediate_size,
        "max_position_embeddings": cfg.max_position_embeddings,
        "max_window_layers": cfg.num_hidden_layers,
        "num_attention_heads": cfg.num_attention_heads,
        "num_hidden_layers": cfg.num_hidden_layers,
        "num_key_value_heads": cfg.num_key_value_heads,
        "rms_norm_eps": cfg.rms_norm_eps,
        "rope_scaling": None,
        "rope_theta": cfg.rope_theta,
        "sliding_window": None,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": cfg.vocab_size,
    }
    gen = {"bos_token_id": special_ids["<|endoftext|>"], "eos_token_id": [special_ids["<|im_end|>"], special_ids["<|endoftext|>"]],
           "pad_token_id": special_ids["<|endoftext|>"], "do_sample": False}
    for name, obj in (("config.json", config), ("generation_config.json", gen)):
        atomic_write(os.path.join(out, name), lambda p, obj=obj: open(p, "w").write(json.dumps(obj, indent=2) + "\n"))


def check_transformers(model, out, tokenizer_dir, data, device):
    """Loads the export with transformers' Qwen3ForCausalLM and compares logits on one sequence."""
    import shutil
    import tempfile
    from transformers import AutoModelForCausalLM
    tmp = tempfile.mkdtemp()
    for f in ("config.json", "generation_config.json", "model.safetensors"):
        shutil.copy(os.path.join(out, f), tmp)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        if tokenizer_dir:
            shutil.copy(os.path.join(tokenizer_dir, f), tmp)
    hf = AutoModelForCausalLM.from_pretrained(tmp, dtype=torch.float32).to(device).eval()
    s = data.by_bucket[data.buckets[0]][0]
    ids, _ = data.batch(np.asarray([s]), None, redraw=False)
    ids_t = torch.from_numpy(ids).to(device)
    ours = Qwen3(model.cfg).to(device)
    ours.load_state_dict({k: v.to(torch.bfloat16).float() for k, v in model.state_dict().items()})
    with torch.no_grad():
        a = ours.logits(ours.hidden(ids_t)).float()
        b = hf(input_ids=ids_t).logits.float()
    diff = (a - b).abs().max().item()
    agree = (a.argmax(-1) == b.argmax(-1)).float().mean().item()
    return {"max_abs_logit_diff": diff, "argmax_agreement": agree, "tokens": ids.shape[1]}


# ---------------------------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--eval", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokenizer", help="folder with tokenizer.json (its special-token ids go into config.json)")
    ap.add_argument("--minutes", type=float, default=7.0, help="training time budget (evaluation and export come after)")
    ap.add_argument("--end-by", type=float, default=0, help="unix time by which training must stop, leaving 60 s "
                    "for the final evaluation and export (the device's command limit); 0: --minutes alone")
    ap.add_argument("--save-every", type=float, default=60.0, help="seconds between exports")
    ap.add_argument("--tokens-per-step", type=int, default=131072)
    ap.add_argument("--early-tokens-per-step", type=int, default=32768,
                    help="tokens a step before --early-until of the budget (more, smaller steps early); 0: --tokens-per-step")
    ap.add_argument("--early-until", type=float, default=0.35)
    ap.add_argument("--warm-data", help="make_data.py --strip-prose data: the warm-up phase (v3)")
    ap.add_argument("--warm-eval", help="held-out --strip-prose data, evaluated beside --eval")
    ap.add_argument("--mrcr-eval", help="held-out MRCR data (v4), evaluated beside --eval")
    ap.add_argument("--mrcr-answer-cap", type=float, default=64.0,
                    help="an MRCR answer (hundreds of tokens) weighs at most this many answer tokens in the loss (v4)")
    ap.add_argument("--warm-until", type=float, default=0.35, help="fraction of the budget spent on --warm-data alone")
    ap.add_argument("--warm-mix", type=float, default=0.15, help="share of later steps still drawn from --warm-data")
    ap.add_argument("--lm-weight", type=float, default=0.1,
                    help="weight of a language-model loss on every token beside the answer loss (v1: 0)")
    ap.add_argument("--log-every", type=int, default=25, help="steps between loss records")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=float, default=0.03, help="fraction of the budget")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    ap.add_argument("--check-transformers", action="store_true")
    # Model shape (defaults: the shipped demo model).
    for f in ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size"):
        ap.add_argument("--" + f.replace("_", "-"), type=int, default=getattr(ModelConfig, f))
    ap.add_argument("--rope-theta", type=float, default=ModelConfig.rope_theta)
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    device = torch.device(a.device)
    dtype = torch.bfloat16 if a.dtype == "bfloat16" else torch.float32
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    special_ids = {"<|endoftext|>": 0, "<|im_end|>": 0}
    vocab = 4096
    if a.tokenizer:
        tj = json.load(open(os.path.join(a.tokenizer, "tokenizer.json")))
        special_ids = {t["content"]: t["id"] for t in tj["added_tokens"]}
        vocab = len(tj["model"]["vocab"]) + sum(1 for t in tj["added_tokens"] if t["content"] not in tj["model"]["vocab"])
    cfg = ModelConfig(vocab_size=vocab, hidden_size=a.hidden_size, num_hidden_layers=a.num_hidden_layers,
                      num_attention_heads=a.num_attention_heads, num_key_value_heads=a.num_key_value_heads,
                      head_dim=a.head_dim, intermediate_size=a.intermediate_size, rope_theta=a.rope_theta)
    t0 = time.time()
    train, held = Data(a.data), Data(a.eval)
    warm = Data(a.warm_data) if a.warm_data else None
    warm_held = Data(a.warm_eval) if a.warm_eval else None
    mrcr_held = Data(a.mrcr_eval) if a.mrcr_eval else None
    model = Qwen3(cfg).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model {asdict(cfg)}: {n_params / 1e6:.2f} M parameters; data {len(train.tokens) / 1e6:.1f} M tokens "
          f"(buckets {train.buckets}), held out {len(held.lengths)} trials; loaded in {time.time() - t0:.1f} s", flush=True)

    decay = [p for n, p in model.named_parameters() if p.dim() == 2 and "embed" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() == 2 and "embed" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8, fused=device.type == "cuda")

    log = {"config": asdict(cfg), "parameters": n_params, "args": vars(a), "curriculum": CURRICULUM,
           "steps": [], "evals": []}
    start = time.time()
    budget = a.minutes * 60.0
    if a.end_by > 0:
        budget = min(budget, a.end_by - 60.0 - start)
    print(f"training for {budget:.0f} s", flush=True)
    last_save = start
    step, tokens_seen, answer_tokens = 0, 0, 0
    acc_loss, acc_right, acc_n, acc_steps = 0.0, 0, 0, 0

    def write_log():
        atomic_write(os.path.join(a.out, "train_log.json"), lambda p: open(p, "w").write(json.dumps(log) + "\n"))

    os.makedirs(a.out, exist_ok=True)
    while True:
        elapsed = time.time() - start
        progress = elapsed / budget
        if progress >= 1.0:
            break
        if warm is not None and (progress < a.warm_until or rng.random() < a.warm_mix):
            src = warm
            bucket = pick_bucket(min(1.0, progress / a.warm_until), warm.buckets, rng, WARM_CURRICULUM)
        else:
            src = train
            main_progress = (progress - a.warm_until) / (1 - a.warm_until) if warm is not None else progress
            bucket = pick_bucket(main_progress, train.buckets, rng)
        step_tokens = a.early_tokens_per_step if a.early_tokens_per_step and progress < a.early_until else a.tokens_per_step
        per = max(1, step_tokens // bucket)
        samples = rng.choice(src.by_bucket[bucket], size=per, replace=len(src.by_bucket[bucket]) < per)
        ids, mask = src.batch(samples, rng, redraw=True)
        rows, cols = np.nonzero(mask)  # on the host: no device sync for a data-dependent shape
        pin = device.type == "cuda"
        to_dev = lambda a: (torch.from_numpy(a).pin_memory() if pin else torch.from_numpy(a)).to(device, non_blocking=pin)
        ids_t, rows_t, cols_t = to_dev(ids), to_dev(rows.astype(np.int64)), to_dev(cols.astype(np.int64))
        lr = learning_rate(progress, a.lr, a.warmup)
        for g in opt.param_groups:
            g["lr"] = lr
        with torch.autocast(device_type=device.type, dtype=dtype, enabled=dtype != torch.float32):
            h = model.hidden(ids_t)
        logits = model.logits(h[rows_t, cols_t].float())
        targets = ids_t[rows_t, cols_t + 1]
        # Each answer token weighs 1, except MRCR's: its answer (a whole reply, up to ~1,050 tokens)
        # weighs at most --mrcr-answer-cap tokens, so it does not drown the short code answers.
        n_ans = mask.sum(axis=1)
        w_row = np.where(src.task[samples] == TASK_MRCR, np.minimum(1.0, a.mrcr_answer_cap / np.maximum(1, n_ans)), 1.0)
        w_t = to_dev(w_row[rows].astype(np.float32))
        ce = F.cross_entropy(logits, targets, reduction="none")
        loss = (ce * w_t).sum() / w_t.sum()
        if a.lm_weight > 0:  # next-token loss on every real (unpadded) position
            lens_t = to_dev(src.lengths[samples].astype(np.int64))
            valid = torch.arange(ids.shape[1] - 1, device=device)[None, :] < (lens_t[:, None] - 1)
            with torch.autocast(device_type=device.type, dtype=dtype, enabled=dtype != torch.float32):
                all_logits = model.logits(h[:, :-1])
            lm = F.cross_entropy(all_logits.float().flatten(0, 1), ids_t[:, 1:].flatten(), reduction="none")
            loss = loss + a.lm_weight * (lm * valid.flatten()).sum() / valid.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        tokens_seen += ids.size
        answer_tokens += int(mask.sum())
        acc_loss += loss.detach()  # tensors: read back only when logged
        acc_right += (logits.argmax(-1) == targets).sum()
        acc_n += targets.numel()
        acc_steps += 1
        if step % a.log_every == 0:
            rec = {"step": step, "time_s": round(time.time() - start, 1), "bucket": bucket, "lr": lr,
                   "loss": float(acc_loss) / acc_steps, "answer_token_acc": float(acc_right) / acc_n,
                   "grad_norm": float(gnorm), "tokens": tokens_seen, "answer_tokens": answer_tokens}
            log["steps"].append(rec)
            print(f"step {step:5d} {rec['time_s']:6.1f}s b{bucket:5d} lr {lr:.2e} loss {rec['loss']:.4f} "
                  f"acc {rec['answer_token_acc']:.3f} gn {rec['grad_norm']:.2f} tok {tokens_seen / 1e6:.0f}M "
                  f"({tokens_seen / max(1e-9, time.time() - start) / 1e6:.2f} M/s)", flush=True)
            acc_loss, acc_right, acc_n, acc_steps = 0.0, 0, 0, 0
        if time.time() - last_save >= a.save_every:
            ev = evaluate(model, held, device, dtype, a.tokens_per_step)
            rec = {"step": step, "time_s": round(time.time() - start, 1),
                   "pass": {str(b): [p, n] for b, (p, n, _) in ev.items()},
                   "token_acc": {str(b): acc for b, (_, _, acc) in ev.items()}}
            print("eval " + "  ".join(f"{b}: {p}/{n} ({acc:.3f})" for b, (p, n, acc) in ev.items()), flush=True)
            if warm_held is not None:
                wev = evaluate(model, warm_held, device, dtype, a.tokens_per_step)
                rec["stripped_pass"] = {str(b): [p, n] for b, (p, n, _) in wev.items()}
                print("eval stripped " + "  ".join(f"{b}: {p}/{n} ({acc:.3f})" for b, (p, n, acc) in wev.items()), flush=True)
            if mrcr_held is not None:
                mev = evaluate(model, mrcr_held, device, dtype, a.tokens_per_step)
                rec["mrcr_pass"] = {str(b): [p, n] for b, (p, n, _) in mev.items()}
                rec["mrcr_token_acc"] = {str(b): acc for b, (_, _, acc) in mev.items()}
                print("eval mrcr " + "  ".join(f"{b}: {p}/{n} ({acc:.3f})" for b, (p, n, acc) in mev.items()), flush=True)
            log["evals"].append(rec)
            export(model, cfg, a.out, special_ids)
            write_log()
            last_save = time.time()

    train_s = time.time() - start
    ev = evaluate(model, held, device, dtype, a.tokens_per_step)
    log["final_eval"] = {str(b): {"passed": p, "total": n, "token_acc": acc} for b, (p, n, acc) in ev.items()}
    log["train_seconds"] = train_s
    log["total_steps"] = step
    log["total_tokens"] = tokens_seen
    print("final eval " + "  ".join(f"{b}: {p}/{n} ({acc:.3f})" for b, (p, n, acc) in ev.items()), flush=True)
    if mrcr_held is not None:
        mev = evaluate(model, mrcr_held, device, dtype, a.tokens_per_step)
        log["final_eval_mrcr"] = {str(b): {"passed": p, "total": n, "token_acc": acc} for b, (p, n, acc) in mev.items()}
        print("final eval mrcr " + "  ".join(f"{b}: {p}/{n} ({acc:.3f})" for b, (p, n, acc) in mev.items()), flush=True)
    export(model, cfg, a.out, special_ids)
    if a.check_transformers:
        try:
            log["transformers_check"] = check_transformers(model, a.out, a.tokenizer, held, device)
        except Exception as e:  # the export stays; the failure is recorded and shown
            log["transformers_check"] = {"error": repr(e)}
        print("transformers check", log["transformers_check"], flush=True)
    write_log()
    print(f"done: {step} steps, {tokens_seen / 1e6:.0f} M tokens in {train_s:.0f} s; total {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
