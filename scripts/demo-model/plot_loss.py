#!/usr/bin/env python3
"""Draws train_log.json's loss curve (answer-token cross-entropy against training time) as an SVG,
with the held-out answer-token accuracy per bucket: no plotting library needed.

Usage: plot_loss.py train_log.json loss_curve.svg
"""
import json
import sys

W, H, L, R, T, B = 720, 360, 60, 170, 20, 40
COLORS = {"1024": "#1b9e77", "2048": "#d95f02", "4096": "#7570b3", "8192": "#e7298a", "16384": "#66a61e"}


def main():
    log = json.load(open(sys.argv[1]))
    steps = log["steps"]
    t_max = max(s["time_s"] for s in steps)
    l_max = max(s["loss"] for s in steps)
    x = lambda t: L + (W - L - R) * t / t_max
    y = lambda v, top: T + (H - T - B) * (1 - v / top)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>']
    for i in range(5):
        v = l_max * i / 4
        out.append(f'<text x="{L - 5}" y="{y(v, l_max) + 4:.1f}" text-anchor="end">{v:.2f}</text>')
        t = t_max * i / 4
        out.append(f'<text x="{x(t):.1f}" y="{H - B + 15}" text-anchor="middle">{t:.0f}</text>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 5}" text-anchor="middle">training time (s)</text>')
    out.append(f'<text x="15" y="{(T + H - B) / 2}" transform="rotate(-90 15 {(T + H - B) / 2})" '
               f'text-anchor="middle">answer-token loss (nats)</text>')
    pts = " ".join(f"{x(s['time_s']):.1f},{y(s['loss'], l_max):.1f}" for s in steps)
    out.append(f'<polyline points="{pts}" fill="none" stroke="black" stroke-width="1.5"/>')
    # Held-out answer-token accuracy (0..1 on the same height), dashed, one line per bucket.
    evals = log.get("evals", [])
    for b, color in COLORS.items():
        pts = [(e["time_s"], e["token_acc"][b]) for e in evals if b in e.get("token_acc", {})]
        if pts:
            out.append(f'<polyline points="{" ".join(f"{x(t):.1f},{y(a, 1.0):.1f}" for t, a in pts)}" fill="none" '
                       f'stroke="{color}" stroke-dasharray="4 3" stroke-width="1.5"/>')
    # v4: the held-out MRCR answer-token accuracy (mean over its buckets), dotted.
    mrcr = [(e["time_s"], sum(e["mrcr_token_acc"].values()) / len(e["mrcr_token_acc"])) for e in evals if e.get("mrcr_token_acc")]
    if mrcr:
        out.append(f'<polyline points="{" ".join(f"{x(t):.1f},{y(a, 1.0):.1f}" for t, a in mrcr)}" fill="none" '
                   f'stroke="#666666" stroke-dasharray="1 2" stroke-width="1.5"/>')
    ly = T + 10
    out.append(f'<text x="{W - R + 10}" y="{ly}">— train loss</text>')
    for b, color in COLORS.items():
        ly += 16
        out.append(f'<text x="{W - R + 10}" y="{ly}" fill="{color}">- - held-out acc {b}</text>')
    if mrcr:
        ly += 16
        out.append(f'<text x="{W - R + 10}" y="{ly}" fill="#666666">··· held-out acc MRCR</text>')
    out.append(f'<text x="{W - R + 10}" y="{ly + 20}">(acc axis: 0..1)</text>')
    out.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
