#!/usr/bin/env bash
# `wks printcert` against `TZ=UTC keytool -printcert` of OpenJDK 17 (issue
# 16 item 16): the same text on standard output and the same "Warning:"
# section on standard error, byte for byte, for
#   - every certificate of the system CA bundle
#     (/etc/ssl/certs/ca-certificates.crt, or $WKS_CA_BUNDLE), in one run
#     of each tool over the whole file;
#   - certificates made here with openssl for what the bundle lacks: names
#     with every keyword Java knows, OID.n.n attributes, multi-valued RDNs,
#     values Java quotes, BMP/T61/IA5/UTF-8/Universal strings, values that
#     are no string (a subject built here in DER); every extension Java
#     has a class for (with all their options), extensions it has none for,
#     empty ones, a non-critical InhibitAnyPolicy (Java: "Unparseable");
#     weak and disabled signature algorithms and keys (SHA1, MD5, RSA 512
#     and 1024, DSA 1024), RSASSA-PSS, EC, Ed25519, Ed448; one certificate
#     alone ("The certificate uses ...") and several in one file.
# docs/CLI.md lists where wks means to differ (text escaped, extensions
# Java cannot parse); none of them occurs here, so nothing is tolerated.
#
# usage: printcert.sh WKS_BINARY SHARED_DIR
#
# Without keytool 17 it prints SKIP and passes.  Four JVM starts in all.
# Prints "N passed, M failed" last; exits 1 on a failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
KEYTOOL=${WKS_KEYTOOL:-keytool}
# (The version is read whole: `| grep -q` under pipefail can fail when grep
# stops reading before keytool has written everything.)
if ! command -v "$KEYTOOL" >/dev/null 2>&1 ||
	! case $("$KEYTOOL" -J-version 2>&1 || true) in *'version "17.'*) true ;; *) false ;; esac; then
	echo "SKIP: keytool of OpenJDK 17 not found (apt-get install openjdk-17-jdk-headless)"
	echo "0 passed, 0 failed"
	exit 0
fi
start_tests printcert
export LC_ALL=C.UTF-8 TZ=UTC

# same FILE WHAT: keytool -printcert and wks printcert print the same on
# stdout and on stderr, and both succeed.  On a difference it names the
# certificates that differ ("Certificate[N]") and shows the first lines.
same() {
	local f=$1 what=$2 krc=0
	"$KEYTOOL" -printcert -file "$f" >"$f.kt" 2>"$f.kte" || krc=$?
	wks printcert --file "$f"
	cp "$T/out" "$f.wks"
	cp "$T/err" "$f.wkse"
	if [ "$krc" -eq 0 ] && [ "$rc" -eq 0 ] && cmp -s "$f.kt" "$f.wks" &&
		cmp -s "$f.kte" "$f.wkse"; then
		ok
		return
	fi
	bad "$what: keytool (exit $krc) and wks (exit $rc) differ"
	python3 - "$f.kt" "$f.wks" <<-'EOF' >&2
	import re, sys
	def split(p):
	    t = open(p, encoding='utf-8', errors='replace').read()
	    return re.split(r'(?m)^Certificate\[\d+\]:\n', t)
	a, b = split(sys.argv[1]), split(sys.argv[2])
	bad = [i for i in range(max(len(a), len(b)))
	       if i >= len(a) or i >= len(b) or a[i] != b[i]]
	print('    %d of %d certificates differ: %s' %
	      (len(bad), max(len(a) - 1, 1), bad[:20]))
	EOF
	diff "$f.kt" "$f.wks" | head -20 | sed 's/^/    /' >&2 || true
	diff "$f.kte" "$f.wkse" | head -6 | sed 's/^/    /' >&2 || true
}

# ---- the system CA bundle ------------------------------------------------

