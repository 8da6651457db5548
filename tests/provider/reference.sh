#!/usr/bin/env bash
# Key reference files (docs/PROVIDER.md, "Key references") with the stock
# openssl tool and Python's ssl module, both reading the key as a PEM
# file, with OPENSSL_CONF naming an openssl.cnf that loads wks.so:
#   references = yes   pkey -in ref.pem gives the store's key; s_server
#                      -key ref.pem serves it (the full chain from a PEM
#                      file written by wks export-cert); a key password
#                      through -passin/-pass; a store password from the
#                      application; ordinary PEM keys untouched
#   references off     (default, and = no) the reference is an unreadable
#                      PEM and the store file is never opened (strace)
#   refused            pass: in a reference (never echoed), only=, no
#                      alias=, bad base64; a wrong store password and a
#                      missing alias name the store and alias and never
#                      the password; references = maybe
#   wks export-key --reference refuses pass:, a wrong --ref-storepass, a
#                      missing alias, and writes a file that is not 0600
#   wks check-reference  a good reference (and --cert), a wrong store
#                      password, a missing password file, a wrong key
#                      password, a missing alias, references off, no
#                      provider, two blocks, another user than the server's
#
# usage: reference.sh WKS_BINARY PROVIDER_DIR
# Works in a mktemp -d folder that it removes; every program is bounded by
# timeout and runs without a terminal.  Exits 1 on any failure.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 WKS_BINARY PROVIDER_DIR" >&2
	exit 2
fi
HERE=$(dirname "$(readlink -f "$0")")
WKS_BIN=$(readlink -f "$1")
PROV_DIR=$(readlink -f "$2")
T=$(mktemp -d "${TMPDIR:-/tmp}/wks-ref.XXXXXX")
SERVER_PID=
cleanup() {
	if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
	rm -rf "$T"
}
trap cleanup EXIT
cd "$T"
export WKS_PROPERTIES=
. "$HERE/reflib.sh"

mkpki
mkconf on.cnf 'references = yes'
mkconf off.cnf
mkconf no.cnf 'references = no'
mkconf maybe.cnf 'references = maybe'

# ossl CONF CMD ARGS...: openssl with OPENSSL_CONF=CONF; stdout in $T/out,
# stderr in $T/err, status in rc.
ossl() {
	local conf=$1
	shift
	set +e
	OPENSSL_CONF=$T/$conf setsid -w timeout 30 openssl "$@" </dev/null \
		>"$T/out" 2>"$T/err"
	rc=$?
	set -e
}
pub_of() { openssl pkey -in "$1" -pubout 2>/dev/null; }
# mkref FILE URI: a reference block holding URI, written by hand.
mkref() {
	{
		echo '-----BEGIN WKS KEY REFERENCE-----'
		printf '%s' "$2" | base64 -w 64
		echo '-----END WKS KEY REFERENCE-----'
	} >"$1"
}

# ---- wks export-key --reference ------------------------------------------------

wks_ok export-key -k server.wks -a server --reference \
	--ref-storepass file:storepw.txt -o ref.pem
if [ -s ref.pem ] && grep -q '^-----BEGIN WKS KEY REFERENCE-----$' ref.pem &&
   ! grep -q 'ref store pw' ref.pem &&
   base64 -d <(sed -n '/BEGIN WKS/,/END WKS/p' ref.pem | sed '1d;$d') |
	grep -qx "wks:$T/server.wks?alias=server&storepass=file:$T/storepw.txt"; then
	ok "export-key --reference: absolute store and file: paths, no password"
else bad "export-key --reference: contents"; cat ref.pem >&2 || true; fi
mode=$(stat -c %a ref.pem)
if [ "$mode" != 600 ]; then ok "reference mode $mode (not secret)"; else
	bad "reference mode 600"; fi

wks export-key -k server.wks -a server --reference \
	--ref-storepass 'pass:ref store pw' -o r-pass.pem
if [ $rc -eq 2 ] && [ ! -e r-pass.pem ] && grep -q 'not pass:' err &&
   ! grep -q 'ref store pw' err; then ok "export-key --reference refuses pass:"
else bad "export-key --reference pass: (exit $rc)"; fi

printf 'wrong\n' >wrongpw.txt
wks export-key -k server.wks -a server --reference \
	--ref-storepass file:wrongpw.txt -o r-wrong.pem
