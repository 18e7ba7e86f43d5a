#!/usr/bin/python3
"""plot_net.py - summary.md and plots of a scripts/bench-net.sh directory
(the across-nodes comparison, docs/benchmarks.md "Across nodes").

Reads from DIR the CSVs the script writes:

  np-pP-SERIES-rR.csv        telemem-netpipe & co. (latency, burst)
  fft-pP-SERIES-rR.csv       telemem-fft / armci-mpi-fft (all-to-all time)
  ar-pP-TARGET-SERIES-rR.csv armci_bench --only get,rmw (spin, barrier)

and runs.csv (exit status, seconds, load average before and after each
run) and env.txt.  P is the number of ranks per host, R the round.

Every comparison is a time ratio, Telemem's time over the reference's,
taken per round (the two ran minutes apart at most, in rotating order) and
then the median over rounds with the range of the rounds: below 1
Telemem is faster.  The references: Open MPI's MPI_Send/MPI_Recv and
ARMCI-MPI (NetPIPE), MPI_Alltoall and ARMCI-MPI (FFT), ARMCI-MPI
(passive-target get and rmw).  Sizes are the powers of two (NetPIPE runs
with --perturbation 0; midpoints are in the CSVs, not the tables).

Writes DIR/summary.md and, with matplotlib (Debian: python3-matplotlib,
hence /usr/bin/python3), net_latency.png, net_burst.png, net_fft.png and
net_armci.png.  Usage: plot_net.py DIR [--summary FILE] [--no-plots]
"""

import argparse
import csv
import glob
import os
import re
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_style as ps  # noqa: E402

NP_RE = re.compile(r"^np-p(\d+)-(.+)-r(\d+)\.csv$")
FFT_RE = re.compile(r"^fft-p(\d+)-(.+)-r(\d+)\.csv$")
AR_RE = re.compile(r"^ar-p(\d+)-(spin|barrier)-(.+)-r(\d+)\.csv$")
TEXT = {"mpi": "Open MPI", "armci-mpi": "ARMCI-MPI"}
NP_SIZES = [8, 64, 1024, 16384, 65536, 262144, 1048576, 4194304]
AR_SIZES = [8, 1024, 65536, 1048576]
BASE = ".base"  # a series run from --base-build's programs


def series_text(s):
    """tm-ofi-never -> 'Telemem ofi polling'; armci-ucx -> 'libarmci ucx';
    a .base twin (bench-net.sh --base-build) gets ', base'."""
    if s.endswith(BASE):
        return series_text(s[:-len(BASE)]) + ", base"
    m = re.match(r"^(tm|armci|libarmci)-(ofinet|ofi|ucx)"
                 r"(?:-(never|auto|always))?$", s)
    if not m:
        return TEXT.get(s, s)
    who = "Telemem" if m.group(1) == "tm" else "libarmci"
    path = {"never": " polling", "auto": " auto", "always": " direct",
            None: ""}[m.group(3)]
    wire = {"ofinet": "ofi net"}.get(m.group(2), m.group(2))
    return f"{who} {wire}{path}"


def is_ours(s):
    return s.startswith(("tm-", "armci-ofi", "armci-ucx", "libarmci-"))


def style(s):
    """Colour by library (plot_style), ofi solid, ucx dotted; the polling
    path filled circles, auto open triangles."""
    if s.startswith("tm-"):
        impl = "telemem"
    elif s.startswith(("armci-ofi", "armci-ucx", "libarmci")):
        impl = "armci-telemem"
    else:
        impl = s
    base = s.endswith(BASE)
    s = s[:-len(BASE)] if base else s
    path = "auto" if s.endswith("-auto") else "am"
    st = ps.line_style(impl, path)
    if "-ucx" in s:
        st["linestyle"] = ":"
    elif "-ofinet" in s:
        st["linestyle"] = "-."
    if base:  # the build before: thin, grey-edged, open markers
        st.update(linewidth=0.9, alpha=0.6, markerfacecolor="white")
    return st


def read_rows(path):
    """CSV rows (dicts) of a file with '#' comment lines; [] if unreadable."""
    try:
        with open(path, newline="") as f:
            lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    except OSError:
        return []
    return list(csv.DictReader(lines))