BUNDLE=${WKS_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
if [ -s "$BUNDLE" ]; then
	cp "$BUNDLE" bundle.pem
	n=$(grep -c -- '-----BEGIN CERTIFICATE-----' bundle.pem)
	check "bundle: has certificates ($n)" test "$n" -gt 0
	same bundle.pem "bundle: all $n certificates of $BUNDLE"
	# The bundle's SHA1withRSA roots: marked and warned about.
	if grep -q 'SHA1withRSA' bundle.pem.kt; then
		check "bundle: (weak) marks" grep -q '^Signature algorithm name: SHA1withRSA (weak)$' bundle.pem.wks
		check "bundle: warnings" grep -q "^The certificate #[0-9]* of $n uses the SHA1withRSA signature algorithm" bundle.pem.wkse
	fi
else
	echo "SKIP: no CA bundle at $BUNDLE"
fi

# ---- certificates for what the bundle lacks ----------------------------------

cat >ext.cnf <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
[v3]
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always,issuer:always
basicConstraints = critical,CA:true,pathlen:3
keyUsage = digitalSignature, nonRepudiation, keyEncipherment, dataEncipherment, keyAgreement, keyCertSign, cRLSign, encipherOnly, decipherOnly
extendedKeyUsage = serverAuth, clientAuth, codeSigning, emailProtection, timeStamping, OCSPSigning, ipsecEndSystem, ipsecTunnel, ipsecUser, 1.2.3.4.5, msCodeInd, ipsecIKE, nsSGC, msSGC, anyExtendedKeyUsage
subjectAltName = DNS:a.example, email:a@example.com, URI:http://x.example/a?b=c, IP:192.0.2.1, IP:2001:db8::1, IP:::ffff:192.0.2.2, RID:1.2.3.4, dirName:dir_sect, otherName:1.2.3.4;UTF8:hello
issuerAltName = DNS:issuer.example, email:i@example.com
authorityInfoAccess = caIssuers;URI:http://ca.example/ca.crt, OCSP;URI:http://ocsp.example, 1.3.6.1.5.5.7.48.5;URI:http://repo.example, 1.2.3.9;DNS:other.example
subjectInfoAccess = caRepository;URI:http://repo.example/x, 1.3.6.1.5.5.7.48.3;URI:http://ts.example
crlDistributionPoints = crl1, crl2
freshestCRL = URI:http://crl.example/delta.crl
certificatePolicies = 1.2.3.4, @pol1, 2.5.29.32.0
nsCertType = client, server, email, objsign, sslCA, emailCA, objCA
nameConstraints = permitted;DNS:.example.com, permitted;IP:192.168.0.0/255.255.0.0, permitted;IP:2001:db8::/ffff:ffff::, excluded;email:bad.example, excluded;dirName:dir_sect
policyConstraints = requireExplicitPolicy:1, inhibitPolicyMapping:2
inhibitAnyPolicy = 5
policyMappings = 1.2.3.4:1.2.3.5, 1.2.3.6:1.2.3.7
1.2.3.99.1 = ASN1:NULL
1.2.3.99.2 = ASN1:OCTETSTRING:
1.2.3.99.3 = ASN1:UTF8:a value longer than sixteen bytes, to wrap the dump
tlsfeature = status_request
noCheck = ignored
privateKeyUsagePeriod = DER:30:11:81:0f:32:30:32:36:31:32:30:31:30:30:30:30:30:30:5a
[dir_sect]
C = US
O = Dir "Org", Inc
CN = dir.example
[crl1]
fullname = URI:http://crl.example/1.crl, URI:ldap://crl.example/cn=x
reasons = keyCompromise, CACompromise, affiliationChanged, superseded, cessationOfOperation, certificateHold, privilegeWithdrawn, AACompromise
CRLissuer = dirName:dir_sect
[crl2]
relativename = rel_sect
[rel_sect]
CN = Relative CRL
[pol1]
policyIdentifier = 1.3.6.1.4.1.99.1
CPS.1 = "http://cps.example/"
userNotice.1 = @notice
[notice]
explicitText = "Explicit text here"
organization = "Org Name"
noticeNumbers = 1, 2, 3
[v3b]
basicConstraints = CA:false
inhibitAnyPolicy = critical,2
policyConstraints = requireExplicitPolicy:0
nameConstraints = excluded;DNS:x.example
EOF
cat >str.cnf <<'EOF'
[req]
distinguished_name = dn
prompt = no
string_mask = default
utf8 = yes
[dn]
CN = Ünïcödé Ω 😀 name
O = Latin Äö
OU = Ω only
L = plain@ia5
organizationIdentifier = VATXX-12345
1.2.3.4.5.6 = odd value
emailAddress = x@y.example
EOF

ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa2048.key
ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out rsa1024.key
ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:512 -out rsa512.key
ossl genpkey -algorithm RSA-PSS -pkeyopt rsa_keygen_bits:1024 -out pss.key
ossl genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:1024 -out dsa.param
ossl genpkey -paramfile dsa.param -out dsa.key
ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out ec.key
ossl genpkey -algorithm ED25519 -out ed25519.key
ossl genpkey -algorithm ED448 -out ed448.key

# cert NAME KEY SUBJECT [ARGS...]: a self-signed NAME.pem.
cert() {
	local name=$1 key=$2 subj=$3
	shift 3
	openssl req -x509 -new -key "$key" -days 30 -subj "$subj" -out "$name.pem" "$@" 2>"$name.err" ||
		sed "s/^/    openssl: /" "$name.err" >&2
	check "made $name.pem" test -s "$name.pem"
}
cert ext rsa2048.key '/DC=com/DC=example/C=US/ST=Some State/L=Town/O=Org\, "Quoted" Inc/OU=Unit+OU=Second/CN= lead space/emailAddress=e@x.example/serialNumber=123/title=Boss/dnQualifier=dq/UID=uid1/street=Main St/SN=Surname/GN=Given/initials=GI/generationQualifier=III/2.5.4.97=VATXX-1/CN=multi  space/CN=trail /CN=back\\slash/CN="already"/CN=a;b<c>d#e=f\+g' \
	-multivalue-rdn -config ext.cnf -extensions v3 -sha256
cert ext2 ec.key '/CN=Second/O=Org' -config ext.cnf -extensions v3b -sha384
# The names of str.cnf, in the string types openssl picks for them.
ossl req -x509 -new -key rsa2048.key -days 30 -config str.cnf -out names.pem
check "made names.pem" test -s names.pem
cert sha1rsa1024 rsa1024.key '/CN=SHA1 and RSA 1024' -sha1
cert md5rsa512 rsa512.key '/CN=MD5 and RSA 512' -md5
cert dsa dsa.key '/CN=DSA 1024' -sha1
cert ecsha1 ec.key '/CN=EC with SHA1' -sha1
cert pss pss.key '/CN=RSASSA-PSS 1024'
cert ed25519 ed25519.key '/CN=Ed25519'
cert ed448 ed448.key '/CN=Ed448'
# Version 1, no extensions.
ossl req -new -key rsa2048.key -subj '/CN=No extensions' -out v1.csr
ossl x509 -req -in v1.csr -signkey rsa2048.key -days 30 -out v1.pem
check "made v1.pem" test -s v1.pem

# A subject openssl cannot make: values that are no string Java reads
# (NumericString, a SEQUENCE: "#" and the DER in hex), UniversalString,
# T61String, a PrintableString already in quotes, leading spaces.  (keytool
# does not check the signature.)
python3 - v1.pem >crafted.pem <<'EOF'
import base64, re, sys
def tlv(tag, body):
    n = len(body)
    if n < 128:
        return bytes([tag, n]) + body
    b = n.to_bytes((n.bit_length() + 7) // 8, 'big')
    return bytes([tag, 0x80 | len(b)]) + b + body
def items(body):
    out, i = [], 0
    while i < len(body):
        n, j = body[i + 1], i + 2
        if n & 0x80:
            k = n & 0x7f
            n, j = int.from_bytes(body[j:j + k], 'big'), j + k
        out.append(body[i:j + n])
        i = j + n
    return out
def content(der):
    n, j = der[1], 2
    if n & 0x80:
        j = 2 + (n & 0x7f)
    return der[j:]
def oid(s):
    a = [int(x) for x in s.split('.')]
    out = bytes([a[0] * 40 + a[1]])
    for v in a[2:]:
        enc = [v & 0x7f]
        v >>= 7
        while v:
            enc.append(0x80 | (v & 0x7f))
            v >>= 7
        out += bytes(reversed(enc))
    return tlv(6, out)
def ava(o, value):
    return tlv(0x31, tlv(0x30, oid(o) + value))
pem = open(sys.argv[1]).read()
b64 = re.search(r'-----BEGIN CERTIFICATE-----(.*?)-----END', pem, re.S).group(1)
tbs, alg, sig = items(content(base64.b64decode(''.join(b64.split()))))
fields = items(content(tbs))
# The subject: the 6th field with a version, the 5th without (v1).
fields[5 if fields[0][0] == 0xa0 else 4] = tlv(0x30,
    ava('2.5.4.3', tlv(0x0c, b'plain')) +
    ava('2.5.4.5', tlv(0x12, b'12 34')) +
    ava('1.2.3.5', tlv(0x30, tlv(0x0c, b'in a sequence'))) +
    ava('2.5.4.11', tlv(0x13, b'  two leading')) +
    ava('2.5.4.7', tlv(0x1c, 'Ünï'.encode('utf-32-be'))) +
    ava('2.5.4.8', tlv(0x14, b'T61 \xe9t\xe9')) +
    ava('2.5.4.10', tlv(0x13, b'"already quoted"')))
der = tlv(0x30, tlv(0x30, b''.join(fields)) + alg + sig)
print('-----BEGIN CERTIFICATE-----')
print(base64.encodebytes(der).decode(), end='')
print('-----END CERTIFICATE-----')
EOF
check "made crafted.pem" test -s crafted.pem

cat ext.pem ext2.pem names.pem sha1rsa1024.pem md5rsa512.pem dsa.pem \
	ecsha1.pem pss.pem ed25519.pem ed448.pem v1.pem crafted.pem >several.pem
same several.pem "made certificates, several in one file"
check "several: (disabled) key" grep -q '^Subject Public Key Algorithm: 512-bit RSA key (disabled)$' several.pem.wks
check "several: Unparseable InhibitAnyPolicy" grep -q '^Unparseable InhibitAnyPolicy extension due to$' several.pem.wks
check "several: a value that is no string" grep -q 'OID.1.2.3.5=#300f0c0d696e20612073657175656e6365' several.pem.wks
# One certificate alone: "The certificate uses ...", no "#1 of 1".
same md5rsa512.pem "one certificate with weak algorithms"
check "one: warning label" grep -q '^The certificate uses the MD5withRSA signature algorithm' md5rsa512.pem.wkse

end_tests
