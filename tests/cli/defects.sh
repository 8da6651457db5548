#!/usr/bin/env bash
# Regression tests of wks(1) for the defects of issue 12 that belong to the
# tool's handling of hostile or unusual input:
#   10  a private key entry with a chain of 0 (and other empty or odd
#       entries): every command, no crash;
#   11  bytes from files (algorithm names, certificate types, subjects,
#       PKCS#12 friendly names) never reach the terminal unescaped, and
#       --json stays valid;
#   16  PKCS#12 without a MAC is refused unless --no-mac-ok; a bad
#       decryption and undecodable plaintext give one message; exports
#       use the store's iteration count;
#   17  pass:TEXT is wiped from /proc/PID/cmdline once parsed.
# and of the defects issue: 9b (stray arguments never echoed), 9c (no key
# text freed unwiped, through an LD_PRELOAD free() hook), 10 (input
# size bounds, file: sources, no set-id use); and of issue 22: 5 (an edit
# whose report cannot be written still says it saved), 7 (passwords
# before the lock; a wait that says who holds it; --wait), 8 (convert's
# output format and the output's name), 11 (one report format; the
# "new keystore" note), 12 (messages: file: sources, PEM or empty
# keystores, long aliases, keytool's command names).
#
# usage: defects.sh WKS_BINARY SHARED_DIR
#
# WKS_BINARY may be a wrapper (tests/cli/valgrind-wks.sh); the one test
# that needs the real process (17) is then skipped.  Works in a mktemp -d
# folder that it removes.  Prints "N passed, M failed" last; exits 1 on
# any failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
start_tests defects

# ---- helpers (and lib.sh's) ---------------------------------------------------

# The stderr of a failed check with control characters made visible.
show_stderr() { sed 's/^/    stderr: /' "$T/err" | cat -v; }

# clean WHAT: neither $T/out nor $T/err holds a control character other
# than the line end: no C0 byte, no DEL, no C1 (U+0080..U+009F in UTF-8
# or a lone 0x80..0x9F byte would be caught as invalid UTF-8 below).
clean() {
	if python3 - "$T/out" "$T/err" <<'EOF'
import re, sys
for f in sys.argv[1:]:
    b = open(f, "rb").read()
    if re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", b):
        sys.exit("%s: control character" % f)
    try:
        b.decode("utf-8")
    except UnicodeDecodeError as e:
        sys.exit("%s: not UTF-8: %s" % (f, e))
EOF
	then ok; else bad "$1: raw control characters reach the terminal"; fi
}

SP=pass:pw
S=(--storepass "$SP")
IT=(--iterations 10000)

# ---- material -------------------------------------------------------------------

ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out k.pem
ossl req -x509 -new -key k.pem -subj "/CN=plain" -days 30 -out c.pem
ossl pkey -in k.pem -outform DER -out k.norm
# A certificate whose subject holds ESC, BEL, CR, DEL and U+009B (CSI).
ossl req -x509 -new -key k.pem -utf8 -days 30 -out odd.pem \
	-subj "/CN=odd$(printf '\033')[31mred$(printf '\a\r\177\302\233')2J"
check "material: odd subject certificate" [ -s odd.pem ]

# Stores written byte by byte with wksdump.py's writer (the library would
# not write most of them).
cat >mk.py <<'EOF'
import importlib.util, struct, sys
spec = importlib.util.spec_from_file_location("wksdump", sys.argv[1])
w = importlib.util.module_from_spec(spec)
spec.loader.exec_module(w)
PW, IT = "pw", 10000
pk = w.load_pkcs8("k.pem")
cert = w.load_certs(["c.pem"])[0]
odd = w.load_certs(["odd.pem"])[0]
rng = w.Rng("defects")
def priv(alias, chain, key=pk):
    return (w.TYPE_PRIVATE_KEY, alias,
            w.build_private_body(1000, key, chain, PW, IT, rng.bytes(16), rng.bytes(16)))
def secret(alias, alg, key):
    return (w.TYPE_SECRET_KEY, alias,
            w.build_secret_body(1000, alg, key, PW, IT, rng.bytes(16), rng.bytes(16)))
def certe(alias, der, ctype="X.509"):
    return (w.TYPE_CERTIFICATE, alias,
            struct.pack(">q", 1000) + w.enc_utf(ctype) + struct.pack(">i", len(der)) + der)
def store(name, recs):
    open(name, "wb").write(w.build_store(recs, PW, IT, rng.bytes(16)))
# A PKCS#8 of an algorithm nobody knows (OID 1.2.3.4).
unknown = bytes.fromhex("3016020100300506032a0304040a" + "01" * 10)
evil = "AES\x1b[31mRED\x07\r\x7f\u009b2J\\"
store("nochain.wks", [priv("nochain", []), certe("c", cert)])
store("odd.wks", [priv("", [cert]), secret("noalg", "", b"k" * 16),
                  secret("empty", "AES", b""), priv("unknown", [cert], unknown),
                  certe("oddsubject", odd)])
store("evil-alg.wks", [secret("s", evil, b"k" * 16),
                       secret("a\x1b]0;title\x07", "AES", b"k" * 16)])
store("evil-type.wks", [certe("c", cert, "X.509\x1b]0;pwned\x07\u009b")])
store("bad-cert.wks", [certe("c", b"\x30\x03\x02\x01\x00")])
open("evil.txt", "w", encoding="utf-8", newline="").write(evil)
EOF
python3 mk.py "$WKSDUMP"

# ---- 10: a private key entry with a chain of 0, every command ---------------------

wks list -k nochain.wks "${S[@]}"
expect 0 "10 list, chain of 0"
check "10 list: says there is no certificate" grep -q 'nochain.*private-key.*no certificate, chain of 0' "$T/out"
wks list -k nochain.wks --no-storepass
expect 0 "10 list --no-storepass, chain of 0"
wks list -k nochain.wks -v "${S[@]}"
expect 0 "10 list -v, chain of 0"
check "10 list -v: 0 certificates" grep -q 'Chain: *0 certificates' "$T/out"
wks list -k nochain.wks -a nochain "${S[@]}"
expect 0 "10 list -a, chain of 0"
wks list -k nochain.wks --json "${S[@]}"
expect 0 "10 list --json, chain of 0"
check "10 list --json: empty chain" [ "$(json '[e["chain_sha256"] for e in d["entries"] if e["alias"] == "nochain"][0]')" = "[]" ]

wks export-key -k nochain.wks -a nochain "${S[@]}"
expect 0 "10 export-key, chain of 0"
check "10 export-key: the key" cmp -s <(openssl pkey -in "$T/out" -outform DER) k.norm
wks export-key -k nochain.wks -a nochain --outpass pass:out -o enc.pem "${S[@]}" "${IT[@]}"
expect 0 "10 export-key --outpass, chain of 0"
wks export-cert -k nochain.wks -a nochain "${S[@]}"
expect_err 8 'entry "nochain" has no certificate' "10 export-cert, chain of 0"
wks export-p12 -k nochain.wks -a nochain -o one.p12 --outpass pass:out "${S[@]}" "${IT[@]}"
expect_err 8 'no certificate: PKCS#12 export needs one' "10 export-p12 -a, chain of 0"
check "10 export-p12 -a: no file" [ ! -e one.p12 ]
wks export-p12 -k nochain.wks -o all.p12 --outpass pass:out "${S[@]}" "${IT[@]}"
expect 0 "10 export-p12, chain of 0"
check "10 export-p12: skipped with a note" grep -q 'note: private key entry "nochain" skipped: it has no certificate' "$T/err"
check "10 export-p12: openssl reads it" openssl pkcs12 -in all.p12 -passin pass:out -noout
wks convert --in nochain.wks -o conv.p12 --inpass "$SP" --outpass pass:out "${IT[@]}"
expect 0 "10 convert, chain of 0"
check "10 convert: skipped with a note" grep -q '"nochain" skipped' "$T/err"
wks verify -k nochain.wks "${S[@]}"
expect 0 "10 verify, chain of 0"
check "10 verify: says why the key was not matched" grep -q 'nochain (private-key): ok: key decrypted; it has no certificate' "$T/out"
wks verify -k nochain.wks --json "${S[@]}"
expect 0 "10 verify --json, chain of 0"
check "10 verify --json: ok" [ "$(json 'd["ok"]')" = True ]

cp nochain.wks t.wks
wks rename -k t.wks -a nochain --new-alias renamed "${S[@]}" "${IT[@]}"
expect 0 "10 rename, chain of 0"
wks keypasswd -k t.wks -a renamed --new-keypass pass:newkey "${S[@]}" "${IT[@]}"
expect 0 "10 keypasswd, chain of 0"
wks export-key -k t.wks -a renamed --keypass pass:newkey "${S[@]}"
check "10 keypasswd: the key" cmp -s <(openssl pkey -in "$T/out" -outform DER) k.norm
wks passwd -k t.wks --new-storepass pass:pw2 "${S[@]}" "${IT[@]}"
expect 0 "10 passwd, chain of 0"
wks list -k t.wks --storepass pass:pw2
expect 0 "10 list after passwd"
h=$(sha t.wks)
# Its own certificate as a CA reply (import-cert onto a key entry): with
# a chain of 0 the key's public half comes from the key, whose password
# is needed; then the certificate becomes the chain.
wks import-cert -k t.wks -a renamed --cert c.pem --storepass pass:pw2 "${IT[@]}"
expect_err 4 'integrity' "10 import-cert onto it without its key password"
unchanged t.wks "$h" "10 import-cert onto it without its key password"
wks import-cert -k t.wks -a renamed --cert c.pem --keypass pass:newkey --storepass pass:pw2 "${IT[@]}"
expect 0 "10 import-cert onto it: the reply becomes its chain"
check "10 import-cert: chain of 1" grep -q 'a chain of 1 certificate$' "$T/out"
wks delete -k t.wks -a renamed --storepass pass:pw2 "${IT[@]}"
expect 0 "10 delete, chain of 0"
cp nochain.wks t.wks
wks import-key -k t.wks -a nochain --key k.pem --chain c.pem --force "${S[@]}" "${IT[@]}"
expect 0 "10 import-key --force over it"
wks list -k t.wks -a nochain "${S[@]}"
check "10 import-key: now a chain of 1" grep -q 'chain of 1' "$T/out"
cp nochain.wks t.wks
wks import-secret -k t.wks -a nochain --generate aes-128 --force "${S[@]}" "${IT[@]}"
expect 0 "10 import-secret --force over it"
ossl pkcs12 -export -inkey k.pem -in c.pem -name nochain -passout pass:out -out k.p12
cp nochain.wks t.wks
wks import-p12 -k t.wks --in k.p12 --inpass pass:out --force "${S[@]}" "${IT[@]}"
expect 0 "10 import-p12 --force over it"

