#!/bin/sh
# Build the fuzz targets with clang (ASan + UBSan + libFuzzer) and run one.
#
#   fuzz/run.sh TARGET SECONDS   fuzz TARGET for SECONDS (nice 19, one job)
#   fuzz/run.sh merge TARGET     minimise the work corpus into
#                                fuzz/corpus/TARGET (only inputs that add
#                                coverage, at most FUZZ_MAX_LEN bytes)
#   fuzz/run.sh replay [TARGET]  run the corpus and regressions once
#   fuzz/run.sh build            just build
#
# TARGET: load load_pw getkey props import jks bks bcfks printcert certs
# convert cacheblob uri ref pkcs11_conf pkcs11_share.  New inputs go to
# build-fuzz/work/TARGET (not committed); crashes to
# build-fuzz/artifacts/TARGET/.  After a run, the line
#   STATS target=... secs=... execs=... execs_per_sec=... cov=... ft=...
# gives the numbers for docs/FUZZING.md (also appended to
# build-fuzz/stats.log).  Environment: BUILD_DIR (default build-fuzz),
# FUZZ_ARGS (extra libFuzzer options), FUZZ_MAX_LEN (default 16384).
set -eu
cd "$(dirname "$0")/.."
b=${BUILD_DIR:-build-fuzz}
max_len=${FUZZ_MAX_LEN:-16384}

build() {
	if [ ! -f "$b/CMakeCache.txt" ]; then
		CC=clang cmake -S . -B "$b" -DWKS_FUZZ=ON -DWKS_SANITIZE=ON \
			-DWKS_BUILD_TESTS=OFF >/dev/null
	fi
	cmake --build "$b" -j"$(nproc)" --target \
		fuzz_load fuzz_load_pw fuzz_getkey fuzz_props fuzz_import fuzz_jks \
		fuzz_bks fuzz_bcfks fuzz_printcert fuzz_certs fuzz_convert \
		fuzz_cacheblob fuzz_uri fuzz_ref fuzz_pkcs11_conf fuzz_pkcs11_share fuzz_pkcs11_rec \
		>/dev/null
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export WKS_PROPERTIES=

case "${1:-}" in
build)
	build
	exit 0
	;;
merge)
	t=$2
	build
	mkdir -p "$b/work/$t" "fuzz/corpus/$t"
	"$b/fuzz/fuzz_$t" -merge=1 -max_len="$max_len" "fuzz/corpus/$t" \
		"$b/work/$t" 2>&1 | tail -3
	du -sh "fuzz/corpus/$t"
	exit 0
	;;
replay)
	build
	for t in ${2:-load load_pw getkey props import jks bks bcfks printcert certs convert cacheblob uri ref pkcs11_conf pkcs11_share pkcs11_rec}; do
		mkdir -p "fuzz/regressions/$t"
		"$b/fuzz/fuzz_$t" -runs=0 "fuzz/corpus/$t" \
			"fuzz/regressions/$t" 2>&1 | tail -1
	done
	exit 0
	;;
""|-h|--help)
	sed -n '2,20p' "$0"
	exit 2
	;;
esac

t=$1
secs=${2:-60}
build
mkdir -p "$b/work/$t" "$b/artifacts/$t"
log="$b/work/$t.log"
start=$(date +%s)
# shellcheck disable=SC2086
nice -n 19 "$b/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=30 \
	-rss_limit_mb=2048 -max_len="$max_len" -dict=fuzz/wks.dict \
	-print_final_stats=1 -artifact_prefix="$b/artifacts/$t/" \
	${FUZZ_ARGS:-} "$b/work/$t" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
end=$(date +%s)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
line="STATS target=$t secs=$((end - start)) execs=${execs:-?} execs_per_sec=${eps:-?} cov=${cov:-?} ft=${ft:-?} rc=${rc:-0} date=$(date -u +%FT%TZ)"
echo "$line" | tee -a "$b/stats.log"
if [ "${rc:-0}" != 0 ]; then
	echo "fuzz_$t stopped (rc=$rc); the end of $log:" >&2
	tail -60 "$log" >&2
	exit 1
fi
