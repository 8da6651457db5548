#!/usr/bin/env bash
# End-to-end tests of key pairs and requests made inside the store (issue
# 11 item 4), checked with openssl (and keytool where present):
#   genkeypair (RSA 2048/4096, EC P-256/P-384; --dname, --ext, --validity,
#   --sigalg), certreq, import-cert of a CA reply onto a key entry (leaf
#   only, full chain, PKCS#7 PEM and DER, chains completed from trusted
#   entries; replies for another key or with a missing issuer refused with
#   the store byte for byte unchanged), printcert.
#
# usage: genkey.sh WKS_BINARY SHARED_DIR
#
# Works in a mktemp -d folder that it removes.  Prints "N passed, M
# failed" last; exits 1 on any failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
start_tests genkey

# days CERT: notAfter - notBefore in days.
days() {
	local nb na
	nb=$(openssl x509 -in "$1" -noout -startdate | cut -d= -f2)
	na=$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)
	echo $(( ($(date -ud "$na" +%s) - $(date -ud "$nb" +%s)) / 86400 ))
}
# chain_count P12: certificates in a PKCS#12 file.
chain_count() {
	openssl pkcs12 -in "$1" -nokeys -passin pass:p12-pass 2>/dev/null |
		grep -c -- '-----BEGIN CERTIFICATE-----' || true
}

SP=pass:store-password-1
IT=(--iterations 10000)
S=(--storepass "$SP")

# ---- genkeypair ------------------------------------------------------------

# RSA 2048 (the default) into a store that does not exist yet: created.
wks genkeypair -k s.wks -a rsa --dname 'CN=Test\, Inc, OU=Unit, O=Org, C=US' \
	--ext san=dns:www.example.com,ip:192.0.2.7,email:admin@example.com \
	"${S[@]}" "${IT[@]}"
expect 0 "genkeypair rsa (new store)"
check "genkeypair says what it made" \
	grep -q 'Generated a 2048-bit RSA key pair.*(SHA256withRSA) valid for 90 days' "$T/out"
check "genkeypair says it created the store" grep -q 'a new store' "$T/out"
check "the new store has mode 0600" test "$(stat -c %a s.wks)" = 600
wks export-cert -k s.wks -a rsa -o rsa.pem "${S[@]}"
expect 0 "export-cert rsa"
check "rsa: subject in the order given" test \
	"$(openssl x509 -in rsa.pem -noout -subject -nameopt RFC2253)" = \
	'subject=CN=Test\, Inc,OU=Unit,O=Org,C=US'
check "rsa: self-issued" test \
	"$(openssl x509 -in rsa.pem -noout -issuer -nameopt RFC2253)" = \
	'issuer=CN=Test\, Inc,OU=Unit,O=Org,C=US'
openssl x509 -in rsa.pem -noout -text >rsa.txt
check "rsa: version 3" grep -q 'Version: 3 (0x2)' rsa.txt
check "rsa: 2048 bits" grep -q 'Public-Key: (2048 bit)' rsa.txt
check "rsa: SHA256withRSA" grep -q 'Signature Algorithm: sha256WithRSAEncryption' rsa.txt
check "rsa: SAN" grep -q 'DNS:www.example.com, IP Address:192.0.2.7, email:admin@example.com' rsa.txt
check "rsa: SubjectKeyIdentifier" grep -q 'X509v3 Subject Key Identifier' rsa.txt
check "rsa: 90 days (keytool's default)" test "$(days rsa.pem)" = 90
check "rsa: valid from now" test \
	$(( $(date -u +%s) - $(date -ud "$(openssl x509 -in rsa.pem -noout -startdate | cut -d= -f2)" +%s) )) -lt 120
check "rsa: self-signature verifies" \
	openssl verify -check_ss_sig -CAfile rsa.pem rsa.pem
serial=$(openssl x509 -in rsa.pem -noout -serial | cut -d= -f2)
check "rsa: serial positive, 64 bits at most" \
	test "${#serial}" -le 18 -a "$(openssl asn1parse -in rsa.pem | sed -n 's/.*INTEGER *:\(-\?\).*/\1/p' | head -1)" = ""

# EC P-256 (--curve), P-384 (keytool's -groupname name), RSA 4096.
wks genkeypair -k s.wks -a ec256 --keyalg EC --curve P-256 --dname 'CN=ec256' \
	--validity 30 "${S[@]}" "${IT[@]}"
