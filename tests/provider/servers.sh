#!/usr/bin/env bash
# Real servers reading their private key from a key reference through
# wks.so (docs/PROVIDER.md "Servers"): the blocks of that section, taken
# from the file and run as written, with /etc/wks/ replaced by a temporary
# folder and the ports 443 and 8080 by free loopback ports.  Each server
# is started here, in the folder, in the foreground, with
# OPENSSL_CONF=the section's openssl.cnf (references = yes) and
# OPENSSL_MODULES=the build's wks.so; the key is a reference, the chain a
# PEM file written by wks export-cert; `openssl s_client
# -verify_return_error` trusting only the root must get the full chain
# (leaf, intermediate, root, each once) with the store's leaf:
#   check      wks check-reference before each server's reload (a
#              systemctl that logs): all pass and reload; with a wrong
#              store password none reloads
#   nginx      also: nginx -t; ssl_password_file for a key password of
#              its own; the rotation block (new key and chain into
#              the store, chain re-exported, checked, SIGHUP) and the next
#              handshake serves the new leaf; the store password
#              rotation block (wks passwd, the new password file, SIGHUP)
#              and nginx -t still opens the key; a wrong store password and
#              a missing alias fail nginx -t naming store and alias,
#              never the password
#   apache2    mod_ssl; also a key password of its own from
#              SSLPassPhraseDialog exec:
#   haproxy    one PEM file: chain, then the reference
#   lighttpd   mod_openssl
#   stunnel4
#   python     ssl.SSLContext.load_cert_chain()
#   curl       a client certificate whose key is a reference, to an
#              openssl s_server that requires one (and shows it)
#
# usage: servers.sh DOC WKS_BINARY PROVIDER_DIR [SERVER...]
# Installs the Debian packages it needs when they are missing
# (scripts/deps.sh servers: no service is started by the install).  Every
# server start and stop is bounded by timeout; every process started is
# killed on exit.  Exits 1 on any failure.
set -euo pipefail

