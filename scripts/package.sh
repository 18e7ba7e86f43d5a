#!/usr/bin/env bash
# package.sh - builds Telemem's Debian packages from the work tree
# (debian/: dpkg-buildpackage -b -us -uc in a copy), runs lintian on them
# (an error fails), then checks them on this machine without a chroot:
# installs them with apt next to Debian's libarmci-mpi-dev, compiles a
# Telemem, an ARMCI, a GASNet and a Coarray Fortran client with pkg-config
# (and the last with caf-telemem) and one with CMake,
# runs each at 2 ranks with the installed telemem-run, looks up a man page,
# and removes the packages again.  Prints the time each step took.
#
# Usage: scripts/package.sh [--out DIR] [--no-check] [--skip-install]
#   --out DIR       where the .debs, lintian.txt and the log go
#                   (default: build-deb)
#   --no-check      build and lintian only: install nothing
#   --skip-install  do not call scripts/install-deps.sh
# Needs root (apt install).  The packages are removed on exit, also after
# a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
out=build-deb check=1 deps=1
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --no-check) check=0; shift ;;
        --skip-install) deps=0; shift ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "package.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
die() { echo "package.sh: $*" >&2; exit 1; }
t0=$(date +%s) tstep=$t0
step() {    # step NAME: time of the step before, then NAME
    local now; now=$(date +%s)
    [ -z "${cur:-}" ] || echo "package.sh: $cur took $((now - tstep)) s"
    cur=$1 tstep=$now
    echo "== $1"
}

step "dependencies"
[ "$deps" = 0 ] || scripts/install-deps.sh build package

ver=$(dpkg-parsechangelog -l debian/changelog -S Version)
pkgs=$(sed -n 's/^Package: //p' debian/control)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.deb "$out"/lintian.txt
tmp=$(mktemp -d /tmp/telemem-deb.XXXXXX)
installed=0
cleanup() {
    if [ "$installed" = 1 ]; then
        echo "== removing the packages"
        # shellcheck disable=SC2086
        apt-get purge -y -qq -o DPkg::Lock::Timeout=300 $pkgs >/dev/null ||
            echo "package.sh: could not remove $pkgs" >&2
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# The work tree as it is (committed or not, without ignored files), so the
# parent of the source, where dpkg-buildpackage writes, is ours.
step "copy the tree"
mkdir "$tmp/telemem-$ver"
git ls-files -co --exclude-standard -z | tar -c --null -T - -f - |
    tar -x -f - -C "$tmp/telemem-$ver"

step "dpkg-buildpackage"
(cd "$tmp/telemem-$ver" &&
    DEB_BUILD_OPTIONS="parallel=2 noautodbgsym ${DEB_BUILD_OPTIONS:-}" \
    dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 ||
    { tail -40 "$out/build.log"; die "dpkg-buildpackage failed (log: $out/build.log)"; }
cp "$tmp"/*.deb "$out"/
ls -l "$out"/*.deb

step "lintian"
changes=$(ls "$tmp"/*.changes)
lintian --info --display-info "$changes" >"$out/lintian.txt" 2>&1 || true
cat "$out/lintian.txt"
if grep -q '^E: ' "$out/lintian.txt"; then
    die "lintian reported errors ($out/lintian.txt)"
fi
echo "lintian: $(grep -c '^W: ' "$out/lintian.txt" || true) warnings, no errors"

if [ "$check" = 1 ]; then
    [ "$(id -u)" = 0 ] || die "installing the packages needs root (or --no-check)"
    step "install the packages"
    for p in $pkgs; do
        if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
            die "$p is installed already: remove it first (apt-get purge $p)"
        fi
    done
    installed=1
    apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$out"/*.deb >/dev/null

    step "use the packages"
    cd "$tmp"
    unset LD_LIBRARY_PATH
    for c in telemem armci gasnet; do
        # The README's compile line: no rpath needed in /usr.
        # shellcheck disable=SC2046
        cc -Wall -Werror "$src/tests/install/hello_$c.c" \
            $(pkg-config --cflags --libs "$c") -o "hello_$c"
        telemem-run -n 2 --timeout 60 "./hello_$c" | tee "$c.out"
        [ "$(grep -c ' ok$' "$c.out")" = 2 ] || die "hello_$c: not 2 ranks ok"
    done
    cmake -S "$src/tests/install/cmake" -B cmake-build >cmake.log 2>&1 ||
        { cat cmake.log; die "cmake configure against /usr"; }
    cmake --build cmake-build >>cmake.log 2>&1 || { cat cmake.log; die "cmake --build"; }
    telemem-run -n 2 --timeout 60 cmake-build/hello_armci
    # Coarray Fortran: pkg-config and the wrapper (no rpath in /usr).
    # shellcheck disable=SC2046
    gfortran "$src/tests/install/hello_caf.f90" $(pkg-config --cflags --libs caf-telemem) \
        -o hello_caf
    telemem-run -n 2 --timeout 60 ./hello_caf | tee caf.out
    [ "$(grep -c ' ok$' caf.out)" = 2 ] || die "hello_caf: not 2 images ok"
    caf-telemem "$src/tests/install/hello_caf.f90" -o hello_caf_wrapper
    telemem-run -n 2 --timeout 60 ./hello_caf_wrapper
    man -w caf-telemem >/dev/null || die "man caf-telemem: no page"
    man -w telemem_put >/dev/null || die "man telemem_put: no page"
    man -w telemem-run >/dev/null || die "man telemem-run: no page"
    # Next to Debian's ARMCI-MPI: its header and -larmci stay its own.
    if dpkg-query -W -f='${Status}' libarmci-mpi-dev 2>/dev/null | grep -q 'ok installed'; then
        [ "$(dpkg-query -S /usr/include/armci.h | cut -d: -f1)" = libarmci-mpi-dev ] ||
            die "/usr/include/armci.h is not libarmci-mpi-dev's"
        pkg-config --cflags armci | grep -q 'include/telemem/armci' ||
            die "pkg-config --cflags armci does not point at include/telemem/armci"
        echo "co-installed with libarmci-mpi-dev: /usr/include/armci.h is ARMCI-MPI's," \
             "pkg-config armci is Telemem's ($(pkg-config --cflags armci | tr -s ' ' | cut -c1-60)...)"
    else
        echo "libarmci-mpi-dev is not installed: co-installation not checked"
    fi
    cd "$src"
fi
step "done"
echo "package.sh: packages in $out; $(( $(date +%s) - t0 )) s in all"
