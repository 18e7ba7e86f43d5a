#!/usr/bin/python3
"""plot_fft.py - plots and summary of the distributed FFT benchmark
(bench/fft).

Reads CSV files written by telemem-fft / armci-mpi-fft --csv ('#' lines are
the header; columns in docs/fft.md) from the given files or directories, as
scripts/bench-fft.sh leaves them (IMPL-ALLTOALL-rROUND.csv, run.log), and
writes into --out:

  fft-gflops.png          Gflop/s against problem size per variant (the
                          paper's Fig. 8)
  fft-compute-ratio.png   compute time (total - all-to-all) relative to the
                          reference variant, MPI_Alltoall by default, a
                          line at 1 (Fig. 9)
  fft-alltoall-share.png  all-to-all time / compute time (Fig. 10)
  fft-cache-misses.png    PAPI cache misses per point against size; when the
                          CSVs have no counts (no hardware counters, as in
                          most virtual machines) the figure says so and why
  summary.md              (--summary FILE) a conclusion, then the tables

A variant is a program and its --alltoall (telemem-fft/telemem, ...).
Rounds of one variant are combined per size by the median; the plots draw
the median with a band from the slowest to the fastest round.  Telemem's
path (TELEMEM_DIRECT in the CSV headers: never = the polling path, auto)
names every title, so the runs of scripts/main.sh's fft/ and fft-auto/
cannot be confused.  A variant that failed or stopped before the largest
size is named on the plots and not compared.  The summary needs only the
standard library; the plots need matplotlib (Debian python3-matplotlib,
hence /usr/bin/python3).  Without it the script says so and exits 0 after
the summary.
"""

import argparse
import csv
import glob
import math
import os
import re
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_style as ps  # noqa: E402

NUM_FIELDS = ["gflops", "total_s", "alltoall_s", "compute_s",
              "alltoall_share", "alltoall_per_compute", "relerr", "dfterr"]
PAPI_FIELDS = ["papi_l1_dcm", "papi_l2_dcm", "papi_l3_dcm", "papi_tot_cyc",
               "papi_tot_ins"]
LABELS = {
    "telemem-fft/mpi": "MPI_Alltoall",
    "telemem-fft/telemem": "Telemem puts",
    "telemem-fft/armci": "ARMCI puts over Telemem (libarmci)",
    "armci-mpi-fft/armci": "ARMCI-MPI puts",
    "armci-mpi-fft/mpi": "MPI_Alltoall (armci-mpi-fft binary)",
}
ORDER = ["telemem-fft/telemem", "telemem-fft/armci", "armci-mpi-fft/armci",
         "telemem-fft/mpi", "armci-mpi-fft/mpi"]
# Variant -> the implementation whose colour it takes (plot_style).
IMPL = {"telemem-fft/telemem": "telemem", "telemem-fft/armci": "armci-telemem",
        "armci-mpi-fft/armci": "armci-mpi", "telemem-fft/mpi": "mpi",
        "armci-mpi-fft/mpi": "mpi"}
ON_TELEMEM = ("telemem-fft/telemem", "telemem-fft/armci")
PATHS = {"never": "am", "auto": "auto", "always": "direct"}
CORES = [None]  # from env.txt (load), for the load warning


def label(v, path=None):
    text = LABELS.get(v, v)
    if path and v in ON_TELEMEM:
        text += f" ({ps.PATH_WORDS.get(path, path)})"
    return text


def style(v, path):
    if v == "armci-mpi-fft/mpi":
        s = ps.line_style("mpi", "auto", width=1.1)
        s.update(marker="x", linestyle=":", markerfacecolor=s["color"])
        return s
    return ps.line_style(IMPL.get(v, "?"), path if v in ON_TELEMEM else "am",
                         width=1.8)


def csv_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(glob.glob(os.path.join(p, "*.csv")))
        else:
            out.append(p)
    return out


def read(paths):
    """rows[variant][log2n] -> list of row dicts (one per round, '_round'
    from the file name); header lines ('# key = value') of the first file
    of each variant."""
    rows = defaultdict(lambda: defaultdict(list))
    headers = {}
    for path in csv_files(paths):
        with open(path, newline="") as f:
            lines = f.readlines()
        m = re.search(r"-r(\d+)\.csv$", os.path.basename(path))
        rnd = int(m.group(1)) if m else 0
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
            except (KeyError, ValueError, TypeError):
                print("plot_fft.py: %s: not an FFT CSV (no impl/alltoall/"
                      "log2n columns)" % path, file=sys.stderr)
                break
            r["_round"] = rnd
            rows[v][k].append(r)
            headers.setdefault(v, head)
    return rows, headers


