#!/usr/bin/python3
"""Writes a section-5 man page from the Markdown reference it documents (PROFILE.md, cases/
README.md), so the page and the page beside the code are one text.
Usage: md2man.py NAME SECTION VERSION SUMMARY IN.md OUT"""
import re
import sys

name, section, version, summary, src, out = sys.argv[1:7]


def esc(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = re.sub(r"`([^`]+)`", r"\\fB\1\\fR", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    return ("\\&" + text) if text[:1] in (".", "'") else text


lines = [f'.TH {name.upper()} {section} "" "roceconf {version}" "roceconf"',
         ".SH NAME", f"{esc(name)} \\- {esc(summary)}", ".SH DESCRIPTION"]
in_code = False
for raw in open(src, encoding="utf-8").read().splitlines():
    if raw.startswith("```"):
        lines.append(".EE" if in_code else ".EX")
        in_code = not in_code
        continue
    if in_code:
        lines.append(("\\&" if raw[:1] in (".", "'") else "") + raw.replace("\\", "\\e"))
        continue
    m = re.match(r"^(#+)\s+(.*)", raw)
    if m:
        level = len(m.group(1))
        if level == 1:
            continue  # the title: NAME says it
        title = esc(m.group(2))
        lines.append(f'.SH "{title.upper()}"' if level == 2 else f'.SS "{title}"')
        continue
    if not raw.strip():
        lines.append(".PP")
        continue
    m = re.match(r"^\s*[-*]\s+(.*)", raw)
    if m:
        lines.append(".IP \\(bu 2")
        lines.append(esc(m.group(1)))
        continue
    lines.append(esc(raw.strip()))
lines.append(".SH SEE ALSO\n.BR roceconf (1)")
with open(out, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
