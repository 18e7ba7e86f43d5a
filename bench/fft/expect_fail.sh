#!/bin/sh
# expect_fail.sh - runs a command that must fail its FFT correctness check:
# exit status 1 and the "FAILED at 2^" line, nothing else (a crash or a
# sanitizer report is not the expected failure).
# Usage: expect_fail.sh COMMAND [ARG]...
out=$("$@" 2>&1)
rc=$?
echo "$out"
if [ "$rc" = 0 ]; then
    echo "FAIL: the run passed; the check missed the corrupted point"
    exit 1
fi
case "$out" in
*Sanitizer*) echo "FAIL: a sanitizer report, not the check"; exit 1 ;;
*"FAILED at 2^"*) echo "ok: exit status $rc and the check's message"; exit 0 ;;
esac
echo "FAIL: exit status $rc without the check's message"
exit 1
