/*
 * The key derivations of the conversions (include/wks/convert.h), without
 * keytool: files are made here with OpenSSL's PKCS12 API and byte by byte.
 *
 *   - every PKCS#12 password is the byte string given (issue 22, item 1):
 *     a password buffer without a terminating NUL is read no further than
 *     its length (the ASan build catches a read past it), and a password
 *     holding a NUL byte protects every part of the file (MAC, key bags,
 *     certificate safe) and reads back, with wks_p12_parse(),
 *     wks_convert_read() and OpenSSL's PKCS12 calls given the length;
 *   - the key-derivation work of one conversion is bounded (item 2):
 *     libwks.convert.maxKdfIterations refuses a call with WKS_ERR_LIMIT
 *     naming it, and a derivation repeated within a call (same salt,
 *     iteration count and password) runs once.  The work is counted with
 *     the library's counter of derivations (wks__convert_kdf_runs(),
 *     src/convert/kdfmeter.h), never timed.  Shapes: a JCEKS of junk key
 *     entries each with a certificate (distinct salts, one salt), entry by
 *     entry and whole; a PKCS#12 holding one shrouded key bag many times
 *     and one holding many keys under distinct salts;
 *   - the PBEs that p12pbe.c derives itself (PBES2 with AES and with
 *     3DES and an HMAC-SHA-1 PRF, PKCS#12 PBE with 3DES) read as OpenSSL
 *     wrote them, and the rest (RC2 under the legacy provider) still
 *     reads through OpenSSL.
 *
 * Every PBE here runs 1000 iterations: well under a second in all.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include "convert/kdfmeter.h"
#include "wks/convert.h"

#define KPW "key-pass"
#define ITER 1000
#define BUDGET_PROP "libwks.convert.maxKdfIterations"

/* A store with a private key entry "k" (EC, under KPW, with its
 * certificate) and a trusted certificate "ca". */
static wks_store *key_store(void)
{
	wks_store *st = tu_store_fast();
	tu_der *ca = NULL;
	size_t n;

	TU_OK(tu_set_key_files(st, "k", "ecc-key.pem", "server-ecc-cert.pem",
			       KPW));
	n = tu_pem_ders(&ca, tu_input("ca-cert.pem"), "CERTIFICATE");
	assert_true(n >= 1);
	TU_OK(wks_store_set_cert_der(st, "ca", ca[0].der, ca[0].len));
	tu_ders_free(ca, n);
	return st;
}

/* The PKCS#8 DER of "k". */
static PKCS8_PRIV_KEY_INFO *store_p8(wks_store *st)
{
	wks_key *key = NULL;
	const uint8_t *d;
	size_t n = 0;
	PKCS8_PRIV_KEY_INFO *p8;

	TU_OK(wks_store_get_key(&key, st, "k", KPW, strlen(KPW)));
	d = wks_key_data(key, &n);
	p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &d, (long)n);
	assert_non_null(p8);
	wks_key_free(key);
	return p8;
}

static int same_p8(const PKCS8_PRIV_KEY_INFO *a, const uint8_t *der,
		   size_t len)
{
	unsigned char *d = NULL;
	int n = i2d_PKCS8_PRIV_KEY_INFO(a, &d);
	int same = n > 0 && (size_t)n == len && !memcmp(d, der, len);

	OPENSSL_clear_free(d, n > 0 ? (size_t)n : 0);
	return same;
}

/* wks_p12_parse() with pw: the entries k (a key with one certificate)
 * and ca, k's key being `p8`. */
