/*
 * The key derivations of the conversions (include/wks/convert.h), without
 * keytool: files are made here with OpenSSL's PKCS12 API.
 *
 *   - every PKCS#12 password is the byte string given (issue 22, item 1):
 *     a password buffer without a terminating NUL is read no further than
 *     its length (the ASan build catches a read past it), and a password
 *     holding a NUL byte protects every part of the file (MAC, key bags,
 *     certificate safe) and reads back, with wks_p12_parse(),
 *     wks_convert_read() and OpenSSL's PKCS12 calls given the length.
 *
 * Every PBE here runs 1000 iterations: well under a second in all.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_convert_kdf__p12_password_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
