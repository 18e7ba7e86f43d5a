#!/bin/sh
# at_exports.sh - checks libarmci's dynamic symbols: only ARMCI names are
# exported (ARMCI_*, PARMCI_*, ARMCIX_*, armci_*, parmci_*), every
# ARMCI_X is a weak alias of a global PARMCI_X at the same address (so a
# profiling layer can wrap it), and - when ARMCI-MPI's static library is
# given - every function ARMCI-MPI defines under those names exists here.
# usage: at_exports.sh LIBARMCI.so [libarmci-openmpi.a]
set -u
lib=$1
ref=${2:-}
fail=0
syms=$(nm -D --defined-only "$lib") || exit 1

bad=$(echo "$syms" | awk '{print $3}' |
      grep -v -E '^(ARMCI_|PARMCI_|ARMCIX_|armci_|parmci_)' |
      grep -v -E '^(_init|_fini|__bss_start|_edata|_end)$')
if [ -n "$bad" ]; then
    echo "FAIL: symbols exported outside the ARMCI names:"; echo "$bad"
    fail=1
fi

# ARMCI_X weak, PARMCI_X global, same address.
weak=$(mktemp) || exit 1
trap 'rm -f "$weak"' EXIT
echo "$syms" | awk '$2 == "W" && $3 ~ /^ARMCI_/ {print $1, substr($3, 7)}' \
    >"$weak"
n_weak=$(wc -l <"$weak")
while read -r addr name; do
    p=$(echo "$syms" | awk -v n="PARMCI_$name" '$3 == n {print $1, $2}')
    if [ "$p" != "$addr T" ]; then
        echo "FAIL: ARMCI_$name is not an alias of a global PARMCI_$name"
        fail=1
    fi
done <"$weak"
strong=$(echo "$syms" | awk '$2 != "W" && $3 ~ /^ARMCI_/ {print $3}')
if [ -n "$strong" ]; then
    echo "FAIL: ARMCI_* entry points that are not weak aliases:"
    echo "$strong"
    fail=1
fi

if [ -n "$ref" ]; then
    have=$(mktemp) || exit 1
    trap 'rm -f "$weak" "$have"' EXIT
    echo "$syms" | awk '{print $3}' | sort -u >"$have"
    missing=$(nm "$ref" 2>/dev/null | awk '$2 ~ /^[TW]$/ {print $3}' |
        grep -E '^(ARMCI_|PARMCI_|ARMCIX_|armci_|parmci_)' | sort -u |
        comm -23 - "$have")
    if [ -n "$missing" ]; then
        echo "FAIL: functions of ARMCI-MPI missing here:"; echo "$missing"
        fail=1
    else
        echo "every ARMCI-MPI function is exported"
    fi
fi
[ $fail = 0 ] && echo "exports ok: $n_weak ARMCI_* weak aliases"
exit $fail
