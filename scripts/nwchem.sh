#!/usr/bin/env bash
# nwchem.sh - builds NWChem 7.0.2 against Debian's Global Arrays and
# Telemem's libarmci (only the modules SCF, DFT and MP2 energies need,
# cached), then runs water SCF, B3LYP and MP2 (6-31G*) on it and on
# Debian's nwchem.openmpi (ARMCI-MPI), alternating, and prints a table.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/nwchem.sh [options] [build|run|all]   (default: all)

build  NWChem 7.0.2 from Debian's source package (fetched through a private
       apt configuration under DIR, with a deb-src entry: the system's apt
       sources are not touched), NWCHEM_MODULES="nwdft mp2_grad", linked
       with Debian's GA (libga-openmpi.a) and then Telemem's libarmci,
       so that every ARMCI symbol resolves to libarmci.  A second run does
       not rebuild (DIR/nwchem.stamp); --rebuild relinks and rebuilds.
run    water SCF, B3LYP and MP2 energies (6-31G*) at each rank count with
       the Telemem build and with Debian's nwchem.openmpi, alternating the
       order every round; prints energies, wall times (medians), the ratio
       ARMCI-MPI / Telemem (above 1: Telemem is faster) and the ARMCI layer
       each run reported (ARMCI_VERBOSE=1).  Energies must agree to 1e-8.

Options:
  --build DIR     Telemem's meson build directory (default: build)
  --dir DIR       NWChem build and run directory (default: build-nwchem)
  --ranks "N..."  rank counts (default: "2 4")
  --rounds N      alternating rounds (default: 1)
  --jobs N        directories built side by side (default: 3, nice -n 10)
  --rebuild       rebuild NWChem even if DIR/nwchem.stamp exists
  -h, --help      this text
Needs (scripts/install-deps.sh nwchem): gfortran, Open MPI, Debian's GA
(libglobalarrays-dev), ScaLAPACK, BLAS/LAPACK, dpkg-dev, nwchem-openmpi.
EOF
}

top=$(cd "$(dirname "$0")/.." && pwd)
build=build dir=build-nwchem ranks="2 4" rounds=1 jobs=3 rebuild=0 what=all
while [ $# -gt 0 ]; do
    case "$1" in
        --build) build=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --ranks) ranks=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --rebuild) rebuild=1; shift ;;
        -h|--help) usage; exit 0 ;;
        build|run|all) what=$1; shift ;;
        *) echo "nwchem.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
