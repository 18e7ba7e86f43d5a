#!/bin/sh
# lint_exports.sh - only telemem_* symbols are exported by libtelemem.so.
lib=$1
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRWV]$/ {print $3}' | grep -v '^telemem_' | grep -v '^_' || true)
if [ -n "$bad" ]; then
    echo "exported symbols outside telemem_*:"; echo "$bad"; exit 1
fi
echo "exports ok: $(nm -D --defined-only "$lib" | grep -c ' T telemem_') telemem_* functions"
