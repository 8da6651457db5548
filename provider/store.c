/*
 * The OSSL_STORE loader for wks: URIs.
 *
 * OpenSSL drives a loader as open -> set_ctx_params (expect, a search
 * by alias, subject name, issuer and serial or fingerprint) -> load ...
 * until eof -> close, and hands the application's passphrase callback to
 * load only.  So the first load does all the work: it gets the passwords,
 * loads and verifies the file, decrypts the keys that were asked for and
 * queues every object; each load then passes one object to OpenSSL.
 * Doing it all up front is what makes a wrong password return nothing at
 * all, never a partial result.
 *
 * Objects go back by value: a private key as PKCS#8 PrivateKeyInfo DER,
 * a certificate as DER; OpenSSL's decoders make the EVP_PKEY and X509
 * (cf. tpm2-openssl's handle store and OpenSSL's winstore loader).  Key
 * bytes are wiped as soon as OpenSSL has them.
 *
 * A search for certificates (by name: X509_LOOKUP_store's by-subject
 * lookup, behind -CAstore; by issuer and serial; by fingerprint, the
 * digest of a certificate's DER) must return certificates only: OpenSSL
 * 3.0's lookup stops at the first object of another type.  The URI's only=
 * does the same for callers that set neither a search nor an expected
 * type, and only=issuers leaves the leaf out of a key entry's chain.
 *
 * The loaded store comes from keep.c: with the KEK cache on, a store kept
 * from an earlier open of the same file with the same password.  Every
 * open first sweeps the kept stores (wksp_keep_sweep).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/core_object.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/store.h>
#include <openssl/x509.h>

#include <wks/uri.h>
#include <wks/wks.h>

#include "prov.h"

/* Size of the buffer the passphrase callback fills. */
#define PW_CB_MAX 4096

typedef struct {
	int type;           /* OSSL_OBJECT_PKEY or OSSL_OBJECT_CERT */
	unsigned char *der;
	size_t len;
} item;

/*
 * A search for certificates from OSSL_STORE_find() (the alias search is
 * apart: it selects entries).  Set fields must all match; a search of any
 * kind gives certificates only (a key has no names).  Another kind goes
 * here as another field and a test in cert_matches().
 */
typedef struct {
	X509_NAME *subject;    /* by name: OSSL_STORE_PARAM_SUBJECT */
	X509_NAME *issuer;     /* by issuer and serial: OSSL_STORE_PARAM_ISSUER */
	ASN1_INTEGER *serial;  /* ... and OSSL_STORE_PARAM_SERIAL */
	/* by key fingerprint: OSSL_STORE_PARAM_FINGERPRINT, the digest of
	 * the certificate's DER (what `openssl x509 -fingerprint` prints)
	 * with OSSL_STORE_PARAM_DIGEST (SHA1 if not given) */
	unsigned char *fingerprint;
	size_t fingerprint_len;
	char *digest;
	EVP_MD *md;            /* fetched by the first load */
} cert_search;

/* Whether any search for certificates was set. */
static int cert_search_set(const cert_search *s)
{
	return s->subject || s->issuer || s->serial || s->fingerprint;
}

typedef struct {
	wksp_provctx *pc;
	wks_uri *uri;
	char *search_alias; /* from OSSL_STORE_find(by alias), or NULL */
	cert_search search;
	int expect;         /* OSSL_STORE_INFO_*, 0 = anything */
	int prepared;       /* the first load has run */
	int failed;
	item *items;
	size_t n_items, cap_items, next;
} loader_ctx;

static void free_item(item *it)
{
	if (it->der) {
		OPENSSL_cleanse(it->der, it->len);
		free(it->der);
	}
	it->der = NULL;
	it->len = 0;
}

static void free_items(loader_ctx *c)
{
	for (size_t i = 0; i < c->n_items; i++)
		free_item(&c->items[i]);
	free(c->items);
	c->items = NULL;
	c->n_items = c->cap_items = c->next = 0;
}

/* Queue an object; takes over `der` (malloc'ed) whatever happens. */
static int add_item(loader_ctx *c, int type, unsigned char *der, size_t len)
{
	if (c->n_items == c->cap_items) {
		size_t cap = c->cap_items ? 2 * c->cap_items : 8;
		item *n = realloc(c->items, cap * sizeof(*n));

		if (!n) {
			OPENSSL_cleanse(der, len);
			free(der);
			wksp_raise(c->pc, WKSP_R_INTERNAL, "out of memory");
			return 0;
		}
		c->items = n;
		c->cap_items = cap;
	}
	c->items[c->n_items].type = type;
	c->items[c->n_items].der = der;
	c->items[c->n_items].len = len;
	c->n_items++;
	return 1;
}