static void expect_p12(const uint8_t *der, size_t len, const char *pw,
		       size_t pw_len, const PKCS8_PRIV_KEY_INFO *p8)
{
	wks_p12_file *f = NULL;
	const uint8_t *k;
	size_t kl = 0;

	TU_OK(wks_p12_parse(&f, der, len, pw, pw_len, 0));
	assert_int_equal(wks_p12_count(f), 2);
	assert_int_equal(wks_p12_entry_type(f, 0), WKS_ENTRY_PRIVATE_KEY);
	assert_string_equal(wks_p12_alias(f, 0), "k");
	assert_int_equal(wks_p12_cert_count(f, 0), 1);
	assert_int_equal(wks_p12_entry_type(f, 1), WKS_ENTRY_CERTIFICATE);
	assert_string_equal(wks_p12_alias(f, 1), "ca");
	k = wks_p12_key(f, 0, &kl);
	assert_true(same_p8(p8, k, kl));
	wks_p12_free(f);
}

/* The file through OpenSSL's own PKCS12 calls, each given the password
 * with its length: the MAC, every safe, every shrouded key bag.  Returns
 * the number of certificates and keys found (-1: something failed). */
static int openssl_reads(const uint8_t *der, size_t len, const char *pw,
			 int pw_len, const PKCS8_PRIV_KEY_INFO *p8)
{
	const unsigned char *p = der;
	PKCS12 *p12 = d2i_PKCS12(NULL, &p, (long)len);
	STACK_OF(PKCS7) *safes = NULL;
	int found = -1;

	if (!p12 || PKCS12_verify_mac(p12, pw, pw_len) != 1 ||
	    !(safes = PKCS12_unpack_authsafes(p12)))
		goto done;
	found = 0;
	for (int i = 0; i < sk_PKCS7_num(safes) && found >= 0; i++) {
		PKCS7 *p7 = sk_PKCS7_value(safes, i);
		int nid = OBJ_obj2nid(p7->type);
		STACK_OF(PKCS12_SAFEBAG) *bags =
			nid == NID_pkcs7_encrypted ?
			PKCS12_unpack_p7encdata(p7, pw, pw_len) :
			PKCS12_unpack_p7data(p7);

		if (!bags) {
			found = -1;
			break;
		}
		for (int j = 0; j < sk_PKCS12_SAFEBAG_num(bags); j++) {
			PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(bags, j);
			PKCS8_PRIV_KEY_INFO *k;
			unsigned char *d = NULL;
			int n;

			if (PKCS12_SAFEBAG_get_nid(bag) == NID_certBag) {
				found++;
				continue;
			}
			if (PKCS12_SAFEBAG_get_nid(bag) !=
			    NID_pkcs8ShroudedKeyBag)
				continue;
			if (!(k = PKCS12_decrypt_skey(bag, pw, pw_len))) {
				found = -1;
				break;
			}
			n = i2d_PKCS8_PRIV_KEY_INFO(k, &d);
			if (n > 0 && same_p8(p8, d, (size_t)n))
				found++;
			OPENSSL_clear_free(d, n > 0 ? (size_t)n : 0);
			PKCS8_PRIV_KEY_INFO_free(k);
		}
		sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	}
done:
	sk_PKCS7_pop_free(safes, PKCS7_free);
	PKCS12_free(p12);
	return found;
}

static int get_k(void *arg, const char *alias, wks_key **key)
{
	return wks_store_get_key(key, arg, alias, KPW, strlen(KPW));
}

/* Item 1: the PKCS#12 password is the bytes given, every part of the
 * file under the same ones. */
