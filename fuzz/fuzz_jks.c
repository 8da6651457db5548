/*
 * fuzz_jks: hostile JKS / JCEKS files through the CLI's Java keystore
 * reader (src/convert/jks.c): parsed without a password, then again with its
 * integrity digest recomputed for FUZZ_PW (so that mutations reach the
 * entries behind the digest, as the WKS targets re-MAC theirs), and every
 * key and sealed secret key of what parses decrypted with FUZZ_PW.
 *
 * Oracles, beyond "no crash, no sanitizer report, no leak":
 *  - failures are clean classes (FORMAT, LIMIT, INVALID, UNSUPPORTED; and
 *    INTEGRITY only where a password is checked);
 *  - a file that parses without the password parses identically with the
 *    right digest, and every span (key, certificates) lies inside the
 *    input with a non-empty length;
 *  - a recovered key is non-empty (and PKCS#8, which jks.c checks);
 *  - the keys are recovered through a key-derivation meter
 *    (src/convert/kdfmeter.h) with a budget of 64 PBEs at FUZZ_MAX_ITER:
 *    a key recovered twice (the second time from the meter's memo, with
 *    no derivation) is the same bytes both times.
 *
 * Seeds: keytool stores (password FUZZ_PW; JCEKS made with
 * -J-Djdk.jceks.iterationCount=32, under FUZZ_MAX_ITER).
 */
#include "fuzz_common.h"

#include <openssl/evp.h>

#include "convert/jks.h"

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

int FUZZ_INIT(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_settings();
	return 0;
}

static int jks_clean(int rc)
{
	return rc == WKS_ERR_FORMAT || rc == WKS_ERR_LIMIT ||
	       rc == WKS_ERR_INVALID || rc == WKS_ERR_UNSUPPORTED;
}

/* The digest of the file for FUZZ_PW (ASCII, so UTF-16BE is 00 xx). */
static void jks_fix_digest(uint8_t *d, size_t size)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int n = 0;
	size_t i;

	FUZZ_CHECK(ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL), "sha1");
	for (i = 0; i < FUZZ_PW_LEN; i++) {
		uint8_t u[2] = { 0, (uint8_t)FUZZ_PW[i] };

		EVP_DigestUpdate(ctx, u, 2);
	}
	EVP_DigestUpdate(ctx, "Mighty Aphrodite", 16);
	EVP_DigestUpdate(ctx, d, size - 20);
	FUZZ_CHECK(EVP_DigestFinal_ex(ctx, d + size - 20, &n) && n == 20,
	           "sha1 final");
	EVP_MD_CTX_free(ctx);
}

static void jks_check_spans(const jks_file *f, const uint8_t *d, size_t size)
{
	for (size_t i = 0; i < f->count; i++) {
		const jks_entry *e = &f->e[i];

		FUZZ_CHECK(e->alias != NULL, "entry %zu without alias", i);
		if (e->tag != JKS_TAG_CERT)
			FUZZ_CHECK(e->blob >= d && e->blob_len > 0 &&
			           e->blob_len <= size &&
			           (size_t)(e->blob - d) <= size - e->blob_len,
			           "blob of entry %zu", i);
		for (size_t k = 0; k < e->ncerts; k++)
			FUZZ_CHECK(e->cert[k] >= d && e->cert_len[k] > 0 &&
			           (size_t)(e->cert[k] - d) <= size - e->cert_len[k],
			           "certificate %zu of entry %zu", k, i);
	}
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	jks_limits lim = { 10, 65536, FUZZ_MAX_ITER, 64u * FUZZ_MAX_ITER, NULL };
	jks_file f = JKS_FILE_INIT, g = JKS_FILE_INIT;
	unsigned long runs = wks__convert_kdf_runs();
	uint8_t *copy;
	int rc, rc2;

	fuzz_settings();
	rc = jks_parse(&f, data, size, NULL, 0, &lim);
	FUZZ_CHECK(rc == 0 || jks_clean(rc), "parse without password: %d", rc);
	if (rc == 0)
		jks_check_spans(&f, data, size);
	if (size < 32)
		goto done;
	copy = malloc(size);
	FUZZ_CHECK(copy != NULL, "malloc");
	memcpy(copy, data, size);
	jks_fix_digest(copy, size);
	rc2 = jks_parse(&g, copy, size, FUZZ_PW, FUZZ_PW_LEN, &lim);
	FUZZ_CHECK(rc2 == 0 || jks_clean(rc2), "parse with password: %d", rc2);
	/* Only the digest differs: the same verdict, once past the magic. */
	FUZZ_CHECK((rc == 0) == (rc2 == 0), "without %d, with password %d", rc,
	           rc2);
	if (rc2 == 0) {
		lim.kdf = wks__kdf_meter_new(lim.max_kdf_iterations);
		FUZZ_CHECK(lim.kdf != NULL, "meter");
		FUZZ_CHECK(g.count == f.count, "entry counts differ");
		jks_check_spans(&g, copy, size);
		for (size_t i = 0; i < g.count; i++) {
			const jks_entry *e = &g.e[i];
			uint8_t *k = NULL;
			size_t kl = 0;
			char *alg = NULL;
			int r;

			if (e->tag == JKS_TAG_KEY)
				r = jks_recover_key(&k, &kl, e, FUZZ_PW,
				                    FUZZ_PW_LEN, &lim);
			else if (e->tag == JKS_TAG_SECRET)
				r = jks_recover_secret(&k, &kl, &alg, e, FUZZ_PW,
				                       FUZZ_PW_LEN, &lim);
			else
				continue;
			FUZZ_CHECK(r == 0 || jks_clean(r) ||
			           r == WKS_ERR_INTEGRITY,
			           "recover entry %zu: %d", i, r);
			FUZZ_CHECK(r != 0 || (k && kl > 0), "empty key");
			if (r == 0 && e->tag == JKS_TAG_KEY) {
				uint8_t *k2 = NULL;
				size_t kl2 = 0;
				unsigned long before = wks__convert_kdf_runs();

				FUZZ_CHECK(jks_recover_key(&k2, &kl2, e, FUZZ_PW,
				                           FUZZ_PW_LEN, &lim) == 0 &&
				           kl2 == kl && !memcmp(k, k2, kl),
				           "entry %zu: again, not the same key", i);
				/* JKS's own protection is not metered; a
				 * JCEKS key comes from the memo. */
				FUZZ_CHECK(wks__convert_kdf_runs() == before,
				           "entry %zu: derived twice", i);
				OPENSSL_cleanse(k2, kl2);
				free(k2);
			}
			FUZZ_CHECK(r != 0 || e->tag != JKS_TAG_SECRET ||
			           (alg && *alg), "secret without algorithm");
			if (k)
				OPENSSL_cleanse(k, kl);
			free(k);
			free(alg);
		}
	}
	/* Every run costs at least one iteration of the budget. */
	FUZZ_CHECK(wks__convert_kdf_runs() - runs <= lim.max_kdf_iterations,
	           "%lu derivations", wks__convert_kdf_runs() - runs);
	wks__kdf_meter_free(lim.kdf);
	jks_file_free(&g);
	free(copy);
done:
	jks_file_free(&f);
	return 0;
}
