/*
 * PKCS#12 for wks(1), through OpenSSL's PKCS12 API.
 *
 * PKCS12_parse() and PKCS12_create() handle one key only, so the safe
 * bags are walked (read) and built (write) here with the same API, which
 * lets a whole store travel in one file.  What is written matches
 * `openssl pkcs12 -export` with its modern defaults: shrouded key bags and
 * an encrypted certificate safe under PBES2 (AES-256-CBC,
 * PBKDF2-HMAC-SHA-256), and an HMAC-SHA-256 MAC, all three with the
 * store's iteration count rather than OpenSSL's 2048.  Trusted
 * certificates carry Java's trusted-key-usage attribute, so that keytool
 * sees them as trusted certificate entries.  On reading, the MAC is
 * verified before anything is decrypted, and a file without one is
 * refused unless the user accepts it (--no-mac-ok).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include "cli.h"

/* Oracle's "trusted key usage" attribute and its usual value
 * (anyExtendedKeyUsage). */
#define JAVA_TRUSTED_OID "2.16.840.1.113894.746875.1.1"
#define ANY_EKU_OID "2.5.29.37.0"

/* ---- reading -------------------------------------------------------------- */

/* The NID of JAVA_TRUSTED_OID (registered once; NID_undef if that
 * fails, which then matches no attribute). */
static int java_trusted_nid(void)
{
	int nid = OBJ_txt2nid(JAVA_TRUSTED_OID);

	if (nid == NID_undef) {
		nid = OBJ_create(JAVA_TRUSTED_OID, "javaTrustedKeyUsage",
				 "Java trusted key usage");
		ERR_clear_error();
	}
	return nid;
}

typedef struct {
	char *name;          /* friendlyName (UTF-8) or NULL */
	uint8_t *id;         /* localKeyID or NULL */
	size_t id_len;
	uint8_t *pkcs8;      /* keys */
	size_t pkcs8_len;
	X509 *cert;          /* certificates */
	char *secret_alg;    /* secret keys (Java's secret bags) */
	uint8_t *secret;
	size_t secret_len;
	int trusted;         /* Java's trusted-key-usage attribute */
} bag_item;

typedef struct {
	bag_item *v;
	size_t n, cap;
	const char *file;
	const char *pass;
	int passlen;
	int skipped;
	int rc;
} bag_list;

static void item_clear(bag_item *it)
{
	OPENSSL_free(it->name);
	free(it->id);
	cli_free_secret(it->pkcs8, it->pkcs8_len);
	X509_free(it->cert);
	free(it->secret_alg);
	cli_free_secret(it->secret, it->secret_len);
	memset(it, 0, sizeof(*it));
}

static bag_item *item_add(bag_list *l, PKCS12_SAFEBAG *bag)
{
	const ASN1_TYPE *id;
	bag_item *it;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 8;
		bag_item *nv = realloc(l->v, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		l->v = nv;
		l->cap = ncap;
	}
	it = &l->v[l->n++];
	memset(it, 0, sizeof(*it));
	it->name = PKCS12_get_friendlyname(bag);
	id = PKCS12_SAFEBAG_get0_attr(bag, NID_localKeyID);
	if (id && id->type == V_ASN1_OCTET_STRING &&
	    id->value.octet_string->length > 0) {
		it->id_len = (size_t)id->value.octet_string->length;
		it->id = malloc(it->id_len);
		if (!it->id) {
			l->n--;
			return NULL;
		}
		memcpy(it->id, id->value.octet_string->data, it->id_len);
	}
	/* Java writes a trusted certificate entry with this attribute and
	 * the certificates of a key's chain without it (but with a
	 * friendlyName, the subject DN): only the attribute makes an entry
	 * of a certificate that is part of a chain. */
	it->trusted = PKCS12_get_attr_gen(PKCS12_SAFEBAG_get0_attrs(bag),
					  java_trusted_nid()) != NULL;
	return it;
}