if [ $rc -eq 4 ] && [ ! -e r-wrong.pem ]; then
	ok "export-key --reference checks --ref-storepass"
else bad "export-key --reference wrong --ref-storepass (exit $rc)"; fi

wks export-key -k server.wks -a nope --reference \
	--ref-storepass file:storepw.txt -o r-nope.pem
if [ $rc -eq 3 ] && [ ! -e r-nope.pem ]; then
	ok "export-key --reference checks the alias"
else bad "export-key --reference missing alias (exit $rc)"; fi

# ---- references = yes: the store's key ------------------------------------------

ossl on.cnf pkey -in ref.pem -pubout
if [ $rc -eq 0 ] && [ "$(cat out)" = "$(pub_of leaf.key)" ]; then
	ok "pkey -in ref.pem gives the store's key"
else bad "pkey -in ref.pem (exit $rc)"; fi

# Through PEM_read_bio_PrivateKey() / SSL_CTX_use_PrivateKey_file(): Python.
set +e
OPENSSL_CONF=$T/on.cnf timeout 30 python3 -c '
import ssl, sys
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
c.load_cert_chain("chain.pem", "ref.pem")
print("loaded")' >out 2>err
rc=$?
set -e
if [ $rc -eq 0 ] && grep -q loaded out; then
	ok "python ssl load_cert_chain(chain.pem, ref.pem)"
else bad "python load_cert_chain (exit $rc)"; fi

# Ordinary PEM keys are untouched with references on.
q genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem
q pkey -in leaf.key -aes256 -passout pass:pempw -out enc.pem
q ec -in leaf.key -out trad.pem
for f in rsa.pem leaf.key trad.pem; do
	ossl on.cnf pkey -in $f -pubout
	if [ $rc -eq 0 ] && [ "$(cat out)" = "$(pub_of $f)" ]; then
		ok "ordinary PEM key $f with references = yes"
	else bad "ordinary PEM key $f (exit $rc)"; fi
done
ossl on.cnf pkey -in enc.pem -passin pass:pempw -pubout
if [ $rc -eq 0 ] && [ "$(cat out)" = "$(pub_of leaf.key)" ]; then
	ok "encrypted PEM key with references = yes"
else bad "encrypted PEM key (exit $rc)"; fi

# A PEM file with the chain first and the reference after it (haproxy's
# form), and a note before the block.
cat chain.pem ref.pem >combined.pem
ossl on.cnf pkey -in combined.pem -pubout
if [ $rc -eq 0 ] && [ "$(cat out)" = "$(pub_of leaf.key)" ]; then
	ok "chain + reference in one PEM file"
else bad "chain + reference (exit $rc)"; fi

# ---- references off: an unreadable PEM, the store never opened ------------------

for conf in off.cnf no.cnf; do
	set +e
	OPENSSL_CONF=$T/$conf setsid -w timeout 30 strace -f -e trace=open,openat \
		-o trace.txt openssl pkey -in ref.pem -noout </dev/null >out 2>err
	rc=$?
	set -e
	if [ $rc -ne 0 ] && grep -q 'wks.so' trace.txt &&
	   ! grep -q 'server.wks\|storepw.txt' trace.txt &&
	   grep -qi 'unsupported\|no supported data' err; then
		ok "$conf: the reference is an unreadable PEM, store not opened"
	else bad "$conf: rc $rc, trace: $(grep -c 'server.wks' trace.txt) opens"; fi
done
# The check above would see an open: with references on, it does.
set +e
OPENSSL_CONF=$T/on.cnf setsid -w timeout 30 strace -f -e trace=open,openat \
	-o trace.txt openssl pkey -in ref.pem -noout </dev/null >out 2>err
set -e
if grep -q 'server.wks' trace.txt; then ok "on.cnf: strace sees the store opened"
else bad "on.cnf: strace does not see the store"; fi

ossl maybe.cnf pkey -in ref.pem -noout
if [ $rc -ne 0 ] && grep -q 'references = maybe: expected yes or no' err; then
	ok "references = maybe is a configuration error"
else bad "references = maybe (exit $rc)"; fi

# ---- passwords --------------------------------------------------------------------

