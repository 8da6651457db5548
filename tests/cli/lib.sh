# shellcheck shell=bash
# The harness shared by the end-to-end scripts of wks(1) (run.sh,
# defects.sh, editing.sh, genkey.sh, truststore.sh, keytool.sh,
# keytool_habits.sh).  Each sources it right after `set -euo pipefail`:
#
#   . "$(dirname "$0")/lib.sh"     # checks WKS_BINARY SHARED_DIR
#   start_tests NAME               # cd into a new mktemp -d folder
#   wks ...; expect 0 "what"; ...
#   end_tests                      # "N passed, M failed"; 1 on a failure
#
# CTest fails a script on a line "FAIL:" (FAIL_REGULAR_EXPRESSION) or on
# its exit status; .ci/run prints the summary line.  WKS_BINARY may be a
# wrapper (tests/cli/valgrind-wks.sh under memcheck): every run of the
# tool goes through "$WKS_BIN".  WKS_TEST_KEEP=1 keeps the folder.

# Sourced without arguments: $# and $1, $2 are the script's.
if [ $# -ne 2 ]; then
	echo "usage: $0 WKS_BINARY SHARED_DIR" >&2
	exit 2
fi
# A name without a slash is looked up in PATH when run.
WKS_BIN=$1
case $WKS_BIN in */*) WKS_BIN=$(readlink -f "$WKS_BIN") ;; esac
SHARED=$(readlink -f "$2")
# shellcheck disable=SC2034 # (for the scripts)
WKSDUMP=$SHARED/tools/wksdump.py

# start_tests NAME: work in a new folder ${TMPDIR:-/tmp}/wks-NAME.XXXXXX,
# removed on exit; $T is its path.
start_tests() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/wks-$1.XXXXXX")
	if [ -n "${WKS_TEST_KEEP:-}" ]; then
		echo "keeping $T" >&2
	else
		trap 'rm -rf "$T"' EXIT
	fi
	cd "$T"
	export WKS_PROPERTIES=
	# The default mode makes its stores with wolfjce.wks.iterationCount
	# 10000 (wolfJCE's floor) instead of 210000: every derivation of a
	# store a script makes then costs a twentieth, with the same code
	# and the same checks.  A check of the default count itself runs
	# its command with WKS_PROPERTIES= (default_props); the full mode
	# (WKS_TEST_FULL=1) makes every store at the default.
	if [ "${WKS_TEST_FULL:-0}" = 0 ]; then
		printf 'wolfjce.wks.iterationCount=10000\n' >"$T/.quick.properties"
		WKS_PROPERTIES=$T/.quick.properties
	fi
	umask 022
}

# default_props CMD...: CMD with the library's own defaults (no
# properties file), for checks of a default itself.
default_props() { WKS_PROPERTIES= "$@"; }

# end_tests: the summary line, last; fails when a check failed.
end_tests() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

passed=0
failed=0
rc=0

# wks ARGS...: run the tool in a new session without a controlling
# terminal (no test can wait for a prompt); stdout in $T/out, stderr in
# $T/err, status in $rc.  A status of 128 or more (a signal: a crash)
# always fails.
wks() {
	set +e
	setsid -w "$WKS_BIN" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	if [ "$rc" -ge 128 ]; then bad "wks ${1-}: killed by a signal (exit $rc)"; fi
}

ok() { passed=$((passed + 1)); }
# bad WHAT: a failed check, with the last command's stderr.
bad() {
	failed=$((failed + 1))
	echo "FAIL: $*" >&2
	if [ -s "$T/err" ]; then show_stderr >&2; fi
}
# show_stderr: how bad() shows $T/err; a script may redefine it.
show_stderr() { sed 's/^/    stderr: /' "$T/err"; }

# expect STATUS WHAT: the last command exited with STATUS.
expect() {
	if [ "$rc" -eq "$1" ]; then ok; else bad "$2: exit $rc, expected $1"; fi
}

# expect_err STATUS REGEX WHAT: exit STATUS, and every stderr line is
# "wks: ..." and one matches REGEX (grep -E).
expect_err() {
	local lines
	lines=$(grep -c '' "$T/err" || true)
	if [ "$rc" -eq "$1" ] && grep -Eq -- "$2" "$T/err" &&
		[ "$lines" -ge 1 ] && [ "$(grep -vc '^wks: ' "$T/err" || true)" -eq 0 ]; then
		ok
	else
		bad "$3: exit $rc (expected $1), stderr must match /$2/"
	fi
}

# check WHAT COMMAND...: COMMAND succeeds.
check() {
	local what=$1
	shift
	if "$@"; then ok; else bad "$what"; fi
}
# not COMMAND...: COMMAND fails (for check).
not() { ! "$@"; }

# sha FILE: its SHA-256 (hex); a missing FILE fails.
sha() { sha256sum "$1" | cut -d' ' -f1; }

# unchanged FILE SHA WHAT: FILE still has SHA-256 SHA.
unchanged() {
	if [ "$(sha "$1")" = "$2" ]; then ok; else bad "$3: $1 was changed"; fi
}

# json EXPR: evaluate a Python expression on the JSON in $T/out (as d).
json() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$T/out" "$1"
}

# expect_out STATUS REGEX WHAT: exit STATUS and stdout matches REGEX
# (grep -E); a script may redefine it.
expect_out() {
	if [ "$rc" -eq "$1" ] && grep -Eq -- "$2" "$T/out"; then
		ok
	else
		bad "$3: exit $rc (expected $1), stdout must match /$2/"
		sed 's/^/    stdout: /' "$T/out" | head -8 >&2
	fi
}

# skip_without_keytool: a script that needs keytool passes with SKIP
# (and a closing count line) where there is none.
skip_without_keytool() {
	if ! command -v keytool >/dev/null 2>&1; then
		echo "SKIP: keytool not found (apt-get install openjdk-17-jdk-headless)"
		echo "0 passed, 0 failed"
		exit 0
	fi
}

# KT ARGS...: keytool, with JCEKS keys at 10000 PBE iterations
# (keytool's default, 200000, makes each key cost seconds under valgrind;
# the algorithm is the same), UTF-8 output for non-ASCII aliases, and a
# JVM that starts quickly (no optimising compiler, serial GC: half the CPU
# time of a short keytool run, the same output).
KT() {
	keytool -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC \
		-J-Djdk.jceks.iterationCount=10000 -J-Dfile.encoding=UTF-8 \
		-J-Dsun.stdout.encoding=UTF-8 "$@"
}

# ossl ARGS...: the openssl command, quiet.
ossl() { openssl "$@" 2>/dev/null; }