static int add_p8(bag_list *l, PKCS12_SAFEBAG *bag,
		  const PKCS8_PRIV_KEY_INFO *p8)
{
	unsigned char *der = NULL;
	int n = i2d_PKCS8_PRIV_KEY_INFO(p8, &der);
	bag_item *it;

	if (n <= 0)
		return cli_ssl_err(CLI_EXIT_MALFORMED, l->file,
				   "malformed private key");
	it = item_add(l, bag);
	if (!it || !(it->pkcs8 = malloc((size_t)n))) {
		OPENSSL_clear_free(der, (size_t)n);
		cli_err(l->file, "out of memory");
		return CLI_EXIT_FAIL;
	}
	memcpy(it->pkcs8, der, (size_t)n);
	it->pkcs8_len = (size_t)n;
	OPENSSL_clear_free(der, (size_t)n);
	return 0;
}

/*
 * Whatever goes wrong with encrypted contents, one message: a wrong
 * password, bad padding and plaintext that does not decode all look the
 * same, and OpenSSL's reason is not shown, so that a file without a MAC
 * (--no-mac-ok) cannot be used as a padding oracle.
 */
static int decrypt_failed(const char *file)
{
	ERR_clear_error();
	cli_err(file, "cannot decrypt: wrong password, or the file was "
		"modified (or it uses an algorithm OpenSSL lacks)");
	return CLI_EXIT_INTEGRITY;
}

/* A bag that is not imported: a note naming it (its friendlyName). */
static void skip_bag(bag_list *l, const PKCS12_SAFEBAG *bag, const char *what)
{
	char *name = PKCS12_get_friendlyname((PKCS12_SAFEBAG *)bag);
	char *d = name ? cli_display(name) : NULL;

	if (d)
		cli_note(l->file, "\"%s\" skipped: %s", d, what);
	else
		cli_note(l->file, "an unnamed item skipped: %s", what);
	free(d);
	OPENSSL_free(name);
	l->skipped++;
}

/* A secret bag (Java's secret key entries). */
static int add_secret(bag_list *l, PKCS12_SAFEBAG *bag)
{
	char *name = PKCS12_get_friendlyname(bag), *alg = NULL;
	uint8_t *key = NULL;
	size_t key_len = 0;
	bag_item *it;
	int rc;

	rc = cli_p12_secret_read(&alg, &key, &key_len, bag, l->pass,
				 l->passlen, l->file, name);
	OPENSSL_free(name);
	if (rc < 0) {
		l->skipped++; /* named by cli_p12_secret_read() */
		return 0;
	}
	if (rc)
		return rc;
	if (!(it = item_add(l, bag))) {
		free(alg);
		cli_free_secret(key, key_len);
		cli_err(l->file, "out of memory");
		return CLI_EXIT_FAIL;
	}
	it->secret_alg = alg;
	it->secret = key;
	it->secret_len = key_len;
	return 0;
}

static int walk_bags(bag_list *l, const STACK_OF(PKCS12_SAFEBAG) *bags,
		     int depth, int in_encrypted)
{
	for (int i = 0; i < sk_PKCS12_SAFEBAG_num(bags); i++) {
		PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(bags, i);
		PKCS8_PRIV_KEY_INFO *p8;
		bag_item *it;
		X509 *x;
		int rc = 0;

		switch (PKCS12_SAFEBAG_get_nid(bag)) {
		case NID_keyBag:
			rc = add_p8(l, bag, PKCS12_SAFEBAG_get0_p8inf(bag));
			break;
		case NID_pkcs8ShroudedKeyBag: {
			const X509_ALGOR *alg = NULL;

			X509_SIG_get0(PKCS12_SAFEBAG_get0_pkcs8(bag), &alg, NULL);
			if ((rc = cli_pbe_check(alg, l->file, "private key")) != 0)
				return rc;
			p8 = PKCS12_decrypt_skey(bag, l->pass, l->passlen);
			if (!p8)
				return decrypt_failed(l->file);
			rc = add_p8(l, bag, p8);
			PKCS8_PRIV_KEY_INFO_free(p8);
			break;
		}
		case NID_certBag:
			if (PKCS12_SAFEBAG_get_bag_nid(bag) !=
			    NID_x509Certificate) {
				skip_bag(l, bag, "a certificate of another kind "
					 "than X.509");
				break;
			}
			x = PKCS12_SAFEBAG_get1_cert(bag);
			if (!x && in_encrypted)
				return decrypt_failed(l->file);
			if (!x)
				return cli_ssl_err(CLI_EXIT_MALFORMED, l->file,
						   "malformed certificate");
			it = item_add(l, bag);
			if (!it) {
				X509_free(x);
				cli_err(l->file, "out of memory");
				return CLI_EXIT_FAIL;
			}
			it->cert = x;
			break;
		case NID_safeContentsBag:
			if (depth > 8)
				return cli_ssl_err(CLI_EXIT_MALFORMED, l->file,
						   "safe contents nested too "
						   "deeply");
			rc = walk_bags(l, PKCS12_SAFEBAG_get0_safes(bag),
				       depth + 1, in_encrypted);
			break;
		case NID_secretBag:
			rc = add_secret(l, bag);
			break;
		case NID_crlBag:
			skip_bag(l, bag, "a CRL");
			break;
		default:
			skip_bag(l, bag, "an item of an unknown kind");
			break;
		}
		if (rc)
			return rc;
	}
	return 0;
}

