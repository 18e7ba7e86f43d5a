#!/usr/bin/env bash
# bench-fft.sh - runs the distributed FFT benchmark (bench/fft, docs/fft.md)
# on 2 local ranks for every all-to-all variant of telemem-fft and
# armci-mpi-fft, in rounds within a time budget, then writes the CSVs, the
# plots (scripts/plot_fft.py) and summary.md into the results directory.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/bench-fft.sh [options]

Runs, on 2 local ranks under Open MPI's mpirun, each round in a rotated
order (the VM has slow phases; nobody always goes first):
  telemem-fft   --alltoall telemem   Telemem puts + quiet + barrier (Fig. 7)
  telemem-fft   --alltoall mpi       MPI_Alltoall
  telemem-fft   --alltoall armci     ARMCI puts of libarmci (over Telemem)
  armci-mpi-fft --alltoall armci     ARMCI puts of ARMCI-MPI (MPI-3 RMA)
  armci-mpi-fft --alltoall mpi       MPI_Alltoall (same binary as ARMCI-MPI)
Each run sweeps 2^MIN .. 2^MAX points.  Writes IMPL-ALLTOALL-rR.csv and
.log per run, env.txt, the PNGs of scripts/plot_fft.py (Fig. 8, 9, 10 and
cache misses) and summary.md (also printed) into DIR.

Options:
  --build DIR      Meson build directory (default: build); use a release
                   build for figures: meson setup DIR -Dbuildtype=release
  --out DIR        results directory (default: results/fft)
  --rounds N       at most N rounds (default: 10)
  --budget SEC     time budget of the runs: no new round starts when the
                   last round's duration would overrun it (default: 330;
                   the first round always runs; 0 = no budget)
  --min-log2 K     smallest size 2^K (default: 12)
  --max-log2 K     largest size 2^K (default: 23; the default range crosses
                   L2 and the last-level cache of this machine)
  --reps R         timed transforms per size, at least (default: 3)
  --min-time SEC   more transforms for small sizes (default: 0.1)
  --llc BYTES      last-level cache size marked in the plots (default:
                   from sysfs or getconf; see env.txt)
  --no-armci-mpi   skip armci-mpi-fft (also automatic when it was not built)
  --idle-wait SEC  before each run, wait up to SEC seconds for the machine to
                   be idle (< 15% busy for 3 s; default 0 = no wait)
  --quick          one round, 2^10 .. 2^14, --reps 2 --min-time 0.02
  --summary-only   run nothing: plot and summarise the CSVs in --out
  -h, --help       this text

Open MPI as root needs OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM); the script sets
them.  ARMCI-MPI runs get OMPI_MCA_osc=sm,pt2pt (docs/armci.md).  Exit
status: 0 done, 1 a run or its correctness check failed (the others still
ran; see its log), 2 bad arguments or missing programs.
EOF
}

build=build
out=results/fft
rounds=10
budget=330
min_log2=12
max_log2=23
reps=3
min_time=0.1
llc=auto
do_ref=1
idle_wait=0
summary_only=0

die() { echo "bench-fft.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --build) [ $# -ge 2 ] || die "--build needs a value"; build=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; rounds=$2; shift 2 ;;
    --budget) [ $# -ge 2 ] || die "--budget needs a value"; budget=$2; shift 2 ;;
    --min-log2) [ $# -ge 2 ] || die "--min-log2 needs a value"; min_log2=$2; shift 2 ;;
    --max-log2) [ $# -ge 2 ] || die "--max-log2 needs a value"; max_log2=$2; shift 2 ;;
    --reps) [ $# -ge 2 ] || die "--reps needs a value"; reps=$2; shift 2 ;;
    --min-time) [ $# -ge 2 ] || die "--min-time needs a value"; min_time=$2; shift 2 ;;
    --llc) [ $# -ge 2 ] || die "--llc needs a value"; llc=$2; shift 2 ;;
    --no-armci-mpi) do_ref=0; shift ;;
    --idle-wait) [ $# -ge 2 ] || die "--idle-wait needs a value"; idle_wait=$2; shift 2 ;;
    --quick) rounds=1; min_log2=10; max_log2=14; reps=2; min_time=0.02; shift ;;
    --summary-only) summary_only=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$rounds'"
