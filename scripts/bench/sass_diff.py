#!/usr/bin/env python3
"""Compare the machine code of CUDA sources before (a git revision) and after (the work tree), no GPU needed.

  scripts/bench/sass_diff.py --build build --rev REV [--out DIR] [--cuobjdump PATH] kernels/x.cu ...

Each source compiles twice with its own nvcc command line from BUILD/compile_commands.json (configure
with -DKVGATE_CUDA=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON): once as `git show REV:SOURCE` (its
includes still resolve against the work tree, so headers a refactor adds must not change what REV
compiled) and once as it is now. Per kernel it compares `cuobjdump -sass` (instructions, with the
addresses, encodings and the kernel's own name left out) and `cuobjdump -res-usage` (registers, stack,
shared and local memory), and prints a Markdown table: a refactor that inlines to the same code reads
"same" in every row, "reordered" where ptxas scheduled and allocated the same instructions otherwise
(registers may then differ); a
column names the instruction classes (tensor-core, fp32, MUFU, shuffle, shared, global, barrier, other)
whose counts changed. Exit 1 when a kernel differs otherwise or is missing on one side, 2 on bad usage.
"""
import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fail(msg):
    print(f"sass_diff: {msg}", file=sys.stderr)
    sys.exit(2)


def compile_command(build, source):
    path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(path):
        fail(f"{path} not found: configure BUILD with -DKVGATE_CUDA=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
    want = os.path.realpath(os.path.join(ROOT, source))
    for entry in json.load(open(path)):
        if os.path.realpath(os.path.join(entry["directory"], entry["file"])) == want:
            return entry["directory"], shlex.split(entry["command"])
    fail(f"{source} is not in {path}: is it a CUDA source of a target that the build configures?")


def compile_to(build, source, src_path, obj):
    directory, argv = compile_command(build, source)
    want = os.path.realpath(os.path.join(ROOT, source))
    out = []
    skip = False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        if arg == "-o":
            out += ["-o", obj]
            skip = True
        elif os.path.realpath(os.path.join(directory, arg)) == want:
            out.append(src_path)
        else:
            out.append(arg)
    if out and os.path.basename(out[0]) == "ccache":
        out = out[1:]  # compile for real: a cached object would hide nothing, but say nothing of this tree
    subprocess.run(out, cwd=directory, check=True)


# nvcc names an anonymous namespace after the file's path and a hash: the same on both sides.
ANON = re.compile(r"\d+_GLOBAL__N__[0-9a-f]{8}_\d+_[A-Za-z0-9_]+?_cu_[0-9a-f]{8}")


def dump(cuobjdump, obj, flag):
    text = subprocess.run([cuobjdump, flag, obj], check=True, capture_output=True, text=True).stdout
    return ANON.sub("12_GLOBAL__N_1", text)


def kernels_sass(text):
    """{(arch, function): [instruction, ...]}: addresses, encodings and the function's own name left out."""
    out, arch, name = {}, "", None
    for line in text.splitlines():
        m = re.match(r"\s*arch = (\S+)", line)
        if m:
            arch = m.group(1)
            continue
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            name = (arch, m.group(1))
            out[name] = []
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;", line)
        if m and name:
            out[name].append(m.group(1).replace(name[1], "<self>"))
    return out


def kernels_res(text):
    """{(arch, function): {REG, STACK, SHARED, LOCAL}} from cuobjdump -res-usage."""
    out, arch, name = {}, "", None
    for line in text.splitlines():
        m = re.search(r"arch = (\S+)", line)
        if m:
            arch = m.group(1)
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            name = (arch, m.group(1))
            continue
        if name and "REG:" in line:
            out[name] = {k: int(v) for k, v in re.findall(r"(REG|STACK|SHARED|LOCAL):(\d+)", line)}
            name = None
    return out


def short(fn):
    demangled = subprocess.run(["c++filt", fn], capture_output=True, text=True).stdout.strip() or fn
    for prefix in ("kvgate::kernels::cuda::", "(anonymous namespace)::", "void "):
        demangled = demangled.replace(prefix, "")
    if demangled.endswith(")"):  # the parameter list
        depth = 0
        for i in range(len(demangled) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(demangled[i], 0)
            if depth == 0:
                demangled = demangled[:i]
                break
    return demangled


# Instruction classes: what a kernel's time is made of (tensor cores, fp32 and MUFU maths, shuffles,
# shared and global memory, barriers), and the integer, predicate and control rest.
CLASSES = [
    ("tensor", r"H(GMMA|MMA)\b"),
    ("fp32", r"F(FMA|MUL|ADD|MNMX|SEL|SETP|CHK)\b"),
    ("MUFU", r"MUFU\b"),
    ("SHFL", r"SHFL\b"),
    ("shared", r"(LDS|STS|LDSM|ATOMS)\b"),
    ("global", r"(LDG|STG|LDGSTS|UBLKCP|ATOMG|RED|LDGDEPBAR)\b"),
    ("sync", r"(BAR|SYNCS|DEPBAR|WARPGROUP|MEMBAR)\b"),
]


def classes(ins):
    counts = {name: 0 for name, _ in CLASSES}
    counts["other"] = 0
    for i in ins or []:
        op = re.sub(r"^@!?U?P\w+\s+", "", i).split(" ")[0]
        for name, pat in CLASSES:
            if re.match(pat, op):
                counts[name] += 1
                break
        else:
            counts["other"] += 1
    return counts


def verdict(b, a, rb, ra):
    """same: identical instructions and resources; reordered: the same instructions in another order."""
    if b is None or a is None:
        return "MISSING"
    if b == a and rb == ra:
        return "same"
    if sorted(map(masked, b)) == sorted(map(masked, a)):
        return "reordered"
    return "DIFFERENT"


def masked(ins):
    """An instruction with its registers, reuse flags and branch targets left out."""
    ins = re.sub(r"\bU?R\d+\b", "R", ins.replace(".reuse", ""))
    ins = re.sub(r"\bU?P\d\b", "P", ins)
    return re.sub(r"0x[0-9a-f]+", "N", ins) if re.match(r"(@\S+ )?(BRA|BSSY|CALL|JMP)", ins) else ins


def delta(cb, ca):
    """The instruction classes whose counts differ ("none" where every class matches)."""
    diff = [f"{k} {cb[k]} -> {ca[k]}" for k in cb if cb[k] != ca[k]]
    return ", ".join(diff) if diff else "none"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="a CUDA build folder with compile_commands.json")
    ap.add_argument("--rev", required=True, help="the git revision to compare against (e.g. the commit before a refactor)")
    ap.add_argument("--out", default="/tmp/sass_diff", help="where the objects and dumps go")
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump")
    ap.add_argument("--skip-compile", action="store_true", help="reuse the objects under --out")
    ap.add_argument("sources", nargs="+", help="CUDA sources, relative to the repository root")
    args = ap.parse_args()
    if not os.path.exists(args.cuobjdump):
        fail(f"cuobjdump not found at {args.cuobjdump}: pass --cuobjdump (pip's nvidia-cuda-cuobjdump has one; it needs nvidia-cuda-nvdisasm's nvdisasm on the PATH)")
    rows, differ = [], False
    for source in args.sources:
        stem = os.path.basename(source).split(".")[0]
        objs = {}
        for side in ("before", "after"):
            obj = os.path.join(args.out, side, stem + ".o")
            objs[side] = obj
            if args.skip_compile:
                continue
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            src = os.path.join(ROOT, source)
            if side == "before":
                src = os.path.join(args.out, "src", source)
                os.makedirs(os.path.dirname(src), exist_ok=True)
                text = subprocess.run(["git", "-C", ROOT, "show", f"{args.rev}:{source}"], check=True, capture_output=True).stdout
                open(src, "wb").write(text)
            print(f"sass_diff: compiling {source} ({side})", file=sys.stderr)
            compile_to(args.build, source, src, obj)
        sass = {s: kernels_sass(dump(args.cuobjdump, objs[s], "-sass")) for s in objs}
        res = {s: kernels_res(dump(args.cuobjdump, objs[s], "-res-usage")) for s in objs}
        for key in sorted(set(sass["before"]) | set(sass["after"])):
            b, a = sass["before"].get(key), sass["after"].get(key)
            rb, ra = res["before"].get(key, {}), res["after"].get(key, {})
            same = verdict(b, a, rb, ra)
            differ = differ or same not in ("same", "reordered")
            spill = lambda ins: sum(1 for i in ins or [] if re.match(r"(@\S+ )?(STL|LDL)", i))
            h = lambda ins: hashlib.sha1("\n".join(ins).encode()).hexdigest()[:8] if ins is not None else "-"
            fmt = lambda v1, v2: str(v1) if v1 == v2 else f"{v1} -> {v2}"
            rows.append(
                f"| {stem} | {key[0]} | `{short(key[1])}` | {fmt(len(b or []), len(a or []))} | "
                f"{fmt(rb.get('REG', '-'), ra.get('REG', '-'))} | {fmt(rb.get('SHARED', '-'), ra.get('SHARED', '-'))} | "
                f"{fmt(rb.get('STACK', '-'), ra.get('STACK', '-'))} | {fmt(rb.get('LOCAL', '-'), ra.get('LOCAL', '-'))} | "
                f"{fmt(spill(b), spill(a))} | {delta(classes(b), classes(a))} | {same if same == 'same' else same + ' ' + h(b) + ' -> ' + h(a)} |")
    print("| file | arch | kernel | SASS instructions | registers | static shared B | stack B | local B | LDL+STL | "
          "changed classes (before -> after) | SASS |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
