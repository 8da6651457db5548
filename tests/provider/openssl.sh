#!/usr/bin/env bash
# The wks provider as users meet it: the stock openssl tool (Debian 12's
# OpenSSL 3.0) loading wks.so and reading stores written by wks(1).
#   pkey -in wks:...          gives the imported key (store password from
#                             the URI, from -passin, key password apart)
#   storeutl -certs wks:...   lists every certificate
#   storeutl -subject, -issuer -serial, -fingerprint, -alias
#                             exactly the matching objects, no key
#                             decrypted for a certificate search
#   verify -CAstore wks:...   trusts a WKS truststore
#   req -key wks:...          signs with a key from a store
#   x509 -req -CAkey wks:...  a CA key from a store
#   requireIntegrity          no password, no load
#   openssl.cnf               the provider loaded by configuration
#   s_server/s_client         a real TLS handshake on 127.0.0.1 with key
#                             and certificate from wks: (RSA and EC), and
#                             mutual TLS with the client's key from wks:
#   verify -CAstore + key     a trust lookup sees every certificate with
#                             a store password too (a key entry sorted
#                             between the trusted certificates)
#   only=issuers              a chain root > intermediate > leaf served
#                             in full by s_server -cert_chain, the leaf
#                             once; cms -sign -certfile
# The commands are those of docs/PROVIDER.md.
#
# usage: openssl.sh WKS_BINARY PROVIDER_DIR
# Works in a mktemp -d folder that it removes.  Every openssl run is
# bounded by timeout and runs without a controlling terminal (setsid).
# Prints "N passed, M failed" last; exits 1 on any failure.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 WKS_BINARY PROVIDER_DIR" >&2
	exit 2
fi
WKS_BIN=$(readlink -f "$1")
PROV_DIR=$(readlink -f "$2")
T=$(mktemp -d "${TMPDIR:-/tmp}/wks-prov.XXXXXX")
SERVER_PID=
cleanup() {
	if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
	rm -rf "$T"
}
trap cleanup EXIT
cd "$T"
export WKS_PROPERTIES=
export OPENSSL_CONF=/dev/null

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() {
	failed=$((failed + 1))
	echo "FAIL: $*" >&2
	if [ -s "$T/err" ]; then sed 's/^/    stderr: /' "$T/err" | head -20 >&2; fi
}

P=(-provider-path "$PROV_DIR" -provider wks -provider default)

# ossl CMD ARGS...: openssl with the wks provider; stdout in $T/out,
# stderr in $T/err, status in $rc.
ossl() {
	local cmd=$1
	shift
	set +e
	setsid -w timeout 30 openssl "$cmd" "${P[@]}" "$@" </dev/null \
		>"$T/out" 2>"$T/err"
	rc=$?
	set -e
}

wks() {
	set +e
	setsid -w "$WKS_BIN" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	if [ "$rc" -ne 0 ]; then bad "wks $*: exit $rc"; fi
}

# ---- keys, certificates and stores -------------------------------------------

q() { openssl "$@" >/dev/null 2>&1; }
q req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout ca.key -out ca.crt -days 30 -subj "/CN=WKS Test Root" \
	-addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign,cRLSign
for k in rsa ec client; do
	case $k in
	rsa) q genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out $k.key ;;
	*) q genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $k.key ;;
	esac
	q req -new -key $k.key -subj "/CN=$k.test" -out $k.csr
	q x509 -req -in $k.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
		-days 30 -out $k.crt -extfile <(printf 'subjectAltName=DNS:localhost\n')
done
printf 'storepw\n' >storepw.txt
chmod 600 storepw.txt

wks create -k server.wks --storepass pass:storepw --iterations 10000
for k in rsa ec client; do
	wks import-key -k server.wks -a $k --key $k.key --chain $k.crt \
		--chain ca.crt --storepass pass:storepw --iterations 10000
done
wks import-key -k server.wks -a kp --key ec.key --chain ec.crt --chain ca.crt \
	--storepass pass:storepw --keypass pass:keypw --iterations 10000
wks import-secret -k server.wks -a ticket --generate aes-256 \
	--storepass pass:storepw --iterations 10000
wks create -k cacerts.wks --storepass pass:trustpw --iterations 10000
wks import-cert -k cacerts.wks -a root --cert ca.crt --storepass pass:trustpw
wks create -k empty.wks --storepass pass:trustpw --iterations 10000
S="wks:$T/server.wks"

