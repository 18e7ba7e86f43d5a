#!/usr/bin/python3
"""plot_netpipe.py - plots and summary for telemem-netpipe / NetPIPE CSVs.

Reads CSV files in the telemem-netpipe layout
    mode,touch,bytes,reps,usec_median,usec_min,mbps_median,mbps_max
('#' lines are comments) from the given files or directories, as written by
scripts/bench-netpipe.sh (NAME-rROUND.csv, memcpy.csv), and writes

  bandwidth.png  MB/s against message size (log x), NetPIPE style
  latency.png    one-way time against message size (log-log)
  ratio.png      bandwidth relative to Telemem, like Fig. 5 of the paper
  memcpy.png     the copy reference (telemem-memcpy-bw) at each offset
  summary.md     (--summary FILE) the project's targets: 8 B latency and
                 64 KiB / 1 MiB bandwidth against Open MPI, memcpy reference

Several rounds of one series are combined per size: the median over rounds
of each round's median ("med"), and the minimum over rounds of each round's
minimum ("best").  The summary needs only the standard library; the plots
need matplotlib (Debian: python3-matplotlib, hence /usr/bin/python3).
Without it the script says so and exits 0 without plots.
"""

import argparse
import csv
import os
import re
import statistics
import sys
from collections import defaultdict

FIELDS = ["mode", "touch", "bytes", "reps", "usec_median", "usec_min",
          "mbps_median", "mbps_max"]
KEY_SIZES = [65536, 1048576]


def series_of(path):
    """Series name from a file name: telemem-bw-touch-r2.csv -> telemem-bw-touch."""
    base = os.path.basename(path)
    base = re.sub(r"\.csv$", "", base)
    return re.sub(r"-r\d+$", "", base)


def round_of(path):
    m = re.search(r"-r(\d+)\.csv$", os.path.basename(path))
    return int(m.group(1)) if m else 0


def label_of(series, mode, touch):
    """Curve label: one per (program, mode, touch, offset)."""
    if mode.startswith(("memcpy", "loop")):
        return mode
    if series.startswith("telemem"):
        label = "telemem-" + mode + ("*" if touch else "")
        m = re.search(r"-off(\S+)$", series)
        if m:
            label += " off" + m.group(1).replace("_", ",")
        return label
    return series


def read_csv(path):
    rows = []
    with open(path, newline="") as f:
        lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    for rec in csv.reader(lines):
        if not rec or rec[0] == "mode":
            continue
        if len(rec) != len(FIELDS):
            print(f"plot_netpipe.py: {path}: skipping malformed line {rec}",
                  file=sys.stderr)
            continue
        r = dict(zip(FIELDS, rec))
        try:
            rows.append({
                "mode": r["mode"],
                "touch": r["touch"] not in ("0", "no", ""),
                "bytes": int(r["bytes"]),
                "usec_median": float(r["usec_median"]),
                "usec_min": float(r["usec_min"]),
            })
        except ValueError:
            print(f"plot_netpipe.py: {path}: skipping bad line {rec}",
                  file=sys.stderr)
    return rows


def collect(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p)
                            if f.endswith(".csv"))
        else:
            files.append(p)
    # data[label][bytes] = list of (round, usec_median, usec_min)
    data = defaultdict(lambda: defaultdict(list))
    for path in files:
        s, rnd = series_of(path), round_of(path)
        for row in read_csv(path):
            lab = label_of(s, row["mode"], row["touch"])
            data[lab][row["bytes"]].append(
                (rnd, row["usec_median"], row["usec_min"]))
    return files, data


class Curve:
    """Per-size combination of the rounds of one label."""

    def __init__(self, per_size):
        self.sizes = sorted(per_size)
        self.med = {n: statistics.median(v[1] for v in per_size[n])
                    for n in self.sizes}
        self.best = {n: min(v[2] for v in per_size[n]) for n in self.sizes}
        self.rounds = {n: sorted(per_size[n]) for n in self.sizes}

    def mbps(self, n, best=False):
        us = (self.best if best else self.med).get(n)
        return n / us if us else None


def fmt(v, digits=3):
    if v is None:
        return "n/a"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def ratio(a, b):
    return a / b if a is not None and b else None


def verdict(r, target, smaller_is_better):
    if r is None:
        return "n/a"
    ok = r <= target if smaller_is_better else r >= target
    return "meets" if ok else "**misses**"


