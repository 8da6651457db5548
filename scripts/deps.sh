#!/bin/sh
# Install the Debian packages libwks needs to build and test, if missing.
#   scripts/deps.sh build   - compiler, cmake and ninja, OpenSSL 3 headers, p11-kit's
#                             PKCS#11 header (libp11-kit-dev)
#   scripts/deps.sh test    - plus cmocka, cJSON, python3-cryptography,
#                             valgrind, clang (sanitizers, fuzzing),
#                             gdb (gcore, for tests/test_memdump.c),
#                             dpkg-dev (dpkg-buildflags, CI's warning
#                             matrix), man-db (man -w, tests/install),
#                             libcap2-bin (setcap, tests/test_config.c),
#                             openjdk-17-jdk-headless (keytool),
#                             libbcprov-java (Bouncy Castle for keytool:
#                             BKS, BCFKS and UBER test stores),
#                             ca-certificates (the system CA bundle),
#                             p11-kit (tests/install: p11-kit
#                             list-modules), strace, the servers, and
#                             the PKCS#11 programs of
#                             tests/pkcs11/programs_opensc_gnutls.sh:
#                             opensc (pkcs11-tool), gnutls-bin (p11tool,
#                             gnutls-serv, gnutls-cli), p11-kit-modules
#                             (p11-kit-client.so) and pkcs11-provider,
#                             and of tests/pkcs11/programs_ssh_nss_java.sh:
#                             openssh-client, openssh-server (ssh -I,
#                             ssh-agent, sshd; not started by the
#                             install), libnss3-tools (modutil, certutil,
#                             selfserv), softhsm2 (the control
#                             of tests/pkcs11/conformance.c, the
#                             pkcs11_conformance test, and the token
#                             bench/wks-p11-bench compares the module
#                             with); libwolfssl-dev
#                             (wolfSSL's wolfCrypt 5.5.4: the wolfCrypt
#                             build, cmake -DWKS_CRYPTO=wolfcrypt, CI's
#                             wolfcrypt stage).
#                             pkcs11-provider 1.0 is in bookworm-backports
#                             only: when it is missing, the backports
#                             source is added as
#                             /etc/apt/sources.list.d/bookworm-backports.list
#                             (deb http://deb.debian.org/debian
#                             bookworm-backports main; nothing else is
#                             taken from it: apt prefers the release's
#                             packages) and it is installed with -t
#                             bookworm-backports
#   scripts/deps.sh servers - only the servers tests/provider/servers.sh
#                             runs with key references: nginx, apache2,
#                             haproxy, lighttpd (+ mod-openssl), stunnel4,
#                             curl, python3, strace
# No service is started by the install: a policy-rc.d that exits 101 is
# put in place for it (and removed after, if there was none).
set -eu
servers="nginx apache2 haproxy lighttpd lighttpd-mod-openssl stunnel4 curl"
servers="$servers python3 strace"
want="gcc make cmake ninja-build pkg-config libssl-dev openssl libp11-kit-dev"
if [ "${1:-build}" = test ]; then
	want="$want libcmocka-dev libcjson-dev python3 valgrind clang"
	want="$want libclang-rt-14-dev gdb dpkg-dev man-db libcap2-bin"
	# keytool (tests/cli/*: Java keystores as the counterpart) and the
	# system CA bundle (tests/cli/truststore.sh)
	want="$want openjdk-17-jdk-headless ca-certificates p11-kit"
	# Bouncy Castle (tests/cli/bcstores.sh: keytool makes BKS and BCFKS)
	want="$want libbcprov-java"
	# the PKCS#11 module's programs (tests/pkcs11/programs_ssh_nss_java.sh);
	# sshd is not started by the install (policy-rc.d below)
	want="$want openssh-client openssh-server libnss3-tools"
	want="$want $servers"
	# PKCS#11 programs (tests/pkcs11/programs_opensc_gnutls.sh)
	want="$want opensc gnutls-bin p11-kit-modules"
	# SoftHSM2, the control of the conformance checks
	# (tests/pkcs11/conformance.c) and of bench/wks-p11-bench
	want="$want softhsm2"
	# the wolfCrypt backend (docs/BACKENDS.md)
	want="$want libwolfssl-dev"
fi
if [ "${1:-build}" = servers ]; then
	want=$servers
fi
missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ "${1:-build}" = test ] &&
   ! python3 -c 'import cryptography' >/dev/null 2>&1; then
	missing="$missing python3-cryptography"
fi
backports=""
if [ "${1:-build}" = test ] &&
   ! dpkg-query -W -f='${Status}' pkcs11-provider 2>/dev/null | grep -q "ok installed"; then
	backports=pkcs11-provider
fi
[ -z "$missing" ] && [ -z "$backports" ] && exit 0
echo "deps: installing$missing${backports:+ $backports (bookworm-backports)}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
	policy=/usr/sbin/policy-rc.d
	printf '#!/bin/sh\n# deps.sh: no service starts during the install\nexit 101\n' |
		$SUDO tee $policy >/dev/null
	$SUDO chmod 755 $policy
	trap '$SUDO rm -f $policy' EXIT
fi
if [ -n "$backports" ] &&
   ! grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo 'deb http://deb.debian.org/debian bookworm-backports main' |
		$SUDO tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
fi
$SUDO apt-get update -qq
if [ -n "$missing" ]; then
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
if [ -n "$backports" ]; then
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
		-t bookworm-backports $backports >/dev/null
fi
