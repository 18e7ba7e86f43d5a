#!/usr/bin/env bash
# bench-netpipe.sh - run every built NetPIPE benchmark (telemem-netpipe,
# armci-netpipe, armci-mpi-netpipe, mpi-netpipe) on two local ranks, in
# alternating order, untouched and touched, within a time budget; then
# write the CSVs, summary.md and the plots (scripts/plot_netpipe.py) to the
# results directory.  docs/benchmarks.md describes it.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/bench-netpipe.sh [options]

Runs on 2 local ranks, for --rounds rounds, every implementation that the
build has (odd rounds in the order below, even rounds reversed), each once
without and once with --touch, modes latency (ping-pong) and burst:
  telemem        telemem-run -n 2 telemem-netpipe
  armci-telemem  telemem-run -n 2 armci-netpipe        (our compat/armci)
  armci-mpi      mpirun -n 2 armci-mpi-netpipe         (Debian's ARMCI-MPI)
  mpi            mpirun -n 2 mpi-netpipe               (MPI_Send/MPI_Recv)
The seconds per message size are derived from --budget so that all runs
fit in it; on a slow (busy) machine each mode keeps to its share
(--max-seconds: behind schedule only powers of two, then no new size; the
CSV says what was left out), and runs that would start after 1.3 x the
budget are skipped (and listed).  Writes to --out: one CSV and log per run (IMPL-{u,t}-rR.csv),
env.txt, runs.txt, summary.md (numbers: where each wins and loses) and
fig4_bandwidth.png, fig5_relative.png, latency.png.

Options:
  --build DIR      Meson build directory (default: build)
  --out DIR        results directory (default: results/netpipe)
  --budget SEC     seconds for all runs (default: 300)
  --rounds N       alternating rounds (default: 2)
  --min SIZE       smallest message (default: 1)
  --max SIZE       largest message (default: 8m)
  --perturbation N NetPIPE's -p (default: 3)
  --samples N      timed samples per size (default: 5)
  --time SEC       seconds per size and mode (default: from --budget)
  --impls LIST     comma list of implementations to run (default: every
                   one that is built)
  --path LIST      telemem and armci-telemem: run once per --path value
                   (am, direct, auto; default: leave TELEMEM_DIRECT alone)
  --npopenmpi      also run Debian's NetPIPE (NPopenmpi, netpipe-openmpi)
                   as an extra ping-pong reference
  --idle-wait SEC  before each run, wait up to SEC seconds for the machine
                   to be idle (< 15% CPU busy for 3 s; default: 0, counted
                   against the budget)
  --no-plot        write summary.md but no PNGs
  --quick          a check that everything runs: --max 64k --rounds 1
                   --budget 40
  --key            the sizes of the project's targets in short alternating
                   runs: --min 8 --max 1m --perturbation 0 --rounds 7
  -h, --help       this text

Environment: TELEMEM_* applies to telemem and armci-telemem (e.g.
TELEMEM_TRANSPORT=ofi or ucx); OMPI_MCA_* to the MPI runs (the script sets
OMPI_MCA_osc=sm,pt2pt for ARMCI-MPI unless OMPI_MCA_osc is set, and lets
Open MPI run as root).  Exit status: 0 all runs done, 1 a run failed or was
skipped (the others still ran and the summary is written), 2 bad usage.
EOF
}

build=build
out=results/netpipe
budget=300
rounds=2
min=1
max=8m
pert=3
samples=5
ttime=
impls=
paths=
do_np=0
idle_wait=0
do_plot=1

die() { echo "bench-netpipe.sh: $*" >&2; exit 2; }
need() { [ "$2" -ge 2 ] || die "$1 needs a value"; }

