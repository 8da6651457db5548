/*
 * Every keystore in shared/vectors/{wolfjce,edge,wolfjce-live} against its
 * manifest, as shared/vectors/README.md asks: every field of every record
 * (except the informational ones) is compared, through the internal
 * decoder (wks__decode: offsets, salts, IVs, iterations, MACs, trailer) and
 * through the public API (aliases, types, creation times, certificates,
 * keys, error classes).  Key material is checked with OpenSSL on the test
 * side (PKCS#8 fields by a small DER walk, key/certificate match with
 * EVP_PKEY_eq, or the rho/tr rule for ML-DSA).
 *
 * Environment: WKS_VECTORS_STRIDE=n checks every n-th file of each folder
 * only (from the first; the manifests and listings are still checked in
 * full): for CI's valgrind stage, where the plain and ASan stages have
 * checked every file.  Default 1.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tu_ossl.h"

#include "config/config.h"
#include "crypto/pki.h"
#include "format/format.h"
#include "store/decode.h"

/* ------------------------------------------------------------------------
 * Small helpers
 */

static char g_ctx[1024]; /* what is being checked, for failure messages */
static size_t g_file_stride = 1; /* WKS_VECTORS_STRIDE */

/* Is the i-th file of a folder (counted from 0) in the sample? */
static int sampled(int i)
{
	return (size_t)i % g_file_stride == 0;
}
static unsigned g_issuers_checked, g_issuers_skipped, g_records_checked;
static unsigned g_keys_checked, g_certs_checked, g_loads;

static void set_ctx(const char *file, const char *what)
{
	snprintf(g_ctx, sizeof(g_ctx), "%s%s%s", file, what ? ": " : "",
	         what ? what : "");
}

static void ck_int(const char *what, long long got, long long want)
{
	if (got != want)
		fail_msg("%s: %s: got %lld, want %lld", g_ctx, what, got, want);
}

static void ck_str(const char *what, const char *got, const char *want)
{
	if (!got || !want || strcmp(got, want) != 0)
		fail_msg("%s: %s: got \"%s\", want \"%s\"", g_ctx, what,
		         got ? got : "(null)", want ? want : "(null)");
}

static void ck_hex(const char *what, const uint8_t *p, size_t n, const char *want)
{
	char *h = tu_hex_dup(p, n);

	if (strcmp(h, want) != 0)
		fail_msg("%s: %s: got %s, want %s", g_ctx, what, h, want);
	free(h);
}

static void ck_sha(const char *what, const uint8_t *p, size_t n, const char *want)
{
	char h[65];

	tu_sha256_hex(h, p, n);
	ck_str(what, h, want);
}

static const cJSON *jopt(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const cJSON *jget(const cJSON *o, const char *k)
{
	const cJSON *v = jopt(o, k);

	if (!v)
		fail_msg("%s: manifest field \"%s\" missing", g_ctx, k);
	return v;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);

	if (!cJSON_IsString(v))
		fail_msg("%s: manifest field \"%s\" is not a string", g_ctx, k);
	return v->valuestring;
}

static const char *jstr_opt(const cJSON *o, const char *k)
{
	const cJSON *v = jopt(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static long long jint(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);

	if (!cJSON_IsNumber(v))
		fail_msg("%s: manifest field \"%s\" is not a number", g_ctx, k);
	return (long long)v->valuedouble;
}

/* Fail on fields a test does not know (so that "every field is checked"
 * stays true if the manifests grow). `known` is NULL-terminated. */
static void ck_known_fields(const cJSON *o, const char *const *known, const char *what)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, o) {
		size_t i;
		int ok = 0;

		for (i = 0; known[i]; i++)
			if (strcmp(c->string, known[i]) == 0)
				ok = 1;
		if (!ok)
			fail_msg("%s: %s has unknown field \"%s\"", g_ctx, what, c->string);
	}
}

static int class_code(const char *cls)
{
	if (strcmp(cls, "ok") == 0)
		return WKS_OK;
	if (strcmp(cls, "malformed") == 0)
		return WKS_ERR_FORMAT;
	if (strcmp(cls, "limit_exceeded") == 0)
		return WKS_ERR_LIMIT;
	if (strcmp(cls, "integrity_failure") == 0)
		return WKS_ERR_INTEGRITY;
	if (strcmp(cls, "unsupported") == 0)
		return WKS_ERR_UNSUPPORTED;
	fail_msg("%s: unknown error class \"%s\"", g_ctx, cls);
	return 1;
}

static void ck_outcome(const char *what, int rc, const char *cls)
{
	int want = class_code(cls);

	if (rc != want)
		fail_msg("%s: %s: got %d (%s: %s), want %s (%d)", g_ctx, what, rc,
		         wks_strerror(rc), wks_error_detail(), cls, want);
}

static uint8_t *read_vec(const char *folder, const char *name, size_t *len)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "vectors/%s/%s", folder, name);
	return tu_read_file(tu_shared(rel), len);
}

static cJSON *load_manifest(const char *folder)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "vectors/%s/manifest.json", folder);
	return tu_json_file(tu_shared(rel));
}

/* The API form of an alias given as standard UTF-8 bytes: U+0000 is C0 80. */
static char *api_alias_from_utf8(const uint8_t *u, size_t n, size_t *out_len)
{
	char *s = malloc(2 * n + 1);
	size_t i, o = 0;

	assert_non_null(s);
	for (i = 0; i < n; i++) {
		if (u[i] == 0) {
			s[o++] = (char)0xC0;
			s[o++] = (char)0x80;
		} else {
			s[o++] = (char)u[i];
		}
	}
	s[o] = 0;
	*out_len = o;
	return s;
}

/* ------------------------------------------------------------------------
 * DER walking (PKCS#8, SubjectPublicKeyInfo)
 */

typedef struct {
	int tag;
	size_t start; /* of the TLV */
	size_t cs, ce; /* content */
} tlv;

static int der_tlv(tlv *t, const uint8_t *b, size_t off, size_t end)
{
	size_t len;

	if (off + 2 > end)
		return -1;
	t->start = off;
	t->tag = b[off];
	len = b[off + 1];
	off += 2;
	if (len & 0x80) {
		size_t k = len & 0x7F, i;

		if (k == 0 || k > 4 || off + k > end)
			return -1;
		len = 0;
		for (i = 0; i < k; i++)
			len = len << 8 | b[off + i];
		off += k;
	}
	if (len > end - off)
		return -1;
	t->cs = off;
	t->ce = off + len;
	return 0;
}

/* Children of [start, end); returns the count (at most max). */
static size_t der_children(tlv *out, size_t max, const uint8_t *b, size_t start,
                           size_t end)
{
	size_t n = 0, off = start;

	while (off < end && n < max) {
		if (der_tlv(&out[n], b, off, end) != 0)
			fail_msg("%s: bad DER", g_ctx);
		off = out[n].ce;
		n++;
	}
	return n;
}

static void oid_text(char *out, size_t outlen, const uint8_t *c, size_t n)
#ifdef WKS_CRYPTO_WOLFCRYPT
{
	/* By hand (wolfSSL's OBJ_obj2txt names what it knows). */
	unsigned long long v = 0;
	size_t i, o = 0;
	int first = 1, w;

	assert_true(n > 0 && !(c[n - 1] & 0x80));
	for (i = 0; i < n; i++) {
		v = v << 7 | (c[i] & 0x7f);
		if (c[i] & 0x80)
			continue;
		if (first) {
			unsigned a = v < 40 ? 0 : v < 80 ? 1 : 2;

			w = snprintf(out + o, outlen - o, "%u.%llu", a, v - 40ull * a);
			first = 0;
		} else {
			w = snprintf(out + o, outlen - o, ".%llu", v);
		}
		assert_true(w > 0 && (size_t)w < outlen - o);
		o += (size_t)w;
		v = 0;
	}
}
#else
{
	/* Via OpenSSL, always numeric. */
	uint8_t tmp[256];
	const unsigned char *p = tmp;
	ASN1_OBJECT *o;

	assert_true(n + 2 <= sizeof(tmp) && n < 128);
	tmp[0] = 0x06;
	tmp[1] = (uint8_t)n;
	memcpy(tmp + 2, c, n);
	o = d2i_ASN1_OBJECT(NULL, &p, (long)(n + 2));
	assert_non_null(o);
	assert_true(OBJ_obj2txt(out, (int)outlen, o, 1) > 0);
	ASN1_OBJECT_free(o);
}
#endif

static const char *const key_oids[][2] = {
	{ "1.2.840.113549.1.1.1", "RSA" },
	{ "1.2.840.113549.1.1.10", "RSASSA-PSS" },
	{ "1.2.840.10045.2.1", "EC" },
	{ "1.2.840.10040.4.1", "DSA" },
	{ "1.3.101.110", "X25519" },
	{ "1.3.101.111", "X448" },
	{ "1.3.101.112", "Ed25519" },
	{ "1.3.101.113", "Ed448" },
	{ "2.16.840.1.101.3.4.3.17", "ML-DSA-44" },
	{ "2.16.840.1.101.3.4.3.18", "ML-DSA-65" },
	{ "2.16.840.1.101.3.4.3.19", "ML-DSA-87" },
	{ NULL, NULL }
};

