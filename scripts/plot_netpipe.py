#!/usr/bin/python3
"""plot_netpipe.py - plots and summary for the NetPIPE benchmark CSVs.

Reads CSV files ('#' lines are comments) written by telemem-netpipe,
armci-netpipe, armci-mpi-netpipe and mpi-netpipe (bench/netpipe, see
docs/benchmarks.md), with the columns

    mode,touch,bytes,reps,usec_median,usec_min,mbps_median,mbps_max,impl,path

from the given files or directories (scripts/bench-netpipe.sh writes
NAME-rROUND.csv files).  Older CSVs without impl/path (telemem-netpipe
before the four builds, NetPIPE conversions, telemem-memcpy-bw) are read
too: impl then comes from the file name or the mode.  Writes

  fig4_bandwidth.png  burst-put bandwidth against message size for every
                      implementation, untouched and touched (the paper's
                      Fig. 4), next to NetPIPE's ping-pong bandwidth
  fig5_relative.png   ARMCI bandwidth relative to Telemem (armci-telemem /
                      telemem, armci-mpi / telemem; touched and untouched;
                      mpi / telemem for reference): the paper's Fig. 5
  latency.png         ping-pong one-way time against size (log-log)
  memcpy.png          the copy reference, when telemem-memcpy-bw CSVs exist
  summary.md          (--summary FILE) with numbers: key sizes, ratios to
                      Telemem and the size ranges where each wins and loses

Rounds of one series are combined per size: the median over rounds of each
run's median ("med") and the lowest time of any sample ("best").  The
summary needs only the standard library; the plots need matplotlib
(Debian: python3-matplotlib, hence /usr/bin/python3).  Without it the
script says so and exits 0 (77 with --require-plots, the test's "skip").
"""

import argparse
import csv
import glob
import os
import re
import statistics
import sys
from collections import defaultdict

OLD_FIELDS = ["mode", "touch", "bytes", "reps", "usec_median", "usec_min",
              "mbps_median", "mbps_max"]
IMPL_ORDER = ["telemem", "armci-telemem", "armci-mpi", "mpi", "npopenmpi"]
IMPL_TEXT = {"telemem": "Telemem", "armci-telemem": "ARMCI over Telemem",
             "armci-mpi": "ARMCI-MPI", "mpi": "MPI (Open MPI, two-sided)",
             "npopenmpi": "NetPIPE NPopenmpi"}
COLOURS = {"telemem": "tab:blue", "armci-telemem": "tab:green",
           "armci-mpi": "tab:red", "mpi": "tab:purple",
           "npopenmpi": "tab:gray"}
LAT_SIZES = [8, 1024, 65536]
BW_SIZES = [1024, 65536, 1048576, 8388608]
SKIP_EXIT = 77


def round_of(path):
    m = re.search(r"-r(\d+)\.csv$", os.path.basename(path))
    return int(m.group(1)) if m else 0


def legacy_impl(path, mode):
    """impl of a CSV without the impl column."""
    if mode.startswith(("memcpy", "loop")):
        return "copy"
    if mode.startswith("ompi"):
        return "npopenmpi"
    base = os.path.basename(path)
    for impl in ("armci-mpi", "armci-telemem", "mpi", "telemem"):
        if base.startswith(impl):
            return impl
    return "telemem"


def read_csv(path):
    rows, fields = [], OLD_FIELDS
    with open(path, newline="") as f:
        lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    for rec in csv.reader(lines):
        if not rec:
            continue
        if rec[0] == "mode":
            fields = rec
            continue
        if len(rec) != len(fields):
            print(f"plot_netpipe.py: {path}: skipping malformed line {rec}",
                  file=sys.stderr)
            continue
        r = dict(zip(fields, rec))
        try:
            mode = r["mode"]
            impl = r.get("impl") or legacy_impl(path, mode)
            if impl == "npopenmpi":
                mode = "latency"  # NetPIPE's ping-pong
            rows.append({
                "impl": impl, "path": r.get("path", ""), "mode": mode,
                "raw_mode": r["mode"],
                "touch": r["touch"] not in ("0", "no", ""),
                "bytes": int(r["bytes"]),
                "usec_median": float(r["usec_median"]),
                "usec_min": float(r["usec_min"]),
            })
        except (ValueError, KeyError):
            print(f"plot_netpipe.py: {path}: skipping bad line {rec}",
                  file=sys.stderr)
    return rows