static void *wksp_open(void *provctx, const char *uri)
{
	loader_ctx *c = calloc(1, sizeof(*c));
	struct stat sb;

	if (!c) {
		wksp_raise(provctx, WKSP_R_INTERNAL, "out of memory");
		return NULL;
	}
	c->pc = provctx;
	if (c->pc->config_error[0]) {
		wksp_raise(c->pc, WKSP_R_CONFIG, "%s", c->pc->config_error);
		free(c);
		return NULL;
	}
	/* Kept stores whose file changed or went, or idle too long, go
	 * now, whatever this open is for. */
	wksp_keep_sweep(c->pc);
	if (wks_uri_parse(&c->uri, uri) < 0) {
		/* The URI itself is not repeated: it may hold pass:TEXT. */
		wksp_raise(c->pc, WKSP_R_BAD_URI, "%s", wks_error_detail());
		free(c);
		return NULL;
	}
	/* A missing file is reported now, where OpenSSL expects it. */
	if (stat(wks_uri_path(c->uri), &sb) != 0) {
		wksp_raise(c->pc, WKSP_R_LOAD, "%s: %s", wks_uri_path(c->uri),
			   strerror(errno));
		wks_uri_free(c->uri);
		free(c);
		return NULL;
	}
	return c;
}

static const OSSL_PARAM settable[] = {
	OSSL_PARAM_int(OSSL_STORE_PARAM_EXPECT, NULL),
	OSSL_PARAM_utf8_string(OSSL_STORE_PARAM_ALIAS, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_STORE_PARAM_SUBJECT, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_STORE_PARAM_ISSUER, NULL, 0),
	OSSL_PARAM_BN(OSSL_STORE_PARAM_SERIAL, NULL, 0),
	OSSL_PARAM_utf8_string(OSSL_STORE_PARAM_DIGEST, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_STORE_PARAM_FINGERPRINT, NULL, 0),
	OSSL_PARAM_END
};

static const OSSL_PARAM *wksp_settable_ctx_params(void *provctx)
{
	(void)provctx;
	return settable;
}

static void cert_search_clear(cert_search *s)
{
	X509_NAME_free(s->subject);
	X509_NAME_free(s->issuer);
	ASN1_INTEGER_free(s->serial);
	free(s->fingerprint);
	free(s->digest);
	EVP_MD_free(s->md);
	s->subject = s->issuer = NULL;
	s->serial = NULL;
	s->fingerprint = NULL;
	s->fingerprint_len = 0;
	s->digest = NULL;
	s->md = NULL;
}

/* A DER Name from an octet-string parameter (the whole of it). */
static int name_param(loader_ctx *c, X509_NAME **out, const OSSL_PARAM *p,
		      const char *what)
{
	const unsigned char *der = p->data;
	X509_NAME *n = NULL;

	if (p->data_type != OSSL_PARAM_OCTET_STRING || !der ||
	    p->data_size == 0 || p->data_size > LONG_MAX ||
	    !(n = d2i_X509_NAME(NULL, &der, (long)p->data_size)) ||
	    der != (const unsigned char *)p->data + p->data_size) {
		X509_NAME_free(n);
		wksp_raise(c->pc, WKSP_R_BAD_SEARCH, "%s: not a DER name",
			   what);
		return 0;
	}
	X509_NAME_free(*out);
	*out = n;
	return 1;
}

