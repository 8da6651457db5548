#!/usr/bin/env bash
# End-to-end tests of trust stores and secret keys with wks(1):
#  - import-certs from the system CA bundle (every certificate present
#    once, aliases unique, a second run imports nothing, verify passes),
#    from PKCS#7 files (PEM and DER) and from a folder; bad PEM in a
#    bundle fails and leaves the store unchanged;
#  - secret keys in PKCS#12 both ways, with keytool as the counterpart
#    (SKIP when keytool is absent): keytool -genseckey / -importpass
#    stores import into WKS secret-key entries (algorithm, length,
#    value), and WKS secret keys export to PKCS#12 that keytool lists as
#    SecretKeyEntry and that round-trips back to WKS with the same values.
#
# usage: truststore.sh WKS_BINARY SHARED_DIR
#
# Works in a mktemp -d folder that it removes.  Prints "N passed, M
# failed" last; exits 1 on any failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
start_tests trust

expect_out() {
	if [ "$rc" -eq "$1" ] && grep -Eq -- "$2" "$T/out"; then
		ok
	else
		bad "$3: exit $rc (expected $1), stdout must match /$2/ (it is: $(head -c 300 "$T/out"))"
	fi
}

SP=pass:store-password-1
IT=(--iterations 10000)
S=(--storepass "$SP")

