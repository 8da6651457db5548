#!/usr/bin/env bash
# libwks-pkcs11.so inside an OpenSSL that prefers pkcs11-provider (issue 29
# item 21): an openssl.cnf that activates the default, pkcs11 and base
# providers in that order (as pkcs11-provider's own test configuration
# does) with `default_properties = ?provider=pkcs11`.  pkcs11-provider
# calls the module while it initialises, holding its own lock; a module
# that parsed a certificate in OpenSSL's default library context was
# routed back into pkcs11-provider and waited on that lock for ever.  The
# module has a library context of its own: here `openssl pkey -pubout` of
# the token's key (equal to the certificate's key) and a signature made
# through pkcs11-provider (verified by a plain openssl) finish, each under
# `timeout` (a hang is a failure, not a stuck test).
#
# usage: ossl_preferred.sh MODULE WKS_BINARY SHARED_DIR
# Prints "N passed, M failed" last; exits 1 on any failure.
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 MODULE WKS_BINARY SHARED_DIR" >&2
	exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
MODULE=$(readlink -f "$1")
shift
# shellcheck source=tests/cli/lib.sh
. "$HERE/../cli/lib.sh"

start_tests p11prefer
OSSL_PKCS11=/usr/lib/x86_64-linux-gnu/ossl-modules/pkcs11.so
if ! command -v openssl >/dev/null 2>&1 || [ ! -e "$OSSL_PKCS11" ]; then
	echo "FAIL: missing openssl or $OSSL_PKCS11 (pkcs11-provider; sh scripts/deps.sh test installs them)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
dpkg-query -W -f='${Package} ${Version}\n' pkcs11-provider openssl 2>/dev/null || true

# run WHAT CMD...: CMD with stdout in $T/out, stderr in $T/err, status in
# $rc (124: killed by timeout).
run() {
	shift
	set +e
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}
LIMIT=${WKS_TEST_HANG_LIMIT:-20}

wks genkeypair -k web.wks --storepass pass:web-store-pw -a ec --keyalg EC \
	--dname CN=localhost
expect 0 "wks genkeypair EC"
wks export-cert -k web.wks -a ec
cp "$T/out" ec.pem
(umask 077 && printf 'web-store-pw\n' >web.pin)
printf '[token]\nlabel = web\nstore = %s/web.wks\n' "$T" >p11.conf
cat >openssl.cnf <<EOF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = evp_properties
[evp_properties]
default_properties = ?provider=pkcs11
[provider_sect]
default = default_sect
pkcs11 = pkcs11_sect
base = base_sect
[default_sect]
activate = 1
[pkcs11_sect]
module = $OSSL_PKCS11
pkcs11-module-path = $MODULE
pkcs11-module-token-pin = file:$T/web.pin
activate = 1
[base_sect]
activate = 1
EOF
URI='pkcs11:token=web;object=ec;type=private'

run pubout env WKS_PKCS11_CONF="$T/p11.conf" OPENSSL_CONF="$T/openssl.cnf" \
	timeout "$LIMIT" openssl pkey -in "$URI" -pubout
if [ "$rc" = 124 ]; then
	bad "openssl pkey -pubout through pkcs11-provider hung (killed after ${LIMIT} s)"
elif [ "$rc" != 0 ]; then
	bad "openssl pkey -pubout through pkcs11-provider: exit $rc"
elif [ "$(cat "$T/out")" = "$(OPENSSL_CONF=/dev/null openssl x509 -in ec.pem -pubkey -noout)" ]; then
	ok
else
	bad "openssl pkey -pubout: not the certificate's key"
fi

printf 'signed through pkcs11-provider\n' >data.txt
run sign env WKS_PKCS11_CONF="$T/p11.conf" OPENSSL_CONF="$T/openssl.cnf" \
	timeout "$LIMIT" openssl dgst -sha256 -sign "$URI" -out data.sig data.txt
if [ "$rc" = 124 ]; then
	bad "openssl dgst -sign through pkcs11-provider hung (killed after ${LIMIT} s)"
elif [ "$rc" != 0 ]; then
	bad "openssl dgst -sign through pkcs11-provider: exit $rc"
else
	OPENSSL_CONF=/dev/null openssl x509 -in ec.pem -pubkey -noout >pub.pem
	run verify env OPENSSL_CONF=/dev/null openssl dgst -sha256 \
		-verify pub.pem -signature data.sig data.txt
	if [ "$rc" = 0 ] && grep -q 'Verified OK' "$T/out"; then ok; else
		bad "the signature made through pkcs11-provider does not verify"; fi
fi
end_tests
