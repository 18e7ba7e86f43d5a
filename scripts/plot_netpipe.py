#!/usr/bin/python3
"""plot_netpipe.py - plots and summary of the NetPIPE comparison CSVs.

Reads CSV files ('#' lines are comments) written by telemem-netpipe,
armci-netpipe, armci-mpi-netpipe and mpi-netpipe (bench/netpipe, see
docs/benchmarks.md), with the columns

    mode,touch,bytes,reps,usec_median,usec_min,mbps_median,mbps_max,impl,path

from the given files or directories (scripts/bench-netpipe.sh writes
NAME-rROUND.csv files, env.txt and runs.txt).  Older CSVs without
impl/path are read too: impl then comes from the file name or the mode.

Every size of NetPIPE's schedule (n-3, n, n+3 around 2^k and 3*2^k) goes
to the bin of its nearest power of two: the plots draw the median of a
bin with a band for its spread, the tables give the bin medians.  A series
that stopped before its last size (its --max-seconds budget) is marked
where it stopped and left out of every comparison; a run that failed or
was skipped is named on the plots ("not run").  Writes

  fig4_bandwidth.png  burst-put bandwidth against size, log-log (the
                      paper's Fig. 4): one row per Telemem path (polling,
                      auto), untouched left and touched right
  fig5_relative.png   bandwidth relative to Telemem, untouched solid and
                      touched dashed, a line at 1 (the paper's Fig. 5): one
                      panel per Telemem path
  latency.png         ping-pong one-way time against size, as Fig. 4
  memcpy.png          the copy reference, when telemem-memcpy-bw CSVs exist
  summary.md          (--summary FILE) conclusions first, then the tables

Rounds of one series are combined per size: the median over rounds of each
run's median.  The summary needs only the standard library; the plots need
matplotlib (Debian: python3-matplotlib, hence /usr/bin/python3).  Without
it the script says so and exits 0 (77 with --require-plots, the test's
"skip").
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

OLD_FIELDS = ["mode", "touch", "bytes", "reps", "usec_median", "usec_min",
              "mbps_median", "mbps_max"]
IMPL_ORDER = ["telemem", "armci-telemem", "armci-mpi", "mpi", "npopenmpi"]
IMPL_TEXT = {"telemem": "Telemem", "armci-telemem": "ARMCI over Telemem",
             "armci-mpi": "ARMCI-MPI", "mpi": "MPI two-sided",
             "npopenmpi": "NetPIPE NPopenmpi"}
# Implementations whose path is Telemem's (polling / auto / direct).
ON_TELEMEM = ("telemem", "armci-telemem")
PATH_ORDER = ["am", "auto", "direct"]
LAT_SIZES = [8, 1024, 65536, 1048576]
LAT_MAX = 16384  # latency.png: the small messages (larger: Fig. 4)
BW_SIZES = [8, 1024, 65536, 1048576, 8388608]
BANDS = [(1, 63, "1–63 B"), (64, 4095, "64 B–4 KiB"),
         (4096, 65535, "4–64 KiB"), (65536, 1048575, "64 KiB–1 MiB"),
         (1048576, 1 << 40, "≥ 1 MiB")]
SKIP_EXIT = 77
CORES = [None]  # from env.txt (collect), for the load warning
CUT_NOTE = ("X marker, \"stopped at SIZE\": the series stopped there, short "
            "of the largest size, to keep to its time budget (--max-seconds); "
            "summary.md does not compare it")
RUN_RE = re.compile(r"^(armci-telemem|armci-mpi|telemem|mpi|npopenmpi)"
                    r"(?:-(am|auto|direct))?-([ut])-r(\d+)$")


# ---------------------------------------------------------------- reading

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


def series_of(impl, path):
    """Series name: the implementation, with Telemem's path when it is not
    the polling one (telemem, telemem/auto, armci-telemem/direct, ...)."""
    if impl in ON_TELEMEM and path in ("auto", "direct"):
        return impl + "/" + path
    return impl


def split(series):
    """series -> (impl, path); path 'am' for the polling path and for
    implementations that have no Telemem path."""
    impl, _, path = series.partition("/")
    return impl, path or "am"


def read_csv(path):
    """(rows, head): the data rows and what the '#' lines say -- expected
    largest size, cut and skip notes per mode, load averages."""
    rows, fields = [], OLD_FIELDS
    head = {"max_bytes": None, "stopped": {}, "skipped": {}, "loads": []}
    lines = []
    with open(path, newline="") as f:
        for ln in f:
            if ln.startswith("#"):
                m = re.match(r"# sizes = \d+ from \d+ to (\d+)", ln)
                if m:
                    head["max_bytes"] = int(m.group(1))
                m = re.match(r"# (\w+): stopped before (\d+) bytes", ln)
                if m:
                    head["stopped"][m.group(1)] = int(m.group(2))
                m = re.match(r"# (\w+): (\d+) sizes .*skipped to keep", ln)
                if m:
                    head["skipped"][m.group(1)] = int(m.group(2))
                m = re.match(r"# loadavg[^=]*= *([0-9.]+)", ln)
                if m:
                    head["loads"].append(float(m.group(1)))
            elif ln.strip():
                lines.append(ln)
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
    return rows, head


def row_series(row):
    if row["impl"] == "copy":
        return row["raw_mode"]
    return series_of(row["impl"], row["path"])


class Curve:
    """One (series, mode, touch): the rounds combined per size, and whether
    the series reached its last size."""

    def __init__(self, per_size, info):
        self.sizes = sorted(per_size)
        self.med = {n: statistics.median(v[1] for v in per_size[n])
                    for n in self.sizes}
        self.expected = info.get("max_bytes")
        self.skipped = info.get("skipped", 0)
        self.loads = info.get("loads", [])
        # Cut: the largest size measured in any round is short of the
        # schedule's last one (a round that went on to the end covers it);
        # without the '# sizes' header line, short of a '# MODE: stopped
        # before N bytes' note.
        stopped = info.get("stopped")
        last = self.sizes[-1]
        self.cut = (last < self.expected if self.expected
                    else stopped is not None and last < stopped)

    def bw_bins(self):
        """[(2^k, median, low, high)] of bandwidth in GB/s."""
        return ps.bins([(n, n / us / 1e3) for n, us in self.med.items()
                        if us > 0])

    def lat_bins(self):
        return ps.bins(list(self.med.items()))

    def cut_legend(self):
        return (f", stopped at {ps.size_text(self.sizes[-1])}"
                if self.cut else "")

    def cut_text(self):
        return (f"stopped by its budget after "
                f"{ps.size_text(self.sizes[-1])}"
                if self.cut else "")


def collect(paths):
    """files, curves {(series, mode, touch): Curve}, not_run [(series,
    touch, reason)]."""
    files = []
    dirs = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(glob.glob(os.path.join(p, "*.csv")))
            dirs.append(p)
        else:
            files.append(p)
    data = defaultdict(lambda: defaultdict(list))
    info = defaultdict(lambda: {"max_bytes": None, "stopped": None,
                                "skipped": 0, "loads": []})
    seen_runs = set()
    for path in files:
        rnd = round_of(path)
        rows, head = read_csv(path)
        keys = set()
        for row in rows:
            key = (row_series(row), row["mode"], row["touch"])
            keys.add(key)
            data[key][row["bytes"]].append(
                (rnd, row["usec_median"], row["usec_min"]))
        if rows:
            seen_runs.add(os.path.basename(path)[:-4])
        for key in keys:
            i = info[key]
            if head["max_bytes"]:
                i["max_bytes"] = max(i["max_bytes"] or 0, head["max_bytes"])
            st = head["stopped"].get(key[1])
            if st and (i["stopped"] is None or st < i["stopped"]):
                i["stopped"] = st
            i["skipped"] += head["skipped"].get(key[1], 0)
            i["loads"] += head["loads"]
    curves = {k: Curve(per, info[k]) for k, per in data.items()}
    CORES[0] = ps.env_cores(dirs)
    return files, curves, not_run_runs(dirs, seen_runs, curves)


def not_run_runs(dirs, seen_runs, curves):
    """Runs bench-netpipe.sh meant to make that left no data: failed
    (runs.txt rc != 0), skipped past the budget, implementations not built
    (env.txt).  [(series, touch or None for both, reason)]."""
    out = []
    have = {(k[0], k[2]) for k in curves}
    for d in dirs:
        runs = os.path.join(d, "runs.txt")
        if os.path.exists(runs):
            with open(runs) as f:
                for ln in f:
                    p = ln.split()
                    if len(p) >= 2 and p[1].startswith("rc=") \
                       and p[1] != "rc=0" and p[0] not in seen_runs:
                        out += run_entry(p[0], f"failed, exit {p[1][3:]}",
                                         have)
        env = os.path.join(d, "env.txt")
        if not os.path.exists(env):
            continue
        with open(env) as f:
            for ln in f:
                if ln.startswith("skipped (out of time):"):
                    for name in ln.split(":", 1)[1].split():
                        out += run_entry(name, "skipped: out of time", have)
                m = re.match(r"implementations: .*\(not run: (.*)\)\s*$", ln)
                if m:
                    for impl, why in re.findall(r"(\S+) \(([^)]*)\)",
                                                m.group(1)):
                        if not any(s.split("/")[0] == impl for s, _ in have):
                            out.append((impl, None, why))
    uniq = []
    for e in out:
        if e not in uniq:
            uniq.append(e)
    return uniq


def run_entry(name, why, have):
    m = RUN_RE.match(name)
    if not m:
        return []
    s = series_of(m.group(1), m.group(2) or "am")
    touch = m.group(3) == "t"
    if (s, touch) in have:
        return []  # another round of it has data
    return [(s, touch, why)]


# ---------------------------------------------------------------- naming

def impl_rank(series):
    impl, path = split(series)
    return (IMPL_ORDER.index(impl) if impl in IMPL_ORDER else 99,
            PATH_ORDER.index(path) if path in PATH_ORDER else 9, series)


def label(series, touch=False):
    impl, path = split(series)
    text = IMPL_TEXT.get(impl, impl)
    if impl in ON_TELEMEM:
        text += f" ({ps.PATH_WORDS.get(path, path)})"
    return text + ("*" if touch else "")


def fmt(v, digits=3):
    if v is None:
        return "n/a"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def telemem_paths(curves, not_run=()):
    ps_ = {split(k[0])[1] for k in curves if split(k[0])[0] in ON_TELEMEM}
    ps_ |= {split(s)[1] for s, _, _ in not_run if split(s)[0] in ON_TELEMEM}
    return [p for p in PATH_ORDER if p in ps_] or ["am"]


def row_series_for(path, series):
    """The series of one Telemem path's row: Telemem and ARMCI over
    Telemem on that path, and the references (ARMCI-MPI, MPI, ...)."""
    out = []
    for s in series:
        impl, p = split(s)
        if impl in ON_TELEMEM and p != path:
            continue
        out.append(s)
    return sorted(out, key=impl_rank)


def ref_of(path):
    return series_of("telemem", path)


# ------------------------------------------------------------ comparisons

def bin_ratio(curves, other, ref, mode, touch, allow_cut=False):
    """[(2^k, median, low, high)] of other/ref bandwidth (speed for
    latency: ref time / other time) per size bin; [] when either is
    missing or was cut by its budget (cut series are not compared; the
    plot draws them, marked, with allow_cut)."""
    a, b = curves.get((other, mode, touch)), curves.get((ref, mode, touch))
    if not a or not b or ((a.cut or b.cut) and not allow_cut):
        return []
    pts = [(n, b.med[n] / a.med[n]) for n in a.sizes
           if n in b.med and a.med[n] > 0 and b.med[n] > 0]
    return ps.bins(pts)


def band_median(bins_, lo, hi):
    vals = [m for n, m, _, _ in bins_ if lo <= n <= hi]
    return (statistics.median(vals), min(vals), max(vals)) if vals else None


def bw_band(curve, lo, hi):
    """Median GB/s of a curve's bins in [lo, hi]."""
    r = band_median(curve.bw_bins(), lo, hi) if curve else None
    return r[0] if r else None


