/*
 * PKCS#12 out: wks_convert_write_p12() (include/wks/convert.h), through
 * OpenSSL's PKCS12 API.  PKCS12_create() takes one key only, so the safe
 * bags are built here, which lets a whole store travel in one file.  What
 * is written matches `openssl pkcs12 -export` with its modern defaults:
 * shrouded key bags and an encrypted certificate safe under PBES2
 * (AES-256-CBC, PBKDF2-HMAC-SHA-256) and an HMAC-SHA-256 MAC, all with the
 * caller's iteration count.  Trusted certificates carry Java's
 * trusted-key-usage attribute and secret keys go into Java's secret bags,
 * so that keytool reads the file as the store it came from.
 */
#include "convert/convert_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "util/buf.h"
#include "util/error.h"
#include "util/wipe.h"

/* Oracle's "trusted key usage" attribute and its usual value
 * (anyExtendedKeyUsage). */
#define JAVA_TRUSTED_OID "2.16.840.1.113894.746875.1.1"
#define ANY_EKU_OID "2.5.29.37.0"

/* JCA names and OIDs of secret key algorithms, as Java's KnownOIDs has
 * them (any listed name exports to its OID; names compare without case,
 * as Java's do; an OID reads back as the first name listed for it). */
static const struct {
	const char *name, *oid;
} algs[] = {
	{ "AES", "2.16.840.1.101.3.4.1" },
	{ "DESede", "1.3.14.3.2.17" },
	{ "TripleDES", "1.3.14.3.2.17" },
	{ "DES", "1.3.14.3.2.7" },
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

char *wks__p12_alg_name(const ASN1_OBJECT *obj)
{
	char dotted[128];
	int n = OBJ_obj2txt(dotted, sizeof(dotted), obj, 1);

	if (n <= 0 || (size_t)n >= sizeof(dotted))
		return NULL;
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (!strcmp(algs[i].oid, dotted))
			return strdup(algs[i].name);
	return strdup(dotted);
}

static ASN1_OBJECT *oid_of(const char *name)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (!strcasecmp(algs[i].name, name))
			return OBJ_txt2obj(algs[i].oid, 1);
	if (name[0] >= '0' && name[0] <= '2' && name[1] == '.' &&
	    strspn(name, "0123456789.") == strlen(name)) {
		return OBJ_txt2obj(name, 1);
	}
	return NULL;
}

typedef struct {
	wks_store *st;
	const char *key_pw, *p12_pw;
	size_t key_pw_len, p12_pw_len;
	int iterations;
	wks_password_cb cb;
	void *cb_arg;
	wks_key_cb get_key; /* instead of the passwords */
	void *get_arg;
	int cb_failed;      /* get_key failed: the call ends */
	STACK_OF(PKCS12_SAFEBAG) *keybags, *certbags;
	STACK_OF(X509) *added; /* chain certificates written already */
	wks_convert_report *rep;
} p12_out;

static int build_failed(void)
{
	return wks__err(WKS_ERR_CRYPTO, "cannot build the PKCS#12 file");
}

/* Open the key of `alias`: key_pw, then the callback's passwords.
 * WKS_ERR_INTEGRITY when none opens it. */
static int open_key(wks_key **key, p12_out *o, const char *alias)
{
	char buf[WKS__CB_PW_MAX];
	size_t n = 0;
	int err;

	if (o->get_key) {
		*key = NULL;
		err = o->get_key(o->get_arg, alias, key);
		if (err == 0 && !*key)
			err = WKS_ERR_INVALID;
		if (err < 0) {
			o->cb_failed = 1;
			if (!wks_error_detail()[0])
				wks__err(err, "entry \"%s\": no key", alias);
		}
		return err > 0 ? WKS_ERR_INVALID : err;
	}
	err = wks_store_get_key(key, o->st, alias, o->key_pw, o->key_pw_len);

	for (unsigned attempt = 1; err == WKS_ERR_INTEGRITY; attempt++) {
		if (!wks__ask_pw(o->cb, o->cb_arg, alias, attempt, buf, &n))
			break;
		err = wks_store_get_key(key, o->st, alias, buf, n);
		wks_wipe(buf, sizeof(buf));
	}
	if (err == WKS_ERR_INTEGRITY)
		wks__err(err, "entry \"%s\": no password given opens its key",
			 alias);
	return err;
}

