/*
 * fuzz_bks: hostile BKS files (and files of UBER's shape) through the
 * library's reader (src/convert/bks.c and bc.c, behind wks_java_parse,
 * wks_convert_read, `wks import-keystore` / `wks convert`): the detection,
 * a parse without a password; then a copy with its HMAC recomputed for
 * FUZZ_PW (PKCS#12 key derivation and HMAC-SHA1 by OpenSSL here, so that
 * mutations reach the entries behind the MAC), parsed with it, and every
 * key of what parses opened with FUZZ_PW (PBEWithSHAAnd3-KeyTripleDES-CBC,
 * the encoded key behind it).
 *
 * Oracles, beyond "no crash, no sanitizer report, no leak":
 *  - failures are clean classes (FORMAT, LIMIT, INVALID, UNSUPPORTED;
 *    INTEGRITY only where a password is checked); UBER is UNSUPPORTED;
 *  - a file that parses was detected as BKS, has at most one entry per 15
 *    bytes (bounded allocation), every span (key, certificates) inside the
 *    input; parsed again it reads identically, and with the right MAC it
 *    reads identically too;
 *  - a key that opens is non-empty (private keys PKCS#8, which bks.c
 *    checks; secret keys with an algorithm name).
 *
 * Seeds: keytool's BKS v1 and v2 stores of tests/data/bc rewritten at 2
 * iterations under FUZZ_PW (tests/data/bc/bcreseal.py), and its UBER.
 */
#include "fuzz_common.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pkcs12.h>

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

static int bks_clean(int rc)
{
	return rc == WKS_ERR_FORMAT || rc == WKS_ERR_LIMIT ||
	       rc == WKS_ERR_INVALID || rc == WKS_ERR_UNSUPPORTED;
}

/* The HMAC of a BKS file recomputed for FUZZ_PW with its header's salt and
 * iteration count; 0 if the header does not allow it (then the copy is
 * not compared). */
static int bks_fix_mac(uint8_t *d, size_t n)
{
	uint8_t pw[2 * FUZZ_PW_LEN + 2], key[20];
	uint32_t version, sl, iter;
	size_t hdr, klen;
	unsigned int ml = 0;

	if (n < 12)
		return 0;
	version = fuzz_be32(d);
	sl = fuzz_be32(d + 4);
	if (version > 2 || sl == 0 || sl > 1024 || n < 12 + (size_t)sl + 21)
		return 0;
	iter = fuzz_be32(d + 8 + sl);
	if (iter < 1 || iter > FUZZ_MAX_ITER)
		return 0;
	hdr = 12 + sl;
	for (size_t i = 0; i < FUZZ_PW_LEN; i++) {
		pw[2 * i] = 0;
		pw[2 * i + 1] = (uint8_t)FUZZ_PW[i];
	}
	pw[2 * FUZZ_PW_LEN] = pw[2 * FUZZ_PW_LEN + 1] = 0;
	klen = version == 2 ? 20 : 2;
	FUZZ_CHECK(PKCS12_key_gen_uni(pw, (int)sizeof(pw), d + 8, (int)sl, 3,
				      (int)iter, (int)klen, key, EVP_sha1()),
		   "pkcs12 kdf");
	FUZZ_CHECK(HMAC(EVP_sha1(), key, (int)klen, d + hdr, n - hdr - 20,
			d + n - 20, &ml) && ml == 20, "hmac");
	return 1;
}

static void bks_check_spans(const jks_file *f, const uint8_t *d, size_t n)
{
	FUZZ_CHECK(f->count <= n / 15, "%zu entries in %zu bytes", f->count, n);
	for (size_t i = 0; i < f->count; i++) {
		const jks_entry *e = &f->e[i];

		FUZZ_CHECK(e->alias != NULL, "entry %zu without alias", i);
		FUZZ_CHECK(e->tag >= JKS_TAG_KEY && e->tag <= JKS_TAG_SECRET,
			   "tag %d", e->tag);
		if (e->tag != JKS_TAG_CERT)
			FUZZ_CHECK(e->blob >= d && e->blob_len > 0 &&
				   e->blob_len <= n &&
				   (size_t)(e->blob - d) <= n - e->blob_len,
				   "blob of entry %zu", i);
		FUZZ_CHECK(e->tag != JKS_TAG_CERT || e->ncerts == 1,
			   "certificate entry %zu", i);
		for (size_t k = 0; k < e->ncerts; k++)
			FUZZ_CHECK(e->cert[k] >= d && e->cert_len[k] > 0 &&
				   (size_t)(e->cert[k] - d) <= n - e->cert_len[k],
				   "certificate %zu of entry %zu", k, i);
	}
}