def family(series):
    """Implementations that are one contender in a race: Telemem and ARMCI
    over Telemem (any path) are Telemem."""
    impl = split(series)[0]
    return "telemem" if impl in ON_TELEMEM else impl


def contenders(curves, mode, touch):
    """The series the conclusions compare: Telemem on each path, ARMCI-MPI,
    MPI (ARMCI over Telemem is a layer over Telemem: in the tables), not
    cut by their budget."""
    return sorted({k[0] for k, c in curves.items()
                   if k[1] == mode and k[2] == touch and not c.cut
                   and split(k[0])[0] in ("telemem", "armci-mpi", "mpi")},
                  key=impl_rank)


def band_winners(curves, touch, mode="burst"):
    """Who is fastest where: [(range text, winner, per-bin ratios winner /
    rival, rival)], the rival being the fastest contender of another
    family over that range; winner None for a tie (within 5 %, both
    named); adjacent bands with one winner are merged."""
    series = contenders(curves, mode, touch)
    bins_ = {s: dict_bins(curves[(s, mode, touch)]) for s in series}

    def median_in(s, lo, hi):
        vs = [v for n, v in bins_[s].items() if lo <= n <= hi]
        return statistics.median(vs) if vs else None

    def ranked(lo, hi, among):
        return sorted(((median_in(s, lo, hi), s) for s in among
                       if median_in(s, lo, hi)), reverse=True)

    ranges = []  # [lo, hi, winner or (a, b) for a tie]
    for lo, hi, _ in BANDS:
        vals = ranked(lo, hi, series)
        if not vals:
            continue
        best = vals[0][1]
        prev = ranges[-1][2] if ranges else None
        # The last range's winner within 5 % of the best: it goes on (no
        # flip-flop between two variants of one implementation).
        if isinstance(prev, str) and any(
                s == prev and v * 1.05 >= vals[0][0] for v, s in vals):
            best = prev
        rival = next((v for v in vals if family(v[1]) != family(best)), None)
        who = best
        if rival and median_in(best, lo, hi) / rival[0] < 1.05:
            who = tuple(sorted((best, rival[1]), key=impl_rank))
        if ranges and ranges[-1][2] == who:
            ranges[-1][1] = hi
        else:
            ranges.append([lo, hi, who])
    out = []
    for lo, hi, who in ranges:
        best = who[0] if isinstance(who, tuple) else who
        rivals = ranked(lo, hi, [s for s in series
                                 if family(s) != family(best)])
        rival = who[1] if isinstance(who, tuple) else (
            rivals[0][1] if rivals else None)
        rs = [v / bins_[rival][n] for n, v in bins_[best].items()
              if rival and lo <= n <= hi and n in bins_[rival]]
        top = max(n for s in series for n in bins_[s])
        out.append((band_text(lo, min(hi, top)),
                    None if isinstance(who, tuple) else best, rs,
                    rival if not isinstance(who, tuple) else who))
    return out


