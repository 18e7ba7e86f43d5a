#!/usr/bin/env bash
# bench-net.sh - the across-nodes comparison: two hosts (two network
# namespaces on this machine, or two real hosts from --hostfile), 1 and 2
# ranks per host; NetPIPE latency and bursts, the FFT all-to-all and ARMCI
# passive-target get / rmw, for Telemem over ofi and ucx (polling path and
# auto), libarmci, Open MPI and ARMCI-MPI in rotating rounds; then
# summary.md and the plots (scripts/plot_net.py).  docs/benchmarks.md,
# "Across nodes", describes it.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/bench-net.sh [options]

Two hosts: by default two network namespaces on this machine joined by a
bridge in a third one (needs root; nothing is added to this machine's own
namespace, and names and addresses come from the script's pid, so runs in
parallel do not collide; all three go when the script ends), or the two
hosts of --hostfile reached by --rsh.  For each round, each number of ranks
per host (--ppn) and each part, every series runs once, in an order rotated
by one each round:

  netpipe  NetPIPE latency (ping-pong) and burst puts; with P ranks per host
           P pairs (rank r with r+P) across the hosts at once
           tm-ofi-never, tm-ofi-auto,  telemem-netpipe, TELEMEM_TRANSPORT=
           tm-ucx-never, tm-ucx-auto   shm+ofi|shm+ucx, TELEMEM_DIRECT=never|auto
           armci-ofi, armci-ucx        armci-netpipe (libarmci), auto
           mpi                         mpi-netpipe: Open MPI's MPI_Send/Recv
           armci-mpi                   armci-mpi-netpipe: ARMCI-MPI (osc pt2pt)
  fft      the FFT all-to-all (telemem-fft --alltoall telemem|armci|mpi,
           armci-mpi-fft --alltoall armci), all under mpirun
           tm-ofi-never ... tm-ucx-auto, armci-ofi, armci-ucx, mpi, armci-mpi
  armci    passive-target ARMCI_Get and ARMCI_Rmw (armci_bench --only
           get,rmw) from rank 0 to rank P, the target spinning on a plain
           load (spin) or waiting in ARMCI_Barrier (barrier)
           libarmci-ofi-never ... libarmci-ucx-auto (telemem-run)
           armci-mpi   barrier: osc pt2pt over ob1/tcp; spin: osc ucx over
                       pml ucx with ARMCI_PROGRESS_THREAD=1, the only Open
                       MPI 4.1 set-up here whose target progresses without
                       calling MPI (pt2pt refuses THREAD_MULTIPLE, osc rdma
                       makes no window over tcp)

Launchers: telemem-run -H h1:P,h2:P --rsh ... --bind none for telemem-netpipe,
armci-netpipe and telemem-armci-bench; mpirun --host h1:P,h2:P --bind-to
none (ob1, btl tcp,vader,self) for the rest.  The benchmarks pin their
ranks themselves.  Each run records the load average before and after it
(runs.csv).