# ---- the provider is there -----------------------------------------------------

ossl list -store-loaders
if [ $rc -eq 0 ] && grep -q "wks @ wks" "$T/out"; then ok; else
	bad "list -store-loaders does not show wks"; fi

# ---- pkey ----------------------------------------------------------------------

# same_key FILE: the key openssl wrote to $T/got.pem is the key in FILE.
same_key() {
	openssl pkey -in "$1" -outform DER -out want.der 2>/dev/null
	openssl pkey -in got.pem -outform DER -out got.der 2>/dev/null
	cmp -s want.der got.der
}

ossl pkey -in "$S?alias=rsa&storepass=pass:storepw" -out got.pem
if [ $rc -eq 0 ] && same_key rsa.key; then ok; else bad "pkey RSA, URI pass:"; fi

ossl pkey -in "wks:server.wks?alias=ec&storepass=file:storepw.txt" -out got.pem
if [ $rc -eq 0 ] && same_key ec.key; then ok; else
	bad "pkey EC, relative path, URI file:"; fi

# The store password from the application (-passin), no source in the URI.
ossl pkey -in "$S?alias=ec" -passin pass:storepw -out got.pem
if [ $rc -eq 0 ] && same_key ec.key; then ok; else bad "pkey -passin"; fi

STOREPW=storepw ossl pkey -in "$S?alias=rsa&storepass=env:STOREPW" -out got.pem
if [ $rc -eq 0 ] && same_key rsa.key; then ok; else bad "pkey URI env:"; fi

# A key password different from the store password.
ossl pkey -in "$S?alias=kp&storepass=pass:storepw&keypass=pass:keypw" -out got.pem
if [ $rc -eq 0 ] && same_key ec.key; then ok; else bad "pkey keypass"; fi
ossl pkey -in "$S?alias=kp&keypass=pass:keypw" -passin pass:storepw -out got.pem
if [ $rc -eq 0 ] && same_key ec.key; then ok; else bad "pkey keypass + -passin"; fi

# An Ed25519 key.
q req -x509 -new -newkey ed25519 -nodes -keyout ed.key -out ed.crt -days 30 -subj /CN=ed
wks import-key -k server.wks -a ed --key ed.key --chain ed.crt \
	--storepass pass:storepw --iterations 10000
ossl pkey -in "$S?alias=ed&storepass=pass:storepw" -out got.pem
if [ $rc -eq 0 ] && same_key ed.key; then ok; else bad "pkey Ed25519"; fi

# Wrong passwords: nothing, and the reason.
ossl pkey -in "$S?alias=rsa" -passin pass:wrong -out got.pem
if [ $rc -ne 0 ] && grep -q "integrity check failed: wrong password or modified file" "$T/err" &&
   [ ! -s got.pem ]; then ok; else bad "pkey wrong store password: exit $rc"; fi
rm -f got.pem
ossl pkey -in "$S?alias=kp&storepass=pass:storepw" -out got.pem
if [ $rc -ne 0 ] && grep -q "integrity check failed" "$T/err"; then ok; else
	bad "pkey wrong key password: exit $rc"; fi
ossl pkey -in "$S?alias=nope&storepass=pass:storepw"
if [ $rc -ne 0 ] && grep -q 'no entry "nope"' "$T/err"; then ok; else
	bad "pkey missing alias: exit $rc"; fi
ossl pkey -in "$S?alais=rsa&storepass=pass:storepw"
if [ $rc -ne 0 ] && grep -q 'unknown attribute "alais"' "$T/err"; then ok; else
	bad "pkey bad attribute: exit $rc"; fi
# No password at all (no terminal): no key, and why.
ossl pkey -in "$S?alias=rsa"
if [ $rc -ne 0 ] && grep -q "password is needed" "$T/err"; then ok; else
	bad "pkey without password: exit $rc"; fi

# ---- storeutl --------------------------------------------------------------------

# Every certificate (client, its CA, ec, its CA, ... in alias order; the
# secret key entry skipped).
ossl storeutl -certs -passin pass:storepw "$S"
if [ $rc -eq 0 ] && [ "$(grep -c '^[0-9]*: Certificate$' "$T/out")" -eq 9 ] &&
   grep -q "Total found: 9" "$T/out"; then ok; else
	bad "storeutl -certs: exit $rc, $(grep -c 'Certificate$' "$T/out") certificates"; fi