while [ $# -gt 0 ]; do
    case "$1" in
    --build) need "$1" $#; build=$2; shift 2 ;;
    --out) need "$1" $#; out=$2; shift 2 ;;
    --budget) need "$1" $#; budget=$2; shift 2 ;;
    --rounds) need "$1" $#; rounds=$2; shift 2 ;;
    --min) need "$1" $#; min=$2; shift 2 ;;
    --max) need "$1" $#; max=$2; shift 2 ;;
    --perturbation) need "$1" $#; pert=$2; shift 2 ;;
    --samples) need "$1" $#; samples=$2; shift 2 ;;
    --time) need "$1" $#; ttime=$2; shift 2 ;;
    --impls) need "$1" $#; impls=$2; shift 2 ;;
    --path) need "$1" $#; paths=$2; shift 2 ;;
    --npopenmpi) do_np=1; shift ;;
    --idle-wait) need "$1" $#; idle_wait=$2; shift 2 ;;
    --no-plot) do_plot=0; shift ;;
    --quick) max=64k; rounds=1; budget=40; shift ;;
    --key) min=8; max=1m; pert=0; rounds=7; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$rounds'"
[[ $budget =~ ^[1-9][0-9]*$ ]] || die "bad --budget '$budget' (whole seconds)"
[[ $samples =~ ^[1-9][0-9]*$ ]] || die "bad --samples '$samples'"
[[ $pert =~ ^[0-9]+$ ]] || die "bad --perturbation '$pert'"
[[ $idle_wait =~ ^[0-9]+$ ]] || die "bad --idle-wait '$idle_wait'"
[ -z "$ttime" ] || [[ $ttime =~ ^[0-9]*\.?[0-9]+$ ]] || die "bad --time '$ttime'"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
run=$build/tools/telemem-run
bdir=$build/bench/netpipe
[ -x "$run" ] || die "$run not found: build first (meson setup $build && ninja -C $build)"

to_bytes() {
    local v=${1,,}
    v=${v%b}
    case "$v" in
    *k) echo $(( ${v%k} * 1024 )) ;;
    *m) echo $(( ${v%m} * 1048576 )) ;;
    *g) echo $(( ${v%g} * 1073741824 )) ;;
    *) [[ $v =~ ^[0-9]+$ ]] || die "bad size '$1'"; echo "$v" ;;
    esac
}
min_b=$(to_bytes "$min")
max_b=$(to_bytes "$max")

# NetPIPE's size schedule (bench_common.h), to size the budget.
count_sizes() {
    local len=1 inc=1 nq=0 n=0 p s
    while [ "$len" -le "$max_b" ]; do
        if [ "$nq" -gt 2 ] && [ $((nq % 2)) = 1 ]; then inc=$((inc + inc)); fi
        if [ "$pert" -gt 0 ] && [ "$inc" -gt $((pert + 1)) ]; then
            for p in -"$pert" 0 "$pert"; do
                s=$((len + p))
                [ "$s" -ge "$min_b" ] && [ "$s" -le "$max_b" ] && n=$((n + 1))
            done
        else
            [ "$len" -ge "$min_b" ] && n=$((n + 1))
        fi
        len=$((len + inc)); nq=$((nq + 1))
    done
    echo "$n"
}
nsizes=$(count_sizes)
[ "$nsizes" -gt 0 ] || die "no message sizes between --min $min and --max $max"

# Which implementations exist.
declare -A exe=([telemem]=telemem-netpipe [armci-telemem]=armci-netpipe
                [armci-mpi]=armci-mpi-netpipe [mpi]=mpi-netpipe)
all=(telemem armci-telemem armci-mpi mpi)
have_mpirun=0
command -v mpirun >/dev/null && have_mpirun=1
sel=()
missing=()
if [ -n "$impls" ]; then
    IFS=, read -r -a want <<<"$impls"
else
    want=("${all[@]}")
fi
for i in "${want[@]}"; do
    [ -n "${exe[$i]:-}" ] || die "unknown implementation '$i' (expected: ${all[*]})"
    if [ ! -x "$bdir/${exe[$i]}" ]; then
        missing+=("$i (${exe[$i]} not built)")
    elif [[ $i == armci-mpi || $i == mpi ]] && [ "$have_mpirun" = 0 ]; then
        missing+=("$i (no mpirun)")
    else
        sel+=("$i")
    fi
