#!/bin/bash
# scripts/gasnet-clients.sh - builds a public GASNet-1 client, the OpenSHMEM
# reference implementation over GASNet (openshmem-org/osss-gasnet), and its
# test suite (openshmem-org/tests-uh) twice, unchanged, from source trees the
# caller supplies (nothing is downloaded): once against an installed Telemem
# (conduit telemem) and once against a real GASNet install (conduit smp),
# each configured as the client's INSTALL says for a GASNet install; runs the
# C feature tests at each PE count through the client's launcher (oshrun),
# the Fortran feature tests through the suite's own runner, and the put/get
# performance tests at 2 PEs, alternating the two builds (ABBA), and prints
# tables.
#
#   scripts/gasnet-clients.sh --osss /src/osss-gasnet --tests /src/tests-uh \
#       --prefix /opt/tlm --real /opt/gasnet [--conduit smp] \
#       [--ranks "2 4"] [--rounds 3] [--no-fortran] [--no-tests] \
#       [--no-bench] [--reuse] [--report] [--work DIR] [--timeout S]
#
# The real GASNet needs the PAR thread model (the client's default).  Tests
# are built with -no-pie: the client finds global variables by the section
# addresses of its executable's ELF file, which a PIE does not run at.
# A C test passes as under the suite's runner: its last output line says
# "Passed" (test_shmem_global_exit: exit status 99).  Nothing asserts a time.
# --reuse keeps the builds a run left in --work (e.g. to measure again);
# --report (with --reuse --no-tests) prints the speed tables of the last
# measurement in --work again.
set -u

osss=""
tests=""
prefix=""
real=""
conduit="smp"
ranks="2 4"
rounds=3
fortran=1
tests_on=1
bench=1
reuse=0
report=0
work="${TMPDIR:-/tmp}/gasnet-clients.$$"
timeout=300

while [ $# -gt 0 ]; do
    case "$1" in
    --osss) osss="$2"; shift 2 ;;
    --tests) tests="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --real) real="$2"; shift 2 ;;
    --conduit) conduit="$2"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --no-fortran) fortran=0; shift ;;
    --no-tests) tests_on=0; shift ;;
    --no-bench) bench=0; shift ;;
    --reuse) reuse=1; shift ;;
    --report) report=1; shift ;;
    --work) work="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -u$/{/^set -u$/d;p;}' "$0"; exit 0 ;;
    *) echo "gasnet-clients: unknown argument $1" >&2; exit 2 ;;
    esac
done
die() { echo "gasnet-clients: $*" >&2; exit 2; }
[ -x "$osss/configure" ] && [ -d "$osss/src/comms/gasnet" ] ||
    die "--osss must name an osss-gasnet source tree"
[ -f "$tests/common/testrunner.pl" ] ||
    die "--tests must name a tests-uh source tree"
[ -d "$prefix/include/telemem-conduit" ] ||
    die "--prefix must name a Telemem installation"
[ -d "$real/include/$conduit-conduit" ] ||
    die "--real must name a GASNet installation with $conduit-conduit"
[ -f "$real/include/$conduit-conduit/$conduit-par.mak" ] ||
    die "--real has no $conduit-par.mak (configure GASNet with --enable-par)"
unset LD_LIBRARY_PATH
export TELEMEM_TRANSPORT="${TELEMEM_TRANSPORT:-shm}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
elfdir="$(dirname "$(gcc -print-file-name=libelf.so)")"

# build KIND ROOT CONDUIT: the client and the tests into $work/KIND.
build() {
    local k="$1" root="$2" cdt="$3" d="$work/$1"
    [ "$reuse" = 1 ] && [ -x "$d/shmem/bin/oshrun" ] && return 0
    rm -rf "$d" && mkdir -p "$d"
    cp -r "$osss" "$d/osss" && cp -r "$tests" "$d/tests"
    (cd "$d/osss" && ./configure --prefix="$d/shmem" \
        --with-gasnet-root="$root" --with-gasnet-conduit="$cdt" \
        --with-libelf-libdir="$elfdir" && make && make install) \
        > "$d/build.log" 2>&1 || { echo "$k: client build failed" \
        "($d/build.log)"; return 1; }
    (cd "$d/tests" && export PATH="$d/shmem/bin:$PATH" &&
        make C_feature_tests SHMEM_CFLAGS="-g -O0 -no-pie" &&
        make micro_bench SHMEM_CFLAGS="-g -O0 -no-pie" &&
        if [ "$fortran" = 1 ]; then make F_feature_tests \
            SHMEM_F90FFLAGS="-g -O0 -fcray-pointer -no-pie"; fi) \
        >> "$d/build.log" 2>&1 || echo "$k: tests build failed ($d/build.log)"
}

