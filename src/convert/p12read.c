/*
 * PKCS#12 in: the PKCS#12 branch of wks_convert_read() (convert.h).
 *
 * The MAC is verified before anything is decrypted (a file without one is
 * refused unless WKS_CONVERT_NO_MAC_OK); every PBE and the MAC have their
 * iteration count checked against libwks.wks.maxIterationCount before
 * they run, and all of one parse share a budget and a memo of derived keys
 * (kdfmeter.h; the PBEs through p12pbe.c); nesting is bounded.  Keys are
 * matched to their certificate by localKeyID, else by public key, and
 * their chain is built from the file's certificates (issuer by issuer, at
 * most wolfjce.wks.maxCertChainLength).  Certificates that belong to no chain,
 * and those Java marked trusted (its trusted-key-usage attribute), become
 * trusted certificate entries; Java's secret bags become secret keys.
 * Whatever fails to decrypt gives one message (a wrong password, bad
 * padding and undecodable plaintext look the same), so that a file without
 * a MAC is no padding oracle.
 *
 * wks_p12_parse() and the wks_p12_*() accessors give the entries one by
 * one (the `wks` tool decides and reports per entry); wks_convert_read()
 * stores them all.  Errors are wks_err, skips go into the report.
 */
#include "convert/convert_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/asn1t.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "util/error.h"
#include "util/wipe.h"

#define JAVA_TRUSTED_OID "2.16.840.1.113894.746875.1.1"
#define MAX_DEPTH 8

typedef struct {
	char *name;       /* friendlyName (UTF-8) or NULL */
	uint8_t *id;      /* localKeyID or NULL */
	size_t id_len;
	uint8_t *pkcs8;   /* keys */
	size_t pkcs8_len;
	X509 *cert;       /* certificates */
	char *secret_alg; /* secret keys (Java's secret bags) */
	uint8_t *secret;
	size_t secret_len;
	int trusted;      /* Java's trusted-key-usage attribute */
	int used;         /* a certificate of a key's chain */
} item;

typedef struct {
	item *v;
	size_t n, cap;
	const char *pass;
	int passlen;
	long max_iter;
	size_t max_chain;
	size_t work; /* issuer checks left for building chains */
	wks__kdf_meter *kdf; /* the call's key derivations (kdfmeter.h) */
	wks_convert_report *rep;
} bags;

/* Building chains looks at every certificate for every link of every
 * key's chain: a hostile file of many keys and long chains could make
 * that billions of checks.  Real files need a few thousand. */
#define MAX_ISSUER_CHECKS 4000000u

static void item_clear(item *it)
{
	OPENSSL_free(it->name);
	free(it->id);
	if (it->pkcs8)
		wks_wipe_free(it->pkcs8, it->pkcs8_len);
	X509_free(it->cert);
	free(it->secret_alg);
	if (it->secret)
		wks_wipe_free(it->secret, it->secret_len);
}

static int nomem(void)
{
	return wks__err(WKS_ERR_NOMEM, "out of memory");
}

static int decrypt_failed(void)
{
	return wks__err(WKS_ERR_INTEGRITY, "PKCS#12: cannot decrypt: wrong "
			"password, or the file was modified (or it uses an "
			"algorithm OpenSSL lacks, e.g. RC2 without the legacy "
			"provider)");
}

static int trusted_nid(void)
{
	int nid = OBJ_txt2nid(JAVA_TRUSTED_OID);

	if (nid == NID_undef)
		nid = OBJ_create(JAVA_TRUSTED_OID, "javaTrustedKeyUsage",
				 "Java trusted key usage");
	return nid;
}

/* The iteration count of a PBES1 / PKCS#12 PBE or PBES2-with-PBKDF2
 * algorithm; LONG_MAX for scrypt (not taken), -1 if unreadable (left to
 * OpenSSL to refuse). */