/* Two parses of the same entries (a, b may lie in two copies). */
static void bks_same(const jks_file *a, const uint8_t *da, const jks_file *b,
		     const uint8_t *db)
{
	FUZZ_CHECK(a->count == b->count, "entry counts differ");
	for (size_t i = 0; i < a->count; i++) {
		const jks_entry *x = &a->e[i], *y = &b->e[i];

		FUZZ_CHECK(!strcmp(x->alias, y->alias) && x->tag == y->tag &&
			   x->date_ms == y->date_ms && x->ncerts == y->ncerts &&
			   x->blob_len == y->blob_len &&
			   x->non_x509 == y->non_x509 &&
			   !x->blob == !y->blob &&
			   (!x->blob || x->blob - da == y->blob - db),
			   "entry %zu reads otherwise", i);
		for (size_t k = 0; k < x->ncerts; k++)
			FUZZ_CHECK(x->cert_len[k] == y->cert_len[k] &&
				   x->cert[k] - da == y->cert[k] - db,
				   "certificate %zu of entry %zu", k, i);
	}
}

static void bks_open_all(bc_store *s, const jks_file *f)
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
		FUZZ_CHECK(r == 0 || bks_clean(r) || r == WKS_ERR_INTEGRITY,
			   "open entry %zu: %d", i, r);
		FUZZ_CHECK(r != 0 || (k && kl > 0), "empty key");
		FUZZ_CHECK(r != 0 || f->e[i].tag != JKS_TAG_SECRET ||
			   (alg && *alg), "secret without algorithm");
		if (k)
			OPENSSL_cleanse(k, kl);
		free(k);
		free(alg);
	}
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	/* Every derivation on one meter per input (kdfmeter.h), with a
	 * budget of 64 derivations at FUZZ_MAX_ITER. */
	jks_limits lim = { 10, 65536, FUZZ_MAX_ITER, 64u * FUZZ_MAX_ITER,
			   NULL };
	bc_store s, s2, s3;
	jks_file f = JKS_FILE_INIT, f2 = JKS_FILE_INIT, f3 = JKS_FILE_INIT;
	wks_keystore_type t;
	uint8_t *copy;
	int rc, rc3;

	fuzz_settings();
	t = wks__bc_detect(data, size);
	FUZZ_CHECK(t == WKS_KEYSTORE_UNKNOWN || t == WKS_KEYSTORE_BKS ||
		   t == WKS_KEYSTORE_UBER || t == WKS_KEYSTORE_BCFKS,
		   "detected %d", (int)t);
	if (t != WKS_KEYSTORE_BKS && t != WKS_KEYSTORE_UBER)
		return 0; /* (BCFKS: fuzz_bcfks) */
	lim.kdf = wks__kdf_meter_new(lim.max_kdf_iterations);
	FUZZ_CHECK(lim.kdf != NULL, "meter");
	rc = wks__bc_parse(&s, &f, data, size, NULL, 0, &lim);
	FUZZ_CHECK(rc == 0 || bks_clean(rc), "parse without password: %d", rc);
	FUZZ_CHECK(t != WKS_KEYSTORE_UBER || rc == WKS_ERR_UNSUPPORTED,
		   "UBER: %d", rc);
	if (rc == 0) {
		bks_check_spans(&f, data, size);
		FUZZ_CHECK(wks__bc_parse(&s2, &f2, data, size, NULL, 0,
					 &lim) == 0, "a second parse failed");
		bks_same(&f, data, &f2, data);
		jks_file_free(&f2);
		wks__bc_free(&s2);
	}
	copy = malloc(size ? size : 1);
	FUZZ_CHECK(copy != NULL, "malloc");
	memcpy(copy, data, size);
	if (bks_fix_mac(copy, size)) {
		rc3 = wks__bc_parse(&s3, &f3, copy, size, FUZZ_PW, FUZZ_PW_LEN,
				    &lim);
		FUZZ_CHECK(rc3 == 0 || bks_clean(rc3), "parse with password: %d",
			   rc3);
		/* Only the MAC differs: the same verdict, the same entries. */
		FUZZ_CHECK((rc == 0) == (rc3 == 0), "without %d, with "
			   "password %d", rc, rc3);
		if (rc3 == 0) {
			bks_same(&f, data, &f3, copy);
			bks_open_all(&s3, &f3);
			jks_file_free(&f3);
			wks__bc_free(&s3);
		}
	}
	free(copy);
	if (rc == 0) {
		jks_file_free(&f);
		wks__bc_free(&s);
	}
	wks__kdf_meter_free(lim.kdf);
	return 0;
}