done
[ "${#sel[@]}" -gt 0 ] || die "nothing to run: ${missing[*]}"
if [ "$do_np" = 1 ]; then
    command -v NPopenmpi >/dev/null && [ "$have_mpirun" = 1 ] ||
        die "--npopenmpi needs mpirun and NPopenmpi (apt-get install netpipe-openmpi)"
fi
path_list=("")
[ -z "$paths" ] || IFS=, read -r -a path_list <<<"$paths"
for p in "${path_list[@]}"; do
    [[ -z $p || $p == am || $p == direct || $p == auto ]] || die "bad --path value '$p'"
done

# The list of runs of one round: "impl path touch".
jobs=()
for i in "${sel[@]}"; do
    ps=(-)
    [[ $i == telemem || $i == armci-telemem ]] && ps=("${path_list[@]}")
    for p in "${ps[@]}"; do
        for t in u t; do jobs+=("$i ${p:--} $t"); done
    done
done
[ "$do_np" = 1 ] && jobs+=("npopenmpi - u")
nruns=$(( ${#jobs[@]} * rounds ))

# Seconds per size and mode: what is left of the budget after start-up
# (about 3 s a run), over 2 modes x the sizes, with 25% to spare.
if [ -z "$ttime" ]; then
    ttime=$(awk -v b="$budget" -v r="$nruns" -v n="$nsizes" 'BEGIN {
        t = (b - 3 * r) / (r * 2 * n) / 1.25
        if (t < 0.005) t = 0.005
        printf "%.4f", t }')
fi
# Each mode of a run gets its share: behind schedule it runs only powers
# of two, past it no new size (telemem-netpipe --max-seconds).
max_seconds=$(awk -v b="$budget" -v r="$nruns" 'BEGIN {
    s = (b - 3 * r) / r / 2
    if (s < 1) s = 1
    printf "%.1f", s }')
deadline=$(( SECONDS + budget * 13 / 10 ))

mkdir -p "$out"
log=$out/run.log
: >"$log"
: >"$out/runs.txt"
note() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$log" >&2; }

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -n) $(uname -r)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "cores: $(nproc)"
    echo "git: $(git -C "$here/.." describe --always --dirty 2>/dev/null || echo unknown)"
    echo "build: $build"
    echo "implementations: ${sel[*]}${missing:+ (not run: ${missing[*]})}"
    echo "rounds: $rounds, runs: $nruns, budget: $budget s"
    echo "sizes: $nsizes from $min to $max, perturbation $pert; samples: $samples; time per size and mode: $ttime s; --max-seconds $max_seconds per mode"
    [ "$have_mpirun" = 1 ] && echo "mpirun: $(mpirun --version 2>&1 | head -1)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    env | grep -E '^(TELEMEM_|ARMCI_|OMPI_MCA_)' | sort || true
} >"$out/env.txt"

# Open MPI as root; Open MPI's shared-memory one-sided component for
# ARMCI-MPI's MPI_Win_allocate windows (docs/armci.md).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_osc=${OMPI_MCA_osc:-sm,pt2pt}
mpi=(mpirun --oversubscribe --bind-to core -n 2)

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
    local start=$SECONDS calm=0
    while [ $(( SECONDS - start )) -lt "$idle_wait" ]; do
        if [ "$(cpu_busy)" -lt 15 ]; then
            calm=$((calm + 1)); [ "$calm" -ge 3 ] && return 0
        else
            calm=0; sleep 2
        fi
    done
    note "machine still busy after ${idle_wait} s; running anyway"
}

