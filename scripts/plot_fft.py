#!/usr/bin/python3
"""plot_fft.py - plots and summary for the distributed FFT benchmark (bench/fft).

Reads CSV files written by telemem-fft / armci-mpi-fft --csv ('#' lines are
the header; columns in docs/fft.md) from the given files or directories, as
scripts/bench-fft.sh leaves them (IMPL-ALLTOALL-rROUND.csv), and writes into
--out:

  fft-gflops.png          Gflop/s against problem size per variant (the
                          paper's Fig. 8)
  fft-compute-ratio.png   compute time (total - all-to-all) relative to the
                          reference variant, MPI_Alltoall by default (Fig. 9)
  fft-alltoall-share.png  all-to-all time / compute time (Fig. 10), and the
                          all-to-all share of the total
  fft-cache-misses.png    PAPI cache misses per point against size; when the
                          CSVs have no counts (no hardware counters, as in
                          most virtual machines) the figure says so and why
  summary.md              (--summary FILE) where each variant wins and loses

A variant is a program and its --alltoall (telemem-fft/telemem, ...).
Several rounds of one variant are combined per size by the median.  The
summary needs only the standard library; the plots need matplotlib (Debian
python3-matplotlib, hence /usr/bin/python3).  Without it the script says so
and exits 0 after the summary.
"""

import argparse
import csv
import glob
import math
import os
import statistics
import sys
from collections import defaultdict

NUM_FIELDS = ["gflops", "total_s", "alltoall_s", "compute_s",
              "alltoall_share", "alltoall_per_compute", "relerr", "dfterr"]
PAPI_FIELDS = ["papi_l1_dcm", "papi_l2_dcm", "papi_l3_dcm", "papi_tot_cyc",
               "papi_tot_ins"]
LABELS = {
    "telemem-fft/mpi": "MPI_Alltoall",
    "telemem-fft/telemem": "Telemem puts",
    "telemem-fft/armci": "ARMCI puts (libarmci over Telemem)",
    "armci-mpi-fft/armci": "ARMCI-MPI puts",
    "armci-mpi-fft/mpi": "MPI_Alltoall (armci-mpi-fft binary)",
}
ORDER = ["telemem-fft/telemem", "telemem-fft/mpi", "armci-mpi-fft/armci",
         "telemem-fft/armci", "armci-mpi-fft/mpi"]
STYLE = {
    "telemem-fft/telemem": dict(color="tab:red", marker="o"),
    "telemem-fft/mpi": dict(color="tab:blue", marker="s"),
    "armci-mpi-fft/armci": dict(color="tab:green", marker="^"),
    "telemem-fft/armci": dict(color="tab:orange", marker="v"),
    "armci-mpi-fft/mpi": dict(color="tab:gray", marker="x", linestyle="--"),
}


def label(v):
    return LABELS.get(v, v)


def csv_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(glob.glob(os.path.join(p, "*.csv")))
        else:
            out.append(p)
    return out


def read(paths):
    """rows[variant][log2n] -> list of row dicts (one per round); header
    lines ('# key = value') of the first file of each variant."""
    rows = defaultdict(lambda: defaultdict(list))
    headers = {}
    for path in csv_files(paths):
        with open(path, newline="") as f:
            lines = f.readlines()
        head = {}
        for ln in lines:
            if ln.startswith("# ") and " = " in ln:
                k, v = ln[2:].split(" = ", 1)
                head[k.strip()] = v.strip()
        body = [ln for ln in lines if not ln.startswith("#") and ln.strip()]
        if not body:
            continue
        for r in csv.DictReader(body):
            try:
                v = r["impl"] + "/" + r["alltoall"]
                k = int(r["log2n"])
            except (KeyError, ValueError):
                print("plot_fft.py: %s: not an FFT CSV (no impl/alltoall/"
                      "log2n columns)" % path, file=sys.stderr)
                break
            rows[v][k].append(r)
            headers.setdefault(v, head)
    return rows, headers


def med(rs, field):
    vals = []
    for r in rs:
        try:
            x = float(r.get(field, "") or "nan")
        except ValueError:
            continue
        if not math.isnan(x):
            vals.append(x)
    return statistics.median(vals) if vals else None