static long pbe_iterations(const X509_ALGOR *alg)
{
	long iter = -1;

	if (!alg || !alg->parameter)
		return -1;
	if (OBJ_obj2nid(alg->algorithm) == NID_pbes2) {
		PBE2PARAM *p2 = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBE2PARAM),
							  alg->parameter);

		if (p2 && p2->keyfunc && p2->keyfunc->parameter &&
		    OBJ_obj2nid(p2->keyfunc->algorithm) == NID_id_pbkdf2) {
			PBKDF2PARAM *kdf = ASN1_TYPE_unpack_sequence(
				ASN1_ITEM_rptr(PBKDF2PARAM), p2->keyfunc->parameter);

			if (kdf)
				iter = ASN1_INTEGER_get(kdf->iter);
			PBKDF2PARAM_free(kdf);
		} else if (p2 && p2->keyfunc &&
			   OBJ_obj2nid(p2->keyfunc->algorithm) == NID_id_scrypt) {
			iter = LONG_MAX;
		}
		PBE2PARAM_free(p2);
	} else {
		PBEPARAM *pbe = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBEPARAM),
							  alg->parameter);

		if (pbe)
			iter = ASN1_INTEGER_get(pbe->iter);
		PBEPARAM_free(pbe);
	}
	return iter;
}

long wks_pbe_iterations(const X509_ALGOR *alg)
{
	long iter;

	ERR_set_mark(); /* the caller's OpenSSL errors stay, ours go */
	iter = pbe_iterations(alg);
	ERR_pop_to_mark();
	return iter;
}

static int iter_check(const bags *l, long iter, const char *what)
{
	if (iter > l->max_iter)
		return wks__err(WKS_ERR_LIMIT, "PKCS#12 %s: iteration count %ld "
				"exceeds limit %ld (libwks.wks.maxIterationCount)",
				what, iter, l->max_iter);
	return 0;
}

/* Decrypt one encrypted part (`what`: "private key", ...) and decode it
 * as `it`: the item, or NULL with *err set (the iteration cap's or the
 * budget's WKS_ERR_LIMIT, WKS_ERR_NOMEM, else the one message of
 * decrypt_failed()). */
static void *decrypt_item(bags *l, const X509_ALGOR *alg,
			  const ASN1_OCTET_STRING *in, const ASN1_ITEM *it,
			  const char *what, int *err)
{
	long iter = pbe_iterations(alg);
	uint8_t *plain = NULL;
	size_t n = 0;
	void *v = NULL;
	int e;

	if ((*err = iter_check(l, iter, what)) < 0)
		return NULL;
	e = wks__p12_decrypt(&plain, &n, l->kdf, alg, iter, l->pass,
			     l->passlen, in);
	if (e == 0 && n <= LONG_MAX) {
		const unsigned char *p = plain;

		v = ASN1_item_d2i(NULL, &p, (long)n, it);
	}
	if (plain)
		OPENSSL_clear_free(plain, n);
	if (v)
		return v;
	if (e == WKS_ERR_LIMIT) {
		char d[400];

		snprintf(d, sizeof(d), "%s", wks_error_detail());
		*err = wks__err(e, "PKCS#12 %s: %s", what, d);
	} else {
		*err = e == WKS_ERR_NOMEM ? nomem() : decrypt_failed();
	}
	return NULL;
}

static item *item_add(bags *l, PKCS12_SAFEBAG *bag)
{
	const ASN1_TYPE *id;
	item *it;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		item *v = cap > SIZE_MAX / sizeof(*v) ? NULL :
			  realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	it = &l->v[l->n];
	memset(it, 0, sizeof(*it));
	id = PKCS12_SAFEBAG_get0_attr(bag, NID_localKeyID);
	if (id && id->type == V_ASN1_OCTET_STRING &&
	    id->value.octet_string->length > 0) {
		it->id_len = (size_t)id->value.octet_string->length;
		if (!(it->id = malloc(it->id_len)))
			return NULL;
		memcpy(it->id, id->value.octet_string->data, it->id_len);
	}
	it->name = PKCS12_get_friendlyname(bag);
	it->trusted = PKCS12_get_attr_gen(PKCS12_SAFEBAG_get0_attrs(bag),
					  trusted_nid()) != NULL;
	l->n++;
	return it;
}

