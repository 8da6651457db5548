#!/usr/bin/env bash
# libwks-pkcs11.so against real programs: OpenSC's pkcs11-tool, GnuTLS
# (p11tool, gnutls-serv, gnutls-cli), p11-kit (list-modules, server and
# its client module) and OpenSSL through pkcs11-provider.  The recipes of
# docs/PKCS11.md "Recipes" (OpenSC pkcs11-tool, GnuTLS, p11-kit server,
# OpenSSL with pkcs11-provider) are run as written (tests/pkcs11/recipe.sh),
# with their variables pointing at this test's module, configuration,
# password file, ports and socket folder; the checks here come on top.
#
#   pkcs11-tool   -L -M -O --test (recipe); sign and verify (checked by
#                 openssl, and a changed message must fail) with ECDSA,
#                 RSA-PSS and EdDSA; --keypairgen and --write-object of a
#                 CA-issued certificate (the store's entry then has that
#                 certificate: wks export-cert, wksdump.py), then of the
#                 CA's certificate with the key's CKA_ID, for two keys
#                 (each chain takes it); --write-object of a key and its
#                 certificate, --delete-object (the entry comes and goes,
#                 as wks list sees it)
#   GnuTLS        p11tool --list-all, --export (the same certificate as wks
#                 export-cert); gnutls-serv with pkcs11: URIs for key and
#                 certificate, checked by gnutls-cli and by openssl
#                 s_client -verify_return_error (an RSA key signs RSA-PSS
#                 in TLS 1.3), and refused by a client trusting another
#                 certificate; a running gnutls-serv whose key wks delete
#                 removes or wks import-key --force replaces fails the
#                 next handshake (the module refuses the old key)
#   p11-kit       list-modules shows the token (as user nobody when run as
#                 root: p11-kit reads ~/.config/pkcs11/modules for other
#                 users only); p11-kit server serves the token on a socket
#                 in a mode-700 folder, a fresh pkcs11-tool process signs
#                 through p11-kit-client.so (openssl verifies), another
#                 user cannot connect, and with the server gone there is
#                 no token; with shared-login, one login serves the later
#                 clients (no PIN, no PBKDF2: the module's debug log)
#   pkcs11-provider  openssl pkey -pubout of a pkcs11: key (equal to the
#                 certificate's key), openssl s_server with a pkcs11: key
#                 and certificate checked by s_client -verify_return_error
#
# Default mode: each program once (EC keys, one RSA-2048 key made once,
# Ed25519); WKS_TEST_FULL=1: every sign mechanism, and the TLS servers
# with EC, RSA and Ed25519 keys each in TLS 1.2 and 1.3.  Every server is
# started here, in the test's folder, on a free port of 127.0.0.1
# (gnutls-serv cannot be told an address: it listens on every address of
# that port), and killed on exit.  A missing program fails the test
# (scripts/deps.sh test installs them all; tests/run.sh runs it).
#
# usage: programs_opensc_gnutls.sh MODULE WKS_BINARY SHARED_DIR
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
# shellcheck source=tests/pkcs11/recipe.sh
. "$HERE/recipe.sh"
FULL=${WKS_TEST_FULL:-0}
[ "$FULL" = 0 ] || FULL=1

start_tests p11gnutls
# wks(1) for the recipes (tls-chain), whatever WKS_BIN is
mkdir bin
printf '#!/bin/sh\nexec %q "$@"\n' "$WKS_BIN" >bin/wks
chmod 755 bin/wks
export PATH="$T/bin:$PATH"
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -z "${WKS_TEST_KEEP:-}" ]; then rm -rf "$T"; fi
}
trap cleanup EXIT

# ---- the programs ------------------------------------------------------------

CLIENT=/usr/lib/x86_64-linux-gnu/pkcs11/p11-kit-client.so
OSSL_PKCS11=/usr/lib/x86_64-linux-gnu/ossl-modules/pkcs11.so
missing=""
for b in pkcs11-tool p11tool gnutls-serv gnutls-cli p11-kit openssl python3; do
	command -v "$b" >/dev/null 2>&1 || missing="$missing $b"
done
[ -e "$CLIENT" ] || missing="$missing $CLIENT(p11-kit-modules)"
[ -e "$OSSL_PKCS11" ] || missing="$missing $OSSL_PKCS11(pkcs11-provider)"
if [ -n "$missing" ]; then
	echo "FAIL: missing:$missing (sh scripts/deps.sh test installs them)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
for p in opensc gnutls-bin p11-kit p11-kit-modules pkcs11-provider openssl; do
	dpkg-query -W -f='${Package} ${Version}\n' "$p" 2>/dev/null || true
done

# ---- helpers -----------------------------------------------------------------

# run WHAT CMD...: CMD with stdout in $T/out, stderr in $T/err, status in $rc.
run() {
	shift
	set +e
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}
# recipe NAME [VAR=VALUE...]: the recipe as written, with those variables.
recipe() {
	local name=$1
	shift
	set +e
	env "$@" bash -eu -c "$(recipe_text "$name")" "recipe-$name" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}
