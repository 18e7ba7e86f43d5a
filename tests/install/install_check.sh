#!/bin/sh
# install_check.sh - installs the build into a temporary directory
# (meson install --destdir) and uses it as a user would, without
# LD_LIBRARY_PATH: every installed program and library resolves its
# libraries (ldd), the README's compile lines build a Telemem, an ARMCI and
# a GASNet client against the installed pkg-config files, and telemem-run
# from the install runs each at 2 ranks (mode run); a CMake project finds
# the install with find_package(Telemem) (mode cmake); every man page
# renders without warnings and every exported telemem_* symbol has one
# (mode man).  The install tree is used where it landed, not at its
# prefix: that it runs there shows the RUNPATHs and the pkg-config and
# CMake files are relocatable.
# Usage: install_check.sh run|cmake|man MESON BUILDDIR SRCDIR PREFIX LIBDIR
#            MANDIR SANITIZE INSTALL_BENCHMARKS CLIENTS [CMAKE]
# CLIENTS: the layers built, e.g. "telemem armci gasnet".  TLM_RPATH=true
# (the build gives run paths, -Drpath): the .pc files carry the run path,
# and the README's plain compile line must give a program that runs.
set -u
mode=$1 meson=$2 build=$3 src=$4 prefix=$5 libdir=$6 mandir=$7 san=$8
benches=$9 clients=${10} cmake=${11:-}
unset LD_LIBRARY_PATH
fail() { echo "FAIL: $*"; exit 1; }

tmp=$(mktemp -d /tmp/telemem-install.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
"$meson" install -C "$build" --no-rebuild --destdir "$tmp/root" \
    >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "meson install"; }
p=$tmp/root$prefix
case "$libdir" in /*) lib=$tmp/root$libdir ;; *) lib=$p/$libdir ;; esac
case "$mandir" in /*) man=$tmp/root$mandir ;; *) man=$p/$mandir ;; esac
echo "installed into $p"

# The installed .pc files (relocatable: prefix=${pcfiledir}/...).  A build
# directory configured before pkgconfig.relocatable became the default has
# absolute ones: then use copies pointing at the temporary tree.
pcdir=$lib/pkgconfig
if ! grep -q '^prefix=${pcfiledir}' "$pcdir/telemem.pc"; then
    echo "note: $build has absolute .pc files (meson configure $build" \
         "-Dpkgconfig.relocatable=true); using copies with prefix=$p"
    mkdir -p "$tmp/pc"
    for f in "$pcdir"/*.pc; do
        sed "s|^prefix=.*|prefix=$p|" "$f" >"$tmp/pc/${f##*/}"
    done
    pcdir=$tmp/pc
fi
export PKG_CONFIG_PATH=$pcdir
# Every .pc file points into the tree it was installed in (a file with an
# absolute prefix would find headers left in /usr/local by an earlier
# install, and pass here while failing on a clean machine).
for f in "$pcdir"/*.pc; do
    n=${f##*/}; n=${n%.pc}
    d=$(pkg-config --variable=includedir "$n")
    case "$(realpath -m "$d")" in
    "$(realpath -m "$tmp")"/*) ;;
    *) fail "$n.pc: includedir $d is outside the install tree" ;;
    esac
done
cflags="-Wall -Werror"
[ "$san" = none ] || cflags="$cflags -fsanitize=$san"
fflags=""
[ "$san" = none ] || fflags="-fsanitize=$san"

run2() {    # run2 NAME PROGRAM: 2 ranks through the installed telemem-run
    "$p/bin/telemem-run" -n 2 --timeout 60 "$2" >"$tmp/$1.out" 2>&1
    rc=$?
    cat "$tmp/$1.out"
    [ "$rc" = 0 ] || fail "$1: telemem-run exited $rc"
    [ "$(grep -c ' ok$' "$tmp/$1.out")" = 2 ] || fail "$1: not 2 ranks ok"
    [ -z "$(grep -i 'warn\|error' "$tmp/$1.out")" ] || fail "$1: logged a warning"
}

case "$mode" in
run)
    # Every ELF file of the install finds its libraries by itself.
    find "$tmp/root" -type f | while read -r f; do
        head -c 4 "$f" | grep -q 'ELF' || continue
        case "$f" in *.a) continue ;; esac
        nf=$(ldd "$f" 2>&1 | grep 'not found')
        [ -z "$nf" ] || { echo "$f: $nf"; echo bad >"$tmp/ldd-bad"; }
    done
    [ ! -e "$tmp/ldd-bad" ] || fail "installed files with unresolved libraries"
    # ldd may find libtelemem through ld.so.cache, left there by an earlier
    # install into /usr/local: every ELF file that needs one of our
    # libraries must also carry a RUNPATH relative to itself.
    find "$tmp/root" -type f | while read -r f; do
        head -c 4 "$f" | grep -q 'ELF' || continue
        case "$f" in *.a) continue ;; esac
        d=$(readelf -d "$f" 2>/dev/null) || continue
        echo "$d" | grep -qE 'NEEDED.*\[lib(telemem|armci|gasnet|caf_telemem)\.so' || continue
        echo "$d" | grep -qE '(RUNPATH|RPATH).*\$ORIGIN' ||
            { echo "$f: needs our libraries, no \$ORIGIN RUNPATH"; echo bad >"$tmp/rp-bad"; }
    done
    [ ! -e "$tmp/rp-bad" ] || fail "installed files without a relative RUNPATH"
    echo "ldd: every installed program and library resolves its libraries"
    "$p/bin/telemem-calibrate" --help >/dev/null || fail "telemem-calibrate --help"

    # ARMCI headers stay out of include/ (ARMCI-MPI's place); benchmarks
    # install only on request.
    for h in armci.h armcix.h message.h armciconf.h; do
        [ ! -e "$p/include/$h" ] || fail "include/$h installed (ARMCI-MPI's path)"
        case " $clients " in *" armci "*)
            [ -e "$p/include/telemem/armci/$h" ] || fail "include/telemem/armci/$h missing" ;;
        esac
    done
    [ ! -e "$lib/libarmci.so" ] && [ ! -e "$lib/libarmci.a" ] ||
        fail "libarmci.so/.a in LIBDIR: -larmci would no longer mean ARMCI-MPI"
    if [ "$benches" = false ]; then
        # bin/ holds the user's tools only (a list, so that a new
        # benchmark with install: true is caught whatever its name).
        for f in "$p"/bin/*; do
            case "${f##*/}" in
            telemem-run|telemem-calibrate|gasnetrun_telemem|caf-telemem) ;;
            *) fail "bin/${f##*/} installed: benchmarks go to libexec/telemem, with -Dinstall_benchmarks=true" ;;
            esac
        done
        [ ! -e "$p/libexec/telemem" ] || fail "libexec/telemem installed"
    fi

    # The README's compile lines, run from the installed launcher.
    cd "$tmp" || exit 2
    for c in $clients; do
        if [ "$c" = caf ]; then
            # Coarray Fortran: with pkg-config, and with the wrapper.
            # shellcheck disable=SC2046,SC2086
            gfortran $fflags "$src/tests/install/hello_caf.f90" \
                $(pkg-config --cflags --libs caf-telemem) -o hello_caf ||
                fail "compile hello_caf.f90 with pkg-config caf-telemem"
            run2 caf ./hello_caf
            # shellcheck disable=SC2086
            "$p/bin/caf-telemem" $fflags "$src/tests/install/hello_caf.f90" \
                -o hello_caf_wrapper || fail "compile hello_caf.f90 with caf-telemem"
            run2 caf-wrapper ./hello_caf_wrapper
            continue
        fi
        # Without run paths in the build, the program is given one here.
        rp=""
        [ "${TLM_RPATH:-false}" = true ] ||
            rp="-Wl,-rpath,$(pkg-config --variable=libdir $c)"
        # shellcheck disable=SC2046,SC2086
        cc $cflags "$src/tests/install/hello_$c.c" \
            $(pkg-config --cflags --libs $c) $rp -o "hello_$c" ||
            fail "compile hello_$c.c with pkg-config $c"
        run2 "$c" "./hello_$c"
    done
    ;;
