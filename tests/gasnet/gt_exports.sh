#!/bin/sh
# gt_exports.sh - libgasnet exports only GASNet names: gasnet_* (the API),
# gasnett_* (tools), gasnetc_*/gasnete_* (entry points behind the header's
# inline functions and GASNET_TEAM_ALL).
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRWVGS]$/ {print $3}')
bad=$(echo "$syms" | grep -v -E '^(gasnet_|gasnett_|gasnetc_|gasnete_)' | grep -v '^_' || true)
if [ -n "$bad" ]; then
    echo "libgasnet exports symbols outside gasnet*_:"; echo "$bad"; exit 1
fi
for s in gasnet_init gasnet_attach gasnet_exit gasnet_put gasnet_get \
         gasnet_barrier_notify gasnet_hsl_lock gasnetc_AMRequestShortM \
         gasnett_gethostname gasnet_coll_broadcast; do
    echo "$syms" | grep -qx "$s" || { echo "missing export: $s"; exit 1; }
done
echo "exports ok: $(echo "$syms" | wc -l) symbols"