def size_name(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def write_summary(path, curves, files):
    c = curves.get
    out = []
    out.append("# NetPIPE-style results: Telemem vs Open MPI\n")
    env = os.path.join(os.path.dirname(path), "env.txt")
    if os.path.exists(env):
        out.append("```")
        with open(env) as f:
            out.append(f.read().rstrip())
        out.append("```\n")
    nr = max((round_of(f) for f in files), default=0)
    out.append(
        f"{len(files)} CSV files, {nr} round(s).  *med* = median over rounds "
        "of each run's median over its samples; *best* = the lowest time of "
        "any sample of any round.  Open MPI's NetPIPE only reports the best "
        "of its 3 trials per run, so its *med* is the median over rounds of "
        "those best-of-3 values (a slightly favourable figure for Open MPI); "
        "the *best/best* ratio is the like-for-like one.  usec = one-way "
        "time per message (ping-pong: half the round trip).  MB/s = 1e6 "
        "bytes/s; Gbit/s = 1e9 bit/s.\n")

    out.append("## Targets\n")
    out.append("| metric | Telemem med (best) | Open MPI med (best) | "
               "ratio med | ratio best/best | target | verdict (med, best) |")
    out.append("|---|---|---|---|---|---|---|")

    def lat_row(tl, ol, olabel):
        t, o = c(tl), c(ol)
        if not t or not o or 8 not in t.med or 8 not in o.med:
            out.append(f"| 8 B latency vs {olabel} | n/a | n/a | | | <= 1.0 | n/a |")
            return
        rm, rb = ratio(t.med[8], o.med[8]), ratio(t.best[8], o.best[8])
        out.append(
            f"| 8 B put latency, usec ({tl} vs {olabel}) | "
            f"{t.med[8]:.3f} ({t.best[8]:.3f}) | {o.med[8]:.3f} "
            f"({o.best[8]:.3f}) | {fmt(rm)} | {fmt(rb)} | <= 1.0 (aim 0.7) | "
            f"{verdict(rm, 1.0, True)}, {verdict(rb, 1.0, True)} |")

    def bw_row(tl, ol, n):
        t, o = c(tl), c(ol)
        if not t or not o or n not in t.med or n not in o.med:
            out.append(f"| {size_name(n)} bandwidth ({tl} vs {ol}) | n/a | n/a "
                       "| | | >= 1.0 | n/a |")
            return
        tm, tb, om, ob = t.mbps(n), t.mbps(n, True), o.mbps(n), o.mbps(n, True)
        rm, rb = ratio(tm, om), ratio(tb, ob)
        out.append(
            f"| {size_name(n)} bandwidth, MB/s ({tl} vs {ol}) | {fmt(tm)} "
            f"({fmt(tb)}) | {fmt(om)} ({fmt(ob)}) | {fmt(rm)} | {fmt(rb)} | "
            f">= 1.0 | {verdict(rm, 1.0, False)}, {verdict(rb, 1.0, False)} |")

    def paired(tl, ol, n, bandwidth):
        """Median over rounds of the same-round ratio Telemem / Open MPI:
        both ran minutes apart, so machine phases mostly cancel."""
        t, o = c(tl), c(ol)
        if not t or not o or n not in t.rounds or n not in o.rounds:
            return None, ""
        tr = {r: m for r, m, _ in t.rounds[n]}
        orr = {r: m for r, m, _ in o.rounds[n]}
        rs = sorted(set(tr) & set(orr))
        if not rs:
            return None, ""
        # time ratio for latency, bandwidth ratio (inverse) for bandwidth
        vals = [(orr[r] / tr[r]) if bandwidth else (tr[r] / orr[r])
                for r in rs]
        return statistics.median(vals), ", ".join(
            f"r{r}: {v:.2f}" for r, v in zip(rs, vals))

    lat_row("telemem-latency", "ompi", "ompi")
    if c("ompi-nocma"):
        lat_row("telemem-latency", "ompi-nocma", "ompi-nocma")
    for n in KEY_SIZES:
        bw_row("telemem-burst", "ompi", n)
        if c("ompi-nocma"):
            bw_row("telemem-burst", "ompi-nocma", n)
    out.append("")

    out.append("## Paired ratios (same round, median over rounds)\n")
    out.append("Each round runs Telemem and Open MPI back to back, so a "
               "slow phase of the VM mostly hits both; the median of the "
               "per-round ratios is the most robust figure here.\n")
    out.append("| metric | median of paired ratios | target | verdict | "
               "per round |")
    out.append("|---|---|---|---|---|")
    for ol in ("ompi", "ompi-nocma"):
        if not c(ol):
            continue
        r, per = paired("telemem-latency", ol, 8, False)
        out.append(f"| 8 B latency telemem-latency / {ol} | {fmt(r)} | "
                   f"<= 1.0 (aim 0.7) | {verdict(r, 1.0, True)} | {per} |")
        for n in KEY_SIZES:
            for tl in ("telemem-burst", "telemem-latency"):
                r, per = paired(tl, ol, n, True)
                out.append(f"| {size_name(n)} bandwidth {tl} / {ol} | "
                           f"{fmt(r)} | >= 1.0 | {verdict(r, 1.0, False)} "
                           f"| {per} |")
    out.append("")

    out.append("## Bandwidth at the key sizes, every series (MB/s med, "
               "Gbit/s med, best MB/s)\n")
    out.append("| series | " + " | ".join(size_name(n) for n in KEY_SIZES)
               + " |")
    out.append("|---|" + "---|" * len(KEY_SIZES))
    order = sorted(curves, key=lambda s: (not s.startswith("telemem"),
                                          s.startswith(("memcpy", "loop")), s))
    for lab in order:
        cv = curves[lab]
        cells = []
        for n in KEY_SIZES:
            m, b = cv.mbps(n), cv.mbps(n, True)
            cells.append("n/a" if m is None else
                         f"{fmt(m)} ({m * 8e-3:.1f} Gbit/s; best {fmt(b)})")
        out.append(f"| {lab} | " + " | ".join(cells) + " |")
    out.append("")

    out.append("## 8-byte latency, every series (usec)\n")
    out.append("| series | med | best | per round (median of samples) |")
    out.append("|---|---|---|---|")
    for lab in order:
        cv = curves[lab]
        if 8 not in cv.med or lab.startswith(("memcpy", "loop")):
            continue
        rounds = ", ".join(f"r{r}: {m:.3f}" for r, m, _ in cv.rounds[8])
        out.append(f"| {lab} | {cv.med[8]:.3f} | {cv.best[8]:.3f} | {rounds} |")
    out.append("")

    out.append("## Per-round values at the key sizes (spot slow runs)\n")
    out.append("| series | size | MB/s per round (median of samples) |")
    out.append("|---|---|---|")
    for lab in order:
        if lab.startswith(("memcpy", "loop")):
            continue
        cv = curves[lab]
        for n in KEY_SIZES:
            if n in cv.rounds:
                vals = ", ".join(f"r{r}: {fmt(n / m)}"
                                 for r, m, _ in cv.rounds[n])
                out.append(f"| {lab} | {size_name(n)} | {vals} |")
    out.append("")

    mem = {lab: cv for lab, cv in curves.items()
           if lab.startswith(("memcpy", "loop"))}
    if mem:
        out.append("## Copy reference (telemem-memcpy-bw, one process, hot "
                   "cache)\n")
        out.append("| copy | " + " | ".join(size_name(n) for n in KEY_SIZES)
                   + " |")
        out.append("|---|" + "---|" * len(KEY_SIZES))
        for lab in sorted(mem):
            out.append(f"| {lab} | " + " | ".join(
                fmt(mem[lab].mbps(n)) + " MB/s" for n in KEY_SIZES) + " |")
        out.append("")

    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def plot(curves, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_netpipe.py: matplotlib is not available for "
              f"{sys.executable} (Debian: apt-get install python3-matplotlib; "
              "run with /usr/bin/python3); no plots written, the CSVs "
              "remain.", file=sys.stderr)
        return []

    written = []
    comm = sorted(lab for lab in curves
                  if not lab.startswith(("memcpy", "loop")))

    def style(lab):
        s = {"linewidth": 1.2, "markersize": 2.5, "marker": "o"}
        if lab.startswith("telemem"):
            s["linewidth"] = 1.8
        if "*" in lab:
            s["linestyle"] = "--"
        if lab.startswith("ompi"):
            s["marker"] = "s"
        return s

    # Bandwidth.
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for lab in comm:
        cv = curves[lab]
        ax.plot(cv.sizes, [cv.mbps(n) for n in cv.sizes], label=lab,
                **style(lab))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bandwidth (MB/s = 1e6 B/s), median")
    ax.set_title("Telemem puts vs Open MPI NetPIPE, 2 ranks, one node")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    p = os.path.join(outdir, "bandwidth.png")
    fig.savefig(p, dpi=120)
    plt.close(fig)
    written.append(p)

    # Latency.
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for lab in comm:
        cv = curves[lab]
        ax.plot(cv.sizes, [cv.med[n] for n in cv.sizes], label=lab,
                **style(lab))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("one-way time per message (usec), median")
    ax.set_title("Latency (ping-pong: half round trip; burst/stream: per put)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    p = os.path.join(outdir, "latency.png")
    fig.savefig(p, dpi=120)
    plt.close(fig)
    written.append(p)

    # Copy reference: memcpy and loop at each offset pair.
    mem = sorted(lab for lab in curves if lab.startswith(("memcpy", "loop")))
    if mem:
        fig, ax = plt.subplots(figsize=(9, 5.5))
        for lab in mem:
            cv = curves[lab]
            ax.plot(cv.sizes, [cv.mbps(n) for n in cv.sizes], label=lab,
                    linestyle="-" if lab.startswith("memcpy") else "--",
                    marker="o", markersize=2, linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("copy size (bytes)")
        ax.set_ylabel("copy bandwidth (MB/s), median")
        ax.set_title("memcpy / loop copy in one process (s: source offset, "
                     "d: destination offset)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        p = os.path.join(outdir, "memcpy.png")
        fig.savefig(p, dpi=120)
        plt.close(fig)
        written.append(p)

    # Ratio to Telemem, as the paper's Fig. 5 (other / Telemem).
    pairs = [("ompi", "telemem-latency", "Open MPI ping-pong / Telemem ping-pong"),
             ("ompi-nocma", "telemem-latency",
              "Open MPI (no CMA) ping-pong / Telemem ping-pong"),
             ("ompi", "telemem-burst", "Open MPI ping-pong / Telemem burst"),
             ("ompi-stream", "telemem-stream", "Open MPI stream / Telemem stream"),
             ("telemem-latency*", "telemem-latency", "Telemem* / Telemem (touch cost, ping-pong)"),
             ("telemem-burst*", "telemem-burst", "Telemem* / Telemem (touch cost, burst)")]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    drawn = 0
    for a, b, text in pairs:
        ca, cb = curves.get(a), curves.get(b)
        if not ca or not cb:
            continue
        xs = [n for n in ca.sizes if n in cb.med]
        if not xs:
            continue
        ax.plot(xs, [ca.mbps(n) / cb.mbps(n) for n in xs], label=text,
                **style(a))
        drawn += 1
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bandwidth ratio (> 1: the other is faster)")
    ax.set_title("Bandwidth relative to Telemem (cf. the paper's Fig. 5)")
    ax.grid(True, which="both", alpha=0.3)
    if drawn:
        ax.legend(fontsize=7)
    fig.tight_layout()
    p = os.path.join(outdir, "ratio.png")
    fig.savefig(p, dpi=120)
    plt.close(fig)
    written.append(p)
    return written


def main():
    ap = argparse.ArgumentParser(
        description="Plot telemem-netpipe / NetPIPE CSVs and write a summary.")
    ap.add_argument("inputs", nargs="+",
                    help="CSV files or directories holding them")
    ap.add_argument("--outdir", help="where to write the PNGs (default: the "
                    "first input directory, or the first file's directory)")
    ap.add_argument("--summary", metavar="FILE",
                    help="also write a Markdown summary of the targets")
    ap.add_argument("--no-plots", action="store_true",
                    help="write only the summary")
    args = ap.parse_args()

    files, data = collect(args.inputs)
    if not data:
        print("plot_netpipe.py: no CSV rows found in "
              + " ".join(args.inputs), file=sys.stderr)
        return 1
    curves = {lab: Curve(per) for lab, per in data.items()}
    outdir = args.outdir or (args.inputs[0] if os.path.isdir(args.inputs[0])
                             else os.path.dirname(args.inputs[0]) or ".")
    if args.summary:
        write_summary(args.summary, curves, files)
        print(f"plot_netpipe.py: wrote {args.summary}", file=sys.stderr)
    if not args.no_plots:
        for p in plot(curves, outdir):
            print(f"plot_netpipe.py: wrote {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