# Other empty or odd entries: an empty alias, a secret key with an empty
# algorithm name, a zero-length secret key, a private key of an unknown
# algorithm, a certificate that does not parse.
wks list -k odd.wks "${S[@]}"
expect 0 "10 list: odd entries"
check "10 list: empty alias shown as \"\"" grep -q '^""  *private-key' "$T/out"
check "10 list: empty algorithm shown as \"\"" grep -q '^noalg  *secret-key .*UTC  ""$' "$T/out"
wks list -k odd.wks -v "${S[@]}"
expect 0 "10 list -v: odd entries"
wks list -k odd.wks --json "${S[@]}"
expect 0 "10 list --json: odd entries"
check "10 list --json: empty alias and algorithm" [ "$(json '[(e["alias"], e.get("algorithm")) for e in d["entries"] if e["alias"] in ("", "noalg")]')" = "[('', None), ('noalg', '')]" ]
wks export-key -k odd.wks -a "" "${S[@]}"
expect 0 "10 export-key of the empty alias"
wks export-key -k odd.wks -a empty "${S[@]}"
check "10 export-key of a zero-length secret: no crash" [ "$rc" -lt 128 ]
wks export-key -k odd.wks -a empty --der -o empty.bin "${S[@]}"
check "10 export-key --der of a zero-length secret: no crash" [ "$rc" -lt 128 ]
wks export-key -k odd.wks -a unknown --der "${S[@]}"
expect 0 "10 export-key of an unknown algorithm"
wks export-key -k odd.wks -a unknown --outpass pass:out "${S[@]}" "${IT[@]}"
expect 0 "10 export-key --outpass of an unknown algorithm"
wks verify -k odd.wks "${S[@]}"
check "10 verify: odd entries, no crash" [ "$rc" -lt 128 ]
check "10 verify: unknown algorithm named by its OID" grep -q 'unknown (private-key): ok: 1.2.3.4 key decrypted' "$T/out"
check "10 verify: empty alias shown as \"\"" grep -q '^  "" (private-key): ok$' "$T/out"
wks export-p12 -k odd.wks -o odd.p12 --outpass pass:out "${S[@]}" "${IT[@]}"
check "10 export-p12: odd entries, no crash" [ "$rc" -lt 128 ]
wks export-cert -k odd.wks -a "" "${S[@]}"
expect 0 "10 export-cert of the empty alias"
for cmd in list "list -v" "list --json" "verify"; do
	# shellcheck disable=SC2086
	wks $cmd -k bad-cert.wks "${S[@]}"
	expect_err 5 'unparsable X.509 certificate|malformed' "10 $cmd: a certificate that does not parse"
done

# ---- 11: escape sequences from files -----------------------------------------------

wks list -k evil-alg.wks "${S[@]}"
expect 0 "11 list: evil algorithm name"
clean "11 list: algorithm name"
check "11 list: the algorithm escaped" grep -qF 'AES\x1b[31mRED\x07\r\x7f\x9b2J\\' "$T/out"
check "11 list: the alias escaped" grep -qF 'a\x1b]0;title\x07' "$T/out"
wks list -k evil-alg.wks -v "${S[@]}"
expect 0 "11 list -v: evil algorithm name"
clean "11 list -v: algorithm name"
check "11 list -v: the algorithm escaped" grep -qF 'Algorithm: AES\x1b[31mRED' "$T/out"
wks list -k evil-alg.wks --json --no-storepass
expect 0 "11 list --json: evil algorithm name"
clean "11 list --json: algorithm name"
check "11 list --json: the same string back" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want = open("evil.txt", encoding="utf-8", newline="").read()
assert [e["algorithm"] for e in d["entries"] if e["alias"] == "s"] == [want], d
assert "\\u009b" in open(sys.argv[1]).read()' "$T/out"
wks verify -k evil-alg.wks --json "${S[@]}"
expect 0 "11 verify --json: evil alias"
clean "11 verify --json"

for cmd in list "list --json" "list -v" verify; do
	# shellcheck disable=SC2086
	wks $cmd -k evil-type.wks "${S[@]}"
	expect_err 5 'certificate type "X\.509\\x1b\]0;pwned\\x07\\x(c2|9b)' "11 $cmd: certificate type in the error detail"
	clean "11 $cmd: certificate type in the error detail"
done

wks list -k odd.wks -v -a oddsubject "${S[@]}"
expect 0 "11 list -v: odd subject"
clean "11 list -v: odd subject"
check "11 list -v: subject escaped" grep -qF 'CN=odd\1B[31mred\07\0D\7F\x9b2J' "$T/out"
wks create -k imp.wks "${S[@]}" "${IT[@]}"
wks import-cert -k imp.wks -a "$(printf 'x\033[2Jy')" --cert odd.pem "${S[@]}" "${IT[@]}"
expect 0 "11 import-cert of an odd subject"
wks import-key -k imp.wks -a k2 --key k.pem --chain c.pem --chain odd.pem "${S[@]}" "${IT[@]}"
expect_err 8 'not part of the chain' "11 import-key: odd subject in an error"
clean "11 import-key: odd subject in an error"
wks list -k imp.wks -v "${S[@]}"
clean "11 list -v: escaped alias and subject"

# PKCS#12 friendly names.
ossl pkcs12 -export -inkey k.pem -in c.pem -passout pass:out -out evil.p12 \
	-name "$(printf 'p12\033[31m\a\r\177\302\233end')"
check "material: PKCS#12 with an odd friendly name" [ -s evil.p12 ]
wks import-p12 -k imp.wks --in evil.p12 --inpass pass:out -a other-name-x --force "${S[@]}" "${IT[@]}"
expect 0 "11 import-p12 -a: a single entry takes the name"
ossl pkcs12 -export -inkey k.pem -in c.pem -certfile odd.pem -passout pass:out -out evil2.p12 \
	-name "$(printf 'p12\033[31m\a\r\177\302\233end')"
wks import-p12 -k imp.wks --in evil2.p12 --inpass pass:out -a nothere "${S[@]}" "${IT[@]}"
expect_err 3 'it holds "p12\\x1b\[31m\\x07\\r\\x7f\\x9bend"' "11 import-p12 -a: odd friendly names listed"
clean "11 import-p12: friendly names in messages"
wks import-p12 -k imp.wks --in evil2.p12 --inpass pass:out "${S[@]}" "${IT[@]}"
expect 0 "11 import-p12 of odd friendly names"
wks list -k imp.wks "${S[@]}"
clean "11 list: imported friendly names"
check "11 list: the friendly name escaped" grep -qF 'p12\x1b[31m\x07\r\x7f\x9bend' "$T/out"
wks list -k imp.wks --json "${S[@]}"
clean "11 list --json: imported friendly names"
check "11 list --json: valid, same names" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "p12\x1b[31m\a\r\x7f\u009bend" in [e["alias"] for e in d["entries"]], d' "$T/out"

# A file name with an escape sequence (from a listing of someone else's
# folder) in the output and the messages.
cp nochain.wks "$(printf 'n\033[2Jx.wks')"
wks list -k "$(printf 'n\033[2Jx.wks')" --no-storepass
expect 0 "11 list of a file with ESC in its name"
clean "11 list: file name"
wks verify -k "$(printf 'n\033[2Jx.wks')" "${S[@]}"
expect 0 "11 verify of a file with ESC in its name"
clean "11 verify: file name"

# A properties file with control characters in a value: the warning.
printf 'wolfjce.wks.iterationCount=12\033[31m\a\n' >evil.properties
WKS_PROPERTIES=$T/evil.properties wks list -k nochain.wks "${S[@]}"
expect 0 "11 list with a bad property value"
clean "11 warning about a property value"
check "11 warning: the value escaped once" grep -qF 'iterationCount="12\x1b[31m"' "$T/err"

# ---- 16: PKCS#12 MAC, one decryption message, iteration counts -------------------

ossl pkcs12 -export -nomac -inkey k.pem -in c.pem -name nomac -passout pass:out -out nomac.p12
check "material: PKCS#12 without MAC" sh -c \
	"openssl pkcs12 -in nomac.p12 -passin pass:out -info -noout 2>&1 | grep -q 'MAC is absent'"
