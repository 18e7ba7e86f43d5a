# launcher_check.sh - shell-level checks of telemem-run: exit statuses,
# killing, timeouts, signals, cleanup, usage.  sh launcher_check.sh
# LAUNCHER RANKPROG CASE
L=$1
R=$2
CASE=$3
T=$(mktemp -d "${TMPDIR:-/tmp}/tlm-launcher.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL ($CASE): $*" >&2
    if [ -s "$T/err" ]; then
        echo "--- launcher stderr:" >&2
        cat "$T/err" >&2
    fi
    exit 1
}

# run EXPECTED_STATUS args...: run the launcher, output in $T/out, $T/err
run() {
    want=$1
    shift
    t0=$(date +%s)
    "$L" "$@" >"$T/out" 2>"$T/err" </dev/null
    got=$?
    elapsed=$(($(date +%s) - t0))
    [ "$got" -eq "$want" ] || fail "telemem-run $* exited $got, expected $want"
}

has() { # has FILE TEXT
    grep -F -- "$2" "$1" >/dev/null || fail "$1 lacks '$2'"
}

quick() { # quick SECONDS
    [ "$elapsed" -le "$1" ] || fail "took $elapsed s, expected <= $1 s"
}

# no process whose pid is in one of the given files is alive
none_alive() {
    for f in "$@"; do
        [ -f "$f" ] || continue
        p=$(cat "$f")
        if kill -0 "$p" 2>/dev/null; then
            state=$(sed -n 's/^State:[[:space:]]*//p' "/proc/$p/status" \
                    2>/dev/null)
            case $state in
            Z*) ;; # a zombie of some other parent: dead
            *) kill -9 "$p" 2>/dev/null
               fail "pid $p ($f) outlived the launcher ($state)" ;;
            esac
        fi
    done
}

case $CASE in
bind)
    # By default ranks are pinned one per CPU when they all fit on CPUs
    # that were idle at start (-v says whether), else they keep the whole
    # set; --bind core pins rank r to the r-th CPU of the launcher's set
    # whatever the load; more ranks than CPUs, or --bind none: whole set.
    all=$(grep Cpus_allowed_list /proc/self/status | cut -f2)
    ncpu=$(getconf _NPROCESSORS_ONLN)
    show='echo "$TELEMEM_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"'
    run 0 -v -n 1 sh -c "$show"
    single=$(grep '^0 ' "$T/out" | cut -d' ' -f2)
    if grep -q "bound one per CPU" "$T/err"; then
        case $single in *-*|*,*) [ "$all" = "$single" ] && [ "$ncpu" -gt 1 ] && fail "rank 0 reported bound, not pinned: $single";; esac
    else
        has "$T/err" "ranks not bound"
        [ "$single" = "$all" ] || fail "rank 0 pinned ($single) but reported not bound"
    fi
    run 0 --bind core -n 1 sh -c "$show"
    single=$(cut -d' ' -f2 "$T/out")
    case $single in *-*|*,*) [ "$all" = "$single" ] && [ "$ncpu" -gt 1 ] && fail "--bind core: rank 0 not pinned: $single";; esac
    run 0 --bind none -n 1 sh -c "$show"
    has "$T/out" "0 $all"
    run 0 -n $((ncpu + 1)) sh -c "$show"
    [ "$(grep -c " $all\$" "$T/out")" -eq $((ncpu + 1)) ] || fail "oversubscribed ranks were pinned"
    run 2 --bind sideways -n 1 true
    has "$T/err" "--bind"
    ;;
exit-status)
    run 3 -n 4 "$R" exit 2 3
    has "$T/err" "telemem-run: rank 2 (pid "
    has "$T/err" ") exited with status 3"
    quick 10
    run 0 -n 3 true
    [ ! -s "$T/err" ] || fail "stderr not empty for a good job"
    run 1 -n 2 false
    ;;
kill)
    run 137 -n 4 "$R" kill "$T" 1
    quick 15
    grep -E 'telemem-run: rank 1 \(pid [0-9]+\) killed by signal 9 \(Killed\)' \
        "$T/err" >/dev/null || fail "no 'killed by signal 9' line"
    n=$(ls "$T" | grep -c '^pid\.')
    [ "$n" -eq 8 ] || fail "expected 8 pid files, found $n"
    none_alive "$T"/pid.*
    [ -s "$T/jobid" ] || fail "rank 1 wrote no job id"
    jobid=$(cat "$T/jobid")
    for f in /dev/shm/telemem-"$jobid"-*; do
        [ -e "$f" ] && fail "$f left behind"
    done
    ;;