def table(rows):
    """t[variant][log2n][field] = median over rounds."""
    t = {}
    for v, bysize in rows.items():
        t[v] = {}
        for k, rs in bysize.items():
            d = {f: med(rs, f) for f in NUM_FIELDS + PAPI_FIELDS}
            d["rounds"] = len(rs)
            d["bytes_per_rank"] = med(rs, "bytes_per_rank")
            d["ranks"] = med(rs, "ranks")
            d["n"] = 1 << k
            t[v][k] = d
    return t


def variants(t):
    vs = [v for v in ORDER if v in t]
    return vs + sorted(v for v in t if v not in vs)


def llc_size(t, llc):
    """Smallest log2n whose arrays (all ranks of the node) exceed llc."""
    if not llc:
        return None
    for v in t:
        for k in sorted(t[v]):
            d = t[v][k]
            if d["bytes_per_rank"] and d["ranks"] and \
               d["bytes_per_rank"] * d["ranks"] > llc:
                return k
    return None


def fmt_s(x):
    if x is None:
        return "-"
    if x >= 1:
        return "%.2f s" % x
    if x >= 1e-3:
        return "%.2f ms" % (x * 1e3)
    return "%.1f us" % (x * 1e6)


def ratio_str(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return "%.2f" % (a / b)


def summary(t, headers, ref, llc, out):
    vs = variants(t)
    sizes = sorted({k for v in vs for k in t[v]})
    crossing = llc_size(t, llc)
    w = out.write
    w("## FFT (bench/fft): Gflop/s, compute and all-to-all time\n\n")
    any_head = next(iter(headers.values()), {})
    w("Distributed 1-D complex FFT, six-step with three all-to-alls, %s "
      "ranks; %s.  Values are medians over rounds (rounds per size in the "
      "CSVs) of each run's median transform.  Gflop/s = 5 N log2 N / wall "
      "time.  The machine is shared and noisy: compare within a size, and "
      "distrust differences below ~20%%.\n\n"
      % (any_head.get("ranks", "?"), any_head.get("fftw", "FFTW")))
    papi = any_head.get("papi", "")
    if papi:
        w("PAPI: %s.\n\n" % papi)
    if llc:
        w("Last-level cache taken as %.0f MiB: the three arrays of all ranks "
          "(bytes_per_rank x ranks) exceed it from 2^%s points on.\n\n"
          % (llc / 2**20, crossing if crossing is not None else "(never)"))
    w("### Gflop/s\n\n| log2 N | " + " | ".join(label(v) for v in vs) +
      " | best |\n|---:|" + "---:|" * len(vs) + "---|\n")
    for k in sizes:
        cells, best, bv = [], None, None
        for v in vs:
            g = t[v].get(k, {}).get("gflops")
            cells.append("%.2f" % g if g is not None else "-")
            if g is not None and (best is None or g > best):
                best, bv = g, v
        w("| %d | %s | %s |\n" % (k, " | ".join(cells), label(bv) if bv else "-"))
    w("\n### Compute time relative to %s (Fig. 9)\n\n" % label(ref))
    others = [v for v in vs if v != ref]
    w("| log2 N | " + " | ".join(label(v) for v in others) + " |\n|---:|" +
      "---:|" * len(others) + "\n")
    for k in sizes:
        rc = t.get(ref, {}).get(k, {}).get("compute_s")
        w("| %d | %s |\n" % (k, " | ".join(
            ratio_str(t[v].get(k, {}).get("compute_s"), rc) for v in others)))
    w("\n### All-to-all time / compute time (Fig. 10), and all-to-all time\n\n")
    w("| log2 N | " + " | ".join(label(v) for v in vs) + " |\n|---:|" +
      "---:|" * len(vs) + "\n")
    for k in sizes:
        cells = []
        for v in vs:
            d = t[v].get(k, {})
            a = d.get("alltoall_per_compute")
            cells.append("%.2f (%s)" % (a, fmt_s(d.get("alltoall_s")))
                         if a is not None else "-")
        w("| %d | %s |\n" % (k, " | ".join(cells)))
    # Wins and losses, in words, for the paper's three contenders.
    w("\n### Where each wins and loses\n\n")
    tele, mpi, ref_armci = ("telemem-fft/telemem", "telemem-fft/mpi",
                            "armci-mpi-fft/armci")

    def compare(a, b, field, better_low, what):
        wins, losses = [], []
        for k in sizes:
            x = t.get(a, {}).get(k, {}).get(field)
            y = t.get(b, {}).get(k, {}).get(field)
            if x is None or y is None or x == 0 or y == 0:
                continue
            r = (y / x) if better_low else (x / y)
            (wins if r >= 1 else losses).append((k, r))
        if not wins and not losses:
            return
        def lst(xs):
            return ", ".join("2^%d (%.2fx)" % (k, r) for k, r in xs) or "none"
        w("- %s vs %s, %s: ahead at %s; behind at %s.\n"
          % (label(a), label(b), what, lst(wins), lst(losses)))

    for a, b in [(tele, mpi), (tele, ref_armci), (ref_armci, mpi),
                 ("telemem-fft/armci", ref_armci)]:
        if a in t and b in t:
            compare(a, b, "gflops", False, "Gflop/s")
            compare(a, b, "compute_s", True, "compute time")
            compare(a, b, "alltoall_s", True, "all-to-all time")
    if crossing is not None:
        w("\nBelow and above the cache (arrays of all ranks vs LLC, "
          "Gflop/s median over the sizes on each side):\n\n")
        for v in vs:
            lo = [t[v][k]["gflops"] for k in t[v] if k < crossing and
                  t[v][k]["gflops"] is not None]
            hi = [t[v][k]["gflops"] for k in t[v] if k >= crossing and
                  t[v][k]["gflops"] is not None]
            if lo and hi:
                w("- %s: %.2f below, %.2f above (%.2fx)\n"
                  % (label(v), statistics.median(lo), statistics.median(hi),
                     statistics.median(hi) / statistics.median(lo)))
    w("\n")


def plot(t, headers, ref, llc, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_fft.py: matplotlib is missing (apt-get install "
              "python3-matplotlib; run with /usr/bin/python3): no plots",
              file=sys.stderr)
        return False
    os.makedirs(outdir, exist_ok=True)
    vs = variants(t)
    crossing = llc_size(t, llc)
    ranks = next(iter(headers.values()), {}).get("ranks", "?")

    def finish(ax, fig, name, ylabel, title, logy=False):
        ax.set_xlabel("problem size N (points)")
        ax.set_ylabel(ylabel)
        ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
        if crossing is not None:
            ax.axvline(2 ** crossing, color="k", linestyle=":", linewidth=1)
            ax.text(2 ** crossing, 0.98, " arrays > LLC", rotation=90,
                    va="top", ha="left", fontsize=8,
                    transform=ax.get_xaxis_transform())
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(outdir, name)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print("plot_fft.py: wrote " + path)

    def series(v, field, scale=None):
        ks = sorted(k for k in t[v] if t[v][k].get(field) is not None)
        xs = [2 ** k for k in ks]
        ys = [t[v][k][field] if scale is None else scale(v, k)
              for k in ks]
        pts = [(x, y) for x, y in zip(xs, ys) if y is not None]
        return [p[0] for p in pts], [p[1] for p in pts]

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for v in vs:
        xs, ys = series(v, "gflops")
        ax.plot(xs, ys, label=label(v), **STYLE.get(v, {}))
    finish(ax, fig, "fft-gflops.png", "Gflop/s (5 N log2 N / time)",
           "FFT performance, %s ranks (cf. Fig. 8)" % ranks)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    have = False
    if ref in t:
        for v in vs:
            if v == ref:
                continue

            def r(v_, k):
                a = t[v_][k].get("compute_s")
                b = t[ref].get(k, {}).get("compute_s")
                return a / b if a and b else None
            xs, ys = series(v, "compute_s", r)
            if xs:
                have = True
                ax.plot(xs, ys, label=label(v), **STYLE.get(v, {}))
        ax.axhline(1.0, color="tab:blue", linewidth=1)
    if not have:
        ax.text(0.5, 0.5, "no reference variant %s in the CSVs" % ref,
                ha="center", transform=ax.transAxes)
    finish(ax, fig, "fft-compute-ratio.png",
           "compute time / compute time of %s" % label(ref),
           "Compute time (total - all-to-all) vs %s (cf. Fig. 9)"
           % label(ref))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    for v in vs:
        xs, ys = series(v, "alltoall_per_compute")
        ax1.plot(xs, ys, label=label(v), **STYLE.get(v, {}))
        xs, ys = series(v, "alltoall_share")
        ax2.plot(xs, [100 * y for y in ys], label=label(v), **STYLE.get(v, {}))
    ax2.set_xlabel("problem size N (points)")
    ax2.set_ylabel("all-to-all share of the total (%)")
    ax2.set_xscale("log", base=2)
    ax2.grid(True, which="both", alpha=0.3)
    ax2.set_title("All-to-all share of the total")
    finish(ax1, fig, "fft-alltoall-share.png",
           "all-to-all time / compute time",
           "All-to-all vs compute (cf. Fig. 10)", logy=True)

    counted = [f for f in ("papi_l1_dcm", "papi_l2_dcm", "papi_l3_dcm")
               if any(t[v][k].get(f) is not None for v in vs for k in t[v])]
    if counted:
        fig, axes = plt.subplots(1, len(counted),
                                 figsize=(4.5 * len(counted), 4.5))
        if len(counted) == 1:
            axes = [axes]
        for ax, f in zip(axes, counted):
            for v in vs:
                xs, ys = series(v, f, lambda v_, k, f_=f:
                                t[v_][k][f_] / (1 << k)
                                if t[v_][k].get(f_) is not None else None)
                ax.plot(xs, ys, label=label(v), **STYLE.get(v, {}))
            ax.set_xscale("log", base=2)
            ax.set_title({"papi_l1_dcm": "L1 data-cache misses",
                          "papi_l2_dcm": "L2 data-cache misses",
                          "papi_l3_dcm": "L3 misses (L3_DCM or L3_TCM)"}[f] +
                         "\n(compute phases, all ranks)", fontsize=10)
            ax.set_ylabel("misses per point")
            ax.set_xlabel("problem size N (points)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(outdir, "fft-cache-misses.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print("plot_fft.py: wrote " + path)
    else:
        reason = next((h.get("papi") for h in headers.values()
                       if h.get("papi")), "no PAPI columns in the CSVs")
        fig, ax = plt.subplots(figsize=(7, 3))
        ax.axis("off")
        ax.text(0.5, 0.5, "Cache misses: no PAPI counts in these runs.\n\n"
                + "\n".join(wrap(reason, 80)), ha="center", va="center",
                fontsize=9)
        path = os.path.join(outdir, "fft-cache-misses.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print("plot_fft.py: no PAPI counts (%s); %s says so" % (reason, path))
    return True


def wrap(text, width):
    out, line = [], ""
    for word in text.split():
        if len(line) + len(word) + 1 > width and line:
            out.append(line)
            line = word
        else:
            line = (line + " " + word).strip()
    if line:
        out.append(line)
    return out


def main():
    ap = argparse.ArgumentParser(
        description="Plots (Fig. 8, 9, 10, cache misses) and a summary "
                    "from telemem-fft / armci-mpi-fft CSVs.",
        epilog="Example: /usr/bin/python3 scripts/plot_fft.py --out "
               "results/fft --summary results/fft/summary.md results/fft")
    ap.add_argument("inputs", nargs="+",
                    help="CSV files or directories of CSV files")
    ap.add_argument("--out", default=".", help="directory for the PNGs")
    ap.add_argument("--summary", help="write the markdown summary here")
    ap.add_argument("--ref", default="telemem-fft/mpi",
                    help="reference variant of the compute-time ratio "
                         "(default telemem-fft/mpi)")
    ap.add_argument("--llc", type=float, default=0,
                    help="last-level cache in bytes: marks where the arrays "
                         "of all ranks exceed it (default: no mark)")
    ap.add_argument("--no-plots", action="store_true",
                    help="only the summary")
    args = ap.parse_args()
    rows, headers = read(args.inputs)
    if not rows:
        print("plot_fft.py: no FFT rows in " + " ".join(args.inputs),
              file=sys.stderr)
        return 1
    t = table(rows)
    ref = args.ref if args.ref in t else variants(t)[0]
    if args.summary:
        if os.path.dirname(args.summary):
            os.makedirs(os.path.dirname(args.summary), exist_ok=True)
        with open(args.summary, "w") as f:
            summary(t, headers, ref, args.llc, f)
        print("plot_fft.py: wrote " + args.summary)
    if not args.no_plots:
        plot(t, headers, ref, args.llc, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