wks create -k m.wks "${S[@]}" "${IT[@]}"
h=$(sha m.wks)
wks import-p12 -k m.wks --in nomac.p12 --inpass pass:out "${S[@]}" "${IT[@]}"
expect_err 8 'no MAC.*--no-mac-ok' "16 import-p12 refuses a file without a MAC"
unchanged m.wks "$h" "16 import-p12 without a MAC"
wks convert --in nomac.p12 -o nomac.wks --inpass pass:out --outpass "$SP" "${IT[@]}"
expect_err 8 'no MAC.*--no-mac-ok' "16 convert refuses a file without a MAC"
check "16 convert without a MAC: no output" [ ! -e nomac.wks ]
wks import-p12 -k m.wks --in nomac.p12 --inpass pass:out --no-mac-ok "${S[@]}" "${IT[@]}"
expect 0 "16 import-p12 --no-mac-ok"
check "16 import-p12 --no-mac-ok: a note" grep -q 'note: no MAC' "$T/err"
wks export-key -k m.wks -a nomac "${S[@]}"
check "16 import-p12 --no-mac-ok: the key" cmp -s <(openssl pkey -in "$T/out" -outform DER) k.norm
wks convert --in nomac.p12 -o nomac.wks --inpass pass:out --outpass "$SP" --no-mac-ok "${IT[@]}"
expect 0 "16 convert --no-mac-ok"
wks export-p12 -k m.wks -o x.p12 --outpass pass:out --no-mac-ok "${S[@]}"
expect_err 2 'does not apply' "16 --no-mac-ok is for PKCS#12 input only"

# Tamper with the encrypted key of a MAC-less PKCS#12 (and of an encrypted
# PKCS#8 key file): bad padding (last byte of the next-to-last block) and
# a plaintext that does not decode (first byte of the IV: the SEQUENCE
# tag) must give the same message and status.
cat >tamper.py <<'EOF'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
# AES-256-CBC's OID, then the IV (OCTET STRING of 16), then the ciphertext.
pat = bytes.fromhex("060960864801650304012a" "0410")
i = data.rfind(pat)
assert i >= 0, "no AES-256-CBC IV"
iv = i + len(pat)
ct = iv + 16
assert data[ct] == 0x04
n = data[ct + 1]
if n & 0x80:
    k = n & 0x7F
    n = int.from_bytes(data[ct + 2:ct + 2 + k], "big")
    ct += 2 + k
else:
    ct += 2
if sys.argv[2] == "padding":
    data[ct + n - 17] ^= 0x80
else:
    data[iv] ^= 0x80
open(sys.argv[3], "wb").write(data)
EOF
ossl pkcs12 -export -nomac -certpbe NONE -inkey k.pem -in c.pem -name nomac -passout pass:out -out nomac-plain.p12
python3 tamper.py nomac-plain.p12 padding pad.p12
python3 tamper.py nomac-plain.p12 decode dec.p12
wks import-p12 -k m.wks --in pad.p12 --inpass pass:out --no-mac-ok --force "${S[@]}" "${IT[@]}"
expect_err 4 'cannot decrypt' "16 import-p12: bad padding"
grep -v 'note: no MAC' "$T/err" >pad.err || true
wks import-p12 -k m.wks --in dec.p12 --inpass pass:out --no-mac-ok --force "${S[@]}" "${IT[@]}"
expect_err 4 'cannot decrypt' "16 import-p12: undecodable plaintext"
grep -v 'note: no MAC' "$T/err" | sed 's/dec\.p12/pad.p12/' >dec.err || true
check "16 import-p12: bad padding and bad plaintext give one message" cmp -s pad.err dec.err
wks import-p12 -k m.wks --in nomac-plain.p12 --inpass pass:wrong --no-mac-ok --force "${S[@]}" "${IT[@]}"
grep -v 'note: no MAC' "$T/err" | sed 's/nomac-plain\.p12/pad.p12/' >wrong.err || true
check "16 import-p12: a wrong password gives that message too" cmp -s pad.err wrong.err
ossl pkcs8 -topk8 -v2 aes-256-cbc -in k.pem -passout pass:phrase -outform DER -out k.enc.der
python3 tamper.py k.enc.der padding pad.der
python3 tamper.py k.enc.der decode dec.der
wks import-key -k m.wks -a enc --key pad.der --inpass pass:phrase --chain c.pem "${S[@]}" "${IT[@]}"
expect_err 4 'cannot decrypt the private key' "16 import-key: bad padding"
cp "$T/err" pad.err
wks import-key -k m.wks -a enc --key dec.der --inpass pass:phrase --chain c.pem "${S[@]}" "${IT[@]}"
expect_err 4 'cannot decrypt the private key' "16 import-key: undecodable plaintext"
sed 's/dec\.der/pad.der/' "$T/err" >dec.err
check "16 import-key: bad padding and bad plaintext give one message" cmp -s pad.err dec.err

# Exports use the store's iteration count (wolfjce.wks.iterationCount,
# 210000 by default), for the MAC, the key bags and the certificates.
wks create -k e.wks "${S[@]}" "${IT[@]}"
wks import-key -k e.wks -a k --key k.pem --chain c.pem "${S[@]}" "${IT[@]}"
p12iter() { # FILE COUNT: openssl shows COUNT for the MAC and both bags
	local info
	info=$(openssl pkcs12 -in "$1" -passin pass:out -info -noout 2>&1) || return 1
	grep -q "MAC: sha256, Iteration $2\$" <<<"$info" &&
		grep -q "Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration $2," <<<"$info" &&
		grep -q "PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration $2," <<<"$info" &&
		! grep -q 'Iteration 2048' <<<"$info"
}
default_props wks export-p12 -k e.wks -o default.p12 --outpass pass:out "${S[@]}"
expect 0 "16 export-p12, default iterations"
check "16 export-p12: 210000 iterations by default" p12iter default.p12 210000
check "16 export-p12: openssl reads the key" cmp -s \
	<(openssl pkcs12 -in default.p12 -passin pass:out -nocerts -nodes 2>/dev/null | openssl pkey -outform DER) k.norm
printf 'wolfjce.wks.iterationCount=12345\n' >iter.properties
WKS_PROPERTIES=$T/iter.properties wks export-p12 -k e.wks -o prop.p12 --outpass pass:out "${S[@]}"
expect 0 "16 export-p12 with wolfjce.wks.iterationCount"
check "16 export-p12: the property's count" p12iter prop.p12 12345
wks export-p12 -k e.wks -o opt.p12 --outpass pass:out --iterations 10001 "${S[@]}"
check "16 export-p12 --iterations" p12iter opt.p12 10001
wks import-p12 -k m.wks --in opt.p12 --inpass pass:out -a back --force "${S[@]}" "${IT[@]}"
expect 0 "16 import-p12 of an export"
WKS_PROPERTIES=$T/iter.properties wks convert --in e.wks -o conv2.p12 --inpass "$SP" --outpass pass:out
expect 0 "16 convert with wolfjce.wks.iterationCount"
check "16 convert: the property's count" p12iter conv2.p12 12345
wks convert --in e.wks -o conv3.p12 --inpass "$SP" --outpass pass:out --iterations 6000000
expect_err 2 'maxIterationCount' "16 convert: --iterations above the import limit"
WKS_PROPERTIES=$T/iter.properties wks export-key -k e.wks -a k --outpass pass:out --der -o k.p8e "${S[@]}"
expect 0 "16 export-key --outpass with wolfjce.wks.iterationCount"
check "16 export-key: the property's count" sh -c \
	"openssl asn1parse -inform DER -in k.p8e | grep -q 'INTEGER *:3039\$'"

# ---- defects issue, items 9b, 9c and 10 ---------------------------------------------

# 9b: a stray argument is never shown (it may be the rest of a password
# with a space in it); its place and the option before it are.
wks list -k e.wks --storepass pass:correct horse
expect_err 2 'unexpected argument 5 \(after the value of --storepass' "9b stray argument after a password"
check "9b the stray word is not echoed" not grep -q horse "$T/err"
wks list -k e.wks --storepass=pass:correct horse
expect_err 2 'unexpected argument 4 \(after --storepass;' "9b stray argument after --storepass=VALUE"
check "9b --storepass=VALUE: neither word echoed" not grep -Eq 'horse|correct' "$T/err"
wks list -k e.wks --storpass=pass:battery
expect_err 2 'unknown option --storpass$' "9b unknown --opt=VALUE: the name only"
check "9b unknown --opt=VALUE: the value not echoed" not grep -q battery "$T/err"

# 9c: no buffer that held a private key's PEM text is freed unwiped
# (import-certs read a bundle holding a key block and freed it as it was).
# freehook.c, preloaded, ends wks with 99 when free() meets the marker.
# Not under a sanitizer: its runtime must come first among the libraries.
# (ldd's output is read whole: `ldd | grep -q` under pipefail fails when
# grep stops reading first, and then the hook ran under ASan.)
sanitized() {
	grep -qa '__[at]san_init' "$WKS_BIN" && return 0
	case $(ldd "$WKS_BIN" 2>/dev/null || true) in *lib[at]san*) return 0 ;; esac
	return 1
}
if [ "$(head -c 4 "$WKS_BIN" | tail -c 3)" = ELF ] && command -v cc >/dev/null &&
	! sanitized &&
	cc -shared -fPIC -O1 -o freehook.so "$(dirname "$0")/freehook.c" -ldl 2>/dev/null; then
	ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out k9.pem
	ossl req -x509 -new -key k9.pem -subj "/CN=9c" -days 30 -out c9.pem
	cat c9.pem k9.pem >bundle9.pem
	marker=$(sed -n 10p k9.pem | cut -c5-44)
	fh() { WKS_FREE_MARKER=$marker LD_PRELOAD=$T/freehook.so wks "$@"; }
	fh import-certs -k t9.wks --in bundle9.pem "${S[@]}" "${IT[@]}"
	expect 0 "9c import-certs of a bundle with a key block: nothing freed unwiped"
	fh import-key -k t9.wks -a k --key bundle9.pem --chain bundle9.pem "${S[@]}" "${IT[@]}"
	expect 0 "9c import-key from a bundle: nothing freed unwiped"
	fh import-cert -k t9.wks -a c --cert bundle9.pem "${S[@]}" "${IT[@]}"
	expect 0 "9c import-cert from a bundle: nothing freed unwiped"
	fh printcert --file bundle9.pem
	expect 0 "9c printcert of a bundle: nothing freed unwiped"
	fh export-key -k t9.wks -a k -o k9.out "${S[@]}"
	expect 0 "9c export-key: nothing freed unwiped"
	# The hook itself catches an unwiped free (a plain cat-like use).
	WKS_FREE_MARKER=$marker LD_PRELOAD=$T/freehook.so python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p     # not int: a 64-bit address
