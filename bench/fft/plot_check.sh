#!/bin/sh
# plot_check.sh - test of scripts/plot_fft.py: on a small checked-in CSV it
# must write every figure as a non-empty PNG.  Exit 77 (skip, with the
# reason) when the system Python or its matplotlib is missing.
# With a second CSV (synthetic PAPI counts) it also draws the miss curves.
# Usage: plot_check.sh PLOT_FFT_PY CSV OUTDIR [PAPI_CSV]
set -eu
py=/usr/bin/python3
if [ ! -x "$py" ]; then
    echo "SKIP: $py not found (apt-get install python3 python3-matplotlib)"
    exit 77
fi
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
    echo "SKIP: matplotlib missing in $py (apt-get install python3-matplotlib)"
    exit 77
fi
rm -rf "$3"
"$py" "$1" --out "$3" "$2"
for f in fft-gflops.png fft-compute-ratio.png fft-alltoall-share.png \
         fft-cache-misses.png; do
    if [ ! -s "$3/$f" ]; then
        echo "FAIL: $3/$f was not written"
        exit 1
    fi
    echo "ok: $3/$f"
done
if [ $# -ge 4 ]; then
    rm -rf "$3-papi"
    out=$("$py" "$1" --out "$3-papi" "$4")
    echo "$out"
    case "$out" in
    *"wrote $3-papi/fft-cache-misses.png"*) echo "ok: miss curves drawn" ;;
    *) echo "FAIL: no miss curves from $4"; exit 1 ;;
    esac
fi