static const char *const curve_oids[][2] = {
	{ "1.2.840.10045.3.1.7", "P-256" },
	{ "1.3.132.0.34", "P-384" },
	{ "1.3.132.0.35", "P-521" },
	{ "1.3.132.0.33", "P-224" },
	{ "1.2.840.10045.3.1.1", "P-192" },
	{ "1.3.132.0.10", "secp256k1" },
	{ NULL, NULL }
};

static const char *oid_name(const char *const tab[][2], const char *oid)
{
	size_t i;

	for (i = 0; tab[i][0]; i++)
		if (strcmp(tab[i][0], oid) == 0)
			return tab[i][1];
	return "unknown";
}

typedef struct {
	long version;
	char alg_oid[128];
	char curve_oid[128]; /* "" if none */
	int has_public_key_field;
	size_t priv_cs, priv_ce; /* privateKey OCTET STRING content */
} pkcs8_info;

static void parse_pkcs8(pkcs8_info *pi, const uint8_t *d, size_t n)
{
	tlv top = {0}, kids[8], alg[4];
	size_t nk, na, i;

	memset(pi, 0, sizeof(*pi));
	if (der_tlv(&top, d, 0, n) != 0 || top.tag != 0x30 || top.ce != n)
		fail_msg("%s: PKCS#8 is not one SEQUENCE", g_ctx);
	nk = der_children(kids, 8, d, top.cs, top.ce);
	if (nk < 3 || kids[0].tag != 0x02 || kids[1].tag != 0x30 || kids[2].tag != 0x04)
		fail_msg("%s: unexpected PKCS#8 structure", g_ctx);
	for (i = kids[0].cs; i < kids[0].ce; i++)
		pi->version = pi->version * 256 + d[i];
	na = der_children(alg, 4, d, kids[1].cs, kids[1].ce);
	if (na < 1 || alg[0].tag != 0x06)
		fail_msg("%s: PKCS#8 AlgorithmIdentifier without OID", g_ctx);
	oid_text(pi->alg_oid, sizeof(pi->alg_oid), d + alg[0].cs, alg[0].ce - alg[0].cs);
	if (na > 1 && alg[1].tag == 0x06)
		oid_text(pi->curve_oid, sizeof(pi->curve_oid), d + alg[1].cs,
		         alg[1].ce - alg[1].cs);
	for (i = 3; i < nk; i++)
		if (kids[i].tag == 0xA1)
			pi->has_public_key_field = 1;
	pi->priv_cs = kids[2].cs;
	pi->priv_ce = kids[2].ce;
}

/* The raw public key (BIT STRING content minus the unused-bits byte) of a
 * certificate. */
static void cert_raw_pubkey(const uint8_t *der, size_t n, const uint8_t **pk,
                            size_t *pk_len)
{
	tlv cert = {0}, tbs = {0}, kids[12], sp[2];
	size_t nk, idx;

	if (der_tlv(&cert, der, 0, n) != 0 || der_tlv(&tbs, der, cert.cs, cert.ce) != 0)
		fail_msg("%s: bad certificate DER", g_ctx);
	nk = der_children(kids, 12, der, tbs.cs, tbs.ce);
	idx = kids[0].tag == 0xA0 ? 1 : 0;
	assert_true(nk > idx + 5);
	assert_int_equal(der_children(sp, 2, der, kids[idx + 5].cs, kids[idx + 5].ce), 2);
	assert_int_equal(sp[1].tag, 0x03);
	*pk = der + sp[1].cs + 1;
	*pk_len = sp[1].ce - sp[1].cs - 1;
}

/* "match" / "mismatch" for a PKCS#8 key and a leaf certificate. */
static const char *key_match(const uint8_t *p8, size_t p8_len, const pkcs8_info *pi,
                             const uint8_t *leaf, size_t leaf_len)
{
	const char *alg = oid_name(key_oids, pi->alg_oid);

	if (strncmp(alg, "ML-DSA", 6) == 0) {
		/* privateKey = SEQUENCE { OCTET STRING seed(32), OCTET STRING
		 * expandedKey }: rho = expanded[0..32) = pk[0..32),
		 * tr = expanded[64..128) = SHAKE256(pk, 64). */
		tlv seq = {0}, kids[3];
		const uint8_t *pk, *exp = NULL;
		size_t pk_len, exp_len = 0, nk, i;
		uint8_t tr[64];
		EVP_MD_CTX *md = EVP_MD_CTX_new();

		if (der_tlv(&seq, p8, pi->priv_cs, pi->priv_ce) != 0 || seq.tag != 0x30)
			fail_msg("%s: ML-DSA private key is not a SEQUENCE", g_ctx);
		nk = der_children(kids, 3, p8, seq.cs, seq.ce);
		for (i = 0; i < nk; i++)
			if (kids[i].tag == 0x04 && kids[i].ce - kids[i].cs > 32) {
				exp = p8 + kids[i].cs;
				exp_len = kids[i].ce - kids[i].cs;
			}
		assert_non_null(exp);
		assert_true(exp_len >= 128);
		cert_raw_pubkey(leaf, leaf_len, &pk, &pk_len);
		assert_true(pk_len >= 32);
#ifdef WKS_CRYPTO_OPENSSL
		assert_non_null(md);
		assert_int_equal(EVP_DigestInit_ex(md, EVP_shake256(), NULL), 1);
		assert_int_equal(EVP_DigestUpdate(md, pk, pk_len), 1);
		assert_int_equal(EVP_DigestFinalXOF(md, tr, sizeof(tr)), 1);
		EVP_MD_CTX_free(md);
#else
		EVP_MD_CTX_free(md);
		assert_int_equal(wc_Shake256Hash(pk, (word32)pk_len, tr, sizeof(tr)), 0);
#endif
		return memcmp(exp, pk, 32) == 0 && memcmp(exp + 64, tr, 64) == 0
		               ? "match" : "mismatch";
	} else {
#ifdef WKS_CRYPTO_WOLFCRYPT
		/* No OpenSSL here: the library's own set-time check of the key
		 * against the leaf alone (pki_wolfcrypt.c), which the manifest's
		 * answer (written by wolfJCE's and OpenSSL's side) judges. */
		const uint8_t *certs[1] = { leaf };
		size_t lens[1] = { leaf_len };
		int r = wks__check_key_and_chain(p8, p8_len, certs, lens, 1);

		if (r == WKS_OK)
			return "match";
		if (r == WKS_ERR_INVALID)
			return "mismatch";
		fail_msg("%s: the key check failed: %s (%s)", g_ctx,
		         wks_strerror(r), wks_error_detail());
		return "?";
#else
		const unsigned char *p = p8;
		PKCS8_PRIV_KEY_INFO *inf = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)p8_len);
		EVP_PKEY *k = inf ? EVP_PKCS82PKEY(inf) : NULL;
		const unsigned char *q = leaf;
		X509 *x = d2i_X509(NULL, &q, (long)leaf_len);
		const char *res;

		if (!k || !x)
			fail_msg("%s: OpenSSL cannot parse the key or the leaf", g_ctx);
		res = EVP_PKEY_eq(k, X509_get0_pubkey(x)) == 1 ? "match" : "mismatch";
		EVP_PKEY_free(k);
		PKCS8_PRIV_KEY_INFO_free(inf);
		X509_free(x);
		return res;
#endif
	}
}

/* ------------------------------------------------------------------------
 * Subject names of every certificate in every manifest: lets the test
 * check an issuer (given only as an RFC 4514 string) by its DER.
 */

typedef struct {
	const char *name; /* RFC 4514 string (borrowed from a manifest) */
	const char *der_hex;
} name_pair;

static name_pair *g_names;
static size_t g_n_names;
static cJSON *g_manifests[3];

static void collect_cert(const cJSON *c)
{
	const char *s = jstr_opt(c, "subject"), *h = jstr_opt(c, "subject_der_hex");
	name_pair *nv;

	if (!s || !h)
		return;
	nv = realloc(g_names, (g_n_names + 1) * sizeof(*nv));
	assert_non_null(nv);
	g_names = nv;
	g_names[g_n_names].name = s;
	g_names[g_n_names].der_hex = h;
	g_n_names++;
}

static void collect_record(const cJSON *rec)
{
	const cJSON *e, *c;

	if (!rec)
		return;
	cJSON_ArrayForEach(e, jopt(rec, "entries")) {
		if (jopt(e, "certificate"))
			collect_cert(jopt(e, "certificate"));
		cJSON_ArrayForEach(c, jopt(e, "chain"))
			collect_cert(c);
	}
}