static void test_convert_kdf__p12_password_bytes(void **state)
{
	wks_store *st = key_store(), *back = tu_store_fast();
	PKCS8_PRIV_KEY_INFO *p8 = store_p8(st);
	static const char nul_pw[] = "ab\0cd"; /* 5 bytes, a NUL inside */
	static const char longer[] = "p12passXYZ";
	wks_convert_report *r = NULL;
	wks_key *key = NULL;
	uint8_t *out = NULL;
	char *heap;
	size_t len = 0;

	(void)state;
	/* A password in a heap buffer of exactly its length, no NUL after
	 * it: nothing reads past it (the ASan build reports any read). */
	heap = malloc(7);
	assert_non_null(heap);
	memcpy(heap, "p12pass", 7);
	TU_OK(wks_convert_write_p12(&out, &len, st, NULL, KPW, strlen(KPW),
				    heap, 7, ITER, NULL, NULL, NULL));
	expect_p12(out, len, "p12pass", 7, p8);
	wks_free(out);
	TU_OK(wks_convert_write_p12_keys(&out, &len, st, NULL, get_k, st,
					 heap, 7, ITER, NULL));
	expect_p12(out, len, "p12pass", 7, p8);
	wks_free(out);
	free(heap);

	/* The same with bytes after the password (what any build can see):
	 * the certificates are not under "p12passXYZ". */
	TU_OK(wks_convert_write_p12(&out, &len, st, NULL, KPW, strlen(KPW),
				    longer, 7, ITER, NULL, NULL, NULL));
	expect_p12(out, len, "p12pass", 7, p8);
	assert_int_equal(openssl_reads(out, len, "p12pass", 7, p8), 3);
	wks_free(out);

	/* A NUL inside: all five bytes protect everything, "ab" nothing. */
	TU_OK(wks_convert_write_p12(&out, &len, st, NULL, KPW, strlen(KPW),
				    nul_pw, 5, ITER, NULL, NULL, NULL));
	expect_p12(out, len, nul_pw, 5, p8);
	assert_int_equal(openssl_reads(out, len, nul_pw, 5, p8), 3);
	assert_int_equal(openssl_reads(out, len, "ab", 2, p8), -1);
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_p12_parse(&(wks_p12_file *){ NULL },
						   out, len, "ab", 2, 0));
	/* wks_convert_read() keeps the key under those five bytes. */
	TU_OK(wks_convert_read(back, out, len, nul_pw, 5, 0, NULL, NULL, &r));
	assert_int_equal(wks_convert_report_done(r), 2);
	wks_convert_report_free(r);
	TU_OK(wks_store_get_key(&key, back, "k", nul_pw, 5));
	wks_key_free(key);
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_key(&key, back, "k", "ab",
						       2));
	wks_free(out);
	PKCS8_PRIV_KEY_INFO_free(p8);
	wks_store_free(back);
	wks_store_free(st);
}

/* ---- JCEKS of junk key entries ------------------------------------------ */

static void put32(wks_buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 8), (uint8_t)v };

	wks_buf_put(b, x, 4);
}

static void put_utf(wks_buf *b, const char *s)
{
	uint8_t x[2] = { (uint8_t)(strlen(s) >> 8), (uint8_t)strlen(s) };

	wks_buf_put(b, x, 2);
	wks_buf_put(b, s, strlen(s));
}

/* An EncryptedPrivateKeyInfo under JCEKS's PBEWithMD5AndTripleDES with
 * `salt`, `iter` and 16 bytes that decrypt to nothing. */
static unsigned char *junk_key(int *len, const uint8_t salt[8],
			       uint32_t iter, unsigned seed)
{
	PBEPARAM *pp = PBEPARAM_new();
	X509_SIG *sig = X509_SIG_new();
	X509_ALGOR *alg;
	ASN1_OCTET_STRING *ct;
	ASN1_STRING *seq;
	uint8_t junk[16];
	unsigned char *der = NULL;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(seed * 31 + i * 7 + 1);
	assert_non_null(pp);
	assert_non_null(sig);
	assert_true(ASN1_OCTET_STRING_set(pp->salt, salt, 8));
	assert_true(ASN1_INTEGER_set(pp->iter, (long)iter));
	seq = ASN1_item_pack(pp, ASN1_ITEM_rptr(PBEPARAM), NULL);
	assert_non_null(seq);
	X509_SIG_getm(sig, &alg, &ct);
	assert_true(X509_ALGOR_set0(alg, OBJ_txt2obj("1.3.6.1.4.1.42.2.19.1",
						     1), V_ASN1_SEQUENCE, seq));
	assert_true(ASN1_OCTET_STRING_set(ct, junk, sizeof(junk)));
	*len = i2d_X509_SIG(sig, &der);
	assert_true(*len > 0);
	X509_SIG_free(sig);
	PBEPARAM_free(pp);
	return der;
}