static int same_id(const bag_item *a, const bag_item *b)
{
	return a->id && b->id && a->id_len == b->id_len &&
	       !memcmp(a->id, b->id, a->id_len);
}

void cli_p12_free(cli_p12_entry *e, size_t count)
{
	for (size_t i = 0; e && i < count; i++) {
		OPENSSL_free(e[i].alias);
		cli_free_secret(e[i].pkcs8, e[i].pkcs8_len);
		free(e[i].algorithm);
		sk_X509_pop_free(e[i].chain, X509_free);
	}
	free(e);
}

/* Entries from the bag items: keys with their chains, secret keys, then
 * the certificates that stand alone. */
static int build_entries(cli_p12_entry **out, size_t *count, bag_list *l)
{
	STACK_OF(X509) *pool = sk_X509_new_null();
	cli_p12_entry *e = calloc(l->n ? l->n : 1, sizeof(*e));
	char *used = calloc(l->n ? l->n : 1, 1);
	size_t ne = 0;
	int rc = CLI_EXIT_FAIL;

	if (!pool || !e || !used)
		goto nomem;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].cert && !sk_X509_push(pool, l->v[i].cert))
			goto nomem;

	for (size_t i = 0; i < l->n; i++) {
		bag_item *k = &l->v[i];
		const unsigned char *p = k->pkcs8;
		PKCS8_PRIV_KEY_INFO *p8;
		EVP_PKEY *pk = NULL;
		X509 *leaf = NULL;

		if (!k->pkcs8)
			continue;
		for (size_t j = 0; j < l->n && !leaf; j++)
			if (l->v[j].cert && same_id(k, &l->v[j]))
				leaf = l->v[j].cert;
		p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)k->pkcs8_len);
		if (p8) {
			pk = EVP_PKCS82PKEY(p8);
			PKCS8_PRIV_KEY_INFO_free(p8);
		}
		ERR_clear_error();
		if (!leaf && !pk) {
			cli_err(l->file, "a private key has no certificate "
				"(no localKeyID matches, and OpenSSL cannot read "
				"the key to match it)");
			rc = CLI_EXIT_INVALID;
			goto done;
		}
		rc = cli_order_chain(&e[ne].chain, leaf, pk, pool, l->file, 0);
		EVP_PKEY_free(pk);
		if (rc)
			goto done;
		e[ne].type = WKS_ENTRY_PRIVATE_KEY;
		e[ne].alias = k->name;
		k->name = NULL;
		e[ne].pkcs8 = k->pkcs8;
		e[ne].pkcs8_len = k->pkcs8_len;
		k->pkcs8 = NULL;
		k->pkcs8_len = 0;
		/* The chain belongs to the key: its certificates are no
		 * entries of their own, unless a bag of the same certificate
		 * is a trusted certificate entry (Java's attribute) and not
		 * the key's own (its localKeyID). */
		for (size_t j = 0; j < l->n; j++) {
			bag_item *c = &l->v[j];

			if (!c->cert)
				continue;
			if (same_id(k, c))
				used[j] = 1; /* the key's own certificate */
			for (int m = 0; m < sk_X509_num(e[ne].chain) &&
					!c->trusted; m++)
				if (!X509_cmp(c->cert,
					      sk_X509_value(e[ne].chain, m)))
					used[j] = 1;
		}
		ne++;
	}
	for (size_t j = 0; j < l->n; j++) {
		bag_item *k = &l->v[j];

		if (!k->secret)
			continue;
		e[ne].type = WKS_ENTRY_SECRET_KEY;
		e[ne].alias = k->name;
		k->name = NULL;
		e[ne].algorithm = k->secret_alg;
		k->secret_alg = NULL;
		e[ne].pkcs8 = k->secret;
		e[ne].pkcs8_len = k->secret_len;
		k->secret = NULL;
		k->secret_len = 0;
		ne++;
	}
	/* Certificates of no chain, and trusted ones that are no leaf. */
	for (size_t j = 0; j < l->n; j++) {
		bag_item *c = &l->v[j];

		if (!c->cert || used[j])
			continue;
		e[ne].type = WKS_ENTRY_CERTIFICATE;
		e[ne].alias = c->name;
		c->name = NULL;
		e[ne].chain = sk_X509_new_null();
		if (!e[ne].chain || !X509_up_ref(c->cert) ||
		    !sk_X509_push(e[ne].chain, c->cert))
			goto nomem;
		ne++;
	}
	*out = e;
	*count = ne;
	e = NULL;
	rc = 0;
	goto done;
