// Signs a file through Java's SunPKCS11 provider with keys of a
// libwks-pkcs11.so token (tests/pkcs11/programs_ssh_nss_java.sh, docs/PKCS11.md
// "Java SunPKCS11"), one JVM for every signature:
//
//   java P11Sign.java CONFIG PINFILE DATA ALIAS=ALGORITHM=OUT...
//
// CONFIG is a SunPKCS11 configuration file, PINFILE holds the token's PIN
// (the store password) on its first line, and each ALIAS=ALGORITHM=OUT
// signs DATA with the key ALIAS (its CKA_LABEL) using the JCA signature
// ALGORITHM (SHA256withECDSA, SHA256withRSA, ...), writing the signature
// as JCA returns it (ECDSA: DER, as openssl dgst -verify reads it) to OUT.
// Prints one line per signature: "ALIAS ALGORITHM KEYALG BYTES".
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.Security;
import java.security.Signature;

public class P11Sign {
    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: java P11Sign.java CONFIG PINFILE DATA ALIAS=ALGORITHM=OUT...");
            System.exit(2);
        }
        Provider p = Security.getProvider("SunPKCS11").configure(args[0]);
        char[] pin = Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8)
                .get(0).toCharArray();
        byte[] data = Files.readAllBytes(Path.of(args[2]));
        KeyStore ks = KeyStore.getInstance("PKCS11", p);
        ks.load(null, pin);
        for (int i = 3; i < args.length; i++) {
            String[] job = args[i].split("=", 3);
            if (job.length != 3)
                throw new IllegalArgumentException("not ALIAS=ALGORITHM=OUT: " + args[i]);
            PrivateKey key = (PrivateKey) ks.getKey(job[0], null);
            if (key == null)
                throw new IllegalStateException("no private key " + job[0]);
            Signature s = Signature.getInstance(job[1], p);
            s.initSign(key);
            s.update(data);
            byte[] sig = s.sign();
            Files.write(Path.of(job[2]), sig);
            System.out.println(job[0] + " " + job[1] + " " + key.getAlgorithm() + " " + sig.length);
        }
    }
}