/* A JCEKS (version 2) of n private key entries "k0", "k1", ... whose keys
 * are junk, each with the certificate `cert`; the salts all differ, or
 * all are one; digest under the ASCII password `pw`. */
static uint8_t *junk_jceks(size_t *len, size_t n, int one_salt,
			   const tu_der *cert, const char *pw)
{
	wks_buf b = WKS_BUF_INIT;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	uint8_t dig[20];
	unsigned int dl = 0;
	char alias[32];

	put32(&b, 0xCECECECEu);
	put32(&b, 2);
	put32(&b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		uint8_t salt[8] = { 's', 'a', 'l', 't', 0, 0, (uint8_t)(i >> 8),
				    (uint8_t)i };
		unsigned char *k;
		int kl = 0;

		if (one_salt)
			salt[6] = salt[7] = 0;
		k = junk_key(&kl, salt, ITER, (unsigned)i);
		put32(&b, 1); /* a private key */
		snprintf(alias, sizeof(alias), "k%zu", i);
		put_utf(&b, alias);
		put32(&b, 0); /* the date, 8 bytes */
		put32(&b, 0);
		put32(&b, (uint32_t)kl);
		wks_buf_put(&b, k, (size_t)kl);
		OPENSSL_free(k);
		put32(&b, 1); /* one certificate */
		put_utf(&b, "X.509");
		put32(&b, (uint32_t)cert->len);
		wks_buf_put(&b, cert->der, cert->len);
	}
	assert_non_null(md);
	assert_true(EVP_DigestInit_ex(md, EVP_sha1(), NULL));
	for (const char *c = pw; *c; c++) {
		uint8_t u[2] = { 0, (uint8_t)*c };

		EVP_DigestUpdate(md, u, 2);
	}
	EVP_DigestUpdate(md, "Mighty Aphrodite", 16);
	EVP_DigestUpdate(md, b.ptr, b.len);
	assert_true(EVP_DigestFinal_ex(md, dig, &dl) && dl == 20);
	EVP_MD_CTX_free(md);
	wks_buf_put(&b, dig, 20);
	assert_int_equal(b.err, 0);
	*len = b.len;
	return b.ptr;
}

/* The password callback of the JCEKS read: two more passwords, the same
 * for every alias, then it gives up. */
static int two_more(void *arg, const char *alias, unsigned attempt,
		    char *buf, size_t size, size_t *len)
{
	unsigned *calls = arg;

	(void)alias;
	(*calls)++;
	if (attempt > 2 || size < 5)
		return 1;
	memcpy(buf, attempt == 1 ? "pass1" : "pass2", 5);
	*len = 5;
	return 0;
}

static void set_budget(const char *v)
{
	TU_OK(wks_set_property(BUDGET_PROP, v));
}

/* Item 2, JCEKS: junk key entries cost at most the budget, and one
 * derivation each distinct (salt, count, password). */
