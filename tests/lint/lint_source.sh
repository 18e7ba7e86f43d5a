#!/bin/sh
# lint_source.sh - source rules from docs/style.md and docs/architecture.md:
# getenv only in config/config.c, includes go down the layers only (the
# settings service and the bootstrap below core and the backends, which
# include nothing of core), core and am name no transport or
# backend identifier, backends declare their own settings, no
# abort/exit/assert in library code, every file opens with a comment,
# every log subsystem is one TELEMEM_LOG_FILTER accepts, no function over
# 100 lines in src/, compat/ and tools/, no file over 1,000 lines in src/,
# compat/, tools/, bench/ and tests/, no include loop in core and no call
# loop without its reason, and no citation of a design file outside the
# tree.
cd "$1" || exit 2
fail=0
say() { echo "$*"; fail=1; }

for f in $(grep -rlE 'getenv *\(' src | grep -v '^src/config/config.c$'); do
    say "getenv outside src/config/config.c: $f"
done
for f in $(grep -rlE '#include "(core|am|backends|config)/' src/util src/pack 2>/dev/null); do
    say "src/util and src/pack include nothing above them: $f"
done
for f in $(grep -rl '#include "core/' src/am); do
    say "src/am must not include core headers: $f"
done
for f in $(grep -rlE '#include "(am)/' src/backends); do
    say "src/backends must not include am headers: $f"
done
# The backends include nothing of core: their settings come from the
# settings service (config/config.h), a floor below them.
grep -rn '#include "core/' src/backends \
    && say "src/backends include nothing of core (above); settings: config/config.h"
# The settings service (src/config) uses only util and the settings rows the
# backends declare in their directories (backends/backend_config.h collects
# them; a backend's <name>_config.h holds rows only, no include).
grep -rnE '#include "(core|am|boot|pack)/' src/config \
    && say "src/config includes only util, its own headers and the backends' rows (above)"
grep -rn '#include "backends/' src/config | grep -v '#include "backends/backend_config.h"' \
    && say "src/config includes from src/backends only backend_config.h (above)"
grep -n '#include' src/backends/*/*_config.h \
    && say "a backend's <name>_config.h holds TLM_CONFIG rows only, no include (above)"
grep -n '#include' src/backends/backend_config.h \
    | grep -vE '#include "backends/([a-z]+)/\1_config.h"' \
    && say "src/backends/backend_config.h includes only the backends' <name>_config.h (above)"
# The bootstrap (src/boot) sits below core and the backends: it uses only
# util, and they reach it through its one header, boot/boot.h.
for f in $(grep -rlE '#include "(core|am|backends|pack|config)/' src/boot); do
    say "src/boot includes only util and its own headers: $f"
done
grep -rn '#include "boot/' src --include=*.[ch] | grep -v '^src/boot/' \
    | grep -v '#include "boot/boot.h"' \
    && say "core and the backends reach the bootstrap only through boot/boot.h (above)"
grep -rnwE '"(shm|loop|ofi|ucx)"|HAVE_OFI|HAVE_UCX' src/core src/am && say "core/am name a transport (above)"
# ... nor a backend's identifiers (functions, types, settings, its
# library's symbols and variables), comments included.
grep -rnE '\b((tlm_)?(shm|ofi|ucx|loop|window|cma|fi|ucp|uct|ucs|rxm)_[A-Za-z0-9_]+|(SHM|OFI|UCX|LOOP|WINDOW|FI|UCP|UCT|UCS|RXM)_[A-Z0-9_]+)\b' \
    src/core src/am && say "core/am name a backend identifier (above): it belongs in src/backends/<name>/"
# Backends declare their own settings: a row named after a backend lives in
# that backend's <name>/<name>_config.h (not in core's table), and every
# such file is collected by backends/backend_config.h.
for b in $(ls src/backends); do
    [ -d "src/backends/$b" ] || continue
    B=$(echo "$b" | tr a-z A-Z)
    grep -rnE "^[ \t]*TLM_CONFIG(_ENV)?\(${B}_" src --include=*.h \
        | grep -v "^src/backends/$b/${b}_config.h:" \
        && say "settings of backend $b outside src/backends/$b/${b}_config.h (above)"
    if [ -f "src/backends/$b/${b}_config.h" ]; then
        grep -q "^#include \"backends/$b/${b}_config.h\"" src/backends/backend_config.h \
            || say "src/backends/backend_config.h does not collect src/backends/$b/${b}_config.h"
    fi
done
grep -q '^#include "backends/backend_config.h"' src/config/config_table.h \
    || say "src/config/config_table.h does not include the backends' rows (backends/backend_config.h)"
grep -rnE '\b(abort|exit|assert)\s*\(' src --include=*.c --include=*.h | grep -v '_Static_assert' \
    && say "abort/exit/assert in library code (above)"
for f in $(find src include tools -name '*.[ch]'); do
    head -c 2 "$f" | grep -q '/\*' || say "no opening comment: $f"
done
# TELEMEM_LOG_FILTER takes only the subsystems its range lists: a new
# TLM_LOG_SUBSYS must be added there (src/config/config_table.h).
filter=$(sed -n 's/^TLM_CONFIG(LOG_FILTER, STRING, "[^"]*", "list:\([^"]*\)".*/\1/p' \
    src/config/config_table.h)