Options:
  --build DIR       Meson build directory (default: build); a release build
                    for figures: meson setup DIR --buildtype=release
  --base-build DIR  a second build (the commit before a change): its
                    Telemem series run as SERIES.base beside the others
  --base-label TEXT what the base build is (env.txt), e.g. a commit
  --series LIST     only these series (names as below; a .base twin runs
                    with its series), e.g. tm-ofi-never,tm-ucx-never,mpi
  --out DIR         results directory (default: results/net)
  --hostfile FILE   two real hosts, one name per line ('#' comments); the
                    build must be at the same path on both
  --rsh CMD         remote shell for --hostfile (default: ssh); telemem-run
                    gets 'CMD %h', mpirun plm_rsh_agent CMD
  --kvs-addr ADDR   --hostfile: the address telemem-run's store listens on
                    (default: telemem-run's choice)
  --net CIDR        --hostfile: the network Open MPI uses (btl_tcp and
                    oob_tcp if_include; default: Open MPI's choice)
  --rounds N        rounds (default 3)
  --ppn LIST        ranks per host (default 1,2)
  --parts LIST      netpipe,fft,armci (default all three)
  --transports LIST ofi,ucx (default both that are built); ofinet: ofi
                    with libfabric's net provider (TCP without ofi_rxm,
                    libfabric 1.17+), series tm-ofinet-*
  --paths LIST      TELEMEM_DIRECT values for the Telemem series (default
                    never,auto)
  --ofi-provider P  TELEMEM_OFI_PROVIDER (default tcp;ofi_rxm)
  --max SIZE        largest NetPIPE message (default 4m)
  --time SEC        NetPIPE seconds per size and mode (default 0.1)
  --fft-max-log2 K  largest FFT, 2^K points (default 20)
  --armci-max SIZE  largest ARMCI_Get (default 1m)
  --timeout SEC     limit of one run (default 300)
  --no-plot         summary.md but no PNGs
  --quick           a check that everything runs: one round, NetPIPE up to
                    1 KiB, FFT 2^10..2^11, gets up to 1 KiB (under 3 minutes)
  -h, --help        this text

Before and after (--base-build DIR): every Telemem series (tm-*, armci-ofi,
armci-ucx, libarmci-*) also runs from the programs of a second build, as
SERIES.base, in the same rotation; summary.md then compares each series
with its .base twin (new / base, per round).

Writes to --out: np-pP-SERIES-rR.csv, fft-pP-SERIES-rR.csv,
ar-pP-TARGET-SERIES-rR.csv (and a .log for each), runs.csv (exit status,
seconds and load of every run), env.txt, run.log, summary.md (time ratios
Telemem / Open MPI per size) and net_*.png.  Exit status: 0 every run
passed, 1 a run failed (the others ran and the summary is written), 2 bad
usage or missing programs, 77 no way to make two hosts (not root).
EOF
}

build=build
base_build=
base_label=
series_only=
out=results/net
hostfile=
rsh=ssh
kvs_addr=
net_cidr=
rounds=3
ppns=1,2
parts=netpipe,fft,armci
transports=
paths=never,auto
ofi_prov='tcp;ofi_rxm'
np_max=4m
np_time=0.1
fft_max=20
ar_max=1m
limit=300
do_plot=1
quick=0

die() { echo "bench-net.sh: $*" >&2; exit 2; }
need() { [ "$2" -ge 2 ] || die "$1 needs a value"; }
while [ $# -gt 0 ]; do
    case "$1" in
    --build) need "$1" $#; build=$2; shift 2 ;;
    --base-build) need "$1" $#; base_build=$2; shift 2 ;;
    --base-label) need "$1" $#; base_label=$2; shift 2 ;;
    --series) need "$1" $#; series_only=$2; shift 2 ;;
    --out) need "$1" $#; out=$2; shift 2 ;;
    --hostfile) need "$1" $#; hostfile=$2; shift 2 ;;
    --rsh) need "$1" $#; rsh=$2; shift 2 ;;
    --kvs-addr) need "$1" $#; kvs_addr=$2; shift 2 ;;
    --net) need "$1" $#; net_cidr=$2; shift 2 ;;
    --rounds) need "$1" $#; rounds=$2; shift 2 ;;
    --ppn) need "$1" $#; ppns=$2; shift 2 ;;
    --parts) need "$1" $#; parts=$2; shift 2 ;;
    --transports) need "$1" $#; transports=$2; shift 2 ;;
    --paths) need "$1" $#; paths=$2; shift 2 ;;
    --ofi-provider) need "$1" $#; ofi_prov=$2; shift 2 ;;
    --max) need "$1" $#; np_max=$2; shift 2 ;;
    --time) need "$1" $#; np_time=$2; shift 2 ;;
    --fft-max-log2) need "$1" $#; fft_max=$2; shift 2 ;;
    --armci-max) need "$1" $#; ar_max=$2; shift 2 ;;
    --timeout) need "$1" $#; limit=$2; shift 2 ;;
    --no-plot) do_plot=0; shift ;;
    --quick) quick=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done
