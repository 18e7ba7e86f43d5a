#!/usr/bin/env bash
# main.sh - the main job: installs what is needed, builds Telemem (release),
# and runs the benchmarks on two local ranks against Open MPI, writing CSV,
# a summary and plots under results/.
# Usage: scripts/main.sh [--out DIR]   (default results/)
set -euo pipefail
cd "$(dirname "$0")/.."
out=results
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "main.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
scripts/install-deps.sh build bench
if [ ! -f build-release/build.ninja ]; then
    meson setup build-release -Dbuildtype=release >/dev/null
fi
ninja -C build-release
mkdir -p "$out"
scripts/bench-netpipe.sh --build build-release --out "$out/netpipe"
echo "main.sh: results in $out/ (summary: $out/netpipe/summary.md)"
