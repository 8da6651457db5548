#!/usr/bin/env bash
# docs/PROVIDER.md's "First steps" block, run as written: the lines
# between "<!-- quickstart: begin -->" and "<!-- quickstart: end -->",
# with only the port 8443 replaced by a free one, in an empty folder, with
# PATH and OPENSSL_MODULES pointing at the build as the section's first
# block says.  A newcomer's first contact with the provider stays true.
#
# usage: quickstart.sh DOC WKS_BINARY PROVIDER_DIR
# Passes when every line succeeds and the client ends with
# "Verify return code: 0 (ok)".  Bounded by timeout; the server is killed
# on every exit path.
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 DOC WKS_BINARY PROVIDER_DIR" >&2
	exit 2
fi
DOC=$(readlink -f "$1")
WKS_DIR=$(dirname "$(readlink -f "$2")")
PROV_DIR=$(readlink -f "$3")
T=$(mktemp -d "${TMPDIR:-/tmp}/wks-quick.XXXXXX")
trap 'rm -rf "$T"' EXIT

block=$(sed -n '/^<!-- quickstart: begin -->$/,/^<!-- quickstart: end -->$/p' \
	"$DOC" | sed '1,2d;$d' | sed '$d')
if [ -z "$block" ] || ! grep -q '8443' <<<"$block"; then
	echo "FAIL: no quickstart block with port 8443 in $DOC" >&2
	exit 1
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

{
	echo 'set -e'
	# the block's status is kept; a server still running is killed
	echo 'trap '\''rc=$?; for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done; exit $rc'\'' EXIT'
	printf '%s\n' "${block//8443/$port}"
} >"$T/run.sh"

cd "$T"
set +e
PATH="$WKS_DIR:$PATH" OPENSSL_MODULES="$PROV_DIR" WKS_PROPERTIES= \
	OPENSSL_CONF=/dev/null setsid -w timeout 120 bash run.sh \
	>"$T/out" 2>&1 </dev/null
rc=$?
set -e
if [ $rc -ne 0 ] || ! grep -q 'Verify return code: 0 (ok)' "$T/out"; then
	echo "FAIL: the quickstart block exited $rc; its output:" >&2
	sed 's/^/    /' "$T/out" >&2
	exit 1
fi
grep -E '^(subject=|Verification|Verify return code)' "$T/out" | sort -u
echo "quickstart: passed (port $port)"
