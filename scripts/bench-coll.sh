#!/usr/bin/env bash
# bench-coll.sh - Telemem's collectives against Open MPI's (docs/coll.md):
# barrier, broadcast (8 B, 64 KiB, 1 MiB), allreduce (1, 1k, 1M doubles)
# and allgather (8 B, 16 KiB per rank), start-up time and peak RSS per
# rank, for 2..256 ranks on this node (oversubscribed: telemem-run with
# the default waits, mpirun --oversubscribe) and, with --multihost, for
# 2x2..2x8 ranks over two network namespaces standing for two hosts
# (Telemem over ofi tcp and over ucx, Open MPI over its TCP BTL), where it
# also counts the network messages of a 2-host barrier.  Each rank count
# runs Telemem and Open MPI in alternating order within every round;
# prints uptime with each part and writes results.csv, env.txt and
# summary.md (the medians, their ratio and the load).
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/bench-coll.sh [options]

Options:
  --build DIR     release build to measure (default: build-release)
  --out DIR       results directory (default: results/coll)
  --ranks LIST    rank counts on this node (default: 2,4,8,16,32,64,128,256)
  --rounds N      alternating rounds (default: 3)
  --budget S      seconds per collective and size (default: 0.2)
  --base DIR      a second Telemem build (the one before a change) measured
                  as telemem-base in the same rotation (before/after)
  --multihost     also the two-namespace runs (needs root)
  --hosts LIST    ranks per host of those (default: 2,4,8)
  --only-multihost  only those
  --quick         --rounds 1, --budget 0.02, ranks 2,8 (a check that
                  everything works)
  -h, --help      this text

Exit status: 0 done (targets met or not: see summary.md), 1 a run failed,
2 bad usage or missing programs.  Figures need a quiet machine: compare
within one run; the load of each run is kept in results.csv.
EOF
}

build=build-release
out=results/coll
ranks=2,4,8,16,32,64,128,256
rounds=3
budget=0.2
multihost=0
single=1
base=
hosts=2,4,8
die() { echo "bench-coll.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --build) [ $# -ge 2 ] || die "--build needs a value"; build=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2 ;;
    --ranks) [ $# -ge 2 ] || die "--ranks needs a value"; ranks=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; rounds=$2; shift 2 ;;
    --budget) [ $# -ge 2 ] || die "--budget needs a value"; budget=$2; shift 2 ;;
    --base) [ $# -ge 2 ] || die "--base needs a value"; base=$2; shift 2 ;;
    --multihost) multihost=1; shift ;;
    --hosts) [ $# -ge 2 ] || die "--hosts needs a value"; hosts=$2; shift 2 ;;
    --only-multihost) multihost=1; single=0; shift ;;
    --quick) rounds=1; budget=0.02; ranks=2,8; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (--help)" ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive number"
run=$build/tools/telemem-run
tc=$build/bench/coll/telemem-coll
mc=$build/bench/coll/mpi-coll
for f in "$run" "$tc" "$mc"; do
    [ -x "$f" ] || die "$f missing (meson setup $build -Dbuildtype=release && ninja -C $build)"
done
if [ -n "$base" ]; then
    tcb=$base/bench/coll/telemem-coll runb=$base/tools/telemem-run
    for f in "$runb" "$tcb"; do [ -x "$f" ] || die "$f missing"; done
fi
command -v mpirun >/dev/null || die "mpirun missing"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out/raw"
csv=$out/results.csv
echo "part,round,impl,ranks,op,bytes,usec,usec_max,load1" > "$csv"
failed=0

load1() { cut -d' ' -f1 /proc/loadavg; }
say() { echo "== $* ($(uptime | sed 's/.*load/load/'))"; }
fail() { echo "bench-coll.sh: $* failed (see $out/raw)" >&2; failed=1; }
rotate() { # r items...: the list rotated by r
    local r=$1; shift
    local a=("$@") n=$# i
    for ((i = 0; i < n; i++)); do echo "${a[$(((i + r) % n))]}"; done
}

{
    echo "date: $(date -u +%FT%TZ)"
    echo "host: $(uname -n) $(uname -r), $(nproc) CPUs"
    echo "git: $(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "build: $build  budget: $budget s  rounds: $rounds"
    [ -z "$base" ] || echo "base: $base (measured as telemem-base)"
    echo "open mpi: $(mpirun --version 2>&1 | head -1)"
    echo "uptime at start: $(uptime)"
} > "$out/env.txt"

# The CSV lines of one run's output (raw file $1) into results.csv as part
# $2, round $3, implementation $4; its peak RSS line as "op" $5.
collect() {
    local f=$1 part=$2 r=$3 impl=$4 rss=${5:-rss_kib} l
    l=$(load1)
    awk -F, -v part="$part" -v r="$r" -v l="$l" -v rss="$rss" -v impl="$impl" '
        $1 == "rss" { print part "," r "," impl "," $3 "," rss ",0," $4 "," $5 "," l; next }
        NF == 7 && $1 != "impl" { print part "," r "," impl "," $2 "," $3 "," $4 "," $6 "," $7 "," l }
    ' "$f" >> "$csv"
}

