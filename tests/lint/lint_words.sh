#!/bin/sh
# lint_words.sh - the product speaks of itself only: no text of the tree
# names a step of the team's own process (the word session or issue
# followed by a number) where a user needs a date, a version or a commit.
# "issue order" and the like (issuing operations) are fine: only a number
# after the word counts.  Files: git's list when the tree is a clone, else
# every file outside build directories (a source package's build).
cd "$1" || exit 2
files=$(git ls-files 2>/dev/null)
if [ -z "$files" ]; then
    files=$(find . \( -path './build*' -o -path './obj-*' -o -path './.git' \
            -o -path './debian/.debhelper' -o -path './debian/tmp' \) -prune \
            -o -type f -print | sed 's|^\./||')
fi
hits=$(echo "$files" | grep -v '^tests/lint/lint_words.sh$' |
    xargs grep -nIiE '\b(session|issues?)s? ?#?[0-9]' 2>/dev/null)
[ -z "$hits" ] && exit 0
echo "$hits"
echo "lint_words: name a date, version or commit instead (above)"
exit 1