# pem_fps FILE...: the SHA-256 fingerprints (lowercase hex) of every PEM
# certificate of the files, one a line, sorted (duplicates kept).
pem_fps() {
	python3 - "$@" <<'EOF'
import base64, hashlib, re, sys
out = []
for f in sys.argv[1:]:
    text = open(f, encoding="latin-1").read()
    for b in re.findall(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", text, re.S):
        out.append(hashlib.sha256(base64.b64decode("".join(b.split()))).hexdigest())
print("\n".join(sorted(out)))
EOF
}
# store_json STORE: `wks list --json` of a store into $T/list.json.
store_json() {
	wks list -k "$1" "${S[@]}" --json
	cp "$T/out" "$T/list.json"
}
# json_fps: the certificate fingerprints of $T/list.json, sorted.
json_fps() {
	python3 -c 'import json,sys
e = json.load(open(sys.argv[1]))["entries"]
print("\n".join(sorted(x["cert_sha256"].replace(":", "").lower() for x in e if x["type"] == "certificate")))' "$T/list.json"
}
json_aliases() {
	python3 -c 'import json,sys
print("\n".join(x["alias"] for x in json.load(open(sys.argv[1]))["entries"]))' "$T/list.json"
}

# ---- import-certs: the system CA bundle ------------------------------------

BUNDLE=/etc/ssl/certs/ca-certificates.crt
if [ -r "$BUNDLE" ]; then
	pem_fps "$BUNDLE" >bundle.fps
	n=$(sort -u bundle.fps | wc -l)
	t0=$(date +%s%N)
	wks import-certs -k ca.wks --in "$BUNDLE" "${S[@]}" "${IT[@]}"
	t1=$(date +%s%N)
	expect_out 0 "^$n imported, 0 already present" "import-certs $BUNDLE"
	echo "import-certs of $n certificates: $(((t1 - t0) / 1000000)) ms"
	store_json ca.wks
	json_fps >store.fps
	check "every bundle certificate is in the store exactly once" \
		cmp -s store.fps <(sort -u bundle.fps)
	json_aliases >aliases
	check "aliases are unique" [ "$(sort aliases | uniq -d | wc -l)" -eq 0 ]
	check "aliases are lowercase and without spaces" \
		[ "$(grep -c '[A-Z ]' aliases || true)" -eq 0 ]
	check "a readable alias (digicert-global-root-ca)" \
		grep -qx 'digicert-global-root-ca' aliases
	h=$(sha ca.wks)
	wks import-certs -k ca.wks --in "$BUNDLE" "${S[@]}" "${IT[@]}"
	expect_out 0 "^0 imported, $n already present" "import-certs again"
	unchanged ca.wks "$h" "import-certs again (nothing to import)"
	wks verify -k ca.wks "${S[@]}"
	expect 0 "verify of the CA trust store"
	# A wrong store password: nothing is imported.
	wks import-certs -k ca.wks --in "$BUNDLE" --storepass pass:wrong "${IT[@]}"
	expect 4 "import-certs with a wrong store password"
	unchanged ca.wks "$h" "import-certs with a wrong store password"

	# The system folder (hash links, .pem links, the bundle itself): each
	# certificate once; --alias-prefix.
	if [ -d /etc/ssl/certs ]; then
		wks import-certs -k dir.wks --in /etc/ssl/certs --alias-prefix "sys:" "${S[@]}" "${IT[@]}"
		expect_out 0 "^$n imported, 0 already present \\([0-9]+ duplicates in the input ignored\\)" \
			"import-certs /etc/ssl/certs"
		store_json dir.wks
		json_fps >dir.fps
		check "the folder gives the bundle's certificates" cmp -s dir.fps store.fps
		json_aliases >aliases
		check "--alias-prefix sys: on every alias" \
			[ "$(grep -vc '^sys:' aliases || true)" -eq 0 ]
	fi

	# Bad PEM in the bundle: a clear error, the store unchanged, a
	# missing store not created.
	python3 - "$BUNDLE" bad.pem <<'EOF'
import sys
text = open(sys.argv[1], encoding="latin-1").read()
blocks = text.split("-----END CERTIFICATE-----")
# Break the base64 of the 10th certificate.
b = blocks[9]
i = b.index("-----BEGIN CERTIFICATE-----") + 40
blocks[9] = b[:i] + "!!!!" + b[i + 4:]
open(sys.argv[2], "w", encoding="latin-1").write("-----END CERTIFICATE-----".join(blocks))
EOF
	h=$(sha ca.wks)
	wks import-certs -k ca.wks --in bad.pem "${S[@]}" "${IT[@]}"
	expect_err 5 'bad.pem: bad PEM in block 10' "bad PEM in a bundle"
	unchanged ca.wks "$h" "bad PEM in a bundle"
	wks import-certs -k new.wks --in bad.pem "${S[@]}" "${IT[@]}"
	expect 5 "bad PEM into a new store"
	check "no store made from a bad bundle" [ ! -e new.wks ]
else
	echo "SKIP: $BUNDLE not found (install ca-certificates)"
fi

# ---- import-certs: PKCS#7, folders, aliases ----------------------------------

mkcert() { # mkcert FILE SUBJECT
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
		-nodes -keyout /dev/null -utf8 -subj "$2" -days 30 -out "$1" 2>/dev/null
}
mkcert a.pem "/CN=Foo Bar (Test) CA/O=Org A"
mkcert b.pem "/CN=Foo Bar (Test) CA/O=Org B"
mkcert c.pem "/O=Only An Org/C=DE"
mkcert d.pem "/C=DE"
mkcert e.pem "/CN=Ünïcödé Root ÇA Ωmega"
openssl x509 -in c.pem -outform DER -out c.der

# PKCS#7: PEM and DER.
openssl crl2pkcs7 -nocrl -certfile a.pem -certfile b.pem -certfile c.pem -out p.p7b
openssl crl2pkcs7 -nocrl -certfile a.pem -certfile b.pem -certfile c.pem -outform DER -out p.p7b.der
wks import-certs -k p7.wks --in p.p7b "${S[@]}" "${IT[@]}"
expect_out 0 "^3 imported, 0 already present" "import-certs PEM .p7b"
store_json p7.wks
json_aliases >aliases
check "aliases from CN, deduplicated, from O" \
	[ "$(sort aliases | tr '\n' ' ')" = "foo-bar-test-ca foo-bar-test-ca-2 only-an-org " ]
wks import-certs -k p7der.wks --in p.p7b.der "${S[@]}" "${IT[@]}"
expect_out 0 "^3 imported, 0 already present" "import-certs DER .p7b"
wks import-certs -k p7.wks --in p.p7b.der "${S[@]}" "${IT[@]}"
expect_out 0 "^0 imported, 3 already present" "DER .p7b into the store of the PEM one"

# A folder: PEM, DER, a non-certificate file (skipped with a note), an
# alias already taken by another certificate.
mkdir certs
cp a.pem d.pem e.pem certs/
cp c.der certs/c.crt
echo "not a certificate" >certs/README
wks create -k f.wks "${S[@]}" "${IT[@]}"
wks import-cert -k f.wks -a foo-bar-test-ca --cert b.pem "${S[@]}" "${IT[@]}"
expect 0 "import-cert b.pem"
wks import-certs -k f.wks --in certs "${S[@]}" "${IT[@]}"
expect_out 0 "^4 imported, 0 already present" "import-certs from a folder"
if grep -q 'certs/README: note: skipped: not a certificate' "$T/err"; then ok; else bad "README not named as skipped"; fi
store_json f.wks
json_aliases >aliases
d_fp=$(openssl x509 -in d.pem -outform DER | sha256sum | cut -c1-16)
check "folder aliases (taken alias, O, SHA-256 prefix, UTF-8 CN)" \
	[ "$(sort aliases | tr '\n' ' ')" = "$d_fp foo-bar-test-ca foo-bar-test-ca-2 only-an-org ünïcödé-root-ça-ωmega " ]
wks verify -k f.wks "${S[@]}"
expect 0 "verify after a folder import"

# An expired certificate is imported with a warning (openssl 3.0 cannot
# date a certificate in the past: python3-cryptography can).
if python3 -c 'import cryptography' 2>/dev/null; then
	python3 - <<'EOF'
import datetime
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
now = datetime.datetime.now(datetime.timezone.utc)
key = ec.generate_private_key(ec.SECP256R1())
subj = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Old Root")])
cert = (x509.CertificateBuilder().subject_name(subj).issuer_name(subj)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=400))
        .not_valid_after(now - datetime.timedelta(days=35))
        .sign(key, hashes.SHA256()))
