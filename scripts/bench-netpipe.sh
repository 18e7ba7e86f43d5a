#!/usr/bin/env bash
# bench-netpipe.sh - run telemem-netpipe and Open MPI's NetPIPE (NPopenmpi)
# on two local ranks, alternating A/B, and summarise against the project's
# targets (docs/benchmarks.md).
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/bench-netpipe.sh [options]

Runs on 2 local ranks, in alternating order (A/B, B/A, ...) for --rounds
rounds:
  telemem   telemem-netpipe --mode latency, and --mode burst,stream, each
            untouched and with --touch (the paper's Telemem* curve);
  ompi      Open MPI's NetPIPE (NPopenmpi, package netpipe-openmpi),
            ping-pong, default settings (vader BTL, CMA single copy);
  ompi-nocma  the same with --mca btl_vader_single_copy_mechanism none;
  ompi-stream NPopenmpi -s (one-way streaming);
then telemem-memcpy-bw once (copy reference at odd offsets), converts
NetPIPE's .out files to the telemem-netpipe CSV layout, and writes
DIR/summary.md (targets: 8 B latency and 64 KiB / 1 MiB bandwidth vs Open
MPI) and PNG plots (scripts/plot_netpipe.py, needs python3-matplotlib).

Options:
  --build DIR     Meson build directory (default: build)
  --out DIR       results directory (default: results/netpipe)
  --rounds N      alternating rounds (default: 3)
  --max SIZE      largest message for every run (default: 8m)
  --time SEC      telemem-netpipe seconds per size and mode (default: 0.25)
  --offset S[,D]  extra telemem-netpipe burst run at this odd buffer offset
                  (default: 1,1; 'none' to skip)
  --no-ompi       skip Open MPI (telemem and memcpy only)
  --no-plot       do not draw plots (summary.md is still written)
  --idle-wait SEC before each run, wait up to SEC seconds for the machine
                  to be idle (< 15% CPU busy in 3 seconds running; default:
                  300, 0 = no wait).  Other jobs on the 2 cores ruin ping-pong numbers.
  --quick         short run: --rounds 1 --max 1m --time 0.05
  --key           only the sizes of the targets, many short runs: latency
                  8 B..1 MiB and bandwidth 64 KiB..1 MiB without
                  perturbations, --rounds 7 --time 0.1 unless given.  Short
                  alternating runs resist bursts of load from other jobs
                  better than long sweeps.
  -h, --help      this text

Raw outputs (NetPIPE .out and logs, telemem CSVs, env.txt) stay in DIR.
Open MPI as root needs --allow-run-as-root; this script passes it and
--oversubscribe.  No extra MCA settings are needed on this container: the
vader BTL's CMA single copy works (ptrace allowed), and the no-CMA variant
is run as a separate series because it is faster here for large messages.
EOF
}

build=build
out=results/netpipe
rounds=3
max=8m
ttime=0.25
offset=1,1
do_ompi=1
do_plot=1
idle_wait=300
key=0
rounds_set=0
time_set=0

die() { echo "bench-netpipe.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --build) [ $# -ge 2 ] || die "--build needs a value"; build=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; rounds=$2; rounds_set=1; shift 2 ;;
    --max) [ $# -ge 2 ] || die "--max needs a value"; max=$2; shift 2 ;;
    --time) [ $# -ge 2 ] || die "--time needs a value"; ttime=$2; time_set=1; shift 2 ;;
    --offset) [ $# -ge 2 ] || die "--offset needs a value"; offset=$2; shift 2 ;;
    --no-ompi) do_ompi=0; shift ;;
    --no-plot) do_plot=0; shift ;;
    --idle-wait) [ $# -ge 2 ] || die "--idle-wait needs a value"; idle_wait=$2; shift 2 ;;
    --quick) rounds=1; max=1m; ttime=0.05; shift ;;
    --key) key=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done
if [ "$key" = 1 ]; then
    [ "$rounds_set" = 1 ] || rounds=7
    [ "$time_set" = 1 ] || ttime=0.1
    max=1m