# Wall time of a job that initializes, meets once and finalizes.
startup_one() { # part round impl ranks cmd...
    local part=$1 r=$2 impl=$3 n=$4; shift 4
    local f=$out/raw/$part-startup-$impl-n$n-r$r.txt t0 t1
    t0=$(date +%s.%N)
    if timeout 600 "$@" > "$f" 2>&1; then
        t1=$(date +%s.%N)
        collect "$f" "$part" "$r" "$impl" rss_startup_kib
        echo "$part,$r,$impl,$n,startup_s,0,$(echo "$t1 - $t0" | bc),0,$(load1)" >> "$csv"
    else fail "$impl start-up, $n ranks (round $r)"; fi
}

coll_one() { # part round impl ranks cmd...
    local part=$1 r=$2 impl=$3 n=$4; shift 4
    local f=$out/raw/$part-$impl-n$n-r$r.txt
    if timeout 3600 "$@" > "$f" 2>&1; then
        collect "$f" "$part" "$r" "$impl"
    else fail "$impl collectives, $n ranks (round $r)"; fi
}

# ---- one node ----------------------------------------------------------------
if [ "$single" = 1 ]; then
    for ((r = 1; r <= rounds; r++)); do
        for n in ${ranks//,/ }; do
            say "node round $r, $n ranks"
            # Ranks that fit on the CPUs are bound to one each, as mpirun
            # binds them (telemem-run's default binds only to CPUs it
            # finds idle, which a loaded machine has none of).
            bind=()
            [ "$n" -le "$(nproc)" ] && bind=(--bind core)
            for i in $(rotate "$((r + n))" telemem mpi ${base:+telemem-base}); do
                if [ "$i" = telemem ]; then
                    startup_one node "$r" telemem "$n" "$run" ${bind[@]+"${bind[@]}"} -n "$n" "$tc" --startup
                    coll_one node "$r" telemem "$n" "$run" ${bind[@]+"${bind[@]}"} -n "$n" "$tc" --budget "$budget"
                elif [ "$i" = telemem-base ]; then
                    startup_one node "$r" "$i" "$n" "$runb" ${bind[@]+"${bind[@]}"} -n "$n" "$tcb" --startup
                    coll_one node "$r" "$i" "$n" "$runb" ${bind[@]+"${bind[@]}"} -n "$n" "$tcb" --budget "$budget"
                else
                    startup_one node "$r" mpi "$n" mpirun --oversubscribe -n "$n" "$mc" --startup
                    coll_one node "$r" mpi "$n" mpirun --oversubscribe -n "$n" "$mc" --budget "$budget"
                fi
            done
        done
    done
fi

# ---- two hosts (network namespaces) ------------------------------------------
if [ "$multihost" = 1 ]; then
    [ -f "$(dirname "$0")/bench-coll-netns.sh" ] || die "scripts/bench-coll-netns.sh missing"
    . "$(dirname "$0")/bench-coll-netns.sh"
    multihost_runs
fi

echo "uptime at end: $(uptime)" >> "$out/env.txt"

# ---- summary -----------------------------------------------------------------
python3 - "$csv" "$out/summary.md" <<'PY'
import csv, statistics, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
ORDER = ["startup_s", "rss_startup_kib", "rss_kib", "net_msgs", "barrier",
         "bcast", "allreduce", "allgather"]
vals = defaultdict(list)
loads = defaultdict(list)
for r in rows:
    vals[(r["part"], r["impl"], int(r["ranks"]), r["op"], int(r["bytes"]))].append(float(r["usec"]))
    loads[(r["part"], int(r["ranks"]))].append(float(r["load1"]))
med = lambda v: statistics.median(v) if v else None
fmt = lambda x: "-" if x is None else ("%.3f" % x if x < 10 else "%.1f" % x if x < 1000 else "%.0f" % x)
out = ["Medians over the rounds: usec per call (mean over the ranks, OSU "
       "style); startup_s: seconds of a whole job that initializes, meets "
       "once and finalizes; rss: KiB, the largest rank's peak; net_msgs: "
       "network packets per barrier.  ratio = Telemem / Open MPI "
       "(bold above 1)."]
for part in sorted({k[0] for k in vals}):
    impls = sorted({i for (p, i, n, op, b) in vals if p == part and i != "mpi"})
    keys = sorted({(n, op, b) for (p, i, n, op, b) in vals if p == part},
                  key=lambda k: (k[0], ORDER.index(k[1]) if k[1] in ORDER else 9, k[2]))
    out += ["", "### " + part, "",
            "| ranks | collective | bytes | " + " | ".join(impls) +
            " | Open MPI | " + " | ".join("ratio " + i for i in impls) + " | load |",
            "|---:|---|---:|" + "---:|" * (2 * len(impls) + 1) + "---|"]
    for (n, op, b) in keys:
        m = med(vals.get((part, "mpi", n, op, b), []))
        t = [med(vals.get((part, i, n, op, b), [])) for i in impls]
        q = [None if x is None or not m else x / m for x in t]
        l = loads[(part, n)]
        out.append("| %d | %s | %d | %s | %s | %s | %.1f-%.1f |" % (
            n, op, b, " | ".join(fmt(x) for x in t), fmt(m),
            " | ".join("-" if x is None else ("%.2f" % x if x <= 1.0 else "**%.2f**" % x) for x in q),
            min(l), max(l)))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
exit $failed