static int skip_bag(bags *l, PKCS12_SAFEBAG *bag, const char *why)
{
	char *name = bag ? PKCS12_get_friendlyname(bag) : NULL;
	int err = wks__report_skip(l->rep, name ? name : "", WKS_ERR_UNSUPPORTED,
				   why);

	OPENSSL_free(name);
	return err < 0 ? nomem() : 0;
}

static int add_p8(bags *l, PKCS12_SAFEBAG *bag, const PKCS8_PRIV_KEY_INFO *p8)
{
	unsigned char *der = NULL;
	int n = p8 ? i2d_PKCS8_PRIV_KEY_INFO(p8, &der) : -1;
	item *it;

	if (n <= 0)
		return wks__err(WKS_ERR_FORMAT, "PKCS#12: malformed private key");
	if (!(it = item_add(l, bag)) || !(it->pkcs8 = malloc((size_t)n))) {
		OPENSSL_clear_free(der, (size_t)n);
		return nomem();
	}
	memcpy(it->pkcs8, der, (size_t)n);
	it->pkcs8_len = (size_t)n;
	OPENSSL_clear_free(der, (size_t)n);
	return 0;
}

/* A secret bag in Java's form: an EncryptedPrivateKeyInfo of
 * { OID, OCTET STRING key }. */
static int add_secret(bags *l, PKCS12_SAFEBAG *bag)
{
	const ASN1_OBJECT *type = PKCS12_SAFEBAG_get0_bag_type(bag);
	const ASN1_TYPE *val = PKCS12_SAFEBAG_get0_bag_obj(bag);
	const X509_ALGOR *pbe = NULL, *kalg = NULL;
	const ASN1_OCTET_STRING *enc = NULL;
	const ASN1_OBJECT *kobj = NULL;
	const unsigned char *p, *pk = NULL;
	X509_SIG *sig = NULL;
	PKCS8_PRIV_KEY_INFO *p8 = NULL;
	int pklen = 0, ptype = V_ASN1_UNDEF, err;
	item *it;

	if (!type || OBJ_obj2nid(type) != NID_pkcs8ShroudedKeyBag || !val ||
	    val->type != V_ASN1_OCTET_STRING)
		return skip_bag(l, bag, "a secret bag that is not an encrypted "
				"key (Java's form)");
	p = val->value.octet_string->data;
	sig = d2i_X509_SIG(NULL, &p, val->value.octet_string->length);
	if (!sig || p != val->value.octet_string->data +
			      val->value.octet_string->length) {
		err = wks__err(WKS_ERR_FORMAT, "PKCS#12: malformed encrypted "
			       "secret key");
		goto done;
	}
	X509_SIG_get0(sig, &pbe, &enc);
	if (!(p8 = decrypt_item(l, pbe, enc,
				ASN1_ITEM_rptr(PKCS8_PRIV_KEY_INFO),
				"secret key", &err)))
		goto done;
	if (!PKCS8_pkey_get0(&kobj, &pk, &pklen, &kalg, p8) || !kobj ||
	    pklen <= 0) {
		err = wks__err(WKS_ERR_FORMAT, "PKCS#12: malformed secret key");
		goto done;
	}
	X509_ALGOR_get0(NULL, &ptype, NULL, kalg);
	if (ptype != V_ASN1_UNDEF && ptype != V_ASN1_NULL) {
		err = wks__err(WKS_ERR_FORMAT, "PKCS#12: secret key with "
			       "unexpected algorithm parameters");
		goto done;
	}
	if (!(it = item_add(l, bag)) || !(it->secret_alg = wks__p12_alg_name(kobj)) ||
	    !(it->secret = malloc((size_t)pklen))) {
		err = nomem();
		goto done;
	}
	memcpy(it->secret, pk, (size_t)pklen);
	it->secret_len = (size_t)pklen;
	err = 0;
done:
	if (p8 && pk && pklen > 0)
		OPENSSL_cleanse((void *)pk, (size_t)pklen);
	PKCS8_PRIV_KEY_INFO_free(p8);
	X509_SIG_free(sig);
	return err;
}