def num(r, field):
    try:
        x = float(r.get(field, "") or "nan")
    except ValueError:
        return None
    return None if math.isnan(x) else x


def med(rs, field):
    vals = [x for x in (num(r, field) for r in rs) if x is not None]
    return statistics.median(vals) if vals else None


def table(rows):
    """t[variant][log2n][field] = median over rounds; field + '_lo'/'_hi'
    the range over rounds; '_by_round' {round: row}."""
    t = {}
    for v, bysize in rows.items():
        t[v] = {}
        for k, rs in bysize.items():
            d = {}
            for f in NUM_FIELDS + PAPI_FIELDS:
                vals = [x for x in (num(r, f) for r in rs) if x is not None]
                d[f] = statistics.median(vals) if vals else None
                d[f + "_lo"] = min(vals) if vals else None
                d[f + "_hi"] = max(vals) if vals else None
            d["rounds"] = len(rs)
            d["bytes_per_rank"] = med(rs, "bytes_per_rank")
            d["ranks"] = med(rs, "ranks")
            d["n"] = 1 << k
            d["_by_round"] = {r["_round"]: r for r in rs}
            t[v][k] = d
    return t


def variants(t):
    vs = [v for v in ORDER if v in t]
    return vs + sorted(v for v in t if v not in vs)


def telemem_path(headers):
    """'am', 'auto', 'direct' from TELEMEM_DIRECT in a telemem-fft CSV
    header, or None when no header says."""
    for v in ON_TELEMEM:
        h = headers.get(v, {})
        val = h.get("TELEMEM_DIRECT")
        if val:
            return PATHS.get(val.split()[0], val.split()[0])
    return None


def path_title(path):
    if path is None:
        return "Telemem's path not recorded in the CSVs"
    return ps.PATH_TITLE.get(path, path)


def run_problems(dirs):
    """From bench-fft.sh's run.log: variant -> reason it failed;
    and the load averages when the runs started."""
    failed, loads = {}, []
    for d in dirs:
        p = os.path.join(d, "run.log")
        if not os.path.exists(p):
            continue
        with open(p) as f:
            for ln in f:
                m = re.search(r"(\S+) --alltoall (\S+) failed with status "
                              r"(\d+)", ln)
                if m:
                    failed[m.group(1) + "/" + m.group(2)] = (
                        f"failed (exit {m.group(3)})")
                m = re.search(r"\(load: ([0-9.]+)", ln)
                if m:
                    loads.append(float(m.group(1)))
    return failed, loads


def status(t, failed, expected):
    """variant -> text for variants that did not run ('not run: ...') or
    stopped before the largest size ('stopped after 2^k'); complete
    variants are absent."""
    top = max((k for v in t for k in t[v]), default=0)
    out = {}
    for v in expected:
        if v not in t:
            out[v] = "not run" + (f": {failed[v]}" if v in failed else
                                  " (not built, or not asked for)")
    for v in t:
        last = max(t[v])
        if last < top:
            out[v] = f"stopped after 2^{last}" + (
                f", {failed[v]}" if v in failed else "")
    return out


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


def ratios(t, a, b, field):
    """{log2n: a/b} of the medians, where both have the size."""
    out = {}
    for k in t.get(a, {}):
        x = t[a][k].get(field)
        y = t.get(b, {}).get(k, {}).get(field)
        if x and y:
            out[k] = x / y
    return out


def split_median(rs, crossing):
    """(median below the LLC, median above) of {log2n: ratio}; one value
    (None for above) without a crossing."""
    lo = [r for k, r in rs.items() if crossing is None or k < crossing]
    hi = [r for k, r in rs.items() if crossing is not None and k >= crossing]
    return (statistics.median(lo) if lo else None,
            statistics.median(hi) if hi else None)