open("old.pem", "wb").write(cert.public_bytes(serialization.Encoding.PEM))
EOF
	cat a.pem old.pem >withold.pem
	wks import-certs -k old.wks --in withold.pem "${S[@]}" "${IT[@]}"
	expect_err 0 'old-root.*EXPIRED' "an expired certificate warns"
	if grep -q '^2 imported' "$T/out"; then ok; else bad "the expired certificate is imported too"; fi
else
	echo "SKIP: python3-cryptography not installed (expired certificate)"
fi

# Bad input: a file that is no certificate, an empty folder.
echo "hello" >junk.txt
wks import-certs -k f.wks --in junk.txt "${S[@]}" "${IT[@]}"
expect_err 5 'no certificate found' "import-certs of a text file"
mkdir empty
wks import-certs -k f.wks --in empty "${S[@]}" "${IT[@]}"
expect_err 5 'no certificate found' "import-certs of an empty folder"
# A file over 64 MiB (sparse) is refused before it is read.
truncate -s 65M big.pem
wks import-certs -k f.wks --in big.pem "${S[@]}" "${IT[@]}"
expect_err 9 'larger than 64 MiB' "import-certs of a 65 MiB file"
rm -f big.pem
# A truncated DER certificate after a good one.
head -c 100 c.der >half.der
cat c.der half.der >two.der
wks import-certs -k f.wks --in two.der "${S[@]}" "${IT[@]}"
expect_err 5 'malformed certificate' "a truncated DER certificate"

# ---- secret keys in PKCS#12, both ways (keytool) -----------------------------

# json_field ALIAS FIELD: a field of an entry of $T/list.json.
json_field() {
	python3 -c 'import json,sys
for x in json.load(open(sys.argv[1]))["entries"]:
    if x["alias"] == sys.argv[2]: print(x.get(sys.argv[3], ""))' "$T/list.json" "$1" "$2"
}
# secret_hex STORE ALIAS: the value of a secret key (hex), in $T/out.
secret_hex() {
	wks export-key -k "$1" -a "$2" "${S[@]}"
	tr -d '\n' <"$T/out"
}

if ! command -v keytool >/dev/null 2>&1; then
	echo "SKIP: keytool not installed (PKCS#12 secret keys with Java)"