def band_text(lo, hi):
    """'64 B–4 KiB' (bins 64 .. 2048: hi = 4095), '1–8 MiB' (hi a bin)."""
    if hi >= 1 << 40:
        return f"≥ {ps.size_text(lo)}"
    end = hi + 1 if (hi + 1) & hi == 0 else hi
    return f"{ps.size_text(lo)}–{ps.size_text(end)}"


def rfmt(v):
    return f"{v:.2f}" if v < 1 else f"{v:.1f}" if v < 10 else f"{v:.0f}"


def loads_of(curves):
    ls = [x for c in curves.values() for x in c.loads]
    return (min(ls), max(ls)) if ls else None


def load_text(curves):
    return ps.load_text([x for c in curves.values() for x in c.loads],
                        CORES[0])


def cut_list(curves, mode=None):
    return sorted({(k[0], k[2]) for k, c in curves.items() if c.cut
                   and (mode is None or k[1] == mode)},
                  key=lambda x: (impl_rank(x[0]), x[1]))


def armci_layer(curves):
    """What libarmci costs over Telemem's own calls: per path, latency and
    untouched bursts, the time of ARMCI over Telemem over Telemem's (per
    size bin: median, range, bins outside 0.9-1.1)."""
    parts = []
    for path in ("am", "auto", "direct"):
        t_s = series_of("telemem", path)
        a_s = series_of("armci-telemem", path)
        for mode, lat in (("latency", True), ("burst", False)):
            t = curves.get((t_s, mode, False))
            a = curves.get((a_s, mode, False))
            if not t or not a:
                continue
            tb, ab = dict_bins(t, lat), dict_bins(a, lat)
            # latency bins are times, burst bins bandwidths
            rs = [ab[n] / tb[n] if lat else tb[n] / ab[n]
                  for n in sorted(set(tb) & set(ab)) if tb[n] and ab[n]]
            if not rs:
                continue
            out = sum(1 for r in rs if r < 0.9 or r > 1.1)
            parts.append(f"{mode} ({ps.PATH_WORDS.get(path, path)} path) "
                         f"{rfmt(statistics.median(rs))}× "
                         f"({rfmt(min(rs))}–{rfmt(max(rs))}× per size, "
                         f"{out} of {len(rs)} sizes outside 0.9–1.1×)")
    if not parts:
        return []
    return ["ARMCI over Telemem against Telemem's own calls, time per "
            "message (× = libarmci's over telemem.h's; untouched): "
            + "; ".join(parts) + f" [{load_text(curves)}]."]


