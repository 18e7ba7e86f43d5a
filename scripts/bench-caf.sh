#!/usr/bin/env bash
# bench-caf.sh - libcaf_telemem against Debian's OpenCoarrays on Open MPI:
# bench/caf/caf_bench.f90 (put and get of 8 B to 8 MiB, contiguous and
# stride 2, between two images) built once per runtime, run alternately
# A B A B (the better of the two runs per row), and three of OpenCoarrays'
# applications (coarray_distributed_transpose, the simplified heat and the
# Burgers PDE solvers), each run 3 times per runtime at 2 and 4 images
# (median wall time), and bench/caf/caf_coll_bench.f90 (image control and
# collectives) at each of --coll-images, the runtimes alternating in
# --coll-rounds rounds (median).  Prints markdown tables with the time
# ratio Telemem / OpenCoarrays (below 1: Telemem is faster).
# Usage: scripts/bench-caf.sh [--build DIR] [--oc-src DIR] [--out DIR]
#          [--parts LIST] [--coll-images "2 4 16"] [--coll-rounds 3]
#   --oc-src  an OpenCoarrays source tree (src/tests) for the applications;
#             without it the applications are left out
#   --parts   a comma list of bench, coll, apps (default all three)
set -uo pipefail
cd "$(dirname "$0")/.."
src=$PWD build=build oc_src="" out=/tmp/caf-bench parts=bench,coll,apps
coll_images="2 4 16" coll_rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
        --build) build=$2; shift 2 ;;
        --oc-src) oc_src=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --parts) parts=$2; shift 2 ;;
        --coll-images) coll_images=$2; shift 2 ;;
        --coll-rounds) coll_rounds=$2; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-caf.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
build=$(cd "$build" && pwd)
lib=$build/compat/caf run=$build/tools/telemem-run
occaf=/usr/lib/x86_64-linux-gnu/open-coarrays/openmpi/bin/caf
[ -x "$occaf" ] || { echo "bench-caf.sh: OpenCoarrays missing (scripts/install-deps.sh bench)" >&2; exit 1; }
mkdir -p "$out/telemem" "$out/oc"
mpirun=(mpirun --oversubscribe --allow-run-as-root)

compile() {  # compile KIND OUT SOURCES... [-- FLAGS]
    local kind=$1 o=$2; shift 2
    if [ "$kind" = telemem ]; then
        gfortran -O2 -fcoarray=lib "$@" -o "$o" -L"$lib" -lcaf_telemem \
            -Wl,-rpath,"$lib" -Wl,-rpath,"$build/src"
    else
        "$occaf" -O2 "$@" -o "$o"
    fi
}
launch() {   # launch KIND N PROGRAM
    if [ "$1" = telemem ]; then "$run" -n "$2" --timeout 600 "$3"
    else "${mpirun[@]}" -np "$2" "$3" </dev/null; fi
}

part() { [[ ",$parts," == *",$1,"* ]]; }

if part bench; then
echo "== caf_bench (2 images)"
for k in telemem oc; do
    compile $k "$out/$k/caf_bench" "$src/bench/caf/caf_bench.f90" || exit 1
done
for r in 1 2; do
    for k in telemem oc; do
        (cd "$out/$k" && launch $k 2 ./caf_bench) >"$out/$k/bench-$r.csv" 2>"$out/$k/bench-$r.err"
    done
done
python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
def best(kind):
    rows = {}
    for r in (1, 2):
        for row in csv.DictReader(open(f"{out}/{kind}/bench-{r}.csv")):
            key = (row["op"], int(row["bytes"]))
            t = float(row["usec_per_op"])
            rows[key] = min(t, rows.get(key, t))
    return rows
tm, oc = best("telemem"), best("oc")
print("| op | bytes | Telemem µs | OpenCoarrays µs | ratio |")
print("|---|---:|---:|---:|---:|")
for key in tm:
    if key in oc:
        print(f"| {key[0]} | {key[1]} | {tm[key]:.3f} | {oc[key]:.3f} | {tm[key] / oc[key]:.2f} |")