libc.free.argtypes = [ctypes.c_void_p]
b = libc.malloc(4096)
ctypes.memmove(b, sys.argv[1].encode(), len(sys.argv[1]))
libc.free(b)' "$marker" 2>/dev/null && st=0 || st=$?
	check "9c the hook catches an unwiped buffer" [ "$st" = 99 ]
else
	echo "SKIP: 9c free() hook (needs cc, a real binary without a sanitizer)"
fi

# 10: every input file read whole is bounded by libwks.wks.maxFileSize,
# stdin and FIFOs too (they have no size to check first).
printf 'libwks.wks.maxFileSize=4096\n' >small.properties
head -c 5000 /dev/zero >big.bin
WKS_PROPERTIES=$T/small.properties wks import-cert -k e.wks -a big --cert big.bin "${S[@]}"
expect_err 9 'more than 4096 bytes \(libwks.wks.maxFileSize\)' "10 --cert larger than maxFileSize"
set +e
head -c 100000 /dev/zero | WKS_PROPERTIES=$T/small.properties setsid -w "$WKS_BIN" \
	import-cert -k e.wks -a big --cert - "${S[@]}" >"$T/out" 2>"$T/err"
rc=$?
set -e
expect_err 9 'standard input: more than 4096 bytes' "10 --cert - (stdin) larger than maxFileSize"
mkfifo big.fifo
head -c 100000 /dev/zero >big.fifo &
fpid=$!
WKS_PROPERTIES=$T/small.properties wks import-cert -k e.wks -a big --cert big.fifo "${S[@]}"
expect_err 9 'more than 4096 bytes' "10 --cert FIFO larger than maxFileSize"
kill "$fpid" 2>/dev/null || true
wait "$fpid" 2>/dev/null || true
wks import-cert -k e.wks -a big --cert big.bin "${S[@]}"
expect_err 5 '' "10 the same file under the default limit: read (and refused as no certificate)"
# file: passwords: a directory is refused, the caller's own FIFO is waited
# for (another user's is refused without waiting: editing.sh).
mkdir pwdir
wks list -k e.wks --storepass file:pwdir
expect_err 6 'pwdir: cannot read: it is a directory' "10 file: a directory"
mkfifo pw.fifo
(echo pw >pw.fifo) &
wks list -k e.wks --storepass file:pw.fifo
expect 0 "10 file: the caller's own FIFO"
wait

# 10: set-id or with file capabilities, wks refuses to run (it would open
# --keystore, -o and file: paths with privileges its caller lacks).
if [ "$(id -u)" -eq 0 ] && command -v setcap >/dev/null && id nobody >/dev/null 2>&1 &&
	[ "$(head -c 4 "$WKS_BIN" | tail -c 3)" = ELF ]; then
	mkdir -m 755 capbin
	cp "$WKS_BIN" capbin/wks
	chmod 755 "$T" capbin/wks
	if setcap cap_ipc_lock+ep capbin/wks 2>/dev/null; then
		set +e
		setpriv --reuid=nobody --regid=nogroup --clear-groups capbin/wks \
			list -k "$T/e.wks" --storepass file:/etc/shadow >"$T/out" 2>"$T/err"
		rc=$?
		set -e
		expect_err 2 'refusing to run set-user-ID, set-group-ID or with file capabilities' \
			"10 wks with file capabilities refuses to run"
		setcap -r capbin/wks
		cp e.wks capbin/e.wks
		chmod 644 capbin/e.wks
		set +e
		setpriv --reuid=nobody --regid=nogroup --clear-groups capbin/wks \
			list -k "$T/capbin/e.wks" "${S[@]}" >"$T/out" 2>"$T/err"
		rc=$?
		set -e
		expect 0 "10 the same copy without capabilities runs"
	else
		echo "SKIP: 10 setcap: no capability xattrs on this file system"
	fi
else
	echo "SKIP: 10 set-id refusal (needs root, setcap, user nobody, a real binary)"
fi

# ---- issue 22, item 6: new passwords must be UTF-8 (Java's encoding) --------------

# wolfJCE encodes Java's char[] as UTF-8: a store or key made with a
# Latin-1 password could never be opened by Java.  Refused (exit 2, saying
# why and how), unless --allow-non-utf8-password; passwords that open
# existing stores are used as given.
printf 'p\344ssword-latin1\n' >l1.pw
printf 'p\303\244ssword-utf-8\n' >u8.pw
printf 'cesu-\355\240\200-surrogate\n' >cesu.pw
printf 'overlong-\300\257-slash\n' >overlong.pw
u8msg='not valid UTF-8.*Java could never open.*iconv -f LATIN1 -t UTF-8.*--allow-non-utf8-password'
wks create -k n1.wks --storepass file:l1.pw "${IT[@]}"
expect_err 2 "--storepass: the new store password is $u8msg" "22.6 create: a Latin-1 password refused"
check "22.6 create: no store written" [ ! -e n1.wks ]
for pwf in cesu overlong; do
	wks create -k n1.wks --storepass "file:$pwf.pw" "${IT[@]}"
	expect_err 2 'not valid UTF-8' "22.6 create: a $pwf password refused"
done
wks create -k n1.wks --storepass file:u8.pw "${IT[@]}"
expect 0 "22.6 create: a UTF-8 password with a non-ASCII letter"
check "22.6 create: UTF-8: no warning" [ ! -s "$T/err" ]
wks import-cert -k n2.wks -a c --cert c.pem --storepass file:l1.pw "${IT[@]}"
expect_err 2 '--storepass: the new store password is not valid UTF-8' "22.6 import-cert creating a store"
check "22.6 import-cert: no store written" [ ! -e n2.wks ]
wks import-certs -k n2.wks --in c.pem --storepass file:l1.pw "${IT[@]}"
expect_err 2 'not valid UTF-8' "22.6 import-certs creating a store"
wks genkeypair -k n2.wks -a g --dname CN=g --keyalg EC --storepass file:l1.pw "${IT[@]}"
expect_err 2 'not valid UTF-8' "22.6 genkeypair creating a store"
wks import-keystore --srckeystore e.wks --srcstorepass "$SP" -k n2.wks \
	--storepass file:l1.pw "${IT[@]}"
expect_err 2 'not valid UTF-8' "22.6 import-keystore creating a store"
wks convert --in all.p12 --inpass pass:out -o n2.wks --outpass file:l1.pw "${IT[@]}"
expect_err 2 '--outpass: the new store password is not valid UTF-8' "22.6 convert to a new store"
check "22.6 no store written by any of them" [ ! -e n2.wks ]
h=$(sha n1.wks)
wks passwd -k n1.wks --storepass file:u8.pw --new-storepass file:l1.pw "${IT[@]}"
expect_err 2 '--new-storepass: the new store password is not valid UTF-8' "22.6 passwd"
wks import-key -k n1.wks -a k --key k.pem --chain c.pem --storepass file:u8.pw \
	--keypass file:l1.pw "${IT[@]}"
expect_err 2 '--keypass: the new key password is not valid UTF-8.*could never open this key' \
	"22.6 import-key --keypass"
unchanged n1.wks "$h" "22.6 passwd, import-key: refused"
wks import-key -k n1.wks -a k --key k.pem --chain c.pem --storepass file:u8.pw "${IT[@]}"
expect 0 "22.6 import-key with the (UTF-8) store password"
h=$(sha n1.wks)
wks keypasswd -k n1.wks -a k --storepass file:u8.pw --new-keypass file:l1.pw "${IT[@]}"
expect_err 2 '--new-keypass: the new key password is not valid UTF-8' "22.6 keypasswd"
unchanged n1.wks "$h" "22.6 keypasswd: refused"
# Under the option: taken, with a warning; and then used as given.
wks create -k n3.wks --storepass file:l1.pw --allow-non-utf8-password "${IT[@]}"
expect_err 0 'warning: the new store password is not valid UTF-8' "22.6 create --allow-non-utf8-password"
wks import-key -k n3.wks -a k --key k.pem --chain c.pem --storepass file:l1.pw "${IT[@]}"
expect 0 "22.6 an existing Latin-1 store password opens the store (bytes as given)"
wks passwd -k n3.wks --storepass file:l1.pw --new-storepass file:u8.pw "${IT[@]}"
expect 0 "22.6 passwd from a Latin-1 password to UTF-8"
wks export-key -k n3.wks -a k --storepass file:u8.pw
expect 0 "22.6 ... and the key moved with it"
# The short-password warning names the FIPS minimum too (14 bytes).
wks create -k n4.wks --storepass pass:abc "${IT[@]}"
expect_err 0 'the store password has only 3 characters; keytool requires at least 6, and wolfJCE on a FIPS build of wolfCrypt at least 14 bytes' \
	"22.6 the short-password warning names the FIPS minimum"

# ---- issue 22, item 9: passwd changes the keys that had the store password ------

