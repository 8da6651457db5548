#!/usr/bin/env bash
# End-to-end tests of wks(1): every subcommand, driven as a user would,
# with keys and certificates made by the openssl command, PKCS#12 round
# trips through `openssl pkcs12`, results checked with wksdump.py, and
# bad input (exit status, message, store file unchanged).
#
# usage: run.sh WKS_BINARY SHARED_DIR
#
# Works in a mktemp -d folder that it removes.  Every command runs in a
# new session without a controlling terminal (setsid), so no test can
# wait for a prompt.  Prints "N passed, M failed" last; exits 1 on any
# failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
start_tests cli

# ---- helpers (and lib.sh's) -------------------------------------------------

cert_sha() { openssl x509 -in "$1" -outform DER | sha256sum | cut -d' ' -f1; }
# The DER of a key as OpenSSL encodes it (to compare keys, not bytes).
key_der() { openssl pkey -in "$1" -outform DER "${@:2}"; }
# PEM body to DER, bytes as they are.
pem_der() { sed -n '/-----BEGIN/,/-----END/p' "$1" | sed '1d;$d' | base64 -d; }

SP=pass:store-password-1
IT=(--iterations 10000)
S=(--storepass "$SP")

# ---- keys and certificates ---------------------------------------------------

printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n' >ca.ext
printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n' >leaf.ext

genkey() { # NAME ALG [OPTS...]
	local name=$1 alg=$2
	shift 2
	ossl genpkey -algorithm "$alg" "$@" -out "$name.key"
}
# sign NAME CN ISSUER EXT: certificate NAME.pem for NAME.key
sign() {
	ossl req -new -key "$1.key" -subj "/O=libwks test/CN=$2" -out "$1.csr"
	ossl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -CAcreateserial \
		-days 30 -sha256 -extfile "$4" -out "$1.pem"
}
selfsign() { # NAME CN
	ossl req -x509 -new -key "$1.key" -subj "/O=libwks test/CN=$2" -days 30 \
		-sha256 -addext basicConstraints=critical,CA:TRUE -out "$1.pem"
}

genkey root EC -pkeyopt ec_paramgen_curve:P-256
selfsign root "Test Root CA"
genkey inter RSA -pkeyopt rsa_keygen_bits:2048
sign inter "Test Intermediate CA" root ca.ext
genkey rsa2048 RSA -pkeyopt rsa_keygen_bits:2048
sign rsa2048 "rsa2048.example" inter leaf.ext          # chain of 3
# (RSA-4096 generation takes 0.5-5 s of CPU: a key made once, in
# tests/data/keys.)
cp "$HERE/../data/keys/rsa4096.key" rsa4096.key
selfsign rsa4096 "rsa4096.example"                     # chain of 1
genkey ec256 EC -pkeyopt ec_paramgen_curve:P-256
sign ec256 "ec256.example" root leaf.ext               # chain of 2
genkey ec384 EC -pkeyopt ec_paramgen_curve:P-384
sign ec384 "ec384.example" inter leaf.ext              # chain of 3
genkey ed25519 ED25519
sign ed25519 "ed25519.example" root leaf.ext           # chain of 2
genkey other EC -pkeyopt ec_paramgen_curve:P-256
selfsign other "unrelated"

# Key encodings.
ossl rsa -in rsa4096.key -traditional -out rsa4096.trad.pem
ossl rsa -in rsa4096.key -traditional -aes256 -passout pass:legacy-phrase -out rsa4096.legacy.pem
ossl ec -in ec256.key -out ec256.trad.pem
ossl pkcs8 -topk8 -v2 aes-256-cbc -in ec384.key -passout pass:key-phrase -out ec384.enc.pem
ossl pkcs8 -topk8 -v2 aes-256-cbc -in ec256.key -passout pass:key-phrase -outform DER -out ec256.enc.der
ossl pkey -in ed25519.key -outform DER -out ed25519.key.der
for k in rsa2048 rsa4096 ec256 ec384 ed25519; do
	pem_der $k.key >$k.p8       # genpkey writes PKCS#8: the exact bytes
	key_der $k.key >$k.norm     # for comparisons through OpenSSL
done
for c in root inter rsa2048 rsa4096 ec256 ec384 ed25519 other; do
	ossl x509 -in $c.pem -outform DER -out $c.der
done
grep -q "BEGIN RSA PRIVATE KEY" rsa4096.trad.pem
grep -q "BEGIN EC PRIVATE KEY" ec256.trad.pem
grep -q "DEK-Info" rsa4096.legacy.pem

# ---- usage and help -----------------------------------------------------------

wks --help
expect 0 "--help"
check "--help lists the exit statuses" grep -q "EXIT STATUS" "$T/out"
wks --version
expect 0 "--version"
for cmd in create list import-key import-cert import-secret import-p12 \
	export-p12 export-key export-cert delete rename passwd keypasswd \
	verify convert; do
	wks "$cmd" --help
	if [ "$rc" -eq 0 ] && grep -q "usage: wks $cmd" "$T/out" &&
		grep -q "EXIT STATUS" "$T/out"; then ok; else bad "$cmd --help"; fi
done
wks frobnicate
expect_err 2 'unknown command' "unknown command"
wks list --frobnicate
expect_err 2 'unknown option' "unknown option"
wks create -k x.wks --der
expect_err 2 'does not apply' "option of another command"
wks list
expect_err 2 'option --keystore is required' "missing --keystore"
wks list -k x.wks stray
expect_err 2 'unexpected argument' "stray argument"
wks create -k x.wks "${S[@]}" --iterations 9999
expect_err 2 'iterations' "--iterations below 10000"
wks create -k x.wks --storepass bogus
expect_err 2 'expected pass:' "bad password source"

# ---- create -------------------------------------------------------------------

wks create -k s.wks "${S[@]}" "${IT[@]}"
expect 0 "create"
check "create: mode 0600" [ "$(stat -c %a s.wks)" = 600 ]
check "create: 104 bytes" [ "$(stat -c %s s.wks)" = 104 ]
python3 "$WKSDUMP" dump --password store-password-1 s.wks >dump.json
check "create: wksdump verifies, 10000 iterations" python3 -c '
import json,sys; d=json.load(open("dump.json"))["files"]["s.wks"]
assert d["store_integrity"]["verified"] is True, d
assert d["store_integrity"]["iterations"] == 10000, d'
h=$(sha s.wks)
wks create -k s.wks "${S[@]}" "${IT[@]}"
expect_err 7 's.wks: exists' "create over an existing file"
unchanged s.wks "$h" "create over an existing file"
wks create -k new.wks "${IT[@]}"
expect_err 2 'no terminal' "create without password or terminal"
check "create without password: no file" [ ! -e new.wks ]
wks create -k new.wks --storepass pass: "${IT[@]}"
expect_err 2 'must not be empty' "create with an empty password"
wks create -k forced.wks "${S[@]}" "${IT[@]}"
wks create -k forced.wks --force --storepass pass:other-password "${IT[@]}"
expect 0 "create --force"
wks list -k forced.wks --storepass pass:other-password
expect 0 "create --force: new password"
wks create -k /nonexistent-dir/x.wks "${S[@]}" "${IT[@]}"
expect_err 6 'nonexistent-dir/x.wks' "create in a missing folder"

