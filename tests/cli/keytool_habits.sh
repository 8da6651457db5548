#!/usr/bin/env bash
# End-to-end tests of wks(1) for keytool users (issue 11 items 5-8):
# richer listings (list -v, list --json against openssl's view of the same
# certificates; expired and not-yet-valid certificates), per-key passwords
# (--keypass-for, passwd --keys, mixed key passwords through export-p12,
# convert and verify), keys Java cannot load (--strict-java), and habits
# (keytool-style single-dash options, import messages, empty passwords,
# plain-word errors, chain errors naming the file and the link).
#
# usage: keytool_habits.sh WKS_BINARY SHARED_DIR
#
# Works in a mktemp -d folder that it removes.  Every command runs in a new
# session without a controlling terminal (setsid).  Prints "N passed, M
# failed" last; exits 1 on any failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
start_tests habits

# field LABEL: the value of "LABEL" in a list -v output ($T/out), first.
field() { sed -n "s/^ *$1 *//p" "$T/out" | head -1; }

SP=pass:store-pw
S=(--storepass "$SP")
IT=(--iterations 10000)

# ---- material ---------------------------------------------------------------

ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out root.key
ossl req -x509 -new -key root.key -subj "/CN=Habits Root/O=Test" -days 100 \
	-addext "basicConstraints=critical,CA:TRUE" -out root.pem
ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out inter.key
ossl req -new -key inter.key -subj "/CN=Habits Inter" -out inter.csr
printf 'basicConstraints=critical,CA:TRUE\n' >ca.ext
ossl x509 -req -in inter.csr -CA root.pem -CAkey root.key -CAcreateserial \
	-days 50 -extfile ca.ext -out inter.pem
ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out leaf.key
ossl req -new -key leaf.key -subj "/CN=leaf.example/O=Habits" -out leaf.csr
cat >leaf.ext <<'EOF'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=DNS:leaf.example,DNS:www.leaf.example,IP:10.0.0.1
EOF
ossl x509 -req -in leaf.csr -CA root.pem -CAkey root.key -CAcreateserial \
	-days 30 -extfile leaf.ext -out leaf.pem
# A leaf under the intermediate, and an unrelated root.
ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out leaf2.key
ossl req -new -key leaf2.key -subj "/CN=leaf2" -out leaf2.csr
ossl x509 -req -in leaf2.csr -CA inter.pem -CAkey inter.key \
	-CAcreateserial -days 30 -out leaf2.pem
ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out other.key
ossl req -x509 -new -key other.key -subj "/CN=Other Root" -days 30 -out other.pem
# Expired and not yet valid certificates (openssl 3.0 cannot set dates in
# the past: python3-cryptography can).
python3 - <<'EOF'
import datetime
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

