#!/bin/sh
# config_names.sh - the README's TELEMEM_* table names exactly the settings
# the built library parses (its telemem_config_string()), so a row the
# generator took from somewhere else (a comment's example) is caught.
# Usage: config_names.sh PROGRAM README.md
prog=$1 readme=$2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
TELEMEM_BOOTSTRAP=singleton "$prog" >"$tmp/out" || exit 1
sed -n 's/^\(TELEMEM_[A-Z0-9_]*\) = .*/\1/p' "$tmp/out" | sort >"$tmp/lib"
sed -n '/<!-- config-table start -->/,/<!-- config-table end -->/p' "$readme" |
    sed -n 's/^| `\(TELEMEM_[^`]*\)` |.*/\1/p' | sort >"$tmp/doc"
[ -s "$tmp/lib" ] || { echo "the library printed no settings"; exit 1; }
extra=$(comm -13 "$tmp/lib" "$tmp/doc") missing=$(comm -23 "$tmp/lib" "$tmp/doc")
[ -n "$extra" ] && echo "README rows the library does not know:" $extra
[ -n "$missing" ] && echo "settings missing from the README:" $missing
[ -z "$extra$missing" ] || exit 1
echo "config names ok: $(wc -l <"$tmp/lib") settings"
