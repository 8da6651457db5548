#!/usr/bin/env bash
# End-to-end tests of wks(1) against keytool (OpenJDK 17) where Java's
# keystores and wks meet:
#   - a keytool-made PKCS12 with chains of 1, 2 and 3 and trusted
#     certificate entries (one of them also a chain's certificate), taken
#     in by convert, import-p12 and import-keystore and written back by
#     export-p12 and convert: keytool -list -v of the round trip equals
#     the original (aliases, entry types, chain lengths, SHA-256
#     fingerprints): a chain certificate is no entry of its own;
#   - JKS and JCEKS keys whose passwords differ from the store's, given
#     one by one with --keypass-for to convert and import-keystore; the
#     hints of every message and --help name only options the command
#     takes;
#   - import-cert, import-key, import-secret and import-p12 create a
#     store that does not exist (mode 0600, readable with the password);
#   - messages: --hex that is not hex, an encrypted key without a
#     terminal, import-p12 of a Java keystore, import-key and import-cert
#     of a keystore, short store and key passwords;
#   - list: columns aligned after non-ASCII aliases (by display width),
#     DESede key sizes as keytool gives them (168 bits).
#
# usage: javainterop.sh WKS_BINARY SHARED_DIR
#
# Without keytool it prints SKIP and passes.  EC keys only and 10000
# iterations: about 30 seconds on an idle machine, mostly the 30 starts
# of keytool's JVM.  Works in a
# mktemp -d folder that it removes.  Prints "N passed, M failed" last.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
skip_without_keytool
start_tests javainterop
export LC_ALL=C.UTF-8

show_stderr() { sed 's/^/    stderr: /' "$T/err" | head -6; }
SP=store-pass-1
I=(--iterations 10000)
EC=(-keyalg EC -groupname secp256r1 -validity 30)