# k1 and the secret key s1 have the store password, own has its own;
# c is a certificate.  A reference that gives only the store password
# must go on opening k1 once its password file holds the new one.
wks create -k r.wks "${S[@]}" "${IT[@]}"
wks import-key -k r.wks -a k1 --key k.pem --chain c.pem "${S[@]}" "${IT[@]}"
wks import-key -k r.wks -a own --key k.pem --chain c.pem --keypass pass:own-key-pw "${S[@]}" "${IT[@]}"
wks import-secret -k r.wks -a s1 --generate aes-128 "${S[@]}" "${IT[@]}"
wks import-cert -k r.wks -a c --cert odd.pem "${S[@]}" "${IT[@]}"
expect 0 "22.9 material"
cp r.wks r2.wks
cp r.wks r3.wks
wks passwd -k r.wks "${S[@]}" --new-storepass pass:new-store-pw "${IT[@]}"
expect 0 "22.9 passwd"
expect_out 0 '^Store password changed; 2 of 3 key entries had the old store password as key password and now have the new one; 1 kept its own password: "own"$' \
	"22.9 passwd says what it did, naming the key it kept"
wks export-key -k r.wks -a k1 --storepass pass:new-store-pw
expect 0 "22.9 k1 opens with the new store password alone"
check "22.9 ... and is the key" cmp -s <(openssl pkey -in "$T/out" -outform DER) k.norm
wks export-key -k r.wks -a s1 --storepass pass:new-store-pw
expect 0 "22.9 the secret key opens with the new store password"
wks export-key -k r.wks -a own --storepass pass:new-store-pw --keypass pass:own-key-pw
expect 0 "22.9 own kept its own password"
wks verify -k r.wks --storepass pass:new-store-pw --keypass-for own=pass:own-key-pw
expect 0 "22.9 verify: every key with the new store password (own with its own)"
python3 "$WKSDUMP" dump --password new-store-pw r.wks >dump.json || true
check "22.9 wksdump: store MAC and keys under the new store password" python3 -c '
import json
d = json.load(open("dump.json"))["files"]["r.wks"]
assert d["store_integrity"]["verified"] is True, d["store_integrity"]
st = {e["alias"]: e.get("key_status") for e in d["entries"]}
assert st == {"k1": "ok", "s1": "ok", "own": "integrity_failure", "c": None}, st'
# --keys (the former way to ask for this): the same.
wks passwd -k r3.wks "${S[@]}" --new-storepass pass:new-store-pw --keys "${IT[@]}"
expect_out 0 '2 of 3 key entries had the old store password as key password and now have the new one' \
	"22.9 passwd --keys: as the default"
# --store-only: the store password alone; every key keeps its password.
wks passwd -k r2.wks "${S[@]}" --new-storepass pass:new-store-pw --store-only "${IT[@]}"
expect_out 0 '^Store password changed \(--store-only\); the key entries keep their passwords' \
	"22.9 passwd --store-only"
wks export-key -k r2.wks -a k1 --storepass pass:new-store-pw --keypass pass:nothing
expect 4 "22.9 --store-only: k1 does not open with the new store password"
wks export-key -k r2.wks -a k1 --storepass pass:new-store-pw --keypass "$SP"
expect 0 "22.9 --store-only: k1 still opens with the old one"
python3 "$WKSDUMP" dump --password new-store-pw --key-password pw r2.wks >dump.json || true
check "22.9 --store-only: wksdump: new store password, every key on its old one" python3 -c '
import json
d = json.load(open("dump.json"))["files"]["r2.wks"]
assert d["store_integrity"]["verified"] is True
st = {e["alias"]: e.get("key_status") for e in d["entries"]}
assert st == {"k1": "ok", "s1": "ok", "own": "integrity_failure", "c": None}, st'
wks passwd -k r2.wks --storepass pass:new-store-pw --new-storepass pass:x-store-pw --store-only --keys
expect_err 2 '--store-only and --keys exclude each other' "22.9 --store-only with --keys"

# ---- 17: pass:TEXT leaves /proc/PID/cmdline once parsed --------------------------

if [ "$(head -c 4 "$WKS_BIN" | od -An -c | tr -d ' ')" != '177ELF' ]; then
	echo "SKIP: 17 /proc/PID/cmdline: $WKS_BIN is a wrapper, not the wks process"
else
	mkfifo kp.fifo
	secret="argv-secret-$$"
	# The key password comes from a FIFO: wks waits there, after parsing.
	"$WKS_BIN" export-key -k e.wks -a k --storepass "pass:pw" \
		--keypass file:kp.fifo --outpass "pass:$secret" "${IT[@]}" -o k17.pem \
		</dev/null >"$T/out" 2>"$T/err" &
	pid=$!
	wiped=0
	for _ in $(seq 1 200); do
		if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$WKS_BIN" ] &&
			! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$secret"; then
			tr '\0' ' ' <"/proc/$pid/cmdline" >cmdline.txt
			wiped=1
			break
		fi
		sleep 0.05
	done
	echo pw >kp.fifo
	set +e
	wait "$pid"
	rc=$?
	set -e
	expect 0 "17 export-key with a password from a FIFO"
	check "17 pass:TEXT wiped from /proc/PID/cmdline" [ "$wiped" = 1 ]
	check "17 the rest of the command line stays" grep -q -- '--outpass pass: ' cmdline.txt
fi

# ---- issue 22, 1: a PKCS#12 password is every byte of it -------------------------

# A password file whose line holds a NUL: export-p12 protects the whole
# file (MAC, key, certificates) with all its bytes, and import-p12 reads it
# back with the same file; the bytes before the NUL open nothing.
printf 'p12\000pass\n' >nul.pw
printf 'p12\n' >short.pw
wks export-p12 -k e.wks -a k -o nul.p12 --outpass file:nul.pw "${S[@]}" "${IT[@]}"
expect 0 "22.1 export-p12 with a NUL in the password"
wks import-p12 -k nul.wks --in nul.p12 --inpass file:nul.pw "${S[@]}" "${IT[@]}"
expect 0 "22.1 import-p12 with the same password file"
wks export-key -k nul.wks -a k "${S[@]}"
check "22.1 import-p12: the key" cmp -s <(openssl pkey -in "$T/out" -outform DER) k.norm
wks export-cert -k nul.wks -a k "${S[@]}"
check "22.1 import-p12: the certificate" cmp -s "$T/out" c.pem
wks import-p12 -k short.wks --in nul.p12 --inpass file:short.pw "${S[@]}" "${IT[@]}"
expect_err 4 'integrity check failed' "22.1 the bytes before the NUL do not open it"

# ---- issue 22, 2: the key-derivation budget of one conversion ---------------------

# A JCEKS of 20 junk key entries (16 bytes that decrypt to nothing, 1000
# PBE iterations, a salt each, a certificate each), and a budget of 5000
# iterations: five keys are tried, the other fifteen skipped at once with
# the budget named; a PKCS#12 whose certificates would pass it is refused.
cat >junk.py <<'EOF'
import hashlib, struct, subprocess
cert = subprocess.run(["openssl", "x509", "-in", "c.pem", "-outform", "DER"],
                      capture_output=True, check=True).stdout
def tlv(t, b):
    n = len(b)
    return bytes([t]) + (bytes([n]) if n < 128 else bytes([0x81, n])) + b
oid = tlv(6, bytes([0x2B, 6, 1, 4, 1, 0x2A, 2, 0x13, 1]))  # 1.3.6.1.4.1.42.2.19.1
out = bytearray(struct.pack(">III", 0xCECECECE, 2, 20))
for i in range(20):
    params = tlv(0x30, tlv(4, b"salt" + struct.pack(">I", i)) + tlv(2, b"\x03\xe8"))
    key = tlv(0x30, tlv(0x30, oid + params) + tlv(4, bytes(range(i, i + 16))))
    alias = b"k%d" % i
    out += struct.pack(">IH", 1, len(alias)) + alias + struct.pack(">qI", 0, len(key)) + key
    out += struct.pack(">IH", 1, 5) + b"X.509" + struct.pack(">I", len(cert)) + cert
out += hashlib.sha1("storepw".encode("utf-16-be") + b"Mighty Aphrodite" + out).digest()
open("junk.jceks", "wb").write(out)
EOF
python3 junk.py
printf 'libwks.convert.maxKdfIterations=5000\n' >budget.properties
WKS_PROPERTIES=$T/budget.properties wks import-keystore -k junk.wks --srckeystore junk.jceks \
	--srcstorepass pass:storepw "${S[@]}" "${IT[@]}"
expect 1 "22.2 import-keystore of junk keys: nothing imported"
check "22.2 five keys tried" [ "$(grep -c 'key password incorrect' "$T/out")" = 5 ]
check "22.2 fifteen skipped for the budget" \
	[ "$(grep -c 'libwks.convert.maxKdfIterations' "$T/out")" = 15 ]
ossl pkcs12 -export -inkey k.pem -in c.pem -name b -passout pass:out -iter 1000 -maciter -out b.p12
printf 'libwks.convert.maxKdfIterations=1500\n' >budget.properties
WKS_PROPERTIES=$T/budget.properties wks import-p12 -k m.wks --in b.p12 --inpass pass:out "${S[@]}" "${IT[@]}"
expect_err 9 'libwks.convert.maxKdfIterations' "22.2 import-p12 past the budget"
wks import-p12 -k m.wks --in b.p12 --inpass pass:out "${S[@]}" "${IT[@]}"
expect 0 "22.2 import-p12 of the same file with the default budget"

# ---- issue 22, item 3: --force never hands a file to another user -----------------

