#!/bin/sh
# lint_words.sh - the product speaks of itself only: no text of the tree
# names a step of the team's own process ("session 4", "issue 9") where a
# user needs a date, a version or a commit.  "issue order" and the like
# (issuing operations) are fine: only a number after the word counts.
cd "$1" || exit 2
files=$(git ls-files 2>/dev/null) || files=$(find . -type f ! -path './build*' ! -path './.git/*')
[ -n "$files" ] || files=$(find . -type f ! -path './build*' ! -path './.git/*')
hits=$(echo "$files" | grep -v '^tests/lint/lint_words.sh$' |
    xargs grep -nIiE '\b(session|issues?)s? ?#?[0-9]' 2>/dev/null)
[ -z "$hits" ] && exit 0
echo "$hits"
echo "lint_words: name a date, version or commit instead (above)"
exit 1
