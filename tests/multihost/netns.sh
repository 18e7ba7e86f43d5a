#!/bin/sh
# netns.sh - multi-host runs on one machine: two network namespaces joined
# by a bridge stand for two hosts.  telemem-run starts ranks in them with
# --rsh "ip netns exec %h sh -c"; ranks in the same namespace use shm,
# ranks in different ones the network transport (auto: libfabric).
# Needs root and iproute2; otherwise the test skips (77) saying why.
# NETNS_COUNTS=a,b: ranks on the first and the second "host" (2,2).
# usage: netns.sh TELEMEM_RUN PROG [ARGS...]
set -u
run=$1; shift
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null 2>&1 || skip "needs iproute2 (ip)"
tag="tlm$$"
ns1="${tag}a"; ns2="${tag}b"; br="${tag}br"
cleanup() {
    ip netns del "$ns1" 2>/dev/null
    ip netns del "$ns2" 2>/dev/null
    ip link del "$br" 2>/dev/null
}
trap cleanup EXIT INT TERM
# 10.<a>.<b>.x from the pid, so parallel runs do not collide.
net="10.$(( ($$ >> 8) % 200 + 20 )).$(( $$ % 250 ))"
ip link add "$br" type bridge 2>/dev/null || skip "cannot create a bridge (no CAP_NET_ADMIN?)"
ip addr add "$net.1/24" dev "$br" && ip link set "$br" up || skip "cannot configure the bridge"
i=2
for ns in "$ns1" "$ns2"; do
    ip netns add "$ns" || skip "cannot create network namespace $ns"
    ip link add "v$ns" type veth peer name "p$ns" || skip "cannot create a veth pair"
    ip link set "p$ns" netns "$ns"
    ip link set "v$ns" master "$br" up
    ip -n "$ns" addr add "$net.$i/24" dev "p$ns"
    ip -n "$ns" link set "p$ns" up
    ip -n "$ns" link set lo up
    i=$((i + 1))
done
counts=${NETNS_COUNTS:-2,2}
"$run" -H "$ns1:${counts%,*},$ns2:${counts#*,}" --rsh "ip netns exec %h sh -c" \
    --kvs-addr "$net.1" --timeout 120 "$@"