nomem:
	cli_err(l->file, "out of memory");
	rc = CLI_EXIT_FAIL;
done:
	cli_p12_free(e, ne);
	sk_X509_free(pool);
	free(used);
	return rc;
}

int cli_p12_read(cli_p12_entry **out, size_t *count, const char *file,
		 const uint8_t *data, size_t len, const cli_pw *pw,
		 int no_mac_ok)
{
	const unsigned char *p = data;
	PKCS12 *p12 = d2i_PKCS12(NULL, &p, (long)len);
	STACK_OF(PKCS7) *asafes = NULL;
	OSSL_PROVIDER *legacy = NULL;
	bag_list l;
	int rc = 0;

	*out = NULL;
	*count = 0;
	memset(&l, 0, sizeof(l));
	l.file = file;
	l.pass = pw->p ? pw->p : "";
	l.passlen = (int)pw->len;
	if (!p12)
		return cli_ssl_err(CLI_EXIT_MALFORMED, file,
				   "not a PKCS#12 file");
	if (PKCS12_mac_present(p12)) {
		if ((rc = cli_p12_mac_check(p12, file)) != 0)
			goto done;
		if (PKCS12_verify_mac(p12, l.pass, l.passlen)) {
			/* ok */
		} else if (l.passlen == 0 && PKCS12_verify_mac(p12, NULL, 0)) {
			l.pass = NULL;
		} else {
			ERR_clear_error();
			cli_err(file, "integrity check failed: wrong password, "
				"or the file was modified");
			rc = CLI_EXIT_INTEGRITY;
			goto done;
		}
	} else if (!no_mac_ok) {
		/* Without a MAC nothing is authenticated: the contents
		 * would be decrypted and imported as they are. */
		cli_err(file, "has no MAC: its contents cannot be "
			"authenticated (use --no-mac-ok to import it anyway)");
		rc = CLI_EXIT_INVALID;
		goto done;
	} else {
		cli_note(file, "no MAC: contents not authenticated");
	}
	/* Old files use RC2/3DES with SHA-1: in OpenSSL 3 RC2 needs the
	 * legacy provider (keeping the default one). */
	legacy = OSSL_PROVIDER_try_load(NULL, "legacy", 1);
	ERR_clear_error();
	asafes = PKCS12_unpack_authsafes(p12);
	if (!asafes) {
		rc = cli_ssl_err(CLI_EXIT_MALFORMED, file,
				 "malformed PKCS#12 contents");
		goto done;
	}
	for (int i = 0; i < sk_PKCS7_num(asafes) && rc == 0; i++) {
		PKCS7 *p7 = sk_PKCS7_value(asafes, i);
		STACK_OF(PKCS12_SAFEBAG) *bags = NULL;
		int nid = OBJ_obj2nid(p7->type);

		if (nid == NID_pkcs7_data) {
			bags = PKCS12_unpack_p7data(p7);
		} else if (nid == NID_pkcs7_encrypted) {
			if (p7->d.encrypted && p7->d.encrypted->enc_data &&
			    (rc = cli_pbe_check(p7->d.encrypted->enc_data->algorithm,
			                        file, "certificates")) != 0)
				break;
			bags = PKCS12_unpack_p7encdata(p7, l.pass, l.passlen);
			if (!bags) {
				rc = decrypt_failed(file);
				break;
			}
			rc = walk_bags(&l, bags, 0, 1);
			sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
			continue;
		} else {
			/* Public-key encrypted (enveloped) contents: no
			 * password opens them, and their names are inside. */
			cli_note(file, "a part encrypted for a public key "
				 "skipped: whatever it holds is not imported");
			l.skipped++;
			continue;
		}
		if (!bags) {
			rc = cli_ssl_err(CLI_EXIT_MALFORMED, file,
					 "malformed PKCS#12 contents");
			break;
		}
		rc = walk_bags(&l, bags, 0, 0);
		sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	}
	if (rc == 0) {
		rc = build_entries(out, count, &l);
		if (rc == 0 && l.skipped)
			cli_note(file, "%d item(s) skipped (named above)",
				 l.skipped);
	}
done:
	for (size_t i = 0; i < l.n; i++)
		item_clear(&l.v[i]);
	free(l.v);
	sk_PKCS7_pop_free(asafes, PKCS7_free);
	PKCS12_free(p12);
	if (legacy)
		OSSL_PROVIDER_unload(legacy);
	return rc;
}