fi
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$rounds'"
[[ $idle_wait =~ ^[0-9]+$ ]] || die "bad --idle-wait '$idle_wait'"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
run=$build/tools/telemem-run
np=$build/bench/netpipe/telemem-netpipe
mbw=$build/bench/netpipe/telemem-memcpy-bw
for f in "$run" "$np" "$mbw"; do
    [ -x "$f" ] || die "$f not found: build first (meson setup $build && ninja -C $build)"
done

# NetPIPE wants the upper bound in bytes.
to_bytes() {
    local v=${1,,}
    case "$v" in
    *k) echo $(( ${v%k} * 1024 )) ;;
    *m) echo $(( ${v%m} * 1048576 )) ;;
    *g) echo $(( ${v%g} * 1073741824 )) ;;
    *) echo $(( v )) ;;
    esac
}
max_bytes=$(to_bytes "$max")

if [ "$do_ompi" = 1 ]; then
    command -v mpirun >/dev/null || die "mpirun not found (apt-get install openmpi-bin) or use --no-ompi"
    command -v NPopenmpi >/dev/null || die "NPopenmpi not found (apt-get install netpipe-openmpi) or use --no-ompi"
fi

status=0  # set to 1 by any failed run; the others still run
mkdir -p "$out"
log=$out/run.log
: >"$log"
note() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$log" >&2; }

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -n) $(uname -r)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "cores: $(nproc)"
    echo "git: $(git -C "$here/.." describe --always --dirty 2>/dev/null || echo unknown)"
    echo "build: $build"
    echo "rounds: $rounds  max: $max ($max_bytes B)  time: $ttime"
    command -v mpirun >/dev/null && echo "mpirun: $(mpirun --version 2>&1 | head -1)"
    dpkg-query -W -f='netpipe-openmpi: ${Version}\n' netpipe-openmpi 2>/dev/null || true
    echo "GLIBC_TUNABLES: ${GLIBC_TUNABLES:-(unset)}"
    env | grep '^TELEMEM_' || true
} >"$out/env.txt"

# Open MPI as root: the flag, plus the environment for any nested mpirun.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --allow-run-as-root --oversubscribe -np 2)

# NetPIPE .out (bytes, Mbps = 2^20 bit/s, seconds) + its stderr log (for the
# repetition counts) -> the telemem-netpipe CSV layout.  The time column of
# the .out has only 10 ns resolution, so the time is recomputed from the
# Mbps column: usec = bytes * 8 / (Mbps * 2^20) * 1e6.  NetPIPE reports the
# best of its 3 trials, so usec_median = usec_min.
np_to_csv() { # mode in.out in.log out.csv description
    local mode=$1 in=$2 lg=$3 csv=$4 desc=$5
    {
        echo "# NPopenmpi ($desc), converted by bench-netpipe.sh from $(basename "$in")"
        echo "# NetPIPE time = best of its 3 trials (usec_median = usec_min); mbps = MB/s = 1e6 bytes/s"
        echo "mode,touch,bytes,reps,usec_median,usec_min,mbps_median,mbps_max"
        awk -v mode="$mode" '
            FNR == NR { if ($3 == "bytes" && $5 == "times") reps[$2] = $4; next }
            NF >= 2 && $1 ~ /^[0-9]+$/ && $2 > 0 {
                us = $1 * 8 / ($2 * 1048576) * 1e6
                printf "%s,0,%d,%s,%.4f,%.4f,%.2f,%.2f\n", mode, $1,
                       ($1 in reps) ? reps[$1] : 0, us, us, $1 / us, $1 / us
            }' "$lg" "$in"
    } >"$csv"
}

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
        # Three quiet seconds in a row: test suites come in bursts.
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