# A name in a sticky folder (as /tmp) is anyone's to create first.  With
# --force, root used to write its output into that user's file, keeping
# the owner (the key was theirs to read) and, for create, the mode (a
# 0666 store of root's, the planter's to change).  Another user's regular
# file is now refused, as their FIFO is; the caller's own file is
# replaced by a new one of the caller's.  An edit of a store (not an
# output) still keeps the store's owner (editing.sh, 13).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 &&
	getent group nogroup >/dev/null; then
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	owner3() { stat -c '%U:%G %a' "$1"; }
	chmod 755 "$T" # nobody works in the sticky folder in here
	mkdir -m 1777 sticky3
	wks genkeypair -k s3.wks -a k --keyalg EC --dname CN=s3 "${S[@]}" "${IT[@]}"
	expect 0 "3 a store"
	as_nobody sh -c 'umask 0; echo planted >sticky3/key.pem;
		echo planted >sticky3/new.wks; echo planted >sticky3/chain.pem'
	for f in key.pem new.wks chain.pem; do
		check "3 nobody planted sticky3/$f, 0666" [ "$(owner3 sticky3/$f)" = "nobody:nogroup 666" ]
	done
	wks export-key -k s3.wks -a k -o sticky3/key.pem --force "${S[@]}"
	expect_err 6 'sticky3/key.pem: is owned by another user \(uid [0-9]+\): not replaced, even with --force' \
		"3 export-key --force over nobody's file"
	wks create -k sticky3/new.wks --force "${S[@]}" "${IT[@]}"
	expect_err 6 'owned by another user' "3 create --force over nobody's 0666 file"
	wks export-cert -k s3.wks -a k -o sticky3/chain.pem --force "${S[@]}"
	expect_err 6 'owned by another user' "3 export-cert --force over nobody's file"
	wks export-p12 -k s3.wks -a k -o sticky3/key.pem --force "${S[@]}" \
		--outpass pass:out "${IT[@]}"
	expect_err 6 'owned by another user' "3 export-p12 --force over nobody's file"
	for f in key.pem new.wks chain.pem; do
		check "3 sticky3/$f: nobody's, as it was" \
			[ "$(owner3 sticky3/$f):$(cat sticky3/$f)" = "nobody:nogroup 666:planted" ]
	done
	wks export-key -k s3.wks -a k -o sticky3/key.pem "${S[@]}"
	expect_err 7 'exists' "3 without --force: exists, as before"
	# Root's own file there: replaced by a new file of root's, 0600 for
	# a key or a store, whatever its mode was.
	echo mine >sticky3/own.pem
	chmod 666 sticky3/own.pem
	wks export-key -k s3.wks -a k -o sticky3/own.pem --force "${S[@]}"
	expect 0 "3 export-key --force over root's own file"
	check "3 root's file: a key, root's, 0600" \
		[ "$(owner3 sticky3/own.pem):$(head -1 sticky3/own.pem)" = "root:root 600:-----BEGIN PRIVATE KEY-----" ]
	cp s3.wks sticky3/own.wks
	chmod 640 sticky3/own.wks
	wks create -k sticky3/own.wks --force "${S[@]}" "${IT[@]}"
	expect 0 "3 create --force over root's own store"
	check "3 root's own store: root's, its mode kept" [ "$(owner3 sticky3/own.wks)" = "root:root 640" ]
	# nobody's own output, replaced by nobody: nobody's.
	cp s3.wks sticky3/nobody.wks
	chown nobody:nogroup sticky3/nobody.wks
	as_nobody sh -c 'umask 022; echo old >sticky3/mine.pem'
	set +e
	as_nobody setsid -w "$(other_user_path "$WKS_BIN")" export-key -k "$T/sticky3/nobody.wks" -a k \
		-o "$T/sticky3/mine.pem" --force "${S[@]}" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	expect 0 "3 nobody: export-key --force over its own file"
	check "3 nobody's own file: a key, nobody's, 0600" \
		[ "$(owner3 sticky3/mine.pem):$(head -1 sticky3/mine.pem)" = "nobody:nogroup 600:-----BEGIN PRIVATE KEY-----" ]
	# An edit by root of nobody's store: still nobody's (not an output).
	wks import-secret -k sticky3/nobody.wks -a s --generate aes-128 "${S[@]}" "${IT[@]}"
	expect 0 "3 root edits nobody's store"
	check "3 the edited store is still nobody's" [ "$(owner3 sticky3/nobody.wks)" = "nobody:nogroup 600" ]
else
	echo "SKIP: 3 another user's file (needs root, setpriv and user nobody)"
fi

# ---- issue 22, item 4: a store's path cannot forge a reference block ------------

# A folder whose name holds a whole reference block (a tenant's choice of
# name, a symlink): export-key --reference wrote the path into its note
# as it was, so the file held that block above the real one, and readers
# take the first.  The note escapes it now; the block names the real
# store.
forged=$'f4\n-----BEGIN WKS KEY REFERENCE-----\nd2tzOi90bXAvZm9yZ2VkLndrcz9hbGlhcz14JnN0b3JlcGFzcz1lbnY6RVZJTA==\n-----END WKS KEY REFERENCE-----\nz'
mkdir "$forged"
wks genkeypair -k "$forged/s.wks" -a k --keyalg EC --dname CN=f4 "${S[@]}" "${IT[@]}"
expect 0 "4 a store in a folder whose name holds a reference block"
echo pw >pwfile4
wks export-key -k "$forged/s.wks" -a k --reference --ref-storepass file:pwfile4 \
	-o ref4.pem "${S[@]}"
expect 0 "4 export-key --reference of that store"
n=$(grep -cx -- '-----BEGIN WKS KEY REFERENCE-----' ref4.pem || true)
check "4 the file holds one BEGIN line (it held $n)" [ "$n" = 1 ]
check "4 every line above the block is a note line" python3 - ref4.pem <<'EOF'
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
i = lines.index(b"-----BEGIN WKS KEY REFERENCE-----")
sys.exit(0 if i == 5 and all(l.startswith(b"# ") for l in lines[:i]) else 1)
EOF
check "4 the folder's name is in the note, escaped" \
	grep -qF "# $(readlink -f "$T")/f4\\x0a-----BEGIN WKS KEY REFERENCE-----\\x0ad2tz" ref4.pem
check "4 the block names the real store" python3 - ref4.pem "$(readlink -f "$T")/$forged/s.wks" <<'EOF'
import base64, sys, urllib.parse
t = open(sys.argv[1]).read()
b = t.split("-----BEGIN WKS KEY REFERENCE-----\n")[1].split("-----END")[0]
uri = base64.b64decode("".join(b.split())).decode()
path = urllib.parse.unquote(uri[4:].split("?")[0])
sys.exit(0 if path == sys.argv[2] and "alias=k&" in uri else 1)
EOF

# ---- issue 22 item 5: an edit whose report cannot be written ---------------------

