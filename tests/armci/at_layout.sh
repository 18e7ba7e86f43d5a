#!/bin/sh
# at_layout.sh - runs at_layout built against libarmci's headers (OURS) and
# against ARMCI-MPI's (REF) and fails on any difference in the printed
# sizes, offsets and enum values.
# usage: at_layout.sh OURS REF
set -u
ours=$("$1") || { echo "at_layout.sh: $1 failed" >&2; exit 1; }
ref=$("$2") || { echo "at_layout.sh: $2 failed" >&2; exit 1; }
if [ "$ours" != "$ref" ]; then
    echo "at_layout.sh: FAIL: libarmci's types differ from ARMCI-MPI's:" >&2
    tmp=$(mktemp -d)
    echo "$ref" >"$tmp/armci-mpi"
    echo "$ours" >"$tmp/libarmci"
    diff "$tmp/armci-mpi" "$tmp/libarmci" >&2
    rm -rf "$tmp"
    exit 1
fi
echo "$ours"
echo "at_layout.sh: $(echo "$ours" | wc -l) sizes, offsets and values equal ARMCI-MPI's"