if [ "$quick" = 1 ]; then
    rounds=1; np_max=1k; np_time=0.003; fft_max=11; ar_max=1k; limit=60
fi
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$rounds'"
[[ $limit =~ ^[1-9][0-9]*$ ]] || die "bad --timeout '$limit'"
[[ $fft_max =~ ^[0-9]+$ ]] && [ "$fft_max" -ge 10 ] && [ "$fft_max" -le 26 ] ||
    die "bad --fft-max-log2 '$fft_max' (10..26)"
[[ $np_time =~ ^[0-9]*\.?[0-9]+$ ]] || die "bad --time '$np_time'"
IFS=, read -r -a ppn_list <<<"$ppns"
for p in "${ppn_list[@]}"; do [[ $p =~ ^[1-9]$ ]] || die "bad --ppn '$ppns' (1..9 each)"; done
IFS=, read -r -a part_list <<<"$parts"
for p in "${part_list[@]}"; do
    [[ $p == netpipe || $p == fft || $p == armci ]] || die "bad --parts entry '$p'"
done
IFS=, read -r -a path_list <<<"$paths"
for p in "${path_list[@]}"; do
    [[ $p == never || $p == auto || $p == always ]] || die "bad --paths entry '$p'"
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "$build" 2>/dev/null && pwd) || die "no build directory '$build'"
if [ -n "$base_build" ]; then
    base_build=$(cd "$base_build" 2>/dev/null && pwd) ||
        die "no build directory '$base_build'"
fi
for b in "$build" $base_build; do
    for f in "$b/tools/telemem-run" "$b/bench/netpipe/telemem-netpipe" \
             "$b/bench/armci/telemem-armci-bench"; do
        [ -x "$f" ] || die "$f not found: build first (meson setup $b --buildtype=release && ninja -C $b)"
    done
done
# use_build SERIES: the programs of the build that series runs from (its
# .base twin: --base-build); strips .base from $s_name.
use_build() {
    local b=$build
    s_name=$1
    if [ "${1%.base}" != "$1" ]; then b=$base_build; s_name=${1%.base}; fi
    run=$b/tools/telemem-run
    bnp=$b/bench/netpipe bfft=$b/bench/fft bar=$b/bench/armci
}
use_build none
command -v mpirun >/dev/null || die "mpirun not found (apt-get install openmpi-bin)"
if [ -z "$transports" ]; then
    cfg=$build/src/tlm_build_config.h
    transports=$(sed -n 's/^#define TLM_HAVE_\(OFI\|UCX\) 1$/\1/p' "$cfg" 2>/dev/null |
        tr 'A-Z' 'a-z' | paste -sd, -) || true
    [ -n "$transports" ] || die "this build has neither ofi nor ucx ($cfg)"
fi
IFS=, read -r -a tr_list <<<"$transports"
for t in "${tr_list[@]}"; do
    [[ $t == ofi || $t == ofinet || $t == ucx ]] || die "bad --transports entry '$t'"
done

# ---------------------------------------------------------------- hosts
# pre: the command prefix the launchers run under; h1 h2: host names for
# telemem-run, m1 m2 for mpirun; tm_rsh, agent: the remote shells.
pre=()
cleanup_hosts() { :; }
if [ -n "$hostfile" ]; then
    mapfile -t hosts < <(sed 's/#.*//' "$hostfile" | awk 'NF { print $1 }')
    [ "${#hosts[@]}" = 2 ] || die "$hostfile: needs exactly two hosts, has ${#hosts[@]}"
    h1=${hosts[0]} h2=${hosts[1]} m1=$h1 m2=$h2
    tm_rsh="$rsh %h"
    agent=$rsh
    mode="hosts $h1 $h2 (--hostfile $hostfile, --rsh $rsh)"
