#!/usr/bin/env bash
# lint-static.sh - static analysis of src/ and compat/:
#   cppcheck (Debian cppcheck) with tests/cppcheck.supp, classes warning,
#     portability, performance;
#   clang-tidy (Debian clang-tidy) with the checks of .clang-tidy;
# both over DIR/compile_commands.json (default build-hard, configured with
# gcc if missing).  Every finding is an error: exit status 1.
# Usage: scripts/lint-static.sh [--build-dir DIR] [--only cppcheck|tidy]
set -euo pipefail
cd "$(dirname "$0")/.."

bdir=build-hard only=''
while [ $# -gt 0 ]; do
    case "$1" in
        --build-dir) bdir=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "lint-static.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -f "$bdir/compile_commands.json" ] || meson setup "$bdir" >/dev/null
# Generated headers (tlm_build_config.h, armciconf.h, ...) must exist.
ninja -C "$bdir" >/dev/null

status=0
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT

if [ "$only" != tidy ]; then
    command -v cppcheck >/dev/null || { echo "lint-static: cppcheck missing" >&2; exit 2; }
    # __GNUC__: cppcheck does not define it, and without it the headers
    # drop attributes (noreturn of tlm_gasnet_fatal) and hit #error.
    cppcheck --project="$bdir/compile_commands.json" \
        --file-filter='*src/*' --file-filter='*compat/*' \
        --enable=warning,portability,performance --std=c11 \
        -D__GNUC__=12 -D__x86_64__ --inline-suppr \
        --suppressions-list=tests/cppcheck.supp -q -j "$(nproc)" \
        --template='{file}:{line}: {severity}: {message} [{id}]' \
        >"$out/cppcheck" 2>&1 || true
    grep -v '^$' "$out/cppcheck" | sort -u >"$out/cppcheck.sorted" || true
    n=$(wc -l <"$out/cppcheck.sorted")
    echo "cppcheck: $n finding(s)"
    if [ "$n" -gt 0 ]; then cat "$out/cppcheck.sorted"; status=1; fi
fi

if [ "$only" != cppcheck ]; then
    tidy=$(command -v run-clang-tidy-14 || command -v run-clang-tidy || true)
    [ -n "$tidy" ] || { echo "lint-static: run-clang-tidy missing" >&2; exit 2; }
    "$tidy" -quiet -j "$(nproc)" -p "$bdir" "$PWD/src/" "$PWD/compat/" \
        >"$out/tidy" 2>&1 || true
    # One line per finding, without colours, paths relative to the tree.
    sed 's/\x1b\[[0-9;]*m//g' "$out/tidy" |
        grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error): ' |
        sed -e "s|^$PWD/||" -e "s|^$bdir/\.\./||" -e 's|^\.\./||' |
        sort -u >"$out/tidy.sorted" || true
    n=$(wc -l <"$out/tidy.sorted")
    echo "clang-tidy: $n finding(s)"
    if [ "$n" -gt 0 ]; then cat "$out/tidy.sorted"; status=1; fi
fi
exit $status
