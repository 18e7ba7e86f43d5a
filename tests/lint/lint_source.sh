#!/bin/sh
# lint_source.sh - source rules from docs/style.md: getenv only in
# core_config.c, includes go down the layers only (the bootstrap below core
# and the backends), core and am name no transport, no abort/exit/assert in
# library code, every file opens with a comment, and every log subsystem is
# one TELEMEM_LOG_FILTER accepts.
cd "$1" || exit 2
fail=0
say() { echo "$*"; fail=1; }

for f in $(grep -rlE 'getenv *\(' src | grep -v '^src/core/core_config.c$'); do
    say "getenv outside src/core/core_config.c: $f"
done
for f in $(grep -rlE '#include "(core|am|backends)/' src/util src/pack 2>/dev/null); do
    say "src/util and src/pack include nothing above them: $f"
done
for f in $(grep -rl '#include "core/' src/am); do
    say "src/am must not include core headers: $f"
done
for f in $(grep -rlE '#include "(am)/' src/backends); do
    say "src/backends must not include am headers: $f"
done
for f in $(grep -rl '#include "core/' src/backends); do
    say "src/backends must not include core headers: $f"
done
# The bootstrap (src/boot) sits below core and the backends: it uses only
# util, and they reach it through its one header, boot/boot.h.
for f in $(grep -rlE '#include "(core|am|backends|pack)/' src/boot); do
    say "src/boot includes only util and its own headers: $f"
done
grep -rn '#include "boot/' src --include=*.[ch] | grep -v '^src/boot/' \
    | grep -v '#include "boot/boot.h"' \
    && say "core and the backends reach the bootstrap only through boot/boot.h (above)"
grep -rnwE '"(shm|loop|ofi|ucx)"|HAVE_OFI|HAVE_UCX' src/core src/am && say "core/am name a transport (above)"
grep -rnE '\b(abort|exit|assert)\s*\(' src --include=*.c --include=*.h | grep -v '_Static_assert' \
    && say "abort/exit/assert in library code (above)"
for f in $(find src include tools -name '*.[ch]'); do
    head -c 2 "$f" | grep -q '/\*' || say "no opening comment: $f"
done
# TELEMEM_LOG_FILTER takes only the subsystems its range lists: a new
# TLM_LOG_SUBSYS must be added there (src/core/config_table.h).
filter=$(sed -n 's/^TLM_CONFIG(LOG_FILTER, STRING, "[^"]*", "list:\([^"]*\)".*/\1/p' \
    src/core/config_table.h)
[ -n "$filter" ] || say "no list: range on TLM_CONFIG(LOG_FILTER, ...) in src/core/config_table.h"
for sub in $(grep -rhoE '#define TLM_LOG_SUBSYS "[a-z0-9_]+"' src | sed 's/.*"\(.*\)"/\1/' | sort -u) core; do
    case ",$filter," in
    *",$sub,"*) ;;
    *) say "log subsystem '$sub' is missing from TELEMEM_LOG_FILTER's range (src/core/config_table.h)" ;;
    esac
done
# The design documents are in the tree (docs/architecture.md, docs/style.md):
# nothing cites a file outside it.
grep -rnE '(DESIGN|STYLE)\.md|\.\./shared' src include tools tests bench \
    compat scripts docs README.md .clang-format | grep -v '^tests/lint/lint_source.sh:' \
    && say "cites a design file outside the tree (above): use docs/architecture.md, docs/style.md"
[ $fail = 0 ] && echo "source rules ok"
exit $fail