# No storepass= in the reference: the application's password (-passin),
# named in the prompt info; without it, a clear error.
wks_ok export-key -k server.wks -a server --reference --storepass file:storepw.txt \
	-o ref-nopw.pem
ossl on.cnf pkey -in ref-nopw.pem -passin file:storepw.txt -pubout
if [ $rc -eq 0 ] && [ "$(cat out)" = "$(pub_of leaf.key)" ]; then
	ok "store password from -passin"
else bad "store password from -passin (exit $rc)"; fi
ossl on.cnf pkey -in ref-nopw.pem -noout
if [ $rc -ne 0 ] && grep -q 'no password was given' err &&
   grep -q 'server.wks' err && grep -q '"server"' err; then
	ok "no password: the error names store and alias"
else bad "no password (exit $rc)"; fi

# A key with a password of its own, not in the reference: asked through
# the passphrase callback (-passin), after the store password fails it.
wks_ok import-key -k server.wks -a kp --key leaf.key --chain leaf.crt \
	--chain int.crt --chain root.crt --storepass file:storepw.txt \
	--keypass pass:own-key-pw --iterations 10000
wks_ok export-key -k server.wks -a kp --reference --ref-storepass file:storepw.txt \
	--keypass pass:own-key-pw -o ref-kp.pem
if grep -q 'server must give it' err; then ok "export-key notes the key password"
else bad "export-key: no note on the key password"; fi
ossl on.cnf pkey -in ref-kp.pem -passin pass:own-key-pw -pubout
if [ $rc -eq 0 ] && [ "$(cat out)" = "$(pub_of leaf.key)" ]; then
	ok "key password from -passin"
else bad "key password from -passin (exit $rc)"; fi
ossl on.cnf pkey -in ref-kp.pem -passin pass:not-it -noout
if [ $rc -ne 0 ] && grep -q 'key entry "kp"' err && ! grep -q 'not-it' err; then
	ok "wrong key password: names the entry, not the password"
else bad "wrong key password (exit $rc)"; fi
# ... or from --ref-keypass (env:).
wks_ok export-key -k server.wks -a kp --reference --ref-storepass file:storepw.txt \
	--ref-keypass env:KP_PW --keypass pass:own-key-pw -o ref-kp2.pem
# KP_PW is the server's, not set here: checked with --keypass (none and
# no terminal: an error).
wks export-key -k server.wks -a kp --reference --ref-storepass file:storepw.txt \
	--ref-keypass env:KP_PW -o ref-kp3.pem
if [ $rc -ne 0 ] && [ ! -e ref-kp3.pem ] && grep -q 'KP_PW is not set here' err; then
	ok "export-key --reference: --ref-keypass env: unset, no --keypass"
else bad "--ref-keypass env: unset (exit $rc)"; fi
KP_PW=bad-key-pw wks export-key -k server.wks -a kp --reference \
	--ref-storepass file:storepw.txt --ref-keypass env:KP_PW -o ref-kp3.pem
if [ $rc -eq 4 ] && [ ! -e ref-kp3.pem ]; then
	ok "export-key --reference checks --ref-keypass"
else bad "--ref-keypass env: wrong (exit $rc)"; fi
KP_PW=own-key-pw ossl on.cnf pkey -in ref-kp2.pem -pubout
if [ $rc -eq 0 ] && [ "$(cat out)" = "$(pub_of leaf.key)" ]; then
	ok "key password from keypass=env:"
else bad "keypass=env: (exit $rc)"; fi

# ---- refused references and errors ---------------------------------------------------

mkref r-pass.pem "wks:$T/server.wks?alias=server&storepass=pass:ref%20store%20pw"
mkref r-only.pem "wks:$T/server.wks?alias=server&storepass=file:$T/storepw.txt&only=certs"
mkref r-noalias.pem "wks:$T/server.wks?storepass=file:$T/storepw.txt"
mkref r-wrong.pem "wks:$T/server.wks?alias=server&storepass=file:$T/wrongpw.txt"
mkref r-nope.pem "wks:$T/server.wks?alias=nope&storepass=file:$T/storepw.txt"
mkref r-gone.pem "wks:$T/gone.wks?alias=server&storepass=file:$T/storepw.txt"
printf '%s\n' '-----BEGIN WKS KEY REFERENCE-----' 'not*base64' \
	'-----END WKS KEY REFERENCE-----' >r-b64.pem
