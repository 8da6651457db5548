#!/usr/bin/env bash
# End-to-end tests of Bouncy Castle keystores in (issue 25), against the
# real thing: keytool (OpenJDK 17) with Bouncy Castle 1.72 (Debian's
# libbcprov-java) makes BKS and BCFKS stores at every run
# (tests/data/bc/stores.sh, every keytool command in one JVM): RSA and EC
# key pairs with a 2-certificate chain under their own (non-ASCII) key
# passwords, AES, HmacSHA256 and DESede keys, a trusted certificate,
# non-ASCII aliases and store password.  `wks convert` and `wks
# import-keystore` turn them into WKS stores, which must agree with
# keytool -list -v on aliases, types, chains (SHA-256) and creation dates,
# hold each key byte for byte as keytool exports it (-importkeystore to
# PKCS12), and read with the independent wksdump.py.  Then: UBER refused
# with the command that converts it, wrong passwords, --srcstoretype, and
# truncated or modified stores refused with one clean message (a sample;
# test_bcstores covers every length and byte).  WKS_TEST_FULL=1 also makes
# BKS version 1 and UBER stores fresh (by default UBER comes from
# tests/data/bc) and runs more hostile variants.
#
# usage: bcstores.sh WKS_BINARY SHARED_DIR
#
# Without keytool or bcprov.jar it prints SKIP and passes.  Prints
# "N passed, M failed" last; exits 1 on a failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
skip_without_keytool
if [ ! -r "${BCPROV_JAR:-/usr/share/java/bcprov.jar}" ]; then
	echo "SKIP: Bouncy Castle not found (apt-get install libbcprov-java)"
	echo "0 passed, 0 failed"
	exit 0
fi
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$HERE/../data/bc
start_tests bcstores
export LC_ALL=C.UTF-8

show_stderr() { sed 's/^/    stderr: /' "$T/err" | head -5; }

SP='störe-pass€𝄞'
I=(--iterations 10000)
KP=(--keypass-for 'clé-rsa=pass:rsa-key-pass' --keypass-for 'ec-ü=pass:kéy-€𝄞'
    --keypass-for 'aes=pass:aes-key-pass')
# (By default the BCFKS store holds "root ca", "ec-ü" and "aes" only:
# each keytool command on it runs Bouncy Castle's PBKDF2 at 51200
# iterations several times, most of this script's cost.)
types=(BKS BCFKS:small)
case ${WKS_TEST_FULL:-0} in 0) ;; *) types=(BKS BKS-V1 BCFKS UBER) ;; esac
sh "$DATA/stores.sh" "$T" "${types[@]}" || bad "keytool set-up"
[ -e store.uber ] || cp "$DATA/store.uber" "$DATA/store.uber.list" .
stores=(bks.bks store.bcfks)
[ -e bks1.bks ] && stores+=(bks1.bks)

tally() {
	local line
	while IFS= read -r line; do
		case "$line" in
		ok) ok ;;
		*) failed=$((failed + 1)); echo "$line" >&2 ;;
		esac
	done
}

# ---- convert: every entry, checked against keytool ----------------------
for f in "${stores[@]}"; do
	n=$(grep -c '^Alias name: ' "$f.list")
	wks convert --in "$f" -o "$f.wks" --inpass "pass:$SP" \
		--outpass pass:out-pass-1 "${KP[@]}" "${I[@]}"
	expect_out 0 "^$n entries: $n imported, 0 skipped\$" "convert $f"
	grep -q '^imported: "ec-ü" (private key, 2 certificates)$' out &&
		grep -q '^imported: "aes" (secret key, AES 256 bits)$' out &&
		{ [ "$n" = 3 ] ||
		  { grep -q '^imported: "hmac" (secret key, HmacSHA256 256 bits)$' out &&
		    grep -q '^imported: "3des" (secret key, DESede 168 bits)$' out; }; } &&
		ok || bad "$f: the report lines"
	tally < <(python3 "$HERE/bccheck.py" "$WKS_BIN" "$f.wks" out-pass-1 \
		"$f.list" "$f.p12" export-pass)
	# wolfJCE's format, read by the independent reader (every key
	# decrypted with the new store password, which --keypass defaults
	# to).
	if python3 "$WKSDUMP" dump --password out-pass-1 --strict "$f.wks" \
		>dump.json 2>dump.err &&
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
f=list(d["files"].values())[0]
assert f["load"]["status"] == "ok" and f["store_integrity"]["verified"]
assert len(f["entries"]) == int(sys.argv[2])' dump.json "$n"; then
		ok
	else
		bad "$f: wksdump.py does not read the converted store"
		head -5 dump.err >&2
	fi