def conclusion(t, headers, llc, loads, bad, cores=None):
    """One line: how Telemem's puts do against MPI_Alltoall and ARMCI-MPI's
    puts (Gflop/s, below and above the cache) and the compute time after
    them (the paper's Fig. 9), with the load.  Variants in 'bad' (failed,
    cut) are not compared."""
    tele, mpi, am = ("telemem-fft/telemem", "telemem-fft/mpi",
                     "armci-mpi-fft/armci")
    path = telemem_path(headers)
    sizes = sorted({k for v in t for k in t[v]})
    if not sizes:
        return ""
    crossing = llc_size(t, llc)
    split_ok = bool(crossing and sizes[0] < crossing <= sizes[-1])
    where = ("below / above the last-level cache, 2^%d–2^%d / 2^%d–2^%d"
             % (sizes[0], crossing - 1, crossing, sizes[-1]) if split_ok
             else "2^%d–2^%d points" % (sizes[0], sizes[-1]))
    if not split_ok:
        crossing = None
    load = ps.load_text(loads, cores or CORES[0])
    head = ("FFT, %s ranks, %s"
            % (next(iter(headers.values()), {}).get("ranks", "?"),
               {"am": "Telemem on the polling path",
                "auto": "Telemem with auto",
                "direct": "Telemem on the direct path"}.get(
                    path, "Telemem's path not recorded")))
    if tele not in t or tele in bad:
        return (head + ": Telemem puts did not run to the end (%s); not "
                "compared [%s]." % (bad.get(tele, "no data"), load))

    def pair(r):
        a, b = r
        return ("%.2f×" % a if b is None else "%.2f× / %.2f×" % (a, b))

    parts = []
    for other, what in ((mpi, "of MPI_Alltoall"),
                        (am, "of ARMCI-MPI puts")):
        if other in t and other not in bad:
            parts.append("%s the Gflop/s %s" % (pair(split_median(
                ratios(t, tele, other, "gflops"), crossing)), what))
    line = head + ": Telemem puts get " + " and ".join(parts)
    line += " (%s)" % where
    if mpi in t and mpi not in bad:
        line += ("; the compute time after them is %s that after "
                 "MPI_Alltoall (cf. Fig. 9)" % pair(split_median(
                     ratios(t, tele, mpi, "compute_s"), crossing)))
    skipped = [label(v) for v in (mpi, am) if v in bad]
    if skipped:
        line += " (not compared: %s)" % "; ".join(
            "%s, %s" % (label(v), bad[v]) for v in (mpi, am) if v in bad)
    return line + " [%s]." % load


def summary(t, headers, ref, llc, out, loads=(), bad=None,
            with_conclusion=True):
    bad = bad or {}
    vs = variants(t)
    path = telemem_path(headers)
    sizes = sorted({k for v in vs for k in t[v]})
    crossing = llc_size(t, llc)
    w = out.write
    w("## FFT (bench/fft), %s\n\n" % path_title(path))
    c = conclusion(t, headers, llc, loads, bad) if with_conclusion else ""
    if c:
        w("- %s\n\n" % c)
    if bad:
        w("**Not run or stopped early (not compared):** %s.\n\n"
          % "; ".join("%s: %s" % (label(v), why) for v, why in bad.items()))
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
    w("### Gflop/s (Fig. 8)\n\n| log2 N | " + " | ".join(label(v) for v in vs)
      + " | best |\n|---:|" + "---:|" * len(vs) + "---|\n")
    for k in sizes:
        cells, best, bv = [], None, None
        for v in vs:
            g = t[v].get(k, {}).get("gflops")
            cells.append("%.2f" % g if g is not None else "-")
            if g is not None and v not in bad and (best is None or g > best):
                best, bv = g, v
        w("| %d | %s | %s |\n" % (k, " | ".join(cells),
                                  label(bv) if bv else "-"))
    w("\n### Compute time relative to %s (Fig. 9)\n\n" % label(ref))
    others = [v for v in vs if v != ref and v not in bad]
    w("| log2 N | " + " | ".join(label(v) for v in others) + " |\n|---:|" +
      "---:|" * len(others) + "\n")
    for k in sizes:
        rc = t.get(ref, {}).get(k, {}).get("compute_s")
        w("| %d | %s |\n" % (k, " | ".join(
            ratio_str(t[v].get(k, {}).get("compute_s"), rc) for v in others)))
    w("\n### All-to-all time / compute time (Fig. 10), and all-to-all "
      "time\n\n")
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
    w("\n### Where each wins and loses\n\n")
    tele, mpi, ref_armci = ("telemem-fft/telemem", "telemem-fft/mpi",
                            "armci-mpi-fft/armci")

    def compare(a, b, field, better_low, what):
        wins, losses = [], []
        for k, r in sorted(ratios(t, a, b, field).items()):
            r = 1 / r if better_low else r
            (wins if r >= 1 else losses).append((k, r))
        if not wins and not losses:
            return

        def lst(xs):
            return ", ".join("2^%d (%.2fx)" % (k, r) for k, r in xs) or "none"
        w("- %s vs %s, %s: ahead at %s; behind at %s.\n"
          % (label(a), label(b), what, lst(wins), lst(losses)))

    for a, b in [(tele, mpi), (tele, ref_armci), (ref_armci, mpi),
                 ("telemem-fft/armci", ref_armci)]:
        if a in t and b in t and a not in bad and b not in bad:
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