[[ $budget =~ ^[0-9]+$ ]] || die "bad --budget '$budget'"
[[ $min_log2 =~ ^[0-9]+$ && $max_log2 =~ ^[0-9]+$ ]] || die "bad --min-log2/--max-log2"
[ "$min_log2" -ge 4 ] && [ "$max_log2" -le 30 ] && [ "$min_log2" -le "$max_log2" ] \
    || die "need 4 <= --min-log2 <= --max-log2 <= 30"
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "bad --reps '$reps'"
[[ $idle_wait =~ ^[0-9]+$ ]] || die "bad --idle-wait '$idle_wait'"
[[ $llc == auto || $llc =~ ^[0-9]+$ ]] || die "bad --llc '$llc' (bytes)"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Last-level cache: sysfs (index3), else getconf.  A VM may report the
# host's total (hundreds of MiB); the plots then mark nothing useful, so
# such a value is replaced by 32 MiB (one Zen CCD's L3) and env.txt says so.
llc_note=""
if [ "$llc" = auto ]; then
    llc=0
    f=/sys/devices/system/cpu/cpu0/cache/index3/size
    if [ -r "$f" ]; then
        v=$(cat "$f")
        case "$v" in
        *K) llc=$(( ${v%K} * 1024 )) ;;
        *M) llc=$(( ${v%M} * 1048576 )) ;;
        *) llc=$v ;;
        esac
        llc_note="from $f ($v)"
    else
        v=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo 0)
        [[ $v =~ ^[0-9]+$ ]] || v=0
        llc=$v
        llc_note="from getconf LEVEL3_CACHE_SIZE ($v)"
    fi
    if [ "$llc" -gt $((128 * 1048576)) ]; then
        llc_note="$llc_note: implausible for one socket (a VM reporting the host's total?), using 32 MiB; pass --llc to override"
        llc=$((32 * 1048576))
    fi
else
    llc_note="from --llc"
fi