[ -n "$filter" ] || say "no list: range on TLM_CONFIG(LOG_FILTER, ...) in src/config/config_table.h"
for sub in $(grep -rhoE '#define TLM_LOG_SUBSYS "[a-z0-9_]+"' src | sed 's/.*"\(.*\)"/\1/' | sort -u) core; do
    case ",$filter," in
    *",$sub,"*) ;;
    *) say "log subsystem '$sub' is missing from TELEMEM_LOG_FILTER's range (src/config/config_table.h)" ;;
    esac
done
# The design documents are in the tree (docs/architecture.md, docs/style.md):
# nothing cites a file outside it.
grep -rnE '(DESIGN|STYLE)\.md|\.\./shared' src include tools tests bench \
    compat scripts docs README.md .clang-format | grep -v '^tests/lint/lint_source.sh:' \
    && say "cites a design file outside the tree (above): use docs/architecture.md, docs/style.md"
# No function over 100 lines in src/, compat/ and tools/ (docs/style.md).  A
# function's lines run from the first line of its declaration (return
# type, attributes, name, parameters: the lines after the last blank line,
# statement, comment or preprocessor line before its brace) to its closing
# brace, both counted, as a reader sees it; counting only the lines between
# the braces let through a function of 101 lines.  Function braces open
# and close in column 0 (.clang-format, BreakBeforeBraces: Linux): a
# definition that opens its body at the end of a line could not be
# measured, so it fails too, as does a column-0 brace inside a body.
awk 'FNR == 1 { open = 0; sig = 1 }
     !open && /^[A-Za-z_].*\)[ \t]*\{[ \t]*$/ {
         printf "%s:%d: function brace not on a line of its own\n", FILENAME, FNR }
     /^\{/ { if (open)
                 printf "%s:%d: brace in column 0 inside a function\n",
                        FILENAME, FNR
             open = sig; next }
     open && /^\}/ { n = FNR - open + 1
                     if (n > 100)
                         printf "%s:%d: function of %d lines (more than 100)\n",
                                FILENAME, open, n
                     open = 0; sig = FNR + 1; next }
     !open && (/^[ \t]*$/ || /;[ \t]*$/ || /^\}/ || /\*\/[ \t]*$/ || /^#/ ||
               /^[ \t]*(\/\*|\*)/ || /\\$/) { sig = FNR + 1 }' \
    $(find src compat tools -name '*.[ch]') | grep . \
    && say "functions over 100 lines, or whose length cannot be measured, in src/, compat/ or tools/ (above): split or reformat them"
# No file in src/, compat/, tools/, bench/ or tests/ over 1,000 lines
# (docs/style.md).
files=$(git ls-files src compat tools bench tests 2>/dev/null)
[ -n "$files" ] || files=$(find src compat tools bench tests -type f) # not a clone
for f in $files; do
    [ -f "$f" ] || continue
    n=$(wc -l <"$f")
    [ "$n" -le 1000 ] || say "$f: $n lines (more than 1,000): split it"
done
# The shm transport's private headers stay among its files
# (docs/architecture.md, "Transport").
grep -rlE '#include "backends/shm/shm_in[lt]\.h"' src | grep -v '^src/backends/shm/' \
    && say "backends/shm/shm_int.h and shm_inl.h are for the shm transport's files only (above)"
# Inside core: no include loop among its headers, and two files that call
# each other say why, each naming the other (docs/architecture.md, "Inside
# core").  The direct path's and the collectives' shared headers stay among
# their files.
python3 - <<'PYEOF' || fail=1
import glob, os, re, sys
bad = 0
heads = {os.path.basename(f): f for f in glob.glob("src/core/*.h")}
inc = {h: set(re.findall(r'#include "core/([a-z_]+\.h)"', open(f).read()))
       for h, f in heads.items()}
def loop(h, path):
    for n in sorted(inc.get(h, ())):
        if n in path:
            return path[path.index(n):] + [n]
        c = loop(n, path + [n])
        if c:
            return c
    return None
for h in sorted(inc):
    c = loop(h, [h])
    if c:
        print("include loop in src/core: " + " -> ".join(c))
        bad = 1
        break
srcs = sorted(glob.glob("src/core/*.c"))
text = {os.path.basename(f): open(f).read() for f in srcs}
code = {k: re.sub(r"/\*.*?\*/", "", v, flags=re.S) for k, v in text.items()}
defs = {}
for k, v in code.items():
    for m in re.finditer(r"^(?!static)[a-z][^\n;=]*?\b(tlm_core_\w+)\(", v, re.M):
        defs[m.group(1)] = k
calls = {k: {defs[n] for n in set(re.findall(r"\btlm_core_\w+\b", v))
             if n in defs and defs[n] != k} for k, v in code.items()}
for a in sorted(calls):
    for b in sorted(calls[a]):
        if a < b and a in calls.get(b, ()):
            if b not in text[a] or a not in text[b]:
                print(f"src/core/{a} and src/core/{b} call each other: each "
                      "says why in a comment naming the other, or the loop goes")
                bad = 1
for f in glob.glob("src/**/*.[ch]", recursive=True):
    n = os.path.basename(f)
    if '#include "core/direct_int.h"' in open(f).read() and not (
            n == "core_direct.c" or n.startswith("direct_")):
        print(f"{f}: core/direct_int.h is for the direct path's files only")
        bad = 1
    if '#include "core/coll_int.h"' in open(f).read() and not (
            n == "core_coll.c" or n.startswith("coll_")):
        print(f"{f}: core/coll_int.h is for the collectives' files only")
        bad = 1
sys.exit(bad)
PYEOF
[ $fail = 0 ] && echo "source rules ok"
exit $fail