static int wksp_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	loader_ctx *c = vctx;
	const OSSL_PARAM *p;

	if (!params)
		return 1;
	if (c->prepared) {
		wksp_raise(c->pc, WKSP_R_INTERNAL, "loading has started");
		return 0;
	}
	p = OSSL_PARAM_locate_const(params, OSSL_STORE_PARAM_EXPECT);
	if (p && !OSSL_PARAM_get_int(p, &c->expect))
		return 0;
	p = OSSL_PARAM_locate_const(params, OSSL_STORE_PARAM_ALIAS);
	if (p) {
		char *a;

		/* An alias is a byte string: U+0000 is C0 80 in libwks, so a
		 * NUL byte inside can only be a mistake. */
		if (p->data_type != OSSL_PARAM_UTF8_STRING ||
		    (p->data_size && memchr(p->data, 0, p->data_size))) {
			wksp_raise(c->pc, WKSP_R_BAD_URI,
				   "bad alias search parameter");
			return 0;
		}
		if (!(a = malloc(p->data_size + 1))) {
			wksp_raise(c->pc, WKSP_R_INTERNAL, "out of memory");
			return 0;
		}
		if (p->data_size)
			memcpy(a, p->data, p->data_size);
		a[p->data_size] = 0;
		free(c->search_alias);
		c->search_alias = a;
	}
	p = OSSL_PARAM_locate_const(params, OSSL_STORE_PARAM_SUBJECT);
	if (p && !name_param(c, &c->search.subject, p, "subject"))
		return 0;
	p = OSSL_PARAM_locate_const(params, OSSL_STORE_PARAM_ISSUER);
	if (p && !name_param(c, &c->search.issuer, p, "issuer"))
		return 0;
	p = OSSL_PARAM_locate_const(params, OSSL_STORE_PARAM_SERIAL);
	if (p) {
		BIGNUM *bn = NULL;
		ASN1_INTEGER *ai = NULL;

		if (!OSSL_PARAM_get_BN(p, &bn) ||
		    !(ai = BN_to_ASN1_INTEGER(bn, NULL))) {
			BN_free(bn);
			wksp_raise(c->pc, WKSP_R_BAD_SEARCH,
				   "serial: not an integer");
			return 0;
		}
		BN_free(bn);
		ASN1_INTEGER_free(c->search.serial);
		c->search.serial = ai;
	}
	p = OSSL_PARAM_locate_const(params, OSSL_STORE_PARAM_DIGEST);
	if (p) {
		char *d = NULL;

		/* OSSL_STORE_find() passes a NULL name when the search has no
		 * digest (storeutl -fingerprint without -sha256 etc.). */
		if (p->data_type != OSSL_PARAM_UTF8_STRING ||
		    (p->data && !OSSL_PARAM_get_utf8_string(p, &d, 0))) {
			wksp_raise(c->pc, WKSP_R_BAD_SEARCH, "digest: not a "
				   "digest name");
			return 0;
		}
		free(c->search.digest);
		c->search.digest = NULL;
		if (d && *d && !(c->search.digest = strdup(d))) {
			OPENSSL_free(d);
			wksp_raise(c->pc, WKSP_R_INTERNAL, "out of memory");
			return 0;
		}
		OPENSSL_free(d);
	}
	p = OSSL_PARAM_locate_const(params, OSSL_STORE_PARAM_FINGERPRINT);
	if (p) {
		unsigned char *fp;

		if (p->data_type != OSSL_PARAM_OCTET_STRING || !p->data ||
		    p->data_size == 0 || p->data_size > EVP_MAX_MD_SIZE) {
			wksp_raise(c->pc, WKSP_R_BAD_SEARCH, "fingerprint: "
				   "not 1 to %d bytes", EVP_MAX_MD_SIZE);
			return 0;
		}
		if (!(fp = malloc(p->data_size))) {
			wksp_raise(c->pc, WKSP_R_INTERNAL, "out of memory");
			return 0;
		}
		memcpy(fp, p->data, p->data_size);
		free(c->search.fingerprint);
		c->search.fingerprint = fp;
		c->search.fingerprint_len = p->data_size;
	}
	/* Everything else (input-type, properties, ...) does not apply. */
	return 1;
}

/*
 * The store password from the application's passphrase callback, with
 * the file named in the prompt.  0 with *pw NULL if there is none (no
 * callback, the callback failed or gave nothing): that is not an error,
 * and whatever the callback put on the error queue is dropped.
 */