timeout)
    run 124 -n 3 --timeout 1 "$R" sleep "$T"
    quick 8
    has "$T/err" "timeout"
    none_alive "$T"/pid.*
    run 124 -n 1 --timeout 0.5 sleep 30
    # the longest timeouts allowed (a poll(2) timeout of that many ms does
    # not fit an int): a job that joins and ends on its own is unaffected
    TELEMEM_TIMEOUT=31536000 run 0 -n 2 --timeout 1000000000 "$R" kvs light
    quick 20
    ;;
keep-going)
    run 5 -n 4 --keep-going "$R" keepgoing "$T" 1 5
    has "$T/err" "rank 1 (pid "
    for r in 0 2 3; do
        [ -f "$T/ok.$r" ] || fail "surviving rank $r did not finish"
    done
    # without --keep-going the survivors are ended
    rm -f "$T"/ok.*
    run 5 -n 4 "$R" keepgoing "$T" 1 5
    quick 10
    ;;
abort)
    run 7 -n 3 "$R" abort 2 7
    has "$T/err" "rank 2 (pid "
    has "$T/err" "aborted the job with status 7: test abort from rank 2"
    quick 10
    ;;
not-found)
    run 127 -n 2 /nonexistent/telemem-prog
    has "$T/err" "/nonexistent/telemem-prog"
    run 127 -n 2 telemem-no-such-command
    has "$T/err" "telemem-no-such-command"
    echo 'echo hi' >"$T/noexec"
    chmod 644 "$T/noexec"
    run 127 -n 2 "$T/noexec"
    has "$T/err" "not executable"
    ;;
help)
    run 0 --help
    has "$T/out" "Usage: telemem-run -n N"
    has "$T/out" "--keep-going"
    run 0 -h
    run 0 --version
    has "$T/out" "telemem-run 0.1.0"
    ;;
usage)
    run 2 --bogus -n 2 true
    has "$T/err" "--bogus"
    has "$T/err" "--help"
    run 2 -x -n 2 true
    run 2 true
    has "$T/err" "-n"
    run 2 -n 0 true
    run 2 -n 4097 true
    run 2 -n abc true
    run 2 -n
    run 2 -n 2
    has "$T/err" "missing"
    run 2 --timeout -1 -n 1 true
    run 2 --timeout x -n 1 true
    run 0 -n 1 -- true
    ;;
tag-output)
    run 0 -n 3 --tag-output sh -c \
        'echo "out $TELEMEM_RANK $TELEMEM_NRANKS $TELEMEM_JOBID $TELEMEM_KVS"
         printf "no newline"; echo " err $TELEMEM_RANK" >&2'
    for r in 0 1 2; do
        grep -E "^\[$r\] out $r 3 [A-Za-z0-9]+ unix:/[^ ]+/kvs\$" \
            "$T/out" >/dev/null || fail "no tagged line of rank $r"
        has "$T/err" "[$r]  err $r"
        has "$T/out" "[$r] no newline"
    done
    n=$(sed -n 's/^\[[0-9]\] out [0-9] 3 \([^ ]*\) .*/\1/p' "$T/out" |
        sort -u | wc -l)
    [ "$n" -eq 1 ] || fail "ranks disagree on TELEMEM_JOBID"
    # without --tag-output the output is the ranks' own
    run 0 -n 2 sh -c 'echo "plain $TELEMEM_RANK"'
    has "$T/out" "plain 0"
    has "$T/out" "plain 1"
    ! grep -F '[0]' "$T/out" >/dev/null || fail "untagged output has a tag"
    # stdin reaches rank 0 only
    echo "from stdin" >"$T/in"
    "$L" -n 2 --tag-output sh -c 'cat' <"$T/in" >"$T/out" 2>"$T/err" ||
        fail "stdin job failed"
    has "$T/out" "[0] from stdin"
    ! grep -F '[1] from' "$T/out" >/dev/null || fail "rank 1 read stdin"
    ;;
signal)
    # SIGTERM, SIGHUP, SIGINT (Ctrl-C): a helper starts the launcher with
    # each at its default (a background job of sh ignores SIGINT, nohup
    # SIGHUP, and the launcher keeps a signal ignored at its start
    # ignored), sends it once the ranks run and returns its status.
    for s in 15 1 2; do
        rm -f "$T"/pid.*
        echo "$(date +%T.%N | cut -c1-12) signal $s to the launcher"
        "$R" sendsig $s "$L" "$T" >"$T/out" 2>"$T/err"
        got=$?
        echo "$(date +%T.%N | cut -c1-12) launcher exited $got"
        [ $got -eq $((128 + s)) ] ||
            fail "signal $s: exit $got, expected $((128 + s))"
        has "$T/err" "caught signal $s"
        none_alive "$T"/pid.*
    done
    ;;
*)
    fail "unknown case"
    ;;
esac
exit 0
