# Shared by tests/provider/reference.sh and servers.sh (sourced, bash):
# a PKI root > intermediate > leaf (localhost) and a client certificate,
# a store holding the server and client keys with their chains, and
# openssl.cnf files loading wks.so with references on and off.
#
# Needs: T (the test folder, the working directory), WKS_BIN, PROV_DIR.
# Defines ok/bad counters, q (quiet openssl), wks (the tool, checked),
# mkpki, mkconf, free_port, wait_port.

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() {
	failed=$((failed + 1))
	echo "FAIL: $*" >&2
	if [ -s "$T/err" ]; then sed 's/^/    stderr: /' "$T/err" | head -20 >&2; fi
}

q() { openssl "$@" >/dev/null 2>&1; }

# wks ARGS...: the tool; stdout in $T/out, stderr in $T/err, status in rc.
wks() {
	set +e
	setsid -w timeout 60 "$WKS_BIN" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
}
wks_ok() {
	wks "$@"
	if [ "$rc" -ne 0 ]; then bad "wks $*: exit $rc"; fi
}

# mkpki: root.crt, int.crt, leaf.{key,crt} (CN and SAN localhost, issued by
# the intermediate), client.{key,crt}, chain.pem = leaf int root; a store
# server.wks (store password in storepw.txt) with "server" and "client"
# key entries, 10,000 PBKDF2 iterations.
mkpki() {
	q req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout root.key -out root.crt -days 30 -subj "/CN=WKS Ref Root" \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign
	q req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout int.key -out int.csr -subj "/CN=WKS Ref Intermediate"
	q x509 -req -in int.csr -CA root.crt -CAkey root.key -CAcreateserial \
		-days 30 -out int.crt -extfile <(printf '%s\n' \
		'basicConstraints=critical,CA:TRUE' \
		'keyUsage=critical,keyCertSign,cRLSign')
	local k
	for k in leaf client leaf2; do
		q genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $k.key
		q req -new -key $k.key -subj "/CN=${k/leaf2/leaf}" -out $k.csr
		q x509 -req -in $k.csr -CA int.crt -CAkey int.key -CAcreateserial \
			-days 30 -out $k.crt -extfile <(printf '%s\n' \
			'subjectAltName=DNS:localhost' \
			"extendedKeyUsage=$([ $k = client ] && echo clientAuth || echo serverAuth)")
	done
	printf 'ref store pw\n' >storepw.txt
	chmod 600 storepw.txt
	wks_ok create -k server.wks --storepass file:storepw.txt --iterations 10000
	for k in leaf client; do
		wks_ok import-key -k server.wks -a ${k/leaf/server} --key $k.key \
			--chain $k.crt --chain int.crt --chain root.crt \
			--storepass file:storepw.txt --iterations 10000
	done
	cat leaf.crt int.crt root.crt >chain.pem
}

# mkconf FILE [SETTING...]: an openssl.cnf loading default and wks.so
# (module = the build's), with the given lines in wks's section.
mkconf() {
	local f=$1
	shift
	{
		printf '%s\n' 'openssl_conf = openssl_init' '[openssl_init]' \
			'providers = provider_sect' '[provider_sect]' \
			'default = default_sect' 'wks = wks_sect' \
			'[default_sect]' 'activate = 1' '[wks_sect]' \
			'activate = 1' "module = $PROV_DIR/wks.so"
		printf '%s\n' "$@"
	} >"$f"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_port PORT: until something accepts on 127.0.0.1:PORT (at most 30 s).
wait_port() {
	local i
	for i in $(seq 300); do
		if port_open "$1"; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}
# port_open PORT: something listens on 127.0.0.1:PORT (bash's /dev/tcp:
# a connection opened and closed, no process started).
port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# served PORT [s_client options...]: the chain the server on PORT sends,
# verified against root.crt only (-verify_return_error); certificates in
# $T/served.pem, status in rc.
served() {
	local port=$1
	shift
	set +e
	setsid -w timeout 20 openssl s_client -connect 127.0.0.1:$port \
		-servername localhost -CAfile root.crt -verify_return_error \
		-verify_hostname localhost -showcerts "$@" </dev/null \
		>"$T/sc.out" 2>"$T/err"
	rc=$?
	set -e
	awk '/-----BEGIN CERTIFICATE-----/{p=1} p{print} /-----END CERTIFICATE-----/{p=0}' \
		"$T/sc.out" >"$T/served.pem"
	if [ $rc -eq 0 ] && ! grep -q 'Verify return code: 0 (ok)' "$T/sc.out"; then
		rc=99
	fi
}

# full_chain [LEAF]: served.pem is LEAF (default leaf.crt), int.crt,
# root.crt, each once, in that order.
full_chain() {
	local want
	want=$(cat "${1:-leaf.crt}" int.crt root.crt | openssl crl2pkcs7 -nocrl \
		-certfile /dev/stdin 2>/dev/null | openssl pkcs7 -print_certs 2>/dev/null |
		grep -v '^\(subject\|issuer\)=' | grep -v '^$')
	local got
	got=$(openssl crl2pkcs7 -nocrl -certfile "$T/served.pem" 2>/dev/null |
		openssl pkcs7 -print_certs 2>/dev/null |
		grep -v '^\(subject\|issuer\)=' | grep -v '^$')
	[ -n "$got" ] && [ "$want" = "$got" ]
}