static int setup_all(void **state)
{
	static const char *const folders[3] = { "wolfjce", "edge", "wolfjce-live" };
	size_t i;

	(void)state;
	set_ctx("setup", NULL);
	for (i = 0; i < 3; i++) {
		const cJSON *f;

		g_manifests[i] = load_manifest(folders[i]);
		cJSON_ArrayForEach(f, jopt(g_manifests[i], "files")) {
			collect_record(f);
			collect_record(jopt(f, "decoded"));
			collect_record(jopt(f, "decoded_without_password"));
		}
	}
	return 0;
}

static int teardown_all(void **state)
{
	size_t i;

	(void)state;
	print_message("vectors: %u records, %u loads, %u keys and %u certificates "
	              "checked; %u issuers compared by DER (%u not derivable)\n",
	              g_records_checked, g_loads, g_keys_checked, g_certs_checked,
	              g_issuers_checked, g_issuers_skipped);
	for (i = 0; i < 3; i++)
		cJSON_Delete(g_manifests[i]);
	free(g_names);
	return 0;
}

/* ------------------------------------------------------------------------
 * Certificates
 */

static const char *const cert_fields[] = {
	"type", "der_len", "sha256", "subject", "subject_der_hex", "issuer", NULL
};

/* `body`/`sp`: the certificate as stored in the entry body (the certType
 * and certLen fields precede it). */
static void check_cert(const cJSON *cj, const uint8_t *body, wks_span sp)
{
	const char *type = jstr(cj, "type");
	size_t tlen = strlen(type);
	const uint8_t *der = body + sp.off;
	const unsigned char *p = der;
	X509 *x;
	unsigned char *nd = NULL;
	int nlen;
	size_t i;
	const char *issuer = jstr(cj, "issuer");
	int issuer_known = 0, issuer_ok = 0;
	char *ihex;

	ck_known_fields(cj, cert_fields, "certificate");
	/* certType (utf) and certLen, as stored */
	assert_true(sp.off >= 4 + 2 + tlen);
	ck_int("certLen field", tu_get_be32(body + sp.off - 4), (long long)sp.len);
	ck_int("certType length", (long long)(body[sp.off - 6 - tlen] << 8 |
	                                      body[sp.off - 5 - tlen]),
	       (long long)tlen);
	if (memcmp(body + sp.off - 4 - tlen, type, tlen) != 0)
		fail_msg("%s: certificate type is not \"%s\"", g_ctx, type);
	ck_int("der_len", (long long)sp.len, jint(cj, "der_len"));
	ck_sha("certificate sha256", der, sp.len, jstr(cj, "sha256"));

#ifdef WKS_CRYPTO_OPENSSL
	x = d2i_X509(NULL, &p, (long)sp.len);
	if (!x)
		fail_msg("%s: OpenSSL cannot parse the certificate", g_ctx);
	nlen = i2d_X509_NAME(X509_get_subject_name(x), &nd);
	assert_true(nlen > 0);
	ck_hex("subject_der_hex", nd, (size_t)nlen, jstr(cj, "subject_der_hex"));
	OPENSSL_free(nd);
	nd = NULL;
	/* Issuer: its DER must be one of the subject DERs that carry the same
	 * RFC 4514 string anywhere in the manifests. */
	nlen = i2d_X509_NAME(X509_get_issuer_name(x), &nd);
	assert_true(nlen > 0);
	ihex = tu_hex_dup(nd, (size_t)nlen);
#else
	/* Without OpenSSL: the Names as DER, from the TBS by hand (the
	 * library's own check, wks__x509_check(), must accept it too). */
	{
		tlv c = {0}, tbs = {0}, kids[12];
		size_t nk, idx;

		(void)p;
		(void)x;
		TU_OK(wks__x509_check(der, sp.len));
		if (der_tlv(&c, der, 0, sp.len) != 0 ||
		    der_tlv(&tbs, der, c.cs, c.ce) != 0)
			fail_msg("%s: bad certificate DER", g_ctx);
		nk = der_children(kids, 12, der, tbs.cs, tbs.ce);
		idx = kids[0].tag == 0xA0 ? 1 : 0;
		assert_true(nk > idx + 4);
		ck_hex("subject_der_hex", der + kids[idx + 4].start,
		       kids[idx + 4].ce - kids[idx + 4].start,
		       jstr(cj, "subject_der_hex"));
		ihex = tu_hex_dup(der + kids[idx + 2].start,
		                  kids[idx + 2].ce - kids[idx + 2].start);
		nlen = 0;
	}
#endif
	for (i = 0; i < g_n_names; i++) {
		if (strcmp(g_names[i].name, issuer) == 0) {
			issuer_known = 1;
			if (strcmp(g_names[i].der_hex, ihex) == 0)
				issuer_ok = 1;
		}
	}
	if (issuer_known) {
		if (!issuer_ok)
			fail_msg("%s: issuer DER %s matches no subject named \"%s\"",
			         g_ctx, ihex, issuer);
		g_issuers_checked++;
	} else {
		g_issuers_skipped++;
	}
	free(ihex);
#ifdef WKS_CRYPTO_OPENSSL
	OPENSSL_free(nd);
	X509_free(x);
#else
	(void)nd;
	(void)nlen;
#endif
	g_certs_checked++;
}

/* ------------------------------------------------------------------------
 * One file record (the output of wksdump.py dump) against the decoder and
 * a loaded store.
 */

typedef struct {
	char *alias; /* API form */
	int rc;
	char sha[65];
	char alg[128];
} key_result;

typedef struct {
	const char *file;
	const uint8_t *data;
	size_t len;
	const cJSON *rec;
	wks_store *st;  /* the loaded store */
	int with_pw;    /* the record was decoded with the store password */
	int do_keys;    /* retrieve keys (key_status etc.) */
	const char *key_pw;        /* default key password */
	const cJSON *key_pw_map;   /* JSON alias -> key password, or NULL */
	key_result *kr;            /* filled if do_keys */
	size_t n_kr;
} rcheck;

static void rcheck_free(rcheck *rc)
{
	size_t i;

	for (i = 0; i < rc->n_kr; i++)
		free(rc->kr[i].alias);
	free(rc->kr);
	rc->kr = NULL;
	rc->n_kr = 0;
}

static const key_result *find_kr(const rcheck *rc, const char *api_alias)
{
	size_t i;

	for (i = 0; i < rc->n_kr; i++)
		if (strcmp(rc->kr[i].alias, api_alias) == 0)
			return &rc->kr[i];
	return NULL;
}

static const char *const record_fields[] = {
	/* the file record */
	"size", "sha256", "load", "magic", "version", "entry_count",
	"store_integrity", "entries", "loaded_size", "duplicate_aliases",
	/* wolfjce-live additions ahead of the record (checked elsewhere or
	 * informational) */
	"description", "password", "password_utf8_hex", "key_password",
	"key_password_utf8_hex", "inputs", "wolfjce_outcome", NULL
};

static const char *const integrity_fields[] = {
	"trailer_offset", "salt_len", "salt_hex", "iterations", "mac_len",
	"mac_input_len", "mac_hex", "verified", NULL
};

static const char *const entry_fields[] = {
	"index", "offset", "alias", "alias_mutf8_hex", "alias_utf8_hex", "type",
	"type_id", "body_offset", "body_len", "creation_time_ms", "algorithm",
	"kdf_salt_len", "kdf_salt_hex", "kdf_iterations", "iv_hex",
	"encrypted_key_len", "mac_input_len", "mac_hex", "chain", "certificate",
	"key_status", "key_error", "key", "key_matches_leaf", NULL
};

static const char *const key_fields[] = {
	"plaintext_len", "plaintext_sha256", "pkcs8_version", "algorithm_oid",
	"algorithm", "curve_oid", "curve", "has_public_key_field", NULL
};

static const char *const type_names[4] = { "none", "private_key", "certificate",
                                           "secret_key" };

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const uint8_t *find_bytes(const uint8_t *hay, size_t n, const uint8_t *needle,
                                 size_t m)
{
	size_t i;

	for (i = 0; i + m <= n; i++)
		if (memcmp(hay + i, needle, m) == 0)
			return hay + i;
	return NULL;
}

