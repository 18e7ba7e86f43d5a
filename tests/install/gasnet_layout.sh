#!/bin/sh
# gasnet_layout.sh - installs the build into a temporary directory (meson
# install --destdir) and looks at it as a GASNet-1 client's build system
# and launcher look at an installed GASNet (docs/gasnet.md, "Installed
# layout"): the release read from include/gasnet_config.h with awk, the
# conduit found as include/telemem-conduit/ with gasnet_core.h and GASNet's
# other conduit headers, for every thread model a program built by a
# makefile that includes telemem-<model>.mak (and one with pkg-config
# gasnet-telemem-<model>) run by bin/gasnetrun_telemem -n 2 without
# LD_LIBRARY_PATH, a gasnet_tools.h program from gasnet_tools-<model>.mak,
# the launcher's options, and a stand-in GASNet tree compiled with
# Telemem's include/ earlier on the path, which must get its own headers.
# Usage: gasnet_layout.sh MESON BUILDDIR SRCDIR PREFIX LIBDIR SANITIZE RPATH
# RPATH: true when the build gives run paths (-Drpath).
set -u
meson=$1 build=$2 src=$3 prefix=$4 libdir=$5 san=$6 rpath=$7
unset LD_LIBRARY_PATH
fail() { echo "FAIL: $*"; exit 1; }

tmp=$(mktemp -d /tmp/telemem-gasnet-layout.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
"$meson" install -C "$build" --no-rebuild --destdir "$tmp/root" \
    >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "meson install"; }
p=$tmp/root$prefix
case "$libdir" in /*) lib=$tmp/root$libdir ;; *) lib=$p/$libdir ;; esac
inc=$p/include conduit=telemem
echo "installed into $p"
extra=""
[ "$san" = none ] || extra="-fsanitize=$san"

# The release, as clients' configure scripts read it: one line each.
ver=""
for part in MAJOR MINOR PATCH; do
    v=$(awk "/GASNET_RELEASE_VERSION_$part/ {print \$3}" "$inc/gasnet_config.h")
    case "$v" in
    ''|*[!0-9]*) fail "gasnet_config.h: GASNET_RELEASE_VERSION_$part is '$v'" ;;
    esac
    ver="$ver${ver:+.}$v"
done
echo "gasnet_config.h: release $ver"

# The conduit, as clients find one: <conduit>-conduit/ with gasnet_core.h.
known=$(cd "$inc" && echo *-conduit | sed -e 's/-conduit//g')
[ "$known" = "$conduit" ] || fail "conduits found in include/: '$known'"
for h in gasnet_core.h gasnet_core_fwd.h gasnet_core_help.h \
         gasnet_extended.h gasnet_extended_fwd.h gasnet_extended_help.h \
         gasnet_vis_fwd.h gasnet_coll_fwd.h gasnet.h gasnet_tools.h; do
    [ -r "$inc/$conduit-conduit/$h" ] || fail "no $conduit-conduit/$h"
done
for h in "$inc"/gasnet*.h; do
    [ "${h##*/}" = gasnet_config.h ] ||
        fail "include/${h##*/}: only gasnet_config.h belongs in include/"
done
echo "include/$conduit-conduit/: the conduit's headers"

# One makefile of a GASNet client: the fragment from the prefix.
cat >"$tmp/client.mk" <<'EOF'
include $(GASNET_ROOT)/include/$(CONDUIT)-conduit/$(CONDUIT)-$(THREADS).mak
hello: $(SRC)/tests/install/hello_gasnet.c
	$(GASNET_CC) $(GASNET_CPPFLAGS) $(GASNET_CFLAGS) -c -o hello.o $(SRC)/tests/install/hello_gasnet.c
	$(GASNET_LD) $(GASNET_LDFLAGS) -o $@ hello.o $(GASNET_LIBS)
EOF
cat >"$tmp/tools.mk" <<'EOF'
include $(GASNET_ROOT)/include/gasnet_tools-$(THREADS).mak
tools: $(SRC)/tests/install/hello_gasnet_tools.c
	$(GASNETTOOLS_CC) $(GASNETTOOLS_CPPFLAGS) $(GASNETTOOLS_CFLAGS) -c -o tools.o $(SRC)/tests/install/hello_gasnet_tools.c
	$(GASNETTOOLS_LD) $(GASNETTOOLS_LDFLAGS) -o $@ tools.o $(GASNETTOOLS_LIBS)
EOF

runpath() {     # runpath PROG: a run path naming the installed libdir
    [ "$rpath" = true ] || return 0
    rp=$(readelf -d "$1" | sed -n 's/.*R[UN]*PATH.*\[\(.*\)\]$/\1/p')
    want=$(realpath "$lib")
    for e in $(echo "$rp" | tr ':' ' '); do
        [ "$(realpath -m "$e")" = "$want" ] && return 0
    done
    fail "$1: run path '$rp' does not name $lib"
}