# The leaf of "client" comes before its CA.
awk '/^[0-9]+: Certificate$/{n++} n==1' "$T/out" | openssl x509 -noout -subject >subj.txt 2>/dev/null || true
if grep -q "CN = client.test" subj.txt; then ok; else bad "storeutl: first is not the client leaf"; fi

# Without any password: the certificates still load (integrity unchecked).
ossl storeutl -certs "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 9" "$T/out"; then ok; else
	bad "storeutl -certs without password: exit $rc"; fi
# One key entry: -keys gives its key; no filter gives key and chain.
ossl storeutl -keys -passin pass:storepw "$S?alias=rsa"
if [ $rc -eq 0 ] && grep -q "Total found: 1" "$T/out" &&
   grep -q "^0: Pkey$" "$T/out"; then ok; else bad "storeutl -keys alias=rsa: exit $rc"; fi
ossl storeutl -passin pass:storepw "$S?alias=rsa"
if [ $rc -eq 0 ] && grep -q "Total found: 3" "$T/out"; then ok; else
	bad "storeutl alias=rsa (key + chain): exit $rc"; fi

# ---- storeutl searches (-subject, -issuer/-serial, -fingerprint, -alias) ---------

# subjects: the subject of every certificate in $T/out, one a line.
subjects() {
	awk '/^-----BEGIN CERTIFICATE-----$/{c=""; on=1} on{c=c $0 "\n"}
	     /^-----END CERTIFICATE-----$/{printf "%s", c | "openssl x509 -noout -subject"; close("openssl x509 -noout -subject"); on=0}' "$T/out"
}
fp_of() { openssl x509 -in "$2" -noout -fingerprint "-$1" | sed 's/.*=//; s/://g'; }

# By subject: the CA of the four chains that hold it, no key.
ossl storeutl -passin pass:storepw -subject "/CN=WKS Test Root" "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 4" "$T/out" && ! grep -q Pkey "$T/out" &&
   [ "$(subjects | sort -u)" = "subject=CN = WKS Test Root" ]; then ok; else
	bad "storeutl -subject root: exit $rc, $(grep Total "$T/out")"; fi
ossl storeutl -subject "/CN=rsa.test" "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 1" "$T/out" &&
   [ "$(subjects)" = "subject=CN = rsa.test" ]; then ok; else
	bad "storeutl -subject rsa.test without password: exit $rc"; fi
# By issuer and serial number: that one certificate.
ossl storeutl -passin pass:storepw -issuer "/CN=WKS Test Root" \
	-serial "0x$(openssl x509 -in rsa.crt -noout -serial | sed 's/.*=//')" "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 1" "$T/out" &&
   [ "$(subjects)" = "subject=CN = rsa.test" ]; then ok; else
	bad "storeutl -issuer -serial: exit $rc, $(grep Total "$T/out")"; fi
# By fingerprint, the digest of the certificate's DER as openssl x509
# -fingerprint prints it: ec.crt is in "ec" and "kp".  (OpenSSL 3.0's
# storeutl needs the digest option: without it OSSL_STORE_find() crashes.)
ossl storeutl -passin pass:storepw -sha256 -fingerprint "$(fp_of sha256 ec.crt)" "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 2" "$T/out" && ! grep -q Pkey "$T/out" &&
   [ "$(subjects | sort -u)" = "subject=CN = ec.test" ]; then ok; else
	bad "storeutl -sha256 -fingerprint: exit $rc, $(grep Total "$T/out")"; fi
ossl storeutl -passin pass:storepw -sha1 -fingerprint "$(fp_of sha1 rsa.crt)" "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 1" "$T/out" &&
   [ "$(subjects)" = "subject=CN = rsa.test" ]; then ok; else
	bad "storeutl -sha1 -fingerprint: exit $rc, $(grep Total "$T/out")"; fi
# By alias: the entry (key and chain), or its certificates.
ossl storeutl -passin pass:storepw -alias rsa "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 3" "$T/out" && grep -q "^0: Pkey$" "$T/out"; then
	ok; else bad "storeutl -alias rsa: exit $rc"; fi
