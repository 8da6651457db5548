#!/usr/bin/env bash
# libwks-pkcs11.so with the real OpenSSH, NSS and Java programs: the
# recipes of docs/PKCS11.md ("### OpenSSH", "### NSS", "### Java
# SunPKCS11"), run as written through tests/pkcs11/recipe.sh, plus checks
# of what they did:
#   OpenSSH  ssh-keygen -D lists the store's keys (the same keys as the
#            store's certificates); an sshd started here on a loopback
#            port accepts ssh -I MODULE (the PIN from SSH_ASKPASS) and
#            runs a command; ssh-add -s puts the keys into an ssh-agent
#            started here, and ssh logs in with no module and no PIN; a
#            wrong PIN logs in with nothing
#   NSS      modutil -add into a fresh database, certutil -L -h TOKEN
#            lists the certificates; selfserv serves TLS with the
#            token's key, checked by openssl s_client -verify_return_error
#   Java     keytool -list -storetype PKCS11 with a SunPKCS11
#            configuration lists the entries; tests/pkcs11/P11Sign.java
#            signs through SunPKCS11 (SHA256withECDSA and SHA256withRSA in
#            one JVM) and openssl dgst -verify checks each signature
#            against the store's certificate
# Default mode: each program once (an EC P-256 and an RSA-2048 key).
# WKS_TEST_FULL=1: every key type with every program (ssh with ECDSA
# P-256 and P-384 and RSA with SHA-256 and SHA-512 signatures, directly
# and through the agent; IdentitiesOnly with and without an IdentityFile;
# an Ed25519 key, which OpenSSH 9.2 skips;
# selfserv with EC and RSA keys in TLS 1.2 and 1.3, RSA with PKCS#1 and
# PSS; keytool's two ways of naming the provider, a wrong PIN, keytool
# -genkeypair and -genseckey on the token; more JCA algorithms).
#
# The recipes take the test's values from their variables (MODULE,
# WKS_PKCS11_CONF, HOST, PIN_FILE, NSSDB, TOKEN, ALIAS, PORT, STORE, ...);
# "ssh" in their PATH is a wrapper adding -F with this test's client
# configuration (host wks-test: the port, the known host key, no
# ~/.ssh files), and "wks" one running WKS_BINARY.
#
# usage: programs_ssh_nss_java.sh MODULE WKS_BINARY SHARED_DIR
# A missing program is installed (scripts/deps.sh test) and, if that
# fails, is a FAIL: never a silent pass.  Everything runs in a temporary
# folder, servers on 127.0.0.1 (selfserv: on every address) at free
# ports, and every process started is killed on exit.
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 MODULE WKS_BINARY SHARED_DIR" >&2
	exit 2
fi
HERE=$(dirname "$(readlink -f "$0")")
MODULE=$(readlink -f "$1")
shift
# shellcheck source=tests/cli/lib.sh
. "$HERE/../cli/lib.sh"
# shellcheck source=tests/pkcs11/recipe.sh
. "$HERE/recipe.sh"
FULL=${WKS_TEST_FULL:-0}
[ "$FULL" = 0 ] || FULL=1

# ---- the programs -------------------------------------------------------------

export PATH="$PATH:/usr/sbin:/sbin"
want="ssh ssh-keygen ssh-agent ssh-add sshd modutil certutil selfserv keytool java openssl python3"
missing=
for b in $want; do command -v "$b" >/dev/null 2>&1 || missing="$missing $b"; done
if [ -n "$missing" ]; then
	echo "programs: installing (missing:$missing)"
	if ! timeout 900 sh "$HERE/../../scripts/deps.sh" test; then
		echo "FAIL: cannot install the programs (scripts/deps.sh test)" >&2
		exit 1
	fi
	missing=
	for b in $want; do command -v "$b" >/dev/null 2>&1 || missing="$missing $b"; done
	if [ -n "$missing" ]; then
		echo "FAIL: still missing after scripts/deps.sh test:$missing" >&2
		exit 1
	fi
fi
for p in openssh-client openssh-server libnss3-tools openjdk-17-jdk-headless openssl; do
	dpkg-query -W -f='${Package} ${Version}\n' "$p" 2>/dev/null || true
done

