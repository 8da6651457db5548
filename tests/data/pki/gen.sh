#!/bin/sh
# Fixtures of tests/test_setchecks.c (written once with the openssl tool;
# committed, so that the wolfCrypt build's test needs no OpenSSL): for each
# algorithm a CA, a leaf signed by it, and a second key of the same kind
# (no certificate) for the mismatch cases.  Re-run from this folder to
# make new ones (the test reads whatever is here).
set -eu
days=36500
# (POSIX sh has no local variables: each function its own names.)
key() { # name algorithm-options...
	kn=$1; shift
	openssl genpkey "$@" -out "$kn.key" 2>/dev/null
}
ca() { # name key sigopts...
	cn=$1; ck=$2; shift 2
	openssl req -new -x509 -key "$ck" -subj "/CN=$cn CA" -days $days \
		-addext basicConstraints=critical,CA:TRUE "$@" -out "$cn-ca.pem"
}
leaf() { # name leafkey cakey sigopts...
	ln=$1; lk=$2; lck=$3; shift 3
	openssl req -new -key "$lk" -subj "/CN=$ln leaf" -out "$ln.csr"
	openssl x509 -req -in "$ln.csr" -CA "$ln-ca.pem" -CAkey "$lck" \
		-set_serial 2 -days $days "$@" -out "$ln-leaf.pem" 2>/dev/null
	rm -f "$ln.csr"
}
one() { # name genpkey-options...
	on=$1; shift
	key "$on-cakey" "$@"
	key "$on-leafkey" "$@"
	key "$on-other" "$@"
}
one rsa -algorithm RSA -pkeyopt rsa_keygen_bits:2048
ca rsa rsa-cakey.key -sha256
leaf rsa rsa-leafkey.key rsa-cakey.key -sha256
one pss -algorithm RSA-PSS -pkeyopt rsa_keygen_bits:2048
ca pss pss-cakey.key -sha256
leaf pss pss-leafkey.key pss-cakey.key -sha256
# rsaEncryption keys, the certificates signed with RSASSA-PSS padding
cp rsa-cakey.key rsapss-cakey.key; cp rsa-leafkey.key rsapss-leafkey.key
cp rsa-other.key rsapss-other.key
ca rsapss rsapss-cakey.key -sha256 -sigopt rsa_padding_mode:pss
leaf rsapss rsapss-leafkey.key rsapss-cakey.key -sha256 \
	-sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32
for c in P-256:p256:sha256 P-384:p384:sha384 P-521:p521:sha512; do
	curve=${c%%:*}; r=${c#*:}; n=${r%%:*}; md=${r#*:}
	one "$n" -algorithm EC -pkeyopt ec_paramgen_curve:$curve
	ca "$n" "$n-cakey.key" -$md
	leaf "$n" "$n-leafkey.key" "$n-cakey.key" -$md
done
for a in ED25519 ED448; do
	n=$(echo $a | tr A-Z a-z)
	one "$n" -algorithm $a
	ca "$n" "$n-cakey.key"
	leaf "$n" "$n-leafkey.key" "$n-cakey.key"
done
rm -f ./*.srl
# tests/test_memdump.c's RSA key on the wolfCrypt build: RSA-1024 whose
# PKCS#8 length is not a multiple of 16 (its last CBC block partial with
# 6 to 15 key bytes), with a self-signed certificate.
while :; do
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 \
		-out memdump-rsa.key 2>/dev/null
	n=$(openssl pkey -in memdump-rsa.key -outform DER | wc -c)
	[ $((n % 16)) -ge 6 ] && break
done
openssl req -new -x509 -key memdump-rsa.key -subj /CN=memdump -days $days \
	-out memdump-rsa.pem
# RSA-4200, self-signed, and rsa-leafkey's certificate signed by it:
# larger than Debian's wolfCrypt verifies with (RSA_MAX_SIZE 4096), for
# test_setchecks__rsa_size.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:4200 \
	-out rsa4200.key 2>/dev/null
openssl req -new -x509 -key rsa4200.key -subj /CN=rsa4200 -days $days \
	-sha256 -out rsa4200.pem
openssl req -new -key rsa-leafkey.key -subj /CN=under4200 -out sub.csr
openssl x509 -req -in sub.csr -CA rsa4200.pem -CAkey rsa4200.key \
	-set_serial 5 -days $days -sha256 -out rsa4200-sub.pem 2>/dev/null
rm -f sub.csr