launch2() {     # launch2 NAME PROG: 2 nodes through bin/gasnetrun_telemem
    "$p/bin/gasnetrun_$conduit" -n 2 "$2" >"$tmp/$1.out" 2>&1
    rc=$?
    cat "$tmp/$1.out"
    [ "$rc" = 0 ] || fail "$1: gasnetrun_$conduit exited $rc"
    [ "$(grep -c ' ok$' "$tmp/$1.out")" = 2 ] || fail "$1: not 2 nodes ok"
    ! grep -qi 'warn\|error' "$tmp/$1.out" || fail "$1: logged a warning"
}

# The fragments name the prefix they were installed for; under DESTDIR
# the tree is elsewhere: GASNET_PREFIX points the fragment at it.
for m in seq par parsync; do
    d=$tmp/$m
    mkdir -p "$d"
    [ -r "$inc/$conduit-conduit/$conduit-$m.mak" ] || fail "no $conduit-$m.mak"
    [ -r "$lib/pkgconfig/gasnet-$conduit-$m.pc" ] || fail "no gasnet-$conduit-$m.pc"
    make -s -C "$d" -f "$tmp/client.mk" GASNET_ROOT="$p" CONDUIT=$conduit \
        THREADS=$m SRC="$src" GASNET_PREFIX="$p" \
        MANUAL_CFLAGS="-Wall -Werror $extra" MANUAL_LDFLAGS="$extra" hello ||
        fail "make with $conduit-$m.mak"
    runpath "$d/hello"
    launch2 "mak-$m" "$d/hello"
    # shellcheck disable=SC2046,SC2086
    cc $extra -Wall -Werror -o "$d/hello-pc" "$src/tests/install/hello_gasnet.c" \
        $(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs \
          "gasnet-$conduit-$m") || fail "cc with pkg-config gasnet-$conduit-$m"
    runpath "$d/hello-pc"
    launch2 "pc-$m" "$d/hello-pc"
done

for m in seq par; do
    d=$tmp/tools-$m
    mkdir -p "$d"
    [ -r "$lib/pkgconfig/gasnet_tools-$m.pc" ] || fail "no gasnet_tools-$m.pc"
    make -s -C "$d" -f "$tmp/tools.mk" GASNET_ROOT="$p" THREADS=$m SRC="$src" GASNETTOOLS_PREFIX="$p" \
        GASNETTOOLS_CFLAGS="-Wall -Werror $extra" \
        GASNETTOOLS_LDFLAGS="$extra" tools || fail "make with gasnet_tools-$m.mak"
    runpath "$d/tools"
    "$d/tools" | grep -q "^gasnet_tools $ver: ok$" || fail "tools-$m did not run"
done
echo "fragments and .pc files: every model built, run without LD_LIBRARY_PATH"

# The launcher: GASNet's options, errors as GASNet's launchers give them.
g=$p/bin/gasnetrun_$conduit
"$g" -t -np 3 -N 1 -c 1 -E A,B -- ./prog x 2>"$tmp/t.out" || fail "gasnetrun -t"
grep -q "telemem-run -n 3 -- ./prog x" "$tmp/t.out" || fail "gasnetrun -t: $(cat "$tmp/t.out")"
"$g" -t -n4 ./prog 2>"$tmp/t.out" || fail "gasnetrun -n4"
grep -q -- '-n 4 --' "$tmp/t.out" || fail "gasnetrun -n4: $(cat "$tmp/t.out")"
! "$g" ./prog 2>/dev/null || fail "gasnetrun without -n ran"
! "$g" -n 2 -x ./prog 2>/dev/null || fail "gasnetrun took an unknown option"
! "$g" -n 0 ./prog 2>/dev/null || fail "gasnetrun took -n 0"
echo "gasnetrun_$conduit: options as GASNet's launchers"

# Another GASNet beside Telemem: with Telemem's include/ first on the
# path, the other's gasnet.h, gasnet_config.h and conduit headers win.
o=$tmp/other/include
mkdir -p "$o/smp-conduit"
cat >"$o/gasnet.h" <<'EOF'
#define _IN_GASNET_H
#include <gasnet_config.h>
#include <gasnet_core.h>
#define OTHER_GASNET_H 1
EOF
cat >"$o/gasnet_config.h" <<'EOF'
#ifndef _IN_GASNET_H
#error not through gasnet.h
#endif
#define OTHER_GASNET_CONFIG 1
EOF
echo '#define OTHER_GASNET_CORE 1' >"$o/smp-conduit/gasnet_core.h"
cat >"$tmp/other.c" <<'EOF'
#include <gasnet.h>
#if !OTHER_GASNET_H || !OTHER_GASNET_CONFIG || !OTHER_GASNET_CORE
#error a header of Telemem hid the other GASNet
#endif
int main(void) { return 0; }
EOF
cc -Wall -Werror -I"$inc" -I"$o" -I"$o/smp-conduit" -o "$tmp/other.out" \
    "$tmp/other.c" || fail "Telemem's include/ hides another GASNet"
echo "another GASNet behind -I $inc keeps its own headers"
echo "gasnet layout: ok"
