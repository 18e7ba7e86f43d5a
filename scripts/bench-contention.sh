#!/usr/bin/env bash
# bench-contention.sh - Telemem on shared cores (docs/wait.md): runs, in
# alternating rounds, every benchmark of the wait policy's targets - the
# FFT all-to-all quiet and under load against MPI_Alltoall, an ARMCI
# accumulate to a target in MPI_Barrier under load against ARMCI-MPI, 4
# ranks on 2 cores in a barrier loop against Open MPI, the CPU time of an
# idle wait and of an idle progress thread, and the 8-byte polling-path
# latency against a cache-line ping-pong floor, Open MPI, ucx_perftest and
# (--base) the build of an earlier commit; prints uptime with each part and
# writes results.csv, env.txt and summary.md (targets met or not).
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/bench-contention.sh [options]

Parts (--only picks some; each alternates its implementations within every
round, rotating who goes first; "load" = two busy-loop processes this
script starts for those runs only):
  latency  quiet: telemem-floor (2 threads on CPUs 0 and 1), telemem-netpipe
           8 B latency on the polling path (TELEMEM_DIRECT=never, --bind
           core), the same from --base, mpi-netpipe under mpirun
           --bind-to core, ucx_perftest ucp_am_lat over shared memory.
           Targets: Telemem <= 1.5 x floor (aim), <= 1.03 x --base
  fft      telemem-fft --alltoall telemem vs --alltoall mpi under mpirun -n
           2, 2^14 - 2^18, quiet and under load.  Targets: a2a time
           Telemem / MPI <= 1.0 quiet at 2^14 - 2^16, <= 1.5 under load at
           every size
  acc      under load: telemem-acc-bench (libarmci, progress thread on) vs
           armci-mpi-acc-bench, 8-byte ARMCI_Acc + Fence to a target in
           MPI_Barrier, 1 ms apart.  Target: median <= 50 us
  barrier  4 ranks on 2 cores (mpirun --oversubscribe): 10,000 x (8-byte
           put + completion + barrier), Telemem vs MPI_Put/MPI_Barrier.
           Target: Telemem <= 1.5 x MPI's time
  idle     telemem-run -n 2: a rank blocked 10 s in a barrier (target: CPU
           < 5%), and an idle job with the progress thread on (target:
           < 1% of a core), under TELEMEM_WAIT=auto

Options:
  --build DIR    release build to measure (default: build-release)
  --base DIR     build of the commit to compare the latency with (its
                 telemem-netpipe and telemem-run); default: none
  --out DIR      results directory (default: results/contention)
  --rounds N     alternating rounds (default: 5)
  --only LIST    comma list of parts (default: all)
  --quick        --rounds 1, short runs (a check that everything works)
  -h, --help     this text

Exit status: 0 done (targets met or not: see summary.md), 1 a run failed,
2 bad usage or missing programs.  Figures need a quiet machine: compare
within one run; the load of each part is printed and kept in results.csv.
EOF
}

build=build-release
base=
out=results/contention
rounds=5
only=latency,fft,acc,barrier,idle
quick=0
die() { echo "bench-contention.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --build) [ $# -ge 2 ] || die "--build needs a value"; build=$2; shift 2 ;;
    --base) [ $# -ge 2 ] || die "--base needs a value"; base=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; rounds=$2; shift 2 ;;
    --only) [ $# -ge 2 ] || die "--only needs a value"; only=$2; shift 2 ;;
    --quick) quick=1; rounds=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (--help)" ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive number"
run=$build/tools/telemem-run
np=$build/bench/netpipe/telemem-netpipe
mnp=$build/bench/netpipe/mpi-netpipe
fft=$build/bench/fft/telemem-fft
cb=$build/bench/contention/telemem-contention-bench
floor=$build/bench/contention/telemem-floor
tacc=$build/bench/contention/telemem-acc-bench
macc=$build/bench/contention/armci-mpi-acc-bench
for f in "$run" "$np" "$floor"; do
    [ -x "$f" ] || die "$f missing (meson setup $build -Dbuildtype=release && ninja -C $build)"
done
if [ -n "$base" ]; then
    [ -x "$base/tools/telemem-run" ] && [ -x "$base/bench/netpipe/telemem-netpipe" ] ||
        die "--base $base has no telemem-run / telemem-netpipe"
