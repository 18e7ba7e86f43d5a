#!/bin/bash
# scripts/gasnet-suite.sh - builds GASNet-1's own conformance tests (from a
# GASNet source tree the caller supplies; nothing of GASNet's is in this
# tree) against an installed libgasnet-over-Telemem, with the flags of our
# GASNet-style makefile fragments (include/telemem-conduit/telemem-<model>.mak,
# as GASNet's tests/Makefile builds its clients), runs each under
# telemem-run at the given node counts with the arguments GASNet's
# "make run-tests" gives, and prints a table.
#
#   scripts/gasnet-suite.sh --gasnet /path/to/GASNet-1.29.3 --prefix /opt/tlm \
#       [--models "seq par"] [--ranks "2 4"] [--tests "testam testvis"] \
#       [--work DIR] [--timeout S]
#
# A test passes as under run-tests: exit status 0 and no output line with
# "ERROR" or "fatal signal".  testexit is run as GASNet's run-testexit
# does (N = 1..13 SEQ, 1..18 PAR; GASNet skips 5, 9 and 16 on conduits
# without interrupts, but they need none here: telemem-run ends the nodes
# that spin), and more strictly:
# "testexit N" must end with status N, except N = 4 (a node kills itself
# with SIGINT; GASNet's spawner then sends SIGQUIT to the others, whose
# handler exits with 4; telemem-run ends them itself), which must end with
# a non-zero status.
set -u

gasnet=""
prefix=""
models="seq par"
ranks="2 4"
only=""
work="${TMPDIR:-/tmp}/gasnet-suite.$$"
timeout=900 # per test: the timing-heavy tests at 4 nodes need minutes on a loaded machine (docs/gasnet.md)

while [ $# -gt 0 ]; do
    case "$1" in
    --gasnet) gasnet="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --tests) only="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "gasnet-suite: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$gasnet" ] || [ ! -f "$gasnet/tests/test.h" ]; then
    echo "gasnet-suite: --gasnet must name a GASNet source tree" \
         "(with tests/test.h)" >&2
    exit 2
fi
if [ -z "$prefix" ] || [ ! -d "$prefix/include/telemem-conduit" ]; then
    echo "gasnet-suite: --prefix must name a Telemem installation" \
         "(with include/telemem-conduit/)" >&2
    exit 2
fi
src="$gasnet/tests"
run="$prefix/bin/telemem-run"
# The programs find libgasnet by the run path the fragments give them.
unset LD_LIBRARY_PATH
export TELEMEM_TRANSPORT="${TELEMEM_TRANSPORT:-shm}"
mkdir -p "$work"

core="testhello testgasnet testcore1 testcore2 testcore3 testcore4 testcore5
      testam testsmall testlarge testval testmemset testhsl testbarrier
      testbarrierconf testbarrierlate testmisc testalign testlogGP testqueue
      testslice testnbr testenv testrand"
extended="testexit testinternal testtools testvis testvisperf testcoll
          testcollperf testteam testteambarrier testteambcast testbcastperf
          testexchangeperf testgallperf testreduceperf testcxx testtoolscxx"
threaded="testthreads testcontend testlockcontend"

# Arguments as GASNet's tests/Makefile.in TEST_PARAMS gives them.
test_args() {
    case "$1" in
    testcore1) echo "1000" ;;
    testhsl) echo "0" ;;
    testrand) echo "1024" ;;
    testlogGP) echo "1000 0 8 65536" ;;
    testthreads) echo "2" ;;
    testqueue) echo "1 256 262144" ;;
    testvisperf) echo "-maxdata 131072 -maxcontig 512 10" ;;
    testslice) echo "1024000 10 10" ;;
    testcollperf) echo "32768 2 50 0" ;;
    *) echo "" ;;
    esac
}

# The value of one makefile variable of a fragment.
mkvar() {
    printf 'include %s\nprint-%%:\n\t@echo $($*)\n' "$1" |
        make -s --no-print-directory -f - "print-$2"
}

