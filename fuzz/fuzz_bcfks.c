/*
 * fuzz_bcfks: hostile BCFKS keystores through the library's reader
 * (src/convert/bcfks.c and bc.c, behind wks_java_parse, wks_convert_read
 * and `wks import-keystore` / `wks convert`).  The first byte picks:
 *
 *  - even: the rest is a BCFKS file, parsed with FUZZ_PW; when its
 *    integrity check is an HMAC under PBKDF2 at most FUZZ_MAX_ITER
 *    iterations, a copy with the HMAC recomputed (OpenSSL's PBKDF2 and
 *    HMAC here, from a DER walk of this file's own) is parsed too, so
 *    that mutations reach the store's encryption parameters behind it;
 *  - odd: the rest is the store data inside the encryption (an
 *    ObjectStoreData, DER), read by bcfks_store_data(), as a store that
 *    decrypted would be;
 *
 * and every key of what parses is opened with FUZZ_PW (PBES2: PBKDF2 or
 * scrypt, AES-256-CCM or key wrap; PKCS#8 or SecretKeyData behind it).
 *
 * Oracles, beyond "no crash, no sanitizer report, no leak":
 *  - failures are clean classes (FORMAT, LIMIT, UNSUPPORTED, INVALID,
 *    INTEGRITY);
 *  - what parses has at most one entry per 20 bytes of store data
 *    (bounded allocation), every span inside the input or the decrypted
 *    data, and parsed again reads identically;
 *  - a key that opens is non-empty, a secret key has an algorithm name.
 *
 * Seeds: tests/data/bc's BCFKS stores (store.bcfks, kwp.bcfks rewritten at
 * 2 iterations under FUZZ_PW by tests/data/bc/bcreseal.py; scrypt.bcfks
 * and signed.bcfks as keytool's Variants.java made them), and their store
 * data (odd first byte).
 */
#include "fuzz_common.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "convert/bc.h"

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

int FUZZ_INIT(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_settings();
	return 0;
}

static int bcfks_clean(int rc)
{
	return rc == WKS_ERR_FORMAT || rc == WKS_ERR_LIMIT ||
	       rc == WKS_ERR_INVALID || rc == WKS_ERR_UNSUPPORTED ||
	       rc == WKS_ERR_INTEGRITY;
}

/* ---- a DER walk of this target's own (for the HMAC) ------------------- */

typedef struct {
	const uint8_t *p, *v;
	size_t n, len, tlv_len;
	int tag;
} fz_der;

/* The next element of [*p, *p + *left): 0 if malformed. */
static int fz_next(const uint8_t **p, size_t *left, fz_der *it)
{
	size_t len, i = 2;

	if (*left < 2)
		return 0;
	len = (*p)[1];
	if (len & 0x80) {
		size_t k = len & 0x7F;

		if (k == 0 || k > 3 || *left < 2 + k)
			return 0;
		len = 0;
		for (size_t j = 0; j < k; j++)
			len = len << 8 | (*p)[2 + j];
		i += k;
	}
	if (len > *left - i)
		return 0;
	it->tag = (*p)[0];
	it->p = *p;
	it->v = *p + i;
	it->len = len;
	it->tlv_len = i + len;
	*p += it->tlv_len;
	*left -= it->tlv_len;
	return 1;
}

static void fz_in(const fz_der *it, const uint8_t **p, size_t *left)
{
	*p = it->v;
	*left = it->len;
}

/* FUZZ_PW and a purpose, each as PKCS12PasswordToBytes (ASCII). */
static size_t fz_pw(uint8_t *out, const char *purpose)
{
	size_t n = 0;

	for (size_t i = 0; i < FUZZ_PW_LEN; i++) {
		out[n++] = 0;
		out[n++] = (uint8_t)FUZZ_PW[i];
	}
	out[n++] = 0;
	out[n++] = 0;
	for (size_t i = 0; purpose[i]; i++) {
		out[n++] = 0;
		out[n++] = (uint8_t)purpose[i];
	}
	out[n++] = 0;
	out[n++] = 0;
	return n;
}

/* Recompute the HMAC of a BCFKS file for FUZZ_PW (PBKDF2, SHA-512 or
 * SHA3-512 for both the PRF and the MAC, as the file says); 0 if the file
 * is not one this walk understands. */
