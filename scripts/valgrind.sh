#!/usr/bin/env bash
# valgrind.sh - runs the conformance programs (tests/conformance) at 2 ranks
# over shared memory, every rank under valgrind memcheck
# (telemem-run -n 2 valgrind ... prog), and fails if any rank reports an
# error or a definite/possible leak.  Suppressions: tests/valgrind.supp
# (third-party libraries only, each entry explained there).
# Usage: scripts/valgrind.sh [--build-dir DIR] [--ranks N] [prog...]
#   prog: conformance program names (putget, flood, ...); default all.
#   Logs: DIR/valgrind/<prog>.<pid>.log
set -euo pipefail
cd "$(dirname "$0")/.."

bdir=build-hard ranks=2 progs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --build-dir) bdir=$2; shift 2 ;;
        --ranks) ranks=$2; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "valgrind.sh: unknown option $1" >&2; exit 2 ;;
        *) progs+=("$1"); shift ;;
    esac
done
command -v valgrind >/dev/null || {
    echo "valgrind.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
if [ ! -f "$bdir/build.ninja" ]; then
    meson setup "$bdir" -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C "$bdir" >/dev/null
[ ${#progs[@]} -gt 0 ] || progs=(putget random nb order lastword scale coll mem am
                                 flood strided vector acc atomic mutex)

logdir=$bdir/valgrind
rm -rf "$logdir"; mkdir -p "$logdir"
export TELEMEM_TRANSPORT=shm
# Valgrind runs each rank 20-50x slower: keep waits from timing out.
export TELEMEM_TIMEOUT=600 TELEMEM_LIVENESS_INTERVAL=5
vg=(valgrind --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,possible
    --errors-for-leak-kinds=definite,possible --track-origins=yes --num-callers=30
    --suppressions="$PWD/tests/valgrind.supp" --gen-suppressions=all)
fail=0 passed=0
for p in "${progs[@]}"; do
    exe=$bdir/tests/conformance/conf_$p
    args=()
    # flood's defaults are sized for native speed.
    [ "$p" = flood ] && args=(--puts=4000 --ams=1000)
    start=$(date +%s)
    rc=0
    "$bdir/tools/telemem-run" -n "$ranks" --timeout 1200 \
        "${vg[@]}" --log-file="$logdir/$p.%p.log" "$exe" "${args[@]}" \
        >"$logdir/$p.out" 2>&1 || rc=$?
    secs=$(( $(date +%s) - start ))
    errs=$(grep -h 'ERROR SUMMARY' "$logdir"/$p.*.log | sed 's/.*ERROR SUMMARY: \([0-9]*\).*/\1/' | paste -sd+ | bc)
    if [ "$rc" = 0 ] && [ "${errs:-0}" = 0 ]; then
        passed=$((passed + 1))
        echo "valgrind $p: OK (${secs}s)"
    elif [ "$rc" = 77 ]; then
        echo "valgrind $p: skipped ($(grep -h SKIP "$logdir/$p.out" | head -1))"
    else
        fail=$((fail + 1))
        echo "valgrind $p: FAILED (status $rc, ${errs:-?} errors, ${secs}s): $logdir/$p.*.log" >&2
        grep -h -A12 -E '^==[0-9]+== (Invalid|Conditional|Syscall|Mismatched|Source and dest)|definitely lost in|possibly lost in' \
            "$logdir"/$p.*.log | head -40 >&2 || true
    fi
done
echo "valgrind: $passed passed, $fail failed (logs in $logdir)"
[ "$fail" = 0 ]