PY
fi

if part coll; then
echo "== caf_coll_bench (images: $coll_images; $coll_rounds rounds)"
for k in telemem oc; do
    compile $k "$out/$k/caf_coll_bench" "$src/bench/caf/caf_coll_bench.f90" || exit 1
done
rm -f "$out"/*/coll-*.csv
for r in $(seq "$coll_rounds"); do
    for n in $coll_images; do
        for k in telemem oc; do
            (cd "$out/$k" && launch $k "$n" ./caf_coll_bench) \
                >"$out/$k/coll-n$n-r$r.csv" 2>"$out/$k/coll-n$n-r$r.err"
        done
    done
done
python3 - "$out" <<'PY'
import csv, glob, re, statistics, sys
out = sys.argv[1]
t = {}
for f in glob.glob(f"{out}/*/coll-n*-r*.csv"):
    kind = f.split("/")[-2]
    n = int(re.search(r"coll-n(\d+)-", f).group(1))
    for row in csv.DictReader(open(f)):
        t.setdefault((row["op"], n, kind), []).append(float(row["usec_per_op"]))
ops = list(dict.fromkeys(k[0] for k in sorted(t, key=lambda k: k[1])))
ns = sorted({k[1] for k in t})
print("µs per call, Telemem / OpenCoarrays (ratio), median over the rounds")
print("| op | " + " | ".join(f"{n} images" for n in ns) + " |")
print("|---|" + "---:|" * len(ns))
for op in ops:
    cells = []
    for n in ns:
        a, b = t.get((op, n, "telemem")), t.get((op, n, "oc"))
        if a and b:
            a, b = statistics.median(a), statistics.median(b)
            cells.append(f"{a:.4g} / {b:.4g} ({a / b:.2f})")
        else:
            cells.append("failed")
    print(f"| {op} | " + " | ".join(cells) + " |")
PY
fi


part apps && [ -n "$oc_src" ] || exit 0
t=$oc_src/src/tests/integration
b=$t/pde_solvers/coarrayBurgers
mkdir -p "$out/burgers-inc"
cp "$b/include-files/gfortran_capabilities.txt" "$out/burgers-inc/compiler_capabilities.txt"
echo "== applications"
for k in telemem oc; do
    (cd "$out/$k" &&
     compile $k transpose "$t/dist_transpose/coarray_distributed_transpose.F90" &&
     compile $k heat "$t/pde_solvers/coarrayHeatSimplified/local_field.f90" \
         "$t/pde_solvers/coarrayHeatSimplified/global_field.f90" \
         "$t/pde_solvers/coarrayHeatSimplified/main.f90" &&
     compile $k burgers -I"$out/burgers-inc" \
         "$b/library/object_interface.F90" \
         "$b/library/ForTrilinos_assertion_utility.F90" \
         "$b/library/co_object_interface.F90" \
         "$b/local_field.F90" "$b/global_field.F90" "$b/main.F90") \
        >"$out/$k/apps-build.log" 2>&1 || { echo "build failed ($k): $out/$k/apps-build.log"; exit 1; }
done
echo "| application | images | Telemem s | OpenCoarrays s | ratio |"
echo "|---|---:|---:|---:|---:|"
for app in transpose heat burgers; do
    for n in 2 4; do
        declare -A med
        for k in telemem oc; do
            ts=()
            for r in 1 2 3; do
                s=$(date +%s.%N)
                (cd "$out/$k" && launch $k $n ./$app) >"$out/$k/$app-n$n-$r.log" 2>&1
                e=$(date +%s.%N)
                ts+=("$(echo "$e - $s" | bc)")
            done
            med[$k]=$(printf '%s\n' "${ts[@]}" | sort -n | sed -n 2p)
        done
        echo "| $app | $n | ${med[telemem]} | ${med[oc]} | $(echo "scale=2; ${med[telemem]} / ${med[oc]}" | bc) |"
    done
done
