#!/usr/bin/env python3
"""Checks on kvgate's reports for tests/reports-*-test.cpp (standard library only).

  report_check.py xml FILE   parses FILE strictly as XML (expat: well-formed or an error), then prints
                             JSON facts about it: every <svg> (title, axes, tick labels, axis titles),
                             elements and attributes that could run code or fetch something, text.
  report_check.py png FILE   decodes an 8-bit RGB/RGBA PNG (zlib + the five scanline filters) and
                             prints JSON: width, height, non-white pixels, strongly red pixels (the
                             FAIL verdict, heatmap failures), distinct colours (up to 4096).
Exit 0 with JSON on stdout; exit 1 with a message on stderr when the file does not parse.
"""
import json
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

# Elements and attributes that could run code or load something from elsewhere.
ACTIVE_ELEMENTS = {"script", "iframe", "object", "embed", "link", "img", "image", "use", "foreignObject", "audio",
                   "video", "source", "base", "form", "meta-refresh", "frame", "frameset", "applet"}
URL_ATTRIBUTES = {"href", "src", "xlink:href", "action", "formaction", "data", "poster", "srcset", "background"}


def local(tag):
    return tag.split("}", 1)[1] if "}" in tag else tag


def text_of(el):
    return "".join(el.itertext()).strip()


def svg_facts(svg):
    axes = {}
    for g in svg.iter():
        if local(g.tag) != "g":
            continue
        classes = (g.get("class") or "").split()
        if "axis" not in classes:
            continue
        which = "x" if "x-axis" in classes else "y" if "y-axis" in classes else "?"
        ticks = [text_of(t) for t in g.iter() if local(t.tag) == "text" and "tick" in (t.get("class") or "").split()]
        titles = [text_of(t) for t in g.iter() if local(t.tag) == "text" and "axis-title" in (t.get("class") or "").split()]
        lines = sum(1 for t in g.iter() if local(t.tag) == "line")
        axes[which] = {"ticks": ticks, "titles": titles, "lines": lines}
    title = next((text_of(c) for c in svg if local(c.tag) == "title"), "")
    return {"title": title, "aria_label": svg.get("aria-label") or "", "axes": axes, "viewBox": svg.get("viewBox") or ""}


def tag_counts(root):
    counts = {}
    for el in root.iter():
        counts[local(el.tag)] = counts.get(local(el.tag), 0) + 1
    return counts


def xml_facts(path):
    raw = open(path, "rb").read()
    root = ET.fromstring(raw)  # raises ParseError when not well-formed
    active, url_attrs, handlers = [], [], []
    for el in root.iter():
        name = local(el.tag)
        if name in ACTIVE_ELEMENTS:
            active.append(name)
        for k, v in el.attrib.items():
            key = local(k)
            if key.lower().startswith("on"):
                handlers.append(key)
            if key in URL_ATTRIBUTES and not v.startswith("#"):
                url_attrs.append(f"{name}@{key}={v[:80]}")
            if "://" in v or v.strip().lower().startswith(("javascript:", "data:", "//")):
                url_attrs.append(f"{name}@{key}={v[:80]}")
    styles = " ".join(text_of(s) for s in root.iter() if local(s.tag) == "style")
    lower = raw.decode("utf-8").lower()
    return {
        "root": local(root.tag),
        "svgs": [svg_facts(s) for s in root.iter() if local(s.tag) == "svg"],
        "active_elements": active,
        "url_attributes": url_attrs,
        "event_handlers": handlers,
        "style_urls": styles.count("url(") + styles.count("@import"),
        "raw_http": lower.count("http://") + lower.count("https://"),
        "elements": sum(1 for _ in root.iter()),
        "tag_counts": tag_counts(root),
        "text": text_of(root),
    }


def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = ihdr
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def png_facts(path):
    width, height, bpp, rows = png_pixels(path)
    non_white, red, colours = 0, 0, set()
    for line in rows:
        for x in range(0, len(line), bpp):
            px = line[x:x + 3]
            if px != b"\xff\xff\xff":
                non_white += 1
                if px[0] > 150 and px[1] < 90 and px[2] < 90:
                    red += 1
            if len(colours) < 4096:
                colours.add(bytes(px))
    return {"width": width, "height": height, "non_white": non_white, "red": red, "distinct_colours": len(colours)}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("xml", "png"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        facts = xml_facts(sys.argv[2]) if sys.argv[1] == "xml" else png_facts(sys.argv[2])
    except (ET.ParseError, ValueError, OSError, zlib.error, UnicodeDecodeError) as e:
        print(f"{sys.argv[2]}: {e}", file=sys.stderr)
        return 1
    json.dump(facts, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
