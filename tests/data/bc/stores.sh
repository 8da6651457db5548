#!/bin/sh
# Make Bouncy Castle keystores with keytool (OpenJDK 17) and Bouncy Castle
# 1.72 (Debian's libbcprov-java), all keytool commands in one JVM
# (tests/cli/KeytoolBatch.java):
#
#   stores.sh OUTDIR TYPE...     TYPE: BKS BKS-V1 BCFKS UBER, each
#                                optionally TYPE:small
#
# In OUTDIR: ca.pem (a CA made for the run), and for every TYPE the store
# NAME (bks.bks, bks1.bks, store.bcfks, store.uber) holding
#   "root ca"  trusted certificate (the CA)
#   "clé-rsa"  RSA-2048 key pair, chain of 2 (leaf signed by the CA), key
#              password rsa-key-pass
#   "ec-ü"     EC P-256 key pair, chain of 2, key password kéy-€𝄞 (U+1D11E
#              outside the BMP)
#   "aes"      AES-256 secret key, key password aes-key-pass
#   "hmac"     HmacSHA256 secret key, key password = the store password
#   "3des"     DESede secret key, key password = the store password
# (TYPE:small: "root ca", "ec-ü" and "aes" only, for a shorter run)
# under the store password störe-pass€𝄞 (both non-ASCII), with NAME.list
# (keytool -list -v, in English, dates in UTC) and NAME.p12 (keytool
# -importkeystore of every key entry into PKCS12 under the password
# export-pass, at 1000 iterations; not for UBER, and without the BCFKS
# "hmac", which keytool cannot read, see below).
#
# Used by tests/cli/bcstores.sh (fresh stores at every run) and to remake
# the committed fixtures of tests/data/bc (see README there).
set -eu
out=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
batch=$here/../../cli/KeytoolBatch.java
BCJAR=${BCPROV_JAR:-/usr/share/java/bcprov.jar}
SP='störe-pass€𝄞'
T=$(printf '\t')
BC="-providerpath$T$BCJAR$T-providerclass${T}org.bouncycastle.jce.provider.BouncyCastleProvider"
cd "$out"
{
	echo "-genkeypair$T-keystore${T}ca.p12$T-storetype${T}PKCS12$T-storepass${T}ca-pass-1$T-alias${T}ca$T-keyalg${T}EC$T-groupname${T}secp256r1$T-dname${T}CN=Test BC Root CA$T-ext${T}bc:c$T-validity${T}3650"
	echo "-exportcert$T-keystore${T}ca.p12$T-storetype${T}PKCS12$T-storepass${T}ca-pass-1$T-alias${T}ca$T-rfc$T-file${T}ca.pem"
	for type in "$@"; do
		small=0
		case $type in *:small) small=1; type=${type%:small} ;; esac
		case $type in
		BKS) f=bks.bks ;;
		BKS-V1) f=bks1.bks ;; # (1.72 makes it when asked, below)
		BCFKS) f=store.bcfks ;;
		UBER) f=store.uber ;;
		*) echo "stores.sh: unknown type $type" >&2; exit 2 ;;
		esac
		S="-keystore$T$f$T-storetype$T$type$T$BC$T-storepass$T$SP"
		echo "-importcert$T-noprompt$T$S$T-alias${T}root ca$T-file${T}ca.pem"
		for k in "clé-rsa:rsa-key-pass:-keyalg${T}RSA$T-keysize${T}2048" \
			 "ec-ü:kéy-€𝄞:-keyalg${T}EC$T-groupname${T}secp256r1"; do
			a=${k%%:*}; r=${k#*:}; kp=${r%%:*}; alg=${r#*:}
			[ $small = 1 ] && [ "$a" = clé-rsa ] && continue
			echo "-genkeypair$T$S$T-alias$T$a$T-keypass$T$kp$T$alg$T-dname${T}CN=$a leaf$T-validity${T}365"
			echo "-certreq$T$S$T-alias$T$a$T-keypass$T$kp$T-file${T}req.csr"
			echo "-gencert$T-keystore${T}ca.p12$T-storetype${T}PKCS12$T-storepass${T}ca-pass-1$T-alias${T}ca$T-infile${T}req.csr$T-outfile${T}req.crt$T-validity${T}365"
			echo "-importcert$T$S$T-alias$T$a$T-keypass$T$kp$T-file${T}req.crt"
		done
		echo "-genseckey$T$S$T-alias${T}aes$T-keypass${T}aes-key-pass$T-keyalg${T}AES$T-keysize${T}256"
		if [ $small = 0 ]; then
			echo "-genseckey$T$S$T-alias${T}hmac$T-keypass$T$SP$T-keyalg${T}HmacSHA256$T-keysize${T}256"
			echo "-genseckey$T$S$T-alias${T}3des$T-keypass$T$SP$T-keyalg${T}DESede$T-keysize${T}168"
		fi
		echo "> $f.list"
		echo "-list$T-v$T$S"
		echo "> -"
		[ "$type" = UBER ] && continue
		for k in "clé-rsa:rsa-key-pass" "ec-ü:kéy-€𝄞" \
			 "aes:aes-key-pass" "hmac:$SP" "3des:$SP"; do
			a=${k%%:*}; kp=${k#*:}
			# Bouncy Castle 1.72 cannot read back the HMAC keys it
			# stores in BCFKS ("no such algorithm:
			# 1.2.840.113549.2.9 for provider BC").
			[ "$type:$a" = BCFKS:hmac ] && continue
			[ $small = 1 ] && [ "$a" != ec-ü ] && [ "$a" != aes ] &&
				continue
			echo "-importkeystore$T-noprompt$T-srckeystore$T$f$T-srcstoretype$T$type$T$BC$T-srcstorepass$T$SP$T-srcalias$T$a$T-srckeypass$T$kp$T-destkeypass${T}export-pass$T-destkeystore$T$f.p12$T-deststoretype${T}PKCS12$T-deststorepass${T}export-pass"
		done
	done
} >commands
rm -f ca.p12
# (C1 only and the serial GC: a quicker start and less CPU for these short
# runs; BKS-V1 is off in Bouncy Castle 1.72 unless asked for.)
java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dfile.encoding=UTF-8 \
	-Duser.timezone=UTC -Duser.language=en -Duser.country=US \
	-Dorg.bouncycastle.bks.enable_v1=true \
	-Dkeystore.pkcs12.certPbeIterationCount=1000 \
	-Dkeystore.pkcs12.keyPbeIterationCount=1000 \
	-Dkeystore.pkcs12.macIterationCount=1000 \
	-Dsun.stdout.encoding=UTF-8 \
	--add-exports java.base/sun.security.tools.keytool=ALL-UNNAMED \
	"$batch" commands >keytool.log 2>&1 || { cat keytool.log >&2; exit 1; }
rm -f commands req.csr req.crt ca.p12 keytool.log