expect 0 "genkeypair ec P-256"
wks genkeypair -k s.wks -a ec384 --keyalg ec --groupname secp384r1 \
	--dname 'CN=ec384,O=Org' --ext bc:critical=ca:false \
	--ext ku=digitalSignature --ext eku=serverAuth,clientAuth \
	"${S[@]}" "${IT[@]}"
expect 0 "genkeypair ec P-384"
check "P-384 output" grep -q 'Generated a 384-bit EC (P-384) key pair.*SHA384withECDSA' "$T/out"
wks genkeypair -k s.wks -a rsa4096 --keysize 4096 --dname 'CN=big' \
	--sigalg SHA512withRSA "${S[@]}" "${IT[@]}"
expect 0 "genkeypair rsa 4096"
for a in ec256 ec384 rsa4096; do
	wks export-cert -k s.wks -a "$a" -o "$a.pem" "${S[@]}"
	openssl x509 -in "$a.pem" -noout -text >"$a.txt"
	check "$a: self-signature verifies" \
		openssl verify -check_ss_sig -CAfile "$a.pem" "$a.pem"
done
check "ec256: prime256v1" grep -q 'NIST CURVE: P-256' ec256.txt
check "ec256: SHA256withECDSA" grep -q 'Signature Algorithm: ecdsa-with-SHA256' ec256.txt
check "ec256: 30 days" test "$(days ec256.pem)" = 30
check "ec384: P-384" grep -q 'NIST CURVE: P-384' ec384.txt
check "ec384: SHA384withECDSA (keytool's choice)" grep -q 'Signature Algorithm: ecdsa-with-SHA384' ec384.txt
check "ec384: basic constraints critical" grep -q 'X509v3 Basic Constraints: critical' ec384.txt
check "ec384: CA:FALSE" grep -q 'CA:FALSE' ec384.txt
check "ec384: key usage" grep -q 'Digital Signature' ec384.txt
check "ec384: extended key usage" grep -q 'TLS Web Server Authentication, TLS Web Client Authentication' ec384.txt
check "rsa4096: 4096 bits" grep -q 'Public-Key: (4096 bit)' rsa4096.txt
check "rsa4096: --sigalg SHA512withRSA" grep -q 'sha512WithRSAEncryption' rsa4096.txt
wks verify -k s.wks "${S[@]}"
expect 0 "verify after genkeypair (keys match their certificates)"

# Refusals leave the store as it was.
h=$(sha s.wks)
wks genkeypair -k s.wks -a rsa --dname CN=again "${S[@]}" "${IT[@]}"
expect_err 7 'Key pair not generated, alias "rsa" already exists' "genkeypair over an existing alias"
unchanged s.wks "$h" "genkeypair over an existing alias"
for bad_args in "--keysize 1024" "--keyalg EC --curve P-192" "--keyalg DSA" \
	"--keyalg EC --keysize 2048" "--validity 0" "--validity 2950000" "--ext foo=bar" \
	"--ext san=dns" "--ext san=ftp:x" "--ext ku=bogus" "--sigalg SHA1withRSA" \
	"--keyalg EC --sigalg SHA256withRSA"; do
	# shellcheck disable=SC2086
	wks genkeypair -k s.wks -a new1 --dname CN=x $bad_args "${S[@]}" "${IT[@]}"
	expect 2 "genkeypair $bad_args"
	unchanged s.wks "$h" "genkeypair $bad_args"
done
for dn in 'nonsense' 'CN=' 'XX=y' 'CN="open' 'CN=a+' 'C=USA'; do
	wks genkeypair -k s.wks -a new1 --dname "$dn" "${S[@]}" "${IT[@]}"
	expect 2 "genkeypair --dname '$dn'"
done
unchanged s.wks "$h" "genkeypair with bad --dname"
wks genkeypair -k s.wks -a new1 --dname CN=x --storepass pass:wrong "${IT[@]}"
expect 4 "genkeypair with a wrong store password"
unchanged s.wks "$h" "genkeypair with a wrong store password"
# The empty alias: wolfJCE never returns it (a warning; --strict-java
# refuses it).
wks genkeypair -k s.wks -a '' --keyalg EC --dname CN=x --strict-java "${S[@]}" "${IT[@]}"
expect_err 8 'empty alias.*refused' "genkeypair under the empty alias --strict-java"
unchanged s.wks "$h" "genkeypair under the empty alias --strict-java"
cp s.wks empty.wks
wks genkeypair -k empty.wks -a '' --keyalg EC --dname CN=x "${S[@]}" "${IT[@]}"
expect_err 0 'warning: a key entry under the empty alias' "genkeypair under the empty alias"
# A quoted value, a multi-valued RDN, escapes.
wks genkeypair -k s.wks -a dn --keyalg EC --dname 'CN="Quoted, Name" + UID=u1, O=A\+B, DC=example, DC=com' \
	"${S[@]}" "${IT[@]}"
