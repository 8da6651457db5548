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

# other_user_path FILE: a path to FILE that another user (the tests play
# nobody with setpriv) can read and execute, printed: a copy in
# $T/.other-user, a folder of mode 755 (the caller makes $T enterable,
# chmod 711 or 755), since the checkout may lie in a folder other users
# cannot enter (root's 0700 home, a mktemp -d) and FILE with it.  A
# script is not copied (the valgrind wrapper: it runs the binary its
# environment names, from CI's checkout, which every user can enter).
other_user_path() {
	local d=$T/.other-user b
	b=$(basename "$1")
	if [ "$(head -c 4 "$1" | tail -c 3)" != ELF ]; then
		printf '%s\n' "$1"
		return
	fi
	mkdir -p "$d"
	chmod 755 "$d"
	if [ ! -e "$d/$b" ]; then
		cp "$1" "$d/$b"
		chmod 755 "$d/$b"
	fi
	printf '%s\n' "$d/$b"
}

# default_props CMD...: CMD with the library's own defaults (no
# properties file), for checks of a default itself.
default_props() { WKS_PROPERTIES='' "$@"; }

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
#
# Where the build compiled tests/cli/KeytoolServer.java (CTest sets
# WKS_KT_CLASSES), KT runs keytool in one JVM kept for the script (a JVM
# start is about 0.6 s of CPU; the scripts run keytool a hundred times):
# the same keytool entry point, arguments, standard input (when KT's is
# not the script's own), output and exit status.  A call whose setting
# could differ from the kept JVM's runs a fresh keytool as before: -J
# options, a provider added from the command line, :env passwords,
# another working folder than $T, another TZ, locale or umask.
# WKS_KT_SERVER=0 turns the kept JVM off.
KT_JOPTS=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC
	-Djdk.jceks.iterationCount=10000 -Dfile.encoding=UTF-8
	-Dsun.stdout.encoding=UTF-8)
KT_STDIN0=$(stat -L -c %d:%i /dev/stdin 2>/dev/null || true)
KT() {
	if kt_kept "$@"; then
		kt_request "$@"
		return
	fi
	keytool "${KT_JOPTS[@]/#/-J}" "$@"
}

# The settings a kept JVM took from the script when it started.
kt_env() { printf '%s|' "$PWD" "${TZ-}" "${LANG-}" "${LC_ALL-}" \
	"${LC_MESSAGES-}" "${JAVA_TOOL_OPTIONS-}" "${JDK_JAVA_OPTIONS-}" \
	"$(umask)"; }

kt_kept() {
	local a
	[ "${WKS_KT_SERVER:-1}" != 0 ] && [ -n "${WKS_KT_CLASSES:-}" ] &&
		[ -f "$WKS_KT_CLASSES/KeytoolServer.class" ] &&
		[ -n "${T:-}" ] && [ "$PWD" = "$T" ] && [ ! -e "$T/.kt/broken" ] ||
		return 1
	for a in "$@"; do
		case $a in
		-J* | -providerpath | -providerclass | -addprovider | \
		-providername | -providerarg | *:env) return 1 ;;
		esac
	done
	if [ -f "$T/.kt/env" ] && [ "$(cat "$T/.kt/env")" != "$(kt_env)" ]; then
		return 1
	fi
	return 0
}

# Start the kept JVM (once per script; the first request waits in the
# pipe while it starts).  It ends with the script, or with $T.
kt_start() {
	local d=$T/.kt
	mkdir -p "$d"
	mkfifo "$d/in" "$d/done"
	kt_env >"$d/env"
	java "${KT_JOPTS[@]}" -Djava.security.manager=allow \
		--add-exports java.base/sun.security.tools.keytool=ALL-UNNAMED \
		-cp "$WKS_KT_CLASSES" KeytoolServer "$d" "$$" \
		</dev/null >"$d/log" 2>&1 &
	echo $! >"$d/pid"
}

kt_request() {
	local d=$T/.kt n ans="" rc kin kdone tries=0
	[ -p "$d/in" ] || kt_start
	n=$BASHPID.$RANDOM$RANDOM
	printf '%s\0' "$@" >"$d/$n.args"
	if [ ! -t 0 ] &&
	   [ "$(stat -L -c %d:%i /dev/stdin 2>/dev/null)" != "$KT_STDIN0" ]; then
		cat >"$d/$n.stdin"
	fi
	if [ /dev/stdout -ef /dev/stderr ]; then
		: >"$d/$n.merge"
	fi
	exec {kin}<>"$d/in" {kdone}<>"$d/done"
	printf '%s\n' "$n" >&"$kin"
	while [ "$ans" != "$n" ]; do
		if ! read -r -t 5 -u "$kdone" ans; then
			tries=$((tries + 1))
			if ! kill -0 "$(cat "$d/pid")" 2>/dev/null || [ $tries -ge 120 ]; then
				exec {kin}>&- {kdone}>&-
				echo "lib.sh: the kept keytool JVM failed (log: $d/log); keytool runs afresh from now" >&2
				cat "$d/log" >&2
				: >"$d/broken"
				rc=0
				if [ -f "$d/$n.stdin" ]; then
					keytool "${KT_JOPTS[@]/#/-J}" "$@" <"$d/$n.stdin" || rc=$?
				else
					keytool "${KT_JOPTS[@]/#/-J}" "$@" || rc=$?
				fi
				rm -f "$d/$n".*
				return "$rc"
			fi
		fi
	done
	exec {kin}>&- {kdone}>&-
	cat "$d/$n.out"
	[ ! -f "$d/$n.err" ] || cat "$d/$n.err" >&2
	rc=$(cat "$d/$n.rc")
	rm -f "$d/$n".*
	return "$rc"
}

# ossl ARGS...: the openssl command, quiet.
ossl() { openssl "$@" 2>/dev/null; }