run_ompi() { # r name extra-mpirun-args... -- extra-NetPIPE-args...
    local r=$1 name=$2; shift 2
    local margs=() nargs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do margs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    nargs=("$@")
    local base=$out/$name-r$r
    local range=(-u "$max_bytes")
    [ "$key" = 1 ] && range=(-l "${KEY_LOW:-8}" -u "$max_bytes" -p 0)
    wait_idle
    note "round $r: $name (load: $(cut -d' ' -f1-3 /proc/loadavg))"
    # NetPIPE writes its .out in the working directory; run it inside $out.
    if ! (cd "$out" && "${mpi[@]}" "${margs[@]}" NPopenmpi "${range[@]}" \
              "${nargs[@]}" -o "$(basename "$base").out") >"$base.log" 2>&1; then
        note "$name failed (see $base.log)"; status=1; return 0
    fi
    np_to_csv "$name" "$base.out" "$base.log" "$base.csv" \
        "mpirun ${margs[*]} NPopenmpi ${range[*]} ${nargs[*]}"
}

run_telemem() { # r name netpipe-args...
    local r=$1 name=$2; shift 2
    local base=$out/$name-r$r
    wait_idle
    note "round $r: $name (load: $(cut -d' ' -f1-3 /proc/loadavg))"
    if ! "$run" -n 2 "$np" --max "$max" --time "$ttime" --verbose \
            --output "$base.csv" "$@" >"$base.log" 2>&1; then
        note "$name failed (see $base.log)"; status=1
    fi
}

telemem_set() {
    local r=$1
    if [ "$key" = 1 ]; then
        run_telemem "$r" telemem-latency --mode latency --min 8 \
            --perturbation 0
        run_telemem "$r" telemem-bw --mode burst,stream --min 64k \
            --perturbation 0
        [ "$offset" != none ] && run_telemem "$r" \
            "telemem-bw-off${offset/,/_}" --mode burst --min 64k \
            --perturbation 0 --offset "$offset"
        return 0
    fi
    run_telemem "$r" telemem-latency --mode latency
    run_telemem "$r" telemem-latency-touch --mode latency --touch
    run_telemem "$r" telemem-bw --mode burst,stream
    run_telemem "$r" telemem-bw-touch --mode burst,stream --touch
    if [ "$offset" != none ]; then
        run_telemem "$r" "telemem-bw-off${offset/,/_}" --mode burst \
            --offset "$offset"
    fi
}

ompi_set() {
    local r=$1
    if [ "$key" = 1 ]; then
        run_ompi "$r" ompi
        run_ompi "$r" ompi-nocma --mca btl_vader_single_copy_mechanism none --
        KEY_LOW=65536 run_ompi "$r" ompi-stream -- -s
        return 0
    fi
    run_ompi "$r" ompi
    run_ompi "$r" ompi-nocma --mca btl_vader_single_copy_mechanism none --
    run_ompi "$r" ompi-stream -- -s
}

t0=$(date +%s)
for r in $(seq 1 "$rounds"); do
    # Alternate the order: the VM has slow phases (about one run in six is
    # ~2x slower), so neither side should always go first.
    if [ "$do_ompi" = 0 ]; then
        telemem_set "$r"
    elif [ $((r % 2)) = 1 ]; then
        telemem_set "$r"
        ompi_set "$r"
    else
        ompi_set "$r"
        telemem_set "$r"
    fi
done

note "memcpy reference"
mbw_sizes=()
[ "$key" = 1 ] && mbw_sizes=(--sizes 8,65536,1048576)
"$mbw" --max "$max" "${mbw_sizes[@]}" --time 0.02 --output "$out/memcpy.csv" \
    >"$out/memcpy.log" 2>&1 || { note "memcpy-bw failed"; status=1; }
note "runs done in $(( $(date +%s) - t0 )) s"

py=/usr/bin/python3
[ -x "$py" ] || py=python3
plot_args=("$out" --summary "$out/summary.md")
[ "$do_plot" = 0 ] && plot_args+=(--no-plots)
"$py" "$here/plot_netpipe.py" "${plot_args[@]}" 2>&1 | tee -a "$log" >&2 || status=1
[ -f "$out/summary.md" ] && cat "$out/summary.md"
exit "$status"
