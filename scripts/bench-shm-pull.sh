#!/usr/bin/env bash
# bench-shm-pull.sh - the shared-memory pull path (docs/shm.md) against the
# two-copy ring, alternating in one run, on the polling path
# (TELEMEM_DIRECT=never): NetPIPE burst puts (64 KiB - 8 MiB) and 8-byte
# latency with every payload from 64 KiB pulled (pull: CMA from 64 KiB),
# with the library's defaults (default: sources in a telemem_malloc_all
# block pulled with memcpy from 64 KiB, others with CMA from 4 MiB), with
# TELEMEM_SHM_CMA=n (copy) and, with --base, another build (main), and the
# FFT (bench/fft) with Telemem puts (pull, default, copy) beside
# MPI_Alltoall and ARMCI-MPI's puts.  Bursts run untouched and with --touch,
# beside ARMCI-MPI's (armci-mpi-netpipe).  Prints the load, the figures and
# medians over rounds, with default against main (or copy), MPI and
# ARMCI-MPI; CSVs go to --out.
set -euo pipefail

build=build
base=
out=results/shm-pull
rounds=3
min_log2=14
max_log2=22
usage() {
    cat <<'EOF'
Usage: scripts/bench-shm-pull.sh [--build DIR] [--base DIR] [--out DIR]
                                 [--rounds N] [--min-log2 K] [--max-log2 K]
Each round runs, in an order rotated per round: telemem-netpipe burst
(64k..8m, untouched and --touch) and latency (8 B) with CMA pulls from
64 KiB (pull), with the library's defaults (default), with
TELEMEM_SHM_CMA=n (copy), and from the build --base (main; an earlier
build to compare with); armci-mpi-netpipe bursts (osc=sm,pt2pt, untouched
and --touch); telemem-fft --alltoall
telemem likewise (pull, default, copy), telemem-fft --alltoall mpi,
armci-mpi-fft --alltoall armci (2 ranks, 2^K points).  All Telemem
runs with TELEMEM_DIRECT=never.  Figures are noisy on a shared machine:
the load is printed with them; rerun quiet before quoting.
EOF
}
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --min-log2) min_log2=$2; shift 2 ;;
    --max-log2) max_log2=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
run=$build/tools/telemem-run
np=$build/bench/netpipe/telemem-netpipe
tf=$build/bench/fft/telemem-fft
af=$build/bench/fft/armci-mpi-fft
anp=$build/bench/netpipe/armci-mpi-netpipe
for f in "$run" "$np" "$tf"; do
    [ -x "$f" ] || { echo "missing $f (build first)" >&2; exit 2; }
done
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export TELEMEM_DIRECT=never
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load: $(cut -d' ' -f1-3 /proc/loadavg)"

netpipe() { # label build NAME=value
    for t in "" --touch; do
        env "$3" "$2/tools/telemem-run" -n 2 \
            "$2/bench/netpipe/telemem-netpipe" --mode burst --min 64k \
            --max 8m --perturbation 0 --time 0.2 --samples 7 $t |
            grep '^burst' | sed "s/^/$1,/" >>"$out/netpipe.csv"
    done
    env "$3" "$2/tools/telemem-run" -n 2 "$2/bench/netpipe/telemem-netpipe" \
        --mode latency --min 8 --max 8 --perturbation 0 --time 0.5 \
        --samples 9 | grep '^latency' | sed "s/^/$1,/" >>"$out/netpipe.csv"
}
armci_netpipe() {
    for t in "" --touch; do
        OMPI_MCA_osc=sm,pt2pt mpirun --bind-to core -np 2 "$anp" \
            --mode burst --min 64k --max 8m --perturbation 0 --time 0.2 \
            --samples 7 $t | grep '^burst' | sed "s/^/armci-mpi,/" \
            >>"$out/netpipe.csv"
    done
}
fft() { # label NAME=value|- exe alltoall
    local csv=$out/fft-$1-r$r.csv
    if [ "$2" = - ]; then
        OMPI_MCA_osc=sm,pt2pt mpirun --oversubscribe -np 2 "$3" --alltoall "$4" \
            --min-log2 "$min_log2" --max-log2 "$max_log2" --reps 3 \
            --min-time 0.1 --csv "$csv" >/dev/null
    else
        env "$2" mpirun --oversubscribe -np 2 -x "${2%%=*}" \
            -x TELEMEM_DIRECT "$3" --alltoall "$4" --min-log2 "$min_log2" \
            --max-log2 "$max_log2" --reps 3 --min-time 0.1 --csv "$csv" \
            >/dev/null
    fi
    grep -v '^#' "$csv" | tail -n +2 | sed "s/^/$1,$r,/" >>"$out/fft.csv"
}
: >"$out/netpipe.csv"
: >"$out/fft.csv"
pull=TELEMEM_SHM_CMA_THRESHOLD=64k
variants=(np-pull np-default np-copy fft-pull fft-default fft-copy fft-mpi
          fft-armci-mpi)
