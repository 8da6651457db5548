#!/bin/sh
# Stores of one backend read by the other and by wksdump.py (issue 31):
#   cross.sh THIS_BUILD OTHER_BUILD SOURCE_DIR SHARED_DIR
# Each build's wks-crossstore writes a store; each build reads both, and
# wksdump.py checks both with the password.  What a file's reads print
# must be the same in both builds.  Exit 77 (skipped) without OTHER_BUILD.
set -eu
this=$1 other=$2 src=$3 shared=$4
a=$this/tests/wks-crossstore b=$other/tests/wks-crossstore
if [ -z "$other" ] || [ ! -x "$b" ]; then
	echo "SKIP: no other build's wks-crossstore (WKS_CROSS_BUILD_DIR)"
	exit 77
fi
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
"$a" write "$t/this.wks" "$src/tests/data/pki"
"$b" write "$t/other.wks" "$src/tests/data/pki"
for f in this other; do
	"$a" read "$t/$f.wks" >"$t/$f.by-this"
	"$b" read "$t/$f.wks" >"$t/$f.by-other"
	if cmp -s "$t/$f.by-this" "$t/$f.by-other"; then
		echo "ok: $f.wks reads the same in both builds ($(grep -c '^[a-z0-9]* type' "$t/$f.by-this") entries)"
	else
		echo "FAIL: $f.wks reads differently:"; diff "$t/$f.by-this" "$t/$f.by-other" | head
		fail=1
	fi
	if python3 "$shared/tools/wksdump.py" dump --password cross-store-password \
	       "$t/$f.wks" >"$t/$f.dump" 2>&1; then
		echo "ok: wksdump.py verifies $f.wks"
	else
		echo "FAIL: wksdump.py on $f.wks:"; tail -5 "$t/$f.dump"
		fail=1
	fi
done
echo "builds: $this <-> $other"
exit $fail