check_err() { # FILE WHAT PATTERN...
	local f=$1 what=$2
	shift 2
	ossl on.cnf pkey -in "$f" -noout
	local good=1 p
	[ $rc -ne 0 ] || good=0
	for p in "$@"; do grep -q -- "$p" err || good=0; done
	if grep -qi 'ref store pw\|ref%20store' err; then good=0; fi
	if [ $good = 1 ]; then ok "$what"; else bad "$what (exit $rc)"; fi
}
check_err r-pass.pem "pass: refused, not echoed" 'storepass=pass: is not allowed'
check_err r-only.pem "only= refused" 'only= is not allowed'
check_err r-noalias.pem "alias= required" 'alias= is required'
check_err r-b64.pem "bad base64" 'bad base64'
check_err r-wrong.pem "wrong store password names store and alias" \
	'integrity check failed' "store $T/server.wks" 'alias "server"'
check_err r-nope.pem "missing alias names store and alias" \
	'no entry "nope"' "$T/server.wks"
check_err r-gone.pem "missing store names it" "$T/gone.wks"

# ---- wks check-reference: the server's read, before a reload ---------------------

# cr CONF ARGS...: wks check-reference with OPENSSL_CONF=CONF.
cr() {
	local conf=$1
	shift
	OPENSSL_CONF=$conf wks check-reference "$@"
}
# cr_is WHAT STATUS PATTERN...: the last cr exited STATUS and its stderr
# holds every PATTERN (grep -F) and no password.
cr_is() {
	local what=$1 want=$2 good=1 p
	shift 2
	[ "$rc" -eq "$want" ] || good=0
	for p in "$@"; do grep -qF -- "$p" err || good=0; done
	if grep -q 'ref store pw\|own-key-pw\|not-it' err out; then good=0; fi
	if [ $good = 1 ]; then ok "check-reference: $what"
	else bad "check-reference: $what (exit $rc, expected $want)"; fi
}
wks check-reference --help
if [ $rc -eq 0 ] && grep -q '^usage: wks check-reference --file REF' out &&
   grep -q 'EXIT STATUS' out; then ok "check-reference --help"
else bad "check-reference --help (exit $rc)"; fi
wks check-reference
cr_is "no --file" 2 'option --file is required'
cr "$T/on.cnf" --file ref.pem
if [ $rc -eq 0 ] && grep -qF "ref.pem: OK: the key \"server\" (EC, 256 bits) of $T/server.wks; read as a server reads it: OpenSSL configuration $T/on.cnf, provider \"wks\", uid $(id -u)" out; then
	ok "check-reference: a good reference"
else bad "check-reference: a good reference (exit $rc): $(cat out)"; fi
cr "$T/on.cnf" --file ref.pem --cert chain.pem
if [ $rc -eq 0 ] && grep -q 'matching the certificate' out; then
	ok "check-reference: --cert, the server's chain"
else bad "check-reference --cert chain.pem (exit $rc)"; fi
cr "$T/on.cnf" --file ref.pem --cert client.crt
cr_is "--cert another key's certificate" 8 'does not match the first certificate of client.crt'
cr "$T/on.cnf" --file r-wrong.pem
cr_is "a wrong store password" 4 \
	"wks: integrity check failed: wrong password or modified file: store $T/server.wks" \
	"the store password (its storepass= source) does not open $T/server.wks"
mkref r-nofile.pem "wks:$T/server.wks?alias=server&storepass=file:$T/no-such-pw"
cr "$T/on.cnf" --file r-nofile.pem
cr_is "a missing password file" 6 "storepass: cannot open $T/no-such-pw: No such file or directory"
cr "$T/on.cnf" --file ref-kp.pem --inpass pass:not-it
cr_is "a wrong key password (--inpass)" 4 'key entry "kp"' \
	'the key password (the store password, then --inpass) does not open the key "kp"'
cr "$T/on.cnf" --file ref-kp.pem
cr_is "a key password of its own, none given" 4 'does not open the key "kp"' '--inpass here'
cr "$T/on.cnf" --file ref-kp.pem --inpass pass:own-key-pw
if [ $rc -eq 0 ] && grep -q 'OK: the key "kp"' out; then
	ok "check-reference: the key password from --inpass"