expect 0 "genkeypair with quotes and a multi-valued RDN"
wks export-cert -k s.wks -a dn -o dn.pem "${S[@]}"
check "dname: RDNs in order, quotes and escapes" test \
	"$(openssl x509 -in dn.pem -noout -subject -nameopt RFC2253)" = \
	'subject=CN=Quoted\, Name+UID=u1,O=A\+B,DC=example,DC=com'

# ---- certreq ------------------------------------------------------------------

wks certreq -k s.wks -a rsa -o rsa.csr --ext san=dns:www.example.com,dns:example.com "${S[@]}"
expect 0 "certreq rsa"
check "certreq: the signature verifies" openssl req -in rsa.csr -noout -verify
check "certreq: the subject of the certificate" test \
	"$(openssl req -in rsa.csr -noout -subject -nameopt RFC2253)" = \
	'subject=CN=Test\, Inc,OU=Unit,O=Org,C=US'
openssl req -in rsa.csr -noout -text >csr.txt
check "certreq: SAN requested" grep -q 'DNS:www.example.com, DNS:example.com' csr.txt
check "certreq: SubjectKeyIdentifier requested (as keytool)" grep -q 'Subject Key Identifier' csr.txt
check "certreq: the certificate's key" test \
	"$(openssl req -in rsa.csr -noout -pubkey)" = "$(openssl x509 -in rsa.pem -noout -pubkey)"
wks certreq -k s.wks -a ec384 "${S[@]}"
expect 0 "certreq ec384 to stdout"
check "certreq to stdout is PEM" grep -q 'BEGIN CERTIFICATE REQUEST' "$T/out"
cp "$T/out" ec384.csr
check "certreq ec384 verifies" openssl req -in ec384.csr -noout -verify
check "certreq ec384: SHA384withECDSA" sh -c 'openssl req -in ec384.csr -noout -text | grep -q ecdsa-with-SHA384'
wks certreq -k s.wks -a rsa -o rsa.csr "${S[@]}"
expect_err 7 'exists' "certreq over an existing file without --force"
h=$(sha s.wks)
wks certreq -k s.wks -a rsa -o s.wks --force "${S[@]}"
expect_err 2 'itself' "certreq over the store"
unchanged s.wks "$h" "certreq over the store"
wks certreq -k s.wks -a nosuch "${S[@]}"
expect 3 "certreq for a missing alias"

# ---- a CA (openssl) and its replies ----------------------------------------

openssl req -x509 -new -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem \
	-subj '/O=Test/CN=Test Root CA' -days 365 \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign,cRLSign 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout int.key -out int.csr -subj '/O=Test/CN=Test Intermediate CA' 2>/dev/null
printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign,cRLSign\n' >ca.ext
openssl x509 -req -in int.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
	-days 365 -extfile ca.ext -out int.pem 2>/dev/null
openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout other.key -out other.pem -subj '/CN=Other CA' -days 365 2>/dev/null
printf 'subjectAltName=DNS:www.example.com\n' >leaf.ext
openssl x509 -req -in rsa.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
	-days 60 -extfile leaf.ext -out reply.pem 2>/dev/null
cat reply.pem ca.pem >reply-chain.pem
openssl crl2pkcs7 -nocrl -certfile reply.pem -certfile ca.pem -out reply.p7b
openssl crl2pkcs7 -nocrl -certfile reply.pem -certfile ca.pem -outform DER -out reply-der.p7b

# A reply whose issuer is not in the store: refused, naming the issuer.
wks export-key -k s.wks -a rsa -o rsa-key-before.pem "${S[@]}"
h=$(sha s.wks)
wks import-cert -k s.wks -a rsa --cert reply.pem "${S[@]}" "${IT[@]}"
expect_err 8 'Failed to establish chain from reply: the issuer "CN=Test Root CA,O=Test"' \
	"reply without its issuer in the store"
unchanged s.wks "$h" "reply without its issuer in the store"

wks import-cert -k s.wks -a test-root --cert ca.pem "${S[@]}" "${IT[@]}"
expect 0 "import the CA as a trusted entry"

