#!/usr/bin/env bash
# caf-opencoarrays.sh - runs OpenCoarrays' own tests (src/tests/unit and
# src/tests/integration, built unchanged with gfortran -fcoarray=lib)
# against libcaf_telemem (telemem-run -n N) and against Debian's
# OpenCoarrays on Open MPI (libcaf_openmpi, mpirun -np N), at each image
# count, and prints the side-by-side table of docs/caf.md.
# A run passes when it exits 0 and prints "Test passed." (OpenCoarrays'
# own criterion), within the time limit.
# Usage: scripts/caf-opencoarrays.sh --oc-src DIR [--build DIR]
#          [--images "1 2 3 4"] [--only REGEX] [--timeout S] [--out DIR]
#          [--oc-results FILE]
#   --oc-src      an OpenCoarrays source tree (its src/tests is used)
#   --build       Telemem build directory (default build)
#   --out         where programs, logs and results.tsv go (default
#                 /tmp/caf-oc)
#   --oc-results  take OpenCoarrays' column from an earlier results.tsv
#                 instead of running it again
set -uo pipefail
cd "$(dirname "$0")/.."

oc_src="" build=build images="1 2 3 4" only="" tmo=60 out=/tmp/caf-oc
oc_results=""
while [ $# -gt 0 ]; do
    case "$1" in
        --oc-src) oc_src=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --images) images=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --timeout) tmo=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --oc-results) oc_results=$2; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "caf-opencoarrays.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -d "$oc_src/src/tests" ] || { echo "caf-opencoarrays.sh: --oc-src DIR with src/tests needed" >&2; exit 2; }
build=$(cd "$build" && pwd)
lib="$build/compat/caf"
run="$build/tools/telemem-run"
occaf=/usr/lib/x86_64-linux-gnu/open-coarrays/openmpi/bin/caf
have_oc=1
[ -x "$occaf" ] && command -v mpirun >/dev/null || have_oc=0
mkdir -p "$out"
t="$oc_src/src/tests"

# name|image minimum (informational)|sources (relative to src/tests)
# Single-file programs of unit/ and integration/; the PDE solvers are
# several files each.
list() {
    find "$t/unit" "$t/integration/coarrayHelloWorld" \
         "$t/integration/events" "$t/integration/dist_transpose" \
         -name '*.[fF]90' | sort | while read -r f; do
        echo "$(basename "${f%.*}")|${f#"$t"/}"
    done
    echo "co_heat|integration/pde_solvers/coarrayHeatSimplified/local_field.f90 integration/pde_solvers/coarrayHeatSimplified/global_field.f90 integration/pde_solvers/coarrayHeatSimplified/main.f90"
    local b=integration/pde_solvers/coarrayBurgers
    echo "coarray_burgers_pde|$b/library/object_interface.F90 $b/library/ForTrilinos_assertion_utility.F90 $b/library/co_object_interface.F90 $b/local_field.F90 $b/global_field.F90 $b/main.F90"
}

# build NAME KIND SOURCES...: KIND telemem or oc; prints "ok" or "build"
build_one() {
    local name=$1 kind=$2; shift 2
    local dir="$out/$kind/$name" srcs=()
    mkdir -p "$dir"
    for s in "$@"; do srcs+=("$t/$s"); done
    # The Burgers solver includes its compiler's capability file as
    # OpenCoarrays' CMake copies it.
    cp "$t/integration/pde_solvers/coarrayBurgers/include-files/gfortran_capabilities.txt" \
        "$dir/compiler_capabilities.txt" 2>/dev/null
    srcs+=(-I"$dir")
    if [ "$kind" = telemem ]; then
        (cd "$dir" && nice -n 10 gfortran -fcoarray=lib -O1 "${srcs[@]}" \
            -o prog -L"$lib" -lcaf_telemem -Wl,-rpath,"$lib" \
            -Wl,-rpath,"$build/src") >"$dir/build.log" 2>&1
    else
        (cd "$dir" && nice -n 10 "$occaf" -O1 "${srcs[@]}" -o prog) \
            >"$dir/build.log" 2>&1
    fi && echo ok || echo build
}

# run NAME KIND N: prints pass, fail or timeout
run_one() {
    local name=$1 kind=$2 n=$3 dir="$out/$2/$1" rc
    local log="$dir/run-n$n.log"
    if [ "$kind" = telemem ]; then
        (cd "$dir" && timeout -k 5 "$tmo" nice -n 10 "$run" -n "$n" ./prog) \
            >"$log" 2>&1
    else
        (cd "$dir" && timeout -k 5 "$tmo" nice -n 10 mpirun \
            --oversubscribe --allow-run-as-root -np "$n" ./prog) \
            >"$log" 2>&1 </dev/null
    fi
    rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then echo timeout
    elif [ $rc = 0 ] && grep -q "Test passed." "$log"; then echo pass
    else echo fail; fi
}

res="$out/results.tsv"
: >"$res"
list | while IFS='|' read -r name srcs; do
    [ -n "$only" ] && ! [[ "$name" =~ $only ]] && continue
    # shellcheck disable=SC2086
    bt=$(build_one "$name" telemem $srcs)
    bo=skip
    # shellcheck disable=SC2086
    [ "$have_oc" = 1 ] && [ -z "$oc_results" ] && bo=$(build_one "$name" oc $srcs)
    for n in $images; do
        rt=$bt ro=$bo
        [ "$bt" = ok ] && rt=$(run_one "$name" telemem "$n")
        [ "$bo" = ok ] && ro=$(run_one "$name" oc "$n")
        if [ -n "$oc_results" ]; then
            ro=$(awk -F'\t' -v t="$name" -v n="$n" \
                 '$1 == t && $2 == n {print $3}' "$oc_results")
            ro=${ro:-skip}
        fi
        printf '%s\t%s\t%s\t%s\n' "$name" "$n" "$ro" "$rt" | tee -a "$res"
    done
done
python3 - "$res" "$images" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
ns = sys.argv[2].split()
tests = []
cell = {}
for name, n, oc, tm in rows:
    if name not in tests:
        tests.append(name)
    cell[(name, n)] = (oc, tm)
print("| test | " + " | ".join(f"n={n} OC / Telemem" for n in ns) + " |")
print("|---|" + "---|" * len(ns))
ok = worse = 0
for name in tests:
    cols = []
    for n in ns:
        oc, tm = cell.get((name, n), ("-", "-"))
        cols.append(f"{oc} / {tm}")
        if oc == "pass":
            if tm == "pass":
                ok += 1
            else:
                worse += 1
    print(f"| {name} | " + " | ".join(cols) + " |")
print()
print(f"Where OpenCoarrays passes: Telemem passes {ok}, does not pass {worse}.")
PY