static int pw_from_callback(loader_ctx *c, char **pw, size_t *pw_len,
			    OSSL_PASSPHRASE_CALLBACK *pw_cb, void *pw_cbarg)
{
	OSSL_PARAM params[2];
	char *buf;
	size_t len = 0;
	int ok;

	*pw = NULL;
	*pw_len = 0;
	if (!pw_cb)
		return 0;
	if (!(buf = malloc(PW_CB_MAX + 1))) {
		wksp_raise(c->pc, WKSP_R_INTERNAL, "out of memory");
		return -1;
	}
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PASSPHRASE_PARAM_INFO,
						     (char *)wks_uri_path(c->uri),
						     0);
	params[1] = OSSL_PARAM_construct_end();
	if (c->pc->set_error_mark)
		c->pc->set_error_mark(c->pc->handle);
	ok = pw_cb(buf, PW_CB_MAX, &len, params, pw_cbarg);
	if (ok && len > 0 && len <= PW_CB_MAX) {
		if (c->pc->clear_last_error_mark)
			c->pc->clear_last_error_mark(c->pc->handle);
		/* An exact copy, so that wksp_pw_free() wipes all of it. */
		if ((*pw = malloc(len + 1)) != NULL) {
			memcpy(*pw, buf, len);
			(*pw)[len] = 0;
			*pw_len = len;
		} else {
			wksp_raise(c->pc, WKSP_R_INTERNAL, "out of memory");
		}
	} else if (c->pc->pop_error_to_mark) {
		c->pc->pop_error_to_mark(c->pc->handle);
	}
	OPENSSL_cleanse(buf, PW_CB_MAX + 1);
	free(buf);
	return *pw || !(ok && len > 0 && len <= PW_CB_MAX) ? 0 : -1;
}

/* A libwks failure as an OpenSSL error. */
static void raise_wks(loader_ctx *c, int err, const char *what)
{
	if (err == WKS_ERR_INTEGRITY)
		wksp_raise(c->pc, WKSP_R_INTEGRITY, "%s", what);
	else
		wksp_raise(c->pc, WKSP_R_LOAD, "%s: %s%s%s", what,
			   wks_strerror(err), *wks_error_detail() ? ": " : "",
			   wks_error_detail());
}

/*
 * One DER TLV at p (before end): its tag byte, header and content
 * lengths.  0 if it does not fit or has a tag number above 30 (none of the
 * fields walked below has one).
 */
static int der_tlv(const unsigned char *p, const unsigned char *end,
		   int *tag, size_t *hdr, size_t *clen)
{
	size_t n = (size_t)(end - p), len = 0, k;

	if (n < 2 || (p[0] & 0x1f) == 0x1f)
		return 0;
	*tag = p[0];
	if (p[1] < 0x80) {
		len = p[1];
		*hdr = 2;
	} else {
		k = p[1] & 0x7f;
		if (k == 0 || k > sizeof(size_t) || n - 2 < k)
			return 0;
		for (size_t i = 0; i < k; i++) {
			if (len >> (8 * sizeof(size_t) - 8))
				return 0;
			len = len << 8 | p[2 + i];
		}
		*hdr = 2 + k;
	}
	if (len > n - *hdr)
		return 0;
	*clen = len;
	return 1;
}

/* The fields of a certificate that searches compare: whole TLVs inside
 * its DER. */
typedef struct {
	const unsigned char *serial, *issuer, *subject;
	size_t serial_len, issuer_len, subject_len;
} cert_fields;

/*
 * Find them: Certificate = SEQUENCE { TBSCertificate = SEQUENCE {
 * [0] version OPTIONAL, serialNumber INTEGER, signature SEQUENCE,
 * issuer Name, validity SEQUENCE, subject Name, ... }, ... }.  A walk
 * over the DER: no X509 object is built (and nothing of a library
 * context used), only the names and the serial number are decoded.
 */
static int cert_fields_get(cert_fields *f, const unsigned char *der,
			   size_t len)
{
	static const int want[] = { 0x02, 0x30, 0x30, 0x30, 0x30 };
	const unsigned char *p = der, *end = der + len, *at[5];
	size_t hdr, clen, tlv[5];
	int tag;

	for (int depth = 0; depth < 2; depth++) {
		if (!der_tlv(p, end, &tag, &hdr, &clen) || tag != 0x30)
			return 0;
		p += hdr;
		end = p + clen;
	}
	if (!der_tlv(p, end, &tag, &hdr, &clen))
		return 0;
	if (tag == 0xa0) {
		p += hdr + clen;
		if (!der_tlv(p, end, &tag, &hdr, &clen))
			return 0;
	}
	for (size_t i = 0; i < 5; i++) {
		if ((i > 0 && !der_tlv(p, end, &tag, &hdr, &clen)) ||
		    tag != want[i])
			return 0;
		at[i] = p;
		tlv[i] = hdr + clen;
		p += hdr + clen;
	}
	f->serial = at[0];
	f->serial_len = tlv[0];
	f->issuer = at[2];
	f->issuer_len = tlv[2];
	f->subject = at[4];
	f->subject_len = tlv[4];
	return 1;
}