fi
has_part() { [[ ",$only," == *",$1,"* ]]; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out/raw"
csv=$out/results.csv
echo "part,round,impl,condition,metric,size,value,load1" > "$csv"
failed=0

load1() { cut -d' ' -f1 /proc/loadavg; }
emit() { echo "$1,$2,$3,$4,$5,$6,$7,$(load1)" >> "$csv"; }
say() { echo "== $* ($(uptime | sed 's/.*load/load/'))"; }
fail() { echo "bench-contention.sh: $* failed (see $out/raw)" >&2; failed=1; }

busy_pids=()
busy_start() {
    for _ in 1 2; do
        ( trap 'exit 0' TERM; while :; do :; done ) &
        busy_pids+=($!)
    done
}
busy_stop() {
    [ ${#busy_pids[@]} -gt 0 ] || return 0
    kill "${busy_pids[@]}" 2>/dev/null || true
    wait "${busy_pids[@]}" 2>/dev/null || true
    busy_pids=()
}
trap busy_stop EXIT

# The order of round r: the list rotated by r.
rotate() { # r items...
    local r=$1; shift
    local a=("$@") n=$# i
    for ((i = 0; i < n; i++)); do echo "${a[$(((i + r) % n))]}"; done
}

{
    echo "date: $(date -u +%FT%TZ)"
    echo "host: $(uname -n) $(uname -r), $(nproc) CPUs"
    echo "git: $(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "build: $build  base: ${base:-none}"
    echo "uptime at start: $(uptime)"
} > "$out/env.txt"

# ---- latency ---------------------------------------------------------------
np_lat() { # round impl builddir
    local r=$1 impl=$2 b=$3 f=$out/raw/lat-$2-r$1.txt
    if TELEMEM_DIRECT=never timeout 120 "$b/tools/telemem-run" --bind core -n 2 \
           "$b/bench/netpipe/telemem-netpipe" --mode latency --min 8 --max 8 \
           --perturbation 0 --samples 9 --time "$ltime" > "$f" 2>&1; then
        awk -F, '$1 == "latency" {print $5}' "$f" | head -1 |
            while read -r v; do emit latency "$r" "$impl" quiet usec 8 "$v"; done
    else fail "$impl latency (round $r)"; fi
}

lat_one() { # round impl
    local r=$1 f=$out/raw/lat-$2-r$1.txt
    case $2 in
    floor)
        if "$floor" --iters "$fiters" > "$f" 2>&1; then
            awk -F, '$1 == "floor" {print $5}' "$f" |
                while read -r v; do emit latency "$r" floor quiet usec 8 "$v"; done
        else fail "floor (round $r)"; fi ;;
    telemem) np_lat "$r" telemem "$build" ;;
    base) np_lat "$r" base "$base" ;;
    mpi)
        if timeout 120 mpirun --bind-to core -n 2 "$mnp" --mode latency --min 8 \
               --max 8 --perturbation 0 --samples 9 --time "$ltime" > "$f" 2>&1; then
            awk -F, '$1 == "latency" {print $5}' "$f" | head -1 |
                while read -r v; do emit latency "$r" mpi quiet usec 8 "$v"; done
        else fail "mpi latency (round $r)"; fi ;;
    ucx)
        local port=$((20000 + RANDOM % 20000)) ok=0
        UCX_TLS=sm,self timeout 120 ucx_perftest -p "$port" -c 0 > "$f.srv" 2>&1 &
        local spid=$!
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            sleep 0.5
            if UCX_TLS=sm,self timeout 120 ucx_perftest -p "$port" -c 1 127.0.0.1 \
                   -t ucp_am_lat -s 8 -n "$uiters" -w $((uiters / 10)) > "$f" 2>&1; then
                ok=1; break
            fi
            kill -0 "$spid" 2>/dev/null || break
        done
        kill "$spid" 2>/dev/null || true
        wait "$spid" 2>/dev/null || true
        # "Final:  iters  typical  average  ..." (latency in usec)
        if [ $ok = 1 ]; then
            awk '$1 == "Final:" {print $3}' "$f" |
                while read -r v; do emit latency "$r" ucx quiet usec 8 "$v"; done
        else fail "ucx_perftest (round $r)"; fi ;;
    esac
}

ltime=0.3 fiters=200000 uiters=200000
[ "$quick" = 1 ] && ltime=0.05 fiters=20000 uiters=20000
if has_part latency; then
    impls=(floor telemem)
    [ -n "$base" ] && impls+=(base)
    [ -x "$mnp" ] && command -v mpirun >/dev/null && impls+=(mpi)
    command -v ucx_perftest >/dev/null && impls+=(ucx)
    for ((r = 1; r <= rounds; r++)); do
        say "latency round $r"
        for i in $(rotate "$r" "${impls[@]}"); do lat_one "$r" "$i"; done
    done
