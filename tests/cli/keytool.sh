#!/usr/bin/env bash
# End-to-end tests of Java keystores in (issue 11 item 1): keytool (the
# real counterpart) makes JKS, JCEKS and PKCS12 stores with RSA and EC key
# pairs whose key passwords differ from the store password, trusted
# certificates, JCEKS secret keys (-genseckey, -importpass) and non-ASCII
# aliases; `wks convert` and `wks import-keystore` turn them into WKS
# stores, checked entry by entry against `keytool -list -rfc`: every alias
# and type, every certificate's DER, each private key by its public half
# against its certificate, secret keys by value (-importpass) or by length
# and algorithm (-genseckey).  Then hostile files (truncated at every
# length, with and without a recomputed digest; a flipped digest byte;
# counts and lengths of 0x7FFFFFFF; wrong passwords) must fail cleanly
# with a clear message; run this script with an ASan build's wks too.
#
# usage: keytool.sh WKS_BINARY SHARED_DIR
#
# Without keytool it prints SKIP and passes.  Works in a mktemp -d folder
# that it removes.  Prints "N passed, M failed" last; exits 1 on a failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
skip_without_keytool
start_tests keytool
export LC_ALL=C.UTF-8

# The first lines of the stderr of a failed check (lib.sh's bad).
show_stderr() { sed 's/^/    stderr: /' "$T/err" | head -5; }

# keytool: lib.sh's KT (JCEKS keys at 10000 PBE iterations, UTF-8).
SP=store-pass-1
I=(--iterations 10000)

# ---- the keytool stores ----------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem \
	-subj "/CN=Test Root CA" -days 30 2>/dev/null
{
	# JKS: two key pairs under one key password (not the store's), a
	# trusted certificate; non-ASCII alias.
	KT -genkeypair -keystore j.jks -storetype JKS -storepass $SP \
		-keypass key-pass-A -alias 'clé-ü' -keyalg RSA -keysize 2048 \
		-dname 'CN=rsa key' -validity 30
	KT -genkeypair -keystore j.jks -storetype JKS -storepass $SP \
		-keypass key-pass-A -alias ec-key -keyalg EC -groupname secp384r1 \
		-dname 'CN=ec key' -validity 30
	KT -importcert -noprompt -keystore j.jks -storetype JKS -storepass $SP \
		-alias 'root ca' -file ca.pem
	# JCEKS: an RSA key, an AES key (key password B), a password
	# (-importpass: its value is known) under the store password, a
	# trusted certificate.
	KT -genkeypair -keystore j.jceks -storetype JCEKS -storepass $SP \
		-keypass key-pass-B -alias rsa -keyalg RSA -keysize 2048 \
		-dname 'CN=jceks rsa' -validity 30
	KT -genseckey -keystore j.jceks -storetype JCEKS -storepass $SP \
		-keypass key-pass-B -alias 'aes-ü' -keyalg AES -keysize 256
	printf 'the-secret-42' | KT -importpass -keystore j.jceks \
		-storetype JCEKS -storepass $SP -alias pw
	KT -importcert -noprompt -keystore j.jceks -storetype JCEKS \
		-storepass $SP -alias ca -file ca.pem
	# PKCS12: an EC key pair, a trusted certificate, an AES key.
	KT -genkeypair -keystore j.p12 -storetype PKCS12 -storepass $SP \
		-alias p12-key -keyalg EC -groupname secp256r1 -dname 'CN=p12' \
		-validity 30
	KT -importcert -noprompt -keystore j.p12 -storetype PKCS12 \
		-storepass $SP -alias ca -file ca.pem
	KT -genseckey -keystore j.p12 -storetype PKCS12 -storepass $SP \
		-alias p12-aes -keyalg AES -keysize 128
	# Passwords outside ASCII (one outside the BMP: a surrogate pair in
	# Java's char[]), for the JKS digest and key protection (UTF-16BE).
	KT -genkeypair -keystore n.jks -storetype JKS -storepass 'pässwörd€𝄞' \
		-keypass 'kéy€𝄞' -alias k -keyalg EC -groupname secp256r1 \
		-dname CN=n -validity 30
	for f in j.jks j.jceks j.p12; do
		KT -list -rfc -keystore $f -storepass $SP >$f.list
	done
} >keytool.log 2>&1 || { cat keytool.log >&2; bad "keytool set-up"; }

