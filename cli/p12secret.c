/*
 * Secret keys in PKCS#12, as Java's PKCS12 keystore writes them
 * (keytool -genseckey, -importpass; sun.security.pkcs12.PKCS12KeyStore):
 *
 *   SafeBag { secretBag (1.2.840.113549.1.12.10.1.5),
 *             [0] SecretBag { secretTypeId pkcs8ShroudedKeyBag
 *                                 (1.2.840.113549.1.12.10.1.2),
 *                             [0] OCTET STRING (EncryptedPrivateKeyInfo) },
 *             { friendlyName, localKeyID "Time <ms>" } }
 *
 * and the EncryptedPrivateKeyInfo decrypts to a PrivateKeyInfo
 *
 *   { version 0, AlgorithmIdentifier { OID of the key's algorithm, NULL },
 *     OCTET STRING (the raw key) }
 *
 * where the OID names the JCA algorithm: AES 2.16.840.1.101.3.4.1,
 * HmacSHA256 1.2.840.113549.2.9, PBEWithMD5AndDES 1.2.840.113549.1.5.3
 * (what keytool -importpass stores), ...  Java reads the algorithm name
 * back from the OID (and the creation date from the localKeyID); a name
 * without an OID cannot be stored at all ("unrecognized algorithm name").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "cli.h"

/* JCA names and OIDs, as Java's KnownOIDs has them (the first name of an
 * OID is what an import stores; any listed name exports to it). */
static const struct {
	const char *name, *oid;
} algs[] = {
	{ "AES", "2.16.840.1.101.3.4.1" },
	{ "DESede", "1.3.14.3.2.17" },
	{ "TripleDES", "1.3.14.3.2.17" },
	{ "DES", "1.3.14.3.2.7" }, /* Java reports "DES/CBC" */
	{ "DES/CBC", "1.3.14.3.2.7" },
	{ "HmacSHA1", "1.2.840.113549.2.7" },
	{ "HmacSHA224", "1.2.840.113549.2.8" },
	{ "HmacSHA256", "1.2.840.113549.2.9" },
	{ "HmacSHA384", "1.2.840.113549.2.10" },
	{ "HmacSHA512", "1.2.840.113549.2.11" },
	{ "HmacSHA512/224", "1.2.840.113549.2.12" },
	{ "HmacSHA512/256", "1.2.840.113549.2.13" },
	{ "HmacSHA3-224", "2.16.840.1.101.3.4.2.13" },
	{ "HmacSHA3-256", "2.16.840.1.101.3.4.2.14" },
	{ "HmacSHA3-384", "2.16.840.1.101.3.4.2.15" },
	{ "HmacSHA3-512", "2.16.840.1.101.3.4.2.16" },
	{ "PBEWithMD5AndDES", "1.2.840.113549.1.5.3" },
	{ "PBE", "1.2.840.113549.1.5.3" },
	{ "PBEWithMD5AndRC2", "1.2.840.113549.1.5.6" },
	{ "PBEWithSHA1AndDES", "1.2.840.113549.1.5.10" },
	{ "PBEWithSHA1AndRC2", "1.2.840.113549.1.5.11" },
	{ "PBES2", "1.2.840.113549.1.5.13" },
	{ "PBEWithSHA1AndRC4_128", "1.2.840.113549.1.12.1.1" },
	{ "PBEWithSHA1AndRC4_40", "1.2.840.113549.1.12.1.2" },
	{ "PBEWithSHA1AndDESede", "1.2.840.113549.1.12.1.3" },
	{ "PBEWithSHA1AndRC2_128", "1.2.840.113549.1.12.1.5" },
	{ "PBEWithSHA1AndRC2_40", "1.2.840.113549.1.12.1.6" },
};

#define NALGS (sizeof(algs) / sizeof(algs[0]))

/* The JCA name of a key algorithm OID: from the table, else the dotted
 * OID itself (as Java reports an OID it does not know).  Heap; NULL if
 * out of memory. */
