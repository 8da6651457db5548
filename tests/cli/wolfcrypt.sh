#!/usr/bin/env bash
# wks(1) built on wolfCrypt (issue 31 item 4): every verb this build has,
# with the same output and exit statuses as the OpenSSL build's wks, and
# the verbs it lacks refused in one line with the status of an
# unsupported request (8).  Stores written by each build are read by the
# other and by wksdump.py.
#
# usage: wolfcrypt.sh WKS_BINARY SHARED_DIR
# WKS_OTHER: the OpenSSL build's wks (.ci/run: build/cli/wks, through
# WKS_CROSS_BUILD_DIR).  Without it the comparisons with that build are
# skipped (said so) and the rest runs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
PKI=$HERE/../data/pki
OTHER=${WKS_OTHER:-}
if [ -n "$OTHER" ] && [ ! -x "$OTHER" ]; then OTHER=; fi
start_tests wolfcrypt

VEC=$SHARED/vectors
VP=(--storepass pass:wolfsslpassword)
SP=pass:store-password-1
S=(--storepass "$SP")

# The backend: --version names it, and nothing links libcrypto.
wks --version
expect 0 "--version"
check "--version names the wolfcrypt backend" grep -q 'crypto backend wolfcrypt' "$T/out"
check "wks links no libcrypto" not sh -c "ldd '$WKS_BIN' | grep -q libcrypto"

# ---- same as the OpenSSL build ----------------------------------------------

# same WHAT ARGS...: run the command with both builds, each in its own
# copy of the folder "w" (so that edits do not meet); stdout, stderr and
# the status must be the same, and so must the stores afterwards, as
# `list` prints them (times left out: the two runs may straddle a
# second).
mkdir -p w
same() {
	local what=$1
	shift
	if [ -z "$OTHER" ]; then
		return 0
	fi
	rm -rf a b
	cp -a w a
	cp -a w b
	(cd a && set +e; setsid -w "$WKS_BIN" "$@" >../a.out 2>../a.err; echo "rc=$?" >>../a.out)
	(cd b && set +e; setsid -w "$OTHER" "$@" >../b.out 2>../b.err; echo "rc=$?" >>../b.out)
	if cmp -s a.out b.out && cmp -s a.err b.err; then
		ok
	else
		bad "$what: differs from the OpenSSL build"
		diff a.out b.out | head -5 >&2 || true
		diff a.err b.err | head -5 >&2 || true
	fi
	# (the vectors are never edited: only the stores made here)
	for f in a/*.wks; do
		[ -f "$f" ] || continue
		local n=${f#a/} pw=$SP
		case $n in vec-*) continue ;; esac
		(cd a && "$WKS_BIN" list -k "$n" --storepass "$pw" 2>&1 | sed 's/ 20[0-9-]* [0-9:]* UTC / TIME /' >../a.list || true)
		(cd b && "$OTHER" list -k "$n" --storepass "$pw" 2>&1 | sed 's/ 20[0-9-]* [0-9:]* UTC / TIME /' >../b.list || true)
		if cmp -s a.list b.list; then ok; else
			bad "$what: $n lists differently after it"
			diff a.list b.list | head -5 >&2 || true
		fi
	done
}

if [ -z "$OTHER" ]; then
	echo "note: no OpenSSL build's wks (WKS_OTHER): comparisons skipped"
fi

# Read-only verbs on every vector file (wolfJCE's stores, the edge and
# hostile cases), with the vectors' password and with a wrong one.
for f in "$VEC"/*/*.wks; do
	n=vec-$(basename "$(dirname "$f")")-$(basename "$f")
	cp "$f" "w/$n"
	same "list $n" list -k "$n" "${VP[@]}"
	same "list $n without password" list -k "$n"
	same "list $n wrong password" list -k "$n" --storepass pass:wrong-password
done
# verify: the same on every vector, except the ML-DSA keys: OpenSSL 3.0
# cannot read them and says their match was not checked, while libwks
# on wolfCrypt matches them (at the DER level, pqc.c) and says ok.
i=0
for f in w/vec-*.wks; do
	n=${f#w/}
	i=$((i + 1))
	case $n in *mldsa*) continue ;; esac
	# (each verify derives every key at 210000 iterations, twice: the
	# default mode takes every 3rd wolfJCE store and every 8th other
	# file; WKS_TEST_FULL=1: every one)
	if [ "${WKS_TEST_FULL:-0}" = 0 ]; then
		case $n in
		vec-wolfjce-*) [ $((i % 3)) -eq 1 ] || continue ;;
		*) [ $((i % 8)) -eq 0 ] || continue ;;
		esac
	fi
	same "verify $n" verify -k "$n" "${VP[@]}"
	same "verify --json $n" verify --json -k "$n" "${VP[@]}"