# check_store WKS PASS LISTING [SECRETS]: the WKS store holds exactly the
# entries of keytool's -list -rfc LISTING, with the same certificates;
# private keys match their certificates; SECRETS is "alias=hex|len:N/ALG"
# lines for the secret keys.
check_store() {
	python3 - "$WKS_BIN" "$@" <<'EOF'
import base64, json, re, subprocess, sys
wks, store, pw, listing = sys.argv[1:5]
secrets = dict(l.split("=", 1) for l in sys.argv[5].split("\n") if l) \
    if len(sys.argv) > 5 else {}
def run(*a, inp=None):
    p = subprocess.run(a, input=inp, capture_output=True,
                       start_new_session=True)
    return p.returncode, p.stdout
def fail(m):
    print("FAIL: %s: %s" % (store, m))
# keytool's listing: alias -> (type, [DER ...])
want = {}
alias = None
text = open(listing, encoding="utf-8").read()
for block in re.split(r"\n(?=Alias name: )", text):
    m = re.match(r"Alias name: (.*)\n", block)
    if not m:
        continue
    t = re.search(r"Entry type: (\w+)", block).group(1)
    ders = [base64.b64decode("".join(b.split()))
            for b in re.findall(r"-----BEGIN CERTIFICATE-----(.*?)-----END",
                                block, re.S)]
    want[m.group(1)] = ({"PrivateKeyEntry": "private-key",
                         "trustedCertEntry": "certificate",
                         "SecretKeyEntry": "secret-key"}[t], ders)
rc, out = run(wks, "list", "-k", store, "--storepass", "pass:" + pw, "--json")
if rc:
    fail("list: exit %d" % rc); sys.exit(0)
got = {e["alias"]: e for e in json.loads(out)["entries"]}
if sorted(got) != sorted(want):
    fail("aliases %r, keytool has %r" % (sorted(got), sorted(want)))
else:
    print("ok")
for a, (t, ders) in sorted(want.items()):
    if a not in got:
        continue
    if got[a]["type"] != t:
        fail("%s: type %s, keytool %s" % (a, got[a]["type"], t)); continue
    print("ok")
    if t == "secret-key":
        rc, raw = run(wks, "export-key", "-k", store, "-a", a, "--storepass",
                      "pass:" + pw, "--der")
        exp = secrets.get(a, "")
        if rc:
            fail("%s: export-key exit %d" % (a, rc))
        elif exp.startswith("len:"):
            n, alg = exp[4:].split("/")
            ok = len(raw) == int(n) and got[a].get("algorithm") == alg
            print("ok" if ok else "FAIL: %s: %s: %d bytes, %r (want %s)" %
                  (store, a, len(raw), got[a].get("algorithm"), exp))
        else:
            print("ok" if raw.hex() == exp else
                  "FAIL: %s: %s: value %s, want %s" % (store, a, raw.hex(), exp))
        continue
    rc, der = run(wks, "export-cert", "-k", store, "-a", a, "--storepass",
                  "pass:" + pw, "--der")
    print("ok" if rc == 0 and der == b"".join(ders) else
          "FAIL: %s: %s: certificates differ from keytool's" % (store, a))
    if t != "private-key":
        continue
    rc, key = run(wks, "export-key", "-k", store, "-a", a, "--storepass",
                  "pass:" + pw)
    _, pub1 = run("openssl", "pkey", "-pubout", inp=key)
    _, pem = run(wks, "export-cert", "-k", store, "-a", a, "--storepass",
                 "pass:" + pw, "--leaf")
    _, pub2 = run("openssl", "x509", "-pubkey", "-noout", inp=pem)
    print("ok" if rc == 0 and pub1 and pub1 == pub2 else
          "FAIL: %s: %s: the key does not match its certificate" % (store, a))
EOF
}
# tally: count the ok / FAIL lines of check_store.
tally() {
	local line
	while IFS= read -r line; do
		case "$line" in
		ok) ok ;;
		*) failed=$((failed + 1)); echo "$line" >&2 ;;
		esac
	done
}

