#!/usr/bin/env bash
# A token used from another host (docs/PKCS11.md "A token used from
# another host", issue 30 item 5): `p11-kit server` serves the token on a
# Unix socket (recipe p11-kit-server) and OpenSSH forwards that socket to
# "the client host".  CI has one machine, so the other host is this one
# through an sshd the test starts on 127.0.0.1 (its own host key,
# configuration and authorized_keys in the test's folder):
#
#   -L   recipe p11-kit-ssh-forward makes the forwarded socket (owner the
#        ssh user, mode 0600, in a mode-700 folder); recipe
#        p11-kit-client signs with pkcs11-tool through p11-kit-client.so
#        on it (openssl verifies; a changed message fails), the
#        certificate read through it is the store's; recipe
#        p11-kit-ssh-openssl signs with openssl through pkcs11-provider
#        and verifies; a wrong PIN is refused; sshd's log shows the
#        login; another user cannot connect to the forwarded socket, even
#        with its folder open (the socket's mode); a second forward
#        onto the stale socket works (StreamLocalBindUnlink); with ssh
#        stopped, no token on that socket
#   -R   recipe p11-kit-ssh-push: the token host pushes its socket; a
#        pkcs11-tool signature through it verifies
#
# Nothing is copied to "the client host": the client side runs with no
# WKS_PKCS11_CONF, in a folder of its own without the store.  Every
# process the test starts (p11-kit server, sshd, the ssh forwards) is
# stopped on exit.
#
# usage: remote_token.sh MODULE WKS_BINARY SHARED_DIR
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

start_tests p11remote
chmod 700 "$T"
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -z "${WKS_TEST_KEEP:-}" ]; then rm -rf "$T"; fi
}
trap cleanup EXIT

CLIENT=/usr/lib/x86_64-linux-gnu/pkcs11/p11-kit-client.so
OSSL_PKCS11=/usr/lib/x86_64-linux-gnu/ossl-modules/pkcs11.so
missing=""
for b in pkcs11-tool p11-kit openssl ssh ssh-keygen sshd python3 setsid; do
	command -v "$b" >/dev/null 2>&1 || missing="$missing $b"
done
[ -e "$CLIENT" ] || missing="$missing $CLIENT(p11-kit-modules)"
[ -e "$OSSL_PKCS11" ] || missing="$missing $OSSL_PKCS11(pkcs11-provider)"
if [ -n "$missing" ]; then
	echo "FAIL: missing:$missing (sh scripts/deps.sh test installs them)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

# ---- helpers (as in programs_opensc_gnutls.sh) --------------------------------

run() {
	shift
	set +e
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}
recipe() {
	local name=$1
	shift
	set +e
	env "$@" bash -eu -c "$(recipe_text "$name")" "recipe-$name" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}
