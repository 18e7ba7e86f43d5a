#!/usr/bin/env bash
# bench-transports.sh - Telemem puts over ofi/tcp and ucx/tcp against the
# transports' own tools on the same provider, in one run, on loopback,
# alternating A/B, with CSV and a summary against the issue-4 targets.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/bench-transports.sh [options]

Two local ranks over loopback, for --rounds rounds in alternating order
(round 1: A1 B1 A2 B2, round 2: B2 A2 B1 A1, ...):
  tm-ofi   telemem-netpipe (latency and burst modes) with
           TELEMEM_TRANSPORT=ofi TELEMEM_OFI_PROVIDER="tcp;ofi_rxm"
  fi       libfabric's fi_pingpong -p "tcp;ofi_rxm" -e rdm (package
           libfabric-bin): one-way latency (usec/xfer) and ping-pong MB/s
  tm-ucx   telemem-netpipe with TELEMEM_TRANSPORT=ucx UCX_TLS=tcp,self
  ucx      ucx_perftest (package ucx-utils) with UCX_TLS=tcp: ucp_am_lat
           (typical one-way latency) and ucp_am_bw (overall bandwidth),
           twice: as the tool comes (series ucx) and with -e (series
           ucx-e), endpoints with peer-failure detection as Telemem's.
           UCX picks its protocols by that mode: without it, tcp offers
           zero-copy RMA lanes (two, lo and eth0, for rendezvous); with
           it, rendezvous runs on active messages over one lane.

Compared (medians over rounds; targets "within 15%"):
  latency at --lat-size bytes     Telemem latency-mode median one-way time
                                  <= 1.15 x the tool's
  ofi bandwidth at --bw-sizes     Telemem latency-mode (ping-pong) MB/s
                                  >= 0.85 x fi_pingpong's (also ping-pong)
  ucx bandwidth at --bw-sizes     Telemem burst-mode MB/s (puts back to back,
                                  then quiet) >= 0.85 x ucp_am_bw's
MB = 1e6 bytes everywhere (ucx_perftest's MiB are converted).  libfabric's
fi_rma_bw is part of fabtests, which Debian 12 does not package: streaming
bandwidth over ofi has no libfabric reference here, only ping-pong.

Options:
  --build DIR      Meson build directory (default: build)
  --out DIR        results directory (default: results/transports)
  --rounds N       alternating rounds (default: 3)
  --iters N        iterations of each tool run (default: 20000 for latency,
                   bandwidth runs use N/10)
  --lat-size B     latency message size (default: 8)
  --bw-sizes LIST  comma list of bandwidth sizes in bytes (default:
                   65536,1048576)
  --time SEC       telemem-netpipe seconds per size (default: 0.25)
  --wait MODE      TELEMEM_WAIT for the Telemem runs (default: the
                   library's, auto): the tools poll without ever yielding
                   their core; --wait spin makes Telemem do the same
  --spin N         older form of --wait spin (N is ignored)
  --idle-wait SEC  before each run wait up to SEC seconds for the machine to
                   be idle (load average below 1.5; default 0 = no wait).
                   Spinning ping-pongs on a loaded machine measure the
                   scheduler, not the transport.
  --quick          --rounds 1 --iters 2000 --time 0.05
  -h, --help       this text

Writes DIR/results.csv (round,series,metric,bytes,value,unit), the raw
outputs (DIR/raw/), DIR/env.txt and DIR/summary.md.
EOF
}

build=build
out=results/transports
rounds=3
iters=20000
lat_size=8
bw_sizes=65536,1048576
ttime=0.25
idle_wait=0
spin=""

die() { echo "bench-transports.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --build) [ $# -ge 2 ] || die "--build needs a value"; build=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; rounds=$2; shift 2 ;;
    --iters) [ $# -ge 2 ] || die "--iters needs a value"; iters=$2; shift 2 ;;
    --lat-size) [ $# -ge 2 ] || die "--lat-size needs a value"; lat_size=$2; shift 2 ;;
    --bw-sizes) [ $# -ge 2 ] || die "--bw-sizes needs a value"; bw_sizes=$2; shift 2 ;;
    --time) [ $# -ge 2 ] || die "--time needs a value"; ttime=$2; shift 2 ;;
    --wait) [ $# -ge 2 ] || die "--wait needs a value"; spin=$2; shift 2 ;;
    --spin) [ $# -ge 2 ] || die "--spin needs a value"; spin=spin; shift 2 ;;
    --idle-wait) [ $# -ge 2 ] || die "--idle-wait needs a value"; idle_wait=$2; shift 2 ;;
    --quick) rounds=1; iters=2000; ttime=0.05; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (--help lists them)" ;;
    esac
done
for v in "$rounds" "$iters" "$lat_size"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a positive integer"
done

run=$build/tools/telemem-run
np=$build/bench/netpipe/telemem-netpipe
[ -x "$run" ] && [ -x "$np" ] || die "no telemem-run / telemem-netpipe in $build (build first)"
have_fi=1; have_ucx=1
command -v fi_pingpong >/dev/null || { have_fi=0; echo "bench-transports.sh: fi_pingpong missing (apt-get install libfabric-bin): ofi runs skipped" >&2; }
command -v ucx_perftest >/dev/null || { have_ucx=0; echo "bench-transports.sh: ucx_perftest missing (apt-get install ucx-utils): ucx runs skipped" >&2; }

mkdir -p "$out/raw"
csv=$out/results.csv
echo "round,series,metric,bytes,value,unit" > "$csv"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "host: $(uname -n) $(uname -r)"
    echo "cpus: $(nproc)"
    echo "git: $(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "libfabric: $(fi_info --version 2>/dev/null | tr '\n' ' ')"
    echo "ucx: $(ucx_info -v 2>/dev/null | head -1)"
    echo "loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "TELEMEM_WAIT: ${spin:-library default}"
} > "$out/env.txt"