# out_has REGEX WHAT: the last command's stdout matches.
out_has() {
	if grep -Eq -- "$1" "$T/out"; then ok; else
		bad "$2: stdout must match /$1/"
		sed 's/^/    stdout: /' "$T/out" | tail -12 >&2
	fi
}
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# start NAME LOG VAR=VALUE...: recipe NAME (a server: its last command is
# an exec) in the background in its own process group; its PID in $SPID.
start() {
	local name=$1 log=$2
	shift 2
	recipe_text "$name" >"$T/recipe-$name.sh"
	env "$@" setsid bash -eu "$T/recipe-$name.sh" >"$log" 2>&1 </dev/null &
	SPID=$!
	PIDS+=("$SPID")
}
stop() {
	kill -- "-$1" 2>/dev/null || kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
# wait_port PORT: until 127.0.0.1:PORT accepts (10 s at most).
wait_port() {
	for _ in $(seq 100); do
		if (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}
# p11 ARGS...: pkcs11-tool on the test's token.
p11() { pkcs11-tool --module "$MODULE" --token-label web "$@"; }
# id_of ALIAS: the CKA_ID (hex) of the alias's certificate.
id_of() {
	p11 --list-objects --type cert 2>/dev/null | awk -v a="$1" '
		/^  label:/ { l = $0; sub(/^  label: +/, "", l) }
		/^  ID:/ && l == a { print $2; exit }'
}

# ---- the store and the token -------------------------------------------------

SAN=san=dns:localhost,ip:127.0.0.1
wks genkeypair -k web.wks --storepass pass:web-store-pw -a ec --keyalg EC \
	--dname CN=localhost --ext "$SAN"
expect 0 "wks genkeypair EC"
wks genkeypair -k web.wks --storepass pass:web-store-pw -a rsa --keyalg RSA \
	--keysize 2048 --dname CN=localhost --ext "$SAN"
expect 0 "wks genkeypair RSA-2048"
openssl req -x509 -newkey ed25519 -nodes -keyout ed.key -subj /CN=localhost \
	-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -days 30 -out ed.crt 2>/dev/null
wks import-key -k web.wks --storepass pass:web-store-pw -a ed --key ed.key --chain ed.crt
expect 0 "wks import-key Ed25519"
rm -f ed.key
# a CA-issued key: root -> intermediate -> leaf, made by openssl (the TLS
# recipes must send the chain to a client that trusts only the root)
ca_ext=$'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign'
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout root.key \
	-subj "/CN=Test Root CA" -days 30 -addext basicConstraints=critical,CA:true \
	-addext keyUsage=critical,keyCertSign,cRLSign -out root.pem 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout int.key \
	-subj "/CN=Test Intermediate CA" -out int.csr 2>/dev/null
openssl x509 -req -in int.csr -CA root.pem -CAkey root.key -days 30 \
	-extfile <(printf '%s\n' "$ca_ext") -out int.pem 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout issued.key \
	-subj "/CN=localhost/OU=issued" -out issued.csr 2>/dev/null
openssl x509 -req -in issued.csr -CA int.pem -CAkey int.key -days 30 \
	-extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n') -out issued.pem 2>/dev/null
cat issued.pem int.pem root.pem >issued.chain.pem
wks import-key -k web.wks --storepass pass:web-store-pw -a issued --key issued.key \
	--chain issued.chain.pem
expect 0 "wks import-key issued (a chain of 3)"
rm -f issued.key int.key root.key
for a in ec rsa ed; do
	wks export-cert -k web.wks -a "$a"
	cp "$T/out" "$a.wks.pem"
done
# the PIN file as docs/PKCS11.md writes it (no line end): every recipe
# reads it ("PIN files")
(umask 077 && printf '%s' 'web-store-pw' >web.pin)
printf '[token]\nlabel = web\nstore = web.wks\n' >p11.conf
export MODULE WKS_PKCS11_CONF=$T/p11.conf PIN_FILE=$T/web.pin
export OPENSSL_CONF=/dev/null WKS_PIN=web-store-pw
# fingerprint FILE: a PEM certificate's SHA-256 fingerprint.
fingerprint() { openssl x509 -in "$1" -noout -fingerprint -sha256 2>/dev/null; }

# ---- OpenSC pkcs11-tool ------------------------------------------------------

recipe pkcs11-tool-list
expect 0 "recipe pkcs11-tool-list"
out_has 'token label +: web' "pkcs11-tool -L lists the token"
out_has 'ECDSA-SHA256, .*sign, verify' "pkcs11-tool -M lists ECDSA-SHA256"
out_has 'EDDSA, .*sign, verify' "pkcs11-tool -M lists EDDSA"
out_has 'RSA-PKCS-PSS, .*sign, verify' "pkcs11-tool -M lists RSA-PKCS-PSS"
out_has 'Private Key Object; EC_EDWARDS' "pkcs11-tool -O shows the Ed25519 key after login"
out_has 'Private Key Object; RSA' "pkcs11-tool -O shows the RSA key after login"
out_has '^No errors' "pkcs11-tool --test: no errors"
run "-O without login" p11 --list-objects
if grep -q 'Private Key Object' "$T/out"; then
	bad "pkcs11-tool -O without login shows private keys"
else ok; fi

# sign_check ALIAS MECH: the recipe signs and verifies; a changed message
# fails the same verification.
sign_check() {
	mkdir -p "sign-$1-$2"
	(
		cd "sign-$1-$2"
		recipe pkcs11-tool-sign ALIAS="$1" MECH="$2"
		expect 0 "recipe pkcs11-tool-sign $1 $2"
		out_has 'Verified (OK|Successfully)' "pkcs11-tool $2 signature verified by openssl"
		echo "another message" >data.txt
		local md=sha256
		case $2 in *SHA384*) md=sha384 ;; *SHA512*) md=sha512 ;; esac
		case $2 in
		EDDSA) run x openssl pkeyutl -verify -pubin -inkey pub.pem -rawin -in data.txt -sigfile data.sig ;;
		*-PSS) run x openssl dgst "-$md" -sigopt rsa_padding_mode:pss -verify pub.pem -signature data.sig data.txt ;;
		*) run x openssl dgst "-$md" -verify pub.pem -signature data.sig data.txt ;;
		esac
		if [ "$rc" -ne 0 ]; then ok; else bad "$2: a changed message verified"; fi
		if cmp -s cert.der <(openssl x509 -in "../$1.wks.pem" -outform DER); then ok; else
			bad "$2: the certificate read is not the store's $1"; fi
		echo "$passed $failed" >counts
	)
	read -r passed failed <"sign-$1-$2/counts"
}
sign_check ec ECDSA-SHA256
sign_check rsa SHA256-RSA-PKCS-PSS
sign_check ed EDDSA
if [ "$FULL" = 1 ]; then
	sign_check rsa SHA256-RSA-PKCS
	sign_check rsa SHA512-RSA-PKCS-PSS
	for m in ECDSA-SHA384 ECDSA-SHA512; do sign_check ec "$m"; done
	# pkcs11-tool's own verification through the module (C_Verify)
	echo "a message to sign" >m.txt
	for am in ec:ECDSA-SHA256 rsa:SHA256-RSA-PKCS rsa:SHA512-RSA-PKCS-PSS ed:EDDSA; do
		a=${am%%:*} m=${am#*:}
		id=$(id_of "$a")
		run "$am" p11 --login --pin env:WKS_PIN --sign --id "$id" -m "$m" -i m.txt -o m.sig
		expect 0 "pkcs11-tool --sign $m ($a)"
		run "$am" p11 --verify --id "$id" -m "$m" -i m.txt --signature-file m.sig
		expect_out 0 'Signature is valid' "pkcs11-tool --verify $m ($a)"
		run "$am" p11 --verify --id "$id" -m "$m" -i p11.conf --signature-file m.sig
		if [ "$rc" -ne 0 ] || ! grep -q 'Signature is valid' "$T/out"; then ok; else
			bad "pkcs11-tool --verify $m ($a) accepted a bad signature"; fi
	done
	# raw RSA PKCS#1 over a DigestInfo-less hash, and raw ECDSA over a hash
	openssl dgst -sha256 -binary m.txt >m.sha256
	id=$(id_of ec)
	run raw p11 --login --pin env:WKS_PIN --sign --id "$id" -m ECDSA --signature-format openssl -i m.sha256 -o m.sig
	expect 0 "pkcs11-tool --sign -m ECDSA"
	run raw openssl pkeyutl -verify -pubin -inkey <(openssl x509 -in ec.wks.pem -pubkey -noout) -in m.sha256 -sigfile m.sig
	expect_out 0 'Verified Successfully' "raw ECDSA signature verified by openssl"
	id=$(id_of rsa)
	run raw p11 --login --pin env:WKS_PIN --sign --id "$id" -m RSA-PKCS -i m.sha256 -o m.sig
	expect 0 "pkcs11-tool --sign -m RSA-PKCS"
	run raw openssl pkeyutl -verifyrecover -pubin -inkey <(openssl x509 -in rsa.wks.pem -pubkey -noout) -in m.sig
	if [ "$rc" -eq 0 ] && cmp -s "$T/out" m.sha256; then ok; else bad "raw RSA-PKCS: recovered data is not the input"; fi
fi

recipe pkcs11-tool-keypairgen NEW=mail NEW_ID=0a01
expect 0 "recipe pkcs11-tool-keypairgen"
wks export-cert -k web.wks -a mail
if [ "$rc" -eq 0 ] && openssl x509 -noout -issuer <"$T/out" | grep -q 'CN *= *Example CA' &&
	cmp -s <(openssl x509 -outform DER <"$T/out") new.der; then ok; else
	bad "after --keypairgen and --write-object, the entry mail has the CA-issued certificate"
fi
run wksdump python3 "$WKSDUMP" dump --password-env WKS_PIN web.wks
if [ "$rc" -eq 0 ] && grep -q mail "$T/out"; then ok; else
	bad "wksdump.py reads the store the module wrote (entry mail)"; fi
# the key's CKA_ID now follows the CA-issued certificate (docs/PKCS11.md)
id=$(id_of mail)
if [ -n "$id" ]; then ok; else bad "no certificate labelled mail"; fi
run keygen-sign p11 --login --pin env:WKS_PIN --sign --id "$id" -m ECDSA-SHA256 --signature-format openssl -i p11.conf -o mail.sig
expect 0 "the generated key signs"
run keygen-verify openssl dgst -sha256 -verify new.pub.pem -signature mail.sig p11.conf
expect_out 0 'Verified OK' "the generated key's signature verifies with its public key"
# The CA's certificate with the key's CKA_ID: appended to its chain, also
# for a second key when the first holds it already (one company CA for
# all keys)
openssl x509 -in ca.pem -outform DER -out ca.der
certs_of() { wks export-cert -k web.wks -a "$1"; grep -c 'BEGIN CERTIFICATE' "$T/out" || true; }
run ca-mail p11 --login --pin env:WKS_PIN --write-object ca.der --type cert --id "$id"
expect 0 "--write-object of the CA certificate with mail's CKA_ID"
check "mail's chain is its leaf and the CA" [ "$(certs_of mail)" = 2 ]
run keygen2 p11 --login --pin env:WKS_PIN --keypairgen --key-type EC:prime256v1 --id 0a03 --label mail2
expect 0 "pkcs11-tool --keypairgen mail2"
run pub2 p11 --read-object --type pubkey --id 0a03 -o mail2.pub.der
openssl pkey -pubin -inform DER -in mail2.pub.der -out mail2.pub.pem
openssl req -new -key ca.key -subj /CN=mail2 -out mail2.csr
openssl x509 -req -in mail2.csr -CA ca.pem -CAkey ca.key -force_pubkey mail2.pub.pem \
	-days 30 -outform DER -out mail2.der 2>/dev/null
run leaf2 p11 --login --pin env:WKS_PIN --write-object mail2.der --type cert --id 0a03 --label mail2
expect 0 "--write-object of mail2's CA-issued certificate"
id2=$(id_of mail2)
run ca-mail2 p11 --login --pin env:WKS_PIN --write-object ca.der --type cert --id "$id2"
expect 0 "--write-object of the CA certificate with mail2's CKA_ID"
check "mail2's chain is its leaf and the CA, though mail holds the CA too" [ "$(certs_of mail2)" = 2 ]
check "mail's chain is unchanged" [ "$(certs_of mail)" = 2 ]

recipe pkcs11-tool-import NEW=imported NEW_ID=0a02
expect 0 "recipe pkcs11-tool-import"
out_has 'label: +imported' "--write-object privkey: the key is on the token"
wks list -k web.wks
if [ "$rc" -eq 0 ] && ! grep -q imported "$T/out" && grep -q mail "$T/out"; then ok; else
	bad "--delete-object: the entry imported is gone, mail stays"; fi
# a key entry's certificate alone is not deletable
run del-cert p11 --login --pin env:WKS_PIN --delete-object --type cert --id 0a01
if [ "$rc" -ne 0 ]; then ok; else bad "--delete-object --type cert of a key's certificate succeeded"; fi

# ---- GnuTLS ------------------------------------------------------------------

recipe p11tool ALIAS=rsa
expect 0 "recipe p11tool"
out_has 'URL: pkcs11:.*token=web;.*object=rsa;type=private|URL: pkcs11:.*token=web;.*object=rsa;type=cert' "p11tool --list-all lists the token's objects with URLs"
out_has 'object=ed;type=cert' "p11tool --list-all lists the Ed25519 certificate"
if [ -s rsa.pem ] && [ "$(fingerprint rsa.pem)" = "$(fingerprint rsa.wks.pem)" ]; then ok; else
	bad "p11tool --export: the certificate is the store's"; fi

# PIN files (docs/PKCS11.md "PIN files"): pin-source= takes the whole file
recipe p11tool-pin-source
expect 0 "recipe p11tool-pin-source"
n=$(grep -c 'URL: pkcs11:.*type=private' "$T/out" || true)
wks list -k web.wks --storepass "file:$PIN_FILE"
expect 0 "wks --storepass file: reads the PIN file"
k=$(grep -c ' private-key ' "$T/out" || true)
check "p11tool --login with pin-source= lists the $k private keys ($n)" [ "$n" -eq "$k" ]
printf '%s\n' 'web-store-pw' >lf.pin
recipe p11tool-pin-source PIN_FILE="$T/lf.pin"
if ! grep -q 'type=private' "$T/out"; then ok; else
	bad "pin-source= with a line end in the file logged in (the doc says the line end is part of the PIN)"; fi

# tls_gnutls ALIAS VERSIONS: gnutls-serv with ALIAS's key, checked with
# gnutls-cli and openssl s_client in each TLS version (1.2, 1.3).
tls_gnutls() {
	local a=$1 v port log
	port=$(free_port)
	log=$T/gnutls-serv-$a.log
	[ -s "$a.pem" ] || cp "$a.wks.pem" "$a.pem"
	start gnutls-serv "$log" ALIAS="$a" PORT="$port"
	if ! wait_port "$port"; then
		bad "gnutls-serv ($a) did not start: $(tail -5 "$log")"
		stop "$SPID"
		return
	fi
	ok
	# the recipe's two clients (TLS 1.3)
	recipe gnutls-cli ALIAS="$a" PORT="$port"
	expect 0 "recipe gnutls-cli ($a)"
	out_has 'Handshake was completed' "gnutls-cli: handshake with gnutls-serv ($a)"
	out_has 'Verify return code: 0 \(ok\)' "openssl s_client -verify_return_error: gnutls-serv ($a)"
	if [ "$a" = rsa ]; then
		out_has 'Peer signature type: RSA-PSS' "TLS 1.3: the RSA key signs RSA-PSS"
	fi
	for v in $2; do
		run "s_client $v" timeout 10 openssl s_client -connect "127.0.0.1:$port" \
			-CAfile "$a.pem" -verify_return_error "-tls${v/./_}" </dev/null
		if [ "$rc" -eq 0 ] && grep -q "Verify return code: 0 (ok)" "$T/out" &&
			grep -q "New, TLSv$v" "$T/out"; then ok; else
			bad "openssl s_client -tls$v to gnutls-serv ($a)"; fi
		run "gnutls-cli $v" timeout 10 gnutls-cli --x509cafile "$a.pem" --port "$port" \
			--priority "NORMAL:-VERS-ALL:+VERS-TLS$v" localhost </dev/null
		if [ "$rc" -eq 0 ] && grep -q "Description: (TLS$v-" "$T/out" &&
			grep -q "Handshake was completed" "$T/out"; then ok; else
			bad "gnutls-cli TLS $v to gnutls-serv ($a)"; fi
		if [ "$a" = rsa ] && [ "$v" = 1.2 ]; then
			out_has "^- Description: \\(TLS1.2-X.509\\)-.*-\\(RSA-SHA256\\)-" "TLS 1.2: the RSA key signs PKCS#1 v1.5 (CKM_RSA_PKCS)"
		fi
	done
	# a client trusting another certificate is refused
	run other timeout 10 openssl s_client -connect "127.0.0.1:$port" \
		-CAfile ca.pem -verify_return_error </dev/null
	if [ "$rc" -ne 0 ]; then ok; else bad "s_client trusting another CA accepted gnutls-serv ($a)"; fi
	stop "$SPID"
}
if [ "$FULL" = 1 ]; then
	for a in rsa ec ed; do tls_gnutls "$a" "1.2 1.3"; done
else
	tls_gnutls rsa "1.2"
fi

# A running server and a key that another program deletes or replaces
# (docs/PKCS11.md "Tokens"): the module rereads the store at the next
# operation init, so the next handshake cannot sign with the old key.  A
# token of its own (a copy of web.wks), so the rest keeps its keys.
# live_handshake WHAT CA: a gnutls-cli handshake with the live server,
# trusting CA; its status in $rc.
live_handshake() {
	run "$1" timeout 10 gnutls-cli --x509cafile "$2" --port "$port" localhost </dev/null
}
# live_server: gnutls-serv on the live token's key ec (port in $port).
live_server() {
	port=$(free_port)
	start gnutls-serv "$T/gnutls-serv-live$1.log" WKS_PKCS11_CONF="$T/live.conf" \
		TOKEN=live ALIAS=ec PORT="$port"
	if wait_port "$port"; then ok; else
		bad "gnutls-serv (live token) did not start: $(tail -5 "$T/gnutls-serv-live$1.log")"; fi
}
cp web.wks live.wks
printf '[token]\nlabel = live\nstore = live.wks\n' >live.conf
live_server 1
live_handshake before ec.wks.pem
expect_out 0 'Handshake was completed' "live gnutls-serv: handshake before the change"
wks delete -k live.wks -a ec --storepass pass:web-store-pw
expect 0 "wks delete of the key gnutls-serv uses"
live_handshake deleted ec.wks.pem
if [ "$rc" -ne 0 ] && ! grep -q 'Handshake was completed' "$T/out"; then ok; else
	bad "gnutls-serv completed a handshake with a key wks delete removed"; fi
check "gnutls-serv: the module refused the deleted key" \
	grep -q 'Error in handshake: PKCS #11 error in key' "$T/gnutls-serv-live1.log"
stop "$SPID"
# wks import-key --force: a new key and certificate under the same alias
cp web.wks live.wks
live_server 2
live_handshake before ec.wks.pem
expect_out 0 'Handshake was completed' "live gnutls-serv: handshake before the new key"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout new-ec.key \
	-subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -days 30 \
	-out new-ec.crt 2>/dev/null
wks import-key --force -k live.wks --storepass pass:web-store-pw -a ec --key new-ec.key --chain new-ec.crt
expect 0 "wks import-key --force of a new key where gnutls-serv's was"
rm -f new-ec.key
# gnutls-serv sends the certificate it read at its start (the old one)
# and, having kept the key's handle, cannot sign with the new key:
# handshakes fail until it is restarted, whichever certificate the client
# trusts; never one with the old key.
live_handshake replaced-old ec.wks.pem
if [ "$rc" -ne 0 ] && ! grep -q 'Handshake was completed' "$T/out"; then ok; else
	bad "gnutls-serv completed a handshake with the key import-key --force replaced"; fi
live_handshake replaced-new new-ec.crt
if [ "$rc" -ne 0 ] && ! grep -q 'Handshake was completed' "$T/out"; then ok; else
	bad "gnutls-serv completed a handshake trusting the new certificate before a restart"; fi
check "gnutls-serv: the module refused the replaced key" \
	grep -q 'Error in handshake: PKCS #11 error in key' "$T/gnutls-serv-live2.log"
stop "$SPID"
# restarted, it serves the new key
live_server 3
live_handshake restarted new-ec.crt
expect_out 0 'Handshake was completed' "gnutls-serv restarted: handshake with the new key"
stop "$SPID"
# The CA-issued key: gnutls-serv sends the leaf alone; with the chain from
# recipe tls-chain, a client trusting only the root verifies it.
mkdir chain && (
	cd chain
	recipe tls-chain STORE="$T/web.wks" ALIAS=issued
	expect 0 "recipe tls-chain"
	check "tls-chain: issued.chain.pem holds the 3 certificates, leaf first" \
		cmp -s issued.chain.pem ../issued.chain.pem
	check "tls-chain: issued.ca.pem holds the 2 CA certificates" \
		test "$(grep -c 'BEGIN CERTIFICATE' issued.ca.pem)" -eq 2
	for r in gnutls-serv gnutls-serv-chain; do
		port=$(free_port)
		start "$r" "$T/$r-issued.log" ALIAS=issued PORT="$port"
		if wait_port "$port"; then
			run "$r" timeout 10 openssl s_client -connect "127.0.0.1:$port" \
				-CAfile ../root.pem -verify_return_error </dev/null
			if [ "$r" = gnutls-serv ]; then
				if [ "$rc" -ne 0 ]; then ok; else
					bad "gnutls-serv with pkcs11: URIs sent a chain (the doc says the leaf alone)"; fi
			else
				if [ "$rc" -eq 0 ] && grep -q "Verify return code: 0 (ok)" "$T/out"; then ok; else
					bad "gnutls-serv-chain: s_client trusting only the root (exit $rc)"; fi
				run gnutls-cli timeout 10 gnutls-cli --x509cafile ../root.pem --port "$port" localhost </dev/null
				if [ "$rc" -eq 0 ] && grep -q "Handshake was completed" "$T/out"; then ok; else
					bad "gnutls-serv-chain: gnutls-cli trusting only the root (exit $rc)"; fi
			fi
		else
			bad "$r (issued) did not start: $(tail -5 "$T/$r-issued.log")"
		fi
		stop "$SPID"
	done
	echo "$passed $failed" >counts
)
read -r passed failed <chain/counts

# ---- p11-kit -----------------------------------------------------------------

H=$T/home
mkdir -p "$H/.config/pkcs11/modules"
as=()
LMOD=$MODULE
if [ "$(id -u)" -eq 0 ]; then
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	chmod 711 "$T"
	# nobody loads a copy of the module: the checkout may lie in a folder
	# other users cannot enter (root's home)
	LMOD=$(other_user_path "$MODULE")
fi
printf 'module: %s\n' "$LMOD" >"$H/.config/pkcs11/modules/wks.module"
if [ "${#as[@]}" -gt 0 ]; then chmod -R a+rX "$H" p11.conf; fi
set +e
(cd / && "${as[@]}" env HOME="$H" WKS_PKCS11_CONF="$WKS_PKCS11_CONF" \
	bash -eu -c "$(recipe_text p11-kit-list-modules)" recipe-p11-kit-list-modules) >"$T/out" 2>"$T/err"
rc=$?
set -e
chmod 700 "$T"
expect 0 "recipe p11-kit-list-modules"
out_has '^wks: ' "p11-kit list-modules lists the module"
out_has 'token: web' "p11-kit list-modules lists the token"

SOCK=$T/sock
start p11-kit-server "$T/p11-kit-server.log" SOCKET_DIR="$SOCK"
SRV=$SPID
for _ in $(seq 100); do [ -S "$SOCK/pkcs11" ] && break; sleep 0.1; done
if [ -S "$SOCK/pkcs11" ]; then ok; else bad "p11-kit server: no socket: $(tail -5 "$T/p11-kit-server.log")"; fi
if [ "$(stat -c %a "$SOCK")" = 700 ]; then ok; else bad "the socket's folder is not mode 700"; fi
mkdir client && (
	cd client
	recipe p11-kit-client CLIENT="$CLIENT" SOCKET_DIR="$SOCK"
	expect 0 "recipe p11-kit-client"
	out_has 'token label +: web' "p11-kit-client.so lists the served token"
	out_has 'Signature Verified Successfully' "a signature through p11-kit server verifies"
	if cmp -s cert.der <(openssl x509 -in ../ec.wks.pem -outform DER); then ok; else
		bad "the certificate read through p11-kit server is the store's"; fi
	echo "$passed $failed" >counts
)
read -r passed failed <client/counts
export P11_KIT_SERVER_ADDRESS=unix:path=$SOCK/pkcs11
# a listing of private keys through p11-kit 0.24, with no warning (the
# module answered CKA_ALLOWED_MECHANISMS, whose length query p11-kit's RPC
# cannot carry: CKR_DEVICE_ERROR, one warning per key)
run privkeys pkcs11-tool --module "$CLIENT" --login --pin env:WKS_PIN --list-objects --type privkey
if [ "$rc" -eq 0 ] && grep -q 'Private Key Object; EC' "$T/out" &&
	! grep -Eq 'warning|CKR_' "$T/err"; then ok; else
	bad "pkcs11-tool --list-objects --type privkey through p11-kit server: exit $rc, stderr: $(head -3 "$T/err")"; fi
# p11-kit 0.24 does not carry CKM_ECDSA_SHA256 (docs/PKCS11.md)
run ecdsa-sha256 pkcs11-tool --module "$CLIENT" --login --pin env:WKS_PIN --sign \
	--id "$(id_of ec)" -m ECDSA-SHA256 -i p11.conf -o x.sig
if [ "$rc" -ne 0 ] && grep -q CKR_MECHANISM_INVALID "$T/err"; then ok; else
	bad "p11-kit-client: ECDSA-SHA256 (rc $rc): the doc says p11-kit 0.24 refuses it"; fi
run wrong-pin pkcs11-tool --module "$CLIENT" --login --pin wrong-pin --list-objects
if [ "$rc" -ne 0 ] && grep -q CKR_PIN_INCORRECT "$T/err"; then ok; else
	bad "p11-kit-client: a wrong PIN is refused"; fi
if [ "${#as[@]}" -gt 0 ]; then
	chmod 711 "$T"
	run other-user "${as[@]}" pkcs11-tool --module "$CLIENT" --list-token-slots
	chmod 700 "$T"
	if ! grep -q 'token label' "$T/out"; then ok; else
		bad "another user reached the token through the socket"; fi
fi

# The shared login (docs/PKCS11.md "Shared login"): a second server, for
# the token with shared-login = yes; the module's debug log (its
# p11-kit-remote processes write to it) says who logged in and who took
# the login over.
printf '[token]\nlabel = web\nstore = web.wks\nshared-login = yes\nkek-cache-ttl = 60\n' \
	>p11-shared.conf
SOCK2=$T/sock2
start p11-kit-server "$T/p11-kit-server2.log" SOCKET_DIR="$SOCK2" \
	WKS_PKCS11_CONF="$T/p11-shared.conf" WKS_PKCS11_DEBUG="$T/p11-shared.log"
SRV2=$SPID
for _ in $(seq 100); do [ -S "$SOCK2/pkcs11" ] && break; sleep 0.1; done
mkdir shared && (
	cd shared
	recipe p11-kit-shared-login CLIENT="$CLIENT" SOCKET_DIR="$SOCK2"
	echo "$rc" >rc
	cp "$T/out" out
)
if grep -q 'shared login: the keyring:' "$T/p11-shared.log"; then
	echo "SKIP: shared login: no kernel keyring here ($(grep -m1 'the keyring:' "$T/p11-shared.log"))"
else
	rc=$(cat shared/rc)
	cp shared/out "$T/out"
	expect 0 "recipe p11-kit-shared-login"
	# the store's key entries (all with the store password), as wks sees them
	wks list -k web.wks --storepass pass:web-store-pw
	k=$(grep -c ' private-key ' "$T/out" || true)
	cp shared/out "$T/out"
	out_has "^$k\$" "a client that gave no PIN sees the $k private keys"
	out_has 'Signature Verified Successfully' "a signature through the shared login verifies"
	check "the first client's login was left in the keyring" \
		grep -q "shared login: $k key(s) in the user.s keyring" "$T/p11-shared.log"
	# every later connection (listing, certificate search, signing, reading)
	# took it over, with every key and no PBKDF2
	n=$(grep -c "shared login taken over ($k key(s))" "$T/p11-shared.log" || true)
	check "later clients took the login over ($n)" [ "$n" -ge 3 ]
	check "no later client logged in with PBKDF2" \
		[ "$(grep -c 'logged in (user)' "$T/p11-shared.log")" -eq 1 ]
	run shared-wrong-pin env P11_KIT_SERVER_ADDRESS="unix:path=$SOCK2/pkcs11" \
		pkcs11-tool --module "$CLIENT" --login --pin wrong-pin --list-objects
	if [ "$rc" -ne 0 ] && grep -q CKR_PIN_INCORRECT "$T/err"; then ok; else
		bad "shared login: a wrong PIN is refused (rc $rc)"; fi
	# wks-pkcs11-logout (built beside the module) ends it for everyone
	recipe p11-kit-shared-logout CLIENT="$CLIENT" SOCKET_DIR="$SOCK2" \
		LOGOUT="$(dirname "$MODULE")/wks-pkcs11-logout"
	expect 0 "recipe p11-kit-shared-logout"
	out_has '^web: logged out$' "wks-pkcs11-logout through p11-kit-client logs the token out"
	out_has '^0$' "after wks-pkcs11-logout a client that gave no PIN sees no private key"
fi
stop "$SRV2"

stop "$SRV"
run no-server pkcs11-tool --module "$CLIENT" --list-token-slots
if ! grep -q 'token label' "$T/out"; then ok; else bad "a token without the server"; fi
unset P11_KIT_SERVER_ADDRESS

# ---- OpenSSL with pkcs11-provider --------------------------------------------

OCNF=$T/openssl-pkcs11.cnf
recipe openssl-pkcs11-conf OPENSSL_CONF="$OCNF"
expect 0 "recipe openssl-pkcs11-conf"
if grep -q "^pkcs11-module-path = $MODULE\$" "$OCNF"; then ok; else bad "the OpenSSL configuration names the module"; fi
recipe openssl-pkey OPENSSL_CONF="$OCNF"
expect 0 "recipe openssl-pkey"
if [ "$rc" -eq 0 ] && [ "$(cat "$T/out")" = "$(openssl x509 -in ec.wks.pem -pubkey -noout)" ]; then ok; else
	bad "openssl pkey -pubout of the pkcs11: key is the certificate's key"; fi
# "PIN files": pkcs11-provider's file: takes the first line (a line end,
# LF or CRLF, is no part of the PIN), wks's file: too; a wrong PIN fails
# (the private key needs the login)
printf '%s\r\n' 'web-store-pw' >crlf.pin
printf '%s' 'wrong-pin' >bad.pin
for f in lf crlf bad; do
	recipe openssl-pkcs11-conf OPENSSL_CONF="$T/ossl-$f.cnf" PIN_FILE="$T/$f.pin"
	recipe openssl-pkey OPENSSL_CONF="$T/ossl-$f.cnf"
	if [ "$f" = bad ]; then
		if [ "$rc" -ne 0 ]; then ok; else bad "pkcs11-provider logged in with a wrong PIN file"; fi
	elif [ "$rc" -eq 0 ] && [ "$(cat "$T/out")" = "$(openssl x509 -in ec.wks.pem -pubkey -noout)" ]; then
		ok
	else
		bad "pkcs11-provider file: with a $f line end (exit $rc)"
	fi
done
wks list -k web.wks --storepass "file:$T/crlf.pin"
expect 0 "wks --storepass file: with a CRLF line end"

# tls_ossl ALIAS VERSIONS: openssl s_server through pkcs11-provider.
tls_ossl() {
	local a=$1 v port log
	port=$(free_port)
	log=$T/s_server-$a.log
	start openssl-s_server "$log" OPENSSL_CONF="$OCNF" ALIAS="$a" HOST=127.0.0.1 PORT="$port"
	if ! wait_port "$port"; then
		bad "openssl s_server ($a) did not start: $(tail -5 "$log")"
		stop "$SPID"
		return
	fi
	ok
	for v in $2; do
		run "s_client $v" timeout 10 openssl s_client -connect "127.0.0.1:$port" \
			-CAfile "$a.wks.pem" -verify_return_error "-tls${v/./_}" </dev/null
		if [ "$rc" -eq 0 ] && grep -q "Verify return code: 0 (ok)" "$T/out" &&
			grep -q "New, TLSv$v" "$T/out"; then ok; else
			bad "openssl s_client -tls$v to s_server with a pkcs11: key ($a)"; fi
		if [ "$a" = rsa ] && [ "$v" = 1.3 ]; then
			out_has 'Peer signature type: RSA-PSS' "s_server TLS 1.3: the RSA key signs RSA-PSS"
		fi
	done
	stop "$SPID"
}
if [ "$FULL" = 1 ]; then
	for a in ec rsa ed; do tls_ossl "$a" "1.2 1.3"; done
else
	tls_ossl ec "1.3"
fi

# the CA-issued key through pkcs11-provider, with the CA certificates of
# recipe tls-chain: a client trusting only the root verifies it
(
	cd chain
	port=$(free_port)
	start openssl-s_server-chain "$T/s_server-chain.log" OPENSSL_CONF="$OCNF" ALIAS=issued \
		HOST=127.0.0.1 PORT="$port"
	if wait_port "$port"; then
		run chain timeout 10 openssl s_client -connect "127.0.0.1:$port" -CAfile ../root.pem \
			-verify_return_error </dev/null
		if [ "$rc" -eq 0 ] && grep -q "Verify return code: 0 (ok)" "$T/out"; then ok; else
			bad "openssl-s_server-chain: s_client trusting only the root (exit $rc)"; fi
	else
		bad "openssl s_server (issued) did not start: $(tail -5 "$T/s_server-chain.log")"
	fi
	stop "$SPID"
	echo "$passed $failed" >counts
)
read -r passed failed <chain/counts

# renaming an entry (p11tool --set-label): the entry and its chain follow
recipe p11tool-rename ALIAS=issued NEW=issued-2
expect 0 "recipe p11tool-rename"
wks list -k web.wks --storepass "file:$PIN_FILE"
if grep -q '^issued-2 .*chain of 3' "$T/out" && ! grep -q '^issued ' "$T/out"; then ok; else
	bad "p11tool --set-label: the entry issued is now issued-2, with its chain"; fi
run labels p11tool --provider "$MODULE" --list-all "pkcs11:token=web"
check "the chain certificates follow the new label" grep -q 'object=issued-2%2F2;type=cert' "$T/out"
recipe p11tool-rename ALIAS=issued-2 NEW=ec
if [ "$rc" -ne 0 ]; then ok; else bad "p11tool --set-label to an alias in use succeeded"; fi

end_tests