# ---- import-key ----------------------------------------------------------------

# PKCS#8 PEM, chain given out of order in separate files.
wks import-key -k s.wks -a rsa2048 --key rsa2048.key --chain root.pem \
	--chain rsa2048.pem --chain inter.pem "${S[@]}" "${IT[@]}"
expect 0 "import-key PKCS#8 PEM, chain out of order"
# Traditional RSA PEM, self-signed.
wks import-key -k s.wks -a rsa4096 --key rsa4096.trad.pem --chain rsa4096.pem "${S[@]}" "${IT[@]}"
expect 0 "import-key traditional RSA PEM"
# Traditional EC PEM, chain as one reversed bundle.
cat root.pem ec256.pem >ec256.bundle.pem
wks import-key -k s.wks -a ec256 --key ec256.trad.pem --chain ec256.bundle.pem "${S[@]}" "${IT[@]}"
expect 0 "import-key traditional EC PEM, reversed bundle"
# Encrypted PKCS#8 PEM, DER chain files.
wks import-key -k s.wks -a ec384 --key ec384.enc.pem --inpass pass:key-phrase \
	--chain inter.der --chain root.der --chain ec384.der "${S[@]}" "${IT[@]}"
expect 0 "import-key encrypted PKCS#8, DER chain"
# PKCS#8 DER; leaf and root in the key file is not possible for DER, so
# the chain comes from a concatenation of DER certificates.
cat root.der ed25519.der >ed25519.chain.der
wks import-key -k s.wks -a ed25519 --key ed25519.key.der --chain ed25519.chain.der "${S[@]}" "${IT[@]}"
expect 0 "import-key PKCS#8 DER (Ed25519), concatenated DER chain"
# Legacy-encrypted traditional PEM.
wks import-key -k s.wks -a rsa4096-legacy --key rsa4096.legacy.pem \
	--inpass env:LEGACY_PHRASE --chain rsa4096.pem "${S[@]}" "${IT[@]}" </dev/null
expect_err 2 'LEGACY_PHRASE is not set' "import-key: --inpass env: unset"
LEGACY_PHRASE=legacy-phrase wks import-key -k s.wks -a rsa4096-legacy \
	--key rsa4096.legacy.pem --inpass env:LEGACY_PHRASE --chain rsa4096.pem "${S[@]}" "${IT[@]}"
expect 0 "import-key legacy-encrypted traditional PEM"
# Encrypted PKCS#8 DER; key and certificates in one PEM file.
wks import-key -k s.wks -a ec256-der --key ec256.enc.der --inpass pass:key-phrase \
	--chain ec256.pem --chain root.pem "${S[@]}" "${IT[@]}"
expect 0 "import-key encrypted PKCS#8 DER"
cat ec256.pem ec256.key root.pem >ec256.all.pem
wks import-key -k s.wks -a ec256-onefile --key ec256.all.pem "${S[@]}" "${IT[@]}"
expect 0 "import-key: key and chain in one PEM file"

wks list -k s.wks --json "${S[@]}"
expect 0 "list --json"
check "chain of rsa2048 leaf first" [ "$(json '[e["chain_sha256"] for e in d["entries"] if e["alias"]=="rsa2048"][0]')" = \
	"$(python3 -c 'import sys; print(sys.argv[1:])' "$(sha rsa2048.der)" "$(sha inter.der)" "$(sha root.der)")" ]
check "chain of ec384 leaf first" [ "$(json '[e["chain_sha256"] for e in d["entries"] if e["alias"]=="ec384"][0]')" = \
	"$(python3 -c 'import sys; print(sys.argv[1:])' "$(sha ec384.der)" "$(sha inter.der)" "$(sha root.der)")" ]
check "chain of ec256 leaf first" [ "$(json '[e["chain_sha256"] for e in d["entries"] if e["alias"]=="ec256-onefile"][0]')" = \
	"$(python3 -c 'import sys; print(sys.argv[1:])' "$(sha ec256.der)" "$(sha root.der)")" ]
check "chain of ed25519" [ "$(json '[len(e["chain_sha256"]) for e in d["entries"] if e["alias"]=="ed25519"][0]')" = 2 ]
check "chain of rsa4096" [ "$(json '[len(e["chain_sha256"]) for e in d["entries"] if e["alias"]=="rsa4096"][0]')" = 1 ]
check "list --json: sorted aliases, all private keys" [ "$(json '[e["alias"] for e in d["entries"]] == sorted(e["alias"] for e in d["entries"]) and all(e["type"]=="private-key" for e in d["entries"]) and len(d["entries"]) == 8')" = True ]
check "list --json: exact keys" [ "$(json 'all(sorted(e)==["alias","certificates","chain_sha256","created_ms","type"] for e in d["entries"])')" = True ]

# A chain as CAs send it: PKCS#7, PEM and DER, any order inside; the same
# chain, leaf first, as the separate files give.  A PKCS#7 with no
# certificate is refused.
ossl crl2pkcs7 -nocrl -certfile root.pem -certfile rsa2048.pem \
	-certfile inter.pem -out rsa2048.p7b
ossl crl2pkcs7 -nocrl -certfile inter.pem -certfile root.pem \
	-certfile rsa2048.pem -outform DER -out rsa2048.p7b.der
ossl crl2pkcs7 -nocrl -out empty.p7b
wks create -k p7.wks "${S[@]}" "${IT[@]}"
for f in rsa2048.p7b rsa2048.p7b.der; do
	wks import-key -k p7.wks -a "$f" --key rsa2048.key --chain "$f" "${S[@]}" "${IT[@]}"
	expect 0 "import-key: PKCS#7 chain ($f)"
done
wks list -k p7.wks --json "${S[@]}"
check "PKCS#7 chains: leaf first, complete" [ "$(json '[e["chain_sha256"] for e in d["entries"]]')" = \
	"$(python3 -c 'import sys; print([sys.argv[1:]] * 2)' "$(sha rsa2048.der)" "$(sha inter.der)" "$(sha root.der)")" ]
h=$(sha p7.wks)
wks import-key -k p7.wks -a none --key rsa2048.key --chain empty.p7b "${S[@]}" "${IT[@]}"
expect_err 5 'the PKCS#7 holds no certificate' "import-key: PKCS#7 without certificates"
unchanged p7.wks "$h" "import-key: PKCS#7 without certificates"

