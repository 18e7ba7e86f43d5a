#!/bin/sh
# calibrate_check.sh - telemem-run --calibrate=PATH writes a profile with
# the shared-memory pull lines (shm-pull, shm-map) and the window driver's
# line, each with sizes (docs/direct.md, "Calibration").  Timings are not
# checked: only that every phase ran and wrote its line.
# Usage: calibrate_check.sh TELEMEM-RUN
set -eu
run=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$run" --calibrate="$dir/profile" >"$dir/out" 2>&1 || {
    cat "$dir/out"; echo "calibrate_check: telemem-run --calibrate failed"
    exit 1; }
for key in shm-pull shm-map window; do
    grep -Eq "^$key [0-9]+ [0-9]+\$" "$dir/profile" || {
        cat "$dir/out" "$dir/profile"
        echo "calibrate_check: no '$key <bytes> <bytes>' line"; exit 1; }
done
echo "calibrate_check: OK"