static void test_convert_kdf__jceks_junk(void **state)
{
	enum { N = 30 };
	wks_store *st = tu_store_fast();
	wks_convert_report *r = NULL;
	wks_java_store *js = NULL;
	tu_der *cert = NULL;
	size_t nc, dlen = 0, olen = 0, kl = 0;
	uint8_t *distinct, *one, *k = NULL;
	unsigned long runs;
	unsigned calls = 0, limited = 0;

	(void)state;
	nc = tu_pem_ders(&cert, tu_input("server-ecc-cert.pem"), "CERTIFICATE");
	distinct = junk_jceks(&dlen, N, 0, &cert[0], "storepw");
	one = junk_jceks(&olen, N, 1, &cert[0], "storepw");
	/* A budget of 10 derivations: the 11th is refused, not run, and
	 * the call fails naming the property. */
	set_budget("10000");
	runs = wks__convert_kdf_runs();
	TU_EXPECT(WKS_ERR_LIMIT, wks_convert_read(st, distinct, dlen,
						  "storepw", 7, 0, NULL, NULL,
						  &r));
	assert_non_null(strstr(wks_error_detail(), BUDGET_PROP));
	assert_int_equal(wks__convert_kdf_runs() - runs, 10);
	assert_int_equal(wks_convert_report_done(r), 0);
	assert_int_equal(wks_convert_report_skipped(r), 10);
	assert_int_equal(wks_convert_report_reason(r, 0), WKS_ERR_INTEGRITY);
	wks_convert_report_free(r);

	/* Entry by entry: one budget for the parsed keystore, whatever the
	 * calls; once spent, no more work. */
	TU_OK(wks_java_parse(&js, distinct, dlen, "storepw", 7));
	runs = wks__convert_kdf_runs();
	for (size_t i = 0; i < N; i++) {
		int err = wks_java_get_key(&k, &kl, js, i, "storepw", 7);

		assert_true(err == WKS_ERR_INTEGRITY || err == WKS_ERR_LIMIT);
		assert_true(i < 10 ? err == WKS_ERR_INTEGRITY :
				     err == WKS_ERR_LIMIT);
		if (err == WKS_ERR_LIMIT) {
			assert_non_null(strstr(wks_error_detail(),
					       BUDGET_PROP));
			limited++;
		}
	}
	assert_int_equal(limited, N - 10);
	assert_int_equal(wks__convert_kdf_runs() - runs, 10);
	/* The memo: the same key with the same password again is free. */
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_get_key(&k, &kl, js, 3,
						      "storepw", 7));
	assert_int_equal(wks__convert_kdf_runs() - runs, 10);
	wks_java_free(js);

	/* One salt for all: the store password and the callback's two
	 * passwords derive once each, for any number of entries. */
	runs = wks__convert_kdf_runs();
	TU_OK(wks_convert_read(st, one, olen, "storepw", 7, 0, two_more, &calls,
			       &r));
	assert_int_equal(wks__convert_kdf_runs() - runs, 3);
	assert_int_equal(calls, 3 * N);
	assert_int_equal(wks_convert_report_skipped(r), N);
	wks_convert_report_free(r);
	/* Without the budget, every distinct salt derives (and all N are
	 * skipped, the call succeeds). */
	set_budget(NULL);
	runs = wks__convert_kdf_runs();
	TU_OK(wks_convert_read(st, distinct, dlen, "storepw", 7, 0, NULL, NULL,
			       &r));
	assert_int_equal(wks__convert_kdf_runs() - runs, N);
	assert_int_equal(wks_convert_report_skipped(r), N);
	wks_convert_report_free(r);
	assert_int_equal(wks_store_size(st), 0);
	free(one);
	free(distinct);
	tu_ders_free(cert, nc);
	wks_store_free(st);
}

/* ---- PKCS#12 with many key bags ------------------------------------------ */

/* `der` (the writer's: a safe of certificates, a safe of one shrouded key
 * bag) again with the key safe holding n key bags: n copies of the one
 * (distinct == 0), or the key encrypted anew n times (distinct salts). */