case "$build" in /*) ;; *) build=$top/$build ;; esac
case "$dir" in /*) ;; *) dir=$top/$dir ;; esac
# The build tree's libarmci is named by its soname only (the link name
# libarmci.so exists only when installed, in LIBDIR/telemem).
armci_so=$build/compat/armci/libarmci.so.0
ga_dir=/usr/lib/x86_64-linux-gnu/ga/openmpi
ref_bin=/usr/bin/nwchem.openmpi
nw_ver=7.0.2-4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

log() { echo "nwchem.sh: $*" >&2; }
die() { log "$*"; exit 1; }

need() {
    local missing=()
    for p in gfortran mpifort.openmpi mpirun dpkg-source "$ga_dir/bin/ga-config" \
             "$ref_bin"; do
        command -v "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] ||
        die "missing ${missing[*]} (scripts/install-deps.sh nwchem)"
    [ -e "$armci_so" ] ||
        die "$armci_so not found: build Telemem first (meson setup $build && ninja -C $build)"
}

# The source: Debian's package, through an apt configuration of our own.
fetch_source() {
    [ -d "$dir/src/src" ] && return 0
    local a=$dir/apt
    mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
    echo "deb-src http://deb.debian.org/debian bookworm main" > "$a/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$a/sources.list"
                -o "Dir::Etc::SourceParts=/dev/null"
                -o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache")
    log "fetching the source of nwchem $nw_ver (Debian, ~190 MB)"
    apt-get "${opts[@]}" -qq update
    (cd "$dir" && apt-get "${opts[@]}" -qq source --download-only \
        "nwchem=$nw_ver")
    (cd "$dir" && rm -rf src.tmp &&
        dpkg-source -q -x "nwchem_$nw_ver.dsc" src.tmp && mv src.tmp src)
}

# Debian's ga-config, with ARMCI-MPI (-larmci-openmpi) replaced by
# libarmci given by its path: a -larmci could find ARMCI-MPI's
# libarmci.a in /usr/lib first.
ga_wrapper() {
    mkdir -p "$dir/ga/bin"
    cat > "$dir/ga/bin/ga-config" <<EOF
#!/bin/sh
# ga-config for NWChem: Debian's GA with Telemem's libarmci ($armci_so).
out=\$("$ga_dir/bin/ga-config" "\$@")
armci="$armci_so -Wl,-rpath,$(dirname "$armci_so")"
echo "\$out" | sed "s|-larmci-openmpi -larmci-openmpi|-larmci-openmpi|; s|-larmci-openmpi|\$armci|g"
EOF
    chmod +x "$dir/ga/bin/ga-config"
}

nwchem_env() {
    export NWCHEM_TOP=$dir/src NWCHEM_TARGET=LINUX64 USE_64TO32=y
    export NWCHEM_MODULES="nwdft mp2_grad" NWCHEM_LONG_PATHS=y
    export BLAS_SIZE=4 BLAS_LIB=-lblas LAPACK_LIB=-llapack HAS_BLAS=yes
    export BLASOPT="-lblas -llapack"
    export USE_SCALAPACK=yes SCALAPACK_SIZE=4
    export SCALAPACK=-lscalapack-openmpi BLACS=-lscalapack-openmpi
    export LARGE_FILES=TRUE FC=gfortran USE_MPI=y USE_MPIF=y USE_MPIF4=y
    export MPICC=mpicc.openmpi MPICXX=mpicxx.openmpi MPIF77=mpif77.openmpi
    export MPIFC=mpifort.openmpi MPIF90=mpif90.openmpi
    export MPI_INCLUDE=/usr/include/x86_64-linux-gnu/openmpi
    export MPIRUN_PATH=/usr/bin/mpirun.openmpi
    LIBMPI=$(pkg-config ompi-fort --libs); export LIBMPI
    export EXTERNAL_GA_PATH=$dir/ga
    export LIBDIR=$NWCHEM_TOP/lib/$NWCHEM_TARGET
    unset PYTHONHOME PYTHONVERSION USE_PYTHON64 || true
}

do_build() {
    local stamp=$dir/nwchem.stamp bin=$dir/src/bin/LINUX64/nwchem
    if [ "$rebuild" = 0 ] && [ -e "$stamp" ] && [ -x "$bin" ]; then
        log "using the cached build $bin (--rebuild to build again)"
        return 0
    fi
    mkdir -p "$dir"
    fetch_source
    ga_wrapper
    nwchem_env
    local t0 blog=$dir/build.log
    t0=$(date +%s)
    log "building NWChem (modules: $NWCHEM_MODULES; log: $blog)"
    mkdir -p "$NWCHEM_TOP/bin/LINUX64"
    rm -f "$bin" "$stamp"
    {
        cd "$NWCHEM_TOP/src"
        if [ ! -e "$dir/config.stamp" ]; then
            make nwchem_config
            make 64_to_32
            find . -name include_stamp -delete
            find . -name dependencies -delete
            touch "$dir/config.stamp"
        fi
        # NWChem's top makefile builds its directories one after the
        # other, each with one compiler at a time: after the core, build
        # the module directories in $jobs chains side by side (nwdft, the
        # largest, alone in the first), then let the top make finish.
        local core mods chains=() pids=() i=0 d p
        core=$(make -pn nothing 2>/dev/null |
               sed -n 's/^NW_CORE_SUBDIRS = //p' | sed 's/\$([A-Z_]*)//g')
        mods=$(sed -n 's/^NW_MODULE_SUBDIRS = //p' config/nwchem_config.h)
        for d in $core; do nice -n 10 make -C "$d" || return 1; done
        for d in $mods; do make -C "$d" include_stamp || return 1; done
        for d in $mods; do
            [ "$d" = nwdft ] && [ "$jobs" -gt 1 ] && continue
            chains[i % (jobs > 1 ? jobs - 1 : 1)]+=" $d"
            i=$((i + 1))
        done
        if [ "$jobs" -gt 1 ]; then
            nice -n 10 make -C nwdft & pids+=($!)
        fi
        for d in "${chains[@]}"; do
            (for m in $d; do nice -n 10 make -C "$m" || exit 1; done) &
            pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p" || return 1; done
        nice -n 10 make
        (cd util && nice -n 10 make)
        nice -n 10 make link
    } > "$blog" 2>&1 || die "the build failed: tail $blog"
    [ -x "$bin" ] || die "no $bin after the build: see $blog"
    echo "$(( $(date +%s) - t0 ))" > "$stamp"
    log "built in $(cat "$stamp") s"
}

check_link() {
    local bin=$dir/src/bin/LINUX64/nwchem
    ldd "$bin" | grep -q "$armci_so\|$(dirname "$armci_so")/libarmci.so" ||
        die "$bin does not load $armci_so (ldd)"
    # No ARMCI function may be defined in the executable itself (ARMCI-MPI
    # linked in statically would be).
    local own
    own=$(nm --defined-only "$bin" | awk '$2 ~ /^[TtWw]$/ && $3 ~ /^P?ARMCI_/' |
          head -3)
    [ -z "$own" ] || die "$bin defines ARMCI functions itself: $own"
}

# Inputs: water at the experimental geometry, 6-31G* (the library's
# Cartesian d functions), default convergence.
write_inputs() {
    local r=$dir/run
    mkdir -p "$r"
    local m task
    for m in scf b3lyp mp2; do
        case $m in
            scf) task="task scf energy" ;;
            b3lyp) task=$'dft\n  xc b3lyp\nend\ntask dft energy' ;;
            mp2) task="task mp2 energy" ;;
        esac
        cat > "$r/water_$m.nw" <<EOF
echo
start water_$m
title "water $m/6-31G*"
geometry units angstrom
  O  0.0  0.0     0.1173
  H  0.0  0.7572 -0.4692
  H  0.0 -0.7572 -0.4692
end
basis
  * library 6-31g*
end
$task
EOF
    done
}

# run_one LABEL METHOD NP -> prints "energy wall layer"
run_one() {
    local label=$1 m=$2 np=$3 bin out scratch
    case $label in telemem) bin=$dir/src/bin/LINUX64/nwchem ;; *) bin=$ref_bin ;; esac
    scratch=$dir/run/scratch-$label-$m-$np
    rm -rf "$scratch" && mkdir -p "$scratch"
    out=$dir/run/$label-$m-n$np.out
    local t0 t1 rc=0
    t0=$(date +%s.%N)
    (cd "$scratch" &&
        ARMCI_VERBOSE=1 NWCHEM_BASIS_LIBRARY=$dir/src/src/basis/libraries/ \
        timeout 1800 mpirun --oversubscribe -n "$np" "$bin" \
            "$dir/run/water_$m.nw") > "$out" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    rm -rf "$scratch"
    [ $rc -eq 0 ] || { log "$label $m n$np failed ($rc): tail $out"; echo "fail fail fail"; return; }
    local e layer
    case $m in
        scf) e=$(awk '/Total SCF energy/ {print $5; exit}' "$out") ;;
        b3lyp) e=$(awk '/Total DFT energy/ {print $5; exit}' "$out") ;;
        mp2) e=$(awk '/Total MP2 energy/ {print $4; exit}' "$out") ;;
    esac
    if grep -q '^libarmci over Telemem' "$out"; then
        layer="libarmci/Telemem $(sed -n 's/^libarmci over Telemem \([^:]*\):.*transport \([a-z]*\).*/\1-\2/p' "$out" | head -1)"
    elif grep -q 'ARMCI-MPI initialized' "$out"; then
        layer=ARMCI-MPI
    else
        layer=unknown
    fi
    echo "${e:-none} $(echo "$t1 - $t0" | bc) ${layer// /_}"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2}'; }