# A reply for another key: refused, the store byte for byte unchanged.
openssl x509 -req -in ec384.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
	-days 60 -out other-reply.pem 2>/dev/null
h=$(sha s.wks)
for r in other-reply.pem other.pem; do
	wks import-cert -k s.wks -a rsa --cert "$r" "${S[@]}" "${IT[@]}"
	expect_err 8 "Public keys in reply and keystore don't match" "reply $r for another key"
	unchanged s.wks "$h" "reply $r for another key"
done
# A reply with a certificate that is not part of the chain.
cat reply.pem ca.pem other.pem >reply-extra.pem
wks import-cert -k s.wks -a rsa --cert reply-extra.pem "${S[@]}" "${IT[@]}"
expect_err 8 'not part of the chain' "reply with a stray certificate"
unchanged s.wks "$h" "reply with a stray certificate"
# The self-signed certificate itself is no reply.
wks import-cert -k s.wks -a rsa --cert rsa.pem "${S[@]}" "${IT[@]}"
expect_err 8 'identical' "the entry's own certificate as the reply"
unchanged s.wks "$h" "the entry's own certificate as the reply"

# Leaf only: the chain is completed from the trusted CA.
wks import-cert -k s.wks -a rsa --cert reply.pem "${S[@]}" "${IT[@]}"
expect 0 "reply (leaf only)"
check "reply: says what it did" grep -q 'Certificate reply installed in entry "rsa": a chain of 2 certificates' "$T/out"
wks export-p12 -k s.wks -a rsa -o rsa.p12 --outpass pass:p12-pass "${S[@]}" "${IT[@]}"
expect 0 "export-p12 after the reply"
check "openssl pkcs12 shows the 2-certificate chain" test "$(chain_count rsa.p12)" = 2
wks export-cert -k s.wks -a rsa -o chain1.pem "${S[@]}"
check "the chain is leaf, CA" test "$(openssl x509 -in chain1.pem -noout -fingerprint)" = \
	"$(openssl x509 -in reply.pem -noout -fingerprint)"
check "the chain verifies with openssl" openssl verify -CAfile ca.pem chain1.pem
wks export-key -k s.wks -a rsa -o rsa-key-after.pem "${S[@]}"
check "the key is kept, byte for byte" cmp -s rsa-key-before.pem rsa-key-after.pem
wks verify -k s.wks "${S[@]}"
expect 0 "verify after the reply"

# Full chain, PKCS#7 PEM, PKCS#7 DER: same result.
for r in reply-chain.pem reply.p7b reply-der.p7b; do
	wks import-cert -k s.wks -a rsa --cert "$r" "${S[@]}" "${IT[@]}"
	expect 0 "reply $r"
	rm -f r.p12
	wks export-p12 -k s.wks -a rsa -o r.p12 --outpass pass:p12-pass "${S[@]}" "${IT[@]}"
	check "reply $r: 2-certificate chain" test "$(chain_count r.p12)" = 2
done

# A reply through an intermediate, completed up to the trusted root; the
# key under its own password (--keypass needed to put it back).
wks genkeypair -k s.wks -a kp --keyalg EC --dname CN=kp --keypass pass:key-pass-2 "${S[@]}" "${IT[@]}"
expect 0 "genkeypair with its own key password"
wks certreq -k s.wks -a kp -o kp.csr --keypass pass:key-pass-2 "${S[@]}"
expect 0 "certreq with --keypass"
openssl x509 -req -in kp.csr -CA int.pem -CAkey int.key -CAcreateserial \
	-days 30 -out kp-reply.pem 2>/dev/null
cat kp-reply.pem int.pem >kp-chain.pem
h=$(sha s.wks)
wks import-cert -k s.wks -a kp --cert kp-reply.pem "${S[@]}" "${IT[@]}"
expect_err 8 'issuer "CN=Test Intermediate CA,O=Test"' "leaf-only reply, intermediate missing"
unchanged s.wks "$h" "leaf-only reply, intermediate missing"
wks import-cert -k s.wks -a kp --cert kp-chain.pem "${S[@]}" "${IT[@]}"
expect 4 "reply without the key password"
unchanged s.wks "$h" "reply without the key password"
wks import-cert -k s.wks -a kp --cert kp-chain.pem --keypass pass:key-pass-2 "${S[@]}" "${IT[@]}"
expect 0 "reply leaf + intermediate, root from the store"
check "chain of 3" grep -q 'a chain of 3 certificates' "$T/out"
wks verify -k s.wks "${S[@]}" --keypass pass:key-pass-2
expect 0 "verify with the key password"

