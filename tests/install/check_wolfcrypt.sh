#!/bin/sh
# The installed wolfCrypt build (issue 31), as a user sees it:
#   check_wolfcrypt.sh BUILD_DIR SOURCE_DIR LIBDIR CC
# 1. cmake --install into a temporary prefix: wks.h, fork.h and backend.h
#    (WKS_CRYPTO_WOLFCRYPT) installed, convert.h and uri.h not; libwks.so
#    links libwolfssl and no libcrypto.
# 2. libwks.pc: no Requires, Requires.private wolfssl; a program on the
#    public API (tests/backend/crossstore.c) builds and runs with
#    `pkg-config --cflags --libs libwks` and, static, `--static`.
# 3. find_package(libwks) alone: the same program against libwks::wks and
#    libwks::wks_static.
set -u
BUILD=$1 SRC=$2 LIBDIR=$3 CC=$4
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
P=$T/prefix
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && exit 0
	exit 1
}
prog=$SRC/tests/backend/crossstore.c
run() { # what binary
	if "$2" write "$T/s.wks" "$SRC/tests/data/pki" >"$T/run.log" 2>&1 &&
	   "$2" read "$T/s.wks" >>"$T/run.log" 2>&1 &&
	   grep -q '^rsa type 1' "$T/run.log"; then
		ok "$1 writes and reads a store"
	else
		tail -5 "$T/run.log"
		fail "$1 does not run"
	fi
	rm -f "$T/s.wks"
}

if cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1; then
	ok "cmake --install into a temporary prefix"
else
	cat "$T/install.log"; fail "cmake --install"; finish
fi
for f in include/wks/wks.h include/wks/fork.h include/wks/backend.h \
	"$LIBDIR/libwks.so" "$LIBDIR/libwks.a" "$LIBDIR/pkgconfig/libwks.pc" \
	"$LIBDIR/cmake/libwks/libwksConfig.cmake"; do
	if [ -e "$P/$f" ]; then ok "installed $f"; else fail "not installed: $f"; fi
done
for f in include/wks/convert.h include/wks/uri.h; do
	if [ -e "$P/$f" ]; then fail "installed $f (OpenSSL build only)"
	else ok "$f not installed (OpenSSL build only)"; fi
done
if grep -q '^#define WKS_CRYPTO_WOLFCRYPT 1' "$P/include/wks/backend.h" &&
   ! grep -q '^#define WKS_CRYPTO_OPENSSL' "$P/include/wks/backend.h"; then
	ok "wks/backend.h defines WKS_CRYPTO_WOLFCRYPT only"
else
	fail "wks/backend.h: $(grep define "$P/include/wks/backend.h")"
fi
libs=$(ldd "$P/$LIBDIR/libwks.so")
case $libs in
*libcrypto*) fail "libwks.so links libcrypto" ;;
*libwolfssl*) ok "libwks.so links libwolfssl, no libcrypto" ;;
*) fail "libwks.so: $libs" ;;
esac

export PKG_CONFIG_PATH=$P/$LIBDIR/pkgconfig
req=$(pkg-config --print-requires libwks)
reqp=$(pkg-config --print-requires-private libwks)
if [ -z "$req" ] && echo "$reqp" | grep -q '^wolfssl'; then
	ok "libwks.pc: Requires.private $reqp"
else
	fail "libwks.pc: Requires '$req', Requires.private '$reqp'"
fi
# shellcheck disable=SC2046
if $CC -o "$T/pc" "$prog" $(pkg-config --cflags --libs libwks) \
	-Wl,-rpath,"$P/$LIBDIR" 2>"$T/cc.log"; then
	ok "a program builds with pkg-config libwks"
	run "pkg-config build" "$T/pc"
	if ldd "$T/pc" | grep -q libcrypto; then fail "it links libcrypto"; fi
else
	cat "$T/cc.log"; fail "pkg-config build"
fi
# shellcheck disable=SC2046
if $CC -o "$T/pcs" "$prog" $(pkg-config --cflags libwks) "$P/$LIBDIR/libwks.a" \
	$(pkg-config --libs --static libwks | sed 's/-lwks//') 2>"$T/cc.log"; then
	ok "a program links libwks.a with pkg-config --static"
	run "static build" "$T/pcs"
else
	cat "$T/cc.log"; fail "static build"
fi

mkdir -p "$T/cm"
cat >"$T/cm/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(libwks_consumer C)
find_package(libwks REQUIRED)
add_executable(p ${PROG})
target_link_libraries(p PRIVATE libwks::wks)
add_executable(ps ${PROG})
target_link_libraries(ps PRIVATE libwks::wks_static)
EOF
if CC=$CC cmake -S "$T/cm" -B "$T/cm/build" -DCMAKE_PREFIX_PATH="$P" \
	-DPROG="$prog" >"$T/cm.log" 2>&1 &&
	cmake --build "$T/cm/build" >>"$T/cm.log" 2>&1; then
	ok "find_package(libwks) + libwks::wks / libwks::wks_static"
	run "CMake build" "$T/cm/build/p"
	run "CMake static build" "$T/cm/build/ps"
else
	cat "$T/cm.log"; fail "find_package(libwks)"
fi
finish