int cli_p12_import(wks_store *st, cli_ctx *c, const char *p12file,
		   cli_p12_entry *e, size_t count, const char *only,
		   const cli_pw *keypw)
{
	char **names = calloc(count ? count : 1, sizeof(*names));
	size_t selected = 0, counter = 0;
	int rc = 0, err;

	if (!names) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	/* Names: friendlyName, else 1, 2, ... (as Java does). */
	for (size_t i = 0; i < count; i++) {
		char buf[32];

		if (e[i].alias) {
			names[i] = strdup(e[i].alias);
		} else {
			int clash;

			do {
				snprintf(buf, sizeof(buf), "%zu", ++counter);
				clash = 0;
				for (size_t j = 0; j < count; j++)
					clash |= e[j].alias &&
						 !strcmp(e[j].alias, buf);
			} while (clash);
			names[i] = strdup(buf);
		}
		if (!names[i]) {
			cli_err(NULL, "out of memory");
			rc = CLI_EXIT_FAIL;
			goto done;
		}
	}
	if (count == 0) {
		cli_err(p12file, "holds no key or certificate");
		rc = CLI_EXIT_NOTFOUND;
		goto done;
	}
	if (only) {
		for (size_t i = 0; i < count; i++)
			if (!strcmp(names[i], only))
				selected++;
		if (!selected && count == 1) {
			/* A single entry takes the name asked for. */
			free(names[0]);
			names[0] = strdup(only);
			if (!names[0]) {
				rc = CLI_EXIT_FAIL;
				goto done;
			}
			selected = 1;
		}
		if (!selected) {
			char *d = cli_display(only);

			cli_err(p12file, "no entry named \"%s\"", d ? d : "");
			free(d);
			for (size_t i = 0; i < count; i++) {
				d = cli_display(names[i]);
				cli_note(p12file, "it holds \"%s\" (%s)",
					 d ? d : "",
					 e[i].type == WKS_ENTRY_PRIVATE_KEY ?
						 "private-key" :
					 e[i].type == WKS_ENTRY_SECRET_KEY ?
						 "secret-key" : "certificate");
				free(d);
			}
			rc = CLI_EXIT_NOTFOUND;
			goto done;
		}
	}
	/* Check everything before changing anything. */
	for (size_t i = 0; i < count; i++) {
		if (only && strcmp(names[i], only))
			continue;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]) &&
			    (!only || !strcmp(names[j], only))) {
				char *d = cli_display(names[i]);

				cli_err(p12file, "two entries are named \"%s\"",
					d ? d : "");
				free(d);
				rc = CLI_EXIT_INVALID;
				goto done;
			}
		if ((rc = cli_check_alias_free(st, c, names[i])) != 0)
			goto done;
		/* What Java cannot read: a warning, or with --strict-java an
		 * error before anything changed; and an expired chain. */
		if (e[i].type == WKS_ENTRY_PRIVATE_KEY &&
		    (rc = cli_java_check(c, p12file, names[i], e[i].pkcs8,
					 e[i].pkcs8_len)) != 0)
			goto done;
		if (e[i].type == WKS_ENTRY_SECRET_KEY &&
		    (rc = cli_java_check(c, p12file, names[i], NULL, 0)) != 0)
			goto done;
		for (int m = 0; m < sk_X509_num(e[i].chain); m++)
			cli_warn_validity(p12file, names[i],
					  sk_X509_value(e[i].chain, m));
	}
	for (size_t i = 0; i < count; i++) {
		if (only && strcmp(names[i], only))
			continue;
		if (e[i].type == WKS_ENTRY_PRIVATE_KEY) {
			int n = sk_X509_num(e[i].chain);
			const uint8_t **ders = calloc((size_t)n, sizeof(*ders));
			size_t *lens = calloc((size_t)n, sizeof(*lens));
			unsigned char **bufs = calloc((size_t)n, sizeof(*bufs));

			err = (ders && lens && bufs) ? 0 : WKS_ERR_NOMEM;
			for (int m = 0; m < n && !err; m++) {
				int dl = i2d_X509(sk_X509_value(e[i].chain, m),
						  &bufs[m]);

				if (dl <= 0)
					err = WKS_ERR_FORMAT;
				ders[m] = bufs[m];
				lens[m] = dl > 0 ? (size_t)dl : 0;
			}
			if (!err)
				err = wks_store_set_private_key(st, names[i],
						e[i].pkcs8, e[i].pkcs8_len,
						ders, lens, (size_t)n,
						keypw->p, keypw->len);
			for (int m = 0; bufs && m < n; m++)
				OPENSSL_free(bufs[m]);
			free(bufs);
			free(lens);
			free((void *)ders);
		} else if (e[i].type == WKS_ENTRY_SECRET_KEY) {
			err = wks_store_set_secret_key(st, names[i],
						       e[i].algorithm,
						       e[i].pkcs8,
						       e[i].pkcs8_len,
						       keypw->p, keypw->len);
		} else {
			err = wks_store_set_cert(st, names[i],
						 sk_X509_value(e[i].chain, 0));
		}
		if (err < 0) {
			rc = cli_lib_err(p12file, names[i], err,
					 "cannot import");
			goto done;
		}
		cli_say_imported(st, names[i]);
	}
