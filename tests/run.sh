#!/bin/sh
# Build libwks and run its test suite (CTest over the cmocka programs and
# the end-to-end scripts of wks(1) and wks.so).  --help: the modes.
set -eu
usage() {
	cat <<'EOF'
usage: sh tests/run.sh [--full] [CTEST_ARGS...]

Builds everything (in BUILD_DIR, default build) and runs the test suite
with CTest, one test per core and one more, the slowest first; each test's result and
time are printed as it ends, failures with their output.

Modes:
  (default)  quick: every test and every assertion, with the exhaustive
             tests sampling their inputs: test_tamper_vectors every 128th
             byte of each vector (plus every header and trailer byte but
             for every 8th of the stored MAC) and one real-load sample
             per file, test_tamper every 4th entry byte, test_crash_save
             100 kills, the stress tests 2 s each, cli_vectors every 2nd
             vector file (test_vectors reads every one), cli_keytool's
             truncated Java keystores at every length of the first 64
             bytes and every 97th beyond, test_convert's JCEKS at 10000
             PBE iterations, test_bcstores' truncations and byte changes
             of the Bouncy Castle stores at every 61st position,
             cli_bcstores' BCFKS with three entries, examples_valgrind
             every 2nd example under memcheck (the others plainly), the
             CLI scripts' stores at 10000 PBKDF2 iterations, the PKCS#11
             calls fuzz corpus one input in 8.  About 2 minutes on a 2-core
             machine, build included (108 s, 2026-12-04).
  --full     the exhaustive inputs, as CI's plain stage runs them
             (WKS_TEST_FULL=1): every byte of every vector with both XOR
             values and 4 real-load samples per file, every byte of
             test_tamper's store, 300 kills, 5 s of stress, every vector
             file in cli_vectors, truncations at every length of the first
             256 bytes and every 41st, keytool's 200000 JCEKS iterations,
             every length and byte of the Bouncy Castle stores, keytool's
             BKS-V1, UBER and full BCFKS made afresh, every example under
             memcheck, the CLI scripts' stores at the default 210000
             iterations, every variant of the PKCS#11 programs (TLS 1.2
             and 1.3, RSA, EC and EdDSA keys, every signature mechanism).
             About 8 minutes on a 2-core machine (474 s in a run of .ci/run,
             2026-12-04, loaded).
  --help     this text.

Other arguments go to ctest: -R REGEX (by name), -L LABEL / -LE LABEL
(labels: unit, cli, provider, install, fuzz, slow), e.g.
  sh tests/run.sh -R tamper        sh tests/run.sh -LE slow

Environment: BUILD_DIR, CMAKE_ARGS (extra configure options), JOBS
(parallel builds; default: the number of cores), TEST_JOBS (parallel
tests; default: JOBS + 1, since several tests spend part of their time
waiting for servers, JVMs and child processes), WKS_TEST_FULL=1
(as --full), and the tests' own knobs (WKS_TAMPER_STRIDE, WKS_CRASH_TRIALS,
WKS_STRESS_SECONDS, ...: see the comment at the top of each test).
EOF
}
case ${1:-} in
-h | --help)
	usage
	exit 0
	;;
--full)
	shift
	WKS_TEST_FULL=1
	export WKS_TEST_FULL
	;;
esac
cd "$(dirname "$0")/.."
if [ -n "${WKS_TEST_FULL:-}" ] && [ "$WKS_TEST_FULL" != 0 ]; then
	echo "tests/run.sh: full mode: about 8 minutes on a 2-core machine (--help: the modes)"
else
	echo "tests/run.sh: quick mode: about 2 minutes on a 2-core machine, build included (--help: the modes; --full: the exhaustive run)"
fi
sh scripts/deps.sh test
b=${BUILD_DIR:-build}
j=${JOBS:-$(nproc)}
# One test more than cores: a server's start, a JVM's, a child's exit
# leave a core idle that a third test takes (measured on the 2-core
# machine: 107 s of tests with -j3, 121 s with -j2, 111 s with -j4).
tj=${TEST_JOBS:-$((j + 1))}
t0=$(date +%s)
# Ninja where there is one (scripts/deps.sh installs it): the same
# compiler runs, with a third less build CPU than make's recursion.  A
# build folder configured already keeps its generator.
gen=""
if [ ! -f "$b/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
	gen="-G Ninja"
fi
# shellcheck disable=SC2086
cmake $gen -S . -B "$b" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$b" -j"$j"
t1=$(date +%s)
rc=0
ctest --test-dir "$b" --output-on-failure -j"$tj" "$@" || rc=$?
t2=$(date +%s)
echo "tests/run.sh: $((t2 - t0)) s (build $((t1 - t0)) s, tests $((t2 - t1)) s)"
exit "$rc"
