#!/usr/bin/env bash
# install-deps.sh - installs, from Debian 12 packages, what Telemem needs:
#   build    compiler, meson, ninja, pkg-config, python3 (man pages), PMIx,
#            Slurm's PMI-2, libfabric, UCX (always)
#   test     + Open MPI (mpirun/PMIx launch tests), ARMCI-MPI (reference),
#              iproute2 (netns tests), clang + libFuzzer (fuzz.sh), FFTW3 +
#              PAPI, cmake and man-db (install suite), Slurm + munge (srun
#              tests), MPICH's Hydra mpiexec (PMI-1 tests)
#   bench    + Open MPI, NetPIPE, ARMCI-MPI, matplotlib, FFTW3 + PAPI (main job)
#   package  + debhelper, dpkg-dev, fakeroot, lintian, Open MPI, ARMCI-MPI,
#              cmake, man-db (scripts/package.sh: the .debs)
#   nwchem   + gfortran, Debian's Global Arrays, ScaLAPACK, dpkg-dev and
#              nwchem-openmpi (scripts/nwchem.sh; not part of all)
# Usage: scripts/install-deps.sh [build|test|bench|package|nwchem|all]...
#        (needs root)
set -euo pipefail

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h|--help) usage; exit 0;; esac

want_build=1 want_test=0 want_bench=0 want_package=0 want_nwchem=0
for a in "$@"; do
    case "$a" in
        build) ;;
        test) want_test=1 ;;
        bench) want_bench=1 ;;
        package) want_package=1 ;;
        nwchem) want_nwchem=1 ;;
        all) want_test=1; want_bench=1; want_package=1 ;;
        *) echo "install-deps.sh: unknown set '$a' (build, test, bench, package, nwchem, all)" >&2; exit 2 ;;
    esac
done

pkgs=(gcc libc6-dev meson ninja-build pkg-config git python3 libpmix-dev libpmi2-0-dev libfabric-dev libucx-dev)
[ "$want_test" = 1 ] && pkgs+=(python3 openmpi-bin libopenmpi-dev libarmci-mpi-dev iproute2 clang libclang-rt-14-dev libfftw3-dev libpapi-dev python3-matplotlib)
[ "$want_test" = 1 ] && pkgs+=(cppcheck clang-tidy)  # scripts/lint-static.sh
# tests/caf (gfortran -fcoarray=lib) and OpenCoarrays on Open MPI, the
# runtime libcaf_telemem is compared with.
[ "$want_test" = 1 ] && pkgs+=(gfortran libcoarrays-openmpi-dev libcaf-openmpi-3)
# tests/install: a CMake project against the installed prefix; man -l.
[ "$want_test" = 1 ] && pkgs+=(cmake man-db groff-base)
# tests/launcher: a private Slurm (slurmctld, slurmd, srun, munged) and
# MPICH's mpiexec.hydra.  mpich also offers mpirun/mpiexec alternatives:
# keep_openmpi below keeps Open MPI's, which the other tests use.
[ "$want_test" = 1 ] && pkgs+=(slurm-wlm munge mpich)
[ "$want_bench" = 1 ] && pkgs+=(openmpi-bin libopenmpi-dev netpipe-openmpi libarmci-mpi-dev python3-matplotlib libfftw3-dev libpapi-dev)
# bench-transports.sh: libfabric's fi_pingpong and UCX's ucx_perftest.
[ "$want_bench" = 1 ] && pkgs+=(libfabric-bin ucx-utils)
# bench/caf: against OpenCoarrays on Open MPI.
[ "$want_bench" = 1 ] && pkgs+=(gfortran libcoarrays-openmpi-dev libcaf-openmpi-3)
# scripts/nwchem.sh: NWChem from source against Debian's GA, and Debian's
# build of it as the reference.
[ "$want_nwchem" = 1 ] && pkgs+=(gfortran openmpi-bin libopenmpi-dev libglobalarrays-dev libscalapack-openmpi-dev libblas-dev liblapack-dev dpkg-dev bc nwchem-openmpi)
# scripts/package.sh: dpkg-buildpackage, lintian, the packages' build
# dependencies (debian/control) and what its check compiles and runs.
[ "$want_package" = 1 ] && pkgs+=(debhelper dpkg-dev fakeroot lintian libopenmpi-dev openmpi-bin libarmci-mpi-dev cmake man-db groff-base gfortran)

# Installing mpich next to Open MPI must not move mpirun, mpiexec or mpicc
# to MPICH (Open MPI's priority is the higher one, but a manual choice
# would stick): point them back at Open MPI when both are there.
keep_openmpi() {
    local alt target
    for alt in mpirun:/usr/bin/mpirun.openmpi mpi:/usr/bin/mpicc.openmpi; do
        target=${alt#*:}
        [ -e "$target" ] || continue
        if update-alternatives --query "${alt%%:*}" 2>/dev/null |
                grep -qx "Value: $target"; then
            continue
        fi
        if [ "$(id -u)" = 0 ]; then
            # automatic mode picks Open MPI (priority 50 against 40)
            update-alternatives --auto "${alt%%:*}"
            update-alternatives --query "${alt%%:*}" | grep -qx "Value: $target" ||
                update-alternatives --set "${alt%%:*}" "$target"
        else
            echo "install-deps: ${alt%%:*} does not point to Open MPI; run as root: update-alternatives --set ${alt%%:*} $target" >&2
        fi
    done
}

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all present (${pkgs[*]})"
    keep_openmpi
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
keep_openmpi
echo "install-deps: done"