static int walk(bags *l, const STACK_OF(PKCS12_SAFEBAG) *sk, int depth,
		int encrypted)
{
	for (int i = 0; i < sk_PKCS12_SAFEBAG_num(sk); i++) {
		PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(sk, i);
		PKCS8_PRIV_KEY_INFO *p8;
		const X509_ALGOR *alg = NULL;
		const ASN1_OCTET_STRING *enc = NULL;
		X509 *x;
		item *it;
		int err = 0;

		switch (PKCS12_SAFEBAG_get_nid(bag)) {
		case NID_keyBag:
			err = add_p8(l, bag, PKCS12_SAFEBAG_get0_p8inf(bag));
			break;
		case NID_pkcs8ShroudedKeyBag:
			X509_SIG_get0(PKCS12_SAFEBAG_get0_pkcs8(bag), &alg, &enc);
			if (!(p8 = decrypt_item(l, alg, enc,
						ASN1_ITEM_rptr(PKCS8_PRIV_KEY_INFO),
						"private key", &err)))
				return err;
			err = add_p8(l, bag, p8);
			PKCS8_PRIV_KEY_INFO_free(p8);
			break;
		case NID_certBag:
			if (PKCS12_SAFEBAG_get_bag_nid(bag) != NID_x509Certificate) {
				err = skip_bag(l, bag, "a certificate of another "
					       "kind than X.509");
				break;
			}
			if (!(x = PKCS12_SAFEBAG_get1_cert(bag)))
				return encrypted ? decrypt_failed() :
				       wks__err(WKS_ERR_FORMAT, "PKCS#12: "
						"malformed certificate");
			if (!(it = item_add(l, bag))) {
				X509_free(x);
				return nomem();
			}
			it->cert = x;
			break;
		case NID_safeContentsBag:
			if (depth >= MAX_DEPTH)
				return wks__err(WKS_ERR_LIMIT, "PKCS#12: safe "
						"contents nested too deeply");
			err = walk(l, PKCS12_SAFEBAG_get0_safes(bag), depth + 1,
				   encrypted);
			break;
		case NID_secretBag:
			err = add_secret(l, bag);
			break;
		case NID_crlBag:
			err = skip_bag(l, bag, "a CRL");
			break;
		default:
			err = skip_bag(l, bag, "an item of an unknown kind");
			break;
		}
		if (err < 0)
			return err;
	}
	return 0;
}

static int same_id(const item *a, const item *b)
{
	return a->id && b->id && a->id_len == b->id_len &&
	       !memcmp(a->id, b->id, a->id_len);
}

/* The chain of key k: its certificate (localKeyID, else public key), then
 * issuer after issuer from the file's certificates.  Indexes into l->v;
 * *n = 0 when the key has no certificate. */
static int key_chain(size_t *chain, size_t *n, bags *l, const item *k)
{
	const unsigned char *p = k->pkcs8;
	PKCS8_PRIV_KEY_INFO *p8;
	EVP_PKEY *pk = NULL;
	size_t leaf = SIZE_MAX;

	*n = 0;
	for (size_t j = 0; j < l->n && leaf == SIZE_MAX; j++)
		if (l->v[j].cert && same_id(k, &l->v[j]))
			leaf = j;
	if (leaf == SIZE_MAX) {
		if ((p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)k->pkcs8_len))) {
			pk = EVP_PKCS82PKEY(p8);
			PKCS8_PRIV_KEY_INFO_free(p8);
		}
		for (size_t j = 0; pk && j < l->n && leaf == SIZE_MAX; j++)
			if (l->v[j].cert &&
			    X509_check_private_key(l->v[j].cert, pk) == 1)
				leaf = j;
		EVP_PKEY_free(pk);
	}
	if (leaf == SIZE_MAX)
		return 0;
	chain[(*n)++] = leaf;
	while (*n < l->max_chain) {
		X509 *cur = l->v[chain[*n - 1]].cert;
		size_t next = SIZE_MAX;

		if (X509_check_issued(cur, cur) == X509_V_OK)
			break; /* self-signed: the root */
		for (size_t j = 0; j < l->n && next == SIZE_MAX; j++) {
			int dup = 0;

			if (l->v[j].cert && l->work-- == 0)
				return wks__err(WKS_ERR_LIMIT, "PKCS#12: too "
						"many certificates to sort into "
						"chains");
			if (!l->v[j].cert ||
			    X509_check_issued(l->v[j].cert, cur) != X509_V_OK)
				continue;
			for (size_t m = 0; m < *n; m++)
				dup |= !X509_cmp(l->v[chain[m]].cert,
						 l->v[j].cert);
			if (!dup)
				next = j;
		}
		if (next == SIZE_MAX)
			break;
		chain[(*n)++] = next;
	}
	return 0;
}