ossl storeutl -certs -alias rsa "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 2" "$T/out"; then ok; else
	bad "storeutl -certs -alias rsa: exit $rc"; fi
# No match: nothing, and no error.
ossl storeutl -passin pass:storepw -subject "/CN=nobody" "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 0" "$T/out" && [ ! -s "$T/err" ]; then ok; else
	bad "storeutl -subject nobody: exit $rc"; fi
ossl storeutl -passin pass:storepw -sha256 -fingerprint "$(printf '%064d' 0)" "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 0" "$T/out"; then ok; else
	bad "storeutl -fingerprint of nothing: exit $rc"; fi
ossl storeutl -passin pass:storepw -sha1 -fingerprint "$(fp_of sha256 rsa.crt | cut -c1-40)" "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 0" "$T/out"; then ok; else
	bad "storeutl -sha1 -fingerprint of a SHA-256 prefix: exit $rc"; fi
# (storeutl exits 0 after a loader error at the first load: it checks
# OSSL_STORE_eof() before OSSL_STORE_error().)
ossl storeutl -passin pass:storepw -alias nope "$S"
if grep -q "Total found: 0" "$T/out" && grep -q 'no entry "nope"' "$T/err"; then ok; else
	bad "storeutl -alias nope: exit $rc"; fi
# A certificate search decrypts no key: with a wrong key password in the
# URI it still works, where a plain load of the same URI fails.
ossl storeutl -passin pass:storepw "$S?keypass=pass:wrong"
if grep -q "Total found: 0" "$T/out" && grep -q "integrity check failed" "$T/err"; then ok; else
	bad "storeutl keypass=wrong: exit $rc"; fi
for crit in "-subject /CN=rsa.test" "-sha256 -fingerprint $(fp_of sha256 rsa.crt)" \
	"-issuer /CN=WKS\ Test\ Root -serial 0x$(openssl x509 -in rsa.crt -noout -serial | sed 's/.*=//')"; do
	eval "set -- $crit"
	ossl storeutl -passin pass:storepw "$@" "$S?keypass=pass:wrong"
	if [ $rc -eq 0 ] && grep -q "Total found: 1" "$T/out" && [ ! -s "$T/err" ]; then ok; else
		bad "storeutl $crit, keypass=wrong: exit $rc"; fi
done
ossl storeutl -keys -passin pass:storepw -subject "/CN=rsa.test" "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 0" "$T/out"; then ok; else
	bad "storeutl -keys -subject: exit $rc"; fi

# ---- verify -CAstore, req -key -------------------------------------------------------

ossl verify -CAstore "wks:$T/cacerts.wks" rsa.crt
if [ $rc -eq 0 ] && grep -q "rsa.crt: OK" "$T/out"; then ok; else bad "verify -CAstore: exit $rc"; fi
# A trust lookup sees every trusted certificate, with a store password
# too: a-root, b-key (a key entry: the key is decrypted when a password
# is given, and OpenSSL 3.0's X509_LOOKUP_store stopped at the first
# object that is not a certificate), c-root2; b.crt is issued by c-root2.
q req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout root2.key -out root2.crt -days 30 -subj "/CN=WKS Test Root 2" \
	-addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign,cRLSign
q req -new -key ec.key -subj "/CN=b.test" -out b.csr
q x509 -req -in b.csr -CA root2.crt -CAkey root2.key -set_serial 2 -days 30 \
	-out b.crt
wks create -k mixed.wks --storepass pass:trustpw --iterations 10000
wks import-cert -k mixed.wks -a a-root --cert ca.crt --storepass pass:trustpw
wks import-key -k mixed.wks -a b-key --key ec.key --chain ec.crt --chain ca.crt \
	--storepass pass:trustpw --iterations 10000
wks import-cert -k mixed.wks -a c-root2 --cert root2.crt --storepass pass:trustpw
for qs in "" "?storepass=pass:trustpw" "?storepass=pass:trustpw&only=certs"; do
	ossl verify -CAstore "wks:$T/mixed.wks$qs" b.crt rsa.crt
	if [ $rc -eq 0 ] && grep -q "b.crt: OK" "$T/out" &&
	   grep -q "rsa.crt: OK" "$T/out"; then ok; else
		bad "verify -CAstore wks:mixed.wks$qs (key entry between roots): exit $rc"; fi