fi

# ---- fft -------------------------------------------------------------------
fft_one() { # round impl condition
    local r=$1 a=$2 c=$3 f=$out/raw/fft-$2-$3-r$1
    if timeout 600 mpirun -n 2 "$fft" --alltoall "$a" --min-log2 14 \
           --max-log2 18 --reps "$freps" --min-time "$fmin" --csv "$f.csv" \
           > "$f.log" 2>&1; then
        grep -v '^#' "$f.csv" | awk -F, 'NR > 1 {print $5, $12}' |
            while read -r k v; do emit fft "$r" "$a" "$c" a2a_s "$k" "$v"; done
    else fail "fft $a $c (round $r)"; fi
}

freps=3 fmin=0.1
[ "$quick" = 1 ] && freps=1 fmin=0.01
if has_part fft && [ -x "$fft" ] && command -v mpirun >/dev/null; then
    for ((r = 1; r <= rounds; r++)); do
        for c in quiet load; do
            [ "$c" = load ] && busy_start
            say "fft round $r, $c"
            for a in $(rotate "$r" telemem mpi); do fft_one "$r" "$a" "$c"; done
            busy_stop
        done
    done
elif has_part fft; then echo "bench-contention.sh: telemem-fft or mpirun missing: fft skipped" >&2
fi

# ---- acc -------------------------------------------------------------------
acc_one() { # round impl
    local r=$1 f=$out/raw/acc-$2-r$1.txt exe=$tacc
    local -a envs=()
    [ "$2" = armci-mpi ] && exe=$macc envs=(env OMPI_MCA_osc=sm,pt2pt)
    if timeout 300 "${envs[@]}" mpirun -n 2 "$exe" --iters "$aiters" \
           --gap-us 1000 > "$f" 2>&1; then
        awk -F, 'NF == 7 && $1 != "impl" {print $4, $5}' "$f" |
            while read -r med p90; do
                emit acc "$r" "$2" load usec_median 8 "$med"
                emit acc "$r" "$2" load usec_p90 8 "$p90"
            done
    else fail "acc $2 (round $r)"; fi
}

aiters=500
[ "$quick" = 1 ] && aiters=50
if has_part acc && [ -x "$tacc" ]; then
    impls=(telemem)
    [ -x "$macc" ] && impls+=(armci-mpi)
    busy_start
    for ((r = 1; r <= rounds; r++)); do
        say "acc round $r, load"
        for i in $(rotate "$r" "${impls[@]}"); do acc_one "$r" "$i"; done
    done
    busy_stop
fi

# ---- barrier ---------------------------------------------------------------
biters=10000
[ "$quick" = 1 ] && biters=500
if has_part barrier && [ -x "$cb" ]; then
    for ((r = 1; r <= rounds; r++)); do
        say "barrier round $r (4 ranks on $(nproc) CPUs)"
        for i in $(rotate "$r" telemem mpi); do
            f=$out/raw/barrier-$i-r$r.txt
            if TELEMEM_TRANSPORT=shm timeout 600 mpirun --oversubscribe -n 4 "$cb" \
                   --mode barrier --impl "$i" --iters "$biters" > "$f" 2>&1; then
                awk -F, '$1 == "barrier" {print $5}' "$f" |
                    while read -r v; do emit barrier "$r" "$i" oversubscribed seconds "$biters" "$v"; done
            else fail "barrier $i (round $r)"; fi
        done
    done
fi

# ---- idle ------------------------------------------------------------------
isec=10
[ "$quick" = 1 ] && isec=1
if has_part idle && [ -x "$cb" ]; then
    say "idle ($isec s each)"
    f=$out/raw/idle.txt
    if timeout 120 "$run" -n 2 "$cb" --mode idle --seconds "$isec" > "$f" 2>&1; then
        awk -F, '$1 == "idle" {print $7}' "$f" |
            while read -r v; do emit idle 1 telemem barrier cpu_share "$isec" "$v"; done
    else fail "idle"; fi
    f=$out/raw/ptidle.txt
    if TELEMEM_PROGRESS_THREAD=on timeout 120 "$run" -n 2 "$cb" --mode ptidle \
           --seconds "$isec" > "$f" 2>&1; then
        awk -F, '$1 == "ptidle" {print $7}' "$f" |
            while read -r v; do emit idle 1 telemem progress-thread cpu_share "$isec" "$v"; done
    else fail "idle progress thread"; fi
