#!/usr/bin/env bash
# Install and packaging test (CTest: install_packaging): what a user or a
# distribution meets after `cmake --install`.
#
#   1. `cmake --install BUILD_DIR --prefix TMP` succeeds; the headers, the
#      libraries, libwks.pc, the CMake package, wks and the man pages are
#      where the GNU install directories say; nothing installed carries an
#      RPATH into the build tree; a DESTDIR install stays under DESTDIR.
#      The examples (every examples/*.c, and examples/README) are installed,
#      unchanged, under the doc dir (WKS_INSTALL_DOCDIR, CMake's
#      CMAKE_INSTALL_DOCDIR; default share/doc/libwks), in examples/.
#   2. `man -M TMP/share/man -w wks libwks` finds both pages (man1, man3).
#   3. Every installed example builds against the installed library with
#      pkg-config alone (`cc FILE $(pkg-config --cflags --libs libwks)`),
#      also statically (`pkg-config --static`, libwks.a), and runs.
#   4. A throwaway CMake project that only does find_package(libwks
#      REQUIRED) and links libwks::wks (and libwks::wks_static) builds
#      every installed example, and they run.
#   5. The provider wks.so is in the modules directory under the prefix,
#      exports OSSL_provider_init only, and the stock openssl finds it
#      (OPENSSL_MODULES, and an openssl.cnf with module =) and reads a key
#      the installed wks stored.
#   6. The PKCS#11 module libwks-pkcs11.so is in the pkcs11/ folder under
#      the prefix (WKS_PKCS11_MODULEDIR), exports C_GetFunctionList,
#      C_GetInterfaceList and C_GetInterface only, its p11-kit module file
#      is share/p11-kit/modules/wks.module, and `p11-kit list-modules`
#      reading that file lists the module with a token the installed wks
#      made; the installed wks-pkcs11-logout loads it from bin/.
#
# Examples run without arguments in an empty temporary folder; one that
# needs arguments says WKS_EXAMPLE_NEEDS_ARGS in its source and is only
# built.
#
# usage: check.sh BUILD_DIR SOURCE_DIR LIBDIR CC
#   LIBDIR is CMAKE_INSTALL_LIBDIR (e.g. lib or lib/x86_64-linux-gnu),
#   CC the C compiler the library was built with.
# Prints "N passed, M failed" last; exits 1 on any failure.
set -euo pipefail