[ -x "$anp" ] && variants+=(np-armci-mpi)
[ -n "$base" ] && variants+=(np-main)
for r in $(seq 1 "$rounds"); do
    n=${#variants[@]}
    for i in $(seq 0 $((n - 1))); do
        v=${variants[$(( (i + r) % n ))]}
        echo "# round $r: $v (load: $(cut -d' ' -f1-3 /proc/loadavg))"
        case $v in
        np-pull) netpipe pull "$build" "$pull" ;;
        np-default) netpipe default "$build" TELEMEM_SHM_CMA=y ;;
        np-copy) netpipe copy "$build" TELEMEM_SHM_CMA=n ;;
        np-main) netpipe main "$base" TELEMEM_DIRECT=never ;;
        np-armci-mpi) armci_netpipe ;;
        fft-pull) fft pull "$pull" "$tf" telemem ;;
        fft-default) fft default TELEMEM_SHM_CMA=y "$tf" telemem ;;
        fft-copy) fft copy TELEMEM_SHM_CMA=n "$tf" telemem ;;
        fft-mpi) fft mpi - "$tf" mpi ;;
        fft-armci-mpi) [ -x "$af" ] && fft armci-mpi - "$af" armci ;;
        esac
    done
done
echo "# end: load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'EOF'
import csv, statistics, sys, collections
out = sys.argv[1]
med = statistics.median
np = collections.defaultdict(list)
for row in csv.reader(open(out + "/netpipe.csv")):
    lab, mode, touch, size = row[0], row[1], row[2], int(row[3])
    if mode == "burst" and touch == "1":
        mode = "burst --touch"
    np[(mode, size, lab)].append(float(row[7] if mode != "latency" else row[5]))
print("\nNetPIPE (TELEMEM_DIRECT=never), medians over rounds")
nl = [l for l in ("pull", "default", "copy", "main", "armci-mpi")
      if any(k[2] == l for k in np)]
base = "main" if "main" in nl else "copy"
ratio = lambda v, a: f"{v['default'] / v[a]:.2f}" if "default" in v and a in v else "-"
print("| mode | bytes | " + " | ".join(nl) +
      f" | default / {base} | default / armci-mpi |")
print("|---|---:|" + "---:|" * (len(nl) + 2))
for (mode, size) in sorted({(k[0], k[1]) for k in np}):
    v = {l: med(np[(mode, size, l)]) for l in nl if np[(mode, size, l)]}
    unit = "us" if mode == "latency" else "MB/s"
    print(f"| {mode} ({unit}) | {size} | " +
          " | ".join(f"{v[l]:.1f}" if l in v else "-" for l in nl) +
          f" | {ratio(v, base)} | {ratio(v, 'armci-mpi')} |")
ff = collections.defaultdict(list)
for row in csv.reader(open(out + "/fft.csv")):
    lab, log2n, gf, a2a = row[0], int(row[6]), float(row[11]), float(row[13])
    ff[(log2n, lab)].append((gf, a2a))
labs = ["pull", "default", "copy", "mpi", "armci-mpi"]
print("\nFFT, 2 ranks, Gflop/s (all-to-all ms), medians over rounds")
print("| log2 N | " + " | ".join(labs) +
      " | default/mpi | default/armci-mpi |")
print("|---:|" + "---:|" * (len(labs) + 2))
for n in sorted({k[0] for k in ff}):
    cells, g = [], {}
    for l in labs:
        v = ff.get((n, l))
        if v:
            g[l] = med(x[0] for x in v)
            cells.append(f"{g[l]:.2f} ({1e3 * med(x[1] for x in v):.2f})")
        else:
            cells.append("-")
    d = "default"
    r1 = f"{g[d] / g['mpi']:.2f}" if d in g and "mpi" in g else "-"
    r2 = (f"{g[d] / g['armci-mpi']:.2f}"
          if d in g and "armci-mpi" in g else "-")
    print(f"| {n} | " + " | ".join(cells) + f" | {r1} | {r2} |")
EOF