def pow2(n):
    return n > 0 and n & (n - 1) == 0


# ------------------------------------------------------------ collecting

def collect(d):
    """data[part][(ppn, key)][series][round] = {x: seconds or us}."""
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    for path in sorted(glob.glob(os.path.join(d, "*.csv"))):
        base = os.path.basename(path)
        m = NP_RE.match(base)
        if m:
            p, s, r = int(m.group(1)), m.group(2), int(m.group(3))
            for row in read_rows(path):
                try:
                    if row["touch"] != "0":
                        continue
                    key = (p, row["mode"])
                    data["netpipe"][key][s].setdefault(r, {})[
                        int(row["bytes"])] = float(row["usec_median"])
                except (KeyError, ValueError):
                    pass
            continue
        m = FFT_RE.match(base)
        if m:
            p, s, r = int(m.group(1)), m.group(2), int(m.group(3))
            for row in read_rows(path):
                try:
                    data["fft"][(p, "alltoall")][s].setdefault(r, {})[
                        int(row["log2n"])] = float(row["alltoall_s"]) * 1e6
                except (KeyError, ValueError):
                    pass
            continue
        m = AR_RE.match(base)
        if m:
            p, tgt, s, r = (int(m.group(1)), m.group(2), m.group(3),
                            int(m.group(4)))
            for row in read_rows(path):
                try:
                    data["armci"][(p, tgt + "-" + row["test"])][s].setdefault(
                        r, {})[int(row["bytes"])] = float(row["usec"])
                except (KeyError, ValueError):
                    pass
    return data


def runs_info(d):
    """(rows of runs.csv, loads)."""
    rows = read_rows(os.path.join(d, "runs.csv"))
    loads = []
    for r in rows:
        for k in ("load_start", "load_end"):
            try:
                loads.append(float(r[k]))
            except (KeyError, ValueError):
                pass
    return rows, loads


def combine(rounds):
    """{round: {x: v}} -> {x: median over rounds}."""
    by = defaultdict(list)
    for vals in rounds.values():
        for x, v in vals.items():
            by[x].append(v)
    return {x: statistics.median(v) for x, v in by.items()}


def ratio(ours, ref, x):
    """Per-round time ratios ours/ref at x (rounds both have): (median,
    low, high) or None."""
    rs = [ours[r][x] / ref[r][x] for r in ours
          if r in ref and x in ours[r] and x in ref[r] and ref[r][x] > 0]
    if not rs:
        return None
    return statistics.median(rs), min(rs), max(rs)


def fmt(v):
    if v is None:
        return "–"
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if v >= 1 else f"{v:.3f}"


def fmt_r(v):
    return f"{v:.2f}" if v >= 0.1 else f"{v:.2g}"


def fmt_ratio(t):
    if not t:
        return "–"
    m, lo, hi = t
    return (f"**{fmt_r(m)}** ({fmt_r(lo)}–{fmt_r(hi)})" if hi > lo
            else f"**{fmt_r(m)}**")


def size_text(x, part):
    return f"2^{x}" if part == "fft" else ps.size_text(x)


# ------------------------------------------------------------ the summary

def table(out, part, key, series, xs, refs):
    """Times per x for every series, then ratios of ours to each ref."""
    have = [s for s in series if s in series]
    out.append("| size | " + " | ".join(series_text(s) for s in have) + " |")
    out.append("|---" * (len(have) + 1) + "|")
    med = {s: combine(series[s]) for s in have}
    for x in xs:
        out.append(f"| {size_text(x, part)} | " +
                   " | ".join(fmt(med[s].get(x)) for s in have) + " |")
    out.append("")
    for ref in refs:
        if ref not in series:
            continue
        ours = [s for s in have if is_ours(s)]
        if not ours:
            continue
        out.append(f"Time ratio to {TEXT.get(ref, ref)} (median of the "
                   "per-round ratios, range of the rounds; below 1 Telemem "
                   "is faster):")
        out.append("")
        out.append("| size | " + " | ".join(series_text(s) for s in ours) +
                   " |")
        out.append("|---" * (len(ours) + 1) + "|")
        for x in xs:
            out.append(f"| {size_text(x, part)} | " + " | ".join(
                fmt_ratio(ratio(series[s], series[ref], x)) for s in ours)
                + " |")
        out.append("")


