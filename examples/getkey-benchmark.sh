#!/bin/sh
# Build (if needed) and run the getKey benchmark of the KEK cache.
#
#   sh examples/getkey-benchmark.sh [-enableCache] [-iterations N]
#        [-cacheTtl SEC] [-privateOnly | -secretOnly] [-threads T] [-json]
#
# The arguments go to bench/wks-getkey-bench (see bench/wks-getkey-bench.c
# and docs/CACHE.md).  The build directory is ./build, or $WKS_BUILD_DIR;
# build messages go to stderr, so -json output stays clean on stdout.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${WKS_BUILD_DIR:-"$root/build"}
bench="$build/bench/wks-getkey-bench"

{
	sh "$root/scripts/deps.sh" build   # cmake, libssl-dev, if missing
	if [ ! -f "$build/CMakeCache.txt" ]; then
		cmake -S "$root" -B "$build"
	fi
	# A no-op when everything is up to date.
	cmake --build "$build" -j2 --target wks-getkey-bench
} >&2

exec "$bench" "$@"