# export-key --der gives the stored PKCS#8: the input bytes for PKCS#8
# input, OpenSSL's encoding of the same key otherwise.
for a in rsa2048 ed25519; do
	wks export-key -k s.wks -a $a --der "${S[@]}"
	check "export-key --der $a: exact input bytes" cmp -s "$T/out" $a.p8
done
for pair in rsa4096:rsa4096 ec256:ec256 ec384:ec384 rsa4096-legacy:rsa4096 ec256-der:ec256 ec256-onefile:ec256; do
	a=${pair%%:*} k=${pair#*:}
	wks export-key -k s.wks -a "$a" --der "${S[@]}"
	cp "$T/out" got.der
	check "export-key $a: same key" cmp -s <(openssl pkey -inform DER -in got.der -outform DER) $k.norm
done
wks export-key -k s.wks -a rsa2048 "${S[@]}"
check "export-key PEM = input PKCS#8 PEM" cmp -s "$T/out" rsa2048.key

# Bad input to import-key: status, message, file unchanged.
h=$(sha s.wks)
wks import-key -k s.wks -a bad --key ec256.key --chain rsa2048.pem "${S[@]}" "${IT[@]}"
expect_err 8 'matches none of the certificates' "import-key: key and chain mismatch"
unchanged s.wks "$h" "import-key: key and chain mismatch"
wks import-key -k s.wks -a bad --key rsa2048.key --chain rsa2048.pem --chain inter.pem \
	--chain root.pem --chain other.pem "${S[@]}" "${IT[@]}"
expect_err 8 'not part of the chain' "import-key: unrelated certificate"
unchanged s.wks "$h" "import-key: unrelated certificate"
sed '3s/./#/' rsa2048.key >broken.key
wks import-key -k s.wks -a bad --key broken.key --chain rsa2048.pem "${S[@]}" "${IT[@]}"
expect_err 5 'broken.key' "import-key: bad PEM"
unchanged s.wks "$h" "import-key: bad PEM"
head -c 300 /dev/urandom >garbage.bin
wks import-key -k s.wks -a bad --key garbage.bin --chain rsa2048.pem "${S[@]}" "${IT[@]}"
expect_err 5 'garbage.bin' "import-key: not a key"
wks import-key -k s.wks -a bad --key rsa2048.key --chain garbage.bin "${S[@]}" "${IT[@]}"
expect_err 5 'garbage.bin' "import-key: not a certificate"
sed '5s/./!/' rsa2048.pem >broken.pem
wks import-key -k s.wks -a bad --key rsa2048.key --chain broken.pem "${S[@]}" "${IT[@]}"
expect_err 5 'broken.pem' "import-key: bad certificate PEM"
wks import-key -k s.wks -a bad --key ec384.enc.pem --inpass pass:wrong-phrase \
	--chain ec384.pem --chain inter.pem --chain root.pem "${S[@]}" "${IT[@]}"
expect_err 4 'cannot decrypt the private key' "import-key: wrong passphrase"
wks import-key -k s.wks -a bad --key ec384.enc.pem --chain ec384.pem "${S[@]}" "${IT[@]}"
expect_err 2 'no terminal' "import-key: passphrase needed, no terminal"
wks import-key -k s.wks -a bad --key missing.key --chain rsa2048.pem "${S[@]}" "${IT[@]}"
expect_err 6 'missing.key: cannot open' "import-key: missing key file"
wks import-key -k s.wks -a bad --key rsa2048.key "${S[@]}" "${IT[@]}"
expect_err 2 'no certificate' "import-key: no chain"
wks import-key -k s.wks -a rsa2048 --key rsa2048.key --chain rsa2048.pem \
	--chain inter.pem --chain root.pem "${S[@]}" "${IT[@]}"
expect_err 7 'exists' "import-key: alias exists"
wks import-key -k s.wks -a rsa2048 --key rsa2048.key --chain rsa2048.pem \
	--chain inter.pem --chain root.pem --storepass pass:wrong-password "${IT[@]}"
expect_err 4 'integrity check failed: wrong password, or the file was modified' "import-key: wrong store password"
unchanged s.wks "$h" "import-key: failures"
wks import-key -k s.wks -a rsa2048 --force --key rsa2048.key --chain rsa2048.pem \
	--chain inter.pem --chain root.pem "${S[@]}" "${IT[@]}"
expect 0 "import-key --force"

# ---- import-cert ---------------------------------------------------------------

wks import-cert -k s.wks -a root --cert root.pem "${S[@]}" "${IT[@]}"
expect 0 "import-cert PEM"
cp s.wks note.wks
wks import-cert -k note.wks -a rsa4096-cert --cert rsa4096.pem "${S[@]}" "${IT[@]}"
check "import-cert: note about the same certificate in a key entry" grep -q 'wks: note.wks: note: the certificate is also in entry "rsa4096"' "$T/err"
wks import-cert -k s.wks -a other --cert other.der "${S[@]}" "${IT[@]}"
expect 0 "import-cert DER"
h=$(sha s.wks)
wks import-cert -k s.wks -a root --cert inter.pem "${S[@]}" "${IT[@]}"
expect_err 7 'exists' "import-cert: alias exists"
# Onto a key entry the certificate is a CA reply (tests/cli/genkey.sh):
# refused when it is not for the entry's key.
wks import-cert -k s.wks -a rsa2048 --cert inter.pem "${S[@]}" "${IT[@]}"
expect_err 8 "Public keys in reply and keystore don't match" "import-cert onto a key entry, another key"
wks import-cert -k s.wks -a rsa2048 --force --cert inter.pem "${S[@]}" "${IT[@]}"
expect_err 8 "Public keys in reply and keystore don't match" "import-cert --force onto a key entry, another key"
wks import-cert -k s.wks -a two --cert ec256.bundle.pem "${S[@]}" "${IT[@]}"
expect_err 2 'holds 2 certificates' "import-cert: two certificates"
wks import-cert -k s.wks -a bad --cert garbage.bin "${S[@]}" "${IT[@]}"
expect_err 5 'garbage.bin' "import-cert: garbage"
unchanged s.wks "$h" "import-cert: failures"
wks import-cert -k s.wks -a root --force --cert inter.pem "${S[@]}" "${IT[@]}"
expect 0 "import-cert --force"
wks import-cert -k s.wks -a root --force --cert root.pem "${S[@]}" "${IT[@]}"
wks list -k s.wks --json -a root "${S[@]}"
check "import-cert: certificate hash" [ "$(json 'd["entries"][0]["cert_sha256"]')" = "$(sha root.der)" ]

# ---- import-secret -------------------------------------------------------------

K16=000102030405060708090a0b0c0d0e0f
K32=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
wks import-secret -k s.wks -a aes128 --hex pass:$K16 "${S[@]}" "${IT[@]}"
expect 0 "import-secret --hex pass:"
HEXKEY=$K32 wks import-secret -k s.wks -a aes256 --hex env:HEXKEY "${S[@]}" "${IT[@]}"
expect 0 "import-secret --hex env:"
head -c 20 /dev/urandom >hmac.key
wks import-secret -k s.wks -a hmac --in hmac.key "${S[@]}" "${IT[@]}"
expect_err 2 'algorithm' "import-secret: 20 bytes without --algorithm"
wks import-secret -k s.wks -a hmac --in hmac.key --algorithm HmacSHA1 "${S[@]}" "${IT[@]}"
expect 0 "import-secret --in --algorithm"
for g in aes-128 aes-256 hmac-sha256; do
	wks import-secret -k s.wks -a gen-$g --generate $g "${S[@]}" "${IT[@]}"
	expect 0 "import-secret --generate $g"
done
h=$(sha s.wks)
wks import-secret -k s.wks -a x --hex pass:0g "${S[@]}" "${IT[@]}"
expect_err 2 'hex' "import-secret: bad hex"
wks import-secret -k s.wks -a x --hex pass:00 --generate aes-128 "${S[@]}" "${IT[@]}"
expect_err 2 'exactly one' "import-secret: two sources"
wks import-secret -k s.wks -a x --generate des "${S[@]}" "${IT[@]}"
expect_err 2 'generate' "import-secret: unknown kind"
wks import-secret -k s.wks -a aes128 --hex pass:$K16 "${S[@]}" "${IT[@]}"
expect_err 7 'exists' "import-secret: alias exists"
unchanged s.wks "$h" "import-secret: failures"
wks list -k s.wks --json "${S[@]}"
check "import-secret: algorithms" [ "$(json '{e["alias"]: e.get("algorithm") for e in d["entries"] if e["type"]=="secret-key"}')" = \
	"{'aes128': 'AES', 'aes256': 'AES', 'gen-aes-128': 'AES', 'gen-aes-256': 'AES', 'gen-hmac-sha256': 'HmacSHA256', 'hmac': 'HmacSHA1'}" ]
wks export-key -k s.wks -a aes128 "${S[@]}"
check "export-key secret: hex" [ "$(cat "$T/out")" = "$K16" ]
wks export-key -k s.wks -a aes256 "${S[@]}"
check "export-key secret (env:): hex" [ "$(cat "$T/out")" = "$K32" ]
wks export-key -k s.wks -a hmac --der "${S[@]}"
check "export-key secret --der: raw bytes" cmp -s "$T/out" hmac.key
wks export-key -k s.wks -a gen-aes-256 --der "${S[@]}"
check "generated AES-256: 32 bytes" [ "$(stat -c %s "$T/out")" = 32 ]

# ---- export-key ------------------------------------------------------------------

wks export-key -k s.wks -a rsa2048 --outpass pass:export-phrase "${S[@]}" --iterations 10000
expect 0 "export-key encrypted PEM"
check "export-key encrypted: PEM label" grep -q "BEGIN ENCRYPTED PRIVATE KEY" "$T/out"
cp "$T/out" enc.pem
check "export-key encrypted: openssl decrypts, same key" cmp -s \
	<(openssl pkey -in enc.pem -passin pass:export-phrase -outform DER) rsa2048.norm
check "export-key encrypted: AES-256-CBC, PBKDF2" sh -c \
	"openssl asn1parse -in enc.pem | grep -q aes-256-cbc && openssl asn1parse -in enc.pem | grep -q PBKDF2"
wks export-key -k s.wks -a ec384 --der --outpass pass:export-phrase -o enc.der "${S[@]}" --iterations 10000
expect 0 "export-key encrypted DER to a file"
check "export-key -o: mode 0600" [ "$(stat -c %a enc.der)" = 600 ]
check "export-key encrypted DER: same key" cmp -s \
	<(openssl pkey -inform DER -in enc.der -passin pass:export-phrase -outform DER) ec384.norm
wks export-key -k s.wks -a ec384 --encrypt "${S[@]}"
expect_err 2 'no terminal' "export-key --encrypt without terminal"
wks export-key -k s.wks -a root "${S[@]}"
expect_err 8 'export-cert' "export-key of a certificate"
wks export-key -k s.wks -a nosuch "${S[@]}"
expect_err 3 'entry "nosuch": not found' "export-key: no such alias"
wks export-key -k s.wks -a aes128 --outpass pass:x "${S[@]}"
expect_err 2 'private keys only' "export-key: encrypted secret key"
wks export-key -k s.wks -a rsa2048 --keypass pass:wrong-key-pass -o nokey.pem "${S[@]}"
expect_err 4 'entry "rsa2048": integrity check failed: wrong key password' "export-key: wrong key password"
check "export-key: failed export writes no file" [ ! -e nokey.pem ]
wks export-key -k s.wks -a rsa2048 --der --no-storepass --keypass "$SP"
expect 0 "export-key --no-storepass --keypass"
check "export-key --no-storepass: same bytes" cmp -s "$T/out" rsa2048.p8
check "export-key --no-storepass: note" grep -q 'integrity not checked' "$T/err"

# ---- export-cert -----------------------------------------------------------------

wks export-cert -k s.wks -a rsa2048 "${S[@]}"
expect 0 "export-cert chain"
check "export-cert: chain PEM leaf first" cmp -s "$T/out" <(cat rsa2048.pem inter.pem root.pem)
wks export-cert -k s.wks -a rsa2048 --leaf --der
expect 0 "export-cert --leaf --der without password"
check "export-cert --leaf --der" cmp -s "$T/out" rsa2048.der
check "export-cert without password: note" grep -q 'integrity not checked' "$T/err"
wks export-cert -k s.wks -a ec256 --der --no-storepass -o ec256.chain.der
check "export-cert --der chain: concatenated DER" cmp -s ec256.chain.der <(cat ec256.der root.der)
check "export-cert -o: mode 0644" [ "$(stat -c %a ec256.chain.der)" = 644 ]
wks export-cert -k s.wks -a other --no-storepass
check "export-cert of a certificate entry" cmp -s "$T/out" other.pem
wks export-cert -k s.wks -a aes128 --no-storepass
expect_err 8 'secret key' "export-cert of a secret key"
wks export-cert -k s.wks -a nosuch --no-storepass
expect_err 3 'not found' "export-cert: no such alias"
wks export-cert -k s.wks -a rsa2048 --storepass pass:wrong-password
expect_err 4 'integrity check failed' "export-cert: wrong password"

# ---- list ------------------------------------------------------------------------

wks list -k s.wks "${S[@]}"
expect 0 "list"
check "list: one line per entry" [ "$(grep -c -E '^(rsa2048|rsa4096|ec256|ec384|ed25519|root|other|aes128) ' "$T/out")" = 8 ]
check "list: key descriptions" sh -c "grep -q 'RSA 4096, chain of 1' $T/out && grep -q 'EC P-384, chain of 3' $T/out && grep -q 'ED25519, chain of 2' $T/out && grep -q 'HmacSHA1' $T/out"
check "list: no note with a password" [ ! -s "$T/err" ]
wks list -k s.wks -v "${S[@]}"
expect 0 "list -v"
check "list -v: details" sh -c "grep -q 'Subject: CN=ec384.example,O=libwks test' $T/out && grep -q 'Issuer:  CN=Test Intermediate CA' $T/out && grep -q 'SHA-256: [0-9A-F][0-9A-F]:' $T/out && grep -q 'Valid:   20' $T/out && grep -q 'Key:     EC P-384' $T/out"
check "list -v: fingerprint" grep -q "$(openssl x509 -in ec384.pem -noout -fingerprint -sha256 | cut -d= -f2)" "$T/out"
wks list -k s.wks -a ed25519 --json --no-storepass
check "list -a --json" [ "$(json '[e["alias"] for e in d["entries"]]')" = "['ed25519']" ]
wks list -k s.wks -a nosuch --no-storepass
expect_err 3 'not found' "list -a: no such alias"
wks list -k s.wks --json -v "${S[@]}"
expect_err 2 'exclude' "list --json -v"
wks list -k missing.wks "${S[@]}"
expect_err 6 'missing.wks: cannot open: No such file' "list: missing store"
mkdir adir.wks
wks list -k adir.wks "${S[@]}"
expect_err 6 'adir.wks: cannot read' "list: a folder"
wks list -k garbage.bin "${S[@]}"
expect_err 5 'not a WKS keystore' "list: not a keystore"
wks list -k s.wks
expect 0 "list without password and terminal"
check "list without password: note" grep -q 'wks: s.wks: note: integrity not checked' "$T/err"

# ---- verify ----------------------------------------------------------------------

wks verify -k s.wks "${S[@]}"
expect 0 "verify"
check "verify: summary" grep -q 'all 14 key entries ok' "$T/out"
wks verify -k s.wks --json -v "${S[@]}"
check "verify --json" [ "$(json 'd["ok"] and d["store_mac"]=="ok" and len(d["entries"])==16')" = True ]
wks verify -k s.wks --storepass pass:wrong-password
expect_err 4 'integrity check failed' "verify: wrong store password"
wks verify -k s.wks
expect_err 2 'no terminal' "verify without password"

# ---- keypasswd -------------------------------------------------------------------

wks list -k s.wks --json "${S[@]}"
created=$(json '[e["created_ms"] for e in d["entries"] if e["alias"]=="ec384"][0]')
python3 "$WKSDUMP" dump --password store-password-1 s.wks >before.json || true
sleep 0.01
wks keypasswd -k s.wks -a ec384 --new-keypass pass:new-key-password "${S[@]}" "${IT[@]}"
expect 0 "keypasswd"
python3 "$WKSDUMP" dump --password store-password-1 --key-password new-key-password s.wks >after.json || true
check "keypasswd: wksdump decrypts ec384 with the new password only" python3 -c '
import json
b = {e["alias"]: e for e in json.load(open("before.json"))["files"]["s.wks"]["entries"]}
a = {e["alias"]: e for e in json.load(open("after.json"))["files"]["s.wks"]["entries"]}
assert a["ec384"]["key_status"] == "ok", a["ec384"]
assert a["ec384"]["key"]["plaintext_sha256"] == b["ec384"]["key"]["plaintext_sha256"]
assert a["ec384"]["kdf_salt_hex"] != b["ec384"]["kdf_salt_hex"]
assert a["ec384"]["iv_hex"] != b["ec384"]["iv_hex"]
assert a["ec384"]["creation_time_ms"] == b["ec384"]["creation_time_ms"]
assert a["rsa2048"]["key_status"] == "integrity_failure", a["rsa2048"]["key_status"]
'
wks list -k s.wks --json "${S[@]}"
check "keypasswd keeps the creation time" [ "$(json '[e["created_ms"] for e in d["entries"] if e["alias"]=="ec384"][0]')" = "$created" ]
wks export-key -k s.wks -a ec384 --der "${S[@]}"
expect_err 4 'wrong key password' "keypasswd: old password fails"
wks export-key -k s.wks -a ec384 --der --keypass pass:new-key-password "${S[@]}"
check "keypasswd: new password works" cmp -s <(openssl pkey -inform DER -in "$T/out" -outform DER) ec384.norm
wks verify -k s.wks "${S[@]}"
expect 1 "verify: an entry with another key password"
check "verify: names the failing entry" grep -q 'ec384 (private-key): FAILED: integrity check failed' "$T/out"
check "verify: error line" grep -q 'wks: s.wks: 1 entry failed verification' "$T/err"
wks verify -k s.wks "${S[@]}" --keypass pass:new-key-password
expect 0 "verify --keypass: entries open with it or with the store password"
h=$(sha s.wks)
wks keypasswd -k s.wks -a ec384 --new-keypass pass:x-password "${S[@]}" "${IT[@]}"
expect_err 4 'wrong key password' "keypasswd: wrong old password"
wks keypasswd -k s.wks -a root --new-keypass pass:x-password "${S[@]}" "${IT[@]}"
expect_err 8 'certificate' "keypasswd: certificate entry"
wks keypasswd -k s.wks -a nosuch --new-keypass pass:x-password "${S[@]}" "${IT[@]}"
expect_err 3 'not found' "keypasswd: no such alias"
wks keypasswd -k s.wks -a ec384 --keypass pass:new-key-password "${S[@]}" "${IT[@]}"
expect_err 2 'no terminal' "keypasswd: no new password"
unchanged s.wks "$h" "keypasswd: failures"
wks keypasswd -k s.wks -a aes128 --new-keypass pass:secret-key-pass "${S[@]}" "${IT[@]}"
expect 0 "keypasswd of a secret key"
wks export-key -k s.wks -a aes128 --keypass pass:secret-key-pass "${S[@]}"
check "keypasswd secret key: same bytes" [ "$(cat "$T/out")" = "$K16" ]
wks keypasswd -k s.wks -a aes128 --keypass pass:secret-key-pass --new-keypass "$SP" "${S[@]}" "${IT[@]}"
wks keypasswd -k s.wks -a ec384 --keypass pass:new-key-password --new-keypass "$SP" "${S[@]}" "${IT[@]}"
expect 0 "keypasswd back"

# ---- rename and delete -------------------------------------------------------------

wks list -k s.wks --json "${S[@]}"
created=$(json '[e["created_ms"] for e in d["entries"] if e["alias"]=="ec256-der"][0]')
wks rename -k s.wks -a ec256-der --new-alias "ec256 renamed é" "${S[@]}" "${IT[@]}"
expect 0 "rename"
wks list -k s.wks --json "${S[@]}"
check "rename: new alias, same creation time" [ "$(json '[e["created_ms"] for e in d["entries"] if e["alias"]=="ec256 renamed é"][0]')" = "$created" ]
check "rename: old alias gone" [ "$(json '"ec256-der" in [e["alias"] for e in d["entries"]]')" = False ]
wks export-key -k s.wks -a "ec256 renamed é" --der "${S[@]}"
check "rename: key still decrypts" cmp -s <(openssl pkey -inform DER -in "$T/out" -outform DER) ec256.norm
h=$(sha s.wks)
wks rename -k s.wks -a "ec256 renamed é" --new-alias rsa2048 "${S[@]}" "${IT[@]}"
expect_err 7 'exists' "rename onto an existing alias"
wks rename -k s.wks -a nosuch --new-alias x "${S[@]}" "${IT[@]}"
expect_err 3 'not found' "rename: no such alias"
wks rename -k s.wks -a rsa2048 --new-alias rsa2048 "${S[@]}" "${IT[@]}"
expect_err 2 'same' "rename to itself"
wks rename -k s.wks -a rsa2048 "${S[@]}" "${IT[@]}"
expect_err 2 'new-alias' "rename without --new-alias"
unchanged s.wks "$h" "rename: failures"
wks rename -k s.wks -a ec256-onefile --new-alias other --force "${S[@]}" "${IT[@]}"
expect 0 "rename --force onto a certificate"
wks list -k s.wks --json -a other "${S[@]}"
check "rename --force: replaced" [ "$(json 'd["entries"][0]["type"]')" = private-key ]
wks delete -k s.wks -a other "${S[@]}" "${IT[@]}"
expect 0 "delete"
wks list -k s.wks --json "${S[@]}"
check "delete: gone" [ "$(json '"other" in [e["alias"] for e in d["entries"]]')" = False ]
h=$(sha s.wks)
wks delete -k s.wks -a other "${S[@]}" "${IT[@]}"
expect_err 3 'entry "other": not found' "delete: no such alias"
wks delete -k s.wks -a rsa2048 --storepass pass:wrong-password "${IT[@]}"
expect_err 4 'integrity check failed' "delete: wrong password"
wks delete -k s.wks -a rsa2048 "${IT[@]}"
expect_err 2 'no terminal' "delete: no password"
unchanged s.wks "$h" "delete: failures"

# ---- passwd ------------------------------------------------------------------------

cp s.wks p.wks
wks passwd -k p.wks "${S[@]}" --new-storepass pass:new-store-password "${IT[@]}"
expect 0 "passwd"
python3 "$WKSDUMP" dump --password new-store-password p.wks >passwd.json
check "passwd: wksdump verifies the new password, the keys moved with it" python3 -c '
import json
d = json.load(open("passwd.json"))["files"]["p.wks"]
assert d["store_integrity"]["verified"] is True
assert all(e.get("key_status", "ok") == "ok" for e in d["entries"]), d["entries"]'
set +e
python3 "$WKSDUMP" dump --password store-password-1 p.wks >passwd-old.json 2>/dev/null
set -e
check "passwd: old password fails in wksdump" python3 -c '
import json
d = json.load(open("passwd-old.json"))["files"]["p.wks"]
assert d["load"]["status"] == "integrity_failure", d["load"]'
wks list -k p.wks "${S[@]}"
expect_err 4 'integrity check failed' "passwd: old password"
h=$(sha p.wks)
wks passwd -k p.wks --storepass pass:wrong-password --new-storepass pass:x-password "${IT[@]}"
expect_err 4 'integrity check failed' "passwd: wrong old password"
wks passwd -k p.wks --storepass pass:new-store-password "${IT[@]}"
expect_err 2 'no terminal' "passwd: no new password"
wks passwd -k p.wks --storepass pass:new-store-password --new-storepass pass: "${IT[@]}"
expect_err 2 'must not be empty' "passwd: empty new password"
unchanged p.wks "$h" "passwd: failures"

# ---- password sources ----------------------------------------------------------------

printf 'new-store-password\nsecond line\n' >pw.txt
wks list -k p.wks --storepass file:pw.txt
expect 0 "--storepass file:"
printf 'new-store-password\r\n' >pw-crlf.txt
wks list -k p.wks --storepass file:pw-crlf.txt
expect 0 "--storepass file: with CRLF"
set +e
setsid -w "$WKS_BIN" list -k p.wks --storepass fd:3 3<pw.txt >"$T/out" 2>"$T/err"
rc=$?
set -e
expect 0 "--storepass fd:3"
wks list -k p.wks --storepass stdin <pw.txt
expect 0 "--storepass stdin"
# (a store whose keys kept the old store password: passwd --store-only)
cp s.wks ps.wks
wks passwd -k ps.wks "${S[@]}" --new-storepass pass:new-store-password --store-only "${IT[@]}"
wks export-key -k ps.wks -a rsa2048 --der --storepass stdin --keypass stdin \
	< <(printf 'new-store-password\nstore-password-1\n')
expect 0 "--storepass stdin --keypass stdin: one line each"
check "two passwords from stdin" cmp -s "$T/out" rsa2048.p8
STOREPW=new-store-password wks list -k p.wks --storepass env:STOREPW
expect 0 "--storepass env:"
wks list -k p.wks --storepass file:nosuch.txt
expect_err 6 'nosuch.txt: cannot open' "--storepass file: missing"
wks list -k p.wks --storepass env:NO_SUCH_VARIABLE_WKS
expect_err 2 'NO_SUCH_VARIABLE_WKS is not set' "--storepass env: unset"
wks list -k p.wks --storepass fd:x-secret
expect_err 2 'fd:N needs a descriptor number' "--storepass fd: bad"
check "--storepass fd: bad: the value is not echoed" not grep -q x-secret "$T/err"

# The prompt: on a pseudo-terminal, without echo, a new password twice.
cat >pty.py <<'EOF'
import os, sys, subprocess, termios, fcntl, time, select
master, slave = os.openpty()
def child():
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave,
                     preexec_fn=child, close_fds=True)
