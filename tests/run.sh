#!/bin/sh
# Build libwks and run the whole test suite (CTest over cmocka programs
# and end-to-end scripts).  Extra arguments go to ctest (e.g. -R vectors).
#   BUILD_DIR (default: build)  CMAKE_ARGS (extra configure options)
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh test
b=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$b" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$b" -j"$(nproc)"
ctest --test-dir "$b" --output-on-failure -j"$(nproc)" "$@"
