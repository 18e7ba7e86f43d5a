#!/bin/bash
# scripts/bench-gasnet.sh - GASNet-1's own performance tests (testsmall,
# testlarge, testam, from a GASNet source tree the caller supplies), and
# our benchmarks written against gasnet.h alone (medium: AM Mediums,
# rma: puts and gets, bar: barriers; bench/gasnet/gasnet_<name>.c, no
# GASNet sources needed), built
# by the makefile fragments of two installs, libgasnet over Telemem
# (telemem-<model>.mak) and a real GASNet's smp-conduit (smp-<model>.mak),
# and run alternately in one run at 2 nodes (--nodes), the load (uptime) taken
# before each run; then a table of the median times per size and their
# ratio (Telemem / GASNet), by scripts/bench_gasnet_table.py.
#
#   scripts/bench-gasnet.sh --gasnet /path/to/GASNet-1.29.3 \
#       --prefix /opt/tlm --real /opt/gasnet [--runs 3] [--model seq] \
#       [--nodes 2] \
#       [--tests "testsmall testlarge testam medium rma bar"] [--work DIR]
#
# --gasnet is needed for GASNet's tests only.  The real GASNet may be
# GASNet-EX (2020 and later), whose gasnet.h still offers the GASNet-1
# interface these programs use.
#
# Telemem's programs run under PREFIX/bin/telemem-run -n N (shm
# transport), GASNet's as smp-conduit starts itself (GASNET_PSHM_NODES=N).
# Rounds alternate which goes first (ABBA).  Nothing here asserts a time.
set -u

gasnet=""
prefix=""
real=""
runs=3
nodes=2
model=seq
tests="testsmall testlarge testam"
work="${TMPDIR:-/tmp}/bench-gasnet.$$"

while [ $# -gt 0 ]; do
    case "$1" in
    --gasnet) gasnet="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --real) real="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --tests) tests="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "bench-gasnet: unknown argument $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
for t in $tests; do
    case "$t" in
    medium|rma|bar) ;;
    testsmall|testlarge|testam)
        if [ -z "$gasnet" ] || [ ! -f "$gasnet/tests/test.h" ]; then
            echo "bench-gasnet: $t needs --gasnet, a GASNet source tree" >&2
            exit 2
        fi ;;
    *) echo "bench-gasnet: unknown test $t" >&2; exit 2 ;;
    esac
done
tmak="$prefix/include/telemem-conduit/telemem-$model.mak"
rmak="$real/include/smp-conduit/smp-$model.mak"
[ -r "$tmak" ] || { echo "bench-gasnet: no $tmak" >&2; exit 2; }
[ -r "$rmak" ] || { echo "bench-gasnet: no $rmak" >&2; exit 2; }
src="$gasnet/tests"
unset LD_LIBRARY_PATH
export TELEMEM_TRANSPORT="${TELEMEM_TRANSPORT:-shm}"
mkdir -p "$work/telemem" "$work/gasnet"

# Arguments: iterations and largest size (testsmall's int microsecond
# totals need many iterations for sub-microsecond operations).
test_args() {
    case "$1" in
    testsmall) echo "200000 2048" ;;
    testlarge) echo "200 2097152" ;;
    testam) echo "2000 1048576" ;;
    medium) echo "5000" ;;
    rma) echo "200000" ;;
    bar) echo "20000" ;;
    esac
}

mkvar() {
    printf 'include %s\nprint-%%:\n\t@echo $($*)\n' "$1" |
        make -s --no-print-directory -f - "print-$2"
}

# build MAK DIR TEST
build() {
    local mak=$1 dir=$2 t=$3 cc ld cpp cf ldf libs
    cc=$(mkvar "$mak" GASNET_CC); ld=$(mkvar "$mak" GASNET_LD)
    cpp=$(mkvar "$mak" GASNET_CPPFLAGS); cf=$(mkvar "$mak" GASNET_CFLAGS)
    ldf=$(mkvar "$mak" GASNET_LDFLAGS); libs=$(mkvar "$mak" GASNET_LIBS)
    local from="$src/$t.c" inc=(-I"$src" -idirafter "$gasnet")
    case "$t" in
    medium|rma|bar) from="$here/../bench/gasnet/gasnet_$t.c"; inc=() ;;
    esac
    # shellcheck disable=SC2086
    $cc ${inc[@]+"${inc[@]}"} $cpp $cf -c -o "$dir/$t.o" \
        "$from" >"$dir/$t.build.log" 2>&1 &&
    $ld $ldf -o "$dir/$t" "$dir/$t.o" $libs >>"$dir/$t.build.log" 2>&1
}

for t in $tests; do
    build "$tmak" "$work/telemem" "$t" ||
        { echo "bench-gasnet: $t (telemem) did not build:" \
               "$work/telemem/$t.build.log" >&2; exit 1; }
    build "$rmak" "$work/gasnet" "$t" ||
        { echo "bench-gasnet: $t (gasnet) did not build:" \
               "$work/gasnet/$t.build.log" >&2; exit 1; }
done

# runone IMPL TEST ROUND: the output in WORK/IMPL/TEST.ROUND.out, its
# first line the load average before the run
runone() {
    local impl=$1 t=$2 r=$3 out="$work/$1/$2.$3.out" args
    args=$(test_args "$t")
    (
        echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
        cd "$work/$impl" || exit 1
        # shellcheck disable=SC2086
        if [ "$impl" = telemem ]; then
            "$prefix/bin/telemem-run" -n "$nodes" --timeout 600 "./$t" $args
        else
            GASNET_PSHM_NODES=$nodes timeout 600 "./$t" $args
        fi
        echo "status $?"
    ) >"$out" 2>&1
}

echo "bench-gasnet: $(date -u '+%F %T') UTC, $runs rounds, work $work"
for r in $(seq 1 "$runs"); do
    for t in $tests; do
        if [ $((r % 2)) -eq 1 ]; then order="telemem gasnet"
        else order="gasnet telemem"; fi
        for impl in $order; do
            runone "$impl" "$t" "$r"
            echo "round $r $t $impl: $(head -1 "$work/$impl/$t.$r.out")," \
                 "$(tail -1 "$work/$impl/$t.$r.out")"
        done
    done
done
python3 "$here/bench_gasnet_table.py" "$work" $tests