static int add_cert_bag(STACK_OF(PKCS12_SAFEBAG) **bags, X509 *x,
			const char *name, const uint8_t *id, size_t id_len,
			int trusted)
{
	PKCS12_SAFEBAG *bag = PKCS12_add_cert(bags, x);

	if (!bag)
		return -1;
	if (name && !PKCS12_add_friendlyname_utf8(bag, name, -1))
		return -1;
	if (id && !PKCS12_add_localkeyid(bag, (unsigned char *)id,
					 (int)id_len))
		return -1;
	if (trusted) {
		ASN1_OBJECT *eku = OBJ_txt2obj(ANY_EKU_OID, 1);
		int ok = eku && PKCS12_add1_attr_by_txt(bag, JAVA_TRUSTED_OID,
					V_ASN1_OBJECT,
					(const unsigned char *)eku, -1);

		ASN1_OBJECT_free(eku);
		if (!ok)
			return -1;
	}
	return 0;
}

static int push_bag(STACK_OF(PKCS12_SAFEBAG) **bags, PKCS12_SAFEBAG *bag)
{
	if ((!*bags && !(*bags = sk_PKCS12_SAFEBAG_new_null())) ||
	    !sk_PKCS12_SAFEBAG_push(*bags, bag))
		return -1;
	return 0;
}

static int export_key(p12_out *o, const char *alias)
{
	wks_key *key = NULL;
	X509 *leaf = NULL;
	PKCS8_PRIV_KEY_INFO *p8 = NULL;
	PKCS12_SAFEBAG *bag = NULL;
	unsigned char id[EVP_MAX_MD_SIZE];
	unsigned int id_len = 0;
	const uint8_t *der;
	size_t der_len, n = 0;
	int err;

	if ((err = wks_store_cert_count(&n, o->st, alias)) < 0)
		return err;
	if (n == 0)
		return wks__err(WKS_ERR_INVALID, "entry \"%s\" has no "
				"certificate: a PKCS#12 key goes with one",
				alias);
	if ((err = open_key(&key, o, alias)) < 0)
		return err;
	if ((err = wks_store_get_cert(&leaf, o->st, alias, 0)) < 0)
		goto done;
	der = wks_key_data(key, &der_len);
	err = WKS_ERR_CRYPTO;
	if (!(p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &der, (long)der_len)) ||
	    !X509_digest(leaf, EVP_sha1(), id, &id_len))
		goto fail;
	bag = PKCS12_SAFEBAG_create_pkcs8_encrypt(NID_aes_256_cbc, o->p12_pw,
						  (int)o->p12_pw_len, NULL, 0,
						  o->iterations, p8);
	if (!bag || !PKCS12_add_friendlyname_utf8(bag, alias, -1) ||
	    !PKCS12_add_localkeyid(bag, id, (int)id_len) ||
	    push_bag(&o->keybags, bag) < 0)
		goto fail;
	bag = NULL;
	if (add_cert_bag(&o->certbags, leaf, alias, id, id_len, 0) < 0)
		goto fail;
	for (size_t i = 1; i < n; i++) {
		X509 *x = NULL;
		int seen = 0;

		if ((err = wks_store_get_cert(&x, o->st, alias, i)) < 0)
			goto done;
		for (int j = 0; j < sk_X509_num(o->added) && !seen; j++)
			seen = !X509_cmp(x, sk_X509_value(o->added, j));
		if (!seen && (add_cert_bag(&o->certbags, x, NULL, NULL, 0, 0) < 0 ||
			      !sk_X509_push(o->added, x))) {
			X509_free(x);
			err = WKS_ERR_CRYPTO;
			goto fail;
		}
		if (seen)
			X509_free(x);
	}
	err = 0;
	goto done;
fail:
	err = build_failed();
done:
	PKCS12_SAFEBAG_free(bag);
	PKCS8_PRIV_KEY_INFO_free(p8);
	X509_free(leaf);
	wks_key_free(key);
	return err;
}

/* A secret key as Java's secret bag: an EncryptedPrivateKeyInfo of
 * { version 0, { OID, NULL }, OCTET STRING key }, friendlyName the alias,
 * localKeyID "Time <ms>" (where Java keeps the creation date). */