done

# ---- import-keystore: keytool's option names, into an existing store ----
wks import-keystore --srckeystore store.bcfks --srcstoretype BCFKS \
	--srcstorepass "pass:$SP" -k i.wks --storepass pass:out-pass-1 \
	--srcalias 'ec-ü' --srckeypass 'pass:kéy-€𝄞' "${I[@]}"
expect_out 0 '^imported: "ec-ü" \(private key, 2 certificates\)$' \
	"import-keystore --srcstoretype BCFKS --srcalias --srckeypass"
wks import-keystore --srckeystore bks.bks --srcstoretype bks \
	--srcstorepass "pass:$SP" -k i.wks --storepass pass:out-pass-1 \
	--srcalias 'root ca' --destalias ca "${I[@]}"
expect_out 0 '^imported: "root ca" as "ca" \(trusted certificate\)$' \
	"import-keystore --srcstoretype bks into an existing store"
# No key password: the keys under their own are skipped, by name.
wks import-keystore --srckeystore bks.bks --srcstorepass "pass:$SP" \
	-k j.wks --storepass pass:out-pass-1 "${I[@]}"
expect_out 1 'skipped: "clé-rsa" \(private key, 2 certificates\): key password incorrect' \
	"import-keystore without the key passwords"
grep -q '^6 entries: 3 imported, 3 skipped$' out && ok ||
	bad "the keys under the store password are imported, the others not"

# ---- what is refused --------------------------------------------------------
wks convert --in store.uber -o u.wks --inpass "pass:$SP" \
	--outpass pass:out-pass-1 "${I[@]}"
expect_err 8 'an UBER keystore .*Twofish.*keytool -importkeystore -srcstoretype UBER' \
	"UBER is refused with the command that converts it"
[ ! -e u.wks ] && ok || bad "a refused UBER conversion wrote u.wks"
wks import-keystore --srckeystore store.uber --srcstoretype UBER \
	--srcstorepass "pass:$SP" -k u.wks --storepass pass:out-pass-1
expect_err 8 'UBER keystore' "import-keystore --srcstoretype UBER"
for f in bks.bks store.bcfks; do
	wks convert --in "$f" -o x.wks --inpass pass:wrong-pass \
		--outpass pass:out-pass-1 "${I[@]}"
	expect_err 4 'integrity check failed: wrong password, or the file was modified' \
		"$f: wrong store password"
done
wks import-keystore --srckeystore bks.bks --srcstoretype bcfks \
	--srcstorepass "pass:$SP" -k x.wks --storepass pass:out-pass-1
expect_err 5 'this is a BKS file, not bcfks' "--srcstoretype is checked"
wks list -k store.bcfks --storepass "pass:$SP"
expect_err 5 'this is a BCFKS keystore; convert it with: wks import-keystore --srckeystore store.bcfks' \
	"list on a BCFKS file says what to run"
[ ! -e x.wks ] && ok || bad "a failed import created x.wks"

# ---- hostile files: a sample through the tool ---------------------------
# Truncations and single-byte changes of the fresh stores: each refused
# (4 integrity, 5 malformed, 8 unsupported, 9 limit) with one message
# naming the file, never a crash (test_bcstores: every length and byte).
step=701 head=3
case ${WKS_TEST_FULL:-0} in 0) ;; *) step=53 head=6 ;; esac
case "$WKS_BIN" in *valgrind*) step=1499 head=2 ;; esac
mkdir hostile
python3 - "$step" "$head" <<'EOF'
import sys
step, head = int(sys.argv[1]), int(sys.argv[2])
for name in ("bks.bks", "store.bcfks"):
    d = open(name, "rb").read()
    # the header (every 7th of the first 40 bytes), then every step-th
    for i in list(range(0, 7 * head, 7)) + list(range(40, len(d), step)):
        open("hostile/%s.cut%05d" % (name, i), "wb").write(d[:i])
        b = bytearray(d)
        b[i] ^= 0x20
        open("hostile/%s.flip%05d" % (name, i), "wb").write(bytes(b))
EOF
n_clean=0
for f in hostile/*; do
	wks convert --in "$f" -o x.wks --inpass "pass:$SP" \
		--outpass pass:out-pass-1 "${KP[@]}" "${I[@]}"
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
echo "hostile: $n_clean files refused cleanly"

end_tests
