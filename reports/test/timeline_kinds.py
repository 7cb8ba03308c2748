#!/usr/bin/env python3
"""Finds, in a rendered HTML report's DOM, a case whose timeline shows the four records on one
clock: packets (sent or received), control-API events, counter changes and device kernel log
lines, in time order, under the legend that names them.

Usage: timeline_kinds.py DOM.html [CASE-ID]. Prints the case and what its timeline holds; exit 1
when no case (or not CASE-ID) has all four."""
import re
import sys

KINDS = {
    "packets": ("sent", "received"),
    "control": ("control",),
    "counters": ("counter",),
    "kernel log": ("kernel-log",),
}


def cases(dom):
    for m in re.finditer(r'<section class="case [^"]*" id="case-([^"]+)">(.*?)</section>', dom,
                         re.S):
        yield m.group(1), m.group(2)


def timeline(section):
    """(kind, microseconds, text) of each timeline entry, in page order."""
    out = []
    for m in re.finditer(
            r'<li class="ev [^"]*" data-kind="([^"]+)"><span class="t">\+(-?[0-9.]+) µs</span>'
            r'<div class="m">(.*?)</div></li>', section, re.S):
        body = re.sub(r'<(span class="(step|tag)"|details).*?</(span|details)>', "", m.group(3),
                      flags=re.S)
        text = re.sub(r"<[^>]+>", "", body).strip()
        out.append((m.group(1), float(m.group(2)), text))
    return out


def main():
    dom = open(sys.argv[1], encoding="utf-8").read()
    want = sys.argv[2] if len(sys.argv) > 2 else None
    for case, section in cases(dom):
        if want and case != want:
            continue
        entries = timeline(section)
        found = {name: [e for e in entries if e[0] in kinds] for name, kinds in KINDS.items()}
        if not all(found.values()):
            continue
        legend = re.search(r'<div class="legend">(.*?)</div>', section, re.S)
        if not legend or not all(
                w in legend.group(1)
                for w in ("packets", "control API", "counter changes", "device kernel log")):
            print(f"FAIL: case {case}: the timeline has no legend naming the four records")
            return 1
        times = [e[1] for e in entries]
        if times != sorted(times):
            print(f"FAIL: case {case}: the timeline is not in time order: {times}")
            return 1
        print(f"OK: case {case}: {len(entries)} entries on one clock, " + ", ".join(
            f"{len(v)} {k}" for k, v in found.items()))
        for name, items in found.items():
            kind, t, text = items[0]
            print(f"  {name}: +{t} µs {kind}: {text[:110]}")
        return 0
    print("FAIL: no case" + (f" {want}" if want else "") +
          " shows packets, control events, counter changes and kernel log lines together")
    return 1


if __name__ == "__main__":
    sys.exit(main())