static int bcfks_fix_mac(uint8_t *d, size_t n)
{
	static const uint8_t sha512[] = { 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D,
					  0x02, 0x0B };
	static const uint8_t sha3[] = { 0x60, 0x86, 0x48, 0x01, 0x65, 0x03,
					0x04, 0x02, 0x10 };
	const uint8_t *p = d, *q, *r;
	size_t left = n, ql, rl;
	fz_der top, sd, ic, macalg, kdf, mac, oid, par, salt, it, kl, prf, x;
	uint8_t pw[4 * FUZZ_PW_LEN + 64], key[64];
	const EVP_MD *md, *pmd;
	uint64_t iter = 0, klen = 0;
	unsigned int ml = 0;

	if (!fz_next(&p, &left, &top) || top.tag != 0x30 || left)
		return 0;
	fz_in(&top, &p, &left);
	if (!fz_next(&p, &left, &sd) || !fz_next(&p, &left, &ic) ||
	    ic.tag != 0x30)
		return 0;
	fz_in(&ic, &q, &ql);
	if (!fz_next(&q, &ql, &macalg) || !fz_next(&q, &ql, &kdf) ||
	    !fz_next(&q, &ql, &mac) || mac.tag != 0x04)
		return 0;
	fz_in(&macalg, &r, &rl);
	if (!fz_next(&r, &rl, &oid))
		return 0;
	md = oid.len == sizeof(sha512) && !memcmp(oid.v, sha512, oid.len) ?
	     EVP_sha512() :
	     oid.len == sizeof(sha3) && !memcmp(oid.v, sha3, oid.len) ?
	     EVP_sha3_512() : NULL;
	if (!md || mac.len != (size_t)EVP_MD_get_size(md))
		return 0;
	fz_in(&kdf, &r, &rl);
	if (!fz_next(&r, &rl, &oid) || !fz_next(&r, &rl, &par) ||
	    par.tag != 0x30)
		return 0;
	fz_in(&par, &r, &rl);
	if (!fz_next(&r, &rl, &salt) || !fz_next(&r, &rl, &it) ||
	    !fz_next(&r, &rl, &kl) || !fz_next(&r, &rl, &prf) ||
	    it.tag != 0x02 || kl.tag != 0x02 || it.len > 4 || kl.len > 2)
		return 0;
	for (size_t i = 0; i < it.len; i++)
		iter = iter << 8 | it.v[i];
	for (size_t i = 0; i < kl.len; i++)
		klen = klen << 8 | kl.v[i];
	fz_in(&prf, &r, &rl);
	if (!fz_next(&r, &rl, &x))
		return 0;
	pmd = x.len == sizeof(sha512) && !memcmp(x.v, sha512, x.len) ?
	      EVP_sha512() :
	      x.len == sizeof(sha3) && !memcmp(x.v, sha3, x.len) ?
	      EVP_sha3_512() : NULL;
	if (!pmd || iter < 1 || iter > FUZZ_MAX_ITER || klen < 1 ||
	    klen > sizeof(key))
		return 0;
	FUZZ_CHECK(PKCS5_PBKDF2_HMAC((const char *)pw,
				     (int)fz_pw(pw, "INTEGRITY_CHECK"),
				     salt.v, (int)salt.len, (int)iter, pmd,
				     (int)klen, key), "pbkdf2");
	FUZZ_CHECK(HMAC(md, key, (int)klen, sd.p, sd.tlv_len,
			(uint8_t *)mac.v, &ml) && ml == mac.len, "hmac");
	return 1;
}

/* ---- the checks ------------------------------------------------------- */

static int inside(const uint8_t *p, size_t len, const uint8_t *d, size_t n)
{
	return d && p >= d && len <= n && (size_t)(p - d) <= n - len;
}

static void bcfks_check(const bc_store *s, const jks_file *f,
			const uint8_t *d, size_t n)
{
	const uint8_t *pd = s->plain ? s->plain : d;
	size_t pn = s->plain ? s->plain_len : n;

	FUZZ_CHECK(f->count <= pn / 20, "%zu entries in %zu bytes", f->count,
		   pn);
	for (size_t i = 0; i < f->count; i++) {
		const jks_entry *e = &f->e[i];

		FUZZ_CHECK(e->alias != NULL, "entry %zu without alias", i);
		FUZZ_CHECK(e->tag != JKS_TAG_CERT || e->ncerts == 1,
			   "certificate entry %zu", i);
		if (e->tag != JKS_TAG_CERT)
			FUZZ_CHECK(e->blob_len > 0 &&
				   inside(e->blob, e->blob_len, pd, pn),
				   "blob of entry %zu", i);
		for (size_t k = 0; k < e->ncerts; k++)
			FUZZ_CHECK(e->cert_len[k] > 0 &&
				   inside(e->cert[k], e->cert_len[k], pd, pn),
				   "certificate %zu of entry %zu", k, i);
	}
}