# Standard output full (/dev/full) or a pipe whose reader has gone: an
# edit that saved exits 0 with a warning (not 6, not SIGPIPE's 141), and
# the store holds the change; a command that changed nothing exits 6.
mkfifo gone.fifo
ossl req -x509 -new -key k.pem -subj "/CN=five" -days 30 -out c5.pem
# out5 MODE ARGS...: wks with stdout to /dev/full (full) or into a pipe
# without a reader (pipe: gone.fifo opened read-write, a writer opened,
# the first closed); stderr in $T/err, status in $rc.
out5() {
	local mode=$1
	shift
	set +e
	if [ "$mode" = full ]; then
		setsid -w "$WKS_BIN" "$@" >/dev/full 2>"$T/err"
		rc=$?
	else
		# shellcheck disable=SC2094 # (opened, not read)
		exec 8<>gone.fifo 9>gone.fifo 8<&-
		setsid -w "$WKS_BIN" "$@" >&9 2>"$T/err"
		rc=$?
		exec 9>&-
	fi
	set -e
}
# saved5 WHAT [warns]: the edit exited 0 (and with "warns" said on stderr
# that its report was lost, the change saved).
saved5() {
	if [ "$rc" -eq 0 ] && ! grep -q '^wks: cannot write' "$T/err"; then
		ok
	else
		bad "5 $1: exit $rc, expected 0 (the change is saved)"
	fi
	if [ "${2-}" = warns ]; then
		check "5 $1: the warning" grep -q 'warning: the change is saved, but its report could not be written to standard output' "$T/err"
	fi
}
# mode5: the mode of the next edit, alternately full and pipe, each
# round starting where the last began + 1; the default run makes one
# round (each edit meets one of the two), WKS_TEST_FULL=1 two (both).
n5=0
mode5() {
	if [ $(((n5 + round) % 2)) -eq 0 ]; then m=full; else m=pipe; fi
	n5=$((n5 + 1))
}
case ${WKS_TEST_FULL:-0} in 0) rounds5=0 ;; *) rounds5="0 1" ;; esac
for round in $rounds5; do
	st=i5r$round.wks
	n5=0
	mode5
	out5 "$m" create -k "$st" "${S[@]}" "${IT[@]}"
	saved5 "create ($m)"
	wks list -k "$st" "${S[@]}"
	expect 0 "5 create ($m): the store is there"
	mode5
	out5 "$m" import-secret -k "$st" -a sec --generate aes-128 "${S[@]}" "${IT[@]}"
	saved5 "import-secret ($m)" warns
	wks list -k "$st" -a sec "${S[@]}"
	expect 0 "5 import-secret ($m): the entry is there"
	mode5
	out5 "$m" import-key -k "$st" -a key --key k.pem --chain c.pem "${S[@]}" "${IT[@]}"
	saved5 "import-key ($m)" warns
	wks list -k "$st" -a key "${S[@]}"
	expect 0 "5 import-key ($m): the entry is there"
	mode5
	out5 "$m" import-cert -k "$st" -a crt --cert c.pem "${S[@]}" "${IT[@]}"
	saved5 "import-cert ($m)" warns
	wks list -k "$st" -a crt "${S[@]}"
	expect 0 "5 import-cert ($m): the entry is there"
	mode5
	out5 "$m" import-p12 -k "$st" --in k.p12 --inpass pass:out -a p12 "${S[@]}" "${IT[@]}"
	saved5 "import-p12 ($m)" warns
	wks list -k "$st" -a p12 "${S[@]}"
	expect 0 "5 import-p12 ($m): the entry is there"
	mode5
	out5 "$m" import-keystore -k "$st" --srckeystore k.p12 --srcstorepass pass:out \
		--srcalias nochain --destalias iks "${S[@]}" "${IT[@]}"
	saved5 "import-keystore ($m)" warns
	wks list -k "$st" -a iks "${S[@]}"
	expect 0 "5 import-keystore ($m): the entry is there"
	mode5
	out5 "$m" import-certs -k "$st" --in c5.pem --alias-prefix ca- "${S[@]}" "${IT[@]}"
	saved5 "import-certs ($m)" warns
	wks list -k "$st" -a ca-five "${S[@]}"
	expect 0 "5 import-certs ($m): the entry is there"
	mode5
	out5 "$m" genkeypair -k "$st" -a gen --keyalg EC --dname CN=gen "${S[@]}" "${IT[@]}"
	saved5 "genkeypair ($m)" warns
	wks list -k "$st" -a gen "${S[@]}"
	expect 0 "5 genkeypair ($m): the entry is there"
	mode5
	out5 "$m" rename -k "$st" -a crt --new-alias crt2 "${S[@]}" "${IT[@]}"
	saved5 "rename ($m)"
	wks list -k "$st" -a crt2 "${S[@]}"
	expect 0 "5 rename ($m): the entry is renamed"
	mode5
	out5 "$m" convert --in k.p12 -o "c5r$round.wks" --inpass pass:out --outpass "$SP" "${IT[@]}"
	saved5 "convert to WKS ($m)" warns
	wks list -k "c5r$round.wks" "${S[@]}"
	expect 0 "5 convert to WKS ($m): the store is there"
	mode5
	out5 "$m" convert --in "$st" -o "c5r$round.p12" --inpass "$SP" --outpass pass:out "${IT[@]}"
	saved5 "convert to PKCS#12 ($m)" warns
	check "5 convert to PKCS#12 ($m): the file is there" sh -c "openssl pkcs12 -in c5r$round.p12 -passin pass:out -noout >/dev/null 2>&1"
	mode5
	out5 "$m" keypasswd -k "$st" -a sec --new-keypass pass:newkey "${S[@]}" "${IT[@]}"
	saved5 "keypasswd ($m)"
	wks export-key -k "$st" -a sec --keypass pass:newkey "${S[@]}"
	expect 0 "5 keypasswd ($m): the new key password opens it"
	mode5
	out5 "$m" delete -k "$st" -a crt2 "${S[@]}" "${IT[@]}"
	saved5 "delete ($m)"
	wks list -k "$st" -a crt2 "${S[@]}"
	expect 3 "5 delete ($m): the entry is gone"
	for m in full pipe; do
		out5 "$m" passwd -k "$st" --new-storepass "pass:pw5$m" "${S[@]}" "${IT[@]}"
		saved5 "passwd ($m)" warns
		wks list -k "$st" --storepass "pass:pw5$m"
		expect 0 "5 passwd ($m): the new password opens the store"
		S=(--storepass "pass:pw5$m")
	done
	S=(--storepass "$SP")
	# Read-only commands: what they print is all they do.
	for cmd in "printcert --file c.pem" --help --version "list --help" \
		"list -k e.wks $SP" "export-key -k e.wks -a k $SP" \
		"export-cert -k e.wks -a k $SP" "verify -k e.wks $SP"; do
		mode5
		# shellcheck disable=SC2086 # (words)
		out5 "$m" ${cmd/pass:/--storepass pass:}
		expect_err 6 '^wks: cannot write to standard output' "5 $cmd ($m): exit 6"
	done
	for cmd in "printcert --file c.pem" --help --version; do
		# shellcheck disable=SC2086 # (words)
		out5 full $cmd
		expect_err 6 '^wks: cannot write to standard output' "5 $cmd (full): exit 6"
	done
done

# ---- issue 22 item 7: passwords before the lock; who holds it; --wait -------------

wks create -k l7.wks "${S[@]}" "${IT[@]}"
# An edit waiting for its password (here from a FIFO nobody writes yet)
# holds no lock: another edit runs to its end meanwhile.
mkfifo pw7.fifo
"$WKS_BIN" import-secret -k l7.wks -a fifo --generate aes-128 --storepass file:pw7.fifo \
	"${IT[@]}" </dev/null >/dev/null 2>"$T/err7" &
p7=$!
for _ in $(seq 1 400); do
	for fd in /proc/"$p7"/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in */pw7.fifo) break 2 ;; esac
	done
	sleep 0.05
done
set +e
timeout 20 setsid -w "$WKS_BIN" import-secret -k l7.wks -a meanwhile --generate aes-128 \
	"${S[@]}" "${IT[@]}" >"$T/out" 2>"$T/err"
rc=$?
set -e
expect 0 "7 an edit runs while another waits for its password (a file: FIFO)"
echo pw >pw7.fifo
set +e
wait "$p7"
rc=$?
set -e
expect 0 "7 the edit that waited for its password"
wks list -k l7.wks "${S[@]}"
check "7 both edits are in the store" sh -c "grep -q '^fifo ' '$T/out' && grep -q '^meanwhile ' '$T/out'"

# The same at a terminal's prompts (a pty): at each prompt of passwd
# (the store password, the new one) another edit completes, and passwd
# then saves its change over theirs, keeping them.
cat >pty7.py <<'EOF'
import os, pty, select, subprocess, sys
wks, store = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(wks, [wks, "passwd", "-k", store, "--iterations", "10000"])
buf = b""
def until(word):
    global buf
    while word not in buf:
        r, _, _ = select.select([fd], [], [], 60)
        b = os.read(fd, 1024) if r else b""
        if not b:
            sys.exit("no %r from wks passwd; got %r" % (word, buf))
        buf += b
    buf = buf[buf.index(word) + len(word):]