static char *name_of(const ASN1_OBJECT *obj)
{
	char dotted[128];
	int n = OBJ_obj2txt(dotted, sizeof(dotted), obj, 1);

	if (n <= 0 || (size_t)n >= sizeof(dotted))
		return NULL;
	for (size_t i = 0; i < NALGS; i++)
		if (!strcmp(algs[i].oid, dotted))
			return strdup(algs[i].name);
	return strdup(dotted);
}

/* The OID for a JCA name (case-insensitive, as Java matches names), or
 * for a name that is a dotted OID; NULL if none. */
static ASN1_OBJECT *oid_of(const char *name)
{
	size_t i;

	for (i = 0; i < NALGS; i++)
		if (!strcasecmp(algs[i].name, name))
			return OBJ_txt2obj(algs[i].oid, 1);
	if (name[0] >= '0' && name[0] <= '2' && name[1] == '.' &&
	    strspn(name, "0123456789.") == strlen(name)) {
		ASN1_OBJECT *o = OBJ_txt2obj(name, 1);

		ERR_clear_error();
		return o;
	}
	return NULL;
}

int cli_p12_secret_read(char **alg, uint8_t **key, size_t *key_len,
			const PKCS12_SAFEBAG *bag, const char *pass,
			int passlen, const char *file, const char *name)
{
	const ASN1_OBJECT *type = PKCS12_SAFEBAG_get0_bag_type(bag);
	const ASN1_TYPE *val = PKCS12_SAFEBAG_get0_bag_obj(bag);
	const X509_ALGOR *pbe = NULL, *kalg = NULL;
	const ASN1_OBJECT *kobj = NULL;
	const unsigned char *p, *pk = NULL;
	X509_SIG *sig = NULL;
	PKCS8_PRIV_KEY_INFO *p8 = NULL;
	int pklen = 0, ptype = V_ASN1_UNDEF, rc = -1;
	char *d = cli_display(name ? name : "");

	*alg = NULL;
	*key = NULL;
	*key_len = 0;
	if (!type || OBJ_obj2nid(type) != NID_pkcs8ShroudedKeyBag ||
	    !val || val->type != V_ASN1_OCTET_STRING) {
		cli_note(file, "secret bag \"%s\" skipped: not an encrypted "
			 "key (Java's form)", d ? d : "");
		goto done;
	}
	p = val->value.octet_string->data;
	sig = d2i_X509_SIG(NULL, &p, val->value.octet_string->length);
	if (!sig || p != val->value.octet_string->data +
			      val->value.octet_string->length) {
		ERR_clear_error();
		cli_err(file, "secret bag \"%s\": malformed encrypted key",
			d ? d : "");
		rc = CLI_EXIT_MALFORMED;
		goto done;
	}
	X509_SIG_get0(sig, &pbe, NULL);
	if ((rc = cli_pbe_check(pbe, file, "secret key")) != 0)
		goto done;
	p8 = PKCS8_decrypt(sig, pass, passlen);
	if (!p8) {
		/* The same words as for any other decryption failure. */
		ERR_clear_error();
		cli_err(file, "cannot decrypt: wrong password, or the file was "
			"modified (or it uses an algorithm OpenSSL lacks)");
		rc = CLI_EXIT_INTEGRITY;
		goto done;
	}
	if (!PKCS8_pkey_get0(&kobj, &pk, &pklen, &kalg, p8) || !kobj ||
	    pklen <= 0) {
		cli_err(file, "secret key \"%s\": malformed (no algorithm or "
			"an empty key)", d ? d : "");
		rc = CLI_EXIT_MALFORMED;
		goto done;
	}
	/* Java writes version 0 and NULL (or no) parameters. */
	X509_ALGOR_get0(NULL, &ptype, NULL, kalg);
	if (ptype != V_ASN1_UNDEF && ptype != V_ASN1_NULL) {
		cli_err(file, "secret key \"%s\": unexpected algorithm "
			"parameters", d ? d : "");
		rc = CLI_EXIT_MALFORMED;
		goto done;
	}
	*alg = name_of(kobj);
	*key = malloc((size_t)pklen);
	if (!*alg || !*key) {
		cli_err(file, "out of memory");
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	memcpy(*key, pk, (size_t)pklen);
	*key_len = (size_t)pklen;
	rc = 0;
done:
	if (rc) {
		free(*alg);
		*alg = NULL;
		cli_free_secret(*key, *key_len);
		*key = NULL;
		*key_len = 0;
	}
	if (p8 && pk && pklen > 0)
		OPENSSL_cleanse((void *)pk, (size_t)pklen);
	PKCS8_PRIV_KEY_INFO_free(p8);
	X509_SIG_free(sig);
	free(d);
	return rc;
}

int cli_p12_secret_bag(PKCS12_SAFEBAG **out, const char *alias,
		       const char *alg, const uint8_t *key, size_t key_len,
		       int64_t created_ms, const cli_pw *p12pw, int iterations,
		       const char *file)
{
	ASN1_OBJECT *obj = oid_of(alg);
	PKCS8_PRIV_KEY_INFO *p8 = NULL;
	X509_SIG *sig = NULL;
	PKCS12_SAFEBAG *bag = NULL;
	unsigned char *copy = NULL, *der = NULL;
	char id[40];
	int der_len = 0, rc = CLI_EXIT_FAIL;

	*out = NULL;
	if (!obj)
		return -1;
	if (key_len == 0 || key_len > 65536) {
		cli_err(file, "secret key of %zu bytes: not exported", key_len);
		ASN1_OBJECT_free(obj);
		return CLI_EXIT_INVALID;
	}
	p8 = PKCS8_PRIV_KEY_INFO_new();
	copy = OPENSSL_malloc(key_len);
	if (!p8 || !copy)
		goto ssl_fail;
	memcpy(copy, key, key_len);
	/* Version 0, { OID, NULL }, OCTET STRING key: as Java writes it. */
	if (!PKCS8_pkey_set0(p8, obj, 0, V_ASN1_NULL, NULL, copy,
			     (int)key_len))
		goto ssl_fail;
	obj = NULL;
	copy = NULL;
	sig = PKCS8_encrypt(-1, EVP_aes_256_cbc(), p12pw->p, (int)p12pw->len,
			    NULL, 0, iterations, p8);
	if (!sig || (der_len = i2d_X509_SIG(sig, &der)) <= 0)
		goto ssl_fail;
	bag = PKCS12_SAFEBAG_create_secret(NID_pkcs8ShroudedKeyBag,
					   V_ASN1_OCTET_STRING, der, der_len);
	/* Java takes the entry's creation date from "Time <ms>". */
	snprintf(id, sizeof(id), "Time %lld", (long long)created_ms);
	if (!bag || !PKCS12_add_friendlyname_utf8(bag, alias, -1) ||
	    !PKCS12_add_localkeyid(bag, (unsigned char *)id,
				   (int)strlen(id)))
		goto ssl_fail;
	*out = bag;
	bag = NULL;
	rc = 0;
	goto done;
ssl_fail:
	rc = cli_ssl_err(CLI_EXIT_FAIL, file, "cannot build the PKCS#12 file");
done:
	if (p8) {
		const unsigned char *pk = NULL;
		int pklen = 0;

		if (PKCS8_pkey_get0(NULL, &pk, &pklen, NULL, p8) && pk &&
		    pklen > 0)
			OPENSSL_cleanse((void *)pk, (size_t)pklen);
	}
	PKCS8_PRIV_KEY_INFO_free(p8);
	if (copy)
		OPENSSL_clear_free(copy, key_len);
	ASN1_OBJECT_free(obj);
	X509_SIG_free(sig);
	OPENSSL_free(der);
	PKCS12_SAFEBAG_free(bag);
	return rc;
}