# ---- a keytool PKCS12: chains of 1, 2, 3; trusted certificates -------------
# The CA keys live in ca.p12; ks.p12 holds leaf3 (leaf, intermediate,
# root), leaf2 (leaf, root), self (its own certificate) and the trusted
# certificates "trusted root" (also the last of both chains), "self
# trusted" (self's certificate) and "other".  keytool writes every chain
# certificate with a friendlyName (its subject DN).
{
	KT -genkeypair -keystore ca.p12 -storetype PKCS12 -storepass $SP \
		-alias root "${EC[@]}" -dname CN=Root -ext bc:c
	KT -genkeypair -keystore ca.p12 -storetype PKCS12 -storepass $SP \
		-alias inter "${EC[@]}" -dname CN=Inter
	KT -certreq -keystore ca.p12 -storepass $SP -alias inter |
		KT -gencert -keystore ca.p12 -storepass $SP -alias root \
			-ext bc:c -rfc >inter.pem
	KT -exportcert -rfc -keystore ca.p12 -storepass $SP -alias root \
		>root.pem
	KT -importcert -noprompt -keystore ks.p12 -storetype PKCS12 \
		-storepass $SP -alias 'trusted root' -file root.pem
	for l in leaf3:inter leaf2:root; do
		a=${l%:*} ca=${l#*:}
		KT -genkeypair -keystore ks.p12 -storepass $SP -alias $a \
			"${EC[@]}" -dname "CN=$a, O=Example"
		KT -certreq -keystore ks.p12 -storepass $SP -alias $a |
			KT -gencert -keystore ca.p12 -storepass $SP -alias $ca \
				-rfc >$a.pem
		if [ $ca = inter ]; then cat inter.pem >>$a.pem; fi
		KT -importcert -noprompt -keystore ks.p12 -storepass $SP \
			-alias $a -file $a.pem
	done
	KT -genkeypair -keystore ks.p12 -storepass $SP -alias self "${EC[@]}" \
		-dname CN=self
	KT -exportcert -rfc -keystore ks.p12 -storepass $SP -alias self \
		>self.pem
	KT -importcert -noprompt -keystore ks.p12 -storepass $SP \
		-alias 'self trusted' -file self.pem
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout other.key -out other.pem -subj /CN=Other -days 30
	KT -importcert -noprompt -keystore ks.p12 -storepass $SP \
		-alias other -file other.pem
} >keytool.log 2>&1 || { cat keytool.log >&2; bad "keytool set-up"; }

# listing FILE PASS: keytool -list -v as "alias|type|chain length|SHA-256
# ..." lines, sorted.
listing() {
	KT -list -v -keystore "$1" -storepass "$2" 2>/dev/null | python3 -c '
import re, sys
out = []
for b in re.split(r"\n(?=Alias name: )", sys.stdin.read()):
    m = re.match(r"Alias name: (.*)\n", b)
    if not m:
        continue
    t = re.search(r"Entry type: (\w+)", b).group(1)
    n = re.search(r"Certificate chain length: (\d+)", b)
    fps = re.findall(r"SHA256: ([0-9A-F:]+)", b)
    out.append("|".join([m.group(1), t, n.group(1) if n else "-"] + fps))
print("\n".join(sorted(out)))'
}
listing ks.p12 $SP >ks.list || true
[ "$(wc -l <ks.list)" -eq 6 ] && grep -q '^leaf3|PrivateKeyEntry|3|' ks.list &&
	grep -q '^leaf2|PrivateKeyEntry|2|' ks.list &&
	grep -q '^self|PrivateKeyEntry|1|' ks.list &&
	grep -q '^trusted root|trustedCertEntry|-|' ks.list && ok ||
	bad "the keytool PKCS12: $(cat ks.list)"
openssl pkcs12 -in ks.p12 -passin pass:$SP -nokeys 2>/dev/null |
	grep -q 'friendlyName: CN=Inter' && ok ||
	bad "keytool named no chain certificate: the test tests nothing"

# same_listing WHAT P12: keytool sees in P12 what it saw in ks.p12.
same_listing() {
	listing "$2" $SP >"$2.list" || true
	if cmp -s ks.list "$2.list"; then ok; else
		bad "$1: keytool -list differs"
		diff ks.list "$2.list" | sed 's/^/    /' >&2 || true
	fi
}
# wks_aliases STORE: the aliases of a WKS store, sorted, one a line.
wks_aliases() {
	wks list -k "$1" --storepass pass:$SP --json
	json '"\n".join(sorted(e["alias"] + "|" + e["type"] for e in d["entries"]))'
}
WANT_ALIASES='leaf2|private-key
leaf3|private-key
other|certificate
self trusted|certificate
self|private-key
trusted root|certificate'

wks convert --in ks.p12 -o c.wks --inpass pass:$SP --outpass pass:$SP "${I[@]}"
expect 0 "convert of the keytool PKCS12"
[ "$(wks_aliases c.wks)" = "$WANT_ALIASES" ] && ok ||
	bad "convert: the chain certificates became entries: $(wks_aliases c.wks | tr '\n' ' ')"
wks convert --in c.wks -o c.p12 --inpass pass:$SP --outpass pass:$SP "${I[@]}"
expect 0 "convert back to PKCS12"
same_listing "convert, convert back" c.p12

wks import-p12 -k p.wks --in ks.p12 --inpass pass:$SP --storepass pass:$SP "${I[@]}"
expect 0 "import-p12 of the keytool PKCS12"
[ "$(wks_aliases p.wks)" = "$WANT_ALIASES" ] && ok ||
	bad "import-p12: $(wks_aliases p.wks | tr '\n' ' ')"
wks export-p12 -k p.wks -o p.p12 --storepass pass:$SP --outpass pass:$SP "${I[@]}"
expect 0 "export-p12"
same_listing "import-p12, export-p12" p.p12

wks import-keystore --srckeystore ks.p12 -k k.wks --srcstorepass pass:$SP \
	--storepass pass:$SP "${I[@]}"
expect_out 0 '^6 entries: 6 imported, 0 skipped$' "import-keystore of the keytool PKCS12"
[ "$(wks_aliases k.wks)" = "$WANT_ALIASES" ] && ok ||
	bad "import-keystore: $(wks_aliases k.wks | tr '\n' ' ')"
wks export-p12 -k k.wks -o k.p12 --storepass pass:$SP --outpass pass:$SP "${I[@]}"
same_listing "import-keystore, export-p12" k.p12

# What wks writes: trusted entries with Java's attribute, chain
# certificates without a friendlyName (openssl shows the bag attributes).
openssl pkcs12 -in k.p12 -passin pass:$SP -nokeys -info 2>/dev/null >k.info || true
python3 - k.info <<'EOF' && ok || bad "export-p12: bag attributes"
import re, sys
bags = re.split(r"\n(?=Bag Attributes)", open(sys.argv[1]).read())
named = {}
for b in bags:
    if "BEGIN CERTIFICATE" not in b:
        continue
    fn = re.search(r"friendlyName: (.*)", b)
    subj = re.search(r"subject=(.*)", b).group(1)
    trusted = "2.16.840.1.113894.746875.1.1" in b
    named.setdefault(fn.group(1) if fn else None, []).append((subj, trusted))
# key entries' leaves are named, not trusted; trusted entries are named
# and trusted; chain certificates have no name
keys = ("leaf2", "leaf3", "self")
trusted = ("trusted root", "self trusted", "other")
ok = all(not t for a in keys for _, t in named.get(a, [])) \
    and all(len(named.get(a, [])) == 1 and named[a][0][1] for a in trusted) \
    and all(n is None or n in keys + trusted for n in named) \
    and all(not t for _, t in named.get(None, []))
sys.exit(0 if ok else "bags: %r" % named)
EOF

# ---- per-key passwords: JKS, JCEKS ------------------------------------------
{
	for t in JKS JCEKS; do
		KT -genkeypair -keystore k.$t -storetype $t -storepass $SP \
			-keypass key-pass-A -alias a "${EC[@]}" -dname CN=a
		KT -genkeypair -keystore k.$t -storetype $t -storepass $SP \
			-keypass key-pass-B -alias 'b=é' "${EC[@]}" -dname CN=b
	done
	KT -genseckey -v -keystore k.JCEKS -storetype JCEKS -storepass $SP \
		-keypass key-pass-C -alias des3 -keyalg DESede
} >keytool2.log 2>&1 || { cat keytool2.log >&2; bad "keytool set-up 2"; }
KP=(--keypass-for a=pass:key-pass-A --keypass-for 'b=é=pass:key-pass-B'
    --keypass-for des3=pass:key-pass-C)
for t in JKS JCEKS; do
	n=2
	[ $t = JCEKS ] && n=3
	rm -f o.wks
	wks convert --in k.$t -o o.wks --inpass pass:$SP --outpass pass:$SP \
		"${KP[@]}" "${I[@]}"
	expect_out 0 "^$n entries: $n imported, 0 skipped\$" "convert $t --keypass-for"
	rm -f o.wks
	wks import-keystore --srckeystore k.$t -k o.wks --srcstorepass pass:$SP \
		--storepass pass:$SP "${KP[@]}" "${I[@]}"
	expect_out 0 "^$n entries: $n imported, 0 skipped\$" \
		"import-keystore $t --keypass-for"
	wks export-key -k o.wks -a 'b=é' --storepass pass:$SP
	expect 0 "$t: the key imported with its own password opens"
	# A key without its password: the hint names options convert takes.
	rm -f o.wks
	wks convert --in k.$t -o o.wks --inpass pass:$SP --outpass pass:$SP \
		--keypass-for a=pass:key-pass-A "${I[@]}"
	expect_out 1 "skipped: \"b=é\" .*key password incorrect \\(give it with --keypass-for 'b=é=SRC'" \
		"convert $t: the skip names --keypass-for"
	hint=$(grep 'skipped: "b=é"' out)
	for o in $(grep -o -- '--[a-z-]*' <<<"$hint" | sort -u); do
		wks convert --help
		grep -q -- "^ *$o " out && ok || bad "convert's hint names $o, which convert does not take"
	done
	# a wrong --keypass-for is tried alone, and said
	rm -f o.wks
	wks convert --in k.$t -o o.wks --inpass pass:$SP --outpass pass:$SP \
		--keypass-for a=pass:$SP "${I[@]}"
	expect_out 1 'skipped: "a" .*key password incorrect \(the one given with --keypass-for\)' \
		"convert $t: a wrong --keypass-for"
done
grep -q 'Generated 168-bit DESede secret key' keytool2.log && ok ||
	bad "keytool's DESede size"
rm -f o.wks
wks convert --in k.JCEKS -o o.wks --inpass pass:$SP --outpass pass:$SP \
	"${KP[@]}" "${I[@]}"
expect_out 0 '^imported: "des3" \(secret key, DESede 168 bits\)$' \
	"a DESede key has keytool's 168 bits"

# Every command whose --help names --keypass-for takes it.
wks --help
for cmd in $(sed -n 's/^  \([a-z0-9-]*\)  .*/\1/p' out); do
	wks "$cmd" --help
	grep -q -- '--keypass-for' out || continue
	wks "$cmd" --keypass-for x=pass:y
	if grep -q 'does not apply' err; then
		bad "wks $cmd --help names --keypass-for, which it refuses"
	else
		ok
	fi
done

# ---- import commands create a missing store ---------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout new.key -out new.pem -subj /CN=new -days 30 2>/dev/null
# created STORE WHAT: STORE exists, mode 0600, opens with its password
# and holds one entry or more; a wrong password fails.
created() {
	if [ "$(stat -c %a "$1" 2>/dev/null)" = 600 ]; then ok; else
		bad "$2: $1 mode $(stat -c %a "$1" 2>/dev/null || echo missing)"
	fi
	wks list -k "$1" --storepass pass:new-store-pw
	expect 0 "$2: the new store opens with its password"
	grep -q 'entr' out && ok || bad "$2: list"
	wks list -k "$1" --storepass pass:wrong-password
	expect 4 "$2: a wrong password fails"
}
wks import-cert -k n1.wks -a c --cert new.pem --storepass pass:new-store-pw "${I[@]}"
expect 0 "import-cert into a missing store"
created n1.wks import-cert
wks import-key -k n2.wks -a k --key new.key --chain new.pem \
	--storepass pass:new-store-pw "${I[@]}"
expect 0 "import-key into a missing store"
created n2.wks import-key
wks import-secret -k n3.wks -a s --hex 00112233445566778899aabbccddeeff \
	--storepass pass:new-store-pw "${I[@]}"
expect 0 "import-secret into a missing store"
created n3.wks import-secret
wks import-p12 -k n4.wks --in ks.p12 --inpass pass:$SP \
	--storepass pass:new-store-pw "${I[@]}"
expect 0 "import-p12 into a missing store"
created n4.wks import-p12
# No password and no terminal: nothing is created.
wks import-cert -k n5.wks -a c --cert new.pem
expect 2 "import-cert into a missing store without a password"
[ ! -e n5.wks ] && ok || bad "a failed import created the store"
wks import-cert -k n6.wks -a c --cert new.pem --storepass pass:
expect 2 "an empty password for a new store"
[ ! -e n6.wks ] && ok || bad "an empty password created the store"

# ---- messages ---------------------------------------------------------------
wks import-secret -k n3.wks -a s2 --hex zzzz --storepass pass:new-store-pw
expect_err 2 '--hex: not hex: character 1 is not a hex digit' "--hex zzzz"
grep -q zzzz err && bad "--hex echoed the key" || ok
wks import-secret -k n3.wks -a s2 --hex abc --storepass pass:new-store-pw
expect_err 2 '--hex: an odd number of hex digits \(3\)' "--hex abc"
openssl pkcs8 -topk8 -in new.key -out enc.key -passout pass:keyfile-pw \
	-v2 aes-256-cbc -iter 10000 2>/dev/null
wks import-key -k n2.wks -a k2 --key enc.key --chain new.pem \
	--storepass pass:new-store-pw
expect_err 2 'enc.key: the key is encrypted: no passphrase given and no terminal.*--inpass' \
	"an encrypted key without a terminal names the file"
openssl pkey -in new.key -aes256 -passout pass:keyfile-pw -traditional \
	-out enc-trad.key 2>/dev/null
wks import-key -k n2.wks -a k2 --key enc-trad.key --chain new.pem \
	--storepass pass:new-store-pw
expect_err 2 'enc-trad.key: the key is encrypted' \
	"an encrypted traditional PEM key without a terminal names the file"
for t in JKS JCEKS; do
	wks import-p12 -k n4.wks --in k.$t --inpass pass:$SP \
		--storepass pass:new-store-pw
	expect_err 5 "k.$t: this is a $t keystore, not PKCS#12; import it with: wks import-keystore --srckeystore k.$t -k n4.wks" \
		"import-p12 of a $t file"
done
wks import-p12 -k n4.wks --in n3.wks --inpass pass:new-store-pw \
	--storepass pass:new-store-pw
expect_err 5 'this is a WKS keystore, not PKCS#12; import it with: wks import-keystore' \
	"import-p12 of a WKS file"
# A keystore given where a key or certificate file was expected: a note
# naming the command that imports it.
wks import-key -k n2.wks -a k3 --key k.JKS --storepass pass:new-store-pw
expect_err 5 'k.JKS: note: this is a JKS keystore; import its entries with: wks import-keystore --srckeystore k.JKS -k n2.wks' \
	"import-key of a JKS file"
wks import-cert -k n2.wks -a c3 --cert ks.p12 --storepass pass:new-store-pw
expect_err 5 'ks.p12: note: this is a PKCS#12 file; import it with: wks import-p12 --in ks.p12 -k n2.wks' \
	"import-cert of a PKCS#12 file"
# Short store passwords: a warning where a store gets one.
wks create -k short.wks --storepass pass:a "${I[@]}"
expect_err 0 'short.wks: warning: the store password has only 1 character; keytool requires at least 6' \
	"create with a 1-character password"
wks passwd -k short.wks --storepass pass:a --new-storepass pass:abcde "${I[@]}"
expect_err 0 'warning: the store password has only 5 characters' \
	"passwd to a 5-character password"
wks passwd -k short.wks --storepass pass:abcde --new-storepass 'pass:ééééé€' "${I[@]}"
grep -q 'warning' err && bad "a 6-character (non-ASCII) password warned" || ok
wks keypasswd -k n2.wks -a k --storepass pass:new-store-pw --new-keypass pass:kp "${I[@]}"
expect_err 0 'n2.wks: warning: the key password has only 2 characters; keytool requires at least 6' \
	"keypasswd to a 2-character password"
wks import-cert -k short2.wks -a c --cert new.pem --storepass pass:abc "${I[@]}"
expect_err 0 'warning: the store password has only 3 characters' \
	"a store created by import-cert with a short password"
wks import-keystore --srckeystore ks.p12 -k short3.wks --srcstorepass pass:$SP \
	--storepass pass:abc "${I[@]}"
grep -q 'warning: the store password has only 3 characters' err && ok ||
	bad "a store created by import-keystore with a short password"

# ---- list: columns after non-ASCII aliases ----------------------------------
wks create -k l.wks --storepass pass:$SP "${I[@]}"
for a in a 'clé' '日本語のキー' 'ü-ö-ä' 'e'$'\xcc\x81''-combining'; do
	wks import-cert -k l.wks -a "$a" --cert new.pem --storepass pass:$SP "${I[@]}"
done
wks list -k l.wks --storepass pass:$SP
python3 - out <<'EOF' && ok || bad "list: columns misaligned: $(cat out)"
import sys, unicodedata
def width(s):
    w = 0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return w
cols = set()
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    i = line.find("  certificate")
    if i > 0:
        cols.add(width(line[:i]))
sys.exit(0 if len(cols) == 1 and len(open(sys.argv[1]).read().splitlines()) >= 7
         else "columns at %r" % cols)
EOF

end_tests