def plot(t, headers, ref, llc, outdir, bad=None, loads=()):
    bad = bad or {}
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
    ranks += " ranks, " + ps.load_text(loads, CORES[0])
    path = telemem_path(headers)
    ptitle = path_title(path)
    ks = sorted({k for v in vs for k in t[v]})
    lo, hi = (1 << ks[0], 1 << ks[-1]) if ks else (1, 2)

    def finish(ax, fig, name, ylabel, title, notes=()):
        ps.size_axis(ax, lo, hi, "problem size N (points)", pow2=True)
        ax.set_ylabel(ylabel)
        if crossing is not None:
            ax.axvline(2 ** crossing, color="k", linestyle=":", linewidth=1)
            ax.text(2 ** crossing, 0.98, " arrays > last-level cache",
                    rotation=90, va="top", ha="left", fontsize=8,
                    transform=ax.get_xaxis_transform())
        ax.set_title(title + "\n" + ptitle + "\n" + ranks, fontsize=9.5)
        ax.grid(True, which="major", alpha=0.35)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper center", ncol=2,
                      bbox_to_anchor=(0.5, -0.14))
        if notes:
            fig.text(0.5, 0.005, "\n".join(notes), ha="center",
                     va="bottom", fontsize=8, color="#8a1c1c")
        fig.tight_layout(rect=(0, 0.032 * len(notes), 1, 1))
        p = os.path.join(outdir, name)
        ps.save_png(fig, p)
        plt.close(fig)
        print("plot_fft.py: wrote " + p)

    def pts(v, field, per_point=False):
        """[(N, median, low, high)] over rounds (per_point: / N)."""
        out = []
        for k in sorted(t[v]):
            d = t[v][k]
            s = (1 << k) if per_point else 1
            if d.get(field) is not None:
                out.append((1 << k, d[field] / s, d[field + "_lo"] / s,
                            d[field + "_hi"] / s))
        return out

    def cut_text(v):
        return bad[v] if v in bad and v in t else ""

    def not_run(v_list):
        return ["%s: %s" % (label(v, path), bad[v]) for v in v_list
                if v in bad and v not in t]

    # Fig. 8: Gflop/s.
    fig, ax = plt.subplots(figsize=(7.6, 5.6))
    for v in vs:
        ps.draw_series(ax, pts(v, "gflops"), style(v, path), label(v, path),
                       cut_text(v))
    ax.set_ylim(bottom=0)
    finish(ax, fig, "fft-gflops.png", "Gflop/s (5 N log2 N / time)",
           "FFT performance (cf. Fig. 8); band: spread over rounds",
           not_run(ORDER))

    # Fig. 9: compute time relative to the reference, per round.
    fig, ax = plt.subplots(figsize=(7.6, 5.6))
    notes = []
    vals = []
    if ref in t and ref not in bad:
        for v in vs:
            if v == ref:
                continue
            if v in bad:
                notes.append("not compared: %s (%s)" % (label(v, path),
                                                         bad[v]))
                continue
            p = []
            for k in sorted(t[v]):
                if k not in t[ref] or not t[v][k]["compute_s"] \
                   or not t[ref][k]["compute_s"]:
                    continue
                a, b = t[v][k]["_by_round"], t[ref][k]["_by_round"]
                per = [num(a[r], "compute_s") / num(b[r], "compute_s")
                       for r in a if r in b and num(a[r], "compute_s")
                       and num(b[r], "compute_s")]
                m = t[v][k]["compute_s"] / t[ref][k]["compute_s"]
                p.append((1 << k, m, min(per + [m]), max(per + [m])))
            vals += [x for q in p for x in q[1:]]
            ps.draw_series(ax, p, style(v, path), label(v, path))
        ax.axhline(1.0, color="black", linewidth=1.1)
        pos = [x for x in vals if x and x > 0]
        if pos and max(pos + [1.0]) / min(pos + [1.0]) > 3:
            ps.ratio_axis(ax, pos)  # a busy machine: log2, 1/4x .. 4x
        elif pos:
            ax.set_ylim(min(min(pos), 1.0) / 1.08, max(max(pos), 1.0) * 1.08)
    else:
        notes.append("no reference: %s %s" % (label(ref), bad.get(
            ref, "not in the CSVs")))
        ps.empty_note(ax, "no %s to compare with" % label(ref))
    finish(ax, fig, "fft-compute-ratio.png",
           "compute time / that after %s (below 1: less)" % label(ref),
           "Compute time (total − all-to-all) vs %s (cf. Fig. 9); band: "
           "per-round ratios" % label(ref), notes + not_run(ORDER))

    # Fig. 10: all-to-all time / compute time.
    fig, ax = plt.subplots(figsize=(7.6, 5.6))
    for v in vs:
        ps.draw_series(ax, pts(v, "alltoall_per_compute"), style(v, path),
                       label(v, path), cut_text(v))
    ps.log_y(ax, fine=True)
    finish(ax, fig, "fft-alltoall-share.png",
           "all-to-all time / compute time",
           "All-to-all time relative to compute time (cf. Fig. 10)",
           not_run(ORDER))

    counted = [f for f in ("papi_l1_dcm", "papi_l2_dcm", "papi_l3_dcm")
               if any(t[v][k].get(f) is not None for v in vs for k in t[v])]
    if counted:
        fig, axes = plt.subplots(1, len(counted),
                                 figsize=(4.8 * len(counted), 5.0))
        if len(counted) == 1:
            axes = [axes]
        for ax, f in zip(axes, counted):
            for v in vs:
                ps.draw_series(ax, pts(v, f, per_point=True), style(v, path),
                               label(v, path), cut_text(v))
            ps.size_axis(ax, lo, hi, "problem size N (points)", pow2=True)
            if crossing is not None:
                ax.axvline(2 ** crossing, color="k", linestyle=":",
                           linewidth=1)
            ax.set_title({"papi_l1_dcm": "L1 data-cache misses",
                          "papi_l2_dcm": "L2 data-cache misses",
                          "papi_l3_dcm": "L3 misses (L3_DCM or L3_TCM)"}[f] +
                         "\n(compute phases, all ranks)", fontsize=10)
            ax.set_ylabel("misses per point")
            ax.grid(True, which="major", alpha=0.35)
            ax.legend(fontsize=7)
        fig.suptitle("Cache misses per point — " + ptitle, fontsize=10)
        fig.tight_layout()
        path_ = os.path.join(outdir, "fft-cache-misses.png")
        ps.save_png(fig, path_)
        plt.close(fig)
        print("plot_fft.py: wrote " + path_)
    else:
        reason = next((h.get("papi") for h in headers.values()
                       if h.get("papi")), "no PAPI columns in the CSVs")
        fig, ax = plt.subplots(figsize=(7, 3))
        ax.axis("off")
        ax.text(0.5, 0.5, "Cache misses (" + ptitle + "):\nno PAPI counts "
                "in these runs.\n\n" + "\n".join(wrap(reason, 80)),
                ha="center", va="center", fontsize=9)
        path_ = os.path.join(outdir, "fft-cache-misses.png")
        ps.save_png(fig, path_)
        plt.close(fig)
        print("plot_fft.py: no PAPI counts (%s); %s says so" % (reason, path_))
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