def edit(alias):  # without a terminal; 124: still waiting after 15 s
    try:
        return subprocess.run([wks, "import-secret", "-k", store, "-a", alias,
                               "--generate", "aes-128", "--storepass", "pass:pw",
                               "--iterations", "10000"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True, timeout=15).returncode
    except subprocess.TimeoutExpired:
        return 124
until(b"Keystore password for")
e1 = edit("at-prompt-1")
os.write(fd, b"pw\n")
until(b"New keystore password")
e2 = edit("at-prompt-2")
os.write(fd, b"pw7new\n")
until(b"Retype")
os.write(fd, b"pw7new\n")
_, st = os.waitpid(pid, 0)
print("edit1=%d edit2=%d passwd=%d" % (e1, e2, os.waitstatus_to_exitcode(st)))
EOF
if [ "$(head -c 4 "$WKS_BIN" | tail -c 3)" = ELF ]; then
	r7=$(python3 pty7.py "$WKS_BIN" l7.wks 2>&1 || true)
	check "7 edits complete while passwd waits at its prompts ($r7)" [ "$r7" = "edit1=0 edit2=0 passwd=0" ]
	wks list -k l7.wks --storepass pass:pw7new
	check "7 passwd kept the edits made at its prompts" sh -c \
		"grep -q '^at-prompt-1 ' '$T/out' && grep -q '^at-prompt-2 ' '$T/out'"
else
	echo "SKIP: 7 pty prompts: $WKS_BIN is a wrapper"
	wks passwd -k l7.wks --new-storepass pass:pw7new "${S[@]}" "${IT[@]}"
fi

# A lock held by another process: after about a second the waiting edit
# says so with the holder's pid; --wait 1 gives up (exit 10), nothing
# changed.
cat >hold7.py <<'EOF'
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").write("%d" % os.getpid())
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
EOF
python3 hold7.py l7.wks held7 release7 &
h7=$!
for _ in $(seq 1 1200); do [ -s held7 ] && break; sleep 0.05; done
hpid=$(cat held7)
h=$(sha l7.wks)
"$WKS_BIN" import-secret -k l7.wks -a waited --generate aes-128 --storepass pass:pw7new \
	"${IT[@]}" </dev/null >/dev/null 2>"$T/err7" &
p7=$!
wks import-secret -k l7.wks -a busy --generate aes-128 --storepass pass:pw7new "${IT[@]}" --wait 1
expect_err 10 "busy: the store is locked by another edit \\(process $hpid, python3\\); gave up after 1 s" "7 --wait 1 on a held lock: busy, naming the holder"
unchanged l7.wks "$h" "7 --wait 1 on a held lock"
for _ in $(seq 1 600); do
	grep -q "waiting for the store's lock" "$T/err7" && break
	sleep 0.05
done
cp "$T/err7" "$T/err"
rc=0
expect_err 0 "note: waiting for the store's lock, held by another edit \\(process $hpid, python3\\) \\(--wait SECONDS" "7 a wait says who holds the lock"
touch release7
wait "$h7" || true
set +e
wait "$p7"
rc=$?
set -e
expect 0 "7 the edit that waited completes when the lock is let go"
wks list -k l7.wks -a waited --storepass pass:pw7new
expect 0 "7 its change is in the store"
wks list -k l7.wks -a busy --storepass pass:pw7new
expect 3 "7 the edit that gave up changed nothing"
wks list -k l7.wks --wait 1 --storepass pass:pw7new
expect_err 2 'option --wait does not apply' "7 --wait is for edits"

# ---- issue 24: passwd derives before the lock; a store changed meanwhile -----------

# passwd re-encrypts the keys (batched derivations) on the store as it was
# before it took the lock, and under the lock puts in only entries still
# as they were.  Here another edit holds the lock while passwd waits and
# gives key b a password of its own meanwhile (the file rewritten under
# that lock): passwd must not put back b on the store password; it moves
# the keys as they are now (a), keeps b, and says so.
wks import-secret -k race.wks -a a --generate aes-128 "${S[@]}" "${IT[@]}"
wks import-secret -k race.wks -a b --generate aes-128 "${S[@]}" "${IT[@]}"
cp race.wks race2.wks
wks keypasswd -k race2.wks -a b "${S[@]}" --new-keypass pass:own24 "${IT[@]}"
expect 0 "24 material: b with its own password in the store that comes next"
cat >hold24.py <<'EOF'
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").write("%d" % os.getpid())
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
data = open(sys.argv[4], "rb").read()
os.ftruncate(fd, 0)
os.pwrite(fd, data, 0)
os.fsync(fd)
EOF
python3 hold24.py race.wks held24 go24 race2.wks &
h24=$!
for _ in $(seq 1 1200); do [ -s held24 ] && break; sleep 0.05; done
"$WKS_BIN" passwd -k race.wks "${S[@]}" --new-storepass pass:pw24new "${IT[@]}" \
	</dev/null >"$T/out24" 2>"$T/err24" &
p24=$!
for _ in $(seq 1 1200); do
	grep -q "waiting for the store's lock" "$T/err24" && break
	sleep 0.05
done
touch go24
wait "$h24" || true
set +e
wait "$p24"
rc=$?
set -e
cp "$T/out24" "$T/out"
cp "$T/err24" "$T/err"
expect_out 0 '^Store password changed; 1 of 2 key entries had the old store password as key password and now has the new one; 1 kept its own password: "b"$' \
	"24 passwd after a change made while it waited: the keys as they are now"
wks export-key -k race.wks -a a --storepass pass:pw24new
expect 0 "24 a moved to the new store password"
wks export-key -k race.wks -a b --storepass pass:pw24new --keypass pass:own24
expect 0 "24 b kept the password it was given meanwhile"

# ---- issue 22 item 8: convert's output format -------------------------------------

wks convert --in e.wks -o out8.wks --inpass "$SP" --outpass pass:out "${IT[@]}"
expect_err 2 'out8\.wks: the name says WKS, but a WKS input converts to PKCS#12' "8 convert WKS to a .wks name: refused"
check "8 no out8.wks written" [ ! -e out8.wks ]
wks convert --in k.p12 -o out8.p12 --inpass pass:out --outpass "$SP" "${IT[@]}"
expect_err 2 'the name says PKCS#12, but a JKS, JCEKS or PKCS#12 input converts to WKS' "8 convert PKCS#12 to a .p12 name: refused"
check "8 no out8.p12 written" [ ! -e out8.p12 ]
wks convert --in e.wks -o out8.jks --inpass "$SP" --outpass pass:out "${IT[@]}"
expect_err 2 'the name says JKS' "8 convert to a .jks name: refused"
wks convert --in e.wks -o out8.wks --deststoretype wks --inpass "$SP" --outpass pass:out "${IT[@]}"
expect_err 2 'a WKS input converts to PKCS#12 only, not WKS' "8 --deststoretype wks for a WKS input"
wks convert --in e.wks -o out8.wks --deststoretype jks --inpass "$SP" --outpass pass:out "${IT[@]}"
expect_err 2 '--deststoretype: "jks" is not wks or pkcs12' "8 --deststoretype jks"
wks convert --in e.wks -o out8.wks --deststoretype pkcs12 --inpass "$SP" --outpass pass:out "${IT[@]}"
expect 0 "8 --deststoretype pkcs12 writes PKCS#12 under any name"
check "8 --deststoretype pkcs12: openssl reads it" openssl pkcs12 -in out8.wks -passin pass:out -noout
wks convert --in k.p12 -o out8-wks --inpass pass:out --outpass "$SP" "${IT[@]}"
expect 0 "8 a name without an extension: the format follows the input"
wks list -k out8-wks "${S[@]}"
expect 0 "8 ... a WKS store"

# ---- issue 22 item 11: one report format; the "new keystore" note ---------------

wks import-keystore --srckeystore k.p12 --srcstorepass pass:out -k n11a.wks "${S[@]}" "${IT[@]}"
expect_err 0 'n11a\.wks: note: a new keystore was created' "11 import-keystore into a missing store: the note"
wks import-certs -k n11b.wks --in c.pem "${S[@]}" "${IT[@]}"
expect_err 0 'n11b\.wks: note: a new keystore was created' "11 import-certs into a missing store: the note"
wks import-certs -k n11b.wks --in odd.pem "${S[@]}" "${IT[@]}"
check "11 import-certs into an existing store: no note" not grep -q 'new keystore' "$T/err"
# A JKS of one trusted certificate (written here: keytool's format is a
# SHA-1 over the password's UTF-16BE, "Mighty Aphrodite" and the body).
python3 - c.pem <<'EOF'
import base64, hashlib, struct, sys
pem = open(sys.argv[1]).read()
der = base64.b64decode("".join(pem.split("-----")[2].split()))
utf = lambda s: struct.pack(">H", len(s)) + s.encode()
body = b"\xfe\xed\xfe\xed" + struct.pack(">ii", 2, 1)
body += struct.pack(">i", 2) + utf("ca") + struct.pack(">q", 1000)
body += utf("X.509") + struct.pack(">i", len(der)) + der
pw = "pw".encode("utf-16-be") + b"Mighty Aphrodite"
open("t11.jks", "wb").write(body + hashlib.sha1(pw + body).digest())
EOF
wks convert --in t11.jks -o n11j.wks --inpass "$SP" --outpass "$SP" "${IT[@]}"
expect 0 "11 convert of a JKS"
check "11 convert of a JKS: the entry line" grep -qx 'imported: "ca" (trusted certificate)' "$T/out"
check "11 convert of a JKS: the summary" grep -qx '1 entry: 1 imported, 0 skipped' "$T/out"
wks convert --in k.p12 -o n11p.wks --inpass pass:out --outpass "$SP" "${IT[@]}"
expect 0 "11 convert of a PKCS#12"
check "11 convert of a PKCS#12: the same entry lines" grep -qx 'imported: "nochain" (private key, 1 certificate)' "$T/out"
check "11 convert of a PKCS#12: the same summary" grep -qx '1 entry: 1 imported, 0 skipped' "$T/out"
wks import-p12 -k n11a.wks --in k.p12 --inpass pass:out -a p12 "${S[@]}" "${IT[@]}"
expect 0 "11 import-p12"
check "11 import-p12: the same lines" sh -c "grep -qx 'imported: \"p12\" (private key, 1 certificate)' '$T/out' && grep -qx '1 entry: 1 imported, 0 skipped' '$T/out'"
wks import-secret -k n11a.wks -a sec --generate aes-256 "${S[@]}" "${IT[@]}"
wks convert --in n11a.wks -o n11.p12 --inpass "$SP" --outpass pass:out "${IT[@]}"
expect 0 "11 convert of a WKS store"
check "11 convert of a WKS store: one line per entry" sh -c "grep -qx 'exported: \"nochain\" (private key, 1 certificate)' '$T/out' && grep -qx 'exported: \"sec\" (secret key, AES 256 bits)' '$T/out'"
check "11 convert of a WKS store: the summary" grep -qx '3 entries: 3 exported, 0 skipped' "$T/out"

# ---- issue 22 item 12: messages ----------------------------------------------------

wks list -k e.wks --storepass file:MISSING
expect_err 6 '^wks: --storepass file:MISSING: cannot open: No such file' "12 file:MISSING names the option"
wks export-key -k e.wks -a k "${S[@]}" --keypass file:MISSING2
expect_err 6 '^wks: --keypass file:MISSING2: cannot open' "12 --keypass file:MISSING names the option"
wks list -k k.pem "${S[@]}"
expect_err 5 'k\.pem: not a WKS keystore: a PEM private key; import it into a store with: wks import-key' "12 a PEM key as -k"
wks list -k c.pem "${S[@]}"
expect_err 5 'c\.pem: not a WKS keystore: PEM certificates; import them with: wks import-cert' "12 a PEM certificate as -k"
: >empty12.wks
wks import-secret -k empty12.wks -a x --generate aes-128 "${S[@]}" "${IT[@]}"
expect_err 5 'empty12\.wks: the file is empty: not a WKS keystore' "12 an empty file as -k"
long=$(head -c 70000 /dev/zero | tr '\0' a)
h=$(sha e.wks)
wks import-secret -k e.wks -a "$long" --generate aes-128 "${S[@]}" "${IT[@]}"
expect_err 9 '^wks: --alias: an alias of 70000 bytes .*at most 65535' "12 an alias over 65535 bytes: refused when given"
wks rename -k e.wks -a k --new-alias "$long" "${S[@]}" "${IT[@]}"
expect_err 9 '^wks: --new-alias: an alias of 70000 bytes' "12 a new alias over 65535 bytes"
unchanged e.wks "$h" "12 long aliases"
for kw in "-list:list" "list" "importkeystore:import-keystore" "-importkeystore:import-keystore" \
	"storepasswd:passwd" "-storepasswd:passwd" "-importcert:import-cert" "-exportcert:export-cert" \
	"-genkey:genkeypair" "-genseckey:import-secret" "-changealias:rename" "-delete:delete" \
	"-keypasswd:keypasswd" "-printcert:printcert" "-certreq:certreq"; do
	word=${kw%%:*}
	want=${kw#*:}
	[ "$word" = list ] && continue # a wks command
	wks "$word" -keystore e.wks
	expect_err 2 "unknown command \"$word\": that is keytool's; did you mean wks $want" "12 keytool's $word: did you mean wks $want"
done
wks -gencert -keystore e.wks
expect_err 2 "unknown command \"-gencert\": that is keytool's; wks signs no certificates" "12 keytool's -gencert: what to use instead"
wks frobnicate
expect_err 2 'unknown command "frobnicate" \(see wks --help\)' "12 other unknown commands as before"

end_tests