done
# The password is checked: a wrong one trusts nothing.
ossl verify -CAstore "wks:$T/mixed.wks?storepass=pass:wrong" b.crt
if [ $rc -ne 0 ] && grep -q "integrity check failed" "$T/err"; then ok; else
	bad "verify -CAstore with a wrong store password: exit $rc"; fi

ossl verify -CAstore "wks:$T/empty.wks" rsa.crt
if [ $rc -ne 0 ]; then ok; else bad "verify -CAstore with an empty truststore succeeded"; fi

ossl req -new -key "$S?alias=ec&storepass=pass:storepw" -subj /CN=req.test -out req.csr
if [ $rc -eq 0 ] && openssl req -in req.csr -verify -noout >/dev/null 2>&1 &&
   [ "$(openssl req -in req.csr -noout -pubkey | openssl pkey -pubin -outform DER | sha256sum)" = \
     "$(openssl pkey -in ec.key -pubout -outform DER | sha256sum)" ]; then ok; else
	bad "req -key wks:: exit $rc"; fi

# x509 -req signed by a CA key taken from a store.
wks import-key -k server.wks -a ca --key ca.key --chain ca.crt \
	--storepass pass:storepw --iterations 10000
ossl x509 -req -in rsa.csr -CA ca.crt -CAkey "$S?alias=ca&storepass=pass:storepw" \
	-set_serial 77 -days 1 -out signed.crt
if [ $rc -eq 0 ] && openssl verify -CAfile ca.crt signed.crt >/dev/null 2>&1; then ok; else
	bad "x509 -CAkey wks:: exit $rc"; fi

# libwks.wks.requireIntegrity: no password means no load at all.
printf 'libwks.wks.requireIntegrity=true\n' >strict.properties
WKS_PROPERTIES=$T/strict.properties ossl storeutl -certs "$S"
if grep -q "a password is required" "$T/err" && grep -q "Total found: 0" "$T/out"; then ok; else
	bad "requireIntegrity without password: exit $rc"; fi
WKS_PROPERTIES=$T/strict.properties ossl storeutl -certs -passin pass:storepw "$S"
if [ $rc -eq 0 ] && grep -q "Total found: 10" "$T/out"; then ok; else
	bad "requireIntegrity with password: exit $rc"; fi

# The provider loaded by openssl.cnf (docs/PROVIDER.md), no -provider
# options: what nginx, curl and other applications would do.
cat >openssl.cnf <<CNF
openssl_conf = openssl_init

[openssl_init]
providers = provider_sect

[provider_sect]
default = default_sect
wks = wks_sect

[default_sect]
activate = 1

[wks_sect]
module = $PROV_DIR/wks.so
activate = 1
CNF
set +e
OPENSSL_CONF=$T/openssl.cnf setsid -w timeout 30 openssl pkey \
	-in "$S?alias=rsa&storepass=pass:storepw" -out got.pem </dev/null >"$T/out" 2>"$T/err"
rc=$?
set -e
if [ $rc -eq 0 ] && same_key rsa.key; then ok; else bad "openssl.cnf: pkey: exit $rc"; fi

# ---- TLS ---------------------------------------------------------------------------------

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_server PORT ARGS...: s_server -www in the background, one
# connection, until it listens (or 15 s).
start_server() {
	local port=$1 i
	shift
	# Emptied here, not by the background job's redirection, which may
	# run after the first grep below and let it find the last server's
	# ACCEPT (a client then met "Connection refused").
	: >"$T/server.out"
	setsid timeout 40 openssl s_server "${P[@]}" -accept "127.0.0.1:$port" \
		-naccept 1 -www "$@" </dev/null >"$T/server.out" 2>"$T/server.err" &
	SERVER_PID=$!
	for i in $(seq 150); do
		if grep -q ACCEPT "$T/server.out" 2>/dev/null; then return 0; fi
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then return 1; fi
		sleep 0.1
	done
	return 1
}

stop_server() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	SERVER_PID=
}

# client PORT ARGS...: one HTTP request over TLS, verified against ca.crt.
client() {
	local port=$1
	shift
	set +e
	printf 'GET / HTTP/1.0\r\n\r\n' | setsid -w timeout 20 openssl s_client \
		"${P[@]}" -connect "127.0.0.1:$port" -CAfile ca.crt \
		-verify_return_error -verify_hostname localhost -ign_eof "$@" \
		>"$T/out" 2>"$T/err"
	rc=$?
	set -e
}