port=$((40000 + RANDOM % 20000))
sizes_all="$lat_size,$bw_sizes"
bw_iters=$(( iters / 10 > 10 ? iters / 10 : 10 ))

wait_idle() {
    [ "$idle_wait" -gt 0 ] || return 0
    local end=$((SECONDS + idle_wait))
    while [ "$SECONDS" -lt "$end" ]; do
        awk '{exit !($1 < 1.5)}' /proc/loadavg && return 0
        sleep 2
    done
    echo "bench-transports.sh: machine still busy (load $(cut -d' ' -f1 /proc/loadavg)); running anyway" >&2
}

emit() { echo "$1,$2,$3,$4,$5,$6" >> "$csv"; }

# telemem-netpipe over one transport; rows at the sizes of interest.
tm_run() { # round series env...
    local r=$1 s=$2; shift 2
    local f=$out/raw/$s-r$r.csv
    [ -n "$spin" ] && set -- "$@" "TELEMEM_WAIT=$spin"
    local ok=0
    for b in ${sizes_all//,/ }; do
        if env "$@" "$run" -n 2 --timeout 300 "$np" --mode latency,burst \
               --min "$b" --max "$b" --perturbation 0 --time "$ttime" \
               --samples 7 >> "$f" 2>> "$out/raw/$s-r$r.log"; then
            ok=1
        fi
    done
    [ "$ok" = 1 ] || { echo "bench-transports.sh: $s round $r failed (see $out/raw/$s-r$r.log)" >&2; return 0; }
    grep -E '^(latency|burst),0,' "$f" | while IFS=, read -r mode touch bytes reps usec umin mbps mmax; do
        [ "$mode" = latency ] && emit "$r" "$s" lat_usec "$bytes" "$usec" usec
        [ "$mode" = latency ] && emit "$r" "$s" lat_min_usec "$bytes" "$umin" usec
        [ "$mode" = latency ] && emit "$r" "$s" pingpong_mbps "$bytes" "$mbps" MB/s
        [ "$mode" = burst ] && emit "$r" "$s" burst_mbps "$bytes" "$mbps" MB/s
    done
}

fi_run() { # round
    local r=$1 f=$out/raw/fi-r$1.txt
    for b in ${sizes_all//,/ }; do
        local n=$iters
        [ "$b" -gt 4096 ] && n=$bw_iters
        port=$((port + 1))
        timeout 300 fi_pingpong -p "tcp;ofi_rxm" -e rdm -I "$n" -S "$b" -B "$port" \
            > "$out/raw/fi-srv-r$r-$b.txt" 2>&1 &
        local spid=$! try ok=0
        # The server may take a while to listen on a loaded machine.
        for try in 1 2 3 4 5 6 7 8 9 10; do
            sleep 0.5
            if timeout 300 fi_pingpong -p "tcp;ofi_rxm" -e rdm -I "$n" -S "$b" \
                   -P "$port" 127.0.0.1 >> "$f" 2>> "$out/raw/fi-r$r.log"; then
                ok=1; break
            fi
            kill -0 "$spid" 2>/dev/null || break
        done
        [ "$ok" = 1 ] || echo "bench-transports.sh: fi_pingpong $b B failed (round $r)" >&2
        kill "$spid" 2>/dev/null || true
        wait "$spid" 2>/dev/null || true
    done
    # bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec; bytes may
    # read 64k or 1m.
    awk '$1 ~ /^[0-9]+[kmg]?$/ && NF >= 7 {
             b = $1; m = 1
             if (b ~ /k$/) m = 1024; else if (b ~ /m$/) m = 1048576; else if (b ~ /g$/) m = 1073741824
             sub(/[kmg]$/, "", b); print b * m, $6, $7}' "$f" | while read -r bytes mbps usec; do
        [ "$bytes" = "$lat_size" ] && emit "$r" fi lat_usec "$bytes" "$usec" usec
        emit "$r" fi pingpong_mbps "$bytes" "$mbps" MB/s
    done
}

ucx_one() { # round series test size iters [perftest options] -> "Final:" fields
    local r=$1 s=$2 t=$3 b=$4 n=$5
    shift 5
    port=$((port + 1))
    UCX_TLS=tcp timeout 300 ucx_perftest -p "$port" "$@" > "$out/raw/$s-srv-r$r-$t-$b.txt" 2>&1 &
    local spid=$! try ok=0
    for try in 1 2 3 4 5 6 7 8 9 10; do
        sleep 0.5
        if UCX_TLS=tcp timeout 300 ucx_perftest -p "$port" 127.0.0.1 -t "$t" -s "$b" \
               -n "$n" -w $(( n / 10 )) "$@" > "$out/raw/$s-r$r-$t-$b.txt" 2>&1; then
            ok=1; break
        fi
        kill -0 "$spid" 2>/dev/null || break
    done
    [ "$ok" = 1 ] || echo "bench-transports.sh: ucx_perftest $* $t $b B failed (round $r)" >&2
    kill "$spid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    grep '^Final:' "$out/raw/$s-r$r-$t-$b.txt" || true
}

ucx_run() { # round series [perftest options]
    local r=$1 s=$2 line
    shift 2
    # Final: iters lat_typical lat_avg lat_overall bw_avg bw_overall(MiB/s) ...
    line=$(ucx_one "$r" "$s" ucp_am_lat "$lat_size" "$iters" "$@")
    [ -n "$line" ] && emit "$r" "$s" lat_usec "$lat_size" "$(echo "$line" | awk '{print $3}')" usec
    [ -n "$line" ] && emit "$r" "$s" lat_avg_usec "$lat_size" "$(echo "$line" | awk '{print $4}')" usec
    for b in ${bw_sizes//,/ }; do
        line=$(ucx_one "$r" "$s" ucp_am_bw "$b" "$bw_iters" "$@")
        [ -n "$line" ] && emit "$r" "$s" burst_mbps "$b" \
            "$(echo "$line" | awk '{printf "%.2f", $7 * 1.048576}')" MB/s
    done
}

series=()
[ "$have_fi" = 1 ] && series+=(tm-ofi fi)
[ "$have_ucx" = 1 ] && series+=(tm-ucx ucx ucx-e)
[ "${#series[@]}" -gt 0 ] || die "neither fi_pingpong nor ucx_perftest is installed"

for r in $(seq 1 "$rounds"); do
    order=("${series[@]}")
    if [ $((r % 2)) = 0 ]; then
        order=(); for ((i = ${#series[@]} - 1; i >= 0; i--)); do order+=("${series[$i]}"); done
    fi
    for s in "${order[@]}"; do
        wait_idle
        echo "bench-transports.sh: round $r/$rounds: $s (load $(cut -d' ' -f1 /proc/loadavg))" >&2
        case $s in
        tm-ofi) tm_run "$r" tm-ofi TELEMEM_TRANSPORT=ofi "TELEMEM_OFI_PROVIDER=tcp;ofi_rxm" ;;
        tm-ucx) tm_run "$r" tm-ucx TELEMEM_TRANSPORT=ucx UCX_TLS=tcp,self ;;
        fi) fi_run "$r" ;;
        ucx) ucx_run "$r" ucx ;;
        ucx-e) ucx_run "$r" ucx-e -e ;;
        esac
    done
