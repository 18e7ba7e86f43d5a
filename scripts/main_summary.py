#!/usr/bin/python3
"""main_summary.py - writes the main job's results/summary.md: five lines of
conclusions computed from the run's CSVs (who wins where, by how much, at
what load), then the machine, the series that were cut or did not run,
and the tables of the NetPIPE comparison and of both FFT runs.

Usage: main_summary.py [--results DIR] [--netpipe DIR] [--fft DIR]
                       [--fft-auto DIR] [--out FILE]

Defaults: DIR/netpipe, DIR/fft (Telemem on the polling path), DIR/fft-auto
(Telemem with auto), DIR/summary.md, DIR = results.  It reads the CSVs
through plot_netpipe.py and plot_fft.py (same directory), so the numbers
are the plots' numbers: a series stopped by its time budget is flagged and
left out of the comparisons.  Standard library only.
"""

import argparse
import io
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_fft  # noqa: E402
import plot_netpipe  # noqa: E402

FFT_PARTS = (("fft", "FFT, Telemem on the polling path "
              "(`TELEMEM_DIRECT=never`, the paper's comparison)"),
             ("fft-auto", "FFT, Telemem with the direct path where faster "
              "(`TELEMEM_DIRECT=auto`)"))


def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return ""


def machine(dirs):
    """Lines on when, what and where: the date and commit of the runs
    (their env.txt), the machine, the load now."""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    cpu = ln.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        mem = f", {kb / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
    except OSError:
        load = "?"
    date = next((v for v in (env_value(d, "date:") for d in dirs) if v),
                None)
    commit = next((v for v in (env_value(d, "git:") for d in dirs) if v),
                  None)
    if not commit:
        here = os.path.dirname(os.path.abspath(__file__))
        commit = sh(["git", "-C", here, "describe", "--always", "--dirty"])
    date = date or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return (f"- runs started: {date}; commit: {commit or 'unknown'}\n"
            f"- machine: {os.cpu_count()} CPUs ({cpu or '?'}){mem}; load "
            f"average when this summary was written: {load}\n"
            "- 2 local ranks; every figure is from one run of this job on "
            "this machine: noisy on a shared machine, compare within the "
            "run only.\n")


def env_value(d, key):
    p = os.path.join(d, "env.txt")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        for ln in f:
            if ln.startswith(key):
                return ln[len(key):].strip()
    return None


def fft_llc(d):
    v = env_value(d, "llc for the plots:")
    m = re.match(r"(\d+)", v or "")
    return float(m.group(1)) if m else 0


def netpipe_part(d):
    """(conclusion lines, body lines) of the NetPIPE results in d."""
    if not d or not os.path.exists(d):
        return [], [f"No NetPIPE results ({d} missing).\n"]
    files, curves, not_run = plot_netpipe.collect([d])
    if not curves:
        return [], [f"No NetPIPE CSVs in {d} (the runs failed; see "
                    f"{d}/run.log).\n"]
    body = plot_netpipe.summary_body(curves, files, not_run,
                                     os.path.join(d, "env.txt"))
    body = [("#" + ln if ln.startswith("#") else ln) for ln in body]
    return plot_netpipe.conclusions(curves), body


def fft_part(d):
    """(conclusion line or '', body text) of one FFT results directory."""
    if not d or not os.path.exists(d):
        return "", f"No FFT results ({d} missing).\n"
    llc = fft_llc(d)
    t, headers, loads, bad = plot_fft.load([d], llc)
    if not t:
        return "", (f"No FFT CSVs in {d} (the runs failed; see "
                    f"{d}/run.log).\n")
    ref = "telemem-fft/mpi" if "telemem-fft/mpi" in t \
        else plot_fft.variants(t)[0]
    buf = io.StringIO()
    plot_fft.summary(t, headers, ref, llc, buf, loads, bad,
                     with_conclusion=False)
    # Its own title (level 2) is replaced by ours.
    text = "\n".join(ln for ln in buf.getvalue().splitlines()
                     if not ln.startswith("## "))
    return plot_fft.conclusion(t, headers, llc, loads, bad), text + "\n"


def write(args):
    np_lines, np_body = netpipe_part(args.netpipe)
    ffts = [(name, title) + fft_part(getattr(args, name.replace("-", "_")))
            for name, title in FFT_PARTS]
    lines = np_lines[:3] + [c for _, _, c, _ in ffts if c]
    lines += np_lines[3:]
    out = ["# Telemem main job: results\n"]
    out.append("## Conclusions (computed from this run's CSVs)\n")
    if lines:
        out += [f"{i}. {c}" for i, c in enumerate(lines[:5], 1)]
    else:
        out.append("No results to conclude from: every run failed (see the "
                   "run logs).")
    out.append("")
    out.append("Ratios are medians over the sizes of each range (per power "
               "of two for NetPIPE) of one implementation's value over the "
               "other's; `*` = data touched after each transfer; "
               "polling = `TELEMEM_DIRECT=never`, auto = the direct path "
               "where faster.  Series stopped by their time budget or that "
               "failed are flagged below and not compared.\n")
    out.append(machine([args.netpipe, args.fft, args.fft_auto]))
    out.append("Plots: `netpipe/fig4_bandwidth.png` (Fig. 4: bandwidth), "
               "`netpipe/fig5_relative.png` (Fig. 5: bandwidth relative to "
               "Telemem), `netpipe/latency.png`; `fft/` and `fft-auto/`: "
               "`fft-gflops.png` (Fig. 8), `fft-compute-ratio.png` (Fig. 9), "
               "`fft-alltoall-share.png` (Fig. 10), `fft-cache-misses.png`."
               "\n")
    out.append("## NetPIPE comparison: Telemem, ARMCI over Telemem, "
               "ARMCI-MPI, MPI\n")
    out += np_body
    out.append("")
    for name, title, _, body in ffts:
        out.append(f"## {title}\n")
        out.append(body)
        out.append(f"Each run with its load: `{name}/summary.md`, "
                   f"`{name}/run.log`; conditions: `{name}/env.txt`.\n")
    with open(args.out, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")
    print(f"main_summary.py: wrote {args.out}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(
        description="Write the main job's summary.md: five computed "
        "conclusions, then the NetPIPE and FFT tables.")
    ap.add_argument("--results", default="results",
                    help="results directory of scripts/main.sh")
    ap.add_argument("--netpipe", help="NetPIPE results (RESULTS/netpipe)")
    ap.add_argument("--fft", help="FFT, polling path (RESULTS/fft)")
    ap.add_argument("--fft-auto", help="FFT, auto (RESULTS/fft-auto)")
    ap.add_argument("--out", help="summary file (RESULTS/summary.md)")
    args = ap.parse_args()
    r = args.results
    args.netpipe = args.netpipe or os.path.join(r, "netpipe")
    args.fft = args.fft or os.path.join(r, "fft")
    args.fft_auto = args.fft_auto or os.path.join(r, "fft-auto")
    args.out = args.out or os.path.join(r, "summary.md")
    if os.path.dirname(args.out):
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
    write(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
