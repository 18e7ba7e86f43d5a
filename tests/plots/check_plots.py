#!/usr/bin/python3
"""check_plots.py - tests of the main job's plots and summaries
(scripts/plot_netpipe.py, plot_fft.py, main_summary.py) on the checked-in
testdata: the scripts run, write every PNG, flag a series cut by its time
budget or failed instead of comparing it, and name Telemem's path.

Usage: check_plots.py CASE SOURCE_ROOT OUT_DIR
  netpipe-cut   plot_netpipe.py on bench/netpipe/testdata/cut
  fft-cut       plot_fft.py on bench/fft/testdata/cut
  main-summary  main_summary.py on both cut cases and fft-sample.csv
Exit 0 pass, 1 fail, 77 skip (no matplotlib for a case that plots).
"""

import os
import re
import shutil
import subprocess
import sys

PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") \
    else sys.executable
FAILS = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        FAILS.append(what)


def run(args):
    p = subprocess.run([PY] + args, capture_output=True, text=True,
                       check=False)
    sys.stdout.write(p.stdout)
    sys.stdout.write(p.stderr)
    return p.returncode


def have_matplotlib():
    return subprocess.run([PY, "-c", "import matplotlib"],
                          capture_output=True, check=False).returncode == 0


def pngs(out, names):
    for n in names:
        p = os.path.join(out, n)
        check(os.path.isfile(p) and os.path.getsize(p) > 5000,
              f"{n} written")


def netpipe_cut(src, out):
    if not have_matplotlib():
        print("SKIP: no matplotlib for " + PY)
        return 77
    data = os.path.join(src, "bench/netpipe/testdata/cut")
    summ = os.path.join(out, "summary.md")
    rc = run([os.path.join(src, "scripts/plot_netpipe.py"), data,
              "--outdir", out, "--summary", summ, "--require-plots"])
    check(rc == 0, "plot_netpipe.py exits 0")
    pngs(out, ["fig4_bandwidth.png", "fig5_relative.png", "latency.png"])
    text = open(summ).read()
    lines = text.splitlines()
    concl = [ln for ln in lines if ln.startswith("- ")][:3]
    check(len(concl) == 3 and concl[0].startswith("- Burst puts, untouched"),
          "summary opens with its conclusions")
    check("not compared" in concl[0] and "MPI two-sided" in concl[0],
          "untouched burst: the cut MPI series is named, not compared")
    check("load 3.1–9.8 on 2 cores: busy" in concl[0],
          "the conclusion gives the load and says it was above the cores")
    check("**Stopped by their time budget**" in text
          and "MPI two-sided burst: measured up to 3 KiB of 64 KiB" in text,
          "the cut series is flagged with where it stopped")
    row = next((ln for ln in lines
                if ln.startswith("| MPI two-sided / Telemem (polling)")), "")
    cells = [c.strip() for c in row.split("|")[2:-1]]
    check(cells and all(c.startswith("cut /") for c in cells),
          "ratio table: every untouched MPI cell reads 'cut' (no 0.0x win)")
    check(not re.search(r"\b0\.0\d?\b.*\*\*telemem", text),
          "no ratio of the cut series reads as a Telemem win")
    check("MPI two-sided ⚠ cut" in text, "key-size table flags the row")
    check("ARMCI over Telemem (polling) (untouched): failed, exit 124"
          in text, "a failed run is listed as not run")
    check("ARMCI-MPI: armci-mpi-netpipe not built" in text,
          "an implementation that was not built is listed")
    check("Telemem (auto) (untouched): skipped: out of time" in text,
          "a run skipped past the budget is listed")
    return 0


def fft_cut(src, out):
    if not have_matplotlib():
        print("SKIP: no matplotlib for " + PY)
        return 77
    data = os.path.join(src, "bench/fft/testdata/cut")
    summ = os.path.join(out, "summary.md")
    rc = run([os.path.join(src, "scripts/plot_fft.py"), "--out", out,
              "--summary", summ, "--llc", "262144", data])
    check(rc == 0, "plot_fft.py exits 0")
    pngs(out, ["fft-gflops.png", "fft-compute-ratio.png",
               "fft-alltoall-share.png", "fft-cache-misses.png"])
    text = open(summ).read()
    check(text.startswith("## FFT (bench/fft), Telemem with auto"),
          "the title names Telemem's path (auto, from the CSV header)")
    check("MPI_Alltoall: stopped after 2^12, failed (exit 1)" in text,
          "the failed variant is flagged")
    check("not compared: MPI_Alltoall" in text.splitlines()[2],
          "the conclusion does not compare the failed variant")
    sys.path.insert(0, os.path.join(src, "scripts"))
    import plot_fft
    never = plot_fft.path_title(plot_fft.telemem_path(
        {"telemem-fft/telemem": {"TELEMEM_DIRECT": "never (set)"}}))
    auto = plot_fft.path_title(plot_fft.telemem_path(
        {"telemem-fft/telemem": {"TELEMEM_DIRECT": "auto (default)"}}))
    check("polling" in never and "auto" in auto and never != auto,
          "polling and auto runs get distinct titles")
    return 0


def main_summary(src, out):
    summ = os.path.join(out, "summary.md")
    rc = run([os.path.join(src, "scripts/main_summary.py"),
              "--netpipe", os.path.join(src, "bench/netpipe/testdata/cut"),
              "--fft", os.path.join(src, "bench/fft/testdata/fft-sample.csv"),
              "--fft-auto", os.path.join(src, "bench/fft/testdata/cut"),
              "--out", summ])
    check(rc == 0, "main_summary.py exits 0")
    lines = open(summ).read().splitlines()
    concl = [ln for ln in lines if re.match(r"[1-9]\. ", ln)]
    check(lines[2].startswith("## Conclusions") and len(concl) == 5,
          "five numbered conclusions first")
    check(all(re.search(r"\[load [0-9.]+–[0-9.]+[^\]]*\]\.$", c)
              or "load not recorded" in c for c in concl),
          "every conclusion says the load")
    check("not compared" in concl[0], "the cut series is not compared")
    check(any("Telemem with auto" in c for c in concl)
          and any("path not recorded" in c for c in concl),
          "the FFT conclusions name Telemem's path")
    check(any(ln.startswith("## FFT, Telemem on the polling path")
              for ln in lines)
          and any(ln.startswith("## FFT, Telemem with the direct path")
                  for ln in lines), "both FFT parts have their section")
    return 0


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    case, src, out = sys.argv[1:]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    rc = {"netpipe-cut": netpipe_cut, "fft-cut": fft_cut,
          "main-summary": main_summary}[case](src, out)
    if rc:
        return rc
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