else bad "check-reference: --inpass own-key-pw (exit $rc)"; fi
cr "$T/on.cnf" --file r-nope.pem
cr_is "a missing alias" 3 "no entry \"nope\" in $T/server.wks"
cr "$T/off.cnf" --file ref.pem
cr_is "references off" 1 'is loaded without references = yes'
cr /dev/null --file ref.pem
cr_is "no provider in OPENSSL_CONF" 1 'OpenSSL'"'"'s configuration /dev/null (OPENSSL_CONF) loads no wks provider'
cat r-wrong.pem ref.pem >two.pem
cr "$T/on.cnf" --file two.pem
cr_is "two references in one file" 5 'a second -----BEGIN WKS KEY REFERENCE----- line (line '
cr "$T/on.cnf" --file chain.pem
cr_is "not a reference" 5 'no -----BEGIN WKS KEY REFERENCE----- line'
# The same user as the server: the password file is root's (0600).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	chmod 755 "$T"
	# nobody runs copies of wks and wks.so, in a folder it can enter (the
	# checkout may lie in one it cannot: root's 0700 home)
	mkdir -m 755 other-user
	cp "$WKS_BIN" "$PROV_DIR/wks.so" other-user/
	chmod 755 other-user/wks other-user/wks.so
	PROV_DIR=$T/other-user mkconf on-other.cnf 'references = yes'
	set +e
	OPENSSL_CONF=$T/on-other.cnf setsid -w timeout 60 setpriv --reuid=nobody \
		--regid=nogroup --clear-groups "$T/other-user/wks" check-reference \
		--file "$T/ref.pem" </dev/null >out 2>err
	rc=$?
	set -e
	chmod 700 "$T"
	cr_is "as another user than the server's" 6 "storepass: cannot open $T/storepw.txt: Permission denied"
fi
# A reference followed by certificates, read object by object (a file
# store): the decoder reads past the block for a second reference and
# puts the input back, so the certificates are still found.
cat ref.pem chain.pem >ref-then-chain.pem
ossl on.cnf storeutl -noout ref-then-chain.pem
if [ $rc -eq 0 ] && grep -q '^0: Pkey' out && grep -q '^3: Certificate' out; then
	ok "storeutl: a reference, then its chain (4 objects)"
else bad "storeutl ref-then-chain.pem (exit $rc): $(tr '\n' ' ' <out)"; fi

# ---- s_server with the key from a reference, the chain from export-cert ------------

wks_ok export-cert -k server.wks -a server --storepass file:storepw.txt -o srvchain.pem
# -cert takes the leaf (the first certificate), -cert_chain the rest.
awk 'n>=1{print} /-----END CERTIFICATE-----/{n++}' srvchain.pem >issuers.pem
port=$(free_port)
OPENSSL_CONF=$T/on.cnf setsid timeout 60 openssl s_server -accept 127.0.0.1:$port \
	-www -key ref.pem -cert srvchain.pem -cert_chain issuers.pem \
	-no_dhe </dev/null >srv.out 2>&1 &
SERVER_PID=$!
if wait_port $port; then
	served $port
	if [ $rc -eq 0 ] && full_chain; then
		ok "s_server -key ref.pem: verified, full chain, the store's leaf"
	else bad "s_server -key ref.pem (s_client exit $rc)"; fi
else bad "s_server -key ref.pem did not start: $(head -5 srv.out)"; fi
kill $SERVER_PID 2>/dev/null || true
wait $SERVER_PID 2>/dev/null || true
SERVER_PID=

# The key password through s_server -pass.
port=$(free_port)
OPENSSL_CONF=$T/on.cnf setsid timeout 60 openssl s_server -accept 127.0.0.1:$port \
	-www -key ref-kp.pem -pass pass:own-key-pw -cert srvchain.pem \
	-cert_chain issuers.pem </dev/null >srv.out 2>&1 &
SERVER_PID=$!
if wait_port $port; then
	served $port
	if [ $rc -eq 0 ] && full_chain; then
		ok "s_server -key ref.pem -pass (key password of its own)"
	else bad "s_server -pass (s_client exit $rc)"; fi
else bad "s_server -pass did not start: $(head -5 srv.out)"; fi
kill $SERVER_PID 2>/dev/null || true
wait $SERVER_PID 2>/dev/null || true
SERVER_PID=

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
