#!/bin/sh
# Run each example program given (examples/*.c, built) under valgrind's
# memcheck, in a fresh folder of its own, with no arguments:
#
#   sh tests/examples/valgrind.sh PROGRAM...
#
# A program fails if it exits non-zero, or if memcheck reports an error or
# a definite or indirect leak (--error-exitcode=99).  The examples keep
# wolfJCE's default PBKDF2 iteration count; here a properties file lowers
# it to the minimum, 10000 (WKS_PROPERTIES, docs/PROPERTIES.md), so that a
# run takes seconds rather than a minute under memcheck.  Exit 77 (CTest:
# skipped) when valgrind is not installed.
#
# In the default mode (WKS_TEST_FULL unset or 0) every 2nd program runs
# under memcheck (the 1st, 3rd, ...), the others without it (they must
# still exit 0); WKS_TEST_FULL=1 (CI's plain stage) memchecks every one.
set -u
if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind not found: skipped"
	exit 77
fi
[ $# -gt 0 ] || { echo "usage: $0 PROGRAM..." >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wks-examples.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
printf 'wolfjce.wks.iterationCount=10000\n' >"$tmp/fast.properties"
fails=0
i=0
for prog in "$@"; do
	name=$(basename "$prog")
	mkdir "$tmp/$name"
	: >"$tmp/$name.vg"
	vg="valgrind -q --error-exitcode=99 --leak-check=full
		--show-leak-kinds=definite,indirect
		--errors-for-leak-kinds=definite,indirect --log-file=$tmp/$name.vg"
	how="under memcheck"
	if [ "${WKS_TEST_FULL:-0}" = 0 ] && [ $((i % 2)) = 1 ]; then
		vg=""
		how="without memcheck: the default mode memchecks every 2nd"
	fi
	i=$((i + 1))
	# shellcheck disable=SC2086 # (vg: the words of the command)
	if (cd "$tmp/$name" &&
	    WKS_PROPERTIES="$tmp/fast.properties" $vg "$prog" \
		>"$tmp/$name.out" 2>&1); then
		echo "ok:   $name ($how)"
	else
		rc=$?
		echo "FAIL: $name (exit $rc)"
		sed 's/^/  | /' "$tmp/$name.out"
		sed 's/^/  vg| /' "$tmp/$name.vg"
		fails=$((fails + 1))
	fi
done
echo "$(($# - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