/* Retrieve and check a key (through the API) of a winning entry. */
static void check_key(rcheck *rc, const cJSON *ej, const wks_entry *e)
{
	const char *status = jstr(ej, "key_status");
	const char *jalias = jstr(ej, "alias");
	const char *kpw = rc->key_pw;
	const cJSON *m;
	wks_key *k = NULL;
	int r;
	key_result *res;

	if (rc->key_pw_map && (m = jopt(rc->key_pw_map, jalias)) && cJSON_IsString(m))
		kpw = m->valuestring;
	r = wks_store_get_key(&k, rc->st, e->alias, kpw, strlen(kpw));
	g_keys_checked++;
	res = realloc(rc->kr, (rc->n_kr + 1) * sizeof(*res));
	assert_non_null(res);
	rc->kr = res;
	res = &rc->kr[rc->n_kr++];
	memset(res, 0, sizeof(*res));
	res->alias = strdup(e->alias);
	res->rc = r;
	ck_outcome("get_key (key_status)", r, status);
	if (r != WKS_OK) {
		assert_null(k);
		if (jopt(ej, "key"))
			fail_msg("%s: record has a key but key_status is %s", g_ctx, status);
		return;
	}
	{
		const cJSON *kj = jget(ej, "key");
		size_t len = 0;
		const uint8_t *d = wks_key_data(k, &len);
		const char *alg = wks_key_algorithm(k);

		ck_known_fields(kj, key_fields, "key");
		ck_int("key type", wks_key_type(k), e->type);
		ck_int("plaintext_len", (long long)len, jint(kj, "plaintext_len"));
		ck_sha("plaintext_sha256", d, len, jstr(kj, "plaintext_sha256"));
		tu_sha256_hex(res->sha, d, len);
		snprintf(res->alg, sizeof(res->alg), "%s", alg ? alg : "");
		if (e->type == WKS_ENTRY_SECRET_KEY) {
			ck_str("secret key algorithm (API)", alg, jstr(ej, "algorithm"));
		} else {
			pkcs8_info pi;
			const char *curve;
			size_t leaf_len;
			const uint8_t *leaf;

			parse_pkcs8(&pi, d, len);
			ck_int("key.pkcs8_version", pi.version, jint(kj, "pkcs8_version"));
			ck_str("key.algorithm_oid", pi.alg_oid, jstr(kj, "algorithm_oid"));
			ck_str("key.algorithm", oid_name(key_oids, pi.alg_oid),
			       jstr(kj, "algorithm"));
			ck_str("key algorithm (API)", alg, jstr(kj, "algorithm"));
			curve = jstr_opt(kj, "curve_oid");
			if (pi.curve_oid[0] || curve) {
				ck_str("key.curve_oid", pi.curve_oid, curve);
				ck_str("key.curve", oid_name(curve_oids, pi.curve_oid),
				       jstr(kj, "curve"));
			} else if (jopt(kj, "curve")) {
				fail_msg("%s: key.curve without curve_oid", g_ctx);
			}
			ck_int("key.has_public_key_field", pi.has_public_key_field,
			       cJSON_IsTrue(jget(kj, "has_public_key_field")));
			assert_true(e->cert_count > 0);
			leaf = wks__entry_cert(e, 0, &leaf_len);
			ck_str("key_matches_leaf.result",
			       key_match(d, len, &pi, leaf, leaf_len),
			       jstr(jget(ej, "key_matches_leaf"), "result"));
#ifdef WKS_CRYPTO_OPENSSL
			if (strncmp(alg, "ML-DSA", 6) == 0) {
				/* get_pkey: UNSUPPORTED exactly when OpenSSL (here)
				 * cannot parse the key. */
				const unsigned char *p = d;
				EVP_PKEY *mine = d2i_AutoPrivateKey(NULL, &p, (long)len);
				EVP_PKEY *pk = NULL;

				ERR_clear_error();
				r = wks_store_get_pkey(&pk, rc->st, e->alias, kpw, strlen(kpw));
				if (mine) {
					ck_int("get_pkey (ML-DSA, supported here)", r, WKS_OK);
					ck_int("get_pkey key equal", EVP_PKEY_eq(mine, pk), 1);
				} else {
					ck_int("get_pkey (ML-DSA, unsupported here)", r,
					       WKS_ERR_UNSUPPORTED);
					assert_null(pk);
				}
				EVP_PKEY_free(mine);
				EVP_PKEY_free(pk);
			}
#endif
		}
	}
	wks_key_free(k);
}