# verdict KIND N TEST EXPECT: one C feature test at N PEs.
verdict() {
    local d="$work/$1" log out st
    log="$d/c-$3-$2.log"
    [ -x "$d/tests/feature_tests/C/$3" ] || { echo "no-build"; return; }
    (cd "$d/tests/feature_tests/C" && PATH="$d/shmem/bin:$PATH" \
        timeout "$timeout" oshrun -np "$2" "./$3" > "$log" 2>&1)
    st=$?
    case "$4" in
    ExitCode*) [ "$st" = "${4#ExitCode}" ] && echo pass ||
        echo "fail($st)"; return ;;
    esac
    out="$(grep -v '^$' "$log" | tail -1)"
    case "$out" in *Passed*) echo pass ;; *) echo "fail($st)" ;; esac
}

build tlm "$prefix" telemem
build real "$real" "$conduit"

[ "$tests_on" = 1 ] || fortran=0
if [ "$tests_on" = 1 ]; then
echo "## C feature tests (oshrun -np N)"
hdr="| test |"; sep="|---|"
for n in $ranks; do
    hdr="$hdr Telemem $n PEs | $conduit $n PEs |"; sep="$sep---|---|"
done
echo "$hdr"; echo "$sep"
grep -v '^#' "$tests/feature_tests/C/test_parameters.conf" | grep . |
while IFS=, read -r exe _ _ _ _ expect; do
    expect="$(echo "$expect" | tr -d ' ')"
    row="| \`${exe%.x}\` |"
    for n in $ranks; do
        row="$row $(verdict tlm "$n" "$exe" "$expect") |"
        row="$row $(verdict real "$n" "$exe" "$expect") |"
    done
    echo "$row"
done
fi

if [ "$fortran" = 1 ]; then
    echo "## Fortran feature tests (the suite's runner, its PE counts)"
    echo "| directory | Telemem passed | $conduit passed |"
    echo "|---|---|---|"
    for dir in "$tests"/feature_tests/Fortran/*/; do
        dir=$(basename "$dir")
        row="| \`$dir\` |"
        for k in tlm real; do
            (cd "$work/$k/tests/feature_tests/Fortran/$dir" &&
                PATH="$work/$k/shmem/bin:$PATH" make run) \
                > "$work/$k/fortran-$dir.log" 2>&1
            nb='s|^- \([0-9]*\)/[0-9]* tests were not found.*|'
            nb="$nb (\\1 not built)|p"
            row="$row $(grep -Eo '[0-9]+/[0-9]+ Passed' \
                "$work/$k/fortran-$dir.log" | head -1)$(sed -n "$nb" \
                "$work/$k/fortran-$dir.log") |"
            grep -h 'Failed$\|Failed (' "$work/$k/fortran-$dir.log" |
                sed "s/^/$k failed: /" >&2
        done
        echo "$row"
    done
fi

[ "$bench" = 1 ] || exit 0
# bench KIND TEST ROUND: one run at 2 PEs, "size usec" lines kept.
bench_run() {
    local d="$work/$1"
    (cd "$d/tests/performance_tests/micro_benchmarks" &&
        PATH="$d/shmem/bin:$PATH" timeout "$timeout" oshrun -np 2 \
        "./$2_performance.x") 2>&1 |
        awk '$1 ~ /^[0-9]+$/ && NF >= 3 {print $1, $2}' \
        > "$work/bench-$1-$2-$3.txt"
}
echo "## put/get performance tests, 2 PEs, $rounds rounds (ABBA)"
if [ "$report" = 0 ]; then
    echo "load: $(uptime)"
    for r in $(seq 1 "$rounds"); do
        for t in put get; do
            if [ $((r % 2)) = 1 ]; then
                bench_run tlm "$t" "$r"; bench_run real "$t" "$r"
            else
                bench_run real "$t" "$r"; bench_run tlm "$t" "$r"
            fi
        done
    done
    echo "load: $(uptime)"
fi
median() {
    sort -g | awk '{v[NR] = $1}
        END {if (NR % 2) print v[(NR + 1) / 2];
             else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
val() { awk -v s="$2" '$1 == s {print $2}' "$1"; }
for t in put get; do
    echo "| $t: printed size | Telemem us | $conduit us | ratio of medians" \
         "| median of per-round ratios |"
    echo "|---|---|---|---|---|"
    for s in $(awk '{print $1}' "$work/bench-tlm-$t-1.txt"); do
        a=$(for r in $(seq 1 "$rounds"); do
            val "$work/bench-tlm-$t-$r.txt" "$s"; done | median)
        b=$(for r in $(seq 1 "$rounds"); do
            val "$work/bench-real-$t-$r.txt" "$s"; done | median)
        q=$(for r in $(seq 1 "$rounds"); do
            x=$(val "$work/bench-tlm-$t-$r.txt" "$s")
            y=$(val "$work/bench-real-$t-$r.txt" "$s")
            awk -v x="${x:-0}" -v y="${y:-0}" \
                'BEGIN {print (y > 0) ? x / y : 0}'
        done | median)
        awk -v s="$s" -v a="$a" -v b="$b" -v q="$q" 'BEGIN {printf \
            "| %s | %.3f | %.3f | %.2f | %.2f |\n", s, a, b,
            (b > 0) ? a / b : 0, q}'
    done
done