if [ $# -ne 4 ]; then
	echo "usage: $0 BUILD_DIR SOURCE_DIR LIBDIR CC" >&2
	exit 2
fi
BUILD=$(readlink -f "$1")
SRC=$(readlink -f "$2")
LIBDIR=$3
CC=$4
T=$(mktemp -d "${TMPDIR:-/tmp}/wks-install.XXXXXX")
if [ -n "${WKS_TEST_KEEP:-}" ]; then
	echo "keeping $T" >&2
else
	trap 'rm -rf "$T"' EXIT
fi
P=$T/prefix
export WKS_PROPERTIES=
unset CFLAGS LDFLAGS CPPFLAGS MANPATH
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() {
	echo "$passed passed, $failed failed"
	if [ "$failed" -eq 0 ]; then exit 0; fi
	exit 1
}

# ---- 1. cmake --install ---------------------------------------------------
if cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1; then
	ok "cmake --install into a temporary prefix"
else
	cat "$T/install.log"
	fail "cmake --install"
	finish
fi
# Everything lands under the prefix (a staging or distro install must not
# write anywhere else).
outside=$(grep -v "^$P/" "$BUILD/install_manifest.txt" || true)
if [ -z "$outside" ]; then
	ok "every installed file is under the prefix"
else
	fail "installed outside the prefix: $outside"
fi
# A distribution's staged install: everything under DESTDIR.
if DESTDIR=$T/stage cmake --install "$BUILD" >"$T/stage.log" 2>&1; then
	# The manifest lists the paths without DESTDIR (and has no final
	# newline).
	missing=""
	while IFS= read -r f || [ -n "$f" ]; do
		[ -e "$T/stage$f" ] || [ -L "$T/stage$f" ] || missing="$missing $f"
	done <"$BUILD/install_manifest.txt"
	n_manifest=$(grep -c '' "$BUILD/install_manifest.txt")
	n_staged=$(find "$T/stage" ! -type d | wc -l)
	if [ -z "$missing" ] && [ "$n_manifest" -eq "$n_staged" ]; then
		ok "DESTDIR install: all $n_staged files under DESTDIR"
	else
		fail "DESTDIR install: $n_staged files staged, $n_manifest installed, not under DESTDIR:$missing"
	fi
else
	cat "$T/stage.log"
	fail "DESTDIR=... cmake --install"
fi
for f in include/wks/wks.h include/wks/convert.h include/wks/uri.h \
	include/wks/fork.h \
	"$LIBDIR/libwks.so" "$LIBDIR/libwks.a" \
	"$LIBDIR/pkgconfig/libwks.pc" "$LIBDIR/cmake/libwks/libwksConfig.cmake" \
	"$LIBDIR/cmake/libwks/libwksConfigVersion.cmake" \
	"$LIBDIR/cmake/libwks/libwksTargets.cmake" bin/wks \
	share/man/man1/wks.1 share/man/man3/libwks.3; do
	if [ -e "$P/$f" ]; then ok "installed $f"; else fail "not installed: $f"; fi
done
# The examples' sources under the doc dir, each the same as in the source
# tree (libwks(3) and the README name this folder), and nothing else there.
EX=$P/${WKS_INSTALL_DOCDIR:-share/doc/libwks}/examples
want=$(cd "$SRC/examples" && ls -- *.c README 2>/dev/null | sort | tr '\n' ' ' ||
	true)
got=$(cd "$EX" 2>/dev/null && ls | sort | tr '\n' ' ' || true)
if [ "$got" = "$want" ]; then
	ok "the examples are installed in ${EX#"$P"/}: $got"
else
	fail "${EX#"$P"/} holds: '$got' (expected: '$want')"
fi
for f in "$SRC"/examples/*.c "$SRC/examples/README"; do
	if ! cmp -s "$f" "$EX/$(basename "$f")"; then
		fail "installed example differs from $f"
	fi
done
# bin/ gets the tools only (benchmarks and examples stay in the build
# tree): wks, and wks-pkcs11-logout with the PKCS#11 module.
bins=$(cd "$P/bin" && echo *)
want_bins=wks
[ -n "${WKS_PKCS11_MODULEDIR:-}" ] && want_bins="wks wks-pkcs11-logout"
if [ "$bins" = "$want_bins" ]; then
	ok "bin/ holds $want_bins only"
else
	fail "bin/ holds: $bins (expected $want_bins only)"
fi
# Every man page directly under share/man/ is misplaced (man(1) looks
# only in man<section>/ folders).
stray=$(find "$P/share/man" -maxdepth 1 -type f 2>/dev/null || true)
if [ -z "$stray" ]; then
	ok "no man page outside share/man/man<section>/"
else
	fail "man pages outside a man<section> folder: $stray"
fi
# Build-tree RPATHs must not survive the install (a distro's lintian and
# the loader would both complain).
if command -v readelf >/dev/null; then
	bad=""
	for f in "$P"/bin/* "$P/$LIBDIR"/libwks.so*; do
		if [ ! -f "$f" ] || [ -L "$f" ]; then continue; fi
		if readelf -d "$f" 2>/dev/null | grep -E 'R(UN)?PATH' |
			grep -qF "$BUILD"; then
			bad="$bad $f"
		fi
	done
	if [ -z "$bad" ]; then
		ok "no RPATH into the build tree"
	else
		fail "RPATH into the build tree:$bad"
	fi
fi

# ---- 2. man -w --------------------------------------------------------------
if command -v man >/dev/null; then
	if out=$(man -M "$P/share/man" -w wks libwks 2>&1) &&
		grep -q "/man1/wks\.1" <<<"$out" &&
		grep -q "/man3/libwks\.3" <<<"$out"; then
		ok "man -M PREFIX/share/man -w wks libwks finds both pages"
	else
		fail "man -M PREFIX/share/man -w wks libwks: $out"
	fi
else
	echo "SKIP: man -w (man is not installed; scripts/deps.sh test installs man-db)"
fi

# ---- 3. pkg-config alone ----------------------------------------------------
export PKG_CONFIG_PATH=$P/$LIBDIR/pkgconfig
# The examples keep wolfJCE's default iteration count (210000); in the
# default mode they run at 10000 (wolfJCE's floor), the full mode
# (WKS_TEST_FULL=1) keeps the default: the same code either way.
EXPROPS=
if [ "${WKS_TEST_FULL:-0}" = 0 ]; then
	EXPROPS=$T/quick.properties
	printf 'wolfjce.wks.iterationCount=10000\n' >"$EXPROPS"
fi
run_example() { # NAME BINARY SOURCE
	local d
	if grep -q WKS_EXAMPLE_NEEDS_ARGS "$3"; then
		return
	fi
	d=$(mktemp -d "$T/run.XXXXXX")
	if (cd "$d" && WKS_PROPERTIES=$EXPROPS \
		LD_LIBRARY_PATH=$P/$LIBDIR timeout 120 "$2") \
		>"$d.log" 2>&1; then
		ok "$1 runs"
	else
		cat "$d.log"
		fail "$1 does not run"
	fi
}
if ! pcflags=$(pkg-config --cflags --libs libwks 2>&1); then
	fail "pkg-config --cflags --libs libwks: $pcflags"
	finish
fi
pcstatic=$(pkg-config --cflags --libs --static libwks)
echo "pkg-config --cflags --libs libwks: $pcflags"
mkdir -p "$T/pc"
for src in "$EX"/*.c; do
	name=$(basename "$src" .c)
	# shellcheck disable=SC2086
	if "$CC" -o "$T/pc/$name" "$src" $pcflags >"$T/pc/$name.log" 2>&1; then
		ok "examples/$name.c builds with pkg-config libwks"
		run_example "examples/$name (pkg-config)" "$T/pc/$name" "$src"
	else
		cat "$T/pc/$name.log"
		fail "examples/$name.c does not build with pkg-config libwks"
	fi
	# The static library: Libs.private and Requires must be complete.
	# shellcheck disable=SC2086
	if "$CC" -o "$T/pc/$name-static" "$src" \
		${pcstatic/-lwks/-l:libwks.a} >"$T/pc/$name-static.log" 2>&1; then
		ok "examples/$name.c links libwks.a with pkg-config --static"
		run_example "examples/$name (static)" "$T/pc/$name-static" "$src"
	else
		cat "$T/pc/$name-static.log"
		fail "examples/$name.c does not link libwks.a with pkg-config --static"
	fi
done

# ---- 4. find_package(libwks) alone ----------------------------------------
mkdir -p "$T/cm"
cat >"$T/cm/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(libwks_consumer C)
find_package(libwks REQUIRED)
file(GLOB examples ${EXAMPLES_DIR}/*.c)
foreach(src ${examples})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE libwks::wks)
  add_executable(${name}-static ${src})
  target_link_libraries(${name}-static PRIVATE libwks::wks_static)
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/libwks_dir.txt "${libwks_DIR}")
EOF
if CC=$CC cmake -S "$T/cm" -B "$T/cm/build" -DCMAKE_PREFIX_PATH="$P" \
	-DEXAMPLES_DIR="$EX" >"$T/cm.log" 2>&1 &&
	cmake --build "$T/cm/build" -j2 >>"$T/cm.log" 2>&1; then
	ok "find_package(libwks) + libwks::wks / libwks::wks_static build every example"
	dir=$(cat "$T/cm/build/libwks_dir.txt")
	case $dir in
	"$P"/*) ok "find_package found the installed package ($dir)" ;;
	*) fail "find_package found libwks in $dir, not in $P" ;;
	esac
	for src in "$EX"/*.c; do
		name=$(basename "$src" .c)
		run_example "examples/$name (CMake)" "$T/cm/build/$name" "$src"
		run_example "examples/$name (CMake, static)" \
			"$T/cm/build/$name-static" "$src"
	done
else
	cat "$T/cm.log"
	fail "a CMake project using find_package(libwks) alone does not build"
fi

# ---- 5. the installed provider ----------------------------------------------
# wks.so where WKS_OSSL_MODULESDIR says (relative to the prefix by default),
# exporting only OSSL_provider_init, found by the stock openssl through
# OPENSSL_MODULES and through an openssl.cnf as docs/PROVIDER.md writes it,
# and giving back the key the installed wks tool stored.
MD=${WKS_OSSL_MODULESDIR:-}
if [ -z "$MD" ]; then
	echo "note: provider not built (no WKS_OSSL_MODULESDIR): part 5 skipped"
elif [ "${MD#/}" != "$MD" ]; then
	echo "note: WKS_OSSL_MODULESDIR is absolute ($MD): part 5 skipped"
elif ! command -v openssl >/dev/null; then
	echo "note: no openssl tool: part 5 skipped"
elif [ ! -f "$P/$MD/wks.so" ]; then
	fail "not installed: $P/$MD/wks.so"
else
	MD=$P/$MD
	ok "installed wks.so into the modules directory ($MD)"
	syms=$(nm -D --defined-only "$MD/wks.so" 2>/dev/null |
		awk '$2 ~ /^[TDBRW]$/ {print $3}' | sort -u | tr '\n' ' ')
	if [ "$syms" = "OSSL_provider_init " ]; then
		ok "wks.so exports OSSL_provider_init only"
	else
		fail "wks.so exports: $syms"
	fi
	if readelf -d "$MD/wks.so" 2>/dev/null | grep -E 'R(UN)?PATH' |
		grep -qF "$BUILD"; then
		fail "wks.so has an RPATH into the build tree"
	else
		ok "wks.so: no RPATH into the build tree"
	fi
	out=$(OPENSSL_CONF=/dev/null OPENSSL_MODULES=$MD \
		openssl list -store-loaders -provider wks 2>&1 || true)
	if grep -q 'wks @ wks' <<<"$out"; then
		ok "openssl list -store-loaders -provider wks (OPENSSL_MODULES)"
	else
		fail "openssl list -store-loaders -provider wks: $out"
	fi
	# docs/PROVIDER.md's openssl.cnf, with module = the installed file
	printf '%s\n' 'openssl_conf = openssl_init' '' '[openssl_init]' \
		'providers = provider_sect' '' '[provider_sect]' \
		'default = default_sect' 'wks = wks_sect' '' '[default_sect]' \
		'activate = 1' '' '[wks_sect]' 'activate = 1' \
		"module = $MD/wks.so" >"$T/openssl.cnf"
	out=$(OPENSSL_CONF=$T/openssl.cnf openssl list -store-loaders 2>&1 ||
		true)
	if grep -q 'wks @ wks' <<<"$out" && grep -q 'file @ default' <<<"$out"; then
		ok "an openssl.cnf loads the installed provider for every program"
	else
		fail "openssl.cnf with module = wks.so: $out"
	fi
	# The installed tool writes a store, the installed provider reads it.
	if (
		set -e
		cd "$T"
		export LD_LIBRARY_PATH="$P/$LIBDIR" OPENSSL_CONF=/dev/null
		openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
			-out k.pem
		openssl req -x509 -new -key k.pem -subj /CN=install.test \
			-days 2 -out k.crt
		"$P/bin/wks" create -k inst.wks --storepass pass:install-pw \
			--iterations 10000
		"$P/bin/wks" import-key -k inst.wks -a k --key k.pem \
			--chain k.crt --storepass pass:install-pw --iterations 10000
		openssl pkey -in k.pem -pubout -out want.pub
		OPENSSL_CONF=$T/openssl.cnf openssl pkey -pubout -out got.pub \
			-in "wks:$T/inst.wks?alias=k&storepass=pass:install-pw"
		cmp want.pub got.pub
	) >"$T/prov.log" 2>&1; then
		ok "openssl pkey -in wks:... (installed provider) gives the key the installed wks stored"
	else
		cat "$T/prov.log"
		fail "the installed provider does not give back the stored key"
	fi
fi

# ---- 6. the installed PKCS#11 module ----------------------------------------
PD=${WKS_PKCS11_MODULEDIR:-}
if [ -z "$PD" ]; then
	echo "note: PKCS#11 module not built (no WKS_PKCS11_MODULEDIR): part 6 skipped"
elif [ "${PD#/}" != "$PD" ]; then
	echo "note: WKS_PKCS11_MODULEDIR is absolute ($PD): part 6 skipped"
elif [ ! -f "$P/$PD/libwks-pkcs11.so" ]; then
	fail "not installed: $P/$PD/libwks-pkcs11.so"
else
	MOD=$P/$PD/libwks-pkcs11.so
	ok "installed libwks-pkcs11.so into $PD"
	syms=$(nm -D --defined-only "$MOD" 2>/dev/null |
		awk '$2 ~ /^[TDBRW]$/ {print $3}' | sort -u | tr '\n' ' ')
	if [ "$syms" = "C_GetFunctionList C_GetInterface C_GetInterfaceList " ]; then
		ok "libwks-pkcs11.so exports the three PKCS#11 entry points only"
	else
		fail "libwks-pkcs11.so exports: $syms"
	fi
	if readelf -d "$MOD" 2>/dev/null | grep -E 'R(UN)?PATH' |
		grep -qF "$BUILD"; then
		fail "libwks-pkcs11.so has an RPATH into the build tree"
	else
		ok "libwks-pkcs11.so: no RPATH into the build tree"
	fi
	# wks-pkcs11-logout finds the module installed beside it (a
	# configuration with one token whose store does not exist: not
	# logged in; the module names the missing store on standard error)
	printf '[token]\nlabel = inst\nstore = none.wks\n' >"$T/logout.conf"
	if out=$(WKS_PKCS11_CONF="$T/logout.conf" "$P/bin/wks-pkcs11-logout" 2>"$T/logout.err") &&
		[ "$out" = "inst: not logged in" ] &&
		grep -q "no store .*none.wks" "$T/logout.err"; then
		ok "the installed wks-pkcs11-logout loads the installed module"
	else
		fail "installed wks-pkcs11-logout: $out $(cat "$T/logout.err")"
	fi
	MF=$P/share/p11-kit/modules/wks.module
	p11path=$(pkg-config --variable=p11_module_path p11-kit-1 2>/dev/null || true)
	if [ "$P/$PD" = "$p11path" ]; then want="module: libwks-pkcs11.so"
	else want="module: $MOD"; fi
	if [ -f "$MF" ] && grep -qxF "$want" "$MF"; then
		ok "share/p11-kit/modules/wks.module says \"$want\""
	else
		fail "share/p11-kit/modules/wks.module: $(cat "$MF" 2>&1)"
	fi
	if ! command -v p11-kit >/dev/null; then
		echo "note: no p11-kit tool (scripts/deps.sh test installs it): p11-kit list-modules not run"
	else
		# p11-kit reads the module files of a user's ~/.config/pkcs11,
		# but not for root: as root, run it as nobody.
		H=$T/p11home
		mkdir -p "$H/.config/pkcs11/modules"
		cp "$MF" "$H/.config/pkcs11/modules/wks.module"
		printf '[token]\nlabel = inst\nstore = inst.wks\n' >"$T/wks-pkcs11.conf"
		(cd "$T" && LD_LIBRARY_PATH="$P/$LIBDIR" "$P/bin/wks" create \
			-k inst.wks --storepass pass:install-pw \
			--iterations 10000 >/dev/null 2>&1) || true
		chmod -R a+rX "$T"
		as=()
		if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
			as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		fi
		out=$(cd / && "${as[@]}" env HOME="$H" \
			WKS_PKCS11_CONF="$T/wks-pkcs11.conf" \
			p11-kit list-modules 2>&1 || true)
		if grep -q "^wks: " <<<"$out" && grep -q "token: inst" <<<"$out" &&
			grep -A20 "token: inst" <<<"$out" | grep -q token-initialized; then
			ok "p11-kit list-modules finds the module through wks.module, with its token"
		else
			fail "p11-kit list-modules: $out"
		fi
	fi
fi

finish