os.close(slave)
seen = b""
everything = b""
def read_until(token, timeout=20):
    global seen, everything
    end = time.time() + timeout
    while token not in seen and time.time() < end:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            everything += chunk
    return token in seen
for answer in os.environ["ANSWERS"].split(","):
    if not read_until(b".wks: "):
        print("no prompt; saw %r" % seen); p.kill(); sys.exit(3)
    seen = b""  # the next prompt must come after this answer
    os.write(master, answer.encode() + b"\n")
rc = p.wait(timeout=60)
try:
    while True:
        r, _, _ = select.select([master], [], [], 0.2)
        if not r: break
        chunk = os.read(master, 4096)
        if not chunk: break
        everything += chunk
except OSError:
    pass
if b"tty-secret-pw" in everything:
    print("password echoed"); sys.exit(4)
sys.exit(rc)
EOF
set +e
ANSWERS=tty-secret-pw,tty-secret-pw python3 pty.py "$WKS_BIN" create -k tty.wks --iterations 10000 >pty.out 2>&1
rc=$?
set -e
expect 0 "prompt: new password asked twice, not echoed"
wks list -k tty.wks --storepass pass:tty-secret-pw
expect 0 "prompt: the password typed is the store password"
set +e
ANSWERS=tty-secret-pw,other-pw,a,b,c,d python3 pty.py "$WKS_BIN" create -k tty2.wks --iterations 10000 >pty.out 2>&1
rc=$?
set -e
check "prompt: mismatched passwords refused" [ "$rc" -ne 0 ] && check "prompt: no store" [ ! -e tty2.wks ]

