#!/bin/sh
# bench/gasnet/amrt-seq-par.sh - AM Short round trip of a GASNET_PAR
# client (one thread) against the same client built GASNET_SEQ: runs
# telemem-gasnet-amrt-seq and -par alternately (SEQ PAR PAR SEQ ...) on 2
# ranks, prints each run's median and the ratio of the medians of the
# runs (and of their fast-phase tenths), with the load.
#   bench/gasnet/amrt-seq-par.sh BUILDDIR [RUNS]
set -eu
b=$1
runs=${2:-6}
run="$b/tools/telemem-run -n 2 --timeout 120"
uptime
seq_v=""
par_v=""
seq_p=""
par_p=""
i=0
while [ $i -lt "$runs" ]; do
    if [ $((i % 4)) -eq 0 ] || [ $((i % 4)) -eq 3 ]; then order="seq par"; else order="par seq"; fi
    for m in $order; do
        line=$($run "$b/bench/gasnet/telemem-gasnet-amrt-$m" | grep roundtrip)
        echo "$line"
        v=$(echo "$line" | cut -d, -f3)
        q=$(echo "$line" | cut -d, -f5)
        if [ "$m" = seq ]; then seq_v="$seq_v $v"; seq_p="$seq_p $q"
        else par_v="$par_v $v"; par_p="$par_p $q"; fi
    done
    i=$((i + 1))
done
median() { echo "$@" | tr ' ' '\n' | grep . | sort -g |
           awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
s=$(median $seq_v)
p=$(median $par_v)
echo "median seq $s us, par $p us, par/seq $(echo "$p $s" | awk '{printf "%.3f", $1/$2}') (target <= 1.10)"
s=$(median $seq_p)
p=$(median $par_p)
echo "fast phase (p10): seq $s us, par $p us, par/seq $(echo "$p $s" | awk '{printf "%.3f", $1/$2}')"
uptime