/* Whether the Name at der[0..len) equals `want` as X509_NAME_cmp() sees
 * it (canonical form: case and spaces folded), as OpenSSL's own lookups
 * compare names. */
static int name_is(const unsigned char *der, size_t len, const X509_NAME *want)
{
	X509_NAME *n = d2i_X509_NAME(NULL, &der, (long)len);
	int same = n && X509_NAME_cmp(n, want) == 0;

	X509_NAME_free(n);
	return same;
}

/* Whether a certificate (DER) is one the search asks for. */
static int cert_matches(const cert_search *s, const unsigned char *der,
			size_t len)
{
	cert_fields f;

	if (!cert_search_set(s))
		return 1;
	if (s->fingerprint) {
		unsigned char md[EVP_MAX_MD_SIZE];
		unsigned int mdlen = 0;

		if (!EVP_Digest(der, len, md, &mdlen, s->md, NULL) ||
		    mdlen != s->fingerprint_len ||
		    CRYPTO_memcmp(md, s->fingerprint, mdlen) != 0)
			return 0;
	}
	if (!s->subject && !s->issuer)
		return 1;
	if (len > LONG_MAX || !cert_fields_get(&f, der, len))
		return 0;
	if (s->subject && !name_is(f.subject, f.subject_len, s->subject))
		return 0;
	if (s->issuer) {
		const unsigned char *q = f.serial;
		ASN1_INTEGER *sn = d2i_ASN1_INTEGER(NULL, &q, (long)f.serial_len);
		int same = sn && ASN1_INTEGER_cmp(sn, s->serial) == 0;

		ASN1_INTEGER_free(sn);
		if (!same || !name_is(f.issuer, f.issuer_len, s->issuer))
			return 0;
	}
	return 1;
}

/* Queue the certificates of an entry from the `first` one (1: a key
 * entry's chain without its leaf), those the search asks for. */
static int add_certs(loader_ctx *c, wks_store *st, const char *alias,
		     size_t first)
{
	size_t n = 0;
	int err;

	if ((err = wks_store_cert_count(&n, st, alias)) < 0) {
		raise_wks(c, err, wks_uri_path(c->uri));
		return 0;
	}
	for (size_t i = first; i < n; i++) {
		uint8_t *der = NULL;
		unsigned char *copy;
		size_t len = 0;

		if ((err = wks_store_get_cert_der(&der, &len, st, alias, i)) < 0) {
			raise_wks(c, err, wks_uri_path(c->uri));
			return 0;
		}
		if (!cert_matches(&c->search, der, len)) {
			wks_free(der);
			continue;
		}
		copy = malloc(len ? len : 1);
		if (copy)
			memcpy(copy, der, len);
		wks_free(der);
		if (!copy) {
			wksp_raise(c->pc, WKSP_R_INTERNAL, "out of memory");
			return 0;
		}
		if (!add_item(c, OSSL_OBJECT_CERT, copy, len))
			return 0;
	}
	return 1;
}

/* `pw` is keypass= if `keypass`, else the store password (verified). */
static int add_key(loader_ctx *c, wks_store *st, const char *alias,
		   const char *pw, size_t pw_len, int keypass)
{
	wks_key *key = NULL;
	const uint8_t *data;
	unsigned char *copy;
	size_t len = 0;
	int err;

	if ((err = wks_store_get_key(&key, st, alias, pw, pw_len)) < 0) {
		if (err == WKS_ERR_INTEGRITY && keypass)
			wksp_raise(c->pc, WKSP_R_INTEGRITY, "key entry "
				   "\"%s\" in %s: wrong key password "
				   "(keypass=), or the entry was modified",
				   alias, wks_uri_path(c->uri));
		else if (err == WKS_ERR_INTEGRITY)
			wksp_raise(c->pc, WKSP_R_INTEGRITY, "key entry "
				   "\"%s\" in %s: " WKSP_OWN_KEY_PW_HINT ")",
				   alias, wks_uri_path(c->uri));
		else
			raise_wks(c, err, wks_uri_path(c->uri));
		return 0;
	}
	data = wks_key_data(key, &len);
	copy = malloc(len ? len : 1);
	if (copy)
		memcpy(copy, data, len);
	wks_key_free(key);
	if (!copy) {
		wksp_raise(c->pc, WKSP_R_INTERNAL, "out of memory");
		return 0;
	}
	return add_item(c, OSSL_OBJECT_PKEY, copy, len);
}