# ---- PKCS#12 ---------------------------------------------------------------------

# export-p12 of one entry, read by openssl pkcs12.
wks export-p12 -k s.wks -a rsa2048 -o rsa2048.p12 --outpass pass:p12-password "${S[@]}" --iterations 10000
expect 0 "export-p12 -a"
check "export-p12: mode 0600" [ "$(stat -c %a rsa2048.p12)" = 600 ]
openssl pkcs12 -in rsa2048.p12 -passin pass:p12-password -info -noout >p12info.txt 2>&1
check "export-p12: MAC SHA-256, PBES2 AES-256-CBC" sh -c \
	"grep -q 'MAC: sha256' p12info.txt && grep -q 'PBES2, PBKDF2, AES-256-CBC' p12info.txt"
openssl pkcs12 -in rsa2048.p12 -passin pass:p12-password -nocerts -nodes 2>/dev/null >p12key.pem
check "export-p12: openssl reads the same key" cmp -s <(openssl pkey -in p12key.pem -outform DER) rsa2048.norm
openssl pkcs12 -in rsa2048.p12 -passin pass:p12-password -nokeys 2>/dev/null >p12certs.pem
check "export-p12: the three certificates" sh -c \
	"[ \$(grep -c 'BEGIN CERTIFICATE' p12certs.pem) = 3 ] && grep -q 'friendlyName: rsa2048' p12certs.pem"
