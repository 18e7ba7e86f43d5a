#!/usr/bin/env bash
# fuzz.sh - builds the libFuzzer targets of tests/fuzz with clang (ASan +
# UBSan, library instrumented for coverage) in build-fuzz and runs each for
# a given time, starting from the checked-in corpus (tests/fuzz/corpus/),
# printing the executions per target.  New inputs go to build-fuzz/corpus/,
# crashes to build-fuzz/artifacts/; the tree's corpus (seed_* from
# tests/fuzz/make_corpus.py, cov_* merged from earlier runs) changes only
# with --merge.
# Usage: scripts/fuzz.sh [--seconds N] [--target am|parse|pack]...
#                        [--build-dir DIR] [--replay | --merge]
#   --seconds N  run each target N seconds (default 60)
#   --replay     only run every corpus input once (regression check)
#   --merge      add to tests/fuzz/corpus/<target>/ (as cov_<sha1>) the
#                inputs of build-fuzz/corpus/ that add coverage
# Exit status 0 when no target found a crash, leak, sanitizer report,
# timeout or out-of-memory.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60 targets=() bdir=build-fuzz replay=0 merge=0
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --seconds=*) seconds=${1#--seconds=}; shift ;;
        --target) targets+=("$2"); shift 2 ;;
        --target=*) targets+=("${1#--target=}"); shift ;;
        --build-dir) bdir=$2; shift 2 ;;
        --replay) replay=1; shift ;;
        --merge) merge=1; shift ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(am parse pack)
command -v clang >/dev/null || {
    echo "fuzz.sh: clang not found (scripts/install-deps.sh test)" >&2; exit 2; }

if [ ! -f "$bdir/build.ninja" ]; then
    CC=clang meson setup "$bdir" -Dfuzz=true -Dbuildtype=debugoptimized \
        -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi
ninja -C "$bdir" $(printf 'tests/fuzz/fuzz_%s ' "${targets[@]}") >/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
mkdir -p "$bdir/artifacts"
status=0
for t in "${targets[@]}"; do
    exe=$bdir/tests/fuzz/fuzz_$t
    seeds=tests/fuzz/corpus/$t
    work=$bdir/corpus/$t
    mkdir -p "$work"
    log=$bdir/fuzz-$t.log
    # Wire totals ask for large buffers legitimately (a reassembly, a
    # collective): allow single allocations up to 64 GiB of address space.
    args=(-rss_limit_mb=4096 -malloc_limit_mb=65536 -timeout=10 -print_final_stats=1
          -artifact_prefix="$bdir/artifacts/$t-")
    [ -f "tests/fuzz/$t.dict" ] && args+=(-dict="tests/fuzz/$t.dict")
    if [ "$merge" = 1 ]; then
        tmp=$(mktemp -d)
        cp "$seeds"/* "$tmp"/
        "$exe" -merge=1 -rss_limit_mb=4096 -malloc_limit_mb=65536 "$tmp" \
            "$work" >"$log" 2>&1 || { echo "fuzz $t: merge failed; log $log" >&2; status=1; }
        added=0
        for f in "$tmp"/*; do
            b=$(basename "$f")
            [ -e "$seeds/$b" ] || [ -e "$seeds/cov_$b" ] && continue
            cp "$f" "$seeds/cov_$b"
            added=$((added + 1))
        done
        rm -rf "$tmp"
        echo "fuzz $t: merged $added new input(s) into $seeds"
        continue
    fi
    if [ "$replay" = 1 ]; then
        args+=(-runs=0)
    else
        args+=(-max_total_time="$seconds")
    fi
    rc=0
    "$exe" "${args[@]}" "$work" "$seeds" >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
    if [ "$rc" = 0 ]; then
        what="in ${seconds}s"
        [ "$replay" = 1 ] && what="(replay)"
        echo "fuzz $t: ${execs:-?} executions $what, ${cov:-cov: ?}, corpus $(ls "$work" | wc -l) + $(ls "$seeds" | wc -l) seeds: OK"
    else
        status=1
        echo "fuzz $t: FAILED (status $rc) after ${execs:-?} executions; log $log" >&2
        grep -E 'ERROR|SUMMARY|fuzz_[a-z]+:|Test unit written' "$log" | head -20 >&2 || true
    fi
done
exit $status
