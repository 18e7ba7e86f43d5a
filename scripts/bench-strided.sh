#!/usr/bin/env bash
# bench-strided.sh - run the strided put/get benchmark of Telemem
# (telemem-strided) and of ARMCI-MPI (armci-mpi-strided, default settings
# and ARMCI_STRIDED_METHOD=DIRECT) on two local ranks, alternating, and
# summarise the ratios against the issue's targets
# (docs/benchmarks-strided.md).
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/bench-strided.sh [options]

Runs on 2 local ranks, for --rounds rounds, each round in a rotated order:
  telemem         telemem-run -n 2 telemem-strided
  armci-default   mpirun -n 2 armci-mpi-strided (ARMCI-MPI's defaults:
                  ARMCI_STRIDED_METHOD=IOV, ARMCI_IOV_METHOD=BATCHED)
  armci-direct    the same with ARMCI_STRIDED_METHOD=DIRECT (MPI datatypes)
Every run measures put and get of a 2-D patch (--patch bytes, rows of
--min .. --max bytes, powers of two, target rows 2 rows apart).  Writes one
CSV and log per run into DIR, env.txt, summary.md (also printed): MB/s per
implementation (median over rounds) and the ratios Telemem/ARMCI-MPI
default and Telemem/ARMCI-MPI DIRECT per row length, each the median of
the per-round ratios (runs of one round are seconds apart).

Options:
  --build DIR     Meson build directory (default: build); use a release
                  build for figures: meson setup DIR -Dbuildtype=release
  --out DIR       results directory (default: results/strided)
  --rounds N      rounds (default: 5)
  --min SIZE      shortest row (default: 8)
  --max SIZE      longest row (default: 64k)
  --patch SIZE    bytes per patch (default: 1m)
  --time SEC      seconds per row length and op in each run (default: 0.5)
  --samples N     timed samples per row length and op (default: 5)
  --no-armci      Telemem only (also automatic when armci-mpi-strided was
                  not built: ARMCI-MPI or MPI missing)
  --idle-wait SEC before each run, wait up to SEC seconds for the machine to
                  be idle (< 15% CPU busy for 3 s running; default 300,
                  0 = no wait)
  --quick         one round, --max 4k --patch 64k --time 0.05 --samples 3
  --summary-only  run nothing: summarise the CSVs already in --out
  -h, --help      this text

Open MPI as root needs --allow-run-as-root; the script passes it and
--oversubscribe.  Exit status: 0 done, 1 a run failed (the others still
ran; see its log), 2 bad arguments or missing programs.
EOF
}

build=build
out=results/strided
rounds=5
min=8
max=64k
patch=1m
ttime=0.5
samples=5
do_armci=1
idle_wait=300
summary_only=0

die() { echo "bench-strided.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --build) [ $# -ge 2 ] || die "--build needs a value"; build=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; rounds=$2; shift 2 ;;
    --min) [ $# -ge 2 ] || die "--min needs a value"; min=$2; shift 2 ;;
    --max) [ $# -ge 2 ] || die "--max needs a value"; max=$2; shift 2 ;;
    --patch) [ $# -ge 2 ] || die "--patch needs a value"; patch=$2; shift 2 ;;
    --time) [ $# -ge 2 ] || die "--time needs a value"; ttime=$2; shift 2 ;;
    --samples) [ $# -ge 2 ] || die "--samples needs a value"; samples=$2; shift 2 ;;
    --no-armci) do_armci=0; shift ;;
    --idle-wait) [ $# -ge 2 ] || die "--idle-wait needs a value"; idle_wait=$2; shift 2 ;;
    --quick) rounds=1; max=4k; patch=64k; ttime=0.05; samples=3; shift ;;
    --summary-only) summary_only=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$rounds'"
