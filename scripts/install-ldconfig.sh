#!/bin/sh
# install-ldconfig.sh - meson install script: runs ldconfig after
# `meson install` when installing for real (no DESTDIR) as root into a
# library directory the dynamic linker searches (/usr/local/lib/<triplet>
# on Debian), so programs linked against the new libtelemem.so.0 find it.
# Usage (by meson): install-ldconfig.sh LIBDIR   (relative to the prefix)
[ -z "${DESTDIR:-}" ] || exit 0
[ "$(id -u)" = 0 ] || exit 0
command -v ldconfig >/dev/null 2>&1 || exit 0
case "$1" in
    /*) dir=$1 ;;
    *) dir=${MESON_INSTALL_PREFIX:?}/$1 ;;
esac
real=$(readlink -f "$dir") || exit 0
# ldconfig -N -v lists the directories it scans ("DIR: (from FILE:LINE)");
# /usr/lib/<triplet> may appear as /lib/<triplet> (merged /usr).
if ldconfig -N -v 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p' |
        while read -r d; do
            [ "$(readlink -f "$d")" = "$real" ] && exit 0
        done; then
    echo "install-ldconfig: ldconfig (new libraries in $dir)"
    ldconfig
fi
exit 0