cmake)
    [ -n "$cmake" ] || { echo "SKIP: cmake not found (Debian package cmake)"; exit 77; }
    "$cmake" -S "$src/tests/install/cmake" -B "$tmp/cmake-build" \
        -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_FLAGS="$cflags" \
        -DCMAKE_Fortran_FLAGS="$fflags" \
        -DCLIENTS="$(echo $clients | tr ' ' ';')" \
        >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "cmake configure"; }
    grep 'Telemem ' "$tmp/cmake.log"
    "$cmake" --build "$tmp/cmake-build" >"$tmp/cmake-build.log" 2>&1 ||
        { cat "$tmp/cmake-build.log"; fail "cmake --build"; }
    for c in $clients; do
        run2 "cmake-$c" "$tmp/cmake-build/hello_$c"
    done
    ;;
man)
    command -v man >/dev/null || { echo "SKIP: man not found (man-db)"; exit 77; }
    [ -d "$man/man3" ] || fail "no man pages installed in $man"
    n=0
    cd "$man" || exit 2
    links=0
    for f in man*/*; do
        # A .so link page is checked for its target; one is rendered below.
        if head -n 1 "$f" | grep -q '^\.so '; then
            t=$(sed -n '1s/^\.so //p' "$f")
            [ -e "$t" ] || { echo "$f: .so $t: no such page"; echo bad >"$tmp/man-bad"; }
            links=$((links + 1))
            continue
        fi
        out=$(MANWIDTH=80 man -l --warnings=w "$f" 2>&1 >/dev/null)
        [ -z "$out" ] || { echo "$f: $out"; echo bad >"$tmp/man-bad"; }
        n=$((n + 1))
    done
    out=$(MANWIDTH=80 man -l --warnings=w man3/telemem_put.3 2>&1) ||
        fail "man -l man3/telemem_put.3 (a .so link)"
    echo "$out" | grep -q 'telemem_put()' || fail "telemem_put.3 does not show telemem_put()"
    [ ! -e "$tmp/man-bad" ] || fail "man pages with warnings or broken links (above)"
    echo "man: $n pages render without warnings, $links .so links resolve"
    for s in $(nm -D --defined-only "$lib/libtelemem.so.0" |
               awk '$2 == "T" && $3 ~ /^telemem_/ {print $3}'); do
        [ -e "man3/$s.3" ] || { echo "no man page for $s"; echo bad >"$tmp/man-missing"; }
    done
    [ ! -e "$tmp/man-missing" ] || fail "exported functions without a man page"
    echo "man: every exported telemem_* function has a page"
    for pg in telemem-run.1 telemem-calibrate.1 telemem.7; do
        [ -e "man${pg##*.}/$pg" ] || fail "no $pg"
    done
    MANPATH=$man man -w telemem_put >/dev/null || fail "man telemem_put"
    ;;
*) echo "usage: install_check.sh run|cmake|man ..."; exit 2 ;;
esac
echo "install $mode: ok"