def headline(data, ppns):
    """The few figures first: 8 B latency, 64 KiB and 1 MiB bursts, FFT
    all-to-all at its largest size, get and rmw: ratios to Open MPI /
    ARMCI-MPI."""
    out = ["| ranks per host | figure | series | Telemem / reference |",
           "|---|---|---|---|"]
    for p in ppns:
        for mode, x, ref in (("latency", 8, "mpi"), ("burst", 8, "mpi"),
                             ("burst", 65536, "mpi"),
                             ("burst", 1048576, "mpi")):
            ser = data["netpipe"].get((p, mode), {})
            if ref not in ser or x not in combine(ser[ref]):
                continue
            for s in sorted(ser):
                if s.startswith("tm-"):
                    out.append(f"| {p} | NetPIPE {mode} {ps.size_text(x)} "
                               f"vs {TEXT[ref]} | {series_text(s)} | "
                               f"{fmt_ratio(ratio(ser[s], ser[ref], x))} |")
        ser = data["fft"].get((p, "alltoall"), {})
        if "mpi" in ser:
            xs = sorted(combine(ser["mpi"]))
            if xs:
                x = xs[-1]
                for s in sorted(ser):
                    if is_ours(s):
                        out.append(f"| {p} | FFT all-to-all 2^{x} vs "
                                   f"MPI_Alltoall | {series_text(s)} | "
                                   f"{fmt_ratio(ratio(ser[s], ser['mpi'], x))} |")
        for tgt in ("spin", "barrier"):
            for test, x in (("get", 8), ("rmw", 4)):
                ser = data["armci"].get((p, f"{tgt}-{test}"), {})
                if "armci-mpi" not in ser:
                    continue
                for s in sorted(ser):
                    if is_ours(s):
                        out.append(
                            f"| {p} | ARMCI_{test.capitalize()} {x} B, target "
                            f"{tgt}, vs ARMCI-MPI | {series_text(s)} | "
                            f"{fmt_ratio(ratio(ser[s], ser['armci-mpi'], x))} |")
    return out


def base_pairs(ser):
    """[(series, its .base twin)] present in ser."""
    return [(s, s + BASE) for s in sorted(ser)
            if not s.endswith(BASE) and s + BASE in ser]


def versus_base(data, ppns):
    """New build over base build (--base-build), per round then the
    median: the figures that say what a change did."""
    out = []
    for p in ppns:
        for part, key, xs, what in (
                ("netpipe", "latency", NP_SIZES, "NetPIPE one-way time"),
                ("netpipe", "burst", NP_SIZES, "NetPIPE burst, time per put"),
                ("fft", "alltoall", None, "FFT all-to-all time"),
                ("armci", "spin-get", AR_SIZES, "ARMCI_Get, target spin"),
                ("armci", "barrier-get", AR_SIZES,
                 "ARMCI_Get, target in ARMCI_Barrier")):
            ser = data[part].get((p, key), {})
            pairs = base_pairs(ser)
            if not pairs:
                continue
            have = sorted({x for a, b in pairs for r in ser[b].values()
                           for x in r})
            cols = [x for x in have if xs is None or x in xs]
            out.append(f"**{what}, {p} per host** (new / base):")
            out.append("")
            out.append("| series | " + " | ".join(size_text(x, part)
                                                  for x in cols) + " |")
            out.append("|---" * (len(cols) + 1) + "|")
            for a, b in pairs:
                out.append(f"| {series_text(a)} | " + " | ".join(
                    fmt_ratio(ratio(ser[a], ser[b], x)) for x in cols) + " |")
            out.append("")
    return out