start_tests p11-ssh-nss-java
chmod 700 "$T"
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
		# not a child of this shell (ssh-agent): until it is gone
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	done
	if [ -z "${WKS_TEST_KEEP:-}" ]; then rm -rf "$T"; fi
}
trap cleanup EXIT
unset SSH_AUTH_SOCK SSH_AGENT_PID DISPLAY
mkdir bin
# wks(1) for the recipes, whatever WKS_BIN is (a wrapper under valgrind)
printf '#!/bin/sh\nexec %q "$@"\n' "$WKS_BIN" >bin/wks
chmod 755 bin/wks
export PATH="$T/bin:$PATH"
# JVMs that start quickly (C1 only, one compiler thread, serial GC: half
# the CPU time of a short run, the same results).  The JVM notes the
# variable on stderr.
export JAVA_TOOL_OPTIONS="-XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:+UseSerialGC"

# free_ports N: N free TCP ports on 127.0.0.1, one a line.
free_ports() {
	python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in ss))' "$1"
}
# wait_port PORT: until something accepts on 127.0.0.1:PORT (10 s at most).
wait_port() {
	# shellcheck disable=SC2016 # ($1 of the inner shell)
	timeout 10 bash -c 'until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do sleep 0.05; done' _ "$1"
}
# recipe NAME: the recipe as written, without a terminal, bounded;
# stdout in $T/out, stderr in $T/err, status in $rc.
recipe() {
	local text
	text=$(recipe_text "$1") || { bad "docs/PKCS11.md: recipe $1"; rc=2; return; }
	set +e
	timeout 120 setsid -w bash -eu -c "$text" "recipe-$1" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
}
# run CMD...: as wks() does for the tool, any command (standard input:
# the file $IN, else /dev/null).
run() {
	set +e
	timeout 120 setsid -w "$@" >"$T/out" 2>"$T/err" <"${IN:-/dev/null}"
	rc=$?
	set -e
}
# ssh_fp FILE: the SHA-256 fingerprint of the first key in FILE.
ssh_fp() { ssh-keygen -lf "$1" | awk '{ print $2; exit }'; }

# ---- the store and the token --------------------------------------------------

PIN=wks-pin-1
# the PIN file as docs/PKCS11.md writes it (no line end), for every
# reader: ssh's askpass program, NSS's -f, keytool's -storepass:file
(umask 077; printf '%s' "$PIN" >web.pin)
wks genkeypair -k web.wks --storepass "pass:$PIN" -a ec --keyalg EC --dname CN=localhost \
	--ext san=dns:localhost,ip:127.0.0.1
expect 0 "genkeypair ec"
# (a subject of its own: NSS takes certificates with one subject for one
# nickname)
wks genkeypair -k web.wks --storepass "pass:$PIN" -a rsa --keyalg RSA --keysize 2048 \
	--dname "CN=localhost, OU=rsa" --ext san=dns:localhost,ip:127.0.0.1
expect 0 "genkeypair rsa"
if [ "$FULL" = 1 ]; then
	wks genkeypair -k web.wks --storepass "pass:$PIN" -a ec384 --keyalg EC --curve P-384 \
		--dname CN=ec384
	expect 0 "genkeypair ec384"
	openssl req -x509 -newkey ed25519 -nodes -keyout ed.key -subj /CN=ed -days 30 \
		-out ed.pem 2>/dev/null
	wks import-key -k web.wks --storepass "pass:$PIN" -a ed --key ed.key --chain ed.pem
	expect 0 "import-key ed25519"
fi
KEYS="ec rsa"
[ "$FULL" = 0 ] || KEYS="ec rsa ec384"
for a in $KEYS; do
	wks export-cert -k web.wks -a "$a" --leaf --no-storepass -o "$a.pem"
	expect 0 "export-cert $a"
	openssl x509 -in "$a.pem" -pubkey -noout >"$a.pub.pem"
	ssh-keygen -i -m PKCS8 -f "$a.pub.pem" >"$a.ssh.pub"
done
printf '[token]\nlabel = web\nstore = %s/web.wks\n' "$T" >wks-pkcs11.conf
export WKS_PKCS11_CONF=$T/wks-pkcs11.conf
export MODULE TOKEN=web PIN_FILE=$T/web.pin ALIAS=ec RSA_ALIAS=rsa STORE=$T/web.wks

# ---- OpenSSH --------------------------------------------------------------------