/* A parsed PKCS#12 file (convert.h, wks_p12_parse()). */
struct wks_p12_file {
	bags l;
	int null_pass;  /* the MAC took the absent password */
	struct {
		size_t item;
		size_t *chain; /* key: indexes into l.v, leaf first */
		size_t n;
	} *e;
	size_t ne;
	wks_convert_report *rep; /* owned only when made by wks_p12_parse() */
	int own_rep;
};

void wks_p12_free(wks_p12_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->l.n; i++)
		item_clear(&f->l.v[i]);
	free(f->l.v);
	for (size_t i = 0; i < f->ne; i++)
		free(f->e[i].chain);
	free(f->e);
	if (f->own_rep)
		wks_convert_report_free(f->rep);
	free(f);
}

/* The chain belongs to key k: its certificates are no entries of their
 * own, every bag of them (two keys with one certificate have two bags
 * with one localKeyID), unless a bag is a trusted certificate entry
 * (Java's attribute) and not the key's own (its localKeyID). */
static int claim_chain(bags *l, const item *k, const size_t *chain, size_t n)
{
	for (size_t j = 0; j < l->n; j++) {
		item *c = &l->v[j];

		if (!c->cert)
			continue;
		if (same_id(k, c))
			c->used = 1;
		for (size_t m = 0; m < n && !c->trusted && !c->used; m++) {
			if (l->work-- == 0)
				return wks__err(WKS_ERR_LIMIT, "PKCS#12: too "
						"many certificates to sort into "
						"chains");
			if (!X509_cmp(c->cert, l->v[chain[m]].cert))
				c->used = 1;
		}
	}
	return 0;
}

/* The entries: keys first (they claim their chains), then secrets, then
 * the certificates of no chain and the trusted ones. */
static int make_entries(wks_p12_file *f)
{
	bags *l = &f->l;
	size_t max = l->max_chain ? l->max_chain : 1;

	if (!(f->e = calloc(l->n ? l->n : 1, sizeof(*f->e))))
		return nomem();
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < l->n; i++) {
			item *it = &l->v[i];
			int what = it->pkcs8 ? 0 : it->secret ? 1 :
				   it->cert ? 2 : -1;
			int err;

			if (what != pass || (pass == 2 && it->used))
				continue;
			f->e[f->ne].item = i;
			if (pass == 0) {
				size_t *chain = calloc(max, sizeof(*chain));
				size_t n = 0;

				if (!chain)
					return nomem();
				f->e[f->ne].chain = chain;
				if ((err = key_chain(chain, &n, l, it)) < 0)
					return err;
				f->e[f->ne].n = n;
				if ((err = claim_chain(l, it, chain, n)) < 0)
					return err;
			}
			f->ne++;
		}
	}
	return 0;
}

static int mac_charge(bags *l, long iter)
{
	int err = wks__kdf_charge(l->kdf, iter > 0 ? (uint64_t)iter : 1, 1);
	char d[400];

	if (err < 0) {
		snprintf(d, sizeof(d), "%s", wks_error_detail());
		wks__err(err, "PKCS#12 MAC: %s", d);
	}
	return err;
}

