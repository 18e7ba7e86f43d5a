#!/usr/bin/env bash
# main.sh - the main job: installs what is needed, builds Telemem
# (release), and reruns the paper's study on two local ranks -- the NetPIPE
# comparison (Telemem, ARMCI over Telemem, ARMCI-MPI, MPI two-sided; touched
# and untouched) and the HPCC-style FFT (MPI_Alltoall vs alltoall as puts
# through Telemem, our ARMCI and ARMCI-MPI, PAPI counters where the machine
# has them) -- then writes CSVs, PNG plots and results/summary.md.
#
# Usage: scripts/main.sh [--out DIR] [--budget SEC] [--quick] [--skip-install]
#   --out DIR       results directory (default: results)
#   --budget SEC    seconds of benchmark runs in all (default: 600: netpipe
#                   two thirds, the FFT one third; build and plots on top)
#   --quick         tiny sizes, one round: checks that everything runs
#   --skip-install  do not call scripts/install-deps.sh
# The whole job takes at most 15 minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=results budget=600 quick=0 install=1
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --budget) budget=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --skip-install) install=0; shift ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "main.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$budget" in ''|*[!0-9]*) echo "main.sh: --budget wants whole seconds" >&2; exit 2 ;; esac

t0=$(date +%s)
[ "$install" = 1 ] && scripts/install-deps.sh build bench
build=build-release
if [ -f "$build/build.ninja" ]; then
    # Packages may have come since it was configured (FFTW, ARMCI-MPI).
    meson setup --reconfigure "$build" >/dev/null
else
    meson setup "$build" -Dbuildtype=release >/dev/null
fi
ninja -C "$build"
mkdir -p "$out"

# netpipe gets 55%: 12 runs (4 builds, 2 paths, touched or not) that must
# each reach 8 MB; the FFT runs twice (polling path, then auto) in the rest.
np_budget=$((budget * 55 / 100)) fft_budget=$(( (budget - budget * 55 / 100) / 2 ))
# Telemem twice: the paper's polling path alone (am) and the hybrid
# choice (auto: the same-node direct path above its threshold).
np_args=(--build "$build" --out "$out/netpipe" --budget "$np_budget" --rounds 1
         --path am,auto)
fft_args=(--build "$build" --budget "$fft_budget")
if [ "$quick" = 1 ]; then
    np_args+=(--quick)
    fft_args+=(--quick)
fi
status=0
scripts/bench-netpipe.sh "${np_args[@]}" || status=1
# The paper's comparison: Telemem's all-to-all on the polling (AM) path...
TELEMEM_DIRECT=never scripts/bench-fft.sh "${fft_args[@]}" --out "$out/fft" || status=1
# ...and with the hybrid choice (blocks >= the threshold go direct).
TELEMEM_DIRECT=auto scripts/bench-fft.sh "${fft_args[@]}" --out "$out/fft-auto" || status=1

# results/summary.md: five conclusions computed from the CSVs, then each
# study's tables (scripts/main_summary.py).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" scripts/main_summary.py --results "$out" || status=1
echo "main.sh: done in $(( $(date +%s) - t0 )) s; results in $out/ (summary: $out/summary.md)"
exit $status
