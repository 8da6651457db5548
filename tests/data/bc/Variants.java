/*
 * The Bouncy Castle keystores keytool cannot make (tests/data/bc/README):
 * from bks.bks (made by stores.sh), with Bouncy Castle 1.72's own
 * KeyStore implementations:
 *
 *   scrypt.bcfks  BCFKS with an scrypt store key (N 1024, r 8, p 1), AES
 *                 key wrap (KWP) instead of CCM, HMAC-SHA3-512: "ec-ü",
 *                 "aes", "root ca"
 *   kwp.bcfks     BCFKS with AES key wrap (KWP) instead of CCM, PBKDF2 as
 *                 keytool's: "ec-ü", "aes", "root ca"
 *   signed.bcfks  BCFKS signed with SHA512withECDSA by the key of "ec-ü",
 *                 its chain in the store: "aes", "root ca"
 *
 * every key under its password in bks.bks, the stores under the store
 * password.  Run from tests/data/bc:
 *   java -cp /usr/share/java/bcprov.jar Variants.java
 */
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.Security;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;

import org.bouncycastle.crypto.util.ScryptConfig;
import org.bouncycastle.jcajce.BCFKSLoadStoreParameter;
import org.bouncycastle.jce.provider.BouncyCastleProvider;

public class Variants {
	static final char[] SP = "störe-pass€𝄞".toCharArray();
	static final char[] EC_PW = "kéy-€𝄞".toCharArray();
	static final char[] AES_PW = "aes-key-pass".toCharArray();

	static void fill(KeyStore dst, KeyStore src, boolean ec)
			throws Exception {
		if (ec)
			dst.setKeyEntry("ec-ü", src.getKey("ec-ü", EC_PW), EC_PW,
					src.getCertificateChain("ec-ü"));
		dst.setKeyEntry("aes", src.getKey("aes", AES_PW), AES_PW, null);
		dst.setCertificateEntry("root ca", src.getCertificate("root ca"));
	}

	public static void main(String[] a) throws Exception {
		Provider bc = new BouncyCastleProvider();
		Security.addProvider(bc);
		KeyStore src = KeyStore.getInstance("BKS", bc);
		try (FileInputStream in = new FileInputStream("bks.bks")) {
			src.load(in, SP);
		}

		KeyStore s = KeyStore.getInstance("BCFKS", bc);
		s.load(null, null);
		fill(s, src, true);
		try (FileOutputStream out = new FileOutputStream("scrypt.bcfks")) {
			s.store(new BCFKSLoadStoreParameter.Builder(out, SP)
				.withStorePBKDFConfig(
					new ScryptConfig.Builder(1024, 8, 1).build())
				.withStoreEncryptionAlgorithm(BCFKSLoadStoreParameter
					.EncryptionAlgorithm.AES256_KWP)
				.withStoreMacAlgorithm(BCFKSLoadStoreParameter
					.MacAlgorithm.HmacSHA3_512)
				.build());
		}

		KeyStore w = KeyStore.getInstance("BCFKS", bc);
		w.load(null, null);
		fill(w, src, true);
		try (FileOutputStream out = new FileOutputStream("kwp.bcfks")) {
			w.store(new BCFKSLoadStoreParameter.Builder(out, SP)
				.withStoreEncryptionAlgorithm(BCFKSLoadStoreParameter
					.EncryptionAlgorithm.AES256_KWP)
				.build());
		}

		KeyStore g = KeyStore.getInstance("BCFKS", bc);
		g.load(null, null);
		fill(g, src, false);
		Certificate[] chain = src.getCertificateChain("ec-ü");
		X509Certificate[] xs = new X509Certificate[chain.length];
		for (int i = 0; i < chain.length; i++)
			xs[i] = (X509Certificate)chain[i];
		try (FileOutputStream out = new FileOutputStream("signed.bcfks")) {
			g.store(new BCFKSLoadStoreParameter.Builder(out,
					(PrivateKey)src.getKey("ec-ü", EC_PW))
				.withCertificates(xs)
				.withStoreSignatureAlgorithm(BCFKSLoadStoreParameter
					.SignatureAlgorithm.SHA512withECDSA)
				.build());
		}
	}
}