done
wks verify -k w/vec-wolfjce-client-mldsa44.wks "${VP[@]}"
expect 0 "verify of an ML-DSA-44 key entry"
check "the ML-DSA-44 key matches its certificate" grep -q 'client-mldsa44 (private-key): ok$' "$T/out"

# Exports of every entry of the wolfJCE stores: the same bytes (the
# default mode: every 3rd store; WKS_TEST_FULL=1: all).
i=0
for f in w/vec-wolfjce-*.wks; do
	n=${f#w/}
	i=$((i + 1))
	if [ "${WKS_TEST_FULL:-0}" = 0 ] && [ $((i % 3)) -ne 1 ]; then continue; fi
	mapfile -t als < <("$WKS_BIN" list -k "$f" "${VP[@]}" 2>/dev/null | sed -n 's/^\([^ ]*\)  *\(private-key\|certificate\|secret-key\) .*/\1/p')
	for a in "${als[@]}"; do
		same "export-cert $n $a" export-cert -k "$n" "${VP[@]}" -a "$a" --out -
		same "export-cert --der $n $a" export-cert --der -k "$n" "${VP[@]}" -a "$a" --out -
		same "export-key $n $a" export-key -k "$n" "${VP[@]}" -a "$a" --out -
		same "export-key --der $n $a" export-key --der -k "$n" "${VP[@]}" -a "$a" --out -
	done
done
# PEM written without OpenSSL is what `openssl x509` reads.
wks export-cert -k w/vec-wolfjce-ca-client.wks "${VP[@]}" -a client-rsa --out c.pem
expect 0 "export-cert PEM"
wks export-cert --der -k w/vec-wolfjce-ca-client.wks "${VP[@]}" -a client-rsa --out c.der
expect 0 "export-cert DER"
check "the PEM is base64 of the DER, 64 a line" sh -c "sed '1d;\$d' c.pem | base64 -d | cmp -s - c.der && ! awk 'length > 64' c.pem | grep -q ."
wks export-key -k w/vec-wolfjce-ca-client.wks "${VP[@]}" -a client-ecc --out k.pem
expect 0 "export-key PEM"
check "export-key writes a PRIVATE KEY block" grep -q '^-----BEGIN PRIVATE KEY-----$' k.pem

# Edits, made by this build, compared with the same edits by the other.
wks create -k w/s.wks "${S[@]}" --iterations 10000
expect 0 "create"
same "create" create -k new.wks "${S[@]}" --iterations 10000
same "create over an existing store" create -k s.wks "${S[@]}"
same "import-secret --hex" import-secret -k s.wks "${S[@]}" -a hex1 --hex 00112233445566778899aabbccddeeff --algorithm AES
printf 'sixteen byte key' >w/raw.bin
same "import-secret --in" import-secret -k s.wks "${S[@]}" -a raw --in raw.bin --algorithm HmacSHA256
(cd w && "$WKS_BIN" import-secret -k s.wks "${S[@]}" -a gen --generate aes-256 >/dev/null)
(cd w && "$WKS_BIN" import-secret -k s.wks "${S[@]}" -a hex2 --hex 0011223344556677 --algorithm DES >/dev/null)
same "export-key of a secret key" export-key -k s.wks "${S[@]}" -a hex2 --out -
same "export-key --der of a secret key" export-key --der -k s.wks "${S[@]}" -a hex2 --out -
same "rename" rename -k s.wks "${S[@]}" -a hex1 --new-alias renamed
same "rename onto an existing alias" rename -k s.wks "${S[@]}" -a hex1 --new-alias hex2
same "rename of a missing alias" rename -k s.wks "${S[@]}" -a nope --new-alias x
same "delete" delete -k s.wks "${S[@]}" -a hex1
same "delete of a missing alias" delete -k s.wks "${S[@]}" -a nope
same "keypasswd" keypasswd -k s.wks "${S[@]}" -a hex2 --keypass "$SP" --new-keypass pass:key-password-2
same "keypasswd with a wrong key password" keypasswd -k s.wks "${S[@]}" -a hex2 --keypass pass:not-it --new-keypass pass:key-password-3
same "passwd" passwd -k s.wks "${S[@]}" --new-storepass pass:store-password-2
same "passwd with the wrong password" passwd -k s.wks --storepass pass:wrong --new-storepass pass:store-password-2
same "verify" verify -k s.wks "${S[@]}"
same "export-key with a wrong key password" export-key -k s.wks "${S[@]}" -a hex2 --keypass pass:nope --out -
same "list a missing store" list -k missing.wks "${S[@]}"
same "list one alias" list -k s.wks "${S[@]}" -a raw
same "list a missing alias" list -k s.wks "${S[@]}" -a nope

# ---- stores of one build read by the other and by wksdump.py ----------------

# This build's store, with keys the OpenSSL build imported into it
# (import-key is that build's) and edits of this one.
wks import-secret -k w/s.wks "${S[@]}" -a mine --hex 000102030405060708090a0b0c0d0e0f --algorithm AES
expect 0 "import-secret into this build's store"
if [ -n "$OTHER" ]; then
	setsid -w "$OTHER" import-key -k w/s.wks "${S[@]}" -a leaf \
		--key "$PKI/p256-leafkey.key" --chain "$PKI/p256-leaf.pem" \
		--chain "$PKI/p256-ca.pem" >/dev/null 2>&1 || bad "import-key by the OpenSSL build"
	wks keypasswd -k w/s.wks "${S[@]}" -a leaf --keypass "$SP" --new-keypass pass:leaf-password-9
	expect 0 "keypasswd of a key entry the OpenSSL build wrote"
	wks passwd -k w/s.wks "${S[@]}" --new-storepass pass:store-password-3
	expect 0 "passwd of a store with a key entry"
	SP=pass:store-password-3
	S=(--storepass "$SP")
	wks verify -k w/s.wks "${S[@]}" --keypass-for leaf=pass:leaf-password-9
	expect 0 "verify on this build: the key matches its certificate"
	setsid -w "$OTHER" verify -k w/s.wks "${S[@]}" --keypass-for leaf=pass:leaf-password-9 >other.out 2>&1
	check "the OpenSSL build verifies this build's store" test $? -eq 0
	wks list -k w/s.wks "${S[@]}"
	sed 's/ 20[0-9-]* [0-9:]* UTC / TIME /' "$T/out" >a.list
	setsid -w "$OTHER" list -k w/s.wks "${S[@]}" 2>&1 | sed 's/ 20[0-9-]* [0-9:]* UTC / TIME /' >b.list
	check "both builds list this build's store the same" cmp -s a.list b.list
	check "list describes the key" grep -q '^leaf .*private-key .*EC P-256, chain of 2$' a.list
	wks export-key --der -k w/s.wks "${S[@]}" -a leaf --keypass pass:leaf-password-9 --out k1.der
	setsid -w "$OTHER" export-key --der -k w/s.wks "${S[@]}" -a leaf --keypass pass:leaf-password-9 --out k2.der
	check "both builds export the same key" cmp -s k1.der k2.der
	# Back to the store password, for wksdump.py's one key password.
	wks keypasswd -k w/s.wks "${S[@]}" -a leaf --keypass pass:leaf-password-9 --new-keypass "$SP"
	expect 0 "keypasswd back to the store password"
fi
check "wksdump.py verifies this build's store" sh -c "python3 '$WKSDUMP' dump --password '${SP#pass:}' w/s.wks >dump.json"

# ---- what this build refuses ------------------------------------------------

refused() { # WHAT ARGS...
	local what=$1
	shift
	wks "$@"
	expect_err 8 "needs the OpenSSL build" "$what is refused"
	check "$what: one line" test "$(grep -c '' "$T/err")" -eq 1
}
for v in import-key import-cert import-p12 export-p12 import-keystore \
	import-certs genkeypair certreq; do
	refused "$v" "$v" -k w/s.wks "${S[@]}"
done
for v in convert printcert check-reference; do
	refused "$v" "$v"
done
refused "list -v" list -v -k w/s.wks "${S[@]}"
refused "list --json" list --json -k w/s.wks "${S[@]}"
refused "export-key --encrypt" export-key -k w/vec-wolfjce-ca-client.wks "${VP[@]}" -a client-ecc --encrypt --outpass pass:abcdefgh --out -
refused "export-key --reference" export-key -k w/s.wks "${S[@]}" -a mine --reference --out r.ref

end_tests