fi

echo "uptime at end: $(uptime)" >> "$out/env.txt"

# ---- summary ---------------------------------------------------------------
python3 - "$csv" "$out/summary.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def vals(part, impl, cond=None, metric=None, size=None):
    return [float(r["value"]) for r in rows if r["part"] == part and
            r["impl"] == impl and (cond is None or r["condition"] == cond) and
            (metric is None or r["metric"] == metric) and
            (size is None or r["size"] == str(size))]
def loads(part, cond=None):
    l = [float(r["load1"]) for r in rows if r["part"] == part and
         (cond is None or r["condition"] == cond)]
    return "%.1f-%.1f" % (min(l), max(l)) if l else "-"
def ratio(part, a, b, **k):
    """median of per-round ratios a/b (rounds where both ran)"""
    ra = {r["round"]: float(r["value"]) for r in rows if r["part"] == part
          and r["impl"] == a and all(r[x] == str(y) for x, y in k.items())}
    rb = {r["round"]: float(r["value"]) for r in rows if r["part"] == part
          and r["impl"] == b and all(r[x] == str(y) for x, y in k.items())}
    q = [ra[x] / rb[x] for x in ra if x in rb and rb[x] > 0]
    return statistics.median(q) if q else None
out = ["| part | figure | target | met | load (1 min) |", "|---|---|---|---|---|"]
def line(part, fig, target, ok, load):
    out.append("| %s | %s | %s | %s | %s |" % (part, fig, target,
               "-" if ok is None else ("yes" if ok else "**no**"), load))
med = lambda v: statistics.median(v) if v else None
f3 = lambda x: "-" if x is None else "%.3f" % x
if any(r["part"] == "latency" for r in rows):
    fl, tm = med(vals("latency", "floor")), med(vals("latency", "telemem"))
    ld = loads("latency")
    line("latency", "floor %s us, Telemem %s us, Open MPI %s us, UCX AM %s us"
         % (f3(fl), f3(tm), f3(med(vals("latency", "mpi"))),
            f3(med(vals("latency", "ucx")))), "", None, ld)
    q = ratio("latency", "telemem", "floor", metric="usec")
    line("latency", "Telemem / floor %s" % f3(q), "<= 1.5 (aim)",
         None if q is None else q <= 1.5, ld)
    q = ratio("latency", "telemem", "base", metric="usec")
    if q is not None:
        line("latency", "Telemem / base %s" % f3(q), "<= 1.03", q <= 1.03, ld)
for cond, lim, sizes in (("quiet", 1.0, (14, 15, 16)),
                         ("load", 1.5, (14, 15, 16, 17, 18))):
    for k in (14, 15, 16, 17, 18):
        q = ratio("fft", "telemem", "mpi", condition=cond, size=k)
        if q is None:
            continue
        line("fft %s" % cond, "2^%d: a2a Telemem / MPI %s (%s / %s ms)" % (
             k, f3(q), f3(1e3 * med(vals("fft", "telemem", cond, size=k))),
             f3(1e3 * med(vals("fft", "mpi", cond, size=k)))),
             "<= %.1f" % lim if k in sizes else "",
             (q <= lim) if k in sizes else None, loads("fft", cond))
t = med(vals("acc", "telemem", metric="usec_median"))
if t is not None:
    line("acc (load)", "median %s us (p90 %s), ARMCI-MPI %s us" % (
         f3(t), f3(med(vals("acc", "telemem", metric="usec_p90"))),
         f3(med(vals("acc", "armci-mpi", metric="usec_median")))),
         "<= 50 us", t <= 50, loads("acc"))
q = ratio("barrier", "telemem", "mpi")
if q is not None:
    line("barrier (4 on 2 cores)", "Telemem %s s / MPI %s s = %s" % (
         f3(med(vals("barrier", "telemem"))), f3(med(vals("barrier", "mpi"))),
         f3(q)), "<= 1.5", q <= 1.5, loads("barrier"))
for cond, lim in (("barrier", 0.05), ("progress-thread", 0.01)):
    v = vals("idle", "telemem", cond)
    if v:
        line("idle", "%s: CPU %.3f%% of the wait" % (cond, 100 * v[0]),
             "< %g%%" % (100 * lim), v[0] < lim, loads("idle", cond))
text = "\n".join(out) + "\n"
open(sys.argv[2], "w").write(text)
print(text)
PY
exit $failed