static void check_record(rcheck *rc)
{
	const cJSON *rec = rc->rec, *si, *ents, *ej;
	const uint8_t *data = rc->data;
	wks_settings cfg;
	wks_entry **ev = NULL;
	wks_record_pos *pos = NULL;
	wks_file_info info;
	size_t n = 0, i, j, tr;
	char **winners;
	size_t n_win = 0;
	char **aliases = NULL;
	size_t n_aliases = 0;
	int r;

	g_records_checked++;
	set_ctx(rc->file, NULL);
	ck_known_fields(rec, record_fields, "file record");
	ck_int("size", (long long)rc->len, jint(rec, "size"));
	ck_sha("sha256", data, rc->len, jstr(rec, "sha256"));
	ck_str("load.status", jstr(jget(rec, "load"), "status"), "ok");
	ck_int("magic", tu_get_be32(data), jint(rec, "magic"));
	ck_int("version", tu_get_be32(data + 4), jint(rec, "version"));
	ck_int("entry_count (bytes)", (int32_t)tu_get_be32(data + 8), jint(rec, "entry_count"));

	wks__settings_get(&cfg, NULL);
	memset(&info, 0, sizeof(info));
	r = wks__decode(&ev, &n, &pos, &info, data, rc->len, &cfg);
	if (r != WKS_OK)
		fail_msg("%s: wks__decode: %d (%s)", g_ctx, r, wks_error_detail());
	ck_int("entry_count (decoded)", info.entry_count, jint(rec, "entry_count"));

	/* trailer */
	si = jget(rec, "store_integrity");
	ck_known_fields(si, integrity_fields, "store_integrity");
	tr = info.trailer_offset;
	ck_int("trailer_offset", (long long)tr, jint(si, "trailer_offset"));
	ck_int("trailer is the last 92 bytes", (long long)(rc->len - tr), WKS_TRAILER_LEN);
	ck_int("salt_len", tu_get_be32(data + tr), jint(si, "salt_len"));
	ck_hex("salt_hex", info.salt, WKS_SALT_LEN, jstr(si, "salt_hex"));
	ck_hex("salt_hex (bytes)", data + tr + 4, WKS_SALT_LEN, jstr(si, "salt_hex"));
	ck_int("iterations", info.iterations, jint(si, "iterations"));
	ck_int("iterations (bytes)", (int32_t)tu_get_be32(data + tr + 20), jint(si, "iterations"));
	ck_int("mac_len", tu_get_be32(data + tr + 24), jint(si, "mac_len"));
	ck_int("mac_input_len", (long long)info.mac_input_len, jint(si, "mac_input_len"));
	ck_int("mac_input_len = size - 68", (long long)(rc->len - 68), jint(si, "mac_input_len"));
	ck_hex("mac_hex", info.mac, WKS_MAC_LEN, jstr(si, "mac_hex"));
	ck_hex("mac_hex (bytes)", data + tr + 28, WKS_MAC_LEN, jstr(si, "mac_hex"));
	if (rc->with_pw) {
		if (!cJSON_IsTrue(jget(si, "verified")))
			fail_msg("%s: store_integrity.verified is not true", g_ctx);
	} else if (jopt(si, "verified") && !cJSON_IsTrue(jopt(si, "verified"))) {
		const char *v = jstr(si, "verified");

		if (strncmp(v, "not_checked", 11) != 0)
			fail_msg("%s: store_integrity.verified = %s", g_ctx, v);
	}

	/* entries, in file order */
	ents = jget(rec, "entries");
	ck_int("entries", cJSON_GetArraySize(ents), (long long)n);
	winners = calloc(n + 1, sizeof(*winners));
	assert_non_null(winners);
	i = 0;
	cJSON_ArrayForEach(ej, ents) {
		const wks_entry *e = ev[i];
		const char *type = jstr(ej, "type");
		size_t off = pos[i].offset, boff = pos[i].body_offset, alen, ulen, api_len;
		uint8_t *utf8;
		char *api;
		int winner = 1;
		char what[256];

		snprintf(what, sizeof(what), "entry %zu", i);
		set_ctx(rc->file, what);
		ck_known_fields(ej, entry_fields, "entry");
		ck_int("index", (long long)i, jint(ej, "index"));
		ck_int("offset", (long long)off, jint(ej, "offset"));
		ck_int("type_id", e->type, jint(ej, "type_id"));
		ck_int("type_id (bytes)", tu_get_be32(data + off), jint(ej, "type_id"));
		assert_true(e->type >= 1 && e->type <= 3);
		ck_str("type", type_names[e->type], type);

		/* alias: stored bytes, the API form, the JSON string */
		alen = (size_t)(data[off + 4] << 8 | data[off + 5]);
		ck_hex("alias_mutf8_hex", data + off + 6, alen, jstr(ej, "alias_mutf8_hex"));
		utf8 = tu_unhex(jstr(ej, "alias_utf8_hex"), &ulen);
		api = api_alias_from_utf8(utf8, ulen, &api_len);
		if (e->alias_len != api_len || memcmp(e->alias, api, api_len) != 0 ||
		    e->alias[api_len] != 0)
			fail_msg("%s: alias (API form) \"%s\", want \"%s\"", g_ctx,
			         e->alias, api);
		{
			const char *js = jstr(ej, "alias");
			size_t jl = strlen(js);
			size_t nul = strnlen((const char *)utf8, ulen);

			if (jl != nul || memcmp(js, utf8, jl) != 0)
				fail_msg("%s: alias JSON string \"%s\" differs from "
				         "alias_utf8_hex", g_ctx, js);
		}
		snprintf(what, sizeof(what), "entry %zu \"%s\"", i, e->alias);
		set_ctx(rc->file, what);

		/* outer record and body */
		ck_int("body_offset", (long long)boff, jint(ej, "body_offset"));
		ck_int("body_offset = offset + 10 + alias", (long long)boff,
		       (long long)(off + 10 + alen));
		ck_int("body_len", (long long)e->body_len, jint(ej, "body_len"));
		ck_int("body_len (bytes)", tu_get_be32(data + boff - 4), jint(ej, "body_len"));
		if (memcmp(e->body, data + boff, e->body_len) != 0)
			fail_msg("%s: entry body differs from the file bytes", g_ctx);
		ck_int("creation_time_ms", e->created_ms, jint(ej, "creation_time_ms"));

		if (e->type != WKS_ENTRY_CERTIFICATE) {
			const uint8_t *salt;

			/* kdfSaltLen precedes the salt (its position depends on
			 * the algorithm name of a secret key) */
			if (e->type == WKS_ENTRY_PRIVATE_KEY) {
				salt = e->body + 12;
			} else {
				size_t al = (size_t)(e->body[8] << 8 | e->body[9]);
				salt = e->body + 10 + al + 4;
				ck_int("algorithm length", (long long)strlen(jstr(ej, "algorithm")),
				       (long long)al);
				if (memcmp(e->body + 10, jstr(ej, "algorithm"), al) != 0)
					fail_msg("%s: algorithm bytes", g_ctx);
				ck_str("algorithm", e->algorithm, jstr(ej, "algorithm"));
			}
			assert_true(find_bytes(e->body, e->body_len, e->salt, 16) == salt);
			ck_int("kdf_salt_len", tu_get_be32(salt - 4), jint(ej, "kdf_salt_len"));
			ck_hex("kdf_salt_hex", e->salt, WKS_SALT_LEN, jstr(ej, "kdf_salt_hex"));
			ck_int("kdf_iterations", e->iterations, jint(ej, "kdf_iterations"));
			ck_int("kdf_iterations (bytes)", (int32_t)tu_get_be32(salt + 16),
			       jint(ej, "kdf_iterations"));
			ck_int("ivLen (bytes)", tu_get_be32(salt + 20), WKS_IV_LEN);
			ck_hex("iv_hex", e->iv, WKS_IV_LEN, jstr(ej, "iv_hex"));
			ck_hex("iv_hex (bytes)", salt + 24, WKS_IV_LEN, jstr(ej, "iv_hex"));
			ck_int("encrypted_key_len", (long long)e->enc.len,
			       jint(ej, "encrypted_key_len"));
			ck_int("encKeyLen (bytes)", tu_get_be32(salt + 40),
			       jint(ej, "encrypted_key_len"));
			ck_int("encKey offset", (long long)e->enc.off,
			       (long long)(salt + 44 - e->body));
			ck_int("mac_input_len", (long long)e->mac_input_len,
			       jint(ej, "mac_input_len"));
			ck_int("macLen offset = mac_input_len", (long long)(e->mac.off - 4),
			       jint(ej, "mac_input_len"));
			ck_int("macLen (bytes)", tu_get_be32(e->body + e->mac.off - 4),
			       WKS_MAC_LEN);
			ck_int("entry MAC ends the body", (long long)(e->mac.off + e->mac.len),
			       (long long)e->body_len);
			ck_hex("mac_hex", e->body + e->mac.off, e->mac.len, jstr(ej, "mac_hex"));
		} else {
			static const char *const none[] = { "kdf_salt_hex", "kdf_iterations",
			                                    "iv_hex", "mac_hex", "key",
			                                    "key_status", "chain", NULL };
			for (j = 0; none[j]; j++)
				if (jopt(ej, none[j]))
					fail_msg("%s: certificate entry has %s", g_ctx, none[j]);
		}

		/* certificates (through the decoder's spans) */
		if (e->type == WKS_ENTRY_PRIVATE_KEY) {
			const cJSON *chain = jget(ej, "chain"), *cj;

			ck_int("chain length", cJSON_GetArraySize(chain), (long long)e->cert_count);
			ck_int("chainCount (bytes)",
			       tu_get_be32(e->body + e->enc.off + e->enc.len),
			       (long long)e->cert_count);
			j = 0;
			cJSON_ArrayForEach(cj, chain)
				check_cert(cj, e->body, e->certs[j++]);
		} else if (e->type == WKS_ENTRY_CERTIFICATE) {
			ck_int("cert_count", (long long)e->cert_count, 1);
			check_cert(jget(ej, "certificate"), e->body, e->certs[0]);
		} else {
			ck_int("cert_count", (long long)e->cert_count, 0);
		}

		/* through the API, for the entry the alias resolves to (the
		 * last record with that alias) */
		for (j = i + 1; j < n; j++)
			if (ev[j]->alias_len == e->alias_len &&
			    memcmp(ev[j]->alias, e->alias, e->alias_len) == 0)
				winner = 0;
		if (winner) {
			int64_t ct = 0;
			size_t cc = 0, k;
			uint8_t *der = NULL;
			size_t der_len = 0;

			winners[n_win++] = e->alias;
			ck_int("contains", wks_store_contains(rc->st, e->alias), 1);
			ck_int("entry_type (API)", wks_store_entry_type(rc->st, e->alias), e->type);
			TU_OK(wks_store_creation_time(&ct, rc->st, e->alias));
			ck_int("creation_time (API)", ct, jint(ej, "creation_time_ms"));
			if (e->type == WKS_ENTRY_SECRET_KEY) {
				TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_cert_count(&cc, rc->st, e->alias));
				TU_EXPECT(WKS_ERR_WRONG_TYPE,
				          wks_store_get_cert_der(&der, &der_len, rc->st, e->alias, 0));
				assert_null(der);
			} else {
				TU_OK(wks_store_cert_count(&cc, rc->st, e->alias));
				ck_int("cert_count (API)", (long long)cc, (long long)e->cert_count);
				for (k = 0; k < cc; k++) {
					size_t dl;
					const uint8_t *dd = wks__entry_cert(e, k, &dl);
					X509 *x = NULL;
					unsigned char *xd = NULL;
					int xl;

					TU_OK(wks_store_get_cert_der(&der, &der_len, rc->st, e->alias, k));
					if (der_len != dl || memcmp(der, dd, dl) != 0)
						fail_msg("%s: get_cert_der(%zu) differs", g_ctx, k);
					wks_free(der);
					der = NULL;
#ifdef WKS_CRYPTO_OPENSSL
					TU_OK(wks_store_get_cert(&x, rc->st, e->alias, k));
					xl = i2d_X509(x, &xd);
					if (xl < 0 || (size_t)xl != dl || memcmp(xd, dd, dl) != 0)
						fail_msg("%s: get_cert(%zu) differs", g_ctx, k);
					OPENSSL_free(xd);
					X509_free(x);
#else
					(void)x;
					(void)xd;
					(void)xl;
#endif
				}
				TU_EXPECT(WKS_ERR_NOTFOUND,
				          wks_store_get_cert_der(&der, &der_len, rc->st, e->alias, cc));
				assert_null(der);
			}
			if (rc->do_keys && e->type != WKS_ENTRY_CERTIFICATE)
				check_key(rc, ej, e);
			else if (rc->do_keys)
				assert_null(jopt(ej, "key_status"));
		}
		free(api);
		free(utf8);
		i++;
	}
	set_ctx(rc->file, NULL);

	/* aliases, size, duplicates */
	ck_int("loaded_size", (long long)n_win, jint(rec, "loaded_size"));
	ck_int("size (API)", (long long)wks_store_size(rc->st), jint(rec, "loaded_size"));
	TU_OK(wks_store_aliases(&aliases, &n_aliases, rc->st));
	ck_int("aliases count", (long long)n_aliases, (long long)n_win);
	qsort(winners, n_win, sizeof(*winners), cmp_str);
	for (i = 0; i < n_win; i++)
		ck_str("aliases (sorted by bytes)", aliases[i], winners[i]);
	assert_null(aliases[n_aliases]);
	wks_aliases_free(aliases);
	{
		/* aliases with more than one record, by their JSON string */
		const cJSON *dup = jopt(rec, "duplicate_aliases");
		int ndup = 0;

		for (i = 0; i < n; i++) {
			int count = 0, first = 1;

			for (j = 0; j < n; j++)
				if (strcmp(ev[j]->alias, ev[i]->alias) == 0) {
					count++;
					if (j < i)
						first = 0;
				}
			if (count > 1 && first) {
				const cJSON *d;
				int found = 0;

				ndup++;
				cJSON_ArrayForEach(d, dup)
					if (cJSON_IsString(d) &&
					    strcmp(d->valuestring, ev[i]->alias) == 0)
						found = 1;
				if (!found)
					fail_msg("%s: duplicate alias \"%s\" not in duplicate_aliases",
					         g_ctx, ev[i]->alias);
			}
		}
		ck_int("duplicate_aliases", dup ? cJSON_GetArraySize(dup) : 0, ndup);
	}
	/* find_cert_alias: the first alias in byte order whose certificate or
	 * leaf has these DER bytes */
	for (i = 0; i < n_win; i++) {
		const wks_entry *e = NULL;
		const uint8_t *der;
		size_t dl;
		char *got = NULL;
		const char *want = NULL;

		for (j = 0; j < n; j++)
			if (strcmp(ev[j]->alias, winners[i]) == 0)
				e = ev[j]; /* the last one */
		if (e->type == WKS_ENTRY_SECRET_KEY || e->cert_count == 0)
			continue;
		der = wks__entry_cert(e, 0, &dl);
		for (j = 0; j < n_win && !want; j++) {
			size_t k;
			const wks_entry *f = NULL;

			for (k = 0; k < n; k++)
				if (strcmp(ev[k]->alias, winners[j]) == 0)
					f = ev[k];
			if (f->type != WKS_ENTRY_SECRET_KEY && f->cert_count > 0) {
				size_t fl;
				const uint8_t *fd = wks__entry_cert(f, 0, &fl);

				if (fl == dl && memcmp(fd, der, dl) == 0)
					want = winners[j];
			}
		}
		TU_OK(wks_store_find_cert_alias(&got, rc->st, der, dl));
		ck_str("find_cert_alias", got, want);
		wks_free(got);
	}
	free(winners);
	free(pos);
	wks__entries_free(ev, n);
}