def load(inputs, llc=0, expected=None):
    """Everything one FFT results directory says: (t, headers, loads, bad)
    -- bad: variant -> why it is not compared (not run, failed, stopped
    early).  expected: the variants that should be there (default: those
    of bench-fft.sh for the programs that have CSVs)."""
    rows, headers = read(inputs)
    t = table(rows)
    dirs = [p for p in inputs if os.path.isdir(p)]
    failed, loads = run_problems(dirs)
    CORES[0] = ps.env_cores(dirs)
    if expected is None:
        progs = {v.split("/")[0] for v in t}
        expected = [v for v in ORDER if v.split("/")[0] in progs
                    or v.startswith("armci-mpi-fft/")]
    return t, headers, loads, status(t, failed, expected)


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
    t, headers, loads, bad = load(args.inputs, args.llc)
    if not t:
        print("plot_fft.py: no FFT rows in " + " ".join(args.inputs),
              file=sys.stderr)
        return 1
    ref = args.ref if args.ref in t else variants(t)[0]
    if args.summary:
        if os.path.dirname(args.summary):
            os.makedirs(os.path.dirname(args.summary), exist_ok=True)
        with open(args.summary, "w") as f:
            summary(t, headers, ref, args.llc, f, loads, bad)
        print("plot_fft.py: wrote " + args.summary)
    if not args.no_plots:
        plot(t, headers, ref, args.llc, args.out, bad, loads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