# ---- JKS -----------------------------------------------------------------
# Keys under a password other than the store's, no terminal: the keys are
# skipped by name, the certificate imported, exit 1.
wks import-keystore --srckeystore j.jks -k a.wks --srcstorepass pass:$SP \
	--storepass pass:new-pass "${I[@]}"
expect_out 1 'skipped: "clé-ü" \(private key, 1 certificate\): key password incorrect' \
	"import-keystore JKS without the key password"
grep -q 'skipped: "ec-key"' out && grep -q 'imported: "root ca"' out &&
	grep -q '3 entries: 1 imported, 2 skipped' out && ok ||
	bad "the summary names every skipped alias"
# Then each key the keytool way: --srcalias with --srckeypass.
wks import-keystore --srckeystore j.jks -k a.wks --srcstorepass pass:$SP \
	--storepass pass:new-pass --srcalias 'clé-ü' --srckeypass pass:key-pass-A \
	"${I[@]}"
expect_out 0 '^imported: "clé-ü" \(private key, 1 certificate\)$' \
	"import-keystore --srcalias --srckeypass"
before=$(sha a.wks)
wks import-keystore --srckeystore j.jks -k a.wks --srcstorepass pass:$SP \
	--storepass pass:new-pass --srckeypass pass:key-pass-A "${I[@]}"
expect_err 7 'entry "clé-ü" exists' "existing aliases refuse the import"
[ "$(sha a.wks)" = "$before" ] && ok || bad "a refused import changed the store"
wks import-keystore --srckeystore j.jks -k a.wks --srcstorepass pass:$SP \
	--storepass pass:new-pass --srckeypass pass:key-pass-A --force "${I[@]}"
expect_out 0 '3 entries: 3 imported, 0 skipped' "import-keystore --force"
tally < <(check_store a.wks new-pass j.jks.list)
# convert: --srckeypass for all keys.
wks convert --in j.jks -o c.wks --inpass pass:$SP --outpass pass:new-pass \
	--srckeypass pass:key-pass-A "${I[@]}"
expect_out 0 '3 entries: 3 imported, 0 skipped' "convert JKS"
tally < <(check_store c.wks new-pass j.jks.list)
# --destalias
wks import-keystore --srckeystore j.jks -k d.wks --srcstorepass pass:$SP \
	--storepass pass:new-pass --srcalias 'root ca' --destalias 'my root' \
	"${I[@]}"
expect_out 0 '^imported: "root ca" as "my root" \(trusted certificate\)' \
	"--srcalias --destalias"

wks convert --in n.jks -o n.wks --inpass 'pass:pässwörd€𝄞' \
	--srckeypass 'pass:kéy€𝄞' --outpass pass:new-pass "${I[@]}"
expect_out 0 '1 entry: 1 imported, 0 skipped' "non-ASCII JKS passwords"

# --force: a trusted certificate replaces a key entry (keytool's
# overwrite); without it, nothing changes.
before=$(sha a.wks)
wks import-keystore --srckeystore j.jks -k a.wks --srcstorepass pass:$SP \
	--storepass pass:new-pass --srcalias 'root ca' --destalias 'clé-ü' \
	"${I[@]}"
expect_err 7 'entry "clé-ü" exists' "a certificate onto a key alias, no --force"
[ "$(sha a.wks)" = "$before" ] && ok || bad "the refused import changed a.wks"
wks import-keystore --srckeystore j.jks -k a.wks --srcstorepass pass:$SP \
	--storepass pass:new-pass --srcalias 'root ca' --destalias 'clé-ü' \
	--force "${I[@]}"
expect_out 0 'imported: "root ca" as "clé-ü" \(trusted certificate\)' \
	"a certificate replaces a key entry with --force"
wks list -k a.wks --storepass pass:new-pass -a 'clé-ü'
expect_out 0 'clé-ü +certificate' "the replaced entry is a certificate"
# A replacement that fails keeps the entry: j.jks with its trusted
# certificate's DER made unparsable (digest recomputed), imported whole
# with --force: the keys replace theirs, "root ca" is skipped and a.wks
# keeps its own "root ca".
python3 - "$SP" <<'PYEOF'
import base64, hashlib, sys
d = bytearray(open("j.jks", "rb").read()[:-20])
pem = open("ca.pem").read().split("-----")[2]
der = base64.b64decode("".join(pem.split()))
i = bytes(d).find(der)
d[i] = 0x31                      # SEQUENCE -> SET: not a certificate
d += hashlib.sha1(sys.argv[1].encode("utf-16-be") + b"Mighty Aphrodite" +
                  bytes(d)).digest()