# ---- printcert ------------------------------------------------------------------

for f in reply.pem ec384.pem; do
	wks printcert --file "$f"
	expect 0 "printcert $f"
	cp "$T/out" "$f.print"
	s_ossl=$(openssl x509 -in "$f" -noout -serial | cut -d= -f2 | tr A-F a-f | sed 's/^0*//')
	check "printcert $f: serial as openssl" grep -qx "Serial number: $s_ossl" "$f.print"
	f1=$(openssl x509 -in "$f" -noout -fingerprint -sha1 | cut -d= -f2)
	f2=$(openssl x509 -in "$f" -noout -fingerprint -sha256 | cut -d= -f2)
	check "printcert $f: SHA1 as openssl" grep -qx "	 SHA1: $f1" "$f.print"
	check "printcert $f: SHA256 as openssl" grep -qx "	 SHA256: $f2" "$f.print"
	check "printcert $f: version" grep -qx 'Version: 3' "$f.print"
done
check "printcert: owner" grep -qx 'Owner: CN="Test, Inc", OU=Unit, O=Org, C=US' reply.pem.print
check "printcert: issuer" grep -qx 'Issuer: CN=Test Root CA, O=Test' reply.pem.print
check "printcert: RSA key" grep -qx 'Subject Public Key Algorithm: 2048-bit RSA key' reply.pem.print
check "printcert: EC key" grep -qx 'Subject Public Key Algorithm: 384-bit EC (secp384r1) key' ec384.pem.print
check "printcert: signature algorithm" grep -qx 'Signature algorithm name: SHA384withECDSA' ec384.pem.print
check "printcert: SAN" grep -qx '  DNSName: www.example.com' reply.pem.print
check "printcert: KU" grep -qx '  DigitalSignature' ec384.pem.print
check "printcert: EKU" grep -qx '  clientAuth' ec384.pem.print
check "printcert: BC" grep -q 'BasicConstraints:\[' ec384.pem.print
check "printcert: critical" grep -q 'ObjectId: 2.5.29.19 Criticality=true' ec384.pem.print
wks printcert --file reply-der.p7b
expect 0 "printcert PKCS#7 DER"
check "printcert: two certificates numbered" sh -c "grep -q '^Certificate\[2\]:' '$T/out'"
wks printcert --file reply.p7b
expect 0 "printcert PKCS#7 PEM"
set +e
setsid -w "$WKS_BIN" printcert <ca.pem >stdin.print 2>"$T/err"
rc=$?
set -e
expect 0 "printcert from standard input"
check "printcert from stdin: owner" grep -qx 'Owner: CN=Test Root CA, O=Test' stdin.print
printf 'junk' >junk.pem
wks printcert --file junk.pem
expect 5 "printcert of junk"
wks printcert --file nosuch.pem
expect 6 "printcert of a missing file"
# Text from the file is escaped: an ESC in a name is printed as \x1b.
openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout esc.key -out esc.pem -subj "/CN=a$(printf '\033')[31mred" -days 1 2>/dev/null
wks printcert --file esc.pem
expect 0 "printcert of a name with an ESC"
check "printcert escapes control characters" sh -c "! grep -q \$'\\033' '$T/out' && grep -q 'CN=a\\\\x1b\\[31mred' '$T/out'"

# keytool side by side (optional): the same text for the same certificate,
# and the exported key entry with its 2-certificate chain.
if command -v keytool >/dev/null 2>&1; then
	keytool -J-Duser.language=en -list -v -keystore rsa.p12 -storetype PKCS12 \
		-storepass p12-pass >rsa.p12.keytool 2>&1 || true
	check "keytool -list: the key entry" grep -q 'Entry type: PrivateKeyEntry' rsa.p12.keytool
	check "keytool -list: chain of 2" grep -q 'Certificate chain length: 2' rsa.p12.keytool
	for f in reply.pem ec384.pem; do
		TZ=UTC keytool -J-Duser.language=en -printcert -file "$f" >"$f.keytool" 2>/dev/null || true
		if diff -u "$f.keytool" "$f.print" >"$f.diff"; then
			ok
		else
			bad "printcert $f differs from keytool -printcert: $(head -20 "$f.diff")"
		fi
	done
else
	echo "SKIP: keytool not installed (printcert side by side)"
fi

end_tests
