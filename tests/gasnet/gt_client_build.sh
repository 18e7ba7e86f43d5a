#!/bin/sh
# gt_client_build.sh - builds GASNet clients the way GASNet users do, from
# the files libgasnet installs (headers and .mak fragments in
# include/telemem-conduit/, include/gasnet_config.h, gasnet*.pc) laid out
# in a scratch prefix as meson install lays them out: gt_par.c with only
# $(pkg-config --cflags --libs gasnet-par) and gt_harness.c through
# telemem-seq.mak, both with -Werror -Wimplicit-function-declaration, and
# checks that pkg-config resolves gasnet with only our .pc files present.
#   gt_client_build.sh SRCDIR BUILDDIR LIBDIR
set -eu
src=$1
build=$2
libdir=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gt-client.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include/telemem-conduit" "$tmp/$libdir/pkgconfig" "$tmp/pc"
cp "$src/compat/gasnet/"gasnet*.h "$build/compat/gasnet/gasnet_config.h" \
   "$tmp/include/telemem-conduit/"
rm "$tmp/include/telemem-conduit/gasnet_internal.h"
cp "$build/compat/gasnet/gasnet_config_prefix.h" "$tmp/include/gasnet_config.h"
for l in "$build/compat/gasnet/libgasnet.so"* "$build/src/libtelemem.so"*; do
    ln -s "$l" "$tmp/$libdir/"
done
relocate() { sed -e "s|^prefix=.*|prefix=$tmp|" \
                 -e "s|^GASNET_PREFIX = .*|GASNET_PREFIX = $tmp|" \
                 -e "s|^GASNETTOOLS_PREFIX = .*|GASNETTOOLS_PREFIX = $tmp|" "$1"; }
for m in seq par parsync; do
    relocate "$build/compat/gasnet/telemem-$m.mak" \
        >"$tmp/include/telemem-conduit/telemem-$m.mak"
done
for pc in "$build/compat/gasnet/"gasnet*.pc; do
    relocate "$pc" >"$tmp/pc/$(basename "$pc")"
done
export PKG_CONFIG_PATH="$tmp/pc" PKG_CONFIG_LIBDIR="$tmp/pc"
strict="-Werror -Wall -Wimplicit-function-declaration"

for p in gasnet gasnet-seq gasnet-par gasnet-parsync; do
    pkg-config --cflags --libs "$p" >/dev/null
done
echo "pkg-config: gasnet, gasnet-seq, gasnet-par, gasnet-parsync resolve alone"

# shellcheck disable=SC2046
cc $strict -o "$tmp/gt_par" "$src/tests/gasnet/gt_par.c" \
    $(pkg-config --cflags --libs gasnet-par)
echo "gt_par built with pkg-config gasnet-par"

cat >"$tmp/Makefile" <<MK
include $tmp/include/telemem-conduit/telemem-seq.mak
gt_harness: $src/tests/gasnet/gt_harness.c
	\$(GASNET_CC) \$(GASNET_CPPFLAGS) \$(GASNET_CFLAGS) $strict -c -o gt_harness.o \$<
	\$(GASNET_LD) \$(GASNET_LDFLAGS) -o \$@ gt_harness.o \$(GASNET_LIBS)
MK
make -s -C "$tmp" gt_harness
echo "gt_harness built with telemem-seq.mak"
# The fragment gives the program libgasnet's directory as its run path
# (unless -Drpath left it out); tests/install runs one without
# LD_LIBRARY_PATH (this tree's libraries are the build's).
if grep -q '^GASNET_RPATH = -Wl' "$tmp/include/telemem-conduit/telemem-seq.mak"; then
    readelf -d "$tmp/gt_harness" | grep -E "R(UN)?PATH.*\[$tmp/$libdir\]" ||
        { echo "gt_harness: no run path $tmp/$libdir"; exit 1; }
fi

# Both run as a single node without a launcher (not against a sanitizer
# build's libgasnet: a plain client cannot load it).
if ldd "$build/compat/gasnet/libgasnet.so" | grep -q 'lib[at]san'; then
    echo "libgasnet is a sanitizer build: the clients are not run"
else
    LD_LIBRARY_PATH="$tmp/$libdir" "$tmp/gt_harness"
    LD_LIBRARY_PATH="$tmp/$libdir" "$tmp/gt_par"
fi
echo "client builds: PASS"