for alg in rsa ec; do
	port=$(free_port)
	# Key with -pass (the passphrase callback), certificate with env:.
	if STOREPW=storepw start_server "$port" \
		-key "$S?alias=$alg" -pass pass:storepw \
		-cert "$S?alias=$alg&storepass=env:STOREPW"; then
		client "$port"
		if [ $rc -eq 0 ] && grep -q "Verify return code: 0 (ok)" "$T/out" &&
		   grep -q "s_server" "$T/out"; then ok; else
			bad "TLS with the $alg key from wks: (client exit $rc)"
			sed 's/^/    server: /' "$T/server.err" | head >&2
		fi
	else
		bad "s_server with the $alg key from wks: did not start"
		sed 's/^/    server: /' "$T/server.err" | head >&2
	fi
	stop_server
done

# Mutual TLS: the client's key and certificate from wks: too, the server
# trusting the WKS truststore.
port=$(free_port)
if start_server "$port" -key "$S?alias=ec&storepass=pass:storepw" \
	-cert "$S?alias=ec&storepass=pass:storepw" -Verify 1 \
	-verify_return_error -CAstore "wks:$T/cacerts.wks"; then
	client "$port" -key "$S?alias=client&storepass=pass:storepw" \
		-cert "$S?alias=client&storepass=pass:storepw"
	if [ $rc -eq 0 ] && grep -q "Verify return code: 0 (ok)" "$T/out" &&
	   grep -q "s_server" "$T/out"; then ok; else
		bad "mutual TLS with keys from wks: (client exit $rc)"
		sed 's/^/    server: /' "$T/server.err" | head >&2
	fi
else
	bad "s_server for mutual TLS did not start"
	sed 's/^/    server: /' "$T/server.err" | head >&2
fi
stop_server

# ---- chains: root > intermediate > leaf ---------------------------------------------

# A key entry whose chain is longer than the leaf and a self-signed root:
# -cert takes only the first certificate (the leaf), so the rest must come
# from -cert_chain; alias=server alone would give the leaf again, so
# only=issuers gives the chain without it.
q req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout chroot.key -out chroot.crt -days 30 -subj "/CN=WKS Chain Root" \
	-addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign,cRLSign