done:
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* ---- writing -------------------------------------------------------------- */

int cli_export_iterations(wks_store *st, const cli_ctx *c)
{
	char buf[32];
	long v;

	if (c->has_iterations)
		return (int)c->iterations;
	if (wks_get_property(buf, sizeof(buf), st,
			     "wolfjce.wks.iterationCount") != WKS_OK)
		return 210000;
	v = strtol(buf, NULL, 10);
	return v >= 10000 && v <= INT32_MAX ? (int)v : 210000;
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

static int export_key(STACK_OF(PKCS12_SAFEBAG) **keybags,
		      STACK_OF(PKCS12_SAFEBAG) **certbags,
		      STACK_OF(X509) *added, wks_store *st, const char *file,
		      const char *alias, const cli_pw *keypw,
		      const cli_pw *p12pw, int iterations)
{
	STACK_OF(X509) *chain = NULL;
	wks_key *key = NULL;
	PKCS8_PRIV_KEY_INFO *p8 = NULL;
	PKCS12_SAFEBAG *bag = NULL;
	unsigned char id[EVP_MAX_MD_SIZE];
	unsigned int id_len = 0;
	const uint8_t *der;
	size_t der_len;
	int err, rc;

	/* Each key with its own password (--keypass-for, the prompt). */
	(void)err;
	if ((rc = cli_key_get(&key, st, file, alias, keypw, NULL, 0,
			      NULL)) != 0)
		return rc;
	if ((rc = cli_store_certs(&chain, st, file, alias)) != 0)
		goto done;
	der = wks_key_data(key, &der_len);
	p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &der, (long)der_len);
	if (!p8) {
		rc = cli_ssl_err(CLI_EXIT_MALFORMED, file,
				 "entry key is not PKCS#8");
		goto done;
	}
	rc = CLI_EXIT_FAIL;
	if (!X509_digest(sk_X509_value(chain, 0), EVP_sha1(), id, &id_len))
		goto ssl_fail;
	bag = PKCS12_SAFEBAG_create_pkcs8_encrypt(NID_aes_256_cbc, p12pw->p,
						  (int)p12pw->len, NULL, 0,
						  iterations, p8);
	if (!bag || !PKCS12_add_friendlyname_utf8(bag, alias, -1) ||
	    !PKCS12_add_localkeyid(bag, id, (int)id_len))
		goto ssl_fail;
	if (!*keybags && !(*keybags = sk_PKCS12_SAFEBAG_new_null()))
		goto ssl_fail;
	if (!sk_PKCS12_SAFEBAG_push(*keybags, bag))
		goto ssl_fail;
	bag = NULL;
	if (add_cert_bag(certbags, sk_X509_value(chain, 0), alias, id, id_len,
			 0) < 0)
		goto ssl_fail;
	for (int i = 1; i < sk_X509_num(chain); i++) {
		X509 *x = sk_X509_value(chain, i);
		int seen = 0;

		for (int j = 0; j < sk_X509_num(added) && !seen; j++)
			seen = !X509_cmp(x, sk_X509_value(added, j));
		if (seen)
			continue;
		if (add_cert_bag(certbags, x, NULL, NULL, 0, 0) < 0 ||
		    !X509_up_ref(x))
			goto ssl_fail;
		if (!sk_X509_push(added, x)) {
			X509_free(x);
			goto ssl_fail;
		}
	}
	rc = 0;
	goto done;
ssl_fail:
	rc = cli_ssl_err(CLI_EXIT_FAIL, file, "cannot build the PKCS#12 file");
done:
	PKCS12_SAFEBAG_free(bag);
	PKCS8_PRIV_KEY_INFO_free(p8);
	sk_X509_pop_free(chain, X509_free);
	wks_key_free(key);
	return rc;
}

