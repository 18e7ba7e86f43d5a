# bench-coll-netns.sh - the two-host part of scripts/bench-coll.sh (sourced
# by it, not run alone): two network namespaces joined by a bridge stand
# for two hosts, as in tests/multihost/netns.sh.  For 2x2, 2x4 and 2x8
# ranks (--hosts), in alternating order: Telemem over ofi (tcp;ofi_rxm) and over UCX
# (TELEMEM_TRANSPORT=shm+ucx, UCX_TLS=tcp,self), both with shm inside a
# host, started by telemem-run -H; Open MPI started by mpirun with a host
# file and an rsh agent that enters the namespace with its own host name
# (so that Open MPI sees two nodes: vader inside, its TCP BTL between
# them), --mca mpi_yield_when_idle 1 (the ranks share the 2 CPUs, as
# --oversubscribe does on one node).  Then the network packets of a
# barrier: the packets leaving the two namespaces during a job of 2000
# barriers minus those of a job of none, per barrier (TCP segments,
# acknowledgements included).  Uses the main script's variables and
# functions (run, tc, mc, out, csv, rounds, budget, collect, ...).

netns_setup() {
    tag="tlmc$$"
    ns1="${tag}a" ns2="${tag}b" br="${tag}br"
    net="10.$(( ($$ >> 8) % 200 + 20 )).$(( $$ % 250 ))"
    trap netns_cleanup EXIT
    ip link add "$br" type bridge || die "cannot create a bridge (root?)"
    ip addr add "$net.1/24" dev "$br"
    ip link set "$br" up
    local i=2 ns
    for ns in "$ns1" "$ns2"; do
        ip netns add "$ns"
        ip link add "v$ns" type veth peer name "p$ns"
        ip link set "p$ns" netns "$ns"
        ip link set "v$ns" master "$br" up
        ip -n "$ns" addr add "$net.$i/24" dev "p$ns"
        ip -n "$ns" link set "p$ns" up
        ip -n "$ns" link set lo up
        i=$((i + 1))
    done
    agent=$out/raw/netns-rsh.sh
    cat > "$agent" <<'EOF'
#!/bin/sh
# mpirun's rsh agent: the command in network namespace $1, host name $1
ns=$1; shift
exec ip netns exec "$ns" unshare --uts sh -c "hostname $ns; $*"
EOF
    chmod +x "$agent"
}

netns_cleanup() {
    ip netns del "$ns1" 2>/dev/null
    ip netns del "$ns2" 2>/dev/null
    ip link del "$br" 2>/dev/null
    true
}

# Packets that left the two namespaces so far.
packets() {
    echo $(( $(cat "/sys/class/net/v$ns1/statistics/rx_packets") +
             $(cat "/sys/class/net/v$ns2/statistics/rx_packets") ))
}

# The command line of implementation $1 for k ranks per host, in the
# array cmd.
mh_cmd() { # impl k args...
    local impl=$1 k=$2; shift 2
    case $impl in
    telemem-ofi)
        cmd=(env TELEMEM_TRANSPORT=auto "TELEMEM_OFI_PROVIDER=tcp;ofi_rxm"
             "$run" -H "$ns1:$k,$ns2:$k" --rsh "ip netns exec %h sh -c"
             --kvs-addr "$net.1" "$tc" "$@") ;;
    telemem-ucx)
        cmd=(env TELEMEM_TRANSPORT=shm+ucx UCX_TLS=tcp,self
             "$run" -H "$ns1:$k,$ns2:$k" --rsh "ip netns exec %h sh -c"
             --kvs-addr "$net.1" "$tc" "$@") ;;
    mpi)
        printf '%s slots=%d\n%s slots=%d\n' "$ns1" "$k" "$ns2" "$k" \
            > "$out/raw/hosts-$k"
        cmd=(mpirun --hostfile "$out/raw/hosts-$k" -n $((2 * k))
             --mca plm_rsh_agent "$agent"
             --mca oob_tcp_if_include "$net.0/24"
             --mca btl_tcp_if_include "$net.0/24" --mca btl self,vader,tcp
             --mca mpi_yield_when_idle 1 "$mc" "$@") ;;
    esac
}

# Packets per barrier of implementation $2, k ranks per host (round $1).
count_one() { # round impl k
    local r=$1 impl=$2 k=$3 p0 p1 p2 f=$out/raw/count-$2-2x$3-r$1.txt
    p0=$(packets)
    mh_cmd "$impl" "$k" --barriers 0
    timeout 600 "${cmd[@]}" > "$f" 2>&1 || { fail "$impl count 2x$k"; return; }
    p1=$(packets)
    mh_cmd "$impl" "$k" --barriers 2000
    timeout 600 "${cmd[@]}" >> "$f" 2>&1 || { fail "$impl count 2x$k"; return; }
    p2=$(packets)
    echo "2hosts,$r,$impl,$((2 * k)),net_msgs,0,$(echo "scale=3; ($p2 - $p1 - ($p1 - $p0)) / 2000" | bc),0,$(load1)" >> "$csv"
}

multihost_runs() {
    netns_setup
    local k r i
    for ((r = 1; r <= rounds; r++)); do
        for k in ${hosts//,/ }; do
            say "two hosts round $r, 2x$k ranks"
            for i in $(rotate "$((r + k))" telemem-ofi telemem-ucx mpi); do
                mh_cmd "$i" "$k" --startup
                startup_one 2hosts "$r" "$i" $((2 * k)) "${cmd[@]}"
                mh_cmd "$i" "$k" --budget "$budget"
                coll_one 2hosts "$r" "$i" $((2 * k)) "${cmd[@]}"
                count_one "$r" "$i" "$k"
            done
        done
    done
    netns_cleanup
}