# NetPIPE's .out (bytes, Mbps = 2^20 bit/s, seconds; best of 3 trials) ->
# the netpipe CSV layout, impl npopenmpi, mode latency (ping-pong).
np_to_csv() { # in.out out.csv
    {
        echo "# NPopenmpi, converted by bench-netpipe.sh from $(basename "$1")"
        echo "# NetPIPE time = best of its 3 trials (usec_median = usec_min)"
        echo "mode,touch,bytes,reps,usec_median,usec_min,mbps_median,mbps_max,impl,path"
        awk 'NF >= 2 && $1 ~ /^[0-9]+$/ && $2 > 0 {
            us = $1 * 8 / ($2 * 1048576) * 1e6
            printf "latency,0,%d,0,%.4f,%.4f,%.2f,%.2f,npopenmpi,send\n",
                   $1, us, us, $1 / us, $1 / us }' "$1"
    } >"$2"
}

status=0
skipped=()
run_one() { # round impl path touch
    local r=$1 impl=$2 path=$3 touch=$4
    local name=$impl
    [ "$path" != - ] && name+="-$path"
    name+="-$touch-r$r"
    if [ "$SECONDS" -ge "$deadline" ]; then
        skipped+=("$name"); status=1
        note "skip $name: past 1.3 x the budget"
        return 0
    fi
    wait_idle
    local base=$out/$name t0=$SECONDS
    local args=(--mode latency,burst --min "$min" --max "$max"
                --perturbation "$pert" --samples "$samples" --time "$ttime"
                --max-seconds "$max_seconds" --output "$base.csv")
    [ "$touch" = t ] && args+=(--touch)
    [ "$path" != - ] && args+=(--path "$path")
    # A run's own limit: 4x its share of the budget, at least 2 minutes.
    local limit=$(( budget * 4 / (nruns > 0 ? nruns : 1) ))
    [ "$limit" -ge 120 ] || limit=120
    note "round $r: $name (load $(cut -d' ' -f1 /proc/loadavg))"
    local rc=0
    case $impl in
    telemem|armci-telemem)
        "$run" -n 2 --timeout "$limit" "$bdir/${exe[$impl]}" "${args[@]}" \
            >"$base.log" 2>&1 || rc=$? ;;
    armci-mpi|mpi)
        timeout "$limit" "${mpi[@]}" "$bdir/${exe[$impl]}" "${args[@]}" \
            >"$base.log" 2>&1 || rc=$? ;;
    npopenmpi)
        (cd "$out" && timeout "$limit" "${mpi[@]}" NPopenmpi -l "$min_b" \
            -u "$max_b" -p "$pert" -o "$name.out") >"$base.log" 2>&1 || rc=$?
        [ "$rc" = 0 ] && np_to_csv "$base.out" "$base.csv" ;;
    esac
    echo "$name rc=$rc $(( SECONDS - t0 )) s" >>"$out/runs.txt"
    if [ "$rc" != 0 ]; then
        note "$name failed (exit $rc, see $base.log)"; status=1
        rm -f "$base.csv"
    fi
}

t_start=$SECONDS
note "$nruns runs, $nsizes sizes, $ttime s per size and mode, budget $budget s"
for r in $(seq 1 "$rounds"); do
    order=("${jobs[@]}")
    if [ $((r % 2)) = 0 ]; then
        order=()
        for ((k = ${#jobs[@]} - 1; k >= 0; k--)); do order+=("${jobs[k]}"); done
    fi
    for j in "${order[@]}"; do
        read -r impl path touch <<<"$j"
        run_one "$r" "$impl" "$path" "$touch"
    done
done
elapsed=$(( SECONDS - t_start ))
note "runs done in $elapsed s"
{
    echo "runs took: $elapsed s (budget $budget s)"
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    [ "${#skipped[@]}" = 0 ] || echo "skipped (out of time): ${skipped[*]}"
} >>"$out/env.txt"

py=/usr/bin/python3
[ -x "$py" ] || py=python3
plot_args=("$out" --summary "$out/summary.md")
[ "$do_plot" = 0 ] && plot_args+=(--no-plots)
"$py" "$here/plot_netpipe.py" "${plot_args[@]}" 2>&1 | tee -a "$log" >&2 || status=1
exit "$status"