/* A secret key entry as Java's secret bag.  Returns 0, -1 when its
 * algorithm has no OID (a note or, for an explicit alias, an error is
 * printed), or an exit status. */
static int export_secret(STACK_OF(PKCS12_SAFEBAG) **keybags, wks_store *st,
			 const char *file, const char *alias,
			 const cli_pw *keypw, const cli_pw *p12pw,
			 int iterations, int explicit)
{
	PKCS12_SAFEBAG *bag = NULL;
	wks_key *key = NULL;
	const uint8_t *data;
	size_t len;
	int64_t created = 0;
	int rc;

	if ((rc = cli_key_get(&key, st, file, alias, keypw, NULL, 0,
			      NULL)) != 0)
		return rc;
	(void)wks_store_creation_time(&created, st, alias);
	data = wks_key_data(key, &len);
	rc = cli_p12_secret_bag(&bag, alias, wks_key_algorithm(key), data,
				len, created, p12pw, iterations, file);
	if (rc < 0) {
		char *d = cli_display(alias), *da = cli_display(
						 wks_key_algorithm(key));

		if (explicit)
			cli_err(file, "secret key entry \"%s\": algorithm "
				"\"%s\" has no OID, so PKCS#12 cannot hold it "
				"(Java's neither)", d ? d : "", da ? da : "");
		else
			cli_note(file, "secret key entry \"%s\" skipped: "
				 "algorithm \"%s\" has no OID, so PKCS#12 "
				 "cannot hold it (Java's neither)",
				 d ? d : "", da ? da : "");
		free(d);
		free(da);
		rc = explicit ? CLI_EXIT_INVALID : -1;
	} else if (rc == 0) {
		if ((!*keybags && !(*keybags = sk_PKCS12_SAFEBAG_new_null())) ||
		    !sk_PKCS12_SAFEBAG_push(*keybags, bag)) {
			PKCS12_SAFEBAG_free(bag);
			cli_err(file, "out of memory");
			rc = CLI_EXIT_FAIL;
		}
	}
	wks_key_free(key);
	return rc;
}