def conclusions(curves):
    """Conclusion lines of the NetPIPE comparison, computed from the data:
    untouched and touched burst bandwidth (who wins which size range, by
    how much over the best other implementation, the paper's cache effect)
    and small-message latency, each with the load of the runs."""
    out = []
    load = load_text(curves)
    for touch in (False, True):
        head = ("Burst puts, data touched after arrival (`*`)" if touch
                else "Burst puts, untouched")
        cuts = [label(s, t) for s, t in cut_list(curves, "burst")
                if t == touch]
        fams = {family(s) for s in contenders(curves, "burst", touch)}
        if len(fams) < 2:
            if cuts:
                out.append(f"{head}: not compared — stopped by their time "
                           "budget before the largest size: "
                           + ", ".join(cuts) + " (rerun on a quieter "
                           f"machine or with a larger --budget) [{load}].")
            continue
        w = band_winners(curves, touch)
        parts = []
        for band, best, rs, rival in w:
            if best is None:
                p = (f"{band}: {label(rival[0], touch)} and "
                     f"{label(rival[1], touch)} tie (within 5 %)")
            else:
                p = f"{band}: {label(best, touch)}"
                if rival:
                    m = statistics.median(rs)
                    p += f" at {rfmt(m)}× {label(rival, touch)}"
                    if len(rs) > 1 and max(rs) / min(rs) > 1.15:
                        p += (f" ({rfmt(min(rs))}–{rfmt(max(rs))}× per "
                              "size)")
            parts.append(p)
        line = f"{head}, the fastest per size range — " + "; ".join(parts)
        if touch:
            line += cache_effect(curves)
        if cuts:
            line += (" (not compared, stopped by their budget: "
                     + ", ".join(cuts) + ")")
        out.append(line + f" [{load}].")
    lat = []
    for s in contenders(curves, "latency", False):
        b = dict_bins(curves[(s, "latency", False)], lat=True).get(8)
        if b:
            lat.append((b, s))
    if len({family(s) for _, s in lat}) < 2:
        cuts = [label(s) for s, t in cut_list(curves, "latency") if not t]
        if cuts:
            out.append("Ping-pong latency: not compared — stopped by their "
                       "time budget: " + ", ".join(cuts) + f" [{load}].")
    elif lat:
        lat.sort()
        parts = [f"{label(s)} {v:.2f} µs" + (
            f" ({v / lat[0][0]:.2f}×)" if i else "")
            for i, (v, s) in enumerate(lat)]
        out.append("Ping-pong latency at 8 B (one way, untouched; × = time "
                   "over the fastest's): " + ", ".join(parts)
                   + f" [{load}].")
    return out + armci_layer(curves)