static int export_secret(p12_out *o, const char *alias)
{
	wks_key *key = NULL;
	ASN1_OBJECT *obj = NULL;
	PKCS8_PRIV_KEY_INFO *p8 = NULL;
	X509_SIG *sig = NULL;
	PKCS12_SAFEBAG *bag = NULL;
	unsigned char *copy = NULL, *der = NULL;
	const uint8_t *data;
	int64_t created = 0;
	size_t len = 0;
	char id[40];
	int der_len = 0, err;

	if ((err = open_key(&key, o, alias)) < 0)
		return err;
	data = wks_key_data(key, &len);
	if (!(obj = oid_of(wks_key_algorithm(key)))) {
		err = wks__err(WKS_ERR_UNSUPPORTED, "algorithm \"%s\" has no "
			       "OID, so PKCS#12 cannot hold it (Java's "
			       "neither)", wks_key_algorithm(key));
		goto done;
	}
	if (len == 0 || len > 65536) {
		err = wks__err(WKS_ERR_LIMIT, "secret key of %zu bytes", len);
		goto done;
	}
	(void)wks_store_creation_time(&created, o->st, alias);
	if (!(p8 = PKCS8_PRIV_KEY_INFO_new()) ||
	    !(copy = OPENSSL_malloc(len)))
		goto fail;
	memcpy(copy, data, len);
	if (!PKCS8_pkey_set0(p8, obj, 0, V_ASN1_NULL, NULL, copy, (int)len))
		goto fail;
	obj = NULL;
	copy = NULL;
	sig = PKCS8_encrypt(-1, EVP_aes_256_cbc(), o->p12_pw,
			    (int)o->p12_pw_len, NULL, 0, o->iterations, p8);
	if (!sig || (der_len = i2d_X509_SIG(sig, &der)) <= 0)
		goto fail;
	bag = PKCS12_SAFEBAG_create_secret(NID_pkcs8ShroudedKeyBag,
					   V_ASN1_OCTET_STRING, der, der_len);
	snprintf(id, sizeof(id), "Time %lld", (long long)created);
	if (!bag || !PKCS12_add_friendlyname_utf8(bag, alias, -1) ||
	    !PKCS12_add_localkeyid(bag, (unsigned char *)id, (int)strlen(id)) ||
	    push_bag(&o->keybags, bag) < 0)
		goto fail;
	bag = NULL;
	err = 0;
	goto done;
fail:
	err = build_failed();
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
		OPENSSL_clear_free(copy, len);
	ASN1_OBJECT_free(obj);
	X509_SIG_free(sig);
	OPENSSL_free(der);
	PKCS12_SAFEBAG_free(bag);
	wks_key_free(key);
	return err;
}

static int export_cert(p12_out *o, const char *alias)
{
	X509 *x = NULL;
	int err;

	if ((err = wks_store_get_cert(&x, o->st, alias, 0)) < 0)
		return err;
	err = add_cert_bag(&o->certbags, x, alias, NULL, 0, 1) < 0 ?
	      build_failed() : 0;
	X509_free(x);
	return err;
}

/* Add a safe of `bags` to *safes: encrypted under pw (PBES2, AES-256-CBC,
 * `iter`), or plain with pw == NULL.  Not PKCS12_add_safe(), which takes
 * the password as a C string (strlen): every password here is the byte
 * string given, with its length, as for the key bags and the MAC. */
static int add_safe(STACK_OF(PKCS7) **safes, STACK_OF(PKCS12_SAFEBAG) *bags,
		    const char *pw, int pw_len, int iter)
{
	PKCS7 *p7 = pw ? PKCS12_pack_p7encdata(NID_aes_256_cbc, pw, pw_len,
					       NULL, 0, iter, bags)
		       : PKCS12_pack_p7data(bags);

	if (!p7 || (!*safes && !(*safes = sk_PKCS7_new_null())) ||
	    !sk_PKCS7_push(*safes, p7)) {
		PKCS7_free(p7);
		return -1;
	}
	return 0;
}

static int store_iterations(wks_store *st)
{
	char buf[32];
	long v;

	if (wks_get_property(buf, sizeof(buf), st,
			     "wolfjce.wks.iterationCount") != WKS_OK)
		return 210000;
	v = strtol(buf, NULL, 10);
	return v >= 10000 && v <= INT32_MAX ? (int)v : 210000;
}