static int p12_parse(wks_p12_file **out, const uint8_t *data, size_t len,
		     const char *pw, size_t pw_len, unsigned flags,
		     wks_convert_report *rep)
{
	const unsigned char *p = data;
	PKCS12 *p12 = NULL;
	STACK_OF(PKCS7) *safes = NULL;
	wks_p12_file *f;
	jks_limits lim;
	bags *l;
	int err = 0;

	*out = NULL;
	if (!(f = calloc(1, sizeof(*f))))
		return nomem();
	l = &f->l;
	wks__convert_limits(&lim);
	l->max_iter = (long)lim.max_iterations;
	l->max_chain = lim.max_chain;
	l->work = MAX_ISSUER_CHECKS;
	l->rep = f->rep = rep;
	if (!(l->kdf = wks__kdf_meter_new(lim.max_kdf_iterations))) {
		err = nomem();
		goto done;
	}
	l->pass = pw ? pw : "";
	if (pw_len > INT_MAX) {
		err = wks__err(WKS_ERR_INVALID, "password too long");
		goto done;
	}
	l->passlen = (int)pw_len;
	if (len > LONG_MAX || !(p12 = d2i_PKCS12(NULL, &p, (long)len))) {
		err = wks__err(WKS_ERR_FORMAT, "not a PKCS#12 file");
		goto done;
	}
	if ((size_t)(p - data) != len) {
		err = wks__err(WKS_ERR_FORMAT, "%zu bytes after the PKCS#12 "
			       "structure", len - (size_t)(p - data));
		goto done;
	}
	if (PKCS12_mac_present(p12)) {
		const ASN1_INTEGER *iter = NULL;
		long n = 1;

		PKCS12_get0_mac(NULL, NULL, NULL, &iter, p12);
		if (iter)
			n = ASN1_INTEGER_get(iter);
		if ((err = iter_check(l, n, "MAC")) < 0)
			goto done;
		/* OpenSSL derives the MAC key (once, twice for the absent
		 * password): charged, not memoised. */
		if ((err = mac_charge(l, n)) < 0)
			goto done;
		if (PKCS12_verify_mac(p12, l->pass, l->passlen)) {
			/* ok */
		} else if (l->passlen == 0 && (err = mac_charge(l, n)) == 0 &&
			   PKCS12_verify_mac(p12, NULL, 0)) {
			l->pass = NULL;
			f->null_pass = 1;
		} else if (err == 0) {
			err = wks__err(WKS_ERR_INTEGRITY, "PKCS#12 integrity "
				       "check failed: wrong password, or the "
				       "file was modified");
			goto done;
		} else {
			goto done;
		}
	} else if (!(flags & WKS_CONVERT_NO_MAC_OK)) {
		err = wks__err(WKS_ERR_INTEGRITY, "PKCS#12 without a MAC: its "
			       "contents cannot be authenticated "
			       "(WKS_CONVERT_NO_MAC_OK takes it anyway)");
		goto done;
	}
	if (!(safes = PKCS12_unpack_authsafes(p12))) {
		err = wks__err(WKS_ERR_FORMAT, "malformed PKCS#12 contents");
		goto done;
	}
	for (int i = 0; i < sk_PKCS7_num(safes) && err == 0; i++) {
		PKCS7 *p7 = sk_PKCS7_value(safes, i);
		STACK_OF(PKCS12_SAFEBAG) *sk = NULL;
		int nid = OBJ_obj2nid(p7->type), enc = 0;

		if (nid == NID_pkcs7_data) {
			sk = PKCS12_unpack_p7data(p7);
		} else if (nid == NID_pkcs7_encrypted) {
			PKCS7_ENC_CONTENT *ec = p7->d.encrypted ?
						p7->d.encrypted->enc_data : NULL;

			enc = 1;
			if (!ec) {
				err = decrypt_failed();
				break;
			}
			if (!(sk = decrypt_item(l, ec->algorithm, ec->enc_data,
						ASN1_ITEM_rptr(PKCS12_SAFEBAGS),
						"certificates", &err)))
				break;
		} else {
			err = skip_bag(l, NULL, "a part encrypted for a public "
				       "key: whatever it holds is not read");
			continue;
		}
		if (!sk) {
			err = wks__err(WKS_ERR_FORMAT, "malformed PKCS#12 "
				       "contents");
			break;
		}
		err = walk(l, sk, 0, enc);
		sk_PKCS12_SAFEBAG_pop_free(sk, PKCS12_SAFEBAG_free);
	}
	if (err == 0)
		err = make_entries(f);
done:
	l->pass = NULL; /* the caller's, not kept */
	wks__kdf_meter_free(l->kdf); /* wipes the derived keys */
	l->kdf = NULL;
	sk_PKCS7_pop_free(safes, PKCS7_free);
	PKCS12_free(p12);
	if (err < 0)
		wks_p12_free(f);
	else
		*out = f;
	return err;
}