# build MODEL TEST -> 0 when the test compiled and linked
build() {
    local model=$1 t=$2 mak frag cc cpp cf ld ldf libs ext
    local dir="$work/$model"
    mak="$prefix/include/telemem-conduit/telemem-$model.mak"
    frag="$prefix/include/gasnet_tools-$model.mak"
    local log="$dir/$t.build.log" extra=""
    : >"$log"
    case "$t" in
    testtools|testtoolscxx)
        local tm=$model; [ "$model" = parsync ] && tm=par
        frag="$prefix/include/gasnet_tools-$tm.mak"
        cpp=$(mkvar "$frag" GASNETTOOLS_CPPFLAGS)
        libs=$(mkvar "$frag" GASNETTOOLS_LIBS)
        ldf=$(mkvar "$frag" GASNETTOOLS_LDFLAGS)
        if [ "$t" = testtools ]; then
            cc=$(mkvar "$frag" GASNETTOOLS_CC)
            cf=$(mkvar "$frag" GASNETTOOLS_CFLAGS); ext=c
        else
            cc=$(mkvar "$frag" GASNETTOOLS_CXX)
            cf=$(mkvar "$frag" GASNETTOOLS_CXXFLAGS); ext=cc
        fi
        ld=$cc ;;
    testcxx)
        cc=$(mkvar "$mak" GASNET_CXX); ld=$cc
        cpp=$(mkvar "$mak" GASNET_CXXCPPFLAGS)
        cf=$(mkvar "$mak" GASNET_CXXFLAGS); ext=cc
        ldf="$cf $(mkvar "$mak" GASNET_LDFLAGS)"
        libs=$(mkvar "$mak" GASNET_LIBS) ;;
    *)
        cc=$(mkvar "$mak" GASNET_CC); ld=$(mkvar "$mak" GASNET_LD)
        cpp=$(mkvar "$mak" GASNET_CPPFLAGS)
        cf=$(mkvar "$mak" GASNET_CFLAGS); ext=c
        ldf=$(mkvar "$mak" GASNET_LDFLAGS)
        libs=$(mkvar "$mak" GASNET_LIBS) ;;
    esac
    case "$t" in
    testlogGP|testbarrierlate)
        # GASNet builds delay.o without optimisation
        # shellcheck disable=SC2046
        $cc $cpp $(mkvar "$mak" GASNET_MISC_CFLAGS) -O0 -c \
            -o "$dir/delay.o" "$src/delay.c" >>"$log" 2>&1 || return 1
        extra="$dir/delay.o" ;;
    esac
    [ -f "$src/$t.$ext" ] || { echo "no $src/$t.$ext" >>"$log"; return 1; }
    {
        echo "$cc -I$src $cpp $cf -c -o $dir/$t.o $src/$t.$ext"
        # shellcheck disable=SC2086
        # -idirafter: the suite's own other/amxtests/testam.h (testgasnet),
        # found after our headers as in a GASNet build tree
        $cc -I"$src" $cpp $cf -idirafter "$gasnet" -c -o "$dir/$t.o" \
            "$src/$t.$ext" &&
        $ld $ldf -o "$dir/$t" "$dir/$t.o" $extra $libs
    } >>"$log" 2>&1
}

# runone MODEL TEST NODES -> 0 when it passed
runone() {
    local model=$1 t=$2 n=$3 dir="$work/$1" log="$work/$1/$2.n$3.log"
    local args rc
    args=$(test_args "$t")
    if [ "$t" = testexit ]; then
        runexit "$model" "$n" >"$log" 2>&1
        return
    fi
    (
        cd "$dir" || exit 1
        export GASNET_DUMMY="GASNet dummy value"
        if [ "$t" = testtools ] || [ "$t" = testtoolscxx ]; then
            timeout "$timeout" "./$t" $args
        elif [ "$t" = testenv ]; then
            "$run" -n "$n" --timeout "$timeout" "./$t" \
                GASNet is "Global Address Space Networking"
        else
            # shellcheck disable=SC2086
            "$run" -n "$n" --timeout "$timeout" "./$t" $args
        fi
    ) >"$log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { echo "exit status $rc" >>"$log"; return 1; }
    if grep -E 'ERROR|fatal signal' "$log" |
       grep -vqE 'Retrying allocation|GASNET_FREEZE_ON_ERROR'; then
        return 1
    fi
    return 0
}

runexit() {
    local model=$1 n=$2 max=13 i rc fail=0
    [ "$model" = par ] && max=18
    for i in $(seq 1 $max); do
        (cd "$work/$model" && "$run" -n "$n" --timeout 60 ./testexit "$i")
        rc=$?
        echo "testexit $i: status $rc"
        if [ "$i" -eq 4 ]; then
            [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail=1
        else
            [ $rc -eq "$i" ] || fail=1
        fi
    done
    return $fail
}

tests_for() {
    if [ -n "$only" ]; then echo $only; return; fi
    echo $core $extended
    [ "$1" = seq ] || echo $threaded
}

declare -A res
all=""
for model in $models; do
    mkdir -p "$work/$model"
    for t in $(tests_for "$model"); do
        case " $all " in *" $t "*) ;; *) all="$all $t" ;; esac
        # GASNet builds the threaded tests in PAR only (#error otherwise)
        if [ "$model" = seq ] &&
           case " $threaded " in *" $t "*) true ;; *) false ;; esac; then
            continue
        fi
        if build "$model" "$t"; then
            res[$model,$t,build]=yes
            for n in $ranks; do
                if runone "$model" "$t" "$n"; then
                    res[$model,$t,$n]=pass
                else
                    res[$model,$t,$n]=FAIL
                fi
                echo "$model $t n$n: ${res[$model,$t,$n]}" >&2
            done
        else
            res[$model,$t,build]=NO
            echo "$model $t: does not build ($work/$model/$t.build.log)" >&2
        fi
    done
done

# The table: one row per test, per model: compiles, then each node count.
printf '%-18s' test
for model in $models; do
    printf ' | %-8s' "$model-cc"
    for n in $ranks; do printf ' | %-7s' "$model-n$n"; done
done
echo
npass=0; nfail=0
for t in $all; do
    printf '%-18s' "$t"
    for model in $models; do
        printf ' | %-8s' "${res[$model,$t,build]:--}"
        for n in $ranks; do
            v=${res[$model,$t,$n]:--}
            printf ' | %-7s' "$v"
            case "$v" in pass) npass=$((npass + 1)) ;; FAIL) nfail=$((nfail + 1)) ;; esac
        done
        [ "${res[$model,$t,build]:-}" = NO ] && nfail=$((nfail + 1))
    done
    echo
done
echo "logs: $work"
echo "$npass passed, $nfail failed"
[ $nfail -eq 0 ]
