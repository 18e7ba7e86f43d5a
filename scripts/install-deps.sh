#!/usr/bin/env bash
# install-deps.sh - installs, from Debian 12 packages, what Telemem needs:
#   build  compiler, meson, ninja, pkg-config, PMIx, libfabric, UCX (always)
#   test   + Open MPI (mpirun/PMIx launch tests), ARMCI-MPI (reference),
#            iproute2 (netns tests), clang + libFuzzer (fuzz.sh), FFTW3 + PAPI
#   bench  + Open MPI, NetPIPE, ARMCI-MPI, matplotlib, FFTW3 + PAPI (main job)
#   nwchem + gfortran, Debian's Global Arrays, ScaLAPACK, dpkg-dev and
#            nwchem-openmpi (scripts/nwchem.sh; not part of all)
# Usage: scripts/install-deps.sh [build|test|bench|nwchem|all]...   (needs root)
set -euo pipefail

usage() { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h|--help) usage; exit 0;; esac

want_build=1 want_test=0 want_bench=0 want_nwchem=0
for a in "$@"; do
    case "$a" in
        build) ;;
        test) want_test=1 ;;
        bench) want_bench=1 ;;
        nwchem) want_nwchem=1 ;;
        all) want_test=1; want_bench=1 ;;
        *) echo "install-deps.sh: unknown set '$a' (build, test, bench, nwchem, all)" >&2; exit 2 ;;
    esac
done

pkgs=(gcc libc6-dev meson ninja-build pkg-config git libpmix-dev libfabric-dev libucx-dev)
[ "$want_test" = 1 ] && pkgs+=(python3 openmpi-bin libopenmpi-dev libarmci-mpi-dev iproute2 clang libclang-rt-14-dev libfftw3-dev libpapi-dev python3-matplotlib)
[ "$want_test" = 1 ] && pkgs+=(cppcheck clang-tidy)  # scripts/lint-static.sh (issue 10)
[ "$want_bench" = 1 ] && pkgs+=(openmpi-bin libopenmpi-dev netpipe-openmpi libarmci-mpi-dev python3-matplotlib libfftw3-dev libpapi-dev)
# bench-transports.sh: libfabric's fi_pingpong and UCX's ucx_perftest.
[ "$want_bench" = 1 ] && pkgs+=(libfabric-bin ucx-utils)
# scripts/nwchem.sh: NWChem from source against Debian's GA, and Debian's
# build of it as the reference.
[ "$want_nwchem" = 1 ] && pkgs+=(gfortran openmpi-bin libopenmpi-dev libglobalarrays-dev libscalapack-openmpi-dev libblas-dev liblapack-dev dpkg-dev bc nwchem-openmpi)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all present (${pkgs[*]})"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages: ${missing[*]}; run as root (or: sudo apt-get install ${missing[*]})" >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