/* ------------------------------------------------------------------------
 * Loading helpers
 */

/* A store holding known entries (edge/aliases-special.wks, loaded without
 * a password: no key derivation), to show a failed load changes nothing. */
static wks_store *sentinel_store(void)
{
	static uint8_t *data;
	static size_t len;
	wks_store *st = NULL;

	if (!data)
		data = read_vec("edge", "aliases-special.wks", &len);
	TU_OK(wks_store_new(&st));
	TU_OK(wks_store_load_buffer(st, data, len, NULL, 0));
	return st;
}

static void check_sentinel(wks_store *st)
{
	char **a = NULL;
	size_t n = 0;
	uint8_t *der = NULL;
	size_t dl = 0;
	char sha[65];
	int64_t ct = 0;

	ck_int("store unchanged after a failed load: size", (long long)wks_store_size(st), 5);
	TU_OK(wks_store_aliases(&a, &n, st));
	ck_int("unchanged: alias count", (long long)n, 5);
	ck_str("unchanged: alias 0", a[0], "");
	ck_str("unchanged: alias 1", a[1], "Case");
	ck_str("unchanged: alias 2", a[2], "case");
	ck_str("unchanged: alias 3", a[3], "line\nbreak\r\n");
	ck_str("unchanged: alias 4", a[4], "nul\xC0\x80inside");
	wks_aliases_free(a);
	TU_OK(wks_store_get_cert_der(&der, &dl, st, "case", 0));
	tu_sha256_hex(sha, der, dl);
	wks_free(der);
	ck_str("unchanged: cert of \"case\"", sha,
	       "34f6030c2249bb1f3a5f49c36523c43c388025b99ca0cf26a0e0b83b047f03db");
	TU_OK(wks_store_creation_time(&ct, st, "nul\xC0\x80inside"));
	ck_int("unchanged: creation time", ct, 1700000002000LL);
}

static int load(wks_store *st, const uint8_t *d, size_t n, const char *pw)
{
	g_loads++;
	return wks_store_load_buffer(st, d, n, pw, pw ? strlen(pw) : 0);
}

/* ------------------------------------------------------------------------
 * Every .wks file of a folder has a manifest record, and every record a file.
 */

static void check_folder_listing(const char *folder, const cJSON *manifest)
{
	char rel[256];
	DIR *d;
	struct dirent *de;
	const cJSON *f;
	size_t n_files = 0;

	snprintf(rel, sizeof(rel), "vectors/%s", folder);
	d = opendir(tu_shared(rel));
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		if (l > 4 && strcmp(de->d_name + l - 4, ".wks") == 0) {
			n_files++;
			if (!jopt(jopt(manifest, "files"), de->d_name))
				fail_msg("%s/%s has no manifest record", folder, de->d_name);
		}
	}
	closedir(d);
	cJSON_ArrayForEach(f, jopt(manifest, "files")) {
		size_t len;
		uint8_t *data = read_vec(folder, f->string, &len);

		free(data);
	}
	ck_int("files = manifest records", (long long)n_files,
	       cJSON_GetArraySize(jopt(manifest, "files")));
}

static void test_listing(void **state)
{
	(void)state;
	set_ctx("listing", NULL);
	check_folder_listing("wolfjce", g_manifests[0]);
	check_folder_listing("edge", g_manifests[1]);
	check_folder_listing("wolfjce-live", g_manifests[2]);
}

static void ck_pw_hex(const char *pw, const char *hex)
{
	if (hex)
		ck_hex("password_utf8_hex", (const uint8_t *)pw, strlen(pw), hex);
}

/* ------------------------------------------------------------------------
 * wolfjce/ and wolfjce-live/
 */

/* Load with the password (all keys), then without (structure only). */
static void check_live_inputs(const char *ctx, const cJSON *inputs, rcheck *rc);

static void check_plain_file(const char *folder, const char *name, const cJSON *rec,
                             const char *pw, const char *key_pw, const cJSON *inputs)
{
	size_t len;
	uint8_t *data = read_vec(folder, name, &len);
	wks_store *st = sentinel_store();
	rcheck rc, rc2;
	char ctx[300];

	snprintf(ctx, sizeof(ctx), "%s/%s", folder, name);
	set_ctx(ctx, "load with password");
	TU_OK(load(st, data, len, pw));
	memset(&rc, 0, sizeof(rc));
	rc.file = ctx;
	rc.data = data;
	rc.len = len;
	rc.rec = rec;
	rc.st = st;
	rc.with_pw = 1;
	rc.do_keys = 1;
	rc.key_pw = key_pw;
	check_record(&rc);
	if (inputs) {
		check_live_inputs(ctx, inputs, &rc);
		set_ctx(ctx, NULL);
		ck_int("inputs cover every entry", cJSON_GetArraySize(inputs),
		       (long long)wks_store_size(st));
	}
	wks_store_free(st);

	st = sentinel_store();
	set_ctx(ctx, "load without password");
	TU_OK(load(st, data, len, NULL));
	rc2 = rc;
	rc2.st = st;
	rc2.with_pw = 0;
	rc2.do_keys = 0;
	rc2.kr = NULL;
	rc2.n_kr = 0;
	check_record(&rc2);
	wks_store_free(st);
	rcheck_free(&rc);
	free(data);
}

static void test_wolfjce(void **state)
{
	const cJSON *m = g_manifests[0], *f;
	const char *pw;
	int n = 0;

	(void)state;
	set_ctx("wolfjce/manifest.json", NULL);
	pw = jstr(m, "password");
	ck_pw_hex(pw, jstr(m, "password_utf8_hex"));
	cJSON_ArrayForEach(f, jopt(m, "files")) {
		if (sampled(n))
			check_plain_file("wolfjce", f->string, f, pw, pw, NULL);
		n++;
	}
	ck_int("wolfjce files", n, 14);
}