int wks_p12_parse(wks_p12_file **out, const uint8_t *data, size_t len,
		  const char *pw, size_t pw_len, unsigned flags)
{
	wks_convert_report *rep;
	int err;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "NULL argument");
	*out = NULL;
	if (!data || (!pw && pw_len) || (flags & ~WKS_CONVERT_NO_MAC_OK))
		return wks__err(WKS_ERR_INVALID, "NULL argument or unknown "
				"flags");
	if (!(rep = wks__report_new()))
		return nomem();
	ERR_set_mark();
	err = p12_parse(out, data, len, pw, pw_len, flags, rep);
	ERR_pop_to_mark();
	if (err < 0)
		wks_convert_report_free(rep);
	else
		(*out)->own_rep = 1;
	return err;
}

int wks_p12_has_mac(const uint8_t *data, size_t len)
{
	const unsigned char *p = data;
	PKCS12 *p12;
	int r;

	wks__err_clear();
	if (!data || len > LONG_MAX)
		return wks__err(WKS_ERR_INVALID, "NULL argument");
	ERR_set_mark();
	p12 = d2i_PKCS12(NULL, &p, (long)len);
	ERR_pop_to_mark();
	if (!p12)
		return wks__err(WKS_ERR_FORMAT, "not a PKCS#12 file");
	r = PKCS12_mac_present(p12) ? 1 : 0;
	PKCS12_free(p12);
	return r;
}

size_t wks_p12_count(const wks_p12_file *f)
{
	return f ? f->ne : 0;
}

static const item *entry_item(const wks_p12_file *f, size_t i)
{
	return f && i < f->ne ? &f->l.v[f->e[i].item] : NULL;
}

const char *wks_p12_alias(const wks_p12_file *f, size_t i)
{
	const item *it = entry_item(f, i);

	return it ? it->name : NULL;
}

wks_entry_type wks_p12_entry_type(const wks_p12_file *f, size_t i)
{
	const item *it = entry_item(f, i);

	if (!it)
		return WKS_ENTRY_NONE;
	return it->pkcs8 ? WKS_ENTRY_PRIVATE_KEY :
	       it->secret ? WKS_ENTRY_SECRET_KEY : WKS_ENTRY_CERTIFICATE;
}

size_t wks_p12_cert_count(const wks_p12_file *f, size_t i)
{
	const item *it = entry_item(f, i);

	if (!it || it->secret)
		return 0;
	return it->pkcs8 ? f->e[i].n : 1;
}

X509 *wks_p12_get_cert(const wks_p12_file *f, size_t i, size_t j)
{
	const item *it = entry_item(f, i);
	X509 *x;

	if (!it || j >= wks_p12_cert_count(f, i))
		return NULL;
	x = it->pkcs8 ? f->l.v[f->e[i].chain[j]].cert : it->cert;
	return X509_up_ref(x) ? x : NULL;
}

const uint8_t *wks_p12_key(const wks_p12_file *f, size_t i, size_t *len)
{
	const item *it = entry_item(f, i);

	if (len)
		*len = !it ? 0 : it->pkcs8 ? it->pkcs8_len : it->secret_len;
	return !it ? NULL : it->pkcs8 ? it->pkcs8 : it->secret;
}

const char *wks_p12_secret_algorithm(const wks_p12_file *f, size_t i)
{
	const item *it = entry_item(f, i);

	return it ? it->secret_alg : NULL;
}

const wks_convert_report *wks_p12_skipped(const wks_p12_file *f)
{
	return f ? f->rep : NULL;
}

/* The alias of an entry: its friendlyName, else "1", "2", ... (the first
 * that neither the store nor this file has). */