/* Get the passwords, load the file and queue every object asked for. */
static int prepare(loader_ctx *c, OSSL_PASSPHRASE_CALLBACK *pw_cb,
		   void *pw_cbarg)
{
	/* A search by name, issuer or fingerprint finds certificates only,
	 * as only= does: no key is decrypted for them. */
	int want_keys = (c->expect == 0 || c->expect == OSSL_STORE_INFO_PKEY) &&
			wks_uri_only(c->uri) == WKS_URI_ALL &&
			!cert_search_set(&c->search);
	int want_certs = c->expect == 0 || c->expect == OSSL_STORE_INFO_CERT;
	/* only=issuers: key entries' chains from the second certificate. */
	int issuers = wks_uri_only(c->uri) == WKS_URI_ISSUERS;
	const char *path = wks_uri_path(c->uri), *alias = wks_uri_alias(c->uri);
	const wks_pwsrc *ssrc = wks_uri_storepass(c->uri);
	const wks_pwsrc *ksrc = wks_uri_keypass(c->uri);
	char *spw = NULL, *kpw = NULL, err[256];
	size_t spw_len = 0, kpw_len = 0;
	const char *one[2] = { NULL, NULL }, *skipped = NULL;
	char **aliases = NULL;
	const char *const *list;
	wks_store *st = NULL;
	wksp_kept *kept = NULL;
	int rc = 0, e;

	if (!want_keys && !want_certs)
		return 1; /* public keys, parameters, CRLs: none in WKS */
	if (!c->search.issuer != !c->search.serial) {
		/* OSSL_STORE_find() sets both at once. */
		wksp_raise(c->pc, WKSP_R_BAD_SEARCH, "an issuer search needs "
			   "both the issuer and the serial number");
		return 0;
	}
	if (c->search.fingerprint) {
		const char *name = c->search.digest ? c->search.digest : "SHA1";
		int size;

		/* From the child context: the application's providers. */
		if (!(c->search.md = EVP_MD_fetch(c->pc->libctx, name, NULL))) {
			wksp_raise(c->pc, WKSP_R_BAD_SEARCH, "digest \"%s\" is "
				   "not available", name);
			return 0;
		}
		size = EVP_MD_get_size(c->search.md);
		if (size <= 0 || (size_t)size != c->search.fingerprint_len) {
			wksp_raise(c->pc, WKSP_R_BAD_SEARCH, "a %s fingerprint "
				   "has %d bytes, not %zu", name, size,
				   c->search.fingerprint_len);
			return 0;
		}
	}
	if (alias && c->search_alias && strcmp(alias, c->search_alias) != 0) {
		wksp_raise(c->pc, WKSP_R_NOT_FOUND, "the search alias \"%s\" "
			   "differs from the URI's alias=", c->search_alias);
		return 0;
	}

	/* The passwords: the URI's sources, else the application's. */
	if (ssrc) {
		if (wksp_pw_read(&spw, &spw_len, ssrc, "storepass", err,
				 sizeof(err)) < 0) {
			wksp_raise(c->pc, WKSP_R_PASSWORD, "%s", err);
			goto done;
		}
	} else if (pw_from_callback(c, &spw, &spw_len, pw_cb, pw_cbarg) < 0) {
		goto done;
	}
	if (ksrc && wksp_pw_read(&kpw, &kpw_len, ksrc, "keypass", err,
				 sizeof(err)) < 0) {
		wksp_raise(c->pc, WKSP_R_PASSWORD, "%s", err);
		goto done;
	}

	if ((e = wksp_keep_open(c->pc, &st, &kept, path, spw, spw_len)) < 0) {
		raise_wks(c, e, path);
		goto done;
	}

	if (alias || c->search_alias) {
		one[0] = alias ? alias : c->search_alias;
		if (wks_store_entry_type(st, one[0]) == WKS_ENTRY_NONE) {
			if (alias && wks_uri_alias_after_password(c->uri))
				/* may be a password's tail: not repeated */
				wksp_raise(c->pc, WKSP_R_NOT_FOUND, "no entry "
					   "named by the alias= attribute in "
					   "%s (it follows a password attribute: "
					   "a '&' inside a value must be written "
					   "%%26)", path);
			else
				wksp_raise(c->pc, WKSP_R_NOT_FOUND, "no entry "
					   "\"%s\" in %s", one[0], path);
			goto done;
		}
		list = one;
	} else {
		if ((e = wks_store_aliases(&aliases, NULL, st)) < 0) {
			raise_wks(c, e, path);
			goto done;
		}
		list = (const char *const *)aliases;
	}

	for (size_t i = 0; list[i]; i++) {
		switch (wks_store_entry_type(st, list[i])) {
		case WKS_ENTRY_PRIVATE_KEY:
			if (want_keys) {
				if (kpw || spw) {
					if (!add_key(c, st, list[i],
						     kpw ? kpw : spw,
						     kpw ? kpw_len : spw_len,
						     kpw != NULL))
						goto done;
				} else if (!skipped) {
					skipped = list[i];
				}
			}
			if (want_certs &&
			    !add_certs(c, st, list[i], issuers ? 1 : 0))
				goto done;
			break;
		case WKS_ENTRY_CERTIFICATE:
			/* A trusted certificate has no issuers here. */
			if (want_certs && !issuers &&
			    !add_certs(c, st, list[i], 0))
				goto done;
			break;
		default:
			/* Secret keys: OSSL_STORE has no object for them. */
			break;
		}
	}
	if (c->n_items == 0 && skipped) {
		wksp_raise(c->pc, WKSP_R_NO_PASSWORD, "entry \"%s\" in %s: no "
			   "password was given", skipped, path);
		goto done;
	}
	rc = 1;
done:
	if (!rc)
		free_items(c);
	wks_aliases_free(aliases);
	wksp_keep_release(c->pc, kept);
	wksp_pw_free(spw, spw_len);
	wksp_pw_free(kpw, kpw_len);
	return rc;
}