else
	KP=changeit-1
	P12=(-storetype PKCS12 -keystore java.p12 -storepass "$KP")
	# Java's secret keys (and one key pair, so that the file is mixed).
	KT -genseckey -alias aes256 -keyalg AES -keysize 256 "${P12[@]}" >/dev/null 2>&1
	KT -genseckey -alias hmac -keyalg HmacSHA256 -keysize 256 "${P12[@]}" >/dev/null 2>&1
	printf 'secret-pw-1\nsecret-pw-1\n' |
		KT -importpass -alias pw "${P12[@]}" >/dev/null 2>&1
	KT -genkeypair -alias eckey -keyalg EC -groupname secp256r1 \
		-dname CN=eckey -validity 30 "${P12[@]}" >/dev/null 2>&1
	check "keytool made java.p12" [ -s java.p12 ]

	# PKCS#12 -> WKS: import-p12 and convert.
	wks create -k j.wks "${S[@]}" "${IT[@]}"
	wks import-p12 -k j.wks --in java.p12 --inpass "pass:$KP" "${S[@]}" "${IT[@]}"
	expect 0 "import-p12 of keytool's secret keys"
	if grep -q 'skipped' "$T/err"; then bad "import-p12 skipped something"; else ok; fi
	store_json j.wks
	check "aes256 is a secret key (AES)" \
		[ "$(json_field aes256 type) $(json_field aes256 algorithm)" = "secret-key AES" ]
	check "hmac is a secret key (HmacSHA256)" \
		[ "$(json_field hmac type) $(json_field hmac algorithm)" = "secret-key HmacSHA256" ]
	check "pw (-importpass) is a secret key (PBEWithMD5AndDES)" \
		[ "$(json_field pw type) $(json_field pw algorithm)" = "secret-key PBEWithMD5AndDES" ]
	check "eckey is a private key" [ "$(json_field eckey type)" = "private-key" ]
	check "aes256 holds 32 bytes" [ "$(secret_hex j.wks aes256 | wc -c)" -eq 64 ]
	check "hmac holds 32 bytes" [ "$(secret_hex j.wks hmac | wc -c)" -eq 64 ]
	check "pw holds the -importpass password" \
		[ "$(secret_hex j.wks pw)" = "$(printf secret-pw-1 | od -An -tx1 | tr -d ' \n')" ]
	aes_java=$(secret_hex j.wks aes256)
	wks import-p12 -k j.wks --in java.p12 -a hmac --inpass "pass:$KP" "${S[@]}" "${IT[@]}"
	expect_err 7 '"hmac" exists' "import-p12 -a hmac over the entry"
	wks convert --in java.p12 -o jc.wks --inpass "pass:$KP" --outpass "$SP" "${IT[@]}"
	expect 0 "convert keytool's PKCS#12 to WKS"
	check "convert keeps the AES key" [ "$(secret_hex jc.wks aes256)" = "$aes_java" ]
	wks verify -k jc.wks "${S[@]}"
	expect 0 "verify the converted store"

	# WKS -> PKCS#12: keys whose values the test knows, a key pair, a
	# trusted certificate, and a key PKCS#12 cannot hold (named).
	AES=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
	MAC=$(printf 'ab%.0s' $(seq 32))
	wks create -k w.wks "${S[@]}" "${IT[@]}"
	wks import-secret -k w.wks -a aes1 --hex "pass:$AES" "${S[@]}" "${IT[@]}"
	wks import-secret -k w.wks -a mac1 --hex "pass:$MAC" --algorithm HmacSHA256 "${S[@]}" "${IT[@]}"
	wks import-secret -k w.wks -a chacha --hex "pass:$AES" --algorithm ChaCha20 "${S[@]}" "${IT[@]}"
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
		-nodes -keyout k.key -subj "/CN=wks key" -days 30 -out k.pem 2>/dev/null
	wks import-key -k w.wks -a key1 --key k.key --chain k.pem "${S[@]}" "${IT[@]}"
	wks import-cert -k w.wks -a ca1 --cert a.pem "${S[@]}" "${IT[@]}"
	wks export-p12 -k w.wks -o w.p12 --outpass "pass:$KP" "${S[@]}" "${IT[@]}"
	expect_err 0 '"chacha" skipped: algorithm "ChaCha20" has no OID' \
		"export-p12 names the secret key it cannot export"
	KT -list -v -storetype PKCS12 -keystore w.p12 -storepass "$KP" >kt.txt 2>&1 || true
	entry_type() { # entry_type ALIAS: keytool's "Entry type" of an alias
		awk -v a="$1" '/^Alias name: /{cur=$3} /^Entry type: /{if (cur==a) print $3}' kt.txt
	}
	check "keytool: aes1 is a SecretKeyEntry" [ "$(entry_type aes1)" = SecretKeyEntry ]
	check "keytool: mac1 is a SecretKeyEntry" [ "$(entry_type mac1)" = SecretKeyEntry ]
	check "keytool: key1 is a PrivateKeyEntry" [ "$(entry_type key1)" = PrivateKeyEntry ]
	check "keytool: ca1 is a trustedCertEntry" [ "$(entry_type ca1)" = trustedCertEntry ]
	check "keytool: 4 entries" grep -q 'Your keystore contains 4 entries' kt.txt
	# Java reads the values back (the single-file source launcher).
	if command -v java >/dev/null 2>&1; then
		cat >Dump.java <<'JEOF'
