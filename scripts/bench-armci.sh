#!/usr/bin/env bash
# bench-armci.sh - run the ARMCI benchmark (bench/armci/armci_bench.c) on 2
# local ranks against libarmci over Telemem and against Debian's ARMCI-MPI
# in one invocation, alternating the order each round, then print a table
# of medians with ratios and write CSVs (docs/armci.md explains them).
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/bench-armci.sh [options]

Each round runs, in alternating order (A B C, then C B A, ...):
  libarmci          telemem-run -n 2 telemem-armci-bench  (progress thread on)
  armci-mpi         mpirun -n 2 armci-mpi-bench           (ARMCI-MPI defaults)
  armci-mpi-direct  the same with ARMCI_STRIDED_METHOD=DIRECT
Tests: contiguous put/get 8 B .. --max, put+fence latency, strided
patches of 64 KiB with rows of 8 B .. 64 KiB (PutS/GetS), and the
ARMCI_Rmw fetch-and-add rate.  Medians over rounds are compared; a ratio
above 1 means libarmci is faster.

Options:
  --build DIR       Meson build directory (default: build)
  --out DIR         results directory (default: results/armci)
  --rounds N        alternating rounds (default: 3)
  --time SEC        seconds per measured point (default: 0.1)
  --max SIZE        largest contiguous transfer (default: 8m)
  --target MODE     barrier (target waits in ARMCI_Barrier, default) or
                    spin (target spins on a plain load of its memory)
  --noprogress      also run libarmci with ARMCI_PROGRESS_THREAD=0
  --no-ref          libarmci only (no ARMCI-MPI)
  --idle-wait SEC   before each run wait up to SEC s for the machine to be
                    idle (< 15% busy for 3 s; default 120, 0 = no wait)
  --quick           --rounds 1 --time 0.01 --max 64k --idle-wait 0
  -h, --help        this text
Raw CSVs of every run, env.txt, summary.csv and summary.md go to DIR.
EOF
}

build=build
out=results/armci
rounds=3
ttime=0.1
max=8m
target=barrier
noprogress=0
do_ref=1
idle_wait=120
quick_args=()

die() { echo "bench-armci.sh: $*" >&2; exit 2; }
note() { echo "bench-armci.sh: $*" >&2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --build) [ $# -ge 2 ] || die "--build needs a value"; build=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; rounds=$2; shift 2 ;;
    --time) [ $# -ge 2 ] || die "--time needs a value"; ttime=$2; shift 2 ;;
    --max) [ $# -ge 2 ] || die "--max needs a value"; max=$2; shift 2 ;;
    --target) [ $# -ge 2 ] || die "--target needs a value"; target=$2; shift 2 ;;
    --noprogress) noprogress=1; shift ;;
    --no-ref) do_ref=0; shift ;;
    --idle-wait) [ $# -ge 2 ] || die "--idle-wait needs a value"; idle_wait=$2; shift 2 ;;
    --quick) rounds=1; ttime=0.01; max=64k; idle_wait=0; quick_args=(--patch 16k); shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
    esac
done
[[ $rounds =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] || die "bad --rounds '$rounds'"
[[ $idle_wait =~ ^[0-9]+$ ]] || die "bad --idle-wait '$idle_wait'"
[ "$target" = barrier ] || [ "$target" = spin ] || die "bad --target '$target'"

ours=$build/bench/armci/telemem-armci-bench
ref=$build/bench/armci/armci-mpi-bench
run=$build/tools/telemem-run
[ -x "$ours" ] || die "$ours not found: build first (meson setup $build && ninja -C $build)"
[ -x "$run" ] || die "$run not found"
if [ "$do_ref" = 1 ]; then
    if [ ! -x "$ref" ] || ! command -v mpirun >/dev/null; then
        note "ARMCI-MPI benchmark or mpirun missing ($ref): libarmci only"
        do_ref=0
    fi
fi
command -v python3 >/dev/null || die "python3 is needed for the summary"

mkdir -p "$out"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "host: $(uname -srm), $(nproc) CPUs"
    echo "git: $(git -C "$(dirname "$0")/.." describe --always --dirty 2>/dev/null || echo unknown)"
    echo "rounds $rounds, time $ttime s per point, max $max, target $target"
    grep -m1 'model name' /proc/cpuinfo || true
    mpirun --version 2>/dev/null | head -1 || true
} >"$out/env.txt"

# Busy share of all CPUs over one second, in percent, from /proc/stat.
cpu_busy() {
    local a b
    read -r -a a < <(grep '^cpu ' /proc/stat)
    sleep 1
    read -r -a b < <(grep '^cpu ' /proc/stat)
    local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) total=0 i
    for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
    [ "$total" -gt 0 ] || { echo 0; return; }
    echo $(( 100 * (total - idle) / total ))
}