[[ $samples =~ ^[1-9][0-9]*$ ]] || die "bad --samples '$samples'"
[[ $idle_wait =~ ^[0-9]+$ ]] || die "bad --idle-wait '$idle_wait'"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
status=0
if [ "$summary_only" = 0 ]; then
    run=$build/tools/telemem-run
    ts=$build/bench/strided/telemem-strided
    as=$build/bench/strided/armci-mpi-strided
    for f in "$run" "$ts"; do
        [ -x "$f" ] || die "$f not found: build first (meson setup $build -Dbuildtype=release && ninja -C $build)"
    done
    if [ "$do_armci" = 1 ]; then
        if [ ! -x "$as" ]; then
            echo "bench-strided.sh: SKIP ARMCI-MPI: $as was not built (needs MPI and Debian's libarmci-mpi-dev; see meson's log); running Telemem only" >&2
            do_armci=0
        elif ! command -v mpirun >/dev/null; then
            echo "bench-strided.sh: SKIP ARMCI-MPI: mpirun not found (apt-get install openmpi-bin); running Telemem only" >&2
            do_armci=0
        fi
    fi
    args=(--min "$min" --max "$max" --patch "$patch" --time "$ttime"
          --samples "$samples" --verbose)

    mkdir -p "$out"
    rm -f "$out"/*-r[0-9]*.csv "$out"/*-r[0-9]*.log
    log=$out/run.log
    : >"$log"
    note() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$log" >&2; }

    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "host: $(uname -n) $(uname -r)"
        echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
        echo "cores: $(nproc)"
        echo "git: $(git -C "$here/.." describe --always --dirty 2>/dev/null || echo unknown)"
        echo "build: $build, buildtype $(grep -o '"name": "buildtype", "value": "[a-z]*"' \
            "$build/meson-info/intro-buildoptions.json" 2>/dev/null | sed 's/.*"value": "//; s/"//' || echo unknown)"
        echo "rounds: $rounds  rows: $min..$max  patch: $patch  time: $ttime  samples: $samples"
        command -v mpirun >/dev/null && echo "mpirun: $(mpirun --version 2>&1 | head -1)"
        dpkg-query -W -f='libarmci-mpi-dev: ${Version}\n' libarmci-mpi-dev 2>/dev/null || true
        env | grep -E '^(TELEMEM|ARMCI)_' || true
    } >"$out/env.txt"

    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpi=(mpirun --allow-run-as-root --oversubscribe -np 2)

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
                return 0
            fi
            sleep 4
        done
    }

    run_one() { # round name
        local r=$1 name=$2 base=$out/$2-r$1
        wait_idle
        note "round $r: $name (load: $(cut -d' ' -f1-3 /proc/loadavg))"
        local rc=0
        case "$name" in
        telemem)
            "$run" -n 2 "$ts" "${args[@]}" --output "$base.csv" >"$base.log" 2>&1 || rc=$? ;;
        armci-default)
            env -u ARMCI_STRIDED_METHOD "${mpi[@]}" "$as" "${args[@]}" \
                --output "$base.csv" >"$base.log" 2>&1 || rc=$? ;;
        armci-direct)
            ARMCI_STRIDED_METHOD=DIRECT "${mpi[@]}" -x ARMCI_STRIDED_METHOD \
                "$as" "${args[@]}" --output "$base.csv" >"$base.log" 2>&1 || rc=$? ;;
        esac
        if [ "$rc" != 0 ]; then
            note "$name failed with status $rc (see $base.log)"
            status=1
        fi
    }

    names=(telemem)
    [ "$do_armci" = 1 ] && names+=(armci-default armci-direct)
    t0=$(date +%s)
    for r in $(seq 1 "$rounds"); do
        # Rotate the order: the VM has slow phases, so nobody always goes first.
        k=${#names[@]}
        for i in $(seq 0 $((k - 1))); do
            run_one "$r" "${names[$(( (i + r - 1) % k ))]}"
        done
    done
    note "runs done in $(( $(date +%s) - t0 )) s"

else
    [ -d "$out" ] || die "$out does not exist"
fi

py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" - "$out" <<'EOF' || status=1
# Summary: MB/s per implementation (median over rounds of each run's median
# time) and paired ratios (per round, Telemem / ARMCI-MPI, then the median).
import csv, glob, os, re, statistics, sys

out = sys.argv[1]
rows = {}  # (name, op, row) -> {round: mbps}
for path in sorted(glob.glob(os.path.join(out, '*-r*.csv'))):
    m = re.match(r'(.*)-r(\d+)\.csv$', os.path.basename(path))
    if not m:
        continue
    name, rnd = m.group(1), int(m.group(2))
    with open(path) as f:
        lines = [l for l in f if not l.startswith('#')]
    for rec in csv.DictReader(lines):
        key = (name, rec['op'], int(rec['row_bytes']))
        rows.setdefault(key, {})[rnd] = float(rec['mbps_median'])

names = [n for n in ('telemem', 'armci-default', 'armci-direct')
         if any(k[0] == n for k in rows)]
ops = [o for o in ('put', 'get') if any(k[1] == o for k in rows)]
lens = sorted({k[2] for k in rows})

def med(v):
    return statistics.median(v) if v else None

def fmt(x, nd=0):
    return '-' if x is None else f'{x:.{nd}f}'

lines = []
env = os.path.join(out, 'env.txt')
lines.append('# Strided put/get: Telemem vs ARMCI-MPI\n')
if os.path.exists(env):
    lines.append('```')
    lines += [l.rstrip('\n') for l in open(env)]
    lines.append('```\n')
lines.append('MB/s = 1e6 bytes/s of the patch, median over rounds; ratios: '
             'median over rounds of the per-round Telemem/ARMCI-MPI ratio. '
             'Target: rows <= 64 B at least 3x default and 1.5x '
             'DIRECT; never below 1.0.\n')
hdr = '| op | row B | Telemem MB/s |'
sep = '|---|---:|---:|'
if 'armci-default' in names:
    hdr += ' ARMCI-MPI default MB/s | ARMCI-MPI DIRECT MB/s | Telemem/default | Telemem/DIRECT | target |'
    sep += '---:|---:|---:|---:|---|'
lines += [hdr, sep]
misses = 0
for op in ops:
    for ln in lens:
        t = rows.get(('telemem', op, ln), {})
        cells = [op, str(ln), fmt(med(list(t.values())))]
        if 'armci-default' in names:
            rat = []
            for other in ('armci-default', 'armci-direct'):
                o = rows.get((other, op, ln), {})
                cells.append(fmt(med(list(o.values()))))
            for other in ('armci-default', 'armci-direct'):
                o = rows.get((other, op, ln), {})
                pr = [t[r] / o[r] for r in t if r in o and o[r] > 0]
                rat.append(med(pr))
            cells += [fmt(x, 2) for x in rat]
            need = (3.0, 1.5) if ln <= 64 else (1.0, 1.0)
            ok = all(x is not None and x >= w for x, w in zip(rat, need))
            if not ok:
                misses += 1
            cells.append(('ok' if ok else '**miss**') +
                         f' (>= {need[0]:g} / {need[1]:g})')
        lines.append('| ' + ' | '.join(cells) + ' |')
if 'armci-default' in names:
    lines.append(f'\n{misses} row(s) below target.')
# Each run's load average at its start (1, 5, 15 min): a run that started
# busy is suspect (the ratios are medians over rounds for that reason).
lines.append('\nLoad average at the start of each run:\n')
lines.append('| run | ' + ' | '.join(names) + ' |')
lines.append('|---|' + '---|' * len(names))
rounds_seen = sorted({r for v in rows.values() for r in v})
for r in rounds_seen:
    cells = []
    for n in names:
        load = '-'
        path = os.path.join(out, f'{n}-r{r}.csv')
        if os.path.exists(path):
            for l in open(path):
                if l.startswith('# loadavg (start)'):
                    load = ' '.join(l.split('=', 1)[1].split()[:3])
        cells.append(load)
    lines.append(f'| round {r} | ' + ' | '.join(cells) + ' |')
text = '\n'.join(lines) + '\n'
with open(os.path.join(out, 'summary.md'), 'w') as f:
    f.write(text)
print(text)
EOF
exit "$status"