for c in rsa2048 inter root; do
	check "export-p12: certificate $c" grep -qF "$(sed -n 2p $c.pem)" p12certs.pem
done
wks export-p12 -k s.wks -a rsa2048 -o x.p12 --outpass pass:p12-password --keypass pass:wrong-key-password "${S[@]}"
expect_err 4 'wrong key password' "export-p12: wrong key password"
check "export-p12: failure writes no file" [ ! -e x.p12 ]
wks export-p12 -k s.wks -a aes128 -o x.p12 --outpass pass:p12-password "${S[@]}" --iterations 10000
expect 0 "export-p12 of a secret key (Java's secret bag)"
check "export-p12 of a secret key: a secret bag" \
	sh -c 'openssl pkcs12 -info -nodes -in x.p12 -passin pass:p12-password 2>&1 | grep -q "Secret bag"'
rm -f x.p12
wks export-p12 -k s.wks -a rsa2048 --outpass pass:p12-password "${S[@]}"
expect 0 "export-p12 to stdout (not a terminal)"

# A PKCS#12 from openssl, chain given out of order, into the store.
cat root.pem inter.pem >ec384.cas.pem
openssl pkcs12 -export -inkey ec384.key -in ec384.pem -certfile ec384.cas.pem -name from-openssl \
	-passout pass:p12-password -out ec384.p12 2>/dev/null
