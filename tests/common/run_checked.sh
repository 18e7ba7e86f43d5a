#!/bin/sh
# run_checked.sh - runs one test command (usually telemem-run -n N prog) and
# fails it when the library or launcher logged an unexpected warning or
# error, a sanitizer reported something, a test program's assertion
# failed (whatever the status), the exit status differs from the
# expected one, the run took too long, or a process / /dev/shm object of the
# job is left behind.
#
# usage: run_checked.sh [options] [--] command args...
#   --expect-log=ERE     telemem warn/error lines matching ERE are allowed
#                        (repeatable)
#   --require-log=ERE    fail unless some output line matches ERE (repeatable)
#   --expect-status=N    the command must exit with N (default 0; 77 = skip
#                        is passed through when 0 is expected)
#   --max-seconds=S      fail if the command ran longer than S seconds
#                        (only for tests whose point is "ends within seconds")
#   --log-per-rank       each rank logs to its own file (TELEMEM_LOG_FILE),
#                        checked like stderr: for launchers such as mpirun
#                        whose output forwarding can splice two ranks'
#                        lines into one
#
# The test programs print "TT_PROC pid=P rank=R jobid=J" (tests/common/tt.h);
# after the command ends, every such pid must be gone and no
# /dev/shm/telemem-J-* may remain.
set -u

expect_log=''
require_logs=''
expect_status=0
max_seconds=''
log_per_rank=0
while [ $# -gt 0 ]; do
    case "$1" in
    --expect-log=*)
        p=${1#--expect-log=}
        if [ -z "$expect_log" ]; then expect_log="($p)"; else expect_log="$expect_log|($p)"; fi
        shift ;;
    --require-log=*)
        require_logs="$require_logs
${1#--require-log=}"
        shift ;;
    --expect-status=*) expect_status=${1#--expect-status=}; shift ;;
    --max-seconds=*) max_seconds=${1#--max-seconds=}; shift ;;
    --log-per-rank) log_per_rank=1; shift ;;
    --) shift; break ;;
    --*) echo "run_checked: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "run_checked: no command" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/run_checked.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "run_checked: $*" >&2
if [ "$log_per_rank" = 1 ]; then
    mkdir "$tmp/logs"
    TELEMEM_LOG_FILE="$tmp/logs/rank%r.%p.log"
    export TELEMEM_LOG_FILE
fi
start=$(date +%s)
# stdout -> out (and our stdout), stderr -> err (and our stderr), streamed
# live so a timed-out test still shows its output.
{ { "$@" 2>&1 1>&3 3>&-; echo $? >"$tmp/status"; } | tee "$tmp/err" 1>&2; } 3>&1 | tee "$tmp/out"
end=$(date +%s)
logs=''
if [ "$log_per_rank" = 1 ]; then
    for f in "$tmp"/logs/*.log; do
        [ -e "$f" ] || continue
        sed "s|^|$(basename "$f"): |" "$f" >&2
        logs="$logs $f"
    done
fi
status=$(cat "$tmp/status" 2>/dev/null || echo 255)
elapsed=$((end - start))
fail=0

if [ "$status" != "$expect_status" ]; then
    if [ "$status" = 77 ] && [ "$expect_status" = 0 ]; then
        echo "run_checked: test skipped (status 77)" >&2
        exit 77
    fi
    echo "run_checked: FAIL: exit status $status, expected $expect_status" >&2
    fail=1
fi

if [ -n "$max_seconds" ] && [ "$elapsed" -gt "$max_seconds" ]; then
    echo "run_checked: FAIL: took ${elapsed}s, limit ${max_seconds}s" >&2
    fail=1
fi

# Library and launcher log lines: "[telemem r1 1234] file.c:12 warn: ...".
# shellcheck disable=SC2086  # $logs: file names made above, no spaces
grep -h -E '\[telemem[^]]*\].* (warn|error): ' "$tmp/err" "$tmp/out" $logs >"$tmp/logged" 2>/dev/null
if [ -n "$expect_log" ]; then
    grep -v -E "$expect_log" "$tmp/logged" >"$tmp/unexpected"
else
    cp "$tmp/logged" "$tmp/unexpected"
fi
if [ -s "$tmp/unexpected" ]; then
    echo "run_checked: FAIL: unexpected warnings/errors from telemem:" >&2
    sed 's/^/    /' "$tmp/unexpected" >&2
    fail=1
fi

if grep -h -E 'runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer' \
        "$tmp/err" "$tmp/out" $logs >"$tmp/san" 2>/dev/null; then
    echo "run_checked: FAIL: sanitizer report:" >&2
    sed 's/^/    /' "$tmp/san" >&2
    fail=1
fi

# A test program's own assertion (tests/common/tt.h: "[tt r1] FAIL ..."):
# a failure even when the job's status is the expected one (a killed
# rank's 137 under --keep-going hides the survivors' exit status).
# shellcheck disable=SC2086
if grep -h -E '^\[tt r[0-9]+\] FAIL ' "$tmp/err" "$tmp/out" $logs \
        >"$tmp/ttfail" 2>/dev/null; then
    echo "run_checked: FAIL: a test assertion failed:" >&2
    sed 's/^/    /' "$tmp/ttfail" >&2
    fail=1
fi

if [ -n "$require_logs" ]; then
    echo "$require_logs" | while IFS= read -r pat; do
        [ -z "$pat" ] && continue
        # shellcheck disable=SC2086
        if ! grep -q -E "$pat" "$tmp/err" "$tmp/out" $logs; then
            echo "run_checked: FAIL: no output line matches '$pat'" >&2
            echo x >"$tmp/reqfail"
        fi
    done
    [ -e "$tmp/reqfail" ] && fail=1
fi

# Leftover processes: every TT_PROC pid must be gone (zombies count as gone;
# allow the launcher's reaping a moment).
pids=$(sed -n 's/^TT_PROC pid=\([0-9]*\) .*/\1/p' "$tmp/out")
left=''
for pid in $pids; do
    i=0
    while [ -e "/proc/$pid/stat" ]; do
        state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null || echo X)
        [ "$state" = Z ] && break
        i=$((i + 1))
        if [ $i -gt 30 ]; then
            left="$left $pid"
            break
        fi
        sleep 0.1
    done
done
if [ -n "$left" ]; then
    echo "run_checked: FAIL: processes left after the job:$left" >&2
    for pid in $left; do
        echo "    $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" >&2
    done
    fail=1
fi

# Leftover shared-memory objects of this job.
jobs=$(sed -n 's/^TT_PROC pid=[0-9]* rank=[^ ]* jobid=\([^ ]*\)$/\1/p' "$tmp/out" | sort -u)
for job in $jobs; do
    objs=$(ls /dev/shm 2>/dev/null | grep -F "telemem-$job-" || true)
    if [ -n "$objs" ]; then
        echo "run_checked: FAIL: /dev/shm objects left by job $job:" $objs >&2
        fail=1
    fi
done

echo "run_checked: status $status, ${elapsed}s" >&2
exit $fail