def summary(d, data, runs, loads):
    ppns = sorted({k[0] for part in data.values() for k in part})
    cores = ps.env_cores([d])
    out = ["# Across nodes: Telemem against Open MPI and ARMCI-MPI", ""]
    out.append(f"Directory `{d}`, written by scripts/plot_net.py from "
               "scripts/bench-net.sh's runs; "
               f"{ps.load_text(loads, cores)} (runs.csv: the load average "
               "before and after each run).")
    out.append("")
    failed = [r for r in runs if r.get("rc") not in ("0", None)]
    if failed:
        out.append("**Failed runs** (no figures; their logs say why):")
        out.append("")
        for r in failed:
            out.append(f"- {r['part']}, {r['ppn']} per host, {r['series']}, "
                       f"round {r['round']}: exit {r['rc']}")
        out.append("")
    out.append("Ratios are Telemem's time over the reference's, per round, "
               "then the median over rounds (range in brackets): below 1 "
               "Telemem is faster.")
    out.append("")
    out.append("## The figures that decide")
    out.append("")
    out += headline(data, ppns)
    out.append("")
    vb = versus_base(data, ppns)
    if vb:
        out.append("## This build against the base build")
        out.append("")
        out.append("Time ratios new / base (`--base-build`), per round, "
                   "median and range: below 1 the new build is faster.")
        out.append("")
        out += vb
    titles = {"latency": "NetPIPE ping-pong, one-way time (µs)",
              "burst": "NetPIPE burst puts, time per put (µs)",
              "alltoall": "FFT all-to-all, time per all-to-all (µs)"}
    for p in ppns:
        out.append(f"## {p} rank{'s' if p > 1 else ''} per host")
        out.append("")
        for mode in ("latency", "burst"):
            ser = data["netpipe"].get((p, mode))
            if not ser:
                continue
            xs = sorted({x for s in ser.values() for rr in s.values()
                         for x in rr if pow2(x)})
            xs = [x for x in xs if x in NP_SIZES or x == xs[-1]]
            out.append(f"### {titles[mode]}")
            out.append("")
            table(out, "netpipe", mode, ser, xs, ["mpi", "armci-mpi"])
        ser = data["fft"].get((p, "alltoall"))
        if ser:
            xs = sorted({x for s in ser.values() for rr in s.values()
                         for x in rr})
            out.append(f"### {titles['alltoall']}")
            out.append("")
            table(out, "fft", "alltoall", ser, xs, ["mpi", "armci-mpi"])
        for tgt in ("spin", "barrier"):
            for test in ("get", "rmw"):
                ser = data["armci"].get((p, f"{tgt}-{test}"))
                if not ser:
                    continue
                xs = sorted({x for s in ser.values() for rr in s.values()
                             for x in rr})
                if test == "get":
                    xs = [x for x in xs if x in AR_SIZES or x == xs[-1]]
                where = ("spins on a plain load" if tgt == "spin"
                         else "waits in ARMCI_Barrier")
                out.append(f"### ARMCI_{test.capitalize()} to a target that "
                           f"{where} (µs per operation)")
                out.append("")
                table(out, "armci", test, ser, xs, ["armci-mpi"])
    out.append("## Conditions")
    out.append("")
    out.append("```")
    try:
        with open(os.path.join(d, "env.txt")) as f:
            out += [ln.rstrip("\n") for ln in f]
    except OSError:
        out.append("(no env.txt)")
    out.append("```")
    out.append("")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------ the plots

def curves(ax, ser, part, ylabel, bw=False):
    for s in sorted(ser, key=lambda s: (not is_ours(s), s)):
        med = combine(ser[s])
        xs = sorted(x for x in med if part == "fft" or pow2(x))
        if not xs:
            continue
        ys = [(x / med[x] if bw else med[x]) for x in xs]
        xs_plot = [(1 << x) if part == "fft" else x for x in xs]
        ax.plot(xs_plot, ys, label=series_text(s), **style(s))
    ps.log_y(ax)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)


def ratios(ax, ser, part, ref):
    vals = []
    for s in sorted(ser):
        if not is_ours(s) or ref not in ser:
            continue
        pts = []
        for x in sorted(combine(ser[s])):
            if part != "fft" and not pow2(x):
                continue
            t = ratio(ser[s], ser[ref], x)
            if t:
                pts.append(((1 << x) if part == "fft" else x, *t))
                vals += [t[1], t[2]]
        ps.draw_series(ax, pts, style(s), series_text(s))
    if vals:
        ps.ratio_axis(ax, vals)
    else:
        ps.empty_note(ax, f"no {TEXT.get(ref, ref)} figures")
    ax.set_ylabel(f"time / {TEXT.get(ref, ref)}'s (below 1: faster)")
    ax.grid(True, alpha=0.3)