done
echo "loadavg at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/env.txt"

# Summary: medians over rounds, ratios against the targets.
python3 - "$csv" "$lat_size" "$bw_sizes" "$rounds" "$out/env.txt" > "$out/summary.md" <<'PY'
import csv, statistics, sys
path, lat, bws, rounds, envf = sys.argv[1], sys.argv[2], sys.argv[3].split(','), sys.argv[4], sys.argv[5]
vals = {}
for row in csv.DictReader(open(path)):
    vals.setdefault((row['series'], row['metric'], row['bytes']), []).append(float(row['value']))
def med(s, m, b):
    v = vals.get((s, m, b))
    return statistics.median(v) if v else None
print("# Transports vs their own tools (loopback, same run)\n")
print("```")
print(open(envf).read().rstrip())
print("```\n")
print("Latency statistics differ: telemem-netpipe gives the median (and min) of "
      "its samples, fi_pingpong an average, ucx_perftest a 'typical' value "
      "(its average is in results.csv as lat_avg_usec).\n")
print(f"Medians over {rounds} alternating round(s).  Latency: one-way usec "
      "(lower is better, target Telemem <= 1.15 x tool).  Bandwidth: MB/s "
      "(1e6 B/s; higher is better, target Telemem >= 0.85 x tool).\n")
