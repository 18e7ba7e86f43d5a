#!/usr/bin/env python3
"""scripts/bench_gasnet_table.py - the table of scripts/bench-gasnet.sh: reads
WORK/{telemem,gasnet}/TEST.ROUND.out, takes each figure as a time per
operation in microseconds (testsmall's and testlarge's latencies as
printed, their throughputs turned into the time of one transfer, testam's
average times), and prints per test and size the median over the rounds
of each side and their ratio (Telemem / GASNet; below 1: Telemem faster),
then per test the geometric mean and the largest ratio, and the load
average (1 minute) before each run."""
import glob
import math
import os
import re
import statistics
import sys

SMALL = re.compile(r"^\w: +\d+ - +(\d+) byte : +(\d+) iters, "
                   r"(?:latency +(\d+) us total, +[\d.]+ us ave\."
                   r"|throughput +([\d.]+) (KB|MB)/sec) \((.+)\)\s*$")
AM = re.compile(r"^\w: (?:\d+: )?(.+?)\s*: +[\d.]+ sec +([\d.]+) us")


def parse(path):
    """{key: microseconds} and the load before the run."""
    out, load = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("load "):
                load = float(line.split()[1])
                continue
            m = SMALL.match(line)
            if m:
                size = int(m.group(1))
                if m.group(3) is not None:  # the total: more digits
                    us = float(m.group(3)) / int(m.group(2))
                else:
                    rate = float(m.group(4)) * 1024.0
                    if m.group(5) == "MB":
                        rate *= 1024.0
                    if rate <= 0:
                        continue
                    us = size / rate * 1e6
                out[(m.group(6), size)] = us
                continue
            m = AM.match(line)
            if m:
                out[(" ".join(m.group(1).split()), 0)] = float(m.group(2))
    return out, load


def main():
    work, tests = sys.argv[1], sys.argv[2:]
    for t in tests:
        figs = {"telemem": {}, "gasnet": {}}
        loads = {"telemem": [], "gasnet": []}
        for impl in figs:
            for p in sorted(glob.glob(os.path.join(work, impl, t + ".*.out"))):
                vals, load = parse(p)
                loads[impl].append(load)
                for k, v in vals.items():
                    figs[impl].setdefault(k, []).append(v)
        keys = [k for k in figs["telemem"] if k in figs["gasnet"]]
        print(f"\n## {t}\n")
        print("load before each run, telemem: "
              + " ".join(str(x) for x in loads["telemem"])
              + "; gasnet: " + " ".join(str(x) for x in loads["gasnet"]))
        print("\n| what | size | telemem us | gasnet us | ratio |")
        print("|---|---|---|---|---|")
        ratios = []
        for k in keys:
            a = statistics.median(figs["telemem"][k])
            b = statistics.median(figs["gasnet"][k])
            r = a / b if b > 0 else float("inf")
            if b > 0 and a > 0:
                ratios.append(r)
            print(f"| {k[0]} | {k[1] or ''} | {a:.4g} | {b:.4g} | {r:.2f} |")
        if ratios:
            gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            over = sum(1 for x in ratios if x > 1.2)
            print(f"\n{t}: {len(ratios)} figures, geometric mean "
                  f"{gm:.2f}, largest {max(ratios):.2f}, "
                  f"{over} above 1.2")


if __name__ == "__main__":
    main()