static void check_live_inputs(const char *ctx, const cJSON *inputs, rcheck *rc)
{
	const cJSON *in;

	cJSON_ArrayForEach(in, inputs) {
		const char *type = jstr(in, "type");
		const char *alias = in->string;
		char what[300];
		uint8_t *der = NULL;
		size_t dl = 0;
		char sha[65];

		snprintf(what, sizeof(what), "inputs \"%s\"", alias);
		set_ctx(ctx, what);
		if (strcmp(type, "private_key") == 0) {
			const key_result *kr = find_kr(rc, alias);
			tu_der *key = NULL, *chain = NULL;
			size_t nk, nc, i;
			const cJSON *cs = jget(in, "chain_sha256"), *c;
			char rel[300];

			ck_int("entry type", wks_store_entry_type(rc->st, alias),
			       WKS_ENTRY_PRIVATE_KEY);
			assert_non_null(kr);
			ck_int("get_key", kr->rc, WKS_OK);
			snprintf(rel, sizeof(rel), "vectors/wolfjce-live/%s", jstr(in, "key_file"));
			nk = tu_pem_ders(&key, tu_shared(rel), "PRIVATE KEY");
			ck_sha("key_file", key[0].der, key[0].len, jstr(in, "pkcs8_sha256"));
			ck_str("pkcs8_sha256 = key.plaintext_sha256", kr->sha,
			       jstr(in, "pkcs8_sha256"));
			tu_ders_free(key, nk);
			snprintf(rel, sizeof(rel), "vectors/wolfjce-live/%s", jstr(in, "chain_file"));
			nc = tu_pem_ders(&chain, tu_shared(rel), "CERTIFICATE");
			ck_int("chain_sha256 count", cJSON_GetArraySize(cs), (long long)nc);
			i = 0;
			cJSON_ArrayForEach(c, cs) {
				ck_sha("chain_file cert", chain[i].der, chain[i].len, c->valuestring);
				TU_OK(wks_store_get_cert_der(&der, &dl, rc->st, alias, i));
				ck_sha("chain_sha256 (API)", der, dl, c->valuestring);
				wks_free(der);
				i++;
			}
			tu_ders_free(chain, nc);
		} else if (strcmp(type, "certificate") == 0) {
			tu_der *certs = NULL;
			size_t nc, idx = 0;
			char rel[300];

			ck_int("entry type", wks_store_entry_type(rc->st, alias),
			       WKS_ENTRY_CERTIFICATE);
			snprintf(rel, sizeof(rel), "vectors/wolfjce-live/%s", jstr(in, "cert_file"));
			nc = tu_pem_ders(&certs, tu_shared(rel), "CERTIFICATE");
			if (jopt(in, "cert_index"))
				idx = (size_t)jint(in, "cert_index");
			else
				ck_int("single certificate file", (long long)nc, 1);
			assert_true(idx < nc);
			ck_sha("cert_file", certs[idx].der, certs[idx].len, jstr(in, "sha256"));
			TU_OK(wks_store_get_cert_der(&der, &dl, rc->st, alias, 0));
			ck_sha("certificate (API)", der, dl, jstr(in, "sha256"));
			wks_free(der);
			tu_ders_free(certs, nc);
		} else if (strcmp(type, "secret_key") == 0) {
			const key_result *kr = find_kr(rc, alias);
			size_t kl;
			uint8_t *kb = tu_unhex(jstr(in, "key_hex"), &kl);

			ck_int("entry type", wks_store_entry_type(rc->st, alias),
			       WKS_ENTRY_SECRET_KEY);
			assert_non_null(kr);
			ck_int("get_key", kr->rc, WKS_OK);
			tu_sha256_hex(sha, kb, kl);
			ck_str("key_hex vs key_sha256", sha, jstr(in, "key_sha256"));
			ck_str("key_hex vs retrieved key", kr->sha, sha);
			ck_str("algorithm", kr->alg, jstr(in, "algorithm"));
			free(kb);
		} else {
			fail_msg("%s: unknown input type %s", g_ctx, type);
		}
	}
}

static void test_wolfjce_live(void **state)
{
	const cJSON *m = g_manifests[2], *f;
	const char *dpw;
	int n = 0;

	(void)state;
	set_ctx("wolfjce-live/manifest.json", NULL);
	dpw = jstr(m, "password");
	ck_pw_hex(dpw, jstr(m, "password_utf8_hex"));
	cJSON_ArrayForEach(f, jopt(m, "files")) {
		const char *pw = jstr_opt(f, "password") ? jstr_opt(f, "password") : dpw;
		const char *kpw = jstr_opt(f, "key_password") ? jstr_opt(f, "key_password") : pw;
		char ctx[300];

		snprintf(ctx, sizeof(ctx), "wolfjce-live/%s", f->string);
		set_ctx(ctx, NULL);
		ck_pw_hex(pw, jstr_opt(f, "password_utf8_hex"));
		ck_pw_hex(kpw, jstr_opt(f, "key_password_utf8_hex"));
		if (sampled(n))
			check_plain_file("wolfjce-live", f->string, f, pw, kpw,
			                 jget(f, "inputs"));
		n++;
	}
	ck_int("wolfjce-live files", n, 10);
}

/* ------------------------------------------------------------------------
 * edge/
 */

static const char *const edge_fields[] = {
	"kind", "description", "password", "password_utf8_hex", "key_passwords",
	"store_iterations", "inputs", "base", "mutation", "expected", "decoded",
	"decoded_without_password", "size", "sha256", NULL
};

static const char *const expected_fields[] = {
	"load_with_password", "load_without_password", "size_after_load", "get_key",
	"get_key_after_load_without_password", "get_key_with_store_password",
	"with_config", "winner", NULL
};

/* Outcomes {alias: class} against get_key results (running get_key for
 * aliases without one). */
static void check_get_key_map(const char *what, const cJSON *map, rcheck *rc,
                              const char *kpw_default, const cJSON *kpw_map)
{
	const cJSON *o;
	size_t n_keys = 0, i;

	cJSON_ArrayForEach(o, map) {
		const key_result *kr = find_kr(rc, o->string);
		char w[300];

		snprintf(w, sizeof(w), "%s \"%s\"", what, o->string);
		if (kr) {
			ck_outcome(w, kr->rc, o->valuestring);
		} else {
			const cJSON *m = kpw_map ? jopt(kpw_map, o->string) : NULL;
			const char *kpw = m ? m->valuestring : kpw_default;
			wks_key *k = NULL;
			int r = wks_store_get_key(&k, rc->st, o->string, kpw, strlen(kpw));

			ck_outcome(w, r, o->valuestring);
			wks_key_free(k);
		}
	}
	/* every key entry of the store has an expectation */
	for (i = 0; i < rc->n_kr; i++)
		if (!jopt(map, rc->kr[i].alias))
			fail_msg("%s: %s: no expectation for key \"%s\"", g_ctx, what,
			         rc->kr[i].alias);
	cJSON_ArrayForEach(o, map)
		n_keys++;
	(void)n_keys;
}

static void check_edge_inputs(const cJSON *inputs, const cJSON *dec, rcheck *rc)
{
	const cJSON *in;

	cJSON_ArrayForEach(in, inputs) {
		const char *alias = in->string;
		const cJSON *ents = jget(dec, "entries"), *e, *last = NULL;
		char what[300];

		snprintf(what, sizeof(what), "inputs \"%s\"", alias);
		set_ctx(rc->file, what);
		if (cJSON_IsArray(in)) {
			const cJSON *item;

			cJSON_ArrayForEach(item, in) {
				const cJSON *ej = cJSON_GetArrayItem(ents, (int)jint(item, "index"));

				assert_non_null(ej);
				ck_str("alias of indexed record", jstr(ej, "alias"), alias);
				ck_str("type", jstr(ej, "type"), jstr(item, "type"));
				ck_int("creation_time_ms", jint(ej, "creation_time_ms"),
				       jint(item, "creation_time_ms"));
			}
			continue;
		}
		cJSON_ArrayForEach(e, ents)
			if (strcmp(jstr(e, "alias"), alias) == 0)
				last = e;
		assert_non_null(last);
		ck_str("type", jstr(last, "type"), jstr(in, "type"));
		ck_int("creation_time_ms", jint(last, "creation_time_ms"),
		       jint(in, "creation_time_ms"));
		if (jopt(in, "kdf_iterations"))
			ck_int("kdf_iterations", jint(last, "kdf_iterations"),
			       jint(in, "kdf_iterations"));
		if (jopt(in, "algorithm"))
			ck_str("algorithm", jstr(last, "algorithm"), jstr(in, "algorithm"));
		if (jopt(in, "pkcs8_sha256") || jopt(in, "key_hex")) {
			const key_result *kr = find_kr(rc, alias);
			char sha[65];

			assert_non_null(kr);
			ck_int("get_key", kr->rc, WKS_OK);
			if (jopt(in, "pkcs8_sha256")) {
				ck_str("pkcs8_sha256", kr->sha, jstr(in, "pkcs8_sha256"));
			} else {
				size_t kl;
				uint8_t *kb = tu_unhex(jstr(in, "key_hex"), &kl);

				tu_sha256_hex(sha, kb, kl);
				ck_str("key_hex", kr->sha, sha);
				free(kb);
			}
		}
		if (jopt(in, "key_password")) {
			assert_non_null(rc->key_pw_map);
			ck_str("key_password = key_passwords[alias]", jstr(in, "key_password"),
			       jstr(rc->key_pw_map, alias));
		}
	}
}