static int pick_alias(char *buf, size_t size, wks_store *dst, const bags *l,
		      const item *it, unsigned *next)
{
	if (it->name) {
		snprintf(buf, size, "%s", it->name);
		return strlen(it->name) < size ? 0 : WKS_ERR_LIMIT;
	}
	for (;;) {
		int clash = 0;

		snprintf(buf, size, "%u", ++*next);
		for (size_t j = 0; j < l->n && !clash; j++)
			clash = l->v[j].name && !strcmp(l->v[j].name, buf);
		if (!clash && !wks_store_contains(dst, buf))
			return 0;
	}
}

static int store_all(wks_store *dst, wks_p12_file *f, const char *pw,
		     size_t pw_len)
{
	bags *l = &f->l;
	size_t max = l->max_chain ? l->max_chain : 1;
	const uint8_t **der = calloc(max, sizeof(*der));
	size_t *der_len = calloc(max, sizeof(*der_len));
	uint8_t **own = calloc(max, sizeof(*own));
	unsigned next = 0;
	char alias[1024];
	int err = 0;

	if (!der || !der_len || !own) {
		err = nomem();
		goto done;
	}
	/* The new entries' keys are derived a batch pass at a time. */
	size_t keys = 0;
	for (size_t i = 0; i < f->ne; i++)
		keys += l->v[f->e[i].item].pkcs8 || l->v[f->e[i].item].secret;
	wks__store_expect_keys(dst, keys);
	for (size_t i = 0; i < f->ne; i++) {
		item *it = &l->v[f->e[i].item];
		size_t *chain = f->e[i].chain, n = f->e[i].n;
		int e;

		if ((e = pick_alias(alias, sizeof(alias), dst, l, it,
				    &next)) < 0) {
			e = wks__report_skip(l->rep, it->name, e,
					     "alias too long");
		} else if (wks_store_contains(dst, alias)) {
			e = wks__report_skip(l->rep, alias, WKS_ERR_EXISTS,
					     "the store has this alias "
					     "already");
		} else if (it->pkcs8 && n == 0) {
			e = wks__report_skip(l->rep, alias, WKS_ERR_INVALID,
					     "a private key without a "
					     "certificate");
		} else {
			if (it->pkcs8) {
				for (size_t m = 0; m < n && !e; m++) {
					unsigned char *q = NULL;
					int dl = i2d_X509(l->v[chain[m]].cert, &q);

					if (dl <= 0) {
						e = WKS_ERR_NOMEM;
						break;
					}
					own[m] = q;
					der[m] = q;
					der_len[m] = (size_t)dl;
				}
				if (!e)
					e = wks_store_set_private_key(
						dst, alias, it->pkcs8,
						it->pkcs8_len, der, der_len, n,
						pw, pw_len);
				for (size_t m = 0; m < n; m++) {
					OPENSSL_free(own[m]);
					own[m] = NULL;
				}
			} else if (it->secret) {
				e = wks_store_set_secret_key(
					dst, alias, it->secret_alg, it->secret,
					it->secret_len, pw, pw_len);
			} else {
				e = wks_store_set_cert(dst, alias, it->cert);
			}
			if (e == WKS_ERR_NOMEM) {
				err = nomem();
				goto done;
			}
			if (e == 0)
				l->rep->done++;
			else
				e = wks__report_skip(l->rep, alias, e,
						     wks_error_detail());
		}
		if (e < 0) {
			err = nomem();
			goto done;
		}
	}
done:
	wks__store_expect_keys(dst, 0);
	free(der);
	free(der_len);
	free(own);
	return err;
}

int wks__p12_read(wks_store *dst, const uint8_t *data, size_t len,
		  const char *pw, size_t pw_len, unsigned flags,
		  wks_convert_report *rep)
{
	wks_p12_file *f = NULL;
	int err = p12_parse(&f, data, len, pw, pw_len, flags, rep);

	if (err == 0)
		err = store_all(dst, f, f->null_pass ? "" : (pw ? pw : ""),
				f->null_pass ? 0 : pw_len);
	wks_p12_free(f);
	return err;
}