open("badcert.jks", "wb").write(bytes(d))
PYEOF
wks import-keystore --srckeystore badcert.jks -k a.wks --srcstorepass pass:$SP \
	--storepass pass:new-pass --srckeypass pass:key-pass-A --force "${I[@]}"
expect_out 1 'skipped: "root ca" \(trusted certificate\)' \
	"an unparsable certificate is skipped"
grep -q '3 entries: 2 imported, 1 skipped' out && ok || bad "badcert summary"
wks list -k a.wks --storepass pass:new-pass -a 'root ca'
expect_out 0 'root ca +certificate' "a failed replacement keeps the entry"

# ---- JCEKS ---------------------------------------------------------------
# --srckeypass opens rsa and aes-ü; pw falls back to the store password.
wks convert --in j.jceks -o e.wks --inpass pass:$SP --outpass pass:new-pass \
	--srckeypass pass:key-pass-B "${I[@]}"
expect_out 0 '4 entries: 4 imported, 0 skipped' "convert JCEKS"
grep -q '^imported: "aes-ü" (secret key, AES 256 bits)$' out && ok ||
	bad "JCEKS secret key line"
# The secret keys: pw by value (hex of -importpass's text), aes-ü by
# length and algorithm (keytool never shows a generated key).
JCEKS_SECRETS=$(printf 'pw=%s\naes-ü=len:32/AES' \
	"$(printf the-secret-42 | od -An -tx1 | tr -d ' \n')")
tally < <(check_store e.wks new-pass j.jceks.list "$JCEKS_SECRETS")

# ---- PKCS12 and WKS sources ----------------------------------------------
wks import-keystore --srckeystore j.p12 -k p.wks --srcstorepass pass:$SP \
	--storepass pass:new-pass "${I[@]}"
expect_out 0 '3 entries: 3 imported, 0 skipped' "import-keystore PKCS12"
tally < <(check_store p.wks new-pass j.p12.list 'p12-aes=len:16/AES')
wks import-keystore --srckeystore e.wks --srcstoretype wks -k w.wks \
	--srcstorepass pass:new-pass --storepass pass:other-pass "${I[@]}"
expect_out 0 '4 entries: 4 imported, 0 skipped' "import-keystore WKS"
tally < <(check_store w.wks other-pass j.jceks.list "$JCEKS_SECRETS")

# ---- what to run ---------------------------------------------------------
wks list -k j.jks --storepass pass:$SP
expect_err 5 'this is a JKS keystore; convert it with: wks import-keystore --srckeystore j.jks -k NEW.wks' \
	"list on a JKS file says what to run"
wks verify -k j.jceks --storepass pass:$SP
expect_err 5 'this is a JCEKS keystore; convert it with' "verify on a JCEKS file"
wks import-keystore --srckeystore j.jks --srcstoretype jceks -k x.wks \
	--srcstorepass pass:$SP --storepass pass:new-pass
expect_err 5 'this is a JKS file, not jceks' "--srcstoretype is checked"
wks import-keystore --srckeystore j.jks -k x.wks --srcstorepass pass: \
	--storepass pass:new-pass
expect 2 "an empty source password is refused"
wks import-keystore --srckeystore j.jks -k x.wks --srcstorepass pass:wrong \
	--storepass pass:new-pass
expect_err 4 'integrity check failed: wrong password, or the file was modified' \
	"wrong store password"
wks import-keystore --srckeystore j.jks -k x.wks --srcstorepass pass:$SP \
	--storepass pass:new-pass --srcalias nosuch
expect_err 3 'no entry "nosuch"' "--srcalias of a missing entry"
[ ! -e x.wks ] && ok || bad "a failed import created the destination"

