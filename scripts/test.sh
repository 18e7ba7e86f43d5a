#!/usr/bin/env bash
# test.sh - installs what the tests need, builds Telemem three times (plain;
# AddressSanitizer + UndefinedBehaviorSanitizer; ThreadSanitizer) and runs
# every test suite in the first two (the plain build's conformance suite
# again under TELEMEM_WAIT=block and =spin) and the threaded tests in the
# third; then fuzzing, static analysis and the Debian packages
# (scripts/package.sh).
# Exit status 0 only if everything passed.
# Usage: scripts/test.sh [--quick] [--wait-all]
#   --quick     plain build only
#   --wait-all  the whole plain suite (not only conformance) again under
#               TELEMEM_WAIT=block and, one test at a time, =spin (about
#               15 and 40 more minutes)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0 wait_all=0
for a in "$@"; do
    case "$a" in
        --quick) quick=1 ;;
        --wait-all) wait_all=1 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "test.sh: unknown option $a" >&2; exit 2 ;;
    esac
done

scripts/install-deps.sh build test

total_ok=0 total_fail=0 total_skip=0
failed_names="" # "dir:[test=RESULT ...]" of every suite run, for the tail
test_args=()    # extra `meson test` arguments for the next run_suite
run_suite() {   # $1 build dir, rest: meson setup options
    local dir=$1; shift
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" "$@" >/dev/null
    else
        meson configure "$dir" "$@" >/dev/null
    fi
    local rc=0
    # A target that does not build is a failure even if the suites run.
    ninja -C "$dir" || rc=1
    meson test -C "$dir" --print-errorlogs --num-processes 2 \
        ${test_args[@]+"${test_args[@]}"} || rc=$?
    # Tally from meson's machine-readable log.
    # (A run under a test setup writes testlog-<setup>.json.)
    local counts log=testlog.json label="" i
    for ((i = 0; i < ${#test_args[@]}; i++)); do
        if [ "${test_args[i]}" = --setup ]; then
            log=testlog-${test_args[i + 1]}.json
            label=" (setup ${test_args[i + 1]})"
        fi
    done
    counts=$(python3 - "$dir/meson-logs/$log" <<'PY'
import json, sys
ok = fail = skip = 0
names = []
for line in open(sys.argv[1]):
    t = json.loads(line)
    r = t["result"]
    if r in ("OK", "EXPECTEDFAIL"): ok += 1
    elif r == "SKIP": skip += 1
    else:
        fail += 1
        names.append(t["name"] + "=" + r)
print(ok, fail, skip, *names)
PY
)
    local names
    read -r ok fail skip names <<<"$counts"
    # Names again at the very end: CI keeps only the tail of the output.
    [ -n "$names" ] && failed_names="$failed_names $dir$label:[$names]"
    echo "== $dir$label: $ok passed, $fail failed, $skip skipped"
    total_ok=$((total_ok + ok)); total_fail=$((total_fail + fail)); total_skip=$((total_skip + skip))
    return $rc
}

status=0
run_suite build-test -Dbuildtype=debugoptimized -Dwerror=true || status=1
# The wait policy at its two ends (docs/wait.md): the conformance suite with
# every wait sleeping at once, and with waits that never give the core away
# - there only the runs of at most 2 ranks, one at a time (spinning ranks
# need a core each; 8 on 2 cores take minutes per test).
# --wait-all: every suite under both.
if [ "$wait_all" = 1 ]; then
    test_args=(--setup waitblock)
    run_suite build-test -Dbuildtype=debugoptimized -Dwerror=true || status=1
    # One at a time: two 8-rank jobs spinning side by side on 2 cores
    # take minutes per test (conf-mutex-n8: 39 s alone, over 120 s so).
    test_args=(--setup waitspin --num-processes 1)
else
    test_args=(--setup waitblock --suite conformance)
    run_suite build-test -Dbuildtype=debugoptimized -Dwerror=true || status=1
    test_args=(--setup waitspin --suite conformance-np2 --num-processes 1)
fi
run_suite build-test -Dbuildtype=debugoptimized -Dwerror=true || status=1
test_args=()
if [ "$quick" = 0 ]; then
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
    # Leaks inside third-party libraries (each entry explained in the file).
    export LSAN_OPTIONS="suppressions=$PWD/tests/common/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    run_suite build-asan -Dbuildtype=debug -Db_sanitize=address,undefined \
        -Db_lundef=false -Dwerror=true || status=1
    # Threads: the lock, the progress thread and MULTIPLE callers.
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
    # Without UCX: its libucm hooks madvise() in every new thread, which
    # crashes inside ThreadSanitizer's interceptors (seen in thr_multi).
    test_args=(--suite threads --suite armci-tsan --no-suite spin)
    run_suite build-tsan -Dbuildtype=debug -Db_sanitize=thread \
        -Db_lundef=false -Dwerror=true -Ducx=disabled || status=1
    test_args=()
    # Fuzzing: 60 s per libFuzzer target, clang build in build-fuzz.
    scripts/fuzz.sh --seconds 60 || status=1
    # Static analysis: cppcheck + clang-tidy on src/ and compat/,
    # every finding an error.
    scripts/lint-static.sh --build-dir build-test || status=1
    # The Debian packages: build, lintian, install next to Debian's
    # libarmci-mpi-dev, compile and run clients, remove (3-6 min).
    scripts/package.sh --out build-deb || status=1
fi
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$total_ok passed, $total_fail failed, $total_skip skipped"
exit $status