status=0
if [ "$summary_only" = 0 ]; then
    tf=$build/bench/fft/telemem-fft
    af=$build/bench/fft/armci-mpi-fft
    [ -x "$tf" ] || die "$tf not found: build first (meson setup $build -Dbuildtype=release && ninja -C $build); it needs libfftw3-dev and MPI"
    command -v mpirun >/dev/null || die "mpirun not found (apt-get install openmpi-bin)"
    if [ "$do_ref" = 1 ] && [ ! -x "$af" ]; then
        echo "bench-fft.sh: SKIP ARMCI-MPI: $af was not built (needs Debian's libarmci-mpi-dev; see meson's log)" >&2
        do_ref=0
    fi
    args=(--min-log2 "$min_log2" --max-log2 "$max_log2" --reps "$reps"
          --min-time "$min_time")

    mkdir -p "$out"
    rm -f "$out"/*-r[0-9]*.csv "$out"/*-r[0-9]*.log "$out"/fft-*.png
    log=$out/run.log
    : >"$log"
    note() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$log" >&2; }

    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "host: $(uname -n) $(uname -r)"
        echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
        echo "cores: $(nproc)"
        echo "caches: L1d $(getconf LEVEL1_DCACHE_SIZE 2>/dev/null || echo ?)" \
             "L2 $(getconf LEVEL2_CACHE_SIZE 2>/dev/null || echo ?)" \
             "L3 $(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo ?) (getconf)"
        echo "llc for the plots: $llc bytes, $llc_note"
        echo "git: $(git -C "$here/.." describe --always --dirty 2>/dev/null || echo unknown)"
        echo "build: $build, buildtype $(grep -o '"name": "buildtype", "value": "[a-z]*"' \
            "$build/meson-info/intro-buildoptions.json" 2>/dev/null | sed 's/.*"value": "//; s/"//' || echo unknown)"
        echo "sizes: 2^$min_log2 .. 2^$max_log2, reps $reps, min-time $min_time s; rounds <= $rounds, budget $budget s"
        echo "mpirun: $(mpirun --version 2>&1 | head -1)"
        dpkg-query -W -f='libarmci-mpi-dev: ${Version}\n' libarmci-mpi-dev 2>/dev/null || true
        dpkg-query -W -f='libfftw3-dev: ${Version}\n' libfftw3-dev 2>/dev/null || true
        dpkg-query -W -f='libpapi-dev: ${Version}\n' libpapi-dev 2>/dev/null || true
        env | grep -E '^(TELEMEM|ARMCI)_' || true
    } >"$out/env.txt"

    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpi=(mpirun --oversubscribe -np 2)

    cpu_busy() { # busy share of all CPUs over one second, percent
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

    run_one() { # round variant (impl/alltoall)
        local r=$1 impl=${2%/*} a2a=${2#*/}
        local base=$out/$impl-$a2a-r$r exe rc=0
        wait_idle
        note "round $r: $impl --alltoall $a2a (load: $(cut -d' ' -f1-3 /proc/loadavg))"
        if [ "$impl" = telemem-fft ]; then
            "${mpi[@]}" "$tf" --alltoall "$a2a" "${args[@]}" --csv "$base.csv" \
                >"$base.log" 2>&1 || rc=$?
        else
            OMPI_MCA_osc=sm,pt2pt "${mpi[@]}" "$af" --alltoall "$a2a" \
                "${args[@]}" --csv "$base.csv" >"$base.log" 2>&1 || rc=$?
        fi
        if [ "$rc" != 0 ]; then
            note "$impl --alltoall $a2a failed with status $rc (see $base.log)"
            grep -h "FAILED\|fft:" "$base.log" | head -5 | while read -r l; do note "  $l"; done
            status=1
        fi
    }

    names=(telemem-fft/telemem telemem-fft/mpi telemem-fft/armci)
    [ "$do_ref" = 1 ] && names+=(armci-mpi-fft/armci armci-mpi-fft/mpi)
    t0=$(date +%s)
    last=0
    for r in $(seq 1 "$rounds"); do
        now=$(( $(date +%s) - t0 ))
        if [ "$r" -gt 1 ] && [ "$budget" -gt 0 ] && [ $(( now + last )) -gt "$budget" ]; then
            note "budget: round $r would end near $(( now + last )) s > $budget s; stopping after $((r - 1)) round(s)"
            break
        fi
        rs=$(date +%s)
        k=${#names[@]}
        for i in $(seq 0 $((k - 1))); do
            run_one "$r" "${names[$(( (i + r - 1) % k ))]}"
        done
        last=$(( $(date +%s) - rs ))
        note "round $r took $last s"
    done
    note "runs done in $(( $(date +%s) - t0 )) s"
else
    [ -d "$out" ] || die "$out does not exist"
fi

py=/usr/bin/python3
[ -x "$py" ] || py=python3
plot_args=(--out "$out" --summary "$out/summary.tmp" --llc "$llc")
"$py" "$here/plot_fft.py" "${plot_args[@]}" "$out" || status=1
if [ -f "$out/summary.tmp" ]; then
    {
        # Runs that started on a busy machine (1-minute load above the core
        # count) give figures that say more about the neighbours than about
        # the variants: say so first.
        if [ -f "$out/run.log" ]; then
            busy=$(awk -v n="$(nproc)" '/\(load: / { sub(/.*\(load: /, ""); if ($1 + 0 > n + 0.5) c++; t++ }
                END { if (c) printf "%d of %d runs", c, t }' "$out/run.log")
            if [ -n "$busy" ]; then
                echo "**Warning: $busy started with a load average above the $(nproc) cores" \
                     "(see run.log below): other jobs shared the CPUs, and these figures are" \
                     "not representative of the variants.**"
                echo
            fi
        fi
        cat "$out/summary.tmp"
        if [ -f "$out/run.log" ]; then
            echo "Runs:"
            echo
            echo '```'
            cat "$out/run.log"
            echo '```'
            echo
        fi
        if [ -f "$out/env.txt" ]; then
            echo "Conditions:"
            echo
            echo '```'
            cat "$out/env.txt"
            echo '```'
        fi
    } >"$out/summary.md"
    rm -f "$out/summary.tmp"
    cat "$out/summary.md"
fi
exit $status