def figure(path, rows, title, loads, cores):
    """rows: [(ppn, draw(ax_left, ax_right))]; saved to path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(rows), 2, figsize=(13, 4.6 * len(rows)),
                             squeeze=False)
    for (p, draw), (a, b) in zip(rows, axes):
        draw(a, b)
        a.set_title(f"{p} rank{'s' if p > 1 else ''} per host")
        b.set_title(f"{p} rank{'s' if p > 1 else ''} per host: ratios")
        a.legend(fontsize=7, loc="best")
    fig.suptitle(f"{title} ({ps.load_text(loads, cores)})", fontsize=11)
    fig.tight_layout()
    ps.save_png(fig, path)
    plt.close(fig)


def plots(d, data, loads):
    cores = ps.env_cores([d])
    ppns = sorted({k[0] for part in data.values() for k in part})

    def np_rows(mode, bw):
        rows = []
        for p in ppns:
            ser = data["netpipe"].get((p, mode))
            if not ser:
                continue

            def draw(a, b, ser=ser):
                curves(a, ser, "netpipe", "MB/s" if bw else "µs", bw)
                xs = [x for s in ser.values() for r in s.values() for x in r]
                ps.size_axis(a, min(xs), max(xs))
                ratios(b, ser, "netpipe", "mpi")
                ps.size_axis(b, min(xs), max(xs))
            rows.append((p, draw))
        return rows

    made = []
    for name, mode, bw, title in (
            ("net_latency.png", "latency", False,
             "NetPIPE ping-pong across two hosts: one-way time"),
            ("net_burst.png", "burst", True,
             "NetPIPE burst puts across two hosts: bandwidth per pair")):
        rows = np_rows(mode, bw)
        if rows:
            figure(os.path.join(d, name), rows, title, loads, cores)
            made.append(name)
    rows = []
    for p in ppns:
        ser = data["fft"].get((p, "alltoall"))
        if not ser:
            continue

        def draw(a, b, ser=ser):
            curves(a, ser, "fft", "µs per all-to-all")
            xs = [1 << x for s in ser.values() for r in s.values() for x in r]
            ps.size_axis(a, min(xs), max(xs), "FFT points", pow2=True)
            ratios(b, ser, "fft", "mpi")
            ps.size_axis(b, min(xs), max(xs), "FFT points", pow2=True)
        rows.append((p, draw))
    if rows:
        figure(os.path.join(d, "net_fft.png"), rows,
               "FFT all-to-all across two hosts", loads, cores)
        made.append("net_fft.png")
    rows = []
    for p in ppns:
        for tgt in ("spin", "barrier"):
            ser = data["armci"].get((p, f"{tgt}-get"))
            if not ser:
                continue

            def draw(a, b, ser=ser, tgt=tgt):
                curves(a, ser, "armci", f"µs per ARMCI_Get (target {tgt})")
                xs = [x for s in ser.values() for r in s.values() for x in r]
                ps.size_axis(a, min(xs), max(xs))
                ratios(b, ser, "armci", "armci-mpi")
                ps.size_axis(b, min(xs), max(xs))
            rows.append((p, draw))
    if rows:
        figure(os.path.join(d, "net_armci.png"), rows,
               "Passive-target ARMCI_Get across two hosts (target spin, "
               "then barrier)", loads, cores)
        made.append("net_armci.png")
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--summary", help="where to write (default DIR/summary.md)")
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args()
    data = collect(a.dir)
    if not data:
        print(f"plot_net.py: no bench-net.sh CSVs in {a.dir}", file=sys.stderr)
        return 1
    runs, loads = runs_info(a.dir)
    path = a.summary or os.path.join(a.dir, "summary.md")
    with open(path, "w") as f:
        f.write(summary(a.dir, data, runs, loads))
    print(f"plot_net.py: wrote {path}", file=sys.stderr)
    if a.no_plots:
        return 0
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot_net.py: no matplotlib (python3-matplotlib): no plots",
              file=sys.stderr)
        return 0
    for name in plots(a.dir, data, loads):
        print(f"plot_net.py: wrote {os.path.join(a.dir, name)}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