now = datetime.datetime.now(datetime.timezone.utc)
for name, start, end in (("expired", now - datetime.timedelta(days=400),
                          now - datetime.timedelta(days=35)),
                         ("notyet", now + datetime.timedelta(days=10),
                          now + datetime.timedelta(days=400))):
    key = ec.generate_private_key(ec.SECP256R1())
    subj = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (x509.CertificateBuilder().subject_name(subj).issuer_name(subj)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .sign(key, hashes.SHA256()))
    open(name + ".pem", "wb").write(cert.public_bytes(serialization.Encoding.PEM))
    open(name + ".key", "wb").write(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
EOF
ossl genpkey -algorithm ED25519 -out ed.key
ossl req -x509 -new -key ed.key -subj "/CN=ed" -days 30 -out ed.pem
ossl pkcs12 -export -inkey ed.key -in ed.pem -name edkey \
	-passout pass:p12pw -out ed.p12
ossl pkcs12 -export -inkey expired.key -in expired.pem -name old \
	-passout pass:p12pw -out expired.p12
ossl pkcs8 -topk8 -in leaf.key -passout pass:right -out leaf.enc.pem
check "material" [ -s leaf.pem -a -s leaf2.pem -a -s expired.pem -a -s ed.p12 -a -s leaf.enc.pem ]

wks create -k s.wks "${S[@]}" "${IT[@]}"
expect 0 "create"

# ---- 8: imports say what they did --------------------------------------------

wks import-key -k s.wks -a leaf --key leaf.key --chain leaf.pem --chain root.pem "${S[@]}" "${IT[@]}"
expect 0 "import-key"
check "import-key: says what it did" grep -qx 'Imported private key entry "leaf" with a chain of 2' "$T/out"
wks import-cert -k s.wks -a root --cert root.pem "${S[@]}" "${IT[@]}"
expect 0 "import-cert"
check "import-cert: says what it did" grep -qx 'Imported certificate entry "root"' "$T/out"
wks import-secret -k s.wks -a sec --generate aes-256 "${S[@]}" "${IT[@]}"
check "import-secret: says what it did" grep -qx 'Imported secret key entry "sec" (AES)' "$T/out"

# ---- 5: list -v against openssl x509 ------------------------------------------

wks list -k s.wks -a leaf -v "${S[@]}"
expect 0 "list -v"
sn=$(ossl x509 -in leaf.pem -noout -serial | sed 's/^serial=//')
check "list -v: serial" [ "$(field Serial:)" = "$sn" ]
fp1=$(ossl x509 -in leaf.pem -noout -fingerprint -sha1 | sed 's/^.*=//')
check "list -v: SHA-1" [ "$(field SHA-1:)" = "$fp1" ]
fp256=$(ossl x509 -in leaf.pem -noout -fingerprint -sha256 | sed 's/^.*=//')
check "list -v: SHA-256" [ "$(field SHA-256:)" = "$fp256" ]
sig=$(ossl x509 -in leaf.pem -noout -text | sed -n 's/^ *Signature Algorithm: //p' | head -1)
check "list -v: signature algorithm" [ "$(field SigAlg:)" = "$sig" ]
san=$(ossl x509 -in leaf.pem -noout -ext subjectAltName | sed -n '2s/^ *//p')
check "list -v: SubjectAltName" [ "$(field SAN:)" = "$san" ]
ku=$(ossl x509 -in leaf.pem -noout -ext keyUsage | sed -n '2s/^ *//p')
check "list -v: key usage (critical)" [ "$(field KeyUse:)" = "$ku (critical)" ]
eku=$(ossl x509 -in leaf.pem -noout -ext extendedKeyUsage | sed -n '2s/^ *//p')
check "list -v: extended key usage" [ "$(field ExtUse:)" = "$eku" ]
check "list -v: basic constraints" [ "$(field Basic:)" = "CA:FALSE" ]
check "list -v: status valid" [ "$(field Status:)" = "valid" ]

# ---- 5: list --json against openssl ---------------------------------------------

wks list -k s.wks --json "${S[@]}"
expect 0 "list --json"
check "list --json: old fields kept" [ "$(json '[sorted(e) for e in d["entries"] if e["alias"] == "leaf"][0]')" = \
	"['alias', 'certificates', 'chain_sha256', 'created_ms', 'type']" ]
cat >cmp.py <<'EOF'
import datetime, json, subprocess, sys
d = json.load(open(sys.argv[1]))
e = {x["alias"]: x for x in d["entries"]}
def ossl(f, *a):
    return subprocess.run(["openssl", "x509", "-in", f, "-noout"] + list(a),
                          capture_output=True, text=True, check=True).stdout.strip()
def when(s):
    t = datetime.datetime.strptime(s.split("=", 1)[1], "%b %d %H:%M:%S %Y GMT")
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")
bad = []
for alias, files in (("leaf", ["leaf.pem", "root.pem"]), ("root", ["root.pem"])):
    certs = e[alias]["certificates"]
    if len(certs) != len(files):
        bad.append("%s: %d certificates" % (alias, len(certs)))
        continue
    for c, f in zip(certs, files):
        want = {
            "subject": ossl(f, "-subject", "-nameopt", "RFC2253").split("=", 1)[1],
            "issuer": ossl(f, "-issuer", "-nameopt", "RFC2253").split("=", 1)[1],
            "serial": ossl(f, "-serial").split("=", 1)[1],
            "not_before": when(ossl(f, "-startdate")),
            "not_after": when(ossl(f, "-enddate")),
            "sha1": ossl(f, "-fingerprint", "-sha1").split("=", 1)[1],
            "status": "valid",
        }
        for k, v in want.items():
            if c.get(k) != v:
                bad.append("%s %s: %s %r, expected %r" % (alias, f, k, c.get(k), v))
if (e["leaf"]["certificates"][0]["key_algorithm"], e["leaf"]["certificates"][0]["key_size"]) != ("RSA", 2048):
    bad.append("leaf key: %r" % e["leaf"]["certificates"][0])
if (e["root"]["certificates"][0]["key_algorithm"], e["root"]["certificates"][0]["key_size"],
        e["root"]["certificates"][0].get("key_curve")) != ("EC", 256, "P-256"):
    bad.append("root key: %r" % e["root"]["certificates"][0])
if "certificates" in e["sec"]:
    bad.append("secret key has certificates")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
check "list --json: subject, issuer, serial, dates, key as openssl says" python3 cmp.py "$T/out"

# ---- 5: expired and not yet valid -----------------------------------------------

wks import-cert -k s.wks -a old --cert expired.pem "${S[@]}" "${IT[@]}"
expect_err 0 'warning: certificate "CN=expired" EXPIRED on [0-9-]+T' "import-cert: expired warns"
wks list -k s.wks -a old -v "${S[@]}"
check "list -v: EXPIRED" [ "$(field Status:)" = "EXPIRED" ]
wks list -k s.wks -a old --json "${S[@]}"
check "list --json: expired" [ "$(json 'd["entries"][0]["certificates"][0]["status"]')" = expired ]
wks import-key -k s.wks -a future --key notyet.key --chain notyet.pem "${S[@]}" "${IT[@]}"
expect_err 0 'warning: entry "future": certificate "CN=notyet" is NOT YET VALID' "import-key: not yet valid warns"
wks list -k s.wks -a future -v "${S[@]}"
check "list -v: NOT YET VALID" [ "$(field Status:)" = "NOT YET VALID" ]
wks import-p12 -k s.wks --in expired.p12 --inpass pass:p12pw -a old2 "${S[@]}" "${IT[@]}"
expect_err 0 'warning: entry "old2": certificate "CN=expired" EXPIRED on' "import-p12: expired warns"
check "import-p12: says what it did" grep -qx 'imported: "old2" (private key, 1 certificate)' "$T/out"

# ---- 6: mixed key passwords ---------------------------------------------------------

wks create -k m.wks "${S[@]}" "${IT[@]}"
wks import-key -k m.wks -a k1 --key root.key --chain root.pem "${S[@]}" "${IT[@]}"
wks import-key -k m.wks -a k2 --key leaf.key --chain leaf.pem --keypass pass:key2-pw "${S[@]}" "${IT[@]}"
expect 0 "material: a key with its own password"
h=$(sha m.wks)
wks export-key -k m.wks -a k2 "${S[@]}"
expect_err 4 'entry "k2": integrity check failed: wrong key password.*--keypass-for k2=SRC' "export-key: names the alias and the option"
wks export-key -k m.wks -a k2 --der --keypass-for k2=pass:key2-pw "${S[@]}"
expect 0 "export-key --keypass-for"
check "export-key --keypass-for: the key" cmp -s "$T/out" <(sed '1d;$d' leaf.key | base64 -d)
wks export-key -k m.wks -a k2 --der --keypass-for k2=pass:key2-pw --no-storepass
expect_err 0 'integrity not checked' "export-key --no-storepass --keypass-for"
check "export-key --no-storepass --keypass-for: the key" cmp -s "$T/out" <(sed '1d;$d' leaf.key | base64 -d)
wks export-key -k m.wks -a k2 --keypass-for k2=pass:wrong "${S[@]}"
expect_err 4 'entry "k2": integrity check failed: wrong key password \(--keypass-for\)' "export-key: wrong --keypass-for"
wks export-p12 -k m.wks -o m.p12 --outpass pass:out-pw "${S[@]}" "${IT[@]}"
expect_err 4 'entry "k2".*--keypass-for k2=SRC' "export-p12: mixed passwords need --keypass-for"
check "export-p12: no file on failure" [ ! -e m.p12 ]
wks export-p12 -k m.wks -o m.p12 --outpass pass:out-pw --keypass-for k2=pass:key2-pw "${S[@]}" "${IT[@]}"
expect 0 "export-p12 --keypass-for"
check "export-p12: both keys, one password" [ "$(ossl pkcs12 -in m.p12 -passin pass:out-pw -nodes | grep -c 'BEGIN PRIVATE KEY')" -eq 2 ]
wks convert --in m.wks -o c.p12 --inpass "$SP" --outpass pass:out-pw --keypass-for k2=pass:key2-pw "${IT[@]}"
expect 0 "convert --keypass-for"
check "convert: both keys" [ "$(ossl pkcs12 -in c.p12 -passin pass:out-pw -nodes | grep -c 'BEGIN PRIVATE KEY')" -eq 2 ]
wks export-p12 -k m.wks -o m3.p12 --outpass pass:out-pw --keypass pass:key2-pw "${S[@]}" "${IT[@]}"
expect 0 "export-p12 --keypass: the other keys open with the store password"
check "export-p12 --keypass: both keys" [ "$(ossl pkcs12 -in m3.p12 -passin pass:out-pw -nodes | grep -c 'BEGIN PRIVATE KEY')" -eq 2 ]
wks export-p12 -k m.wks -a k1 -o m4.p12 --outpass pass:out-pw --keypass pass:key2-pw "${S[@]}" "${IT[@]}"
expect_err 4 'entry "k1": integrity check failed' "export-p12 -a: --keypass is obeyed alone"
wks convert --in m.wks -o c2.p12 --inpass "$SP" --outpass pass:out-pw "${IT[@]}"
expect_err 4 'entry "k2".*--keypass-for' "convert: names the alias"
wks verify -k m.wks "${S[@]}"
expect 1 "verify: k2 fails without its password"
check "verify: names the option" grep -q 'k2 (private-key): FAILED: .*--keypass-for k2=SRC' "$T/out"
wks verify -k m.wks --keypass-for k2=pass:key2-pw "${S[@]}"
expect 0 "verify --keypass-for"
wks export-key -k m.wks -a k1 --keypass-for "=x=pass:p" "${S[@]}"
expect 0 "--keypass-for: an alias holding '=' parses"
wks export-key -k m.wks -a k1 --keypass-for k1 "${S[@]}"
expect_err 2 'expected ALIAS=SRC' "--keypass-for without SRC"
unchanged m.wks "$h" "mixed passwords: store untouched"
# With a terminal (script(1) gives one) the key's password is asked for,
# naming the alias.
if command -v script >/dev/null 2>&1; then
	set +e
	# The answer goes in once the prompt is shown (the prompt flushes
	# what was typed ahead), and the input stays open until the key
	# is written (slow under valgrind).
	(for _ in $(seq 600); do
		grep -q 'Key password for' prompt.txt 2>/dev/null && break
		sleep 0.2
	done
	printf 'key2-pw\n'
	for _ in $(seq 600); do
		[ -s prompted.pem ] && break
		sleep 0.2
	done) | timeout 300 script -qec \
		"'$WKS_BIN' export-key -k m.wks -a k2 --storepass $SP -o prompted.pem" \
		/dev/null >prompt.txt 2>&1
	rc=$?
	set -e
	expect 0 "export-key: the key password asked on the terminal"
	check "export-key: the prompt names the alias" grep -q 'Key password for "k2"' prompt.txt
	check "export-key: the prompted key" cmp -s <(sed '1d;$d' prompted.pem | base64 -d) <(sed '1d;$d' leaf.key | base64 -d)
else
	echo "SKIP: script(1) missing: the key password prompt is not tested"
fi

# passwd: --store-only, --keys (the default now)
cp m.wks m2.wks
wks passwd -k m.wks "${S[@]}" --new-storepass pass:new-store-pw --store-only "${IT[@]}"
expect 0 "passwd --store-only"
check "passwd --store-only: says the keys keep their passwords" grep -q 'store-only); the key entries keep their passwords' "$T/out"
wks export-key -k m.wks -a k1 --storepass pass:new-store-pw --keypass "$SP"
expect 0 "passwd --store-only: k1 kept the old password"
wks passwd -k m2.wks "${S[@]}" --new-storepass pass:new-store-pw --keys "${IT[@]}"
expect 0 "passwd --keys"
check "passwd --keys: says how many" grep -q '1 of 2 key entries had the old store password as key password and now' "$T/out"
wks export-key -k m2.wks -a k1 --storepass pass:new-store-pw
expect 0 "passwd --keys: k1 opens with the new store password"
wks export-key -k m2.wks -a k2 --storepass pass:new-store-pw --keypass-for k2=pass:key2-pw
expect 0 "passwd --keys: k2 kept its own password"

# ---- 7: keys Java cannot load ----------------------------------------------------------

h=$(sha s.wks)
wks import-key -k s.wks -a ed --key ed.key --chain ed.pem --strict-java "${S[@]}" "${IT[@]}"
expect_err 8 'entry "ed": wolfJCE cannot load ED25519 private keys.*--strict-java' "import-key --strict-java: Ed25519 refused"
unchanged s.wks "$h" "import-key --strict-java"
wks import-p12 -k s.wks --in ed.p12 --inpass pass:p12pw --strict-java "${S[@]}" "${IT[@]}"
expect_err 8 'wolfJCE cannot load ED25519' "import-p12 --strict-java: Ed25519 refused"
unchanged s.wks "$h" "import-p12 --strict-java"
wks convert --in ed.p12 --inpass pass:p12pw -o ed.wks --outpass "$SP" --strict-java "${IT[@]}"
expect_err 8 'wolfJCE cannot load ED25519' "convert --strict-java: Ed25519 refused"
check "convert --strict-java: no output" [ ! -e ed.wks ]
wks import-key -k s.wks -a ed --key ed.key --chain ed.pem "${S[@]}" "${IT[@]}"
expect_err 0 'warning: entry "ed": wolfJCE cannot load ED25519 private keys.*Java will not read it' "import-key: Ed25519 warns"
h=$(sha s.wks)
wks import-key -k s.wks -a "" --key leaf.key --chain leaf.pem --strict-java "${S[@]}" "${IT[@]}"
expect_err 8 'empty alias.*getKey\(""\)' "import-key --strict-java: empty alias refused"
unchanged s.wks "$h" "import-key --strict-java: empty alias"
wks import-key -k s.wks -a "" --key leaf.key --chain leaf.pem "${S[@]}" "${IT[@]}"
expect_err 0 'warning: a key entry under the empty alias' "import-key: empty alias warns"
wks import-key -k s.wks -a ec --key root.key --chain root.pem --strict-java "${S[@]}" "${IT[@]}"
expect 0 "import-key --strict-java: EC accepted"
check "import-key --strict-java: EC without warning" [ ! -s "$T/err" ]

# ---- 8: keytool-style options ----------------------------------------------------------

wks list -keystore s.wks -storepass "$SP"
expect_err 2 'list: -keystore is a keytool-style option; did you mean --keystore\?' "-keystore"
wks list -k s.wks -storepass "$SP"
expect_err 2 'did you mean --storepass\?' "-storepass"
wks import-cert -k s.wks -alias x -file root.pem "${S[@]}"
expect_err 2 'did you mean --alias\?' "-alias"
wks import-cert -k s.wks -a x -file root.pem "${S[@]}"
expect_err 2 'import-cert: -file is a keytool-style option; did you mean --cert\?' "import-cert -file"
wks export-cert -k s.wks -a root -file x.pem "${S[@]}"
expect_err 2 'did you mean --out\?' "export-cert -file"
wks passwd -k s.wks -new pass:x "${S[@]}"
expect_err 2 'did you mean --new-storepass\?' "passwd -new"
wks list -k s.wks -storetype jks "${S[@]}"
expect_err 2 'magic number' "-storetype"

# ---- 8: empty passwords ----------------------------------------------------------------

wks list -k s.wks --storepass pass:
expect_err 2 '--storepass: the password is empty.*--no-storepass' "list: empty pass: is an error"
EMPTYPW= wks list -k s.wks --storepass env:EMPTYPW
expect_err 2 'the password is empty' "list: empty variable is an error"
: >empty.txt
wks list -k s.wks --storepass file:empty.txt
expect_err 2 'the password is empty' "list: empty file is an error"
wks export-cert -k s.wks -a root --storepass pass:
expect_err 2 'the password is empty' "export-cert: empty password is an error"
wks list -k s.wks --no-storepass
expect_err 0 'integrity not checked' "list --no-storepass still skips the check, as asked"
wks export-key -k s.wks -a leaf "${S[@]}" --keypass pass:
expect_err 2 'must not be empty' "export-key: empty key password"

# ---- 8: plain words ----------------------------------------------------------------------

sed '3s/./#/' leaf.key >broken.key
wks import-key -k s.wks -a b --key broken.key --chain leaf.pem "${S[@]}"
expect_err 5 'broken.key' "corrupt PEM key"
check "corrupt PEM key: no OpenSSL reason" not grep -Eqi 'asn1|wrong tag|cipherfinal|bad decrypt|decoder|error:|base64 decode' "$T/err"
head -c 200 <(ossl x509 -in root.pem -outform DER) >trunc.der
wks import-cert -k s.wks -a b --cert trunc.der "${S[@]}"
expect_err 5 'trunc.der.*(malformed|truncated)' "truncated DER certificate"
check "truncated certificate: no OpenSSL reason" not grep -Eqi 'asn1|wrong tag|header too long' "$T/err"
wks import-key -k s.wks -a b --key leaf.enc.pem --inpass pass:wrong --chain leaf.pem "${S[@]}"
expect_err 4 'cannot decrypt the private key: wrong passphrase, or the file was modified' "wrong PKCS#8 password"
check "wrong PKCS#8 password: no OpenSSL reason" not grep -Eqi 'cipherfinal|bad decrypt|asn1' "$T/err"

# ---- 8: chain errors name the file and the link ---------------------------------------------

h=$(sha s.wks)
wks import-key -k s.wks -a b --key leaf2.key --chain leaf2.pem --chain other.pem "${S[@]}"
expect_err 8 'certificate 1 \(CN=Other Root\) from other.pem is not the issuer of certificate 1 \(CN=leaf2\) from leaf2.pem' "chain error: the missing link"
cat root.pem other.pem >bundle.pem
wks import-key -k s.wks -a b --key leaf.key --chain leaf.pem --chain bundle.pem "${S[@]}"
expect_err 8 'certificate 2 \(CN=Other Root\) from bundle.pem is not part of the chain of the key: the chain already ends at the root, certificate 1 \(O=Test,CN=Habits Root\) from bundle.pem' "chain error: beyond the root"
unchanged s.wks "$h" "chain errors: store untouched"

end_tests