recipe ssh-keygen
expect 0 "ssh-keygen -D"
cp out keygen.out
for a in $KEYS; do
	# the module's public key object = the store's certificate's key
	check "ssh-keygen -D lists $a ($(ssh_fp "$a.ssh.pub"))" \
		grep -qF "$(cut -d' ' -f1,2 "$a.ssh.pub") $a" keygen.out
done
check "ssh-keygen -D: one line per key" \
	test "$(grep -c '' keygen.out)" -eq "$(echo "$KEYS" | wc -w)"
if [ "$FULL" = 1 ]; then
	# OpenSSH 9.2 reads RSA and ECDSA keys from a PKCS#11 module only
	check "ssh-keygen -D: Ed25519 skipped by OpenSSH" grep -q 'unsupported key type' err
fi

# sshd: its own host key, configuration, authorized keys and pid file here
mapfile -t ports < <(free_ports 2)
SSH_PORT=${ports[0]}
NSS_PORT=${ports[1]}
USER_NAME=$(id -un)
ssh-keygen -q -t ed25519 -N '' -C sshd-test -f host_key
cp keygen.out authorized_keys
cat >sshd_config <<EOF
ListenAddress 127.0.0.1:$SSH_PORT
HostKey $T/host_key
PidFile $T/sshd.pid
AuthorizedKeysFile $T/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AllowUsers $USER_NAME
LogLevel VERBOSE
EOF
if [ "$(id -u)" = 0 ]; then
	# the privilege separation folder (made by the service otherwise)
	mkdir -p /run/sshd
	chmod 755 /run/sshd
fi
SSHD=$(command -v sshd)
"$SSHD" -D -e -f "$T/sshd_config" >sshd.log 2>&1 &
PIDS+=($!)
if ! wait_port "$SSH_PORT"; then
	bad "sshd does not listen on 127.0.0.1:$SSH_PORT"
	sed 's/^/    sshd: /' sshd.log >&2
	end_tests
	exit 1