static int write_p12(uint8_t **out, size_t *out_len, wks_store *st,
		     const char *alias, const char *key_pw, size_t key_pw_len,
		     const char *p12_pw, size_t p12_pw_len, unsigned iterations,
		     wks_password_cb cb, void *cb_arg, wks_key_cb get_key,
		     void *get_arg, wks_convert_report **report)
{
	p12_out o;
	STACK_OF(PKCS7) *safes = NULL;
	PKCS12 *p12 = NULL;
	char **aliases = NULL, *one[1];
	char **list = one;
	size_t count = 1;
	unsigned char *der = NULL;
	int der_len, err = 0;

	wks__err_clear();
	if (report)
		*report = NULL;
	if (!out || !out_len || !st || !p12_pw || (!key_pw && key_pw_len))
		return wks__err(WKS_ERR_INVALID, "NULL argument");
	*out = NULL;
	*out_len = 0;
	if (iterations > INT32_MAX || p12_pw_len > INT_MAX || key_pw_len > INT_MAX)
		return wks__err(WKS_ERR_INVALID, "iteration count or password "
				"length out of range");
	memset(&o, 0, sizeof(o));
	ERR_set_mark(); /* the caller's OpenSSL errors stay, ours go */
	o.st = st;
	o.p12_pw = p12_pw;
	o.p12_pw_len = p12_pw_len;
	o.key_pw = key_pw ? key_pw : p12_pw;
	o.key_pw_len = key_pw ? key_pw_len : p12_pw_len;
	o.iterations = iterations ? (int)iterations : store_iterations(st);
	o.cb = cb;
	o.cb_arg = cb_arg;
	o.get_key = get_key;
	o.get_arg = get_arg;
	if (!(o.rep = wks__report_new()) || !(o.added = sk_X509_new_null())) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	if (alias) {
		if (!wks_store_contains(st, alias)) {
			err = wks__err(WKS_ERR_NOTFOUND, "no entry \"%s\"", alias);
			goto done;
		}
		one[0] = (char *)alias;
	} else if ((err = wks_store_aliases(&aliases, &count, st)) < 0) {
		goto done;
	} else {
		list = aliases;
	}
	for (size_t i = 0; i < count; i++) {
		const char *a = list[i];

		switch (wks_store_entry_type(st, a)) {
		case WKS_ENTRY_PRIVATE_KEY:
			err = export_key(&o, a);
			break;
		case WKS_ENTRY_SECRET_KEY:
			err = export_secret(&o, a);
			break;
		case WKS_ENTRY_CERTIFICATE:
			err = export_cert(&o, a);
			break;
		default:
			err = 0;
			continue;
		}
		if (err == 0) {
			o.rep->done++;
			continue;
		}
		if (alias || o.cb_failed || err == WKS_ERR_NOMEM ||
		    err == WKS_ERR_CRYPTO)
			goto done;
		if ((err = wks__report_skip(o.rep, a, err,
					    wks_error_detail())) < 0)
			goto done;
		wks__err_clear();
	}
	if (o.rep->done == 0) {
		err = wks__err(WKS_ERR_INVALID, "no entry to export");
		goto done;
	}
	if ((o.certbags && add_safe(&safes, o.certbags, p12_pw,
				    (int)p12_pw_len, o.iterations) < 0) ||
	    (o.keybags && add_safe(&safes, o.keybags, NULL, 0, 0) < 0) ||
	    !(p12 = PKCS12_add_safes(safes, 0)) ||
	    !PKCS12_set_mac(p12, p12_pw, (int)p12_pw_len, NULL, 0, o.iterations,
			    EVP_sha256()) ||
	    (der_len = i2d_PKCS12(p12, &der)) <= 0) {
		err = build_failed();
		goto done;
	}
	if (!(*out = wks__out_alloc((size_t)der_len))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	memcpy(*out, der, (size_t)der_len);
	*out_len = (size_t)der_len;
	err = 0;
done:
	if (der)
		OPENSSL_clear_free(der, (size_t)der_len);
	PKCS12_free(p12);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	sk_PKCS12_SAFEBAG_pop_free(o.keybags, PKCS12_SAFEBAG_free);
	sk_PKCS12_SAFEBAG_pop_free(o.certbags, PKCS12_SAFEBAG_free);
	sk_X509_pop_free(o.added, X509_free);
	wks_aliases_free(aliases);
	ERR_pop_to_mark();
	if (report)
		*report = o.rep;
	else
		wks_convert_report_free(o.rep);
	return err;
}

int wks_convert_write_p12(uint8_t **out, size_t *out_len, wks_store *st,
			  const char *alias, const char *key_pw,
			  size_t key_pw_len, const char *p12_pw,
			  size_t p12_pw_len, unsigned iterations,
			  wks_password_cb cb, void *cb_arg,
			  wks_convert_report **report)
{
	return write_p12(out, out_len, st, alias, key_pw, key_pw_len, p12_pw,
			 p12_pw_len, iterations, cb, cb_arg, NULL, NULL,
			 report);
}

int wks_convert_write_p12_keys(uint8_t **out, size_t *out_len,
			       wks_store *st, const char *alias,
			       wks_key_cb get_key, void *arg,
			       const char *p12_pw, size_t p12_pw_len,
			       unsigned iterations,
			       wks_convert_report **report)
{
	if (!get_key) {
		wks__err_clear();
		if (report)
			*report = NULL;
		return wks__err(WKS_ERR_INVALID, "NULL argument");
	}
	return write_p12(out, out_len, st, alias, NULL, 0, p12_pw, p12_pw_len,
			 iterations, NULL, NULL, get_key, arg, report);
}