def cache_effect(curves):
    """'; ARMCI-MPI's lead over Telemem (polling) >= 4 KiB: 3.3x untouched,
    1.5x touched' -- the paper's point of Fig. 5."""
    rs = []
    for touch in (False, True):
        b = bin_ratio(curves, "armci-mpi", "telemem", "burst", touch)
        m = band_median(b, 4096, 1 << 40)
        rs.append(m[0] if m else None)
    if None in rs:
        return ""
    if rs[1] < rs[0]:
        return (f"; the paper's cache effect: from 4 KiB up ARMCI-MPI has "
                f"{rs[0]:.2f}× the bandwidth of Telemem (polling) "
                f"untouched, only {rs[1]:.2f}× touched")
    return (f"; from 4 KiB up ARMCI-MPI has {rs[0]:.2f}× the bandwidth of "
            f"Telemem (polling) untouched, {rs[1]:.2f}× touched (no cache "
            "effect in this run)")


# ---------------------------------------------------------------- summary

def write_summary(path, curves, files, not_run=()):
    out = ["# NetPIPE comparison: Telemem, ARMCI over Telemem, ARMCI-MPI, "
           "MPI\n"]
    out += [f"- {c}" for c in conclusions(curves)]
    out.append("")
    out += summary_body(curves, files, not_run,
                        os.path.join(os.path.dirname(path) or ".", "env.txt"))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def summary_body(curves, files, not_run, env):
    """The summary after its conclusions: flags, conditions, tables
    (Markdown lines, sections at level 2)."""
    series = sorted({k[0] for k in curves if not k[0].startswith(
        ("memcpy", "loop"))}, key=impl_rank)
    out = flag_lines(curves, not_run)
    out.append("## Conditions\n")
    if env and os.path.exists(env):
        with open(env) as f:
            out += ["```", f.read().rstrip(), "```\n"]
    nr = max((round_of(f) for f in files), default=0)
    out.append(
        f"{len(files)} CSV files, {max(nr, 1)} round(s).  Per size, the "
        "median over rounds of each run's median over its samples; then "
        "per power of two, the median over the sizes nearest to it "
        "(NetPIPE's n-3, n, n+3 and 3·2^k sizes): the value the plots "
        "draw.  Latency = half a ping-pong round trip (µs); bandwidth = "
        "burst puts, GB/s = 1e9 B/s, time per put including the wait for "
        "completion at the target; `*` = `--touch` (the whole message "
        "area read before each send and after each receive).  Telemem "
        "paths: polling = `TELEMEM_DIRECT=never` (the paper's design), "
        "auto = the direct path where faster.")
    lr = loads_of(curves)
    if lr:
        out.append(f"\nLoad average when the runs started/ended: "
                   f"{lr[0]:.1f} – {lr[1]:.1f} (2 ranks need 2 idle cores; "
                   "on a shared machine every figure here is noisy — "
                   "compare within one results directory only).")
    out.append("")
    out += size_tables(curves, series)
    out += ratio_table(curves, series, not_run)
    out.append("## Cost of touching the data (bandwidth touched / "
               "untouched)\n")
    out.append("| implementation | " + " | ".join(ps.size_text(n)
                                                   for n in BW_SIZES) + " |")
    out.append("|---|" + "---|" * len(BW_SIZES))
    for s in series:
        a, b = curves.get((s, "burst", True)), curves.get((s, "burst", False))
        if a and b and not a.cut and not b.cut:
            ab, bb = dict_bins(a), dict_bins(b)
            out.append(f"| {label(s)} | " + " | ".join(
                f"{ab[n] / bb[n]:.2f}" if n in ab and n in bb else "n/a"
                for n in BW_SIZES) + " |")
    out.append("")
    out.append("Plots: `fig4_bandwidth.png`, `fig5_relative.png`, "
               "`latency.png` in this directory (scripts/plot_netpipe.py).")
    return out


