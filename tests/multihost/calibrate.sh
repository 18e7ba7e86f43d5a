#!/bin/sh
# calibrate.sh - telemem-run --calibrate --quick between two namespace
# hosts (netns.sh), then a job reading the profile it wrote: the profile
# must hold the line of KEY (the network driver and its provider,
# "ofi-rma@tcp;ofi_rxm"), and the job's debug log says it read that line
# (run_checked.sh --require-log checks the output).  Timings are not
# checked.  Skips (77) where netns.sh does.
# usage: calibrate.sh NETNS_SH TELEMEM_RUN KEY PROG [ARGS...]
set -u
netns=$1 run=$2 key=$3
shift 3
profile=$(mktemp "${TMPDIR:-/tmp}/calibrate-mh.XXXXXX") || exit 2
trap 'rm -f "$profile"' EXIT INT TERM
printf '# an older line of every provider, kept\nofi-rma 65536 4096\n' \
    >"$profile"
sh "$netns" "$run" --calibrate="$profile" --quick
st=$?
[ "$st" = 0 ] || exit "$st"
echo "calibrate.sh: profile:"
cat "$profile"
# "KEY <bytes> <bytes>", the key taken literally (it may hold ';')
awk -v k="$key" '$1 == k && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { f = 1 }
                 END { exit !f }' "$profile" ||
    { echo "calibrate.sh: FAIL: no line $key in the profile"; exit 1; }
grep -q '^ofi-rma 65536 4096$' "$profile" ||
    { echo "calibrate.sh: FAIL: the line without provider was lost"; exit 1; }
TELEMEM_DIRECT_PROFILE=$profile TELEMEM_LOG_LEVEL=debug \
    TELEMEM_LOG_FILTER=direct TELEMEM_PRINT_CONFIG=1 \
    sh "$netns" "$run" "$@"
