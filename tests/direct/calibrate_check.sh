#!/bin/sh
# calibrate_check.sh - telemem-run --calibrate=PATH writes a profile with
# the shared-memory pull lines (shm-pull, shm-map), the window driver's
# line and the collectives' (coll-reduce-split), each with sizes (docs/direct.md, "Calibration").  Timings are not
# checked: only that every phase ran and wrote its line.
# Usage: calibrate_check.sh TELEMEM-RUN
set -eu
run=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$run" --calibrate="$dir/profile" >"$dir/out" 2>&1 || {
    cat "$dir/out"; echo "calibrate_check: telemem-run --calibrate failed"
    exit 1; }
for key in shm-pull shm-map window coll-reduce-split; do
    grep -Eq "^$key [0-9]+ [0-9]+\$" "$dir/profile" || {
        cat "$dir/out" "$dir/profile"
        echo "calibrate_check: no '$key <bytes> <bytes>' line"; exit 1; }
done
# The pull lines start at the smallest size the phases time (4 KiB): a
# pull that wins there must not turn 8-byte puts into pulls.
for key in shm-pull shm-map; do
    thr=$(awk -v k="$key" '$1 == k {print $2}' "$dir/profile")
    awk -v t="$thr" 'BEGIN { exit !(t + 0 >= 4096) }' || {
        cat "$dir/out" "$dir/profile"
        echo "calibrate_check: $key threshold $thr is below 4096"; exit 1; }
done
# Usage errors (status 2): --quick without --calibrate, and -H with one
# host (the network phases need two).
for args in "--quick -n 2 true" "-H localhost:2 --calibrate=$dir/p2"; do
    st=0
    # shellcheck disable=SC2086
    "$run" $args >"$dir/out" 2>&1 || st=$?
    [ "$st" = 2 ] || {
        cat "$dir/out"
        echo "calibrate_check: '$args' exited $st, want 2"; exit 1; }
done
echo "calibrate_check: OK"
