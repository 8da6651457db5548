/*
 * PKCS#12 decryption through the conversion's key-derivation meter
 * (kdfmeter.h): the PBE behind every encrypted part of a PKCS#12 file (a
 * shrouded key bag, Java's secret bag, an encrypted safe).
 *
 * OpenSSL's PBE calls (PKCS12_pbe_crypt_ex() and those over it) derive the
 * key inside and never show it, so a memo of derived keys cannot sit
 * around them.  For the algorithms real files use, the key (and IV) are
 * derived here with OpenSSL's own KDFs, the way OpenSSL 3's
 * PKCS5_v2_PBE_keyivgen_ex() and PKCS12_PBE_keyivgen_ex() do, through the
 * meter:
 *   - PBES2 with PBKDF2 and a CBC cipher OpenSSL can fetch (AES, what
 *     libwks, OpenSSL 3 and Java 12+ write; 3DES): PKCS5_PBKDF2_HMAC();
 *   - PKCS#12 PBE with 2- or 3-key triple DES (OpenSSL 1.x, older Java):
 *     PKCS12_key_gen_utf8_ex() for the key and for the IV.
 * Anything else (RC2 and RC4 under the legacy provider, PBES1, other
 * modes) goes to PKCS12_pbe_crypt_ex() whole, charged as its derivations
 * but not memoised.  The password is used with its length everywhere
 * (NULL: PKCS#12's absent password).
 */
#include "convert/convert_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "util/error.h"
#include "util/wipe.h"

/* No derivation here: fall back to OpenSSL's whole PBE. */
#define FALLBACK 1

struct pbkdf2_arg {
	const char *pw;
	int pw_len;
	const unsigned char *salt;
	int salt_len;
	int iter;
	const EVP_MD *md;
};

static int pbkdf2(void *arg, uint8_t *out, size_t out_len)
{
	const struct pbkdf2_arg *a = arg;

	return PKCS5_PBKDF2_HMAC(a->pw ? a->pw : "", a->pw ? a->pw_len : 0,
				 a->salt, a->salt_len, a->iter, a->md,
				 (int)out_len, out) == 1;
}

struct p12kdf_arg {
	const char *pw;
	int pw_len;
	unsigned char *salt;
	int salt_len;
	int id, iter;
	const EVP_MD *md;
};

static int p12kdf(void *arg, uint8_t *out, size_t out_len)
{
	const struct p12kdf_arg *a = arg;

	return PKCS12_key_gen_utf8_ex(a->pw, a->pw_len, a->salt, a->salt_len,
				      a->id, a->iter, (int)out_len, out, a->md,
				      NULL, NULL) == 1;
}

/* A CBC cipher by its OID, or NULL (then OpenSSL's own path). */
static EVP_CIPHER *fetch_cbc(const ASN1_OBJECT *obj)
{
	char name[80];
	EVP_CIPHER *c;

	if (OBJ_obj2txt(name, sizeof(name), obj, 0) <= 0)
		return NULL;
	c = EVP_CIPHER_fetch(NULL, name, NULL);
	if (c && (EVP_CIPHER_get_mode(c) != EVP_CIPH_CBC_MODE ||
		  (EVP_CIPHER_get_flags(c) & EVP_CIPH_FLAG_CIPHER_WITH_MAC) ||
		  EVP_CIPHER_get_key_length(c) <= 0 ||
		  EVP_CIPHER_get_key_length(c) > EVP_MAX_KEY_LENGTH)) {
		EVP_CIPHER_free(c);
		c = NULL;
	}
	return c;
}