static uint8_t *many_keys(size_t *out_len, const uint8_t *der, size_t len,
			  size_t n, int distinct,
			  const PKCS8_PRIV_KEY_INFO *p8)
{
	const unsigned char *p = der;
	PKCS12 *p12 = d2i_PKCS12(NULL, &p, (long)len), *np;
	STACK_OF(PKCS7) *safes;
	unsigned char *o = NULL;
	uint8_t *copy;
	int ol;

	assert_non_null(p12);
	safes = PKCS12_unpack_authsafes(p12);
	assert_non_null(safes);
	for (int i = 0; i < sk_PKCS7_num(safes); i++) {
		PKCS7 *p7 = sk_PKCS7_value(safes, i);
		STACK_OF(PKCS12_SAFEBAG) *bags, *nb;
		PKCS12_SAFEBAG *bag;

		if (OBJ_obj2nid(p7->type) != NID_pkcs7_data)
			continue;
		nb = sk_PKCS12_SAFEBAG_new_null();
		bags = PKCS12_unpack_p7data(p7);
		assert_non_null(bags);
		bag = sk_PKCS12_SAFEBAG_value(bags, 0);
		assert_int_equal(PKCS12_SAFEBAG_get_nid(bag),
				 NID_pkcs8ShroudedKeyBag);
		for (size_t j = 0; j < n; j++) {
			PKCS12_SAFEBAG *c = distinct ?
				PKCS12_SAFEBAG_create_pkcs8_encrypt(
					NID_aes_256_cbc, "p12pass", 7, NULL, 0,
					ITER, (PKCS8_PRIV_KEY_INFO *)p8) :
				ASN1_item_dup(ASN1_ITEM_rptr(PKCS12_SAFEBAG),
					      bag);

			assert_non_null(c);
			assert_true(sk_PKCS12_SAFEBAG_push(nb, c));
		}
		sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
		PKCS7_free(p7);
		assert_non_null(p7 = PKCS12_pack_p7data(nb));
		sk_PKCS7_set(safes, i, p7);
		sk_PKCS12_SAFEBAG_pop_free(nb, PKCS12_SAFEBAG_free);
	}
	np = PKCS12_add_safes(safes, 0);
	assert_non_null(np);
	assert_true(PKCS12_set_mac(np, "p12pass", 7, NULL, 0, ITER,
				   EVP_sha256()));
	ol = i2d_PKCS12(np, &o);
	assert_true(ol > 0);
	copy = malloc((size_t)ol);
	assert_non_null(copy);
	memcpy(copy, o, (size_t)ol);
	*out_len = (size_t)ol;
	OPENSSL_free(o);
	PKCS12_free(np);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	PKCS12_free(p12);
	return copy;
}

/* Item 2, PKCS#12: one shrouded key bag copied N times derives once; N
 * keys under distinct salts stop at the budget. */
static void test_convert_kdf__p12_many_keys(void **state)
{
	enum { N = 40 };
	wks_store *st = key_store(), *back = tu_store_fast();
	PKCS8_PRIV_KEY_INFO *p8 = store_p8(st);
	wks_convert_report *r = NULL;
	wks_p12_file *f = NULL;
	uint8_t *out = NULL, *copies, *distinct;
	size_t len = 0, clen = 0, dlen = 0;
	unsigned long runs;

	(void)state;
	TU_OK(wks_convert_write_p12(&out, &len, st, NULL, KPW, strlen(KPW),
				    "p12pass", 7, ITER, NULL, NULL, NULL));
	copies = many_keys(&clen, out, len, N, 0, p8);
	distinct = many_keys(&dlen, out, len, 8, 1, p8);

	/* A budget of 5 derivations: the MAC, the certificates and three
	 * keys; the fourth key is refused. */
	set_budget("5000");
	runs = wks__convert_kdf_runs();
	TU_EXPECT(WKS_ERR_LIMIT, wks_p12_parse(&f, distinct, dlen, "p12pass", 7,
					       0));
	assert_null(f);
	assert_non_null(strstr(wks_error_detail(), BUDGET_PROP));
	assert_int_equal(wks__convert_kdf_runs() - runs, 5);
	runs = wks__convert_kdf_runs();
	TU_EXPECT(WKS_ERR_LIMIT, wks_convert_read(back, distinct, dlen,
						  "p12pass", 7, 0, NULL, NULL,
						  NULL));
	assert_int_equal(wks__convert_kdf_runs() - runs, 5);
	assert_int_equal(wks_store_size(back), 0);

	/* N copies of one bag: three derivations, within that budget. */
	runs = wks__convert_kdf_runs();
	TU_OK(wks_p12_parse(&f, copies, clen, "p12pass", 7, 0));
	assert_int_equal(wks__convert_kdf_runs() - runs, 3);
	assert_int_equal(wks_p12_count(f), N + 1); /* N keys and ca */
	wks_p12_free(f);
	runs = wks__convert_kdf_runs();
	TU_OK(wks_convert_read(back, copies, clen, "p12pass", 7, 0, NULL, NULL,
			       &r));
	assert_int_equal(wks__convert_kdf_runs() - runs, 3);
	assert_int_equal(wks_convert_report_done(r), 2);
	assert_int_equal(wks_convert_report_skipped(r), N - 1);
	assert_int_equal(wks_convert_report_reason(r, 0), WKS_ERR_EXISTS);
	wks_convert_report_free(r);

	/* The default budget takes the distinct keys: 2 + 8 derivations. */
	set_budget(NULL);
	runs = wks__convert_kdf_runs();
	TU_OK(wks_p12_parse(&f, distinct, dlen, "p12pass", 7, 0));
	assert_int_equal(wks__convert_kdf_runs() - runs, 10);
	assert_int_equal(wks_p12_count(f), 9);
	wks_p12_free(f);
	free(copies);
	free(distinct);
	wks_free(out);
	PKCS8_PRIV_KEY_INFO_free(p8);
	wks_store_free(back);
	wks_store_free(st);
}

