#!/usr/bin/env python3
"""Parsing a capture from Python: roceconf vs Scapy on the same file, side by side.

Both read every frame and its BTH opcode and PSN (the work of any analysis script). The capture
is build/roceconf-gen's synthetic traffic (RoCEv2/v1, RC/UC/UD, CM), 100,000 frames by default.

    PYTHONPATH=build/python /usr/bin/python3 bindings/bench/bench_vs_scapy.py [--frames N]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time


def bench_roceconf(path):
    import roceconf
    from roceconf import BTH
    start = time.perf_counter()
    frames = with_bth = psn_sum = 0
    for pkt in roceconf.read_pcap(path):
        frames += 1
        bth = pkt.getlayer(BTH)
        if bth is not None:
            with_bth += 1
            psn_sum += bth.psn + bth.opcode
    return time.perf_counter() - start, frames, with_bth, psn_sum


def bench_scapy(path):
    from scapy.all import rdpcap
    from scapy.contrib.roce import BTH
    start = time.perf_counter()
    frames = with_bth = psn_sum = 0
    for pkt in rdpcap(path):
        frames += 1
        bth = pkt.getlayer(BTH)
        if bth is not None:
            with_bth += 1
            psn_sum += bth.psn + bth.opcode
    return time.perf_counter() - start, frames, with_bth, psn_sum


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--gen", default=os.environ.get(
        "ROCECONF_GEN", os.path.join(here, "..", "..", "build", "roceconf-gen")))
    parser.add_argument("--capture", help="an existing capture instead of a generated one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.capture
        if not path:
            path = os.path.join(tmp, "bench.pcap")
            subprocess.run([args.gen, "--frames", str(args.frames), "--seed", "1", "--out", path],
                           check=True, capture_output=True)
        ours = bench_roceconf(path)
        theirs = bench_scapy(path)
    print(f"capture: {ours[1]} frames ({os.path.basename(path)})")
    print(f"roceconf  {ours[0]:8.2f} s  {ours[1] / ours[0]:>10,.0f} frames/s  "
          f"({ours[2]} with a BTH)")
    print(f"scapy     {theirs[0]:8.2f} s  {theirs[1] / theirs[0]:>10,.0f} frames/s  "
          f"({theirs[2]} with a BTH)")
    ratio = theirs[0] / ours[0]
    print(f"roceconf is {ratio:.1f}x faster")
    if ours[1] != theirs[1]:
        print("frame counts differ", file=sys.stderr)
        return 1
    return 0 if ratio >= 20 else 1


if __name__ == "__main__":
    sys.exit(main())