/* PBES2 with PBKDF2: cc set up for decryption, or FALLBACK. */
static int pbes2_init(EVP_CIPHER_CTX *cc, wks__kdf_meter *m,
		      const ASN1_TYPE *param, const char *pw, int pw_len)
{
	PBE2PARAM *p2 = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBE2PARAM),
						  param);
	PBKDF2PARAM *kdf = NULL;
	EVP_CIPHER *c = NULL;
	EVP_MD *md = NULL;
	uint8_t key[EVP_MAX_KEY_LENGTH];
	char what[64];
	int keylen = 0, prf = NID_hmacWithSHA1, md_nid = NID_undef, err;
	long iter = 0;

	if (!p2 || !p2->keyfunc || !p2->encryption ||
	    OBJ_obj2nid(p2->keyfunc->algorithm) != NID_id_pbkdf2 ||
	    !(kdf = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBKDF2PARAM),
					      p2->keyfunc->parameter)) ||
	    !(c = fetch_cbc(p2->encryption->algorithm))) {
		err = FALLBACK;
		goto done;
	}
	if (kdf->prf)
		prf = OBJ_obj2nid(kdf->prf->algorithm);
	/* The checks of PKCS5_v2_PBKDF2_keyivgen_ex(). */
	if (!EVP_DecryptInit_ex(cc, c, NULL, NULL, NULL) ||
	    EVP_CIPHER_asn1_to_param(cc, p2->encryption->parameter) <= 0 ||
	    (keylen = EVP_CIPHER_CTX_get_key_length(cc)) <= 0 ||
	    keylen > EVP_MAX_KEY_LENGTH ||
	    (kdf->keylength && ASN1_INTEGER_get(kdf->keylength) != keylen) ||
	    !EVP_PBE_find(EVP_PBE_TYPE_PRF, prf, NULL, &md_nid, 0) ||
	    !(md = EVP_MD_fetch(NULL, OBJ_nid2sn(md_nid), NULL)) ||
	    !kdf->salt || kdf->salt->type != V_ASN1_OCTET_STRING ||
	    (iter = ASN1_INTEGER_get(kdf->iter)) < 1 || iter > INT_MAX) {
		err = WKS_ERR_INTEGRITY;
		goto done;
	}
	{
		const ASN1_OCTET_STRING *salt = kdf->salt->value.octet_string;
		struct pbkdf2_arg a = { pw, pw_len, salt->data, salt->length,
					(int)iter, md };
		wks__kdf_desc d = { what, (uint64_t)iter, (uint64_t)keylen,
				    salt->data, (size_t)salt->length, pw,
				    (size_t)pw_len };

		snprintf(what, sizeof(what), "PBKDF2/%d", md_nid);
		if ((err = wks__kdf_run(m, &d, (uint64_t)iter, pbkdf2, &a, key,
					(size_t)keylen)) < 0)
			goto done;
	}
	err = EVP_DecryptInit_ex(cc, NULL, NULL, key, NULL) ? 0 :
	      WKS_ERR_INTEGRITY;
done:
	wks_wipe(key, sizeof(key));
	EVP_MD_free(md);
	EVP_CIPHER_free(c);
	PBKDF2PARAM_free(kdf);
	PBE2PARAM_free(p2);
	return err;
}

/* PKCS#12 PBE with triple DES: cc set up for decryption, or FALLBACK. */
static int p12pbe_init(EVP_CIPHER_CTX *cc, wks__kdf_meter *m, int nid,
		       const ASN1_TYPE *param, const char *pw, int pw_len)
{
	const char *cname = nid == NID_pbe_WithSHA1And3_Key_TripleDES_CBC ?
			    "DES-EDE3-CBC" :
			    nid == NID_pbe_WithSHA1And2_Key_TripleDES_CBC ?
			    "DES-EDE-CBC" : NULL;
	PBEPARAM *pbe = NULL;
	EVP_CIPHER *c = NULL;
	EVP_MD *md = NULL;
	uint8_t key[EVP_MAX_KEY_LENGTH], iv[EVP_MAX_IV_LENGTH];
	int keylen, ivlen, err = 0;
	long iter = 1;

	if (!cname || !(c = EVP_CIPHER_fetch(NULL, cname, NULL)) ||
	    !(md = EVP_MD_fetch(NULL, "SHA1", NULL))) {
		err = FALLBACK;
		goto done;
	}
	keylen = EVP_CIPHER_get_key_length(c);
	ivlen = EVP_CIPHER_get_iv_length(c);
	if (!(pbe = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBEPARAM),
					      param)) || !pbe->salt ||
	    (pbe->iter && ((iter = ASN1_INTEGER_get(pbe->iter)) < 1 ||
			   iter > INT_MAX)) ||
	    keylen <= 0 || keylen > (int)sizeof(key) || ivlen <= 0 ||
	    ivlen > (int)sizeof(iv)) {
		err = WKS_ERR_INTEGRITY;
		goto done;
	}
	for (int id = PKCS12_KEY_ID; id <= PKCS12_IV_ID && err == 0; id++) {
		struct p12kdf_arg a = { pw, pw_len, pbe->salt->data,
					pbe->salt->length, id, (int)iter, md };
		wks__kdf_desc d = { "PKCS12KDF/SHA1", (uint64_t)iter,
				    (uint64_t)id, pbe->salt->data,
				    (size_t)pbe->salt->length, pw,
				    (size_t)pw_len };

		err = wks__kdf_run(m, &d, (uint64_t)iter, p12kdf, &a,
				   id == PKCS12_KEY_ID ? key : iv,
				   (size_t)(id == PKCS12_KEY_ID ? keylen : ivlen));
	}
	if (err == 0 && !EVP_DecryptInit_ex(cc, c, NULL, key, iv))
		err = WKS_ERR_INTEGRITY;