def series_name(row):
    """Implementation name, with Telemem's path when it is not the AM one
    (so that --path runs stay apart)."""
    if row["impl"] == "copy":
        return row["raw_mode"]
    name = row["impl"]
    if row["path"] in ("direct", "auto"):
        name += "/" + row["path"]
    return name


def collect(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(glob.glob(os.path.join(p, "*.csv")))
        else:
            files.append(p)
    # data[(series, mode, touch)][bytes] = [(round, usec_med, usec_min)]
    data = defaultdict(lambda: defaultdict(list))
    for path in files:
        rnd = round_of(path)
        for row in read_csv(path):
            key = (series_name(row), row["mode"], row["touch"])
            data[key][row["bytes"]].append(
                (rnd, row["usec_median"], row["usec_min"]))
    return files, data


class Curve:
    """Per-size combination of the rounds of one series."""

    def __init__(self, per_size):
        self.sizes = sorted(per_size)
        self.med = {n: statistics.median(v[1] for v in per_size[n])
                    for n in self.sizes}
        self.best = {n: min(v[2] for v in per_size[n]) for n in self.sizes}
        self.nrounds = max(len(v) for v in per_size.values())

    def mbps(self, n, best=False):
        us = (self.best if best else self.med).get(n)
        return n / us if us else None


def impl_rank(series):
    base = series.split("/")[0]
    return (IMPL_ORDER.index(base) if base in IMPL_ORDER else 99, series)


def fmt(v, digits=3):
    if v is None:
        return "n/a"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def size_name(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def label(series, touch):
    base = series.split("/")[0]
    text = IMPL_TEXT.get(base, base)
    if "/" in series:
        text += " (" + series.split("/", 1)[1] + ")"
    return text + ("*" if touch else "")


def ratios(curves, other, ref, mode, touch, bandwidth=True):
    """[(size, other/ref bandwidth ratio)] (or time ratio for latency)."""
    a, b = curves.get((other, mode, touch)), curves.get((ref, mode, touch))
    if not a or not b:
        return []
    out = []
    for n in a.sizes:
        if n in b.med and a.med[n] > 0 and b.med[n] > 0:
            out.append((n, b.med[n] / a.med[n] if bandwidth
                        else a.med[n] / b.med[n]))
    return out


BANDS = [(1, 63, "1–63 B"), (64, 4095, "64 B–4 KiB"),
         (4096, 65535, "4–64 KiB"), (65536, 1048575, "64 KiB–1 MiB"),
         (1048576, 1 << 40, "≥ 1 MiB")]


def band_cells(rs, other, ref):
    """Per size band: the median ratio, its spread and who wins (ties
    within 5 %)."""
    cells = []
    for lo, hi, _ in BANDS:
        vals = [r for n, r in rs if lo <= n <= hi]
        if not vals:
            cells.append("")
            continue
        m = statistics.median(vals)
        who = (other if m > 1.05 else ref if m < 0.95 else "tie")
        spread = f"{min(vals):.2g}–{max(vals):.2g}" if len(vals) > 1 else ""
        cells.append(f"{m:.2f} {'**' + who + '**' if who != 'tie' else who}"
                     + (f" ({spread})" if spread else ""))
    return cells


def read_loads(files):
    loads = []
    for path in files:
        try:
            with open(path) as f:
                for ln in f:
                    if ln.startswith("# loadavg"):
                        loads.append(float(ln.split("=")[1].split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return loads


def read_cutoffs(files):
    """The '# MODE: stopped before N bytes' / '... skipped' lines of
    --max-seconds, per file."""
    notes = []
    for path in files:
        try:
            with open(path) as f:
                for ln in f:
                    if ln.startswith("# ") and ("stopped before" in ln
                                                or "skipped to keep" in ln):
                        notes.append(f"{os.path.basename(path)}: "
                                     f"{ln[2:].strip()}")
        except OSError:
            pass
    return notes


def write_summary(path, curves, files):
    out = ["# NetPIPE comparison: Telemem, ARMCI (over Telemem and "
           "ARMCI-MPI), MPI\n"]
    env = os.path.join(os.path.dirname(path) or ".", "env.txt")
    if os.path.exists(env):
        with open(env) as f:
            out += ["```", f.read().rstrip(), "```\n"]
    series = sorted({k[0] for k in curves if not k[0].startswith(
        ("memcpy", "loop"))}, key=impl_rank)
    nr = max((round_of(f) for f in files), default=0)
    loads = read_loads(files)
    out.append(
        f"{len(files)} CSV files, {max(nr, 1)} round(s), implementations: "
        + ", ".join(series) + ".  *med* = median over rounds of each run's "
        "median over its samples.  Latency = half a ping-pong round trip "
        "(µs); bandwidth = burst puts, MB/s = 1e6 B/s, time per put "
        "including the wait for completion at the target; `*` = `--touch` "
        "(the whole message area read before each send and after each "
        "receive).")
    if loads:
        out.append(
            f"\nLoad average when the runs started/ended: "
            f"{min(loads):.1f} – {max(loads):.1f} (2 ranks need 2 idle "
            "cores; on a shared machine every figure here is noisy — "
            "compare within one results directory only).")
    cut = read_cutoffs(files)
    if cut:
        out.append("\nRuns cut short by their time budget (`--max-seconds`: "
                   "behind schedule only powers of two, then no new size); "
                   "where a series lacks a size, the tables say n/a:\n")
        out += [f"- {c}" for c in cut]
    out.append("")

    ref = "telemem"
    for touch in (False, True):
        t = "touched (`--touch`)" if touch else "untouched"
        out.append(f"## Key sizes, {t}\n")
        out.append("| implementation | " + " | ".join(
            f"latency {size_name(n)} (µs)" for n in LAT_SIZES) + " | "
            + " | ".join(f"burst {size_name(n)} (MB/s)" for n in BW_SIZES)
            + " |")
        out.append("|---|" + "---|" * (len(LAT_SIZES) + len(BW_SIZES)))
        for s in series:
            lat = curves.get((s, "latency", touch))
            bw = curves.get((s, "burst", touch))
            if not lat and not bw:
                continue
            cells = [fmt(lat.med.get(n)) if lat else "n/a"
                     for n in LAT_SIZES]
            cells += [fmt(bw.mbps(n)) if bw else "n/a" for n in BW_SIZES]
            out.append(f"| {s} | " + " | ".join(cells) + " |")
        out.append("")
        # Who is fastest at each key size.
        wins = []
        for n in BW_SIZES:
            cand = [(curves[(s, "burst", touch)].mbps(n), s) for s in series
                    if (s, "burst", touch) in curves
                    and curves[(s, "burst", touch)].mbps(n)]
            if cand:
                v, s = max(cand)
                wins.append(f"{size_name(n)}: {s} ({fmt(v)} MB/s)")
        for n in LAT_SIZES[:1]:
            cand = [(curves[(s, "latency", touch)].med[n], s) for s in series
                    if (s, "latency", touch) in curves
                    and n in curves[(s, "latency", touch)].med]
            if cand:
                v, s = min(cand)
                wins.insert(0, f"{size_name(n)} latency: {s} ({v:.3f} µs)")
        if wins:
            out.append("Fastest: " + "; ".join(wins) + ".\n")

    out.append("## Where each wins and loses against Telemem\n")
    out.append("Median over the sizes of each band of the per-size ratio "
               "of medians, the winner (ties within 5 %) and the range of "
               "the ratios in the band.  Bandwidth: other / Telemem "
               "(> 1: the other is faster); latency: Telemem time / other "
               "time (> 1: the other is faster).\n")
    out.append("| comparison | measure | " + " | ".join(b[2] for b in BANDS)
               + " |")
    out.append("|---|---|" + "---|" * len(BANDS))
    refs = [s for s in series if s.split("/")[0] == "telemem"] or [ref]
    for r in refs:
        for s in series:
            if s == r or s.split("/")[0] == "npopenmpi":
                continue
            for touch in (False, True):
                star = "*" if touch else ""
                for mode, what in (("burst", "burst bandwidth"),
                                   ("latency", "ping-pong speed")):
                    rs = ratios(curves, s, r, mode, touch)
                    if rs:
                        out.append(f"| {s}{star} vs {r}{star} | {what} | "
                                   + " | ".join(band_cells(rs, s + star,
                                                           r + star))
                                   + " |")
    out.append("")

    out.append("## Cost of touching the data (Telemem* / Telemem, "
               "burst bandwidth)\n")
    out.append("| implementation | " + " | ".join(size_name(n)
                                                   for n in BW_SIZES) + " |")
    out.append("|---|" + "---|" * len(BW_SIZES))
    for s in series:
        a, b = curves.get((s, "burst", True)), curves.get((s, "burst", False))
        if a and b:
            out.append(f"| {s} | " + " | ".join(
                fmt(a.mbps(n) / b.mbps(n)) if a.mbps(n) and b.mbps(n)
                else "n/a" for n in BW_SIZES) + " |")
    out.append("")
    out.append("Plots: `fig4_bandwidth.png`, `fig5_relative.png`, "
               "`latency.png` in this directory (scripts/plot_netpipe.py).")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def import_pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        return None


def style(series, touch):
    base = series.split("/")[0]
    s = {"color": COLOURS.get(base, "black"), "linewidth": 1.4,
         "marker": "o", "markersize": 2.2,
         "linestyle": "--" if touch else "-"}
    if "/" in series:
        s["marker"] = "^"
    return s


def plot(plt, curves, outdir):
    written = []
    series = sorted({k[0] for k in curves if not k[0].startswith(
        ("memcpy", "loop"))}, key=impl_rank)
    os.makedirs(outdir, exist_ok=True)

    def finish(fig, ax_list, name):
        for ax in ax_list:
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.grid(True, which="both", alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
        fig.tight_layout()
        p = os.path.join(outdir, name)
        fig.savefig(p, dpi=120)
        plt.close(fig)
        written.append(p)

    # Fig. 4: bandwidth against size.
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), sharey=False)
    for ax, mode, title in ((axes[0], "burst", "burst puts (Fig. 4)"),
                            (axes[1], "latency",
                             "ping-pong (NetPIPE's bandwidth)")):
        for s in series:
            for touch in (False, True):
                cv = curves.get((s, mode, touch))
                if cv:
                    ax.plot(cv.sizes, [cv.mbps(n) for n in cv.sizes],
                            label=label(s, touch), **style(s, touch))
        ax.set_ylabel("bandwidth (MB/s = 1e6 B/s), median")
        ax.set_title(f"Bandwidth, {title}; * = --touch")
    finish(fig, axes, "fig4_bandwidth.png")

    # Fig. 5: relative bandwidth.
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2))
    for ax, mode, title in ((axes[0], "burst", "burst puts (Fig. 5)"),
                            (axes[1], "latency", "ping-pong")):
        for s in series:
            base = s.split("/")[0]
            if base in ("telemem", "npopenmpi") and "/" not in s:
                continue
            for touch in (False, True):
                rs = ratios(curves, s, "telemem", mode, touch)
                if rs:
                    st = style(s, touch)
                    if base == "mpi":
                        st["linewidth"] = 0.9
                    ax.plot([n for n, _ in rs], [r for _, r in rs],
                            label=f"{label(s, touch)} / "
                            f"{label('telemem', touch)}", **st)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log", base=2)
        ax.set_ylabel("bandwidth relative to Telemem (> 1: faster)")
        ax.set_title(f"Relative bandwidth, {title}")
    finish(fig, axes, "fig5_relative.png")

    # Latency.
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for s in series:
        for touch in (False, True):
            cv = curves.get((s, "latency", touch))
            if cv:
                ax.plot(cv.sizes, [cv.med[n] for n in cv.sizes],
                        label=label(s, touch), **style(s, touch))
    ax.set_yscale("log")
    ax.set_ylabel("one-way time (µs, half the round trip), median")
    ax.set_title("Ping-pong latency; * = --touch")
    finish(fig, [ax], "latency.png")

    mem = sorted(k for k in curves if k[0].startswith(("memcpy", "loop")))
    if mem:
        fig, ax = plt.subplots(figsize=(9, 5.5))
        for k in mem:
            cv = curves[k]
            ax.plot(cv.sizes, [cv.mbps(n) for n in cv.sizes], label=k[0],
                    linestyle="-" if k[0].startswith("memcpy") else "--",
                    marker="o", markersize=2, linewidth=1)
        ax.set_ylabel("copy bandwidth (MB/s), median")
        ax.set_title("memcpy / loop copy in one process (s: source offset, "
                     "d: destination offset)")
        finish(fig, [ax], "memcpy.png")
    return written


def main():
    ap = argparse.ArgumentParser(
        description="Plot the NetPIPE benchmark CSVs (telemem-netpipe, "
        "armci-netpipe, armci-mpi-netpipe, mpi-netpipe) as PNGs (Fig. 4 "
        "bandwidth, Fig. 5 relative bandwidth, latency) and write a "
        "Markdown summary.  Run with /usr/bin/python3 (Debian's "
        "python3-matplotlib).")
    ap.add_argument("inputs", nargs="+",
                    help="CSV files or directories holding them")
    ap.add_argument("--outdir", help="where to write the PNGs (default: the "
                    "first input directory, or the first file's directory)")
    ap.add_argument("--summary", metavar="FILE",
                    help="also write a Markdown summary")
    ap.add_argument("--no-plots", action="store_true",
                    help="write only the summary")
    ap.add_argument("--require-plots", action="store_true",
                    help="exit 77 (skip) instead of 0 when matplotlib is "
                    "missing, and 1 when a PNG was not written (tests)")
    args = ap.parse_args()

    files, data = collect(args.inputs)
    if not data:
        print("plot_netpipe.py: no CSV rows found in "
              + " ".join(args.inputs), file=sys.stderr)
        return 1
    curves = {k: Curve(per) for k, per in data.items()}
    outdir = args.outdir or (args.inputs[0] if os.path.isdir(args.inputs[0])
                             else os.path.dirname(args.inputs[0]) or ".")
    if args.summary:
        d = os.path.dirname(args.summary)
        if d:
            os.makedirs(d, exist_ok=True)
        write_summary(args.summary, curves, files)
        print(f"plot_netpipe.py: wrote {args.summary}", file=sys.stderr)
    if args.no_plots:
        return 0
    plt = import_pyplot()
    if plt is None:
        print("plot_netpipe.py: matplotlib is not available for "
              f"{sys.executable} (Debian: apt-get install python3-matplotlib;"
              " run with /usr/bin/python3); no plots written, the CSVs "
              "remain.", file=sys.stderr)
        return SKIP_EXIT if args.require_plots else 0
    written = plot(plt, curves, outdir)
    for p in written:
        print(f"plot_netpipe.py: wrote {p}", file=sys.stderr)
    if args.require_plots:
        for name in ("fig4_bandwidth.png", "fig5_relative.png",
                     "latency.png"):
            p = os.path.join(outdir, name)
            if not os.path.isfile(p) or os.path.getsize(p) < 1000:
                print(f"plot_netpipe.py: {p} missing or empty",
                      file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