/* ---- PBEs as OpenSSL writes them ------------------------------------------ */

/* A PKCS#12 of k's key and certificate from PKCS12_create() with these
 * PBEs (the key's may also be set by hand: PBES2 with des-ede3-cbc and an
 * HMAC-SHA-1 PRF); "k" and one certificate read back, with `want`
 * derivations (-1: do not count). */
static void openssl_p12(wks_store *st, const PKCS8_PRIV_KEY_INFO *p8,
			int key_nid, int cert_nid, int sha1_prf, long want)
{
	EVP_PKEY *pk = EVP_PKCS82PKEY(p8);
	X509 *x = NULL;
	PKCS12 *p12;
	wks_p12_file *f = NULL;
	unsigned char *der = NULL;
	const uint8_t *k;
	unsigned long runs;
	size_t kl = 0;
	int len;

	assert_non_null(pk);
	TU_OK(wks_store_get_cert(&x, st, "k", 0));
	p12 = PKCS12_create("p12pass", "k", pk, x, NULL, key_nid, cert_nid,
			    ITER, ITER, 0);
	assert_non_null(p12);
	if (sha1_prf) {
		/* The key bag again, under PBES2(PBKDF2-HMAC-SHA1, 3DES). */
		STACK_OF(PKCS7) *safes = PKCS12_unpack_authsafes(p12);
		STACK_OF(PKCS12_SAFEBAG) *bags = NULL;
		X509_ALGOR *alg = PKCS5_pbe2_set_iv(EVP_des_ede3_cbc(), ITER,
						    NULL, 0, NULL,
						    NID_hmacWithSHA1);
		X509_SIG *sig;
		PKCS12_SAFEBAG *bag;

		assert_non_null(safes);
		assert_non_null(alg);
		for (int i = 0; i < sk_PKCS7_num(safes); i++) {
			PKCS7 *p7 = sk_PKCS7_value(safes, i);

			if (OBJ_obj2nid(p7->type) != NID_pkcs7_data)
				continue;
			bags = PKCS12_unpack_p7data(p7);
			assert_non_null(bags);
			sig = PKCS8_set0_pbe("p12pass", 7,
					     (PKCS8_PRIV_KEY_INFO *)p8, alg);
			assert_non_null(sig);
			bag = PKCS12_SAFEBAG_create0_pkcs8(sig);
			assert_non_null(bag);
			assert_true(PKCS12_add_localkeyid(bag,
				(unsigned char *)"id", 2));
			assert_true(PKCS12_add_friendlyname_utf8(bag, "k", -1));
			PKCS12_SAFEBAG_free(sk_PKCS12_SAFEBAG_value(bags, 0));
			sk_PKCS12_SAFEBAG_set(bags, 0, bag);
			PKCS7_free(p7);
			sk_PKCS7_set(safes, i, PKCS12_pack_p7data(bags));
			sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
		}
		PKCS12_free(p12);
		p12 = PKCS12_add_safes(safes, 0);
		assert_non_null(p12);
		assert_true(PKCS12_set_mac(p12, "p12pass", 7, NULL, 0, ITER,
					   EVP_sha256()));
		sk_PKCS7_pop_free(safes, PKCS7_free);
	}
	len = i2d_PKCS12(p12, &der);
	assert_true(len > 0);
	runs = wks__convert_kdf_runs();
	TU_OK(wks_p12_parse(&f, der, (size_t)len, "p12pass", 7, 0));
	if (want >= 0)
		assert_int_equal(wks__convert_kdf_runs() - runs, want);
	assert_int_equal(wks_p12_count(f), 1);
	assert_int_equal(wks_p12_entry_type(f, 0), WKS_ENTRY_PRIVATE_KEY);
	assert_int_equal(wks_p12_cert_count(f, 0), 1);
	k = wks_p12_key(f, 0, &kl);
	assert_true(same_p8(p8, k, kl));
	wks_p12_free(f);
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_p12_parse(&f, der, (size_t)len,
						   "p12pasS", 7, 0));
	OPENSSL_free(der);
	PKCS12_free(p12);
	X509_free(x);
	EVP_PKEY_free(pk);
}