def flag_lines(curves, not_run):
    out = []
    cuts = [(k, c) for k, c in sorted(
        curves.items(), key=lambda kc: (impl_rank(kc[0][0]), kc[0][2],
                                        kc[0][1]))
            if c.cut]
    if cuts:
        out.append("**Stopped by their time budget** (`--max-seconds`; "
                   "not compared: their ratios are left out of the tables "
                   "and the conclusions):\n")
        for (s, mode, touch), c in cuts:
            out.append(f"- {label(s, touch)} {mode}: measured up to "
                       f"{ps.size_text(c.sizes[-1])} of "
                       f"{ps.size_text(c.expected)}")
        out.append("")
    if not_run:
        out.append("**Did not run:**\n")
        for s, touch, why in not_run:
            which = ("" if touch is None else
                     " (touched)" if touch else " (untouched)")
            out.append(f"- {label(s)}{which}: {why}")
        out.append("")
    part = defaultdict(int)
    for k, c in curves.items():
        if c.skipped and not c.cut:
            part[(k[0], k[2])] += c.skipped
    if part:
        out.append("Behind schedule (only powers of two measured for part "
                   "of the range; compared): " + ", ".join(
                       f"{label(s, t)} ({n} size{'s' if n > 1 else ''} "
                       "left out)" for (s, t), n in sorted(
                           part.items(), key=lambda e: (impl_rank(e[0][0]),
                                                        e[0][1]))) + ".\n")
    return out


def dict_bins(curve, lat=False):
    return {n: m for n, m, _, _ in (curve.lat_bins() if lat
                                    else curve.bw_bins())}


def cell(curve, n, lat):
    if not curve:
        return "n/a"
    d = dict_bins(curve, lat)
    if n in d:
        return fmt(d[n])
    if curve.cut and n > curve.sizes[-1]:
        return "cut"
    return "n/a"


def size_tables(curves, series):
    out = []
    for mode, lat, sizes, what in (
            ("burst", False, BW_SIZES, "Burst-put bandwidth (GB/s)"),
            ("latency", True, LAT_SIZES, "Ping-pong latency (µs, one way)")):
        out.append(f"## {what}, untouched / touched\n")
        out.append("| implementation | " + " | ".join(
            ps.size_text(n) for n in sizes) + " |")
        out.append("|---|" + "---|" * len(sizes))
        for s in series:
            u, t = curves.get((s, mode, False)), curves.get((s, mode, True))
            if not u and not t:
                continue
            flag = " ⚠ cut" if (u and u.cut) or (t and t.cut) else ""
            out.append(f"| {label(s)}{flag} | " + " | ".join(
                f"{cell(u, n, lat)} / {cell(t, n, lat)}"
                for n in sizes) + " |")
        out.append("")
    return out


def ratio_table(curves, series, not_run):
    out = ["## Bandwidth relative to Telemem (Fig. 5), untouched / "
           "touched\n",
           "Per size range, the median of the per-power-of-two ratios "
           "other / Telemem of the same path (> 1: the other is faster).  "
           "Series stopped by their budget are not compared (cut); n/a: "
           "no data.\n"]
    out.append("| other / reference | " + " | ".join(b[2] for b in BANDS)
               + " |")
    out.append("|---|" + "---|" * len(BANDS))
    for path in telemem_paths(curves, not_run):
        ref = ref_of(path)
        if not any(k[0] == ref for k in curves):
            continue
        others = [s for s in row_series_for(path, series)
                  if s != ref and s != "npopenmpi"]
        if path == "am":
            others = [s for s in series if split(s)[0] == "telemem"
                      and s != ref] + others
        for s in others:
            cells = []
            for lo, hi, _ in BANDS:
                v = []
                for touch in (False, True):
                    m = band_median(bin_ratio(curves, s, ref, "burst", touch),
                                    lo, hi)
                    a = curves.get((s, "burst", touch))
                    b = curves.get((ref, "burst", touch))
                    v.append(f"{m[0]:.2f}" if m else
                             "cut" if (a and a.cut) or (b and b.cut)
                             else "n/a")
                cells.append(" / ".join(v))
            out.append(f"| {label(s)} / {label(ref)} | " + " | ".join(cells)
                       + " |")
    out.append("")
    return out