if [ $# -lt 3 ]; then
	echo "usage: $0 DOC WKS_BINARY PROVIDER_DIR [SERVER...]" >&2
	exit 2
fi
HERE=$(dirname "$(readlink -f "$0")")
DOC=$(readlink -f "$1")
WKS_BIN=$(readlink -f "$2")
PROV_DIR=$(readlink -f "$3")
shift 3
ONLY=" ${*:-nginx python apache2 haproxy lighttpd stunnel4 curl} "
T=$(mktemp -d "${TMPDIR:-/tmp}/wks-srv.XXXXXX")
chmod 711 "$T"
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
cd "$T"
export WKS_PROPERTIES=
export OPENSSL_CONF=/dev/null
export OPENSSL_MODULES=$PROV_DIR
export PATH="$(dirname "$WKS_BIN"):$PATH:/usr/sbin:/sbin"
. "$HERE/reflib.sh"

# ---- the programs ----------------------------------------------------------------

want_bins="nginx apache2 haproxy lighttpd stunnel4 curl python3 strace"
missing=
for b in $want_bins; do command -v $b >/dev/null 2>&1 || missing="$missing $b"; done
if [ -n "$missing" ] || [ ! -e /usr/lib/lighttpd/mod_openssl.so ]; then
	echo "servers: installing (missing:$missing)"
	if ! timeout 900 sh "$HERE/../../scripts/deps.sh" servers; then
		echo "FAIL: cannot install the servers (scripts/deps.sh servers)" >&2
		exit 1
	fi
fi
for p in nginx apache2 haproxy lighttpd lighttpd-mod-openssl stunnel4 curl \
	 python3 openssl; do
	dpkg-query -W -f='${Package} ${Version}\n' $p 2>/dev/null || true
done

# ---- the section's blocks ------------------------------------------------------------

PORT=$(free_port)
PORT2=$(free_port)
# snip NAME: the block between <!-- servers: NAME begin/end -->, without
# its fences, with /etc/wks/ and the ports replaced.
snip() {
	local b
	b=$(sed -n "/^<!-- servers: $1 begin -->\$/,/^<!-- servers: $1 end -->\$/p" \
		"$DOC" | sed '1,2d;$d' | sed '$d')
	if [ -z "$b" ]; then
		echo "FAIL: no block \"$1\" in $DOC" >&2
		exit 1
	fi
	b=${b//\/etc\/wks\//$T\/}
	b=${b//443/$PORT}
	b=${b//8080/$PORT2}
	printf '%s\n' "$b"
}
# run_block NAME: a shell block run with bash -e; output in $T/out+err.
run_block() {
	snip "$1" >"$T/$1.sh"
	set +e
	setsid -w timeout 60 bash -e "$T/$1.sh" </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}

mkpki
cp storepw.txt storepass
run_block files
if [ $rc -eq 0 ] && [ -s server-key.ref ] && [ -s haproxy.pem ]; then
	ok "the files block"
else bad "the files block (exit $rc)"; fi
snip openssl.cnf >openssl.cnf
# kp: the server's key again, with a key password of its own that kp.ref
# does not give (the servers' passphrase callbacks must).
wks_ok import-key -k server.wks -a kp --key leaf.key --chain leaf.crt \
	--chain int.crt --chain root.crt --storepass file:storepass \
	--keypass pass:own-key-pw --iterations 10000
wks_ok export-key -k server.wks -a kp --reference \
	--ref-storepass file:storepass --keypass pass:own-key-pw -o kp.ref
SCONF=$T/openssl.cnf
mkdir -p htdocs run
echo ok >htdocs/index.html

# The check block: wks check-reference before each server's reload, with
# a systemctl that only logs what it is asked.  Every check passes and
# every reload is asked for; with a wrong password in the store password
# file every check fails (exit 4) and nothing is reloaded.
mkdir -p stub
printf '#!/bin/sh\necho "$*" >>%s/reloads.log\n' "$T" >stub/systemctl
chmod 755 stub/systemctl
PATH="$T/stub:$PATH" run_block check
if [ $rc -eq 0 ] && [ "$(grep -c '' reloads.log 2>/dev/null)" = 6 ] &&
   [ "$(grep -c ': OK: the key "server"' out)" = 6 ]; then
	ok "the check block: six checks, six reloads"
else bad "the check block (exit $rc): $(tr '\n' ' ' <reloads.log 2>/dev/null)"; fi
rm -f reloads.log
cp storepass storepass.good
echo not-the-store-pw >storepass
PATH="$T/stub:$PATH" run_block check
if [ $rc -eq 4 ] && [ ! -e reloads.log ] &&
   [ "$(grep -c 'the store password (its storepass= source) does not open' err)" = 6 ] &&
   ! grep -q 'not-the-store-pw' err; then
	ok "the check block, a wrong store password: no reload"
else bad "the check block, wrong store password (exit $rc)"; fi
mv storepass.good storepass

# start NAME CMD...: a server in the background (bounded, its own session),
# output in $T/NAME.log; waits until it accepts on $PORT.
start() {
	local name=$1
	shift
	OPENSSL_CONF=$SCONF setsid timeout 120 "$@" </dev/null >"$T/$name.log" 2>&1 &
	SERVER=$!
	PIDS+=("$SERVER")
	if ! wait_port $PORT; then
		bad "$name did not start: $(tail -5 "$T/$name.log")"
		return 1
	fi
}
# stop: the last server started (TERM, then KILL after 10 s).
stop() {
	local i
	kill -TERM "$SERVER" 2>/dev/null || true
	for i in $(seq 100); do
		kill -0 "$SERVER" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$SERVER" 2>/dev/null || true
	wait "$SERVER" 2>/dev/null || true
	# the port is free again before the next server
	for i in $(seq 100); do
		port_open $PORT || break
		sleep 0.1
	done
}
check_served() { # NAME [LEAF]
	served $PORT
	if [ $rc -eq 0 ] && full_chain "${2:-leaf.crt}"; then
		ok "$1: verified, the full chain, the store's leaf"
	else bad "$1: s_client exit $rc, served $(grep -c BEGIN "$T/served.pem") certificates"; fi
}
enabled() { [[ "$ONLY" == *" $1 "* ]]; }

# ---- nginx ---------------------------------------------------------------------------------

nginx_conf() { # FILE KEYFILE
	{
		echo "daemon off; pid $T/nginx.pid; error_log $T/nginx-error.log info;"
		echo "events { worker_connections 64; }"
		echo "http { access_log off;"
		for d in client_body proxy fastcgi uwsgi scgi; do
			echo "${d}_temp_path $T/run/$d;"
		done
		snip nginx | sed "s#$T/server-key.ref#$2#"
		echo "}"
	} >"$1"
}
if enabled nginx; then
	nginx_conf nginx.conf "$T/server-key.ref"
	set +e
	OPENSSL_CONF=$SCONF timeout 60 nginx -t -q -e "$T/nginx-error.log" -p "$T/" \
		-c "$T/nginx.conf" </dev/null >out 2>err
	rc=$?
	set -e
	if [ $rc -eq 0 ]; then ok "nginx -t"; else bad "nginx -t (exit $rc)"; fi
	if start nginx nginx -e "$T/nginx-error.log" -p "$T/" -c "$T/nginx.conf"; then
		check_served nginx
		# Rotation: the section's block with a second key and chain.
		mkdir -p live
		cp leaf2.key live/privkey.pem
		cat leaf2.crt int.crt root.crt >live/fullchain.pem
		snip rotate | sed "1i export RENEWED_LINEAGE=$T/live" >rotate.sh
		set +e
		setsid -w timeout 60 bash -e rotate.sh </dev/null >out 2>err
		rc=$?
		set -e
		if [ $rc -ne 0 ]; then bad "the rotate block (exit $rc)"; fi
		# the reload is asynchronous: the new leaf within 30 s
		for i in $(seq 60); do
			served $PORT
			if [ $rc -eq 0 ] && full_chain leaf2.crt; then break; fi
			sleep 0.5
		done
		if [ $rc -eq 0 ] && full_chain leaf2.crt; then
			ok "nginx: after the rotate block, the new key and chain"
		else bad "nginx rotation: still the old leaf or failing (exit $rc)"; fi
		# the reference is unchanged and the key is the new one
		openssl pkey -in leaf2.key -pubout >want.pub 2>/dev/null
		openssl x509 -in served.pem -pubkey -noout >got.pub 2>/dev/null
		if cmp -s want.pub got.pub; then ok "nginx: the served key is the new one"
		else bad "nginx: the served key is not the new one"; fi
		# Store-password rotation: the section's block; then nginx -t
		# (which opens the key through the reference, as the next
		# reload does) passes and the reloaded server serves.
		run_block storepass
		if [ $rc -eq 0 ] && grep -q 'kept its own password: "kp"' out &&
		   ! grep -q 'ref store pw' storepass; then
			ok "the storepass block"
		else bad "the storepass block (exit $rc)"; cat out err >&2; fi
		set +e
		OPENSSL_CONF=$SCONF timeout 60 nginx -t -q -e "$T/nginx-error.log" \
			-p "$T/" -c "$T/nginx.conf" </dev/null >out 2>err
		rc=$?
		set -e
		if [ $rc -eq 0 ]; then ok "nginx -t after the store password rotation"
		else bad "nginx -t after the store password rotation (exit $rc)"; cat err >&2; fi
		for i in $(seq 60); do
			served $PORT
			if [ $rc -eq 0 ] && full_chain leaf2.crt; then break; fi
			sleep 0.5
		done
		if [ $rc -eq 0 ] && full_chain leaf2.crt; then
			ok "nginx: serves after the store password rotation"
		else bad "nginx: not serving after the store password rotation (exit $rc)"; fi
		stop
		# put the first key back for the servers after this one
		wks_ok import-key -k server.wks -a server --force --key leaf.key \
			--chain leaf.crt --chain int.crt --chain root.crt \
			--storepass file:storepass
		wks_ok export-cert -k server.wks -a server --force \
			--storepass file:storepass -o server-chain.pem
		cat server-chain.pem server-key.ref >haproxy.pem
	fi
	# A key with a password of its own, not in the reference (kp.ref):
	# nginx's ssl_password_file gives it (the passphrase callback).
	printf 'not-this-one\nown-key-pw\n' >keypass.txt
	for pwf in with without; do
		nginx_conf nginx-kp.conf "$T/kp.ref"
		if [ $pwf = with ]; then
			sed -i "s#ssl_certificate_key .*#&\n    ssl_password_file $T/keypass.txt;#" \
				nginx-kp.conf
		fi
		set +e
		OPENSSL_CONF=$SCONF setsid -w timeout 60 nginx -t -e "$T/nginx-kp.log" \
			-p "$T/" -c "$T/nginx-kp.conf" </dev/null >out 2>err
		rc=$?
		set -e
		if { [ $pwf = with ] && [ $rc -eq 0 ]; } ||
		   { [ $pwf = without ] && [ $rc -ne 0 ] && grep -qF 'key entry "kp"' err; }; then
			ok "nginx -t, key password of its own, $pwf ssl_password_file"
		else bad "nginx -t, key password of its own, $pwf ssl_password_file (exit $rc)"; fi
	done
	# nginx -t with a wrong store password and with a missing alias.
	printf 'Xq7-not-the-pw\n' >wrongpw.txt
	mkref() {
		{
			echo '-----BEGIN WKS KEY REFERENCE-----'
			printf '%s' "$2" | base64 -w 64
			echo '-----END WKS KEY REFERENCE-----'
		} >"$1"
	}
	mkref wrong.ref "wks:$T/server.wks?alias=server&storepass=file:$T/wrongpw.txt"
	mkref nope.ref "wks:$T/server.wks?alias=nope&storepass=file:$T/storepass"
	for c in "wrong.ref|integrity check failed|alias \"server\"" \
		 "nope.ref|no entry \"nope\"|(key reference)"; do
		IFS='|' read -r ref p1 p2 <<<"$c"
		nginx_conf nginx-bad.conf "$T/$ref"
		set +e
		OPENSSL_CONF=$SCONF timeout 60 nginx -t -e "$T/nginx-bad.log" -p "$T/" \
			-c "$T/nginx-bad.conf" </dev/null >out 2>err
		rc=$?
		set -e
		if [ $rc -ne 0 ] && grep -qF "$p1" err && grep -qF "$p2" err &&
		   grep -qF "$T/server.wks" err && ! grep -q 'Xq7\|ref store pw' err; then
			ok "nginx -t with $ref fails naming store and alias, no password"
		else bad "nginx -t with $ref (exit $rc)"; fi
	done
fi

# ---- Python's ssl ------------------------------------------------------------------------------

if enabled python; then
	{
		snip python
		cat <<EOF
import socket
s = socket.create_server(("127.0.0.1", $PORT))
while True:
    c, _ = s.accept()
    try:
        t = ctx.wrap_socket(c, server_side=True)
        t.sendall(b"HTTP/1.0 200 OK\r\n\r\nok\n")
        t.unwrap()  # close_notify: the client sees no unexpected EOF
        t.close()
    except Exception:
        c.close()
EOF
	} >server.py
	if start python python3 server.py; then
		check_served python
		stop
	fi
fi

# ---- apache2 ------------------------------------------------------------------------------------

if enabled apache2; then
	mkdir -p run/apache2
	{
		M=/usr/lib/apache2/modules
		echo "ServerRoot $T"
		echo "ServerName localhost"
		echo "PidFile $T/run/apache2.pid"
		echo "DefaultRuntimeDir $T/run/apache2"
		echo "Mutex file:$T/run/apache2 default"
		echo "ErrorLog $T/apache2-error.log"
		echo "LogLevel warn"
		echo "User daemon"
		echo "Group daemon"
		echo "DocumentRoot $T/htdocs"
		echo "LoadModule mpm_event_module $M/mod_mpm_event.so"
		echo "LoadModule authz_core_module $M/mod_authz_core.so"
		echo "LoadModule socache_shmcb_module $M/mod_socache_shmcb.so"
		echo "LoadModule ssl_module $M/mod_ssl.so"
		snip apache2
	} >apache2.conf
	if start apache2 apache2 -f "$T/apache2.conf" -DFOREGROUND; then
		check_served apache2
		stop
	fi
	# kp.ref without a dialog (builtin, no terminal): apache2 does not
	# start (it exits; it would run until the timeout, 124, if it did).
	sed "s#$T/server-key.ref#$T/kp.ref#" apache2.conf >apache2-kp.conf
	set +e
	OPENSSL_CONF=$SCONF setsid -w timeout 30 apache2 -f "$T/apache2-kp.conf" \
		-DFOREGROUND </dev/null >out 2>err
	rc=$?
	set -e
	if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then
		ok "apache2: kp.ref without a passphrase dialog does not start"
	else bad "apache2: kp.ref without a passphrase dialog (exit $rc)"; fi
	# The key password from SSLPassPhraseDialog exec: (kp.ref).
	printf '#!/bin/sh\necho own-key-pw\n' >pp.sh
	chmod 755 pp.sh
	sed "s#$T/server-key.ref#$T/kp.ref#" apache2.conf >apache2-kp.conf
	echo "SSLPassPhraseDialog exec:$T/pp.sh" >>apache2-kp.conf
	if start apache2-kp apache2 -f "$T/apache2-kp.conf" -DFOREGROUND; then
		check_served "apache2 SSLPassPhraseDialog exec: (key password)"
		stop
	fi
fi

# ---- haproxy -------------------------------------------------------------------------------------

if enabled haproxy; then
	{
		printf '%s\n' 'global' '    maxconn 64' 'defaults' '    mode http' \
			'    timeout connect 5s' '    timeout client 10s' \
			'    timeout server 10s'
		snip haproxy
	} >haproxy.cfg
	if start haproxy haproxy -db -f "$T/haproxy.cfg"; then
		check_served haproxy
		stop
	fi
fi

# ---- lighttpd -----------------------------------------------------------------------------------

if enabled lighttpd; then
	{
		echo "server.document-root = \"$T/htdocs\""
		echo "server.bind = \"127.0.0.1\""
		echo "server.port = $PORT2"
		echo "server.errorlog = \"$T/lighttpd-error.log\""
		snip lighttpd
	} >lighttpd.conf
	if start lighttpd lighttpd -D -f "$T/lighttpd.conf"; then
		check_served lighttpd
		stop
	fi
fi

# ---- stunnel4 ------------------------------------------------------------------------------------

if enabled stunnel4; then
	{
		echo "foreground = yes"
		echo "pid = $T/run/stunnel.pid"
		snip stunnel4
	} >stunnel.conf
	# the service behind it (connect = 8080): a plain HTTP server
	setsid timeout 120 python3 -m http.server --bind 127.0.0.1 -d "$T/htdocs" \
		$PORT2 </dev/null >"$T/backend.log" 2>&1 &
	BACKEND=$!
	PIDS+=("$BACKEND")
	if wait_port $PORT2 && start stunnel4 stunnel4 "$T/stunnel.conf"; then
		check_served stunnel4
		stop
	fi
	kill "$BACKEND" 2>/dev/null || true
	wait "$BACKEND" 2>/dev/null || true
fi

# ---- curl with a client certificate ---------------------------------------------------------------

if enabled curl; then
	# The server: the stock openssl s_server (plain PEM key), requiring a
	# client certificate issued under the root; -www shows the client's.
	tail -n +1 int.crt root.crt >issuers.pem
	if start s_server openssl s_server -accept 127.0.0.1:$PORT -www \
		-key leaf.key -cert leaf.crt -cert_chain issuers.pem \
		-Verify 2 -verify_return_error -CAfile root.crt; then
		run_block curl
		got=$(awk '/-----BEGIN CERTIFICATE-----/{p=1} p{print} /-----END CERTIFICATE-----/{exit}' out)
		if [ $rc -eq 0 ] && [ "$got" = "$(cat client.crt)" ]; then
			ok "curl: client key from a reference, the server saw client.crt"
		else bad "curl (exit $rc)"; fi
		stop
	fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