static void bcfks_same(const jks_file *a, const jks_file *b)
{
	FUZZ_CHECK(a->count == b->count, "entry counts differ");
	for (size_t i = 0; i < a->count; i++) {
		const jks_entry *x = &a->e[i], *y = &b->e[i];

		FUZZ_CHECK(!strcmp(x->alias, y->alias) && x->tag == y->tag &&
			   x->date_ms == y->date_ms && x->ncerts == y->ncerts &&
			   x->blob_len == y->blob_len &&
			   (!x->blob_len || !memcmp(x->blob, y->blob,
						    x->blob_len)),
			   "entry %zu reads otherwise", i);
		for (size_t k = 0; k < x->ncerts; k++)
			FUZZ_CHECK(x->cert_len[k] == y->cert_len[k] &&
				   !memcmp(x->cert[k], y->cert[k],
					   x->cert_len[k]),
				   "certificate %zu of entry %zu", k, i);
	}
}

static void bcfks_open_all(bc_store *s, const jks_file *f)
{
	for (size_t i = 0; i < f->count; i++) {
		uint8_t *k = NULL;
		char *alg = NULL;
		size_t kl = 0;
		int r;

		if (f->e[i].tag == JKS_TAG_CERT)
			continue;
		r = f->e[i].tag == JKS_TAG_KEY ?
		    wks__bc_get_key(&k, &kl, s, f, i, FUZZ_PW, FUZZ_PW_LEN) :
		    wks__bc_get_secret(&k, &kl, &alg, s, f, i, FUZZ_PW,
				       FUZZ_PW_LEN);
		FUZZ_CHECK(r == 0 || bcfks_clean(r), "open entry %zu: %d", i, r);
		FUZZ_CHECK(r != 0 || (k && kl > 0), "empty key");
		FUZZ_CHECK(r != 0 || f->e[i].tag != JKS_TAG_SECRET ||
			   (alg && *alg), "secret without algorithm");
		if (k)
			OPENSSL_cleanse(k, kl);
		free(k);
		free(alg);
	}
}

/* A bc_store as wks__bc_parse() starts one. */
static void store_init(bc_store *s, const jks_limits *lim)
{
	memset(s, 0, sizeof(*s));
	s->type = WKS_KEYSTORE_BCFKS;
	s->lim = *lim;
}

static void one_file(const uint8_t *d, size_t n, const jks_limits *lim)
{
	bc_store s, s2;
	jks_file f, f2;
	int rc;

	if (wks__bc_detect(d, n) != WKS_KEYSTORE_BCFKS)
		return; /* (BKS: fuzz_bks) */
	rc = wks__bc_parse(&s, &f, d, n, FUZZ_PW, FUZZ_PW_LEN, lim);
	FUZZ_CHECK(rc == 0 || bcfks_clean(rc), "parse: %d", rc);
	if (rc != 0)
		return;
	bcfks_check(&s, &f, d, n);
	FUZZ_CHECK(wks__bc_parse(&s2, &f2, d, n, FUZZ_PW, FUZZ_PW_LEN, lim) == 0,
		   "a second parse failed");
	bcfks_same(&f, &f2);
	bcfks_open_all(&s, &f);
	jks_file_free(&f2);
	wks__bc_free(&s2);
	jks_file_free(&f);
	wks__bc_free(&s);
}

static void store_data(const uint8_t *d, size_t n, const jks_limits *lim)
{
	bc_store s, s2;
	jks_file f = JKS_FILE_INIT, f2 = JKS_FILE_INIT;
	int rc;

	store_init(&s, lim);
	rc = bcfks_store_data(&s, &f, d, n, NULL, NULL);
	FUZZ_CHECK(rc == 0 || bcfks_clean(rc), "store data: %d", rc);
	if (rc == 0) {
		bcfks_check(&s, &f, d, n);
		store_init(&s2, lim);
		FUZZ_CHECK(bcfks_store_data(&s2, &f2, d, n, NULL, NULL) == 0,
			   "a second parse failed");
		bcfks_same(&f, &f2);
		bcfks_open_all(&s, &f);
		jks_file_free(&f2);
		wks__bc_free(&s2);
	}
	jks_file_free(&f);
	wks__bc_free(&s);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	/* Every derivation on one meter per input (kdfmeter.h), with a
	 * budget of 64 derivations at FUZZ_MAX_ITER. */
	jks_limits lim = { 10, 65536, FUZZ_MAX_ITER, 64u * FUZZ_MAX_ITER,
			   NULL };
	uint8_t *copy;

	fuzz_settings();
	if (size < 1)
		return 0;
	lim.kdf = wks__kdf_meter_new(lim.max_kdf_iterations);
	FUZZ_CHECK(lim.kdf != NULL, "meter");
	if (data[0] & 1) {
		store_data(data + 1, size - 1, &lim);
	} else {
		one_file(data + 1, size - 1, &lim);
		copy = malloc(size);
		FUZZ_CHECK(copy != NULL, "malloc");
		memcpy(copy, data + 1, size - 1);
		if (bcfks_fix_mac(copy, size - 1))
			one_file(copy, size - 1, &lim);
		free(copy);
	}
	wks__kdf_meter_free(lim.kdf);
	return 0;
}