do_run() {
    check_link
    write_inputs
    local res=$dir/run/results.txt
    : > "$res"
    local round m np order label
    for round in $(seq 1 "$rounds"); do
        for np in $ranks; do
            for m in scf b3lyp mp2; do
                if [ $(( round % 2 )) -eq 1 ]; then order="telemem armci-mpi"
                else order="armci-mpi telemem"; fi
                for label in $order; do
                    echo "$label $m $np $(run_one "$label" "$m" "$np")" >> "$res"
                    log "round $round: $(tail -1 "$res")"
                done
            done
        done
    done
    print_table "$res"
}

print_table() {
    local res=$1 np m fail=0
    echo "NWChem 7.0.2, water 6-31G*: Telemem's libarmci ($(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')) vs Debian's nwchem.openmpi (ARMCI-MPI 0.3.1)"
    echo "rounds $rounds, build $(cat "$dir/nwchem.stamp" 2>/dev/null || echo '?') s, load: $(uptime | sed 's/.*load average: //')"
    echo
    echo "| method | ranks | E Telemem (Eh) | E ARMCI-MPI (Eh) | |dE| | wall Telemem (s) | wall ARMCI-MPI (s) | ARMCI-MPI/Telemem | layer Telemem | layer ARMCI-MPI |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for np in $ranks; do
        for m in scf b3lyp mp2; do
            local et er tt tr lt lr d ok
            et=$(awk -v m=$m -v n=$np '$1=="telemem" && $2==m && $3==n {print $4; exit}' "$res")
            er=$(awk -v m=$m -v n=$np '$1=="armci-mpi" && $2==m && $3==n {print $4; exit}' "$res")
            tt=$(awk -v m=$m -v n=$np '$1=="telemem" && $2==m && $3==n {print $5}' "$res" | median)
            tr=$(awk -v m=$m -v n=$np '$1=="armci-mpi" && $2==m && $3==n {print $5}' "$res" | median)
            lt=$(awk -v m=$m -v n=$np '$1=="telemem" && $2==m && $3==n {print $6; exit}' "$res")
            lr=$(awk -v m=$m -v n=$np '$1=="armci-mpi" && $2==m && $3==n {print $6; exit}' "$res")
            # every round's energy, both builds, must agree to 1e-8
            ok=$(awk -v m=$m -v n=$np '$2==m && $3==n {if ($4 !~ /^-?[0-9.]+$/) bad=1; v[NR]=$4}
                 END {if (bad) {print "FAIL"; exit} for (i in v) for (j in v) if (v[i]-v[j] > 1e-8 || v[j]-v[i] > 1e-8) {print "FAIL"; exit} print "ok"}' "$res")
            d=$(awk -v a="$et" -v b="$er" 'BEGIN {d=a-b; if (d<0) d=-d; printf "%.1e", d}')
            [ "$ok" = ok ] || { d="$d FAIL"; fail=1; }
            printf '| %s | %s | %s | %s | %s | %.2f | %.2f | %.2f | %s | %s |\n' \
                "$m" "$np" "$et" "$er" "$d" "$tt" "$tr" \
                "$(awk -v a="$tr" -v b="$tt" 'BEGIN {print (b > 0) ? a/b : 0}')" \
                "${lt//_/ }" "${lr//_/ }"
        done
    done
    [ $fail = 0 ] || { log "energies differ by more than 1e-8 (or a run failed)"; return 1; }
}

need
case $what in
    build) do_build ;;
    run) do_run ;;
    all) do_build; do_run ;;
esac