static int wksp_load(void *vctx, OSSL_CALLBACK *object_cb, void *object_cbarg,
		     OSSL_PASSPHRASE_CALLBACK *pw_cb, void *pw_cbarg)
{
	loader_ctx *c = vctx;
	OSSL_PARAM params[4];
	item *it;
	int type, ok;

	if (c->failed)
		return 0;
	if (!c->prepared) {
		c->prepared = 1;
		if (!prepare(c, pw_cb, pw_cbarg)) {
			c->failed = 1;
			return 0;
		}
	}
	if (c->next >= c->n_items)
		return 1;
	it = &c->items[c->next++];
	type = it->type;
	params[0] = OSSL_PARAM_construct_int(OSSL_OBJECT_PARAM_TYPE, &type);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_OBJECT_PARAM_DATA,
						      it->der, it->len);
	if (type == OSSL_OBJECT_PKEY) {
		params[2] = OSSL_PARAM_construct_utf8_string(
			OSSL_OBJECT_PARAM_DATA_STRUCTURE,
			(char *)"PrivateKeyInfo", 0);
		params[3] = OSSL_PARAM_construct_end();
	} else {
		params[2] = OSSL_PARAM_construct_end();
	}
	ok = object_cb(params, object_cbarg);
	free_item(it);
	return ok;
}

static int wksp_eof(void *vctx)
{
	loader_ctx *c = vctx;

	return c->failed || (c->prepared && c->next >= c->n_items);
}

static int wksp_close(void *vctx)
{
	loader_ctx *c = vctx;

	if (!c)
		return 1;
	free_items(c);
	wks_uri_free(c->uri);
	free(c->search_alias);
	cert_search_clear(&c->search);
	free(c);
	return 1;
}

const OSSL_DISPATCH wksp_store_functions[] = {
	{ OSSL_FUNC_STORE_OPEN, (void (*)(void))wksp_open },
	{ OSSL_FUNC_STORE_SETTABLE_CTX_PARAMS,
	  (void (*)(void))wksp_settable_ctx_params },
	{ OSSL_FUNC_STORE_SET_CTX_PARAMS, (void (*)(void))wksp_set_ctx_params },
	{ OSSL_FUNC_STORE_LOAD, (void (*)(void))wksp_load },
	{ OSSL_FUNC_STORE_EOF, (void (*)(void))wksp_eof },
	{ OSSL_FUNC_STORE_CLOSE, (void (*)(void))wksp_close },
	{ 0, NULL }
};