done:
	wks_wipe(key, sizeof(key));
	wks_wipe(iv, sizeof(iv));
	EVP_MD_free(md);
	EVP_CIPHER_free(c);
	PBEPARAM_free(pbe);
	return err;
}

/* The rest of the algorithms, by OpenSSL alone: charged, not memoised. */
static int fallback(uint8_t **out, size_t *out_len, wks__kdf_meter *m,
		    const X509_ALGOR *alg, long iter, const char *pw,
		    int pw_len, const ASN1_OCTET_STRING *in)
{
	int nid = OBJ_obj2nid(alg->algorithm), n = 0, err;
	/* PKCS#12's PBEs derive the key and the IV apart. */
	unsigned runs = nid == NID_pbe_WithSHA1And128BitRC4 ||
			nid == NID_pbe_WithSHA1And40BitRC4 ||
			nid == NID_pbe_WithSHA1And128BitRC2_CBC ||
			nid == NID_pbe_WithSHA1And40BitRC2_CBC ||
			nid == NID_pbe_WithSHA1And3_Key_TripleDES_CBC ||
			nid == NID_pbe_WithSHA1And2_Key_TripleDES_CBC ? 2 : 1;
	unsigned char *p = NULL;

	if ((err = wks__kdf_charge(m, iter > 0 ? (uint64_t)iter : 1,
				   runs)) < 0)
		return err;
	if (!PKCS12_pbe_crypt_ex(alg, pw, pw_len, in->data, in->length, &p, &n,
				 0, NULL, NULL) || n < 0)
		return WKS_ERR_INTEGRITY;
	*out = p;
	*out_len = (size_t)n;
	return 0;
}

int wks__p12_decrypt(uint8_t **out, size_t *out_len, wks__kdf_meter *m,
		     const X509_ALGOR *alg, long iter, const char *pw,
		     int pw_len, const ASN1_OCTET_STRING *in)
{
	EVP_CIPHER_CTX *cc = NULL;
	unsigned char *p = NULL;
	int nid, n1 = 0, n2 = 0, cap = 0, err;

	*out = NULL;
	*out_len = 0;
	if (!alg || !alg->algorithm || !in || in->length < 0)
		return WKS_ERR_INTEGRITY;
	if (!(cc = EVP_CIPHER_CTX_new()))
		return WKS_ERR_NOMEM;
	nid = OBJ_obj2nid(alg->algorithm);
	err = nid == NID_pbes2 ?
	      pbes2_init(cc, m, alg->parameter, pw, pw_len) :
	      p12pbe_init(cc, m, nid, alg->parameter, pw, pw_len);
	if (err == FALLBACK) {
		EVP_CIPHER_CTX_free(cc);
		return fallback(out, out_len, m, alg, iter, pw, pw_len, in);
	}
	if (err < 0)
		goto done;
	/* As PKCS12_pbe_crypt_ex() decrypts. */
	cap = in->length + EVP_CIPHER_CTX_get_block_size(cc);
	if (cap <= 0 || !(p = OPENSSL_malloc((size_t)cap))) {
		err = WKS_ERR_NOMEM;
		goto done;
	}
	if (!EVP_DecryptUpdate(cc, p, &n1, in->data, in->length) ||
	    !EVP_DecryptFinal_ex(cc, p + n1, &n2)) {
		err = WKS_ERR_INTEGRITY;
		goto done;
	}
	*out = p;
	*out_len = (size_t)n1 + (size_t)n2;
	p = NULL;
done:
	if (p)
		OPENSSL_clear_free(p, (size_t)cap);
	EVP_CIPHER_CTX_free(cc);
	return err;
}
