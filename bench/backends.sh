#!/bin/sh
# wks-getkey-bench on both crypto backends, on one store, in one sitting
# (issue 31; docs/KDF.md "On wolfCrypt", README "Benchmark figures"):
#   sh bench/backends.sh [OPENSSL_BUILD [WOLFCRYPT_BUILD]]
# (defaults build and build-wolf; both must have built wks-getkey-bench).
# The OpenSSL build writes the store (RSA-2048 and AES-256 at 210,000
# iterations); each build then measures uncached get_key (7 calls, cache
# off) and cached get_key (1000 calls) with the native PBKDF2 and with its
# backend's (libwks.kdf.impl=openssl: PKCS5_PBKDF2_HMAC or wc_PBKDF2).
# Prints the medians as one table.  CPU-heavy for about a minute.
set -eu
ossl=${1:-build} wolf=${2:-build-wolf}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$ossl/bench/wks-getkey-bench" -iterations 1 -save "$t/store.wks" >/dev/null
printf 'libwks.kdf.impl=native\n' >"$t/native.properties"
printf 'libwks.kdf.impl=openssl\n' >"$t/backend.properties"
med() { # file key-type -> median of that block
	awk -v k="$2" '$0 ~ k { on = 1 } on && /Median:/ { print $2; exit }' "$1"
}
printf '%-10s %-8s %14s %14s %14s %14s\n' backend kdf "RSA uncached" \
	"AES uncached" "RSA cached" "AES cached"
for b in "$ossl" "$wolf"; do
	for impl in native backend; do
		WKS_PROPERTIES=$t/$impl.properties "$b/bench/wks-getkey-bench" \
			-store "$t/store.wks" -iterations 7 >"$t/u"
		WKS_PROPERTIES=$t/$impl.properties "$b/bench/wks-getkey-bench" \
			-store "$t/store.wks" -enableCache -iterations 1000 >"$t/c"
		name=$(sed -n 's/.* on \([a-z]*\),.*/\1/p' "$t/u")
		kdf=$(sed -n 's/.*libwks.kdf.impl \([a-z]*\),.*/\1/p' "$t/u")
		printf '%-10s %-8s %11s ms %11s ms %11s ms %11s ms\n' "$name" "$kdf" \
			"$(med "$t/u" "Private key")" "$(med "$t/u" "Secret key")" \
			"$(med "$t/c" "Private key")" "$(med "$t/c" "Secret key")"
	done
done