static void check_mutation(const char *name, const cJSON *f, const uint8_t *data,
                           size_t len)
{
	const cJSON *mu = jget(f, "mutation");
	size_t blen, i;
	uint8_t *base = read_vec("edge", jstr(f, "base"), &blen);

	(void)name;
	if (jopt(mu, "truncated_length")) {
		ck_int("truncated_length", (long long)len, jint(mu, "truncated_length"));
		assert_true(len < blen);
		if (memcmp(data, base, len) != 0)
			fail_msg("%s: not a prefix of %s", g_ctx, jstr(f, "base"));
	} else {
		size_t off = (size_t)jint(mu, "offset"), ol, nl;
		uint8_t *oldb = tu_unhex(jstr(mu, "old_hex"), &ol);
		uint8_t *newb = tu_unhex(jstr(mu, "new_hex"), &nl);
		int restamped = cJSON_IsTrue(jget(mu, "store_mac_recomputed"));

		ck_int("same size as base", (long long)len, (long long)blen);
		assert_int_equal(ol, nl);
		if (memcmp(base + off, oldb, ol) != 0)
			fail_msg("%s: base bytes at %zu are not old_hex", g_ctx, off);
		if (memcmp(data + off, newb, nl) != 0)
			fail_msg("%s: bytes at %zu are not new_hex", g_ctx, off);
		for (i = 0; i < len; i++) {
			if (i >= off && i < off + ol)
				continue;
			if (restamped && i >= len - 64)
				continue;
			if (data[i] != base[i])
				fail_msg("%s: byte %zu differs from base outside the mutation",
				         g_ctx, i);
		}
		if (restamped && memcmp(data + len - 64, base + len - 64, 64) == 0)
			fail_msg("%s: store MAC said recomputed but unchanged", g_ctx);
		free(oldb);
		free(newb);
	}
	free(base);
}

static void test_edge(void **state)
{
	const cJSON *m = g_manifests[1], *f, *ec;
	const char *dpw;
	int n_valid = 0, n_corrupt = 0;

	(void)state;
	set_ctx("edge/manifest.json", NULL);
	dpw = jstr(m, "default_password");
	ec = jget(m, "error_classes");
	jget(ec, "ok");
	jget(ec, "malformed");
	jget(ec, "limit_exceeded");
	jget(ec, "integrity_failure");
	ck_int("error classes", cJSON_GetArraySize(ec), 4);

	cJSON_ArrayForEach(f, jopt(m, "files")) {
		const char *name = f->string;
		char ctx[300];
		size_t len;
		uint8_t *data = read_vec("edge", name, &len);
		const char *pw, *kind;
		const cJSON *exp, *dec, *dwp, *kpw_map;
		wks_store *st;
		int r;
		rcheck rc;

		snprintf(ctx, sizeof(ctx), "edge/%s", name);
		set_ctx(ctx, NULL);
		ck_known_fields(f, edge_fields, "edge record");
		ck_int("size", (long long)len, jint(f, "size"));
		ck_sha("sha256", data, len, jstr(f, "sha256"));
		pw = jstr_opt(f, "password") ? jstr_opt(f, "password") : dpw;
		ck_pw_hex(pw, jstr_opt(f, "password_utf8_hex"));
		kind = jstr(f, "kind");
		exp = jget(f, "expected");
		ck_known_fields(exp, expected_fields, "expected");
		dec = jopt(f, "decoded");
		dwp = jopt(f, "decoded_without_password");
		kpw_map = jopt(f, "key_passwords");
		if (strcmp(kind, "valid") == 0) {
			n_valid++;
			assert_non_null(dec);
		} else {
			ck_str("kind", kind, "corrupt");
			n_corrupt++;
			check_mutation(name, f, data, len);
		}
		if (!sampled(n_valid + n_corrupt - 1)) {
			free(data);
			continue;
		}

		/* 1. with the password, into a store holding other entries */
		memset(&rc, 0, sizeof(rc));
		st = sentinel_store();
		set_ctx(ctx, "load with password");
		r = load(st, data, len, pw);
		ck_outcome("load_with_password", r, jstr(exp, "load_with_password"));
		if (r == WKS_OK) {
			if (jopt(exp, "size_after_load"))
				ck_int("size_after_load", (long long)wks_store_size(st),
				       jint(exp, "size_after_load"));
			assert_non_null(dec);
			rc.file = ctx;
			rc.data = data;
			rc.len = len;
			rc.rec = dec;
			rc.st = st;
			rc.with_pw = 1;
			rc.do_keys = 1;
			rc.key_pw = pw;
			rc.key_pw_map = kpw_map;
			check_record(&rc);
			set_ctx(ctx, "after load with password");
			if (jopt(exp, "get_key"))
				check_get_key_map("get_key", jopt(exp, "get_key"), &rc, pw, kpw_map);
			if (jopt(exp, "get_key_with_store_password")) {
				/* the store password for every key: reuse results
				 * where it is the key password */
				rcheck rc2 = rc;
				size_t i, k = 0;

				rc2.kr = calloc(rc.n_kr + 1, sizeof(*rc2.kr));
				assert_non_null(rc2.kr);
				for (i = 0; i < rc.n_kr; i++) {
					const cJSON *mm = kpw_map ? jopt(kpw_map, rc.kr[i].alias) : NULL;

					if (!mm || strcmp(mm->valuestring, pw) == 0)
						rc2.kr[k++] = rc.kr[i];
				}
				rc2.n_kr = k;
				check_get_key_map("get_key_with_store_password",
				                  jopt(exp, "get_key_with_store_password"),
				                  &rc2, pw, NULL);
				free(rc2.kr);
			}
			if (jopt(exp, "winner")) {
				const cJSON *w = jopt(exp, "winner");
				const cJSON *ej = cJSON_GetArrayItem(jget(dec, "entries"),
				                                    (int)jint(w, "index"));
				const char *alias = jstr(w, "alias");
				uint8_t *der = NULL;
				size_t dl = 0;
				int64_t ct = 0;

				assert_non_null(ej);
				ck_str("winner alias", jstr(ej, "alias"), alias);
				TU_OK(wks_store_get_cert_der(&der, &dl, st, alias, 0));
				ck_sha("winner certificate", der, dl, jstr(w, "certificate_sha256"));
				wks_free(der);
				TU_OK(wks_store_creation_time(&ct, st, alias));
				ck_int("winner creation time", ct, jint(ej, "creation_time_ms"));
			}
			if (jopt(f, "store_iterations"))
				ck_int("store_iterations",
				       jint(jget(dec, "store_integrity"), "iterations"),
				       jint(f, "store_iterations"));
			if (jopt(f, "inputs"))
				check_edge_inputs(jopt(f, "inputs"), dec, &rc);
		} else {
			if (dec)
				fail_msg("%s: decoded record but the load fails", g_ctx);
			check_sentinel(st);
		}
		rcheck_free(&rc);
		wks_store_free(st);

		/* 2. without a password */
		st = sentinel_store();
		set_ctx(ctx, "load without password");
		r = load(st, data, len, NULL);
		ck_outcome("load_without_password", r, jstr(exp, "load_without_password"));
		memset(&rc, 0, sizeof(rc));
		if (r == WKS_OK) {
			rc.file = ctx;
			rc.data = data;
			rc.len = len;
			rc.st = st;
			rc.with_pw = 0;
			rc.key_pw = pw;
			rc.key_pw_map = kpw_map;
			if (dwp) {
				rc.rec = dwp;
				rc.do_keys = 1;
			} else {
				/* the same entries as with the password */
				assert_non_null(dec);
				rc.rec = dec;
				rc.do_keys = 0;
			}
			check_record(&rc);
			set_ctx(ctx, "after load without password");
			if (jopt(exp, "get_key_after_load_without_password"))
				check_get_key_map("get_key_after_load_without_password",
				                  jopt(exp, "get_key_after_load_without_password"),
				                  &rc, pw, kpw_map);
		} else {
			if (dwp)
				fail_msg("%s: decoded_without_password but the load fails", g_ctx);
			check_sentinel(st);
		}
		rcheck_free(&rc);
		wks_store_free(st);

		/* 3. with properties set before the load */
		if (jopt(exp, "with_config")) {
			const cJSON *wc;

			cJSON_ArrayForEach(wc, jopt(exp, "with_config")) {
				const cJSON *p;
				char what[300] = "with_config";

				st = sentinel_store();
				cJSON_ArrayForEach(p, wc) {
					if (strcmp(p->string, "load") == 0)
						continue;
					TU_OK(wks_store_set_property(st, p->string, p->valuestring));
					snprintf(what + strlen(what), sizeof(what) - strlen(what),
					         " %s=%s", p->string, p->valuestring);
				}
				set_ctx(ctx, what);
				r = load(st, data, len, pw);
				ck_outcome("load", r, jstr(wc, "load"));
				if (r != WKS_OK)
					check_sentinel(st);
				else
					ck_int("size", (long long)wks_store_size(st),
					       jint(dec, "loaded_size"));
				wks_store_free(st);
			}
		}
		free(data);
	}
	set_ctx("edge", NULL);
	ck_int("valid edge files", n_valid, 9);
	ck_int("corrupt edge files", n_corrupt, 24);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listing),
		cmocka_unit_test(test_wolfjce),
		cmocka_unit_test(test_edge),
		cmocka_unit_test(test_wolfjce_live),
	};

	g_file_stride = tu_env_count("WKS_VECTORS_STRIDE", 1, 1);
	if (g_file_stride == 0)
		g_file_stride = 1;
	if (g_file_stride > 1)
		print_message("vectors: every %zu-th file of each folder "
		              "(WKS_VECTORS_STRIDE)\n", g_file_stride);
	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