out_has() {
	if grep -Eq -- "$1" "$T/out"; then ok; else
		bad "$2: stdout must match /$1/"
		sed 's/^/    stdout: /' "$T/out" | tail -12 >&2
	fi
}
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
# wait_sock PATH PID: until PATH is a socket (10 s), or PID ended.
wait_sock() {
	for _ in $(seq 100); do
		[ -S "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
wait_port() {
	for _ in $(seq 100); do
		if (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}

# ---- the token host: the store, the module, p11-kit server ------------------

mkdir token-host
cd token-host
wks genkeypair -k web.wks --storepass pass:web-store-pw -a ec --keyalg EC --dname CN=remote
expect 0 "wks genkeypair EC"
wks export-cert -k web.wks -a ec
cp "$T/out" ec.wks.pem
printf '[token]\nlabel = web\nstore = %s/web.wks\n' "$PWD" >p11.conf
SRV_DIR=$T/token-host/sock
start p11-kit-server "$T/p11-kit-server.log" MODULE="$MODULE" \
	WKS_PKCS11_CONF="$T/token-host/p11.conf" SOCKET_DIR="$SRV_DIR"
SRV=$SPID
if wait_sock "$SRV_DIR/pkcs11" "$SRV"; then ok; else
	bad "p11-kit server: no socket: $(tail -5 "$T/p11-kit-server.log")"
	end_tests
	exit 1
fi
cd "$T"

# ---- sshd on 127.0.0.1, and the client's ssh configuration -----------------

SSH_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
USER_NAME=$(id -un)
mkdir sshd
ssh-keygen -q -t ed25519 -N '' -C sshd-test -f sshd/host_key
ssh-keygen -q -t ed25519 -N '' -C client -f sshd/id_client
cp sshd/id_client.pub sshd/authorized_keys
cat >sshd/sshd_config <<EOF
ListenAddress 127.0.0.1:$SSH_PORT
HostKey $T/sshd/host_key
PidFile $T/sshd/sshd.pid
AuthorizedKeysFile $T/sshd/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AllowUsers $USER_NAME
AllowStreamLocalForwarding yes
StreamLocalBindUnlink yes
LogLevel VERBOSE
EOF
if [ "$(id -u)" = 0 ]; then
	# the privilege separation folder (made by the service otherwise)
	mkdir -p /run/sshd
	chmod 755 /run/sshd
fi
setsid "$(command -v sshd)" -D -e -f "$T/sshd/sshd_config" >sshd.log 2>&1 &
PIDS+=($!)
if ! wait_port "$SSH_PORT"; then
	bad "sshd does not listen on 127.0.0.1:$SSH_PORT"
	sed 's/^/    sshd: /' sshd.log >&2
	end_tests
	exit 1
fi
printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 sshd/host_key.pub)" >sshd/known_hosts
# both hosts' ssh: the whole configuration (-F), the names of the recipes
cat >sshd/ssh_config <<EOF
Host token-host client-host
  HostName 127.0.0.1
  Port $SSH_PORT
  UserKnownHostsFile $T/sshd/known_hosts
  StrictHostKeyChecking yes
  IdentityFile $T/sshd/id_client
  IdentitiesOnly yes
  BatchMode yes
  ConnectTimeout 10
EOF
mkdir bin
printf '#!/bin/sh\nexec %q -F %q "$@"\n' "$(command -v ssh)" "$T/sshd/ssh_config" >bin/ssh
chmod 755 bin/ssh
export PATH="$T/bin:$PATH"

# ---- the client host: nothing of the token's but the socket ------------------

mkdir client-host
cd client-host
unset WKS_PKCS11_CONF
export HOME=$T/client-host
PIN=web-store-pw
(umask 077 && printf '%s' "$PIN" >web.pin)
LOCAL=$HOME/.wks-pkcs11
start p11-kit-ssh-forward "$T/ssh-forward.log" TOKEN_HOST=token-host \
	REMOTE_USER="$USER_NAME" REMOTE_SOCKET_DIR="$SRV_DIR" SOCKET_DIR="$LOCAL"
FWD=$SPID
if wait_sock "$LOCAL/pkcs11" "$FWD"; then ok; else
	bad "ssh -L: no forwarded socket: $(tail -5 "$T/ssh-forward.log")"
	end_tests
	exit 1
fi
check "the forwarded socket: the ssh user's, mode 600" \
	[ "$(stat -c '%U %a' "$LOCAL/pkcs11")" = "$USER_NAME 600" ]
check "its folder: mode 700" [ "$(stat -c %a "$LOCAL")" = 700 ]
no_store() { [ -z "$(find "$T/client-host" -name 'web.wks*' -print -quit)" ]; }
check "the client host has no store" no_store

# pkcs11-tool through p11-kit-client.so on the forwarded socket
mkdir sign && (
	cd sign
	recipe p11-kit-client CLIENT="$CLIENT" SOCKET_DIR="$LOCAL" PIN_FILE="$T/client-host/web.pin"
	expect 0 "recipe p11-kit-client on the forwarded socket"
	out_has 'token label +: web' "p11-kit-client.so lists the remote token"
	out_has 'Signature Verified Successfully' "a remote pkcs11-tool signature verifies"
	if cmp -s cert.der <(openssl x509 -in "$T/token-host/ec.wks.pem" -outform DER); then ok; else
		bad "the certificate read through the forward is the store's"; fi
	# the signature is of that message only
	echo "another message" >other.txt
	openssl dgst -sha256 -binary other.txt >other.sha256
	run verify-other openssl pkeyutl -verify -pubin -inkey pub.pem -in other.sha256 -sigfile data.sig
	if [ "$rc" -ne 0 ]; then ok; else bad "the remote signature verifies a changed message"; fi
	echo "$passed $failed" >counts
)
read -r passed failed <sign/counts
check "sshd logged the client's login" grep -q 'Accepted publickey' "$T/sshd.log"

export P11_KIT_SERVER_ADDRESS=unix:path=$LOCAL/pkcs11
run wrong-pin pkcs11-tool --module "$CLIENT" --login --pin wrong-pin --list-objects
if [ "$rc" -ne 0 ] && grep -q CKR_PIN_INCORRECT "$T/err"; then ok; else
	bad "a wrong PIN through the forward is refused (rc $rc)"; fi

# openssl through pkcs11-provider, p11-kit-client.so as its module
mkdir ossl && (
	cd ossl
	recipe openssl-pkcs11-conf MODULE="$CLIENT" PIN_FILE="$T/client-host/web.pin" \
		OPENSSL_CONF="$LOCAL/openssl.cnf"
	expect 0 "recipe openssl-pkcs11-conf with p11-kit-client.so"
	recipe p11-kit-ssh-openssl OPENSSL_CONF="$LOCAL/openssl.cnf" SOCKET_DIR="$LOCAL"
	expect 0 "recipe p11-kit-ssh-openssl"
	out_has 'Signature Verified Successfully' "a remote openssl (pkcs11-provider) signature verifies"
	if [ "$(cat pub.pem 2>/dev/null)" = "$(openssl x509 -in "$T/token-host/ec.wks.pem" -pubkey -noout)" ]; then
		ok
	else
		bad "pkcs11-provider's public key through the forward is the certificate's"
	fi
	# checked without the provider too
	run verify env OPENSSL_CONF=/dev/null openssl pkeyutl -verify -pubin -inkey pub.pem \
		-in data.sha256 -sigfile data.sig
	check "openssl's signature verifies with the default provider alone" [ "$rc" -eq 0 ]
	echo "$passed $failed" >counts
)
read -r passed failed <ossl/counts

# another user cannot use the forwarded socket, even with every folder
# open: the socket's own mode (0600) keeps it out
if [ "$(id -u)" -eq 0 ]; then
	chmod 711 "$T" "$T/client-host"
	chmod 755 "$LOCAL"
	run other-user setpriv --reuid=65534 --regid=65534 --clear-groups \
		env P11_KIT_SERVER_ADDRESS="unix:path=$LOCAL/pkcs11" \
		pkcs11-tool --module "$CLIENT" --list-token-slots
	chmod 700 "$T" "$T/client-host" "$LOCAL"
	if ! grep -q 'token label' "$T/out"; then ok; else
		bad "another user reached the token through the forwarded socket"; fi
fi

# stop: ssh ends, its socket stays (no token behind it); a new forward
# replaces the stale socket (StreamLocalBindUnlink)
stop "$FWD"
check "ssh leaves its socket behind when it ends (the recipe removes it)" [ -S "$LOCAL/pkcs11" ]
run no-forward pkcs11-tool --module "$CLIENT" --list-token-slots
if ! grep -q 'token label' "$T/out"; then ok; else bad "a token on the socket of a stopped forward"; fi
# without StreamLocalBindUnlink the stale socket stops a new forward
# (why the recipe sets it)
run no-unlink timeout 20 ssh -N -o ExitOnForwardFailure=yes -o StreamLocalBindUnlink=no \
	-L "$LOCAL/pkcs11:$SRV_DIR/pkcs11" token-host
if [ "$rc" -ne 0 ] && grep -q 'Address already in use' "$T/err"; then ok; else
	bad "ssh -L onto a stale socket without StreamLocalBindUnlink (rc $rc)"; fi
start p11-kit-ssh-forward "$T/ssh-forward2.log" TOKEN_HOST=token-host \
	REMOTE_USER="$USER_NAME" REMOTE_SOCKET_DIR="$SRV_DIR" SOCKET_DIR="$LOCAL"
FWD=$SPID
ok2=0
for _ in $(seq 100); do
	run again pkcs11-tool --module "$CLIENT" --list-token-slots
	if grep -q 'token label *: web' "$T/out"; then ok2=1; break; fi
	kill -0 "$FWD" 2>/dev/null || break
	sleep 0.1
done
if [ "$ok2" = 1 ]; then ok; else
	bad "a second forward onto the stale socket: $(tail -3 "$T/ssh-forward2.log")"; fi
stop "$FWD"
rm -f "$LOCAL/pkcs11"
unset P11_KIT_SERVER_ADDRESS

# -R: the token host pushes its socket to the client host
PUSH_DIR=$T/client-host/pushed
start p11-kit-ssh-push "$T/ssh-push.log" CLIENT_HOST=client-host CLIENT_USER="$USER_NAME" \
	SOCKET_DIR="$SRV_DIR" CLIENT_SOCKET_DIR="$PUSH_DIR"
PUSH=$SPID
if wait_sock "$PUSH_DIR/pkcs11" "$PUSH"; then
	ok
	check "the pushed socket's folder: mode 700" [ "$(stat -c %a "$PUSH_DIR")" = 700 ]
	check "the pushed socket: the login user's, mode 600 (sshd's StreamLocalBindMask)" \
		[ "$(stat -c '%U %a' "$PUSH_DIR/pkcs11")" = "$USER_NAME 600" ]
	mkdir push && (
		cd push
		recipe p11-kit-client CLIENT="$CLIENT" SOCKET_DIR="$PUSH_DIR" PIN_FILE="$T/client-host/web.pin"
		expect 0 "recipe p11-kit-client on the pushed socket"
		out_has 'Signature Verified Successfully' "a signature through ssh -R verifies"
		echo "$passed $failed" >counts
	)
	read -r passed failed <push/counts
else
	bad "ssh -R: no socket: $(tail -5 "$T/ssh-push.log")"
fi
stop "$PUSH"

# the token host's server stopped: nothing anywhere
stop "$SRV"
check "p11-kit server stopped: its socket is gone" [ ! -e "$SRV_DIR/pkcs11" ]

end_tests