q req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout chint.key -subj "/CN=WKS Chain Intermediate" -out chint.csr
q x509 -req -in chint.csr -CA chroot.crt -CAkey chroot.key -set_serial 10 \
	-days 30 -out chint.crt -extfile <(printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n')
q req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout chleaf.key -subj "/CN=chain.test" -out chleaf.csr
q x509 -req -in chleaf.csr -CA chint.crt -CAkey chint.key -set_serial 11 \
	-days 30 -out chleaf.crt -extfile <(printf 'subjectAltName=DNS:localhost\n')
wks create -k chain.wks --storepass pass:storepw --iterations 10000
wks import-key -k chain.wks -a server --key chleaf.key --chain chleaf.crt \
	--chain chint.crt --chain chroot.crt --storepass pass:storepw \
	--iterations 10000
C="wks:$T/chain.wks?alias=server&storepass=pass:storepw"

# der_of PEMFILE...: the DER of every certificate in the files, one
# base64 line each (to compare certificates, whatever the PEM layout).
der_of() {
	awk '/-----BEGIN CERTIFICATE-----/{c=""; on=1; next}
	     /-----END CERTIFICATE-----/{print c; on=0; next} on{c=c $0}' "$@"
}

ossl storeutl -certs "$C&only=issuers"
if [ $rc -eq 0 ] && grep -q "Total found: 2" "$T/out" &&
   [ "$(der_of "$T/out")" = "$(der_of chint.crt chroot.crt)" ]; then ok; else
	bad "storeutl only=issuers: exit $rc, not intermediate then root"; fi
# only=issuers never decrypts a key, so it needs no password; a trusted
# certificate entry has no issuers in the store.
ossl storeutl "wks:$T/chain.wks?alias=server&only=issuers"
if [ $rc -eq 0 ] && grep -q "Total found: 2" "$T/out"; then ok; else
	bad "storeutl only=issuers without a password: exit $rc"; fi
ossl storeutl -passin pass:trustpw "wks:$T/cacerts.wks?only=issuers"
if [ $rc -eq 0 ] && grep -q "Total found: 0" "$T/out"; then ok; else
	bad "storeutl only=issuers on a truststore: exit $rc"; fi
ossl storeutl "wks:$T/chain.wks?alias=server&only=isuers"
if [ $rc -ne 0 ] && grep -q "only=: expected certs or issuers" "$T/err"; then ok; else
	bad "only=isuers accepted: exit $rc"; fi

# chain_client PORT: s_client trusting the chain's root only, the
# certificates it was sent in served.pem.
chain_client() {
	set +e
	printf 'GET / HTTP/1.0\r\n\r\n' | setsid -w timeout 20 openssl s_client \
		"${P[@]}" -connect "127.0.0.1:$1" -CAfile chroot.crt \
		-verify_return_error -verify_hostname localhost -showcerts -ign_eof \
		>"$T/out" 2>"$T/err"
	rc=$?
	set -e
	sed -n '/^Certificate chain/,/^---$/p' "$T/out" >served.pem
}

# Why: -cert alone sends the leaf only (the client cannot verify it), and
# -cert_chain with the same URI sends the leaf a second time.
port=$(free_port)
if start_server "$port" -key "$C" -cert "$C"; then
	chain_client "$port"
	if [ $rc -ne 0 ] && [ "$(der_of served.pem)" = "$(der_of chleaf.crt)" ]; then ok; else
		bad "TLS with -cert only: client exit $rc, $(grep -c 'BEGIN CERT' served.pem) certificates"; fi
else
	bad "s_server with -cert from wks: (chain) did not start"
fi
stop_server
port=$(free_port)
if start_server "$port" -key "$C" -cert "$C" -cert_chain "$C"; then
	chain_client "$port"
	if [ "$(der_of served.pem)" = "$(der_of chleaf.crt chleaf.crt chint.crt chroot.crt)" ]; then ok; else
		bad "TLS with -cert_chain alias=server: not the leaf twice ($(grep -c 'BEGIN CERT' served.pem) certificates)"; fi
else
	bad "s_server with -cert_chain alias=server did not start"
fi
stop_server

# TLS: the server sends leaf, intermediate, root; the client trusts the
# root only and compares the certificates it was sent.
port=$(free_port)
if start_server "$port" -key "$C" -cert "$C" -cert_chain "$C&only=issuers"; then
	chain_client "$port"
	if [ $rc -eq 0 ] && grep -q "Verify return code: 0 (ok)" "$T/out" &&
	   [ "$(der_of served.pem)" = "$(der_of chleaf.crt chint.crt chroot.crt)" ]; then ok; else
		bad "TLS chain from wks: -cert_chain only=issuers (client exit $rc, $(grep -c 'BEGIN CERT' served.pem) certificates sent)"
		sed 's/^/    server: /' "$T/server.err" | head >&2
	fi
else
	bad "s_server with -cert_chain ...&only=issuers did not start"
	sed 's/^/    server: /' "$T/server.err" | head >&2
fi
stop_server

# cms -sign with the intermediate and root from -certfile: the signed data
# then verifies against the root alone.  (With the whole entry, the leaf
# is there twice: refused.)
printf 'signed through wks:\n' >msg.txt
ossl cms -sign -binary -nodetach -in msg.txt -signer "$C" -inkey "$C" \
	-certfile "$C" -outform PEM -out msg.p7s
if [ $rc -ne 0 ] && grep -q "certificate already present" "$T/err"; then ok; else
	bad "cms -sign -certfile alias=server: exit $rc"; fi
ossl cms -sign -binary -nodetach -in msg.txt -signer "$C" -inkey "$C" -certfile "$C&only=issuers" \
	-outform PEM -out msg.p7s
if [ $rc -eq 0 ]; then
	ossl cms -verify -in msg.p7s -inform PEM -CAfile chroot.crt -purpose any \
		-certsout signers.pem -out msg.out
	if [ $rc -eq 0 ] && cmp -s msg.txt msg.out &&
	   [ "$(der_of signers.pem | sort)" = "$(der_of chleaf.crt chint.crt chroot.crt | sort)" ]; then ok; else
		bad "cms -verify of a signature made with -certfile only=issuers: exit $rc"; fi
else
	bad "cms -sign -certfile ...&only=issuers: exit $rc"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
