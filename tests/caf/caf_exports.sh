#!/bin/sh
# caf_exports.sh - libcaf_telemem exports every entry point of gfortran
# 12's coarray ABI (-fcoarray=lib) and nothing else (its own names are
# hidden).
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRWVGS]$/ {print $3}')
bad=$(echo "$syms" | grep -v -E '^_gfortran_caf_' | grep -v '^_' || true)
if [ -n "$bad" ]; then
    echo "libcaf_telemem exports symbols outside _gfortran_caf_*:"; echo "$bad"; exit 1
fi
for s in init finalize this_image num_images register deregister \
         sync_all sync_memory sync_images stop_numeric stop_str \
         error_stop_str error_stop fail_image co_broadcast co_sum co_min \
         co_max co_reduce get send sendget get_by_ref send_by_ref \
         sendget_by_ref is_present atomic_define atomic_ref atomic_cas \
         atomic_op lock unlock event_post event_wait event_query \
         failed_images stopped_images image_status random_init form_team \
         change_team end_team sync_team team_number get_team; do
    echo "$syms" | grep -qx "_gfortran_caf_$s" || { echo "missing export: _gfortran_caf_$s"; exit 1; }
done
echo "exports ok: $(echo "$syms" | wc -l) symbols"