int cli_p12_export(uint8_t **out, size_t *out_len, wks_store *st,
		   const char *file, const char *alias, const cli_pw *keypw,
		   const cli_pw *p12pw, int iterations)
{
	STACK_OF(PKCS12_SAFEBAG) *keybags = NULL, *certbags = NULL;
	STACK_OF(PKCS7) *safes = NULL;
	STACK_OF(X509) *added = sk_X509_new_null();
	PKCS12 *p12 = NULL;
	char **aliases = NULL, *one[2] = { NULL, NULL };
	const char *const *list;
	size_t count = 0, exported = 0;
	unsigned char *der = NULL;
	int der_len, rc = 0, err;

	*out = NULL;
	*out_len = 0;
	if (!added) {
		cli_err(file, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if (alias) {
		if (!wks_store_contains(st, alias)) {
			rc = cli_lib_err(file, alias, WKS_ERR_NOTFOUND, NULL);
			goto done;
		}
		one[0] = (char *)alias;
		list = (const char *const *)one;
		count = 1;
	} else if ((err = wks_store_aliases(&aliases, &count, st)) < 0) {
		rc = cli_lib_err(file, NULL, err, NULL);
		goto done;
	} else {
		list = (const char *const *)aliases;
	}
	for (size_t i = 0; i < count && rc == 0; i++) {
		const char *a = list[i];
		X509 *x = NULL;
		size_t n = 0;
		char *d;

		switch (wks_store_entry_type(st, a)) {
		case WKS_ENTRY_PRIVATE_KEY:
			if ((err = wks_store_cert_count(&n, st, a)) < 0) {
				rc = cli_lib_err(file, a, err, NULL);
				break;
			}
			if (n == 0) {
				/* A chain of 0 (valid in WKS): a PKCS#12 key
				 * goes with its certificate (localKeyID),
				 * and readers (ours, Java's) expect one. */
				d = cli_display(a);
				if (alias) {
					cli_err(file, "entry \"%s\" has no "
						"certificate: PKCS#12 export "
						"needs one", d ? d : "");
					rc = CLI_EXIT_INVALID;
				} else {
					cli_note(file, "private key entry "
						 "\"%s\" skipped: it has no "
						 "certificate", d ? d : "");
				}
				free(d);
				break;
			}
			rc = export_key(&keybags, &certbags, added, st, file, a,
					keypw, p12pw, iterations);
			exported++;
			break;
		case WKS_ENTRY_CERTIFICATE:
			if ((err = wks_store_get_cert(&x, st, a, 0)) < 0) {
				rc = cli_lib_err(file, a, err, NULL);
				break;
			}
			if (add_cert_bag(&certbags, x, a, NULL, 0, 1) < 0)
				rc = cli_ssl_err(CLI_EXIT_FAIL, file,
						 "cannot build the PKCS#12 file");
			X509_free(x);
			exported++;
			break;
		case WKS_ENTRY_SECRET_KEY:
			/* As Java stores it: a secret bag. */
			rc = export_secret(&keybags, st, file, a, keypw, p12pw,
					   iterations, alias != NULL);
			if (rc == 0)
				exported++;
			else if (rc < 0)
				rc = 0; /* skipped, named */
			break;
		default:
			break;
		}
	}
	if (rc)
		goto done;
	if (!exported) {
		cli_err(file, "no entry to export");
		rc = CLI_EXIT_NOTFOUND;
		goto done;
	}
	rc = CLI_EXIT_FAIL;
	if (certbags && !PKCS12_add_safe(&safes, certbags, NID_aes_256_cbc,
					 iterations, p12pw->p))
		goto ssl_fail;
	if (keybags && !PKCS12_add_safe(&safes, keybags, -1, 0, NULL))
		goto ssl_fail;
	p12 = PKCS12_add_safes(safes, 0);
	if (!p12 || !PKCS12_set_mac(p12, p12pw->p, (int)p12pw->len, NULL, 0,
				    iterations, EVP_sha256()))
		goto ssl_fail;
	der_len = i2d_PKCS12(p12, &der);
	if (der_len <= 0)
		goto ssl_fail;
	*out = malloc((size_t)der_len);
	if (!*out) {
		cli_err(file, "out of memory");
		goto done;
	}
	memcpy(*out, der, (size_t)der_len);
	*out_len = (size_t)der_len;
	rc = 0;
	goto done;
ssl_fail:
	rc = cli_ssl_err(CLI_EXIT_FAIL, file, "cannot build the PKCS#12 file");
done:
	OPENSSL_free(der);
	PKCS12_free(p12);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	sk_PKCS12_SAFEBAG_pop_free(keybags, PKCS12_SAFEBAG_free);
	sk_PKCS12_SAFEBAG_pop_free(certbags, PKCS12_SAFEBAG_free);
	sk_X509_pop_free(added, X509_free);
	wks_aliases_free(aliases);
	return rc;
}
