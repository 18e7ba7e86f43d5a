#!/bin/sh
# shm_clean.sh - no /dev/shm object of a job outlives its processes, however
# they end: start N ranks of shm_clean (under telemem-run or mpirun), wait
# until each has set up its blocks, check that every telemem object they
# map is already unlinked ("(deleted)" in /proc/PID/maps), kill them all
# (launcher included) with SIGKILL, and check that /dev/shm holds nothing
# of the job (nor is the store's Unix socket left: it goes once every rank
# joined).  usage: shm_clean.sh N LAUNCHER [ARGS...] PROG
set -u
n=$1; shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shm_clean.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/out" "$tmp/err" 2>/dev/null | sed 's/^/    /'; exit 1; }

: >"$tmp/out" # exists before the job's shell opens it
"$@" >"$tmp/out" 2>"$tmp/err" &
lp=$!
i=0
while [ "$(grep -c '^READY ' "$tmp/out" 2>/dev/null || true)" -lt "$n" ]; do
    i=$((i + 1))
    [ $i -le 600 ] || { kill -9 $lp; fail "not $n ranks ready in 60 s"; }
    kill -0 $lp 2>/dev/null || fail "the job ended before it was ready"
    sleep 0.1
done
pids=$(sed -n 's/^READY \([0-9]*\) .*/\1/p' "$tmp/out")
sock=$(sed -n 's/^READY [0-9]* unix:\(.*\)/\1/p' "$tmp/out" | sort -u)
[ -z "$sock" ] || [ ! -e "$sock" ] || fail "the store's socket $sock is still there with every rank joined"
jobs=''
mapped=0
for pid in $pids; do
    grep '/dev/shm/telemem-' "/proc/$pid/maps" >"$tmp/maps.$pid" || true
    m=$(wc -l <"$tmp/maps.$pid")
    mapped=$((mapped + m))
    if grep -v '(deleted)$' "$tmp/maps.$pid" >"$tmp/named"; then
        fail "rank pid $pid maps objects still named in /dev/shm: $(cat "$tmp/named")"
    fi
    jobs="$jobs $(sed -n 's|.*/dev/shm/telemem-\([A-Za-z0-9]*\)-.*|\1|p' "$tmp/maps.$pid")"
done
[ "$mapped" -gt 0 ] || fail "no rank maps any telemem object: nothing was checked"
jobs=$(echo $jobs | tr ' ' '\n' | sort -u)
echo "job(s) $jobs: $mapped mappings of $n ranks, all unlinked"
kill -9 $lp $pids 2>/dev/null
wait $lp 2>/dev/null
sleep 0.5
for job in $jobs; do
    left=$(ls /dev/shm | grep -F "telemem-$job-" || true)
    [ -z "$left" ] || fail "/dev/shm objects of job $job after SIGKILL: $left"
done
[ -z "$sock" ] || [ ! -e "$(dirname "$sock")" ] || fail "the store's directory is left"
echo "PASS: /dev/shm clean after SIGKILL"