# ---- hostile files -------------------------------------------------------
# Variants of j.jks and j.jceks, written by python: truncations with the
# digest kept (integrity fails) or recomputed (the parser sees the
# truncation): every length of j.jks's first 64 bytes (header, the first
# entry's alias, date, key length and the start of its key), every 97th
# beyond; in the full mode (WKS_TEST_FULL=1) the first 256 and every 41st
# (every length with WKS_KEYTOOL_FULL=1: about 14,000 runs, minutes; under
# valgrind only every 97th after the header); fields set to 0x7FFFFFFF.
step=97 head=64
case ${WKS_TEST_FULL:-0} in 0) ;; *) step=41 head=256 ;; esac
case "$WKS_BIN" in *valgrind*) step=97 head=0 ;; esac
[ -n "${WKS_KEYTOOL_FULL:-}" ] && step=1
mkdir hostile
python3 - "$SP" "$step" "$head" <<'EOF'
import hashlib, struct, sys
pw, step, head = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def digest(body):
    return hashlib.sha1(pw.encode("utf-16-be") + b"Mighty Aphrodite" +
                        body).digest()
for name in ("j.jks", "j.jceks"):
    d = open(name, "rb").read()
    body = d[:-20]
    for n in range(0, len(d)):
        if n % step and n != 100 and (name != "j.jks" or n >= head):
            continue
        if n % step == 0:
            open("hostile/%s.cut%05d" % (name, n), "wb").write(d[:n])
        if n >= 12 and n < len(body):
            b = body[:n]
            open("hostile/%s.redig%05d" % (name, n), "wb").write(b + digest(b))
    bad = bytearray(d); bad[-1] ^= 1
    open("hostile/%s.flip" % name, "wb").write(bytes(bad))
    # entry count, then the first entry's alias length, key/cert length
    def patch(off, val, fmt, tag):
        b = bytearray(body)
        b[off:off + struct.calcsize(fmt)] = struct.pack(fmt, val)
        open("hostile/%s.%s" % (name, tag), "wb").write(bytes(b) +
                                                        digest(bytes(b)))
    patch(8, 0x7FFFFFFF, ">I", "count")
    patch(8, 0xFFFFFFFF, ">I", "negcount")
    patch(4, 3, ">I", "version")
    patch(16, 0xFFFF, ">H", "aliaslen")
    alen = struct.unpack(">H", body[16:18])[0]
    patch(18 + alen + 8, 0x7FFFFFFF, ">I", "bloblen")
    patch(12, 9, ">I", "tag")
EOF
n_clean=0
for f in hostile/*; do
	wks import-keystore --srckeystore "$f" -k x.wks --srcstorepass pass:$SP \
		--storepass pass:new-pass --srckeypass pass:key-pass-A "${I[@]}"
	# 4 integrity, 5 malformed, 8 unsupported, 9 limit: nothing else
	# (no crash, no sanitizer or valgrind status 99).
	case $rc in 4|5|8|9) good=1 ;; *) good=0 ;; esac
	if grep -Eq 'Sanitizer|runtime error' err || [ $good -eq 0 ] ||
	   [ "$(wc -l <err)" -ne 1 ] || ! grep -q "^wks: $f: " err; then
		bad "$f: exit $rc, not one clean message"
	else
		n_clean=$((n_clean + 1))
	fi
	rm -f x.wks
done
ok
echo "hostile: $n_clean files rejected cleanly"
for t in count:9:'entry count 2147483647 exceeds the limit' \
	 negcount:5:'negative entry count' version:8:'JKS version 3' \
	 aliaslen:5:'entry 0 \(offset 12\)' bloblen:5:'key length 2147483647' \
	 tag:5:'unknown entry tag 9' flip:4:'wrong password, or the file was modified'; do
	IFS=: read -r suffix code msg <<<"$t"
	wks import-keystore --srckeystore hostile/j.jks.$suffix -k x.wks \
		--srcstorepass pass:$SP --storepass pass:new-pass
	expect_err "$code" "$msg" "hostile j.jks.$suffix"
done
wks import-keystore --srckeystore hostile/j.jceks.redig00100 -k x.wks \
	--srcstorepass pass:$SP --storepass pass:new-pass
expect_err 5 'entry 0 \(offset 12\)' "a truncated JCEKS entry"

end_tests