else
    skip() { echo "bench-net.sh: SKIP: $*" >&2; exit 77; }
    [ "$(id -u)" = 0 ] || skip "needs root to make two network namespaces (or give --hostfile)"
    command -v ip >/dev/null || skip "needs iproute2 (ip)"
    command -v unshare >/dev/null || skip "needs unshare (util-linux)"
    tag="tnet$$"
    sw=${tag}s h1=${tag}a h2=${tag}b
    sub="10.$(( ($$ >> 8) % 200 + 20 )).$(( $$ % 250 ))"
    m1=$sub.2 m2=$sub.3
    cleanup_hosts() {
        local ns pid
        for ns in "$h1" "$h2" "$sw"; do
            for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
            ip netns del "$ns" 2>/dev/null || true
        done
    }
    trap cleanup_hosts EXIT
    trap 'exit 130' INT TERM
    ip netns add "$sw" || skip "cannot create a network namespace"
    ip -n "$sw" link set lo up
    ip -n "$sw" link add br0 type bridge || skip "cannot create a bridge"
    ip -n "$sw" addr add "$sub.1/24" dev br0
    ip -n "$sw" link set br0 up
    i=2
    for ns in "$h1" "$h2"; do
        ip netns add "$ns"
        ip -n "$sw" link add "v$ns" type veth peer name eth0 netns "$ns" ||
            skip "cannot create a veth pair"
        ip -n "$sw" link set "v$ns" master br0 up
        ip -n "$ns" addr add "$sub.$i/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
        i=$((i + 1))
    done
    pre=(ip netns exec "$sw")
    tm_rsh="ip netns exec %h sh -c"
    kvs_addr=$sub.1
    net_cidr=$sub.0/24
    mkdir -p "$out"
    agent=$(cd "$out" && pwd)/rsh-agent.sh
    # Each namespace also gets its own host name (a UTS namespace): Open
    # MPI and PMIx name their session directories and shared-memory files
    # after it, and with one name for both "hosts" their daemons and ranks
    # used each other's (segmentation faults in vader, hwloc, PMIx).
    cat >"$agent" <<EOF
#!/bin/sh
# mpirun's remote shell for bench-net.sh: an address -> its namespace.
h=\$1; shift
case "\$h" in $m1) ns=$h1 ;; $m2) ns=$h2 ;; *) echo "rsh-agent: unknown host \$h" >&2; exit 1 ;; esac
exec ip netns exec "\$ns" unshare --uts sh -c 'hostname "\$0" && exec sh -c "\$1"' "\$ns" "\$*"
EOF
    chmod +x "$agent"
    mode="network namespaces $h1 ($m1), $h2 ($m2), bridge in $sw"
fi

# More ranks than this machine has CPUs (both "hosts" are namespaces of
# it): Open MPI's waits yield, as Open MPI advises for oversubscription;
# Telemem's waits see the busy node themselves.
yield_for() { # P
    if [ -z "$hostfile" ] && [ $((2 * $1)) -gt "$(nproc)" ]; then
        echo --mca; echo mpi_yield_when_idle; echo 1
    fi
}