print("ucx_perftest runs twice: as it comes (ucx) and with -e (ucx-e): "
      "endpoints with peer-failure detection, as Telemem makes them so that "
      "a dead peer is an error.  UCX chooses its protocols by that mode "
      "(over tcp without it: rendezvous by zero-copy RMA on two lanes; with "
      "it: rendezvous on active messages, one lane), so the -e rows are the "
      "like-for-like ones; both are shown.\n")
print("| pair | metric | bytes | Telemem | tool | Telemem/tool | target |")
print("|---|---|---|---|---|---|---|")
rows = [("ofi/tcp vs fi_pingpong (average)", "tm-ofi", "fi", "lat_usec", lat, "lat")]
rows += [("ofi/tcp vs fi_pingpong", "tm-ofi", "fi", "pingpong_mbps", b, "bw") for b in bws]
rows += [("ucx/tcp vs ucx_perftest (Telemem median vs typical)", "tm-ucx", "ucx", "lat_usec", lat, "lat")]
rows += [("ucx/tcp vs ucx_perftest (Telemem min vs typical)", "tm-ucx", "ucx", "lat_min_usec", lat, "lat")]
rows += [("ucx/tcp vs ucx_perftest (am_bw)", "tm-ucx", "ucx", "burst_mbps", b, "bw") for b in bws]
rows += [("ucx/tcp vs ucx_perftest -e (Telemem median vs typical)", "tm-ucx", "ucx-e", "lat_usec", lat, "lat")]
rows += [("ucx/tcp vs ucx_perftest -e (Telemem min vs typical)", "tm-ucx", "ucx-e", "lat_min_usec", lat, "lat")]
rows += [("ucx/tcp vs ucx_perftest -e (am_bw)", "tm-ucx", "ucx-e", "burst_mbps", b, "bw") for b in bws]
for name, a, b, m, size, kind in rows:
    x = med(a, m, size)
    y = med(b, "lat_usec" if m == "lat_min_usec" else m, size)
    if x is None or y is None or y == 0:
        print(f"| {name} | {m} | {size} | {x if x is not None else 'n/a'} | {y if y is not None else 'n/a'} | n/a | not measured |")
        continue
    ratio = x / y
    ok = ratio <= 1.15 if kind == "lat" else ratio >= 0.85
    print(f"| {name} | {m} | {size} | {x:.2f} | {y:.2f} | {ratio:.2f} | {'met' if ok else 'missed'} |")
spread = []
for (s, m, b), v in sorted(vals.items()):
    if len(v) > 1:
        spread.append(f"| {s} | {m} | {b} | {min(v):.2f} | {max(v):.2f} |")
if spread:
    print("\nSpread between rounds:\n\n| series | metric | bytes | min | max |\n|---|---|---|---|---|")
    print("\n".join(spread))
PY
echo "bench-transports.sh: wrote $csv and $out/summary.md" >&2