fi
printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 host_key.pub)" >known_hosts
# ssh_config [ALGORITHMS [LINE...]]: the client's whole configuration
# (-F: no ~/.ssh/config, no default identity files), host "wks-test";
# ALGORITHMS restricts the signature algorithms, i.e. which key logs in;
# LINEs are more options.
ssh_config() {
	{
		echo "Host wks-test"
		echo "  HostName 127.0.0.1"
		echo "  Port $SSH_PORT"
		echo "  User $USER_NAME"
		echo "  UserKnownHostsFile $T/known_hosts"
		echo "  StrictHostKeyChecking yes"
		echo "  IdentityFile $T/no-such-key"
		echo "  ConnectTimeout 10"
		if [ -n "${1:-}" ]; then echo "  PubkeyAcceptedAlgorithms $1"; fi
		if [ $# -gt 1 ]; then shift; printf '  %s\n' "$@"; fi
	} >"$T/ssh_config"
}
ssh_config
printf '#!/bin/sh\nexec %q -F %q "$@"\n' "$(command -v ssh)" "$T/ssh_config" >bin/ssh
chmod 755 bin/ssh
export HOST=wks-test
NODE=$(uname -n)

# accepted N KEY WHAT: sshd's log has N "Accepted publickey" lines, the
# last with KEY's fingerprint
accepted() {
	local n
	n=$(grep -c 'Accepted publickey' "$T/sshd.log" || true)
	if [ "$n" -eq "$1" ] && grep 'Accepted publickey' "$T/sshd.log" | tail -1 |
		grep -qF " $(ssh_fp "$T/$2.ssh.pub")"; then
		ok
	else
		bad "$3: sshd accepted $n logins (expected $1), the last with $2"
		tail -3 "$T/sshd.log" | sed 's/^/    sshd: /' >&2
	fi
}

logins=0
recipe ssh-login
expect_out 0 "^$NODE\$" "ssh -I MODULE: logged in, ran uname -n"
logins=$((logins + 1))
accepted $logins ec "ssh -I MODULE: the first key offered (ec)"

# a wrong PIN: no signature, no login
echo wrong-pin >wrong.pin
PIN_FILE=$T/wrong.pin recipe ssh-login
expect 255 "ssh -I MODULE with a wrong PIN"
accepted $logins ec "ssh -I MODULE with a wrong PIN: no login"

if [ "$FULL" = 1 ]; then
	for v in ec:ecdsa-sha2-nistp256 ec384:ecdsa-sha2-nistp384 \
		rsa:rsa-sha2-256 rsa:rsa-sha2-512; do
		ssh_config "${v#*:}"
		recipe ssh-login
		expect_out 0 "^$NODE\$" "ssh -I MODULE with ${v#*:}"
		logins=$((logins + 1))
		accepted $logins "${v%%:*}" "ssh -I MODULE with ${v#*:}"
	done
	# docs/PKCS11.md: IdentitiesOnly hides the token's keys from OpenSSH
	# 9.2 unless an IdentityFile names the public key
	ssh_config "" "IdentitiesOnly yes"
	recipe ssh-login
	expect 255 "ssh -I MODULE with IdentitiesOnly yes"
	grep ' rsa$' keygen.out >rsa-id.pub
	ssh_config "" "IdentitiesOnly yes" "IdentityFile $T/rsa-id.pub"
	recipe ssh-login
	expect_out 0 "^$NODE\$" "ssh -I MODULE with IdentitiesOnly yes and the IdentityFile of rsa"
	logins=$((logins + 1))
	accepted $logins rsa "ssh -I MODULE with IdentitiesOnly yes and the IdentityFile of rsa"
	ssh_config
fi

# the agent: the recipe starts it and leaves its variables in wks-agent.sh
recipe ssh-agent
agent_pid=
if [ -s wks-agent.sh ]; then
	agent_pid=$(sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p' wks-agent.sh)
	if [ -n "$agent_pid" ]; then PIDS+=("$agent_pid"); fi
fi
expect_out 0 "^$NODE\$" "ssh-add -s MODULE, then ssh with no module"
logins=$((logins + 1))
accepted $logins ec "ssh through the agent"
for a in ec rsa; do
	check "ssh-add -l lists $a" grep -qF " $(ssh_fp "$a.ssh.pub") $a (" out
done
if [ -n "$agent_pid" ]; then
	# the agent holds the keys: ssh needs neither module nor PIN now
	# shellcheck disable=SC1091 # (written by the recipe)
	. ./wks-agent.sh >/dev/null
	check "ssh-agent's socket" test -S "$SSH_AUTH_SOCK"
	if [ "$FULL" = 1 ]; then
		for v in ec:ecdsa-sha2-nistp256 ec384:ecdsa-sha2-nistp384 \
			rsa:rsa-sha2-256 rsa:rsa-sha2-512; do
			ssh_config "${v#*:}"
			run env SSH_ASKPASS=/bin/false SSH_ASKPASS_REQUIRE=force ssh wks-test uname -n
			expect_out 0 "^$NODE\$" "ssh through the agent with ${v#*:}"
			logins=$((logins + 1))
			accepted $logins "${v%%:*}" "ssh through the agent with ${v#*:}"
		done
		ssh_config
	fi
	run ssh-add -e "$MODULE"
	expect 0 "ssh-add -e MODULE"
	run env SSH_ASKPASS=/bin/false SSH_ASKPASS_REQUIRE=force ssh wks-test uname -n
	expect 255 "ssh after ssh-add -e: no key left"
	unset SSH_AUTH_SOCK SSH_AGENT_PID
else
	bad "ssh-agent: no SSH_AGENT_PID in wks-agent.sh"
fi

# ---- OpenSSH and a CA-issued key ---------------------------------------------------

# OpenSSH makes every certificate object's key an identity: a key stored
# with its chain (root -> intermediate -> leaf, made here by openssl) would
# list the CA's keys, and the whole output of ssh-keygen -D in
# authorized_keys let the CA's key log in.  The recipes' configuration for
# OpenSSH (certificates = leaf) shows each key's own certificate only.
mkdir ca
(
	cd ca
	ca_ext=$'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign'
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout root.key \
		-subj "/CN=Test Root CA" -days 30 -addext basicConstraints=critical,CA:true \
		-addext keyUsage=critical,keyCertSign,cRLSign -out root.pem 2>/dev/null
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout int.key \
		-subj "/CN=Test Intermediate CA" -out int.csr 2>/dev/null
	openssl x509 -req -in int.csr -CA root.pem -CAkey root.key -days 30 \
		-extfile <(printf '%s\n' "$ca_ext") -out int.pem 2>/dev/null
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout leaf.key \
		-subj "/CN=leaf" -out leaf.csr 2>/dev/null
	openssl x509 -req -in leaf.csr -CA int.pem -CAkey int.key -days 30 -out leaf.pem 2>/dev/null
	cat leaf.pem int.pem root.pem >chain.pem
	chmod 600 root.key
	ssh-keygen -y -f root.key >root.ssh.pub
	openssl pkey -in leaf.key -pubout -out leaf.pub.pem
	ssh-keygen -i -m PKCS8 -f leaf.pub.pem >leaf.ssh.pub
)
wks import-key -k ca.wks --storepass "pass:$PIN" -a leaf --key ca/leaf.key --chain ca/chain.pem
expect 0 "import-key leaf with its chain of 3"
wks import-cert -k ca.wks --storepass "pass:$PIN" -a root --cert ca/root.pem
expect 0 "import-cert root (a trusted certificate entry)"
printf '[token]\nlabel = web\nstore = %s/ca.wks\n' "$T" >ca-all.conf
WKS_PKCS11_CONF=$T/ca-all.conf recipe ssh-keygen
check "certificates = all: ssh-keygen -D lists the CA's keys too (why the recipes use leaf)" \
	test "$(grep -c '^ecdsa-' out)" -eq 3
STORE=$T/ca.wks SSH_CONF=$T/ca-ssh.conf recipe ssh-conf
expect 0 "recipe ssh-conf"
WKS_PKCS11_CONF=$T/ca-ssh.conf recipe ssh-keygen
expect 0 "ssh-keygen -D, certificates = leaf"
check "ssh-keygen -D: exactly the leaf's key" \
	test "$(cut -d' ' -f1,2 out)" = "$(cut -d' ' -f1,2 ca/leaf.ssh.pub)"
cat out >>authorized_keys
# the CA's own key is refused
run ssh -i "$T/ca/root.key" -o IdentitiesOnly=yes wks-test uname -n
expect 255 "ssh -i the root CA's key: refused"
check "sshd accepted no login with the root CA's key" \
	not grep -qF "$(ssh-keygen -lf ca/root.ssh.pub | awk '{ print $2 }')" <(grep 'Accepted publickey' sshd.log)
# the leaf logs in, through the module and through an agent holding
# exactly the store's key
WKS_PKCS11_CONF=$T/ca-ssh.conf recipe ssh-login
expect_out 0 "^$NODE\$" "ssh -I MODULE with the CA-issued key"
logins=$((logins + 1))
cp ca/leaf.ssh.pub leaf.ssh.pub
accepted $logins leaf "ssh -I MODULE: the CA-issued leaf"
mkdir ca-agent
cd ca-agent
WKS_PKCS11_CONF=$T/ca-ssh.conf recipe ssh-agent
cd "$T"
if [ -s ca-agent/wks-agent.sh ]; then
	agent_pid=$(sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p' ca-agent/wks-agent.sh)
	if [ -n "$agent_pid" ]; then PIDS+=("$agent_pid"); fi
fi
expect_out 0 "^$NODE\$" "ssh-add -s MODULE (certificates = leaf), then ssh with no module"
logins=$((logins + 1))
accepted $logins leaf "ssh through the agent: the leaf"
check "ssh-add -l: exactly one identity, the leaf" \
	test "$(grep -c ' leaf (ECDSA)$' out)-$(grep -c '(ECDSA)$\|(RSA)$' out)" = 1-1

# ---- NSS ------------------------------------------------------------------------

export NSSDB=$T/nssdb
# in a folder of its own: the recipe writes $ALIAS.pem
mkdir nss
cd nss
recipe nss-modutil
cd "$T"
expect 0 "modutil -add, certutil -L -h web"
cp out certutil.out
for a in $KEYS; do
	check "certutil -L -h web lists web:$a" grep -qE "^web:$a +u,u,u\$" certutil.out
done
openssl x509 -in ec.pem -outform DER -out ec.der
openssl x509 -in nss/ec.pem -outform DER -out ec.nss.der 2>/dev/null || true
check "certutil -L -n web:ec -a = the store's certificate" cmp -s ec.der ec.nss.der
run modutil -dbdir "sql:$NSSDB" -list wks
expect_out 0 "Token Name: web " "modutil -list wks shows the token"
# "PIN files": NSS's -f takes the first line (LF or CRLF is no part of
# the PIN): the key is found (u,u,u) only when logged in
printf '%s\r\n' "$PIN" >crlf.pin
run certutil -L -d "sql:$NSSDB" -h web -f "$T/crlf.pin"
expect_out 0 '^web:ec +u,u,u$' "certutil -f with a CRLF PIN file"
run certutil -L -d "sql:$NSSDB" -h web -f "$T/wrong.pin"
check "certutil -f with a wrong PIN file fails" test "$rc" -ne 0

# selfserv KEY PORT: the recipe in the background, with the key KEY.
selfserv_start() {
	local text
	text=$(recipe_text nss-selfserv) || { bad "docs/PKCS11.md: recipe nss-selfserv"; return 1; }
	ALIAS=$1 PORT=$2 setsid bash -eu -c "$text" recipe-nss-selfserv \
		>"$T/selfserv-$1.log" 2>&1 </dev/null &
	SELFSERV=$!
	PIDS+=("$SELFSERV")
	if ! wait_port "$2"; then
		bad "selfserv ($1) does not listen on $2"
		sed 's/^/    selfserv: /' "$T/selfserv-$1.log" >&2
		return 1
	fi
}
# tls KEY WHAT [S_CLIENT-OPTIONS...]: the recipe's client (trusting KEY's
# certificate only), or with options the same openssl s_client command
# with them, gets the page, verified, with KEY's certificate.
tls() {
	local key=$1 what=$2
	shift 2
	if [ $# = 0 ]; then
		ALIAS=$key PORT=$NSS_PORT recipe nss-s_client
	else
		printf 'GET / HTTP/1.0\r\n\r\n' >get.txt
		IN=get.txt run openssl s_client -connect "localhost:$NSS_PORT" -CAfile "$key.pem" \
			-verify_return_error -ign_eof "$@"
	fi
	if [ "$rc" -eq 0 ] && grep -q '^Verification: OK' out && grep -q '^HTTP/1.0 200 OK' out &&
		[ "$(openssl x509 -in out -fingerprint -noout 2>/dev/null)" = \
		  "$(openssl x509 -in "$key.pem" -fingerprint -noout)" ]; then
		ok
	else
		bad "selfserv with $key: $what (exit $rc)"
		grep -E 'error|Verif|Peer sig' out err 2>/dev/null | head -5 | sed 's/^/    /' >&2 || true
	fi
}
if selfserv_start ec "$NSS_PORT"; then
	tls ec "the recipe's client"
	check "TLS 1.3 by default" grep -q '^New, TLSv1.3,' out
	if [ "$FULL" = 1 ]; then
		tls ec "TLS 1.2, ECDSA" -tls1_2
		# trusting another certificate must fail
		cp rsa.pem other.pem
		ALIAS=other PORT=$NSS_PORT recipe nss-s_client
		check "s_client trusting another certificate fails" test "$rc" -ne 0
	fi
	kill "$SELFSERV"
	wait "$SELFSERV" 2>/dev/null || true
fi
if [ "$FULL" = 1 ]; then
	NSS_PORT=$(free_ports 1)
	if selfserv_start rsa "$NSS_PORT"; then
		tls rsa "TLS 1.3, RSA-PSS" -tls1_3
		check "TLS 1.3 with rsa: PSS" grep -q 'Peer signature type: RSA-PSS' out
		tls rsa "TLS 1.2, RSA PKCS#1" -tls1_2 -sigalgs RSA+SHA256
		check "TLS 1.2 with rsa: PKCS#1" grep -q 'Peer signature type: RSA$' out
		tls rsa "TLS 1.2, RSA-PSS" -tls1_2 -sigalgs RSA-PSS+SHA256
		kill "$SELFSERV"
		wait "$SELFSERV" 2>/dev/null || true
	fi
fi

# ---- Java SunPKCS11 -------------------------------------------------------------

recipe java-keytool
entries=2
[ "$FULL" = 0 ] || entries=4 # and ec384, ed
expect_out 0 "^Your keystore contains $entries entries" "keytool -list -storetype PKCS11"
cp out keytool.out
for a in $KEYS; do
	fp=$(openssl x509 -in "$a.pem" -fingerprint -sha256 -noout | cut -d= -f2)
	check "keytool -list: $a, PrivateKeyEntry, the store's certificate" \
		grep -qF "$fp" <(grep -A1 "^$a, PrivateKeyEntry," keytool.out)
done
if [ "$FULL" = 1 ]; then
	run keytool -list -keystore NONE -storetype PKCS11 -providerClass sun.security.pkcs11.SunPKCS11 \
		-providerArg wks-pkcs11.cfg -storepass:file "$PIN_FILE"
	expect_out 0 "ec, PrivateKeyEntry" "keytool -providerClass sun.security.pkcs11.SunPKCS11"
	run keytool -list -keystore NONE -storetype PKCS11 -addprovider SunPKCS11 \
		-providerArg wks-pkcs11.cfg -storepass:file "$T/wrong.pin"
	expect 1 "keytool with a wrong PIN"
	run keytool -list -keystore NONE -storetype PKCS11 -addprovider SunPKCS11 \
		-providerArg wks-pkcs11.cfg -storepass:file "$T/crlf.pin"
	expect_out 0 "ec, PrivateKeyEntry" "keytool -storepass:file with a CRLF PIN file"
fi

export P11SIGN=$HERE/P11Sign.java
recipe java-sign
expect 0 "P11Sign.java: SHA256withECDSA and SHA256withRSA through SunPKCS11, openssl dgst -verify"
check "P11Sign.java: both signatures, each Verified OK" \
	test "$(grep -c '^Verified OK$' out)" -eq 2
check "P11Sign.java: ec signed by an EC key" grep -q '^ec SHA256withECDSA EC ' out
check "P11Sign.java: rsa signed by an RSA key, 256 bytes" grep -q '^rsa SHA256withRSA RSA 256$' out
if [ "$FULL" = 1 ]; then
	run java "$P11SIGN" wks-pkcs11.cfg "$PIN_FILE" data.txt \
		ec=SHA384withECDSA=ec.384.sig ec384=SHA384withECDSA=ec384.sig \
		rsa=SHA512withRSA=rsa.512.sig rsa=SHA256withRSASSA-PSS=rsa.pss.sig
	expect 0 "P11Sign.java: more algorithms"
	v() { openssl dgst "$1" "${@:4}" -verify "$2.pub.pem" -signature "$3" data.txt >/dev/null 2>&1; }
	check "SHA384withECDSA (P-256) verifies" v -sha384 ec ec.384.sig
	check "SHA384withECDSA (P-384) verifies" v -sha384 ec384 ec384.sig
	check "SHA512withRSA verifies" v -sha512 rsa rsa.512.sig
	check "SHA256withRSASSA-PSS verifies" v -sha256 rsa rsa.pss.sig -sigopt rsa_padding_mode:pss
	check "the PSS signature does not verify as PKCS#1" not v -sha256 rsa rsa.pss.sig
	# keys made by keytool on the token: SunPKCS11 generates a session
	# key and copies it to the token (C_CopyObject, CKA_ID = the alias),
	# then stores keytool's certificate (C_CreateObject)
	kt_p11() {
		run keytool "$@" -keystore NONE -storetype PKCS11 -addprovider SunPKCS11 \
			-providerArg wks-pkcs11.cfg -storepass:file "$PIN_FILE"
	}
	kt_p11 -genkeypair -alias jgen -keyalg EC -groupname secp256r1 -dname CN=jgen
	expect 0 "keytool -genkeypair -storetype PKCS11"
	kt_p11 -genseckey -alias jaes -keyalg AES -keysize 256
	expect 0 "keytool -genseckey -storetype PKCS11"
	wks list -k web.wks --storepass "pass:$PIN"
	expect_out 0 "^jgen +private-key .*EC P-256" "keytool's key pair is the entry jgen"
	expect_out 0 "^jaes +secret-key .*AES" "keytool's secret key is the entry jaes"
	wks export-cert -k web.wks -a jgen --leaf --no-storepass -o jgen.pem
	check "jgen's certificate is keytool's (no authority key identifier)" \
		not grep -q 'Authority Key Identifier' <(openssl x509 -in jgen.pem -noout -text)
	openssl x509 -in jgen.pem -pubkey -noout >jgen.pub.pem
	run java "$P11SIGN" wks-pkcs11.cfg "$PIN_FILE" data.txt jgen=SHA256withECDSA=jgen.sig
	expect 0 "P11Sign.java with keytool's key"
	check "keytool's key signs, its certificate verifies" v -sha256 jgen jgen.sig
fi

end_tests