# ------------------------------------------------------------------ plots

def import_pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        return None


def not_run_lines(not_run, path, touch=None, what="not run"):
    out = []
    for s, t, why in not_run:
        impl, p = split(s)
        if impl in ON_TELEMEM and p != path:
            continue
        if touch is not None and t is not None and t != touch:
            continue
        out.append(f"{what}: {label(s, bool(t))} — {why}")
    return out


def plot(plt, curves, outdir, not_run=()):
    written = []
    series = sorted({k[0] for k in curves if not k[0].startswith(
        ("memcpy", "loop"))}, key=impl_rank)
    paths = telemem_paths(curves, not_run)
    sizes = [n for k, c in curves.items() for n in c.sizes]
    sizes += [c.expected for c in curves.values() if c.expected]
    lo, hi = (min(sizes), max(sizes)) if sizes else (1, 1 << 23)
    os.makedirs(outdir, exist_ok=True)

    def save(fig, name):
        p = os.path.join(outdir, name)
        ps.save_png(fig, p)
        plt.close(fig)
        written.append(p)

    for mode, name, ylab, sup in (
            ("burst", "fig4_bandwidth.png",
             "bandwidth (GB/s), median per power of two",
             "Burst-put bandwidth against message size (cf. Fig. 4), "
             "2 local ranks"),
            ("latency", "latency.png",
             "one-way time (µs), median per power of two",
             f"Ping-pong latency up to {ps.size_text(LAT_MAX)} (larger: "
             "Fig. 4), 2 local ranks")):
        top = 0.0
        fig, axes = plt.subplots(len(paths), 2, squeeze=False, sharex=True,
                                 sharey=True,
                                 figsize=(12.5, 4.6 * len(paths) + 0.6))
        for r, path in enumerate(paths):
            for c, touch in enumerate((False, True)):
                ax = axes[r][c]
                for s in row_series_for(path, series):
                    cv = curves.get((s, mode, touch))
                    if not cv:
                        continue
                    impl, p = split(s)
                    if mode == "latency":
                        pts = [q for q in cv.lat_bins() if q[0] <= LAT_MAX]
                        top = max([top] + [q[1] for q in pts])
                    else:
                        pts = cv.bw_bins()
                    # In latency.png's range only when it stopped there.
                    cut = cv.cut and (mode == "burst"
                                      or cv.sizes[-1] <= LAT_MAX)
                    ps.draw_series(ax, pts, ps.line_style(impl, p, touch),
                                   label(s, touch) + (cv.cut_legend()
                                                      if cut else ""),
                                   "stopped" if cut else "")
                if not any(k[0] == ref_of(path) for k in curves):
                    ps.empty_note(ax, f"no {label(ref_of(path))} data")
                ax.grid(True, which="major", alpha=0.35)
                ps.log_y(ax, fine=mode == "latency")
                ps.size_axis(ax, lo, hi if mode == "burst"
                             else min(hi, LAT_MAX))
                if r < len(paths) - 1:
                    ax.set_xlabel("")
                if c == 0:
                    ax.set_ylabel(ylab)
                ax.set_title(ps.PATH_TITLE.get(path, path) + "\n"
                             + ("touched: data read after each transfer (*)"
                                if touch else "untouched"), fontsize=10)
                if ax.get_legend_handles_labels()[0]:
                    ax.legend(fontsize=8, loc="best")
                ps.note_box(ax, not_run_lines(not_run, path, touch),
                            "lower right")
        if mode == "latency" and top > 0:
            axes[0][0].set_ylim(None, top * 1.3)
        fig.suptitle(sup + f", {load_text(curves)}\nline = median per "
                     "power of two, band = spread of the sizes around it",
                     fontsize=11)
        cut_any = any(c.cut for k, c in curves.items() if k[1] == mode
                      and (mode == "burst" or c.sizes[-1] <= LAT_MAX))
        if cut_any:
            fig.text(0.5, 0.005, CUT_NOTE, ha="center", va="bottom",
                     fontsize=8.5, color="#8a1c1c")
        fig.tight_layout(rect=(0, 0.025 if cut_any else 0, 1, 1))
        save(fig, name)

    # Fig. 5: relative bandwidth, one panel per Telemem path.
    fig, axes = plt.subplots(1, len(paths), squeeze=False, sharey=True,
                             figsize=(6.6 * len(paths) + 0.4, 6.6))
    allv = []
    any_cut = [False]
    for c, path in enumerate(paths):
        ax = axes[0][c]
        ref = ref_of(path)
        notes = []
        others = [s for s in row_series_for(path, series)
                  if s != ref and s != "npopenmpi"]
        if path == "am":
            others = [s for s in series if split(s)[0] == "telemem"
                      and s != ref] + others
        for s in others:
            impl, p = split(s)
            for touch in (False, True):
                a = curves.get((s, "burst", touch))
                b = curves.get((ref, "burst", touch))
                if not a or not b:
                    continue
                pts = bin_ratio(curves, s, ref, "burst", touch,
                                allow_cut=True)
                allv += [x for q in pts for x in q[1:]]
                st = ps.line_style(impl, p, touch)
                cut = ""
                if a.cut or b.cut:
                    # Drawn faint and marked: the summary leaves it out.
                    st.update(alpha=0.5, linewidth=1.0)
                    cut = "stopped"
                    last = min(x.sizes[-1] for x in (a, b) if x.cut)
                    cut_l = (f", {'' if a.cut else 'Telemem '}stopped at "
                             f"{ps.size_text(last)}")
                    any_cut[0] = True
                ps.draw_series(ax, pts, st, label(s, touch)
                               + (cut_l if cut else ""), cut)
        notes += not_run_lines(not_run, path)
        if not ax.get_lines():
            ps.empty_note(ax, f"no {label(ref)} data to compare with")
        ax.grid(True, which="major", alpha=0.35)
        ps.size_axis(ax, lo, hi)
        ax.set_title(f"Bandwidth ÷ {label(ref)}'s (touched ÷ touched)\n"
                     + ps.PATH_TITLE.get(path, path), fontsize=10)
        if c == 0:
            ax.set_ylabel("bandwidth / Telemem's (median per power of two)")
        ax.text(0.99, 0.985, "above 1: faster than Telemem",
                transform=ax.transAxes, ha="right", va="top", fontsize=8,
                color="#444444")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper center", ncol=2,
                      bbox_to_anchor=(0.5, -0.13))
        ps.note_box(ax, notes, "lower right")
    for c in range(len(paths)):
        ps.ratio_axis(axes[0][c], allv)
    fig.suptitle("Relative burst-put bandwidth (cf. Fig. 5), 2 local "
                 f"ranks, {load_text(curves)}\nsolid untouched (A/T), "
                 "dashed touched (A*/T*); line = median per power of two, "
                 "band = spread", fontsize=11)
    if any_cut[0]:
        fig.text(0.5, 0.005, CUT_NOTE, ha="center", va="bottom",
                 fontsize=8.5, color="#8a1c1c")
    fig.tight_layout(rect=(0, 0.03 if any_cut[0] else 0, 1, 1))
    save(fig, "fig5_relative.png")

    mem = sorted(k for k in curves if k[0].startswith(("memcpy", "loop")))
    if mem:
        fig, ax = plt.subplots(figsize=(9, 5.5))
        for k in mem:
            cv = curves[k]
            ax.plot(*zip(*[(n, m) for n, m, _, _ in cv.bw_bins()]),
                    label=k[0], marker="o", markersize=3, linewidth=1.2,
                    linestyle="-" if k[0].startswith("memcpy") else "--")
        ax.set_yscale("log")
        ps.size_axis(ax, lo, hi)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_ylabel("copy bandwidth (GB/s), median per power of two")
        ax.set_title("memcpy / loop copy in one process (s: source offset, "
                     "d: destination offset)")
        fig.tight_layout()
        save(fig, "memcpy.png")
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

    files, curves, not_run = collect(args.inputs)
    if not curves:
        print("plot_netpipe.py: no CSV rows found in "
              + " ".join(args.inputs), file=sys.stderr)
        return 1
    outdir = args.outdir or (args.inputs[0] if os.path.isdir(args.inputs[0])
                             else os.path.dirname(args.inputs[0]) or ".")
    if args.summary:
        d = os.path.dirname(args.summary)
        if d:
            os.makedirs(d, exist_ok=True)
        write_summary(args.summary, curves, files, not_run)
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
    written = plot(plt, curves, outdir, not_run)
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