static void test_convert_kdf__p12_pbe_kinds(void **state)
{
	wks_store *st = key_store();
	PKCS8_PRIV_KEY_INFO *p8 = store_p8(st);
	OSSL_PROVIDER *def, *legacy;

	(void)state;
	/* PBES2 AES (OpenSSL 3's default): MAC, certificates, key. */
	openssl_p12(st, p8, NID_aes_256_cbc, NID_aes_128_cbc, 0, 3);
	/* PKCS#12 PBE with 3DES (OpenSSL 1.x, older Java): a key and an
	 * IV derivation for each part. */
	openssl_p12(st, p8, NID_pbe_WithSHA1And3_Key_TripleDES_CBC,
		    NID_pbe_WithSHA1And3_Key_TripleDES_CBC, 0, 5);
	openssl_p12(st, p8, NID_pbe_WithSHA1And2_Key_TripleDES_CBC, -1, 0, 3);
	/* PBES2 with 3DES and the default PRF of RFC 8018 (HMAC-SHA-1). */
	openssl_p12(st, p8, NID_aes_256_cbc, NID_aes_256_cbc, 1, 3);
	/* RC2 certificates (`openssl pkcs12 -legacy`): OpenSSL decrypts them
	 * whole, with its legacy provider loaded (the caller's choice). */
	def = OSSL_PROVIDER_load(NULL, "default");
	legacy = OSSL_PROVIDER_load(NULL, "legacy");
	if (def && legacy)
		openssl_p12(st, p8, NID_pbe_WithSHA1And3_Key_TripleDES_CBC,
			    NID_pbe_WithSHA1And40BitRC2_CBC, 0, 5);
	else
		print_message("legacy provider not available: RC2 not tried\n");
	/* (The last test: the default provider goes too.) */
	OSSL_PROVIDER_unload(legacy);
	OSSL_PROVIDER_unload(def);
	PKCS8_PRIV_KEY_INFO_free(p8);
	wks_store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_convert_kdf__p12_password_bytes),
		cmocka_unit_test(test_convert_kdf__jceks_junk),
		cmocka_unit_test(test_convert_kdf__p12_many_keys),
		cmocka_unit_test(test_convert_kdf__p12_pbe_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