wait_idle() {
    [ "$idle_wait" -gt 0 ] || return 0
    local start=$SECONDS busy calm=0
    while :; do
        busy=$(cpu_busy)
        if [ "$busy" -lt 15 ]; then
            calm=$((calm + 1))
            [ "$calm" -ge 3 ] && return 0
            continue
        fi
        calm=0
        if [ $(( SECONDS - start )) -ge "$idle_wait" ]; then
            note "machine still ${busy}% busy after ${idle_wait} s; running anyway"
            echo "warning: ran while the machine was ${busy}% busy" >>"$out/env.txt"
            return 0
        fi
        sleep 4
    done
}

bench_args=(--time "$ttime" --max "$max" --target "$target" "${quick_args[@]}")

run_one() { # series round
    local s=$1 r=$2 csv="$out/raw-$1-r$2.csv"
    wait_idle
    note "round $r: $s"
    case "$s" in
    libarmci)
        TELEMEM_TRANSPORT=shm "$run" -n 2 --timeout 600 "$ours" "${bench_args[@]}" >"$csv" ;;
    libarmci-noprogress)
        ARMCI_PROGRESS_THREAD=0 TELEMEM_TRANSPORT=shm "$run" -n 2 --timeout 600 \
            "$ours" "${bench_args[@]}" >"$csv" ;;
    armci-mpi)
        mpirun --allow-run-as-root --oversubscribe -n 2 "$ref" "${bench_args[@]}" \
            >"$csv" 2>"$out/raw-$s-r$r.err" ;;
    armci-mpi-direct)
        ARMCI_STRIDED_METHOD=DIRECT mpirun --allow-run-as-root --oversubscribe \
            -x ARMCI_STRIDED_METHOD -n 2 "$ref" "${bench_args[@]}" \
            >"$csv" 2>"$out/raw-$s-r$r.err" ;;
    esac
}

series=(libarmci)
[ "$noprogress" = 1 ] && series+=(libarmci-noprogress)
[ "$do_ref" = 1 ] && series+=(armci-mpi armci-mpi-direct)
for ((r = 1; r <= rounds; r++)); do
    if (( r % 2 )); then order=("${series[@]}"); else
        order=(); for ((i = ${#series[@]} - 1; i >= 0; i--)); do order+=("${series[i]}"); done
    fi
    for s in "${order[@]}"; do run_one "$s" "$r"; done
done

python3 - "$out" "${series[@]}" <<'PY'
import csv, glob, os, statistics, sys
out, series = sys.argv[1], sys.argv[2:]
data = {}  # (series, test, bytes, row) -> [usec]
for path in glob.glob(os.path.join(out, 'raw-*-r*.csv')):
    s = os.path.basename(path)[4:].rsplit('-r', 1)[0]
    with open(path) as f:
        rows = [l for l in f if l.strip() and not l.startswith('#')]
    for row in csv.DictReader(rows):
        key = (s, row['test'], int(row['bytes']), int(row['row']))
        data.setdefault(key, []).append(float(row['usec']))
med = {k: statistics.median(v) for k, v in data.items()}
points = sorted({k[1:] for k in med},
                key=lambda k: (['put', 'get', 'putfence', 'puts', 'gets',
                                'rmw'].index(k[0]), k[1], k[2]))
ours = 'libarmci'
refs = [s for s in series if s.startswith('armci-mpi')]
cols = [s for s in series]
def fmt_size(b):
    for u, n in (('M', 1 << 20), ('K', 1 << 10)):
        if b >= n and b % n == 0:
            return '%d%s' % (b // n, u)
    return str(b)
def metric(test, b, usec):
    if test == 'rmw':
        return '%.2f Mops/s' % (1.0 / usec)
    if test == 'putfence':
        return '%.2f us' % usec
    return '%.0f MB/s' % (b / usec)
lines = []
hdr = ['test', 'size', 'row'] + cols + ['%s/%s' % (ours, r) for r in refs]
lines.append('| ' + ' | '.join(hdr) + ' |')
lines.append('|' + '---|' * len(hdr))
summary = [['test', 'bytes', 'row'] + ['%s_usec' % c for c in cols] +
           ['speedup_vs_%s' % r for r in refs]]
for test, b, rw in points:
    vals = [med.get((c, test, b, rw)) for c in cols]
    cells = [test, fmt_size(b), fmt_size(rw) if test in ('puts', 'gets') else '']
    cells += [metric(test, b, v) if v else '-' for v in vals]
    ratios = []
    for r in refs:
        o, x = med.get((ours, test, b, rw)), med.get((r, test, b, rw))
        ratios.append('%.2f' % (x / o) if o and x else '-')
    cells += ratios
    lines.append('| ' + ' | '.join(cells) + ' |')
    summary.append([test, b, rw] + ['%.4f' % v if v else '' for v in vals] +
                   ratios)
with open(os.path.join(out, 'summary.csv'), 'w', newline='') as f:
    csv.writer(f).writerows(summary)
with open(os.path.join(out, 'summary.md'), 'w') as f:
    f.write('Medians over rounds; ratio = ARMCI-MPI time / libarmci time '
            '(> 1: libarmci faster).\n\n')
    f.write('\n'.join(lines) + '\n')
print('\n'.join(lines))
print('\nwritten: %s/summary.md, summary.csv, raw-*.csv' % out)
PY