mkdir -p "$out"
rm -f "$out"/np-*.csv "$out"/fft-*.csv "$out"/ar-*.csv "$out"/*.log "$out"/net_*.png
log=$out/run.log
: >"$log"
echo "part,ppn,series,round,rc,seconds,load_start,load_end" >"$out/runs.csv"
note() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$log" >&2; }
load1() { cut -d' ' -f1 /proc/loadavg; }

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -n) $(uname -r)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "cores: $(nproc)"
    echo "git: $(git -C "$here/.." describe --always --dirty 2>/dev/null || echo unknown)"
    echo "build: $build, buildtype $(grep -o '"name": "buildtype", "value": "[a-z]*"' \
        "$build/meson-info/intro-buildoptions.json" 2>/dev/null | sed 's/.*"value": "//; s/"//' || echo unknown)"
    [ -n "$base_build" ] && echo "base build (the .base series): $base_build${base_label:+ ($base_label)}"
    [ -n "$series_only" ] && echo "series: $series_only"
    echo "hosts: $mode"
    echo "ranks per host: $ppns; parts: $parts; transports: $transports; paths: $paths; rounds: $rounds"
    echo "netpipe: --max $np_max --time $np_time; fft: 2^10..2^$fft_max; armci: --max $ar_max"
    echo "TELEMEM_OFI_PROVIDER: $ofi_prov"
    for p in "${ppn_list[@]}"; do
        if [ -n "$(yield_for "$p")" ]; then
            echo "$p per host: $((2 * p)) ranks on $(nproc) CPUs: Open MPI runs with --mca mpi_yield_when_idle 1"
        fi
    done
    echo "mpirun: $(mpirun --version 2>&1 | head -1)"
    echo "libfabric: $(fi_info --version 2>/dev/null | sed -n 's/^libfabric: //p' || echo unknown)"
    echo "ucx: $(ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' || echo unknown)"
    dpkg-query -W -f='libarmci-mpi-dev: ${Version}\n' libarmci-mpi-dev 2>/dev/null || true
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    env | grep -E '^(TELEMEM_|UCX_|FI_|OMPI_MCA_|ARMCI_)' | sort || true
} >"$out/env.txt"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# ------------------------------------------------------------ launchers
# tm P ENV... -- PROG ARGS: telemem-run over the two hosts.
tm() {
    local p=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local kv=()
    [ -n "$kvs_addr" ] && kv=(--kvs-addr "$kvs_addr")
    env "${envs[@]}" timeout -k 10 $((limit + 30)) "${pre[@]}" "$run" \
        -H "$h1:$p,$h2:$p" --rsh "$tm_rsh" "${kv[@]}" --bind none \
        --timeout "$limit" "$@"
}
# ompi P MCA-ARGS... -- PROG ARGS: mpirun over the two hosts.
ompi() {
    local p=$1; shift
    local mca=()
    while [ "$1" != -- ]; do mca+=("$1"); shift; done
    shift
    local net=()
    [ -n "$net_cidr" ] && net=(--mca oob_tcp_if_include "$net_cidr"
                               --mca btl_tcp_if_include "$net_cidr")
    local y
    mapfile -t y < <(yield_for "$p")
    timeout -k 10 "$limit" "${pre[@]}" mpirun --host "$m1:$p,$m2:$p" \
        -np $((2 * p)) --bind-to none --mca plm_rsh_agent "$agent" \
        "${net[@]}" "${y[@]}" "${mca[@]}" "$@"
}
# Open MPI's two-sided set-up for every MPI run: ob1 over tcp between the
# hosts, vader inside one.
OB1=(--mca pml ob1 --mca btl tcp,vader,self)
# tm_env TRANSPORT PATH: Telemem's variables of a series.
tm_env() {
    if [ "$1" = ofinet ]; then
        echo "TELEMEM_TRANSPORT=shm+ofi"
        echo "TELEMEM_OFI_PROVIDER=net"
    else
        echo "TELEMEM_TRANSPORT=shm+$1"
        echo "TELEMEM_OFI_PROVIDER=$ofi_prov"
    fi
    [ -n "$2" ] && echo "TELEMEM_DIRECT=$2"
    return 0
}
mpi_x() { # the same as mpirun -x arguments
    local v
    while read -r v; do [ -n "$v" ] && printf -- '-x\n%s\n' "$v"; done < <(tm_env "$@")
}

# ------------------------------------------------------------ the parts
series_of() { # part -> the series it runs
    local s=() t p
    case $1 in
    netpipe|fft)
        for t in "${tr_list[@]}"; do for p in "${path_list[@]}"; do s+=("tm-$t-$p"); done; done
        for t in "${tr_list[@]}"; do s+=("armci-$t"); done
        s+=(mpi)
        if [ "$1" = netpipe ]; then
            [ -x "$bnp/armci-mpi-netpipe" ] && s+=(armci-mpi)
        else
            [ -x "$bfft/armci-mpi-fft" ] && s+=(armci-mpi)
        fi ;;
    armci)
        for t in "${tr_list[@]}"; do for p in "${path_list[@]}"; do
            s+=("libarmci-$t-$p-spin" "libarmci-$t-$p-barrier"); done; done
        if [ -x "$bar/armci-mpi-bench" ]; then s+=(armci-mpi-spin armci-mpi-barrier); fi ;;
    esac
    local x out=()
    for x in "${s[@]}"; do
        if [ -n "$series_only" ] && [[ ,$series_only, != *,$x,* ]]; then continue; fi
        out+=("$x")
        # Old and new side by side in the rotation: A B A B ...
        if [ -n "$base_build" ] && [[ $x == tm-* || $x == armci-ofi ||
             $x == armci-ucx || $x == libarmci-* ]]; then
            out+=("$x.base")
        fi
    done
    [ "${#out[@]}" -gt 0 ] && printf '%s\n' "${out[@]}"
    return 0
}

np_args() {
    local a=(--mode latency,burst --max "$np_max" --perturbation 0
             --time "$np_time" --samples 5 --max-seconds $((limit / 3)))
    [ "$quick" = 1 ] && a+=(--samples 3 --check)
    printf '%s\n' "${a[@]}"
}
fft_args() {
    local a=(--min-log2 10 --max-log2 "$fft_max" --reps 3 --min-time 0.1)
    [ "$quick" = 1 ] && a=(--min-log2 10 --max-log2 "$fft_max" --reps 2 --min-time 0.005)
    printf '%s\n' "${a[@]}"
}
ar_time=0.05
[ "$quick" = 1 ] && ar_time=0.003

# run_np P SERIES BASE
run_np() {
    local p=$1 s=$2 base=$3 t path a
    mapfile -t a < <(np_args)
    a+=(--output "$base.csv")
    case $s in
    tm-*) t=${s#tm-}; path=${t#*-}; t=${t%%-*}
        mapfile -t e < <(tm_env "$t" "$path")
        tm "$p" "${e[@]}" -- "$bnp/telemem-netpipe" "${a[@]}" ;;
    armci-mpi)
        ompi "$p" "${OB1[@]}" --mca osc sm,pt2pt -- "$bnp/armci-mpi-netpipe" \
            "${a[@]}" --poll yes ;;
    armci-*) t=${s#armci-}
        mapfile -t e < <(tm_env "$t" "")
        tm "$p" "${e[@]}" -- "$bnp/armci-netpipe" "${a[@]}" ;;
    mpi) ompi "$p" "${OB1[@]}" -- "$bnp/mpi-netpipe" "${a[@]}" ;;
    esac
}

# run_fft P SERIES BASE
run_fft() {
    local p=$1 s=$2 base=$3 t path a x
    mapfile -t a < <(fft_args)
    a+=(--csv "$base.csv")
    case $s in
    tm-*) t=${s#tm-}; path=${t#*-}; t=${t%%-*}
        mapfile -t x < <(mpi_x "$t" "$path")
        ompi "$p" "${OB1[@]}" "${x[@]}" -- "$bfft/telemem-fft" --alltoall telemem "${a[@]}" ;;
    armci-mpi)
        ompi "$p" "${OB1[@]}" --mca osc sm,pt2pt -- "$bfft/armci-mpi-fft" \
            --alltoall armci "${a[@]}" ;;
    armci-*) t=${s#armci-}
        mapfile -t x < <(mpi_x "$t" "")
        ompi "$p" "${OB1[@]}" "${x[@]}" -- "$bfft/telemem-fft" --alltoall armci "${a[@]}" ;;
    mpi) ompi "$p" "${OB1[@]}" -- "$bfft/telemem-fft" --alltoall mpi "${a[@]}" ;;
    esac
}

# run_ar P SERIES BASE  (SERIES ends in -spin or -barrier)
run_ar() {
    local p=$1 s=$2 base=$3 target=${2##*-} t path
    local a=(--only get,rmw --max "$ar_max" --time "$ar_time" --target "$target")
    s=${s%-*}
    case $s in
    libarmci-*) t=${s#libarmci-}; path=${t#*-}; t=${t%%-*}
        mapfile -t e < <(tm_env "$t" "$path")
        tm "$p" "${e[@]}" -- "$bar/telemem-armci-bench" "${a[@]}" >"$base.csv" ;;
    armci-mpi)
        if [ "$target" = spin ]; then
            ompi "$p" --mca pml ucx --mca osc ucx --mca btl self \
                --mca pml_ucx_tls any --mca pml_ucx_devices any \
                -x ARMCI_PROGRESS_THREAD=1 -- "$bar/armci-mpi-bench" "${a[@]}" >"$base.csv"
        else
            ompi "$p" "${OB1[@]}" --mca osc sm,pt2pt -- "$bar/armci-mpi-bench" \
                "${a[@]}" >"$base.csv"
        fi ;;
    esac
}

status=0
run_one() { # part ppn series round
    local part=$1 p=$2 s=$3 r=$4 base name rc=0 t0=$SECONDS l0 l1 sn sfx
    use_build "$s"
    sn=$s_name sfx=${s#"$s_name"}
    case $part in
    netpipe) name=np-p$p-$sn$sfx-r$r ;;
    fft) name=fft-p$p-$sn$sfx-r$r ;;
    armci) name=ar-p$p-${sn##*-}-${sn%-*}$sfx-r$r ;;
    esac
    base=$out/$name
    l0=$(load1)
    note "round $r, $p per host, $part: $s (load $l0)"
    case $part in
    netpipe) run_np "$p" "$sn" "$base" >"$base.log" 2>&1 || rc=$? ;;
    fft) run_fft "$p" "$sn" "$base" >"$base.log" 2>&1 || rc=$? ;;
    armci) run_ar "$p" "$sn" "$base" 2>"$base.log" || rc=$? ;;
    esac
    l1=$(load1)
    echo "$part,$p,$s,$r,$rc,$((SECONDS - t0)),$l0,$l1" >>"$out/runs.csv"
    if [ "$rc" != 0 ]; then
        status=1
        note "  $name failed (exit $rc$([ "$rc" = 124 ] && echo ": timed out after $limit s"); see $base.log)"
        tail -3 "$base.log" | sed 's/^/    /' | tee -a "$log" >&2
        mv -f "$base.csv" "$base.failed.csv" 2>/dev/null || true
    fi
}

t_start=$SECONDS
for r in $(seq 1 "$rounds"); do
    for p in "${ppn_list[@]}"; do
        for part in "${part_list[@]}"; do
            mapfile -t ser < <(series_of "$part")
            k=${#ser[@]}
            for i in $(seq 0 $((k - 1))); do
                run_one "$part" "$p" "${ser[$(( (i + r - 1) % k ))]}" "$r"
            done
        done
    done
done
note "runs done in $((SECONDS - t_start)) s"
{
    echo "runs took: $((SECONDS - t_start)) s"
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$out/env.txt"

py=/usr/bin/python3
[ -x "$py" ] || py=python3
args=("$out")
[ "$do_plot" = 0 ] && args+=(--no-plots)
"$py" "$here/plot_net.py" "${args[@]}" 2>&1 | tee -a "$log" >&2 || status=1
exit "$status"