wks import-p12 -k s.wks --in ec384.p12 --inpass pass:p12-password "${S[@]}" "${IT[@]}"
expect 0 "import-p12 from openssl"
wks list -k s.wks --json -a from-openssl "${S[@]}"
check "import-p12: chain leaf first" [ "$(json 'd["entries"][0]["chain_sha256"]')" = \
	"$(python3 -c 'import sys; print(sys.argv[1:])' "$(sha ec384.der)" "$(sha inter.der)" "$(sha root.der)")" ]
wks export-key -k s.wks -a from-openssl --der "${S[@]}"
check "import-p12: same PKCS#8 DER as openssl's" cmp -s "$T/out" \
	<(openssl pkcs12 -in ec384.p12 -passin pass:p12-password -nocerts -nodes 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -outform DER)
# Without a friendly name, named by -a; legacy algorithms (RC2, 3DES).
openssl pkcs12 -export -inkey ed25519.key -in ed25519.pem -certfile root.pem \
	-passout pass:p12-password -out ed.p12 2>/dev/null
wks import-p12 -k s.wks --in ed.p12 -a ed-from-p12 --inpass pass:p12-password "${S[@]}" "${IT[@]}"
expect 0 "import-p12 -a (no friendly name)"
wks export-key -k s.wks -a ed-from-p12 --der "${S[@]}"
check "import-p12 Ed25519: same key" cmp -s "$T/out" ed25519.p8
if openssl pkcs12 -export -legacy -inkey ec256.key -in ec256.pem -certfile root.pem -name legacy \
	-passout pass:p12-password -out legacy.p12 2>/dev/null; then
	wks import-p12 -k s.wks --in legacy.p12 --inpass pass:p12-password "${S[@]}" "${IT[@]}"
	expect 0 "import-p12 legacy (RC2/3DES, SHA-1)"
	wks export-key -k s.wks -a legacy --der "${S[@]}"
	check "import-p12 legacy: same key" cmp -s <(openssl pkey -inform DER -in "$T/out" -outform DER) ec256.norm
fi
h=$(sha s.wks)
wks import-p12 -k s.wks --in ec384.p12 --inpass pass:wrong-password "${S[@]}" "${IT[@]}"
expect_err 4 'integrity check failed' "import-p12: wrong password"
wks import-p12 -k s.wks --in ec384.p12 --inpass pass:p12-password "${S[@]}" "${IT[@]}"
expect_err 7 'exists' "import-p12: alias exists"
wks import-p12 -k s.wks --in garbage.bin --inpass pass:p12-password "${S[@]}" "${IT[@]}"
expect_err 5 'not a PKCS#12' "import-p12: garbage"
wks import-p12 -k s.wks --in ec384.p12 "${S[@]}" "${IT[@]}"
expect_err 2 'no terminal' "import-p12: no password"
unchanged s.wks "$h" "import-p12: failures"

# The whole store through PKCS#12 and back: same entries, secret keys
# included (as Java's secret bags).
wks export-p12 -k s.wks -o all.p12 --outpass pass:p12-password "${S[@]}" --iterations 10000
expect 0 "export-p12 of the whole store"
check "export-p12: secret keys exported too (nothing skipped)" [ "$(grep -c skipped "$T/err" || true)" -eq 0 ]
wks create -k back.wks "${S[@]}" "${IT[@]}"
wks import-p12 -k back.wks --in all.p12 --inpass pass:p12-password "${S[@]}" "${IT[@]}"
expect 0 "import-p12 of the whole store"
wks list -k s.wks --json "${S[@]}"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps([(e["alias"], e["type"], e.get("chain_sha256"), e.get("cert_sha256"), e.get("algorithm")) for e in d["entries"]]))' "$T/out" >orig.lst
wks list -k back.wks --json "${S[@]}"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps([(e["alias"], e["type"], e.get("chain_sha256"), e.get("cert_sha256"), e.get("algorithm")) for e in d["entries"]]))' "$T/out" >back.lst
check "PKCS#12 round trip: same aliases, types and certificates" cmp -s orig.lst back.lst
for a in rsa2048 rsa4096 ec384 ed25519; do
	wks export-key -k back.wks -a $a --der "${S[@]}"
	cp "$T/out" back.der
	wks export-key -k s.wks -a $a --der "${S[@]}"
	check "PKCS#12 round trip: $a same PKCS#8" cmp -s back.der "$T/out"