import java.io.*; import java.security.*; import java.util.*;
public class Dump { public static void main(String[] a) throws Exception {
 KeyStore ks = KeyStore.getInstance("PKCS12");
 try (InputStream in = new FileInputStream(a[0])) { ks.load(in, a[1].toCharArray()); }
 for (String s : Collections.list(ks.aliases())) if (ks.isKeyEntry(s)) {
  Key k = ks.getKey(s, a[1].toCharArray());
  if (k instanceof javax.crypto.SecretKey) System.out.println(s + " " + k.getAlgorithm() + " " + HexFormat.of().formatHex(k.getEncoded())); } } }
JEOF
		java Dump.java w.p12 "$KP" >dump.txt 2>&1 || true
		check "Java reads aes1 (AES) with its value" grep -qx "aes1 AES $AES" dump.txt
		check "Java reads mac1 (HmacSHA256) with its value" grep -qx "mac1 HmacSHA256 $MAC" dump.txt
	fi
	# And back to WKS: the same values.
	wks convert --in w.p12 -o back.wks --inpass "pass:$KP" --outpass "$SP" "${IT[@]}"
	expect 0 "convert the exported PKCS#12 back to WKS"
	check "round trip keeps aes1" [ "$(secret_hex back.wks aes1)" = "$AES" ]
	check "round trip keeps mac1" [ "$(secret_hex back.wks mac1)" = "$MAC" ]
	store_json back.wks
	check "round trip keeps mac1's algorithm" [ "$(json_field mac1 algorithm)" = HmacSHA256 ]
	# convert WKS -> PKCS#12 too, and export-p12 -a of a secret key.
	wks convert --in w.wks -o wc.p12 --inpass "$SP" --outpass "pass:$KP" "${IT[@]}"
	expect_err 0 '"chacha" skipped' "convert WKS to PKCS#12 with secret keys"
	wks import-p12 -k w.wks --in wc.p12 --inpass "pass:$KP" -a aes1 --force "${S[@]}" "${IT[@]}"
	expect 0 "import-p12 -a aes1 from the converted PKCS#12"
	check "import-p12 -a keeps aes1" [ "$(secret_hex w.wks aes1)" = "$AES" ]
	wks export-p12 -k w.wks -a mac1 -o one.p12 --outpass "pass:$KP" "${S[@]}" "${IT[@]}"
	expect 0 "export-p12 -a mac1"
	wks export-p12 -k w.wks -a chacha -o bad.p12 --outpass "pass:$KP" "${S[@]}" "${IT[@]}"
	expect_err 8 'ChaCha20" has no OID' "export-p12 -a of a key PKCS#12 cannot hold"
	check "no file for a refused export" [ ! -e bad.p12 ]
fi

end_tests