done
openssl pkcs12 -in all.p12 -passin pass:p12-password -nodes >all.pem 2>/dev/null
check "openssl reads the whole-store PKCS#12" [ "$(grep -c 'BEGIN PRIVATE KEY' all.pem)" -ge 8 ]

# ---- convert ---------------------------------------------------------------------

wks convert --in s.wks -o conv.p12 --inpass "$SP" --outpass pass:p12-password --iterations 10000
expect 0 "convert WKS to PKCS#12"
check "convert: openssl verifies the MAC" openssl pkcs12 -in conv.p12 -passin pass:p12-password -noout
wks convert --in conv.p12 -o conv.wks --inpass pass:p12-password --outpass pass:conv-password "${IT[@]}"
expect 0 "convert PKCS#12 to WKS"
wks list -k conv.wks --json --storepass pass:conv-password
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps([(e["alias"], e["type"], e.get("chain_sha256"), e.get("cert_sha256"), e.get("algorithm")) for e in d["entries"]]))' "$T/out" >conv.lst
check "convert round trip: same entries" cmp -s orig.lst conv.lst
wks export-key -k conv.wks -a ec256 --der --storepass pass:conv-password
check "convert round trip: key" cmp -s <(openssl pkey -inform DER -in "$T/out" -outform DER) ec256.norm
python3 "$WKSDUMP" dump --password conv-password conv.wks >conv.json
check "convert: wksdump verifies the store" python3 -c '
import json
d = json.load(open("conv.json"))["files"]["conv.wks"]
assert d["store_integrity"]["verified"] is True and d["store_integrity"]["iterations"] == 10000
assert all(e.get("key_status", "ok") == "ok" for e in d["entries"])'
h=$(sha conv.wks)
wks convert --in conv.p12 -o conv.wks --inpass pass:p12-password --outpass pass:conv-password "${IT[@]}"
expect_err 7 'exists' "convert: output exists"
unchanged conv.wks "$h" "convert: output exists"
wks convert --in conv.p12 -o conv2.wks --inpass pass:wrong-password --outpass pass:conv-password "${IT[@]}"
expect_err 4 'integrity check failed' "convert: wrong PKCS#12 password"
wks convert --in s.wks -o conv2.p12 --inpass pass:wrong-password --outpass pass:p12-password
expect_err 4 'integrity check failed' "convert: wrong WKS password"
check "convert: failures write nothing" [ ! -e conv2.wks ] && check "convert: no p12" [ ! -e conv2.p12 ]
# openssl's PKCS#12 converted in one step.
wks convert --in ec384.p12 -o ec384.wks --inpass pass:p12-password --outpass pass:conv-password "${IT[@]}"
expect 0 "convert openssl's PKCS#12"
wks verify -k ec384.wks --storepass pass:conv-password
expect 0 "verify converted store"

# ---- corrupt and unreadable stores -------------------------------------------------

cp "$SHARED/vectors/edge/corrupt-truncated-half.wks" trunc.wks
h=$(sha trunc.wks)
wks delete -k trunc.wks -a rsa-chain --storepass pass:wolfsslpassword "${IT[@]}"
expect_err 5 'trunc.wks: malformed' "delete on a truncated store"
unchanged trunc.wks "$h" "delete on a truncated store"
cp "$SHARED/vectors/edge/corrupt-store-mac-flip.wks" flip.wks
h=$(sha flip.wks)
wks import-cert -k flip.wks -a x --cert root.pem --storepass pass:wolfsslpassword "${IT[@]}"
expect_err 4 'flip.wks: integrity check failed' "import-cert on a modified store"
unchanged flip.wks "$h" "import-cert on a modified store"
cp "$SHARED/vectors/edge/corrupt-chain-count-1m.wks" limit.wks
wks list -k limit.wks --storepass pass:wolfsslpassword
expect_err 9 'limit exceeded' "list: chain count above the limit"
# Hostile work factors in input files are refused before OpenSSL runs
# them (inputs found by fuzz_import; the first byte of each selects the
# fuzzer's path and is not part of the file).
REG=$(cd "$(dirname "$0")/../../fuzz/regressions/import" && pwd)
tail -c +2 "$REG/pkcs8-pbkdf2-iterations-2147483647" >slow-key.der
wks import-key -k t.wks -a slow --key slow-key.der --chain rsa4096.pem --inpass pass:x --storepass pass:x
expect_err 9 'iteration count 2147483647 exceeds limit' "import-key: PBKDF2 iterations 2^31-1"
tail -c +2 "$REG/p12-mac-iterations-2147483647" >slow.p12
wks import-p12 -k t.wks --in slow.p12 --inpass pass:x --storepass pass:x
expect_err 9 'PKCS#12 MAC: iteration count 2147483647 exceeds limit' "import-p12: MAC iterations 2^31-1"
cp "$SHARED/vectors/edge/corrupt-enckey-flip-restamped.wks" restamped.wks
wks verify -k restamped.wks --storepass pass:wolfsslpassword
expect 1 "verify: a modified key entry"
check "verify: names the modified entry" grep -q 'ecc (private-key): FAILED' "$T/out"
cp "$SHARED/vectors/edge/keypass-differs.wks" kd.wks
wks verify -k kd.wks --storepass pass:wolfsslpassword --keypass pass:another-key-password
expect 0 "verify with --keypass"
cp "$SHARED/vectors/wolfjce/client-mldsa44.wks" mldsa.wks
wks verify -k mldsa.wks --storepass pass:wolfsslpassword
expect 0 "verify ML-DSA (not checked against the certificate)"
wks list -k mldsa.wks -v --storepass pass:wolfsslpassword
check "list -v: ML-DSA named" grep -q 'Key:     ML-DSA-44' "$T/out"
# A properties file applies (iteration count of what is written).
printf 'wolfjce.wks.iterationCount=12345\n' >wks.properties
WKS_PROPERTIES=$T/wks.properties wks create -k props.wks "${S[@]}"
python3 "$WKSDUMP" dump --password store-password-1 props.wks >props.json
check "WKS_PROPERTIES: iteration count" python3 -c '
import json
assert json.load(open("props.json"))["files"]["props.wks"]["store_integrity"]["iterations"] == 12345'

end_tests
