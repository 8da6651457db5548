/*
 * libwks and the calling thread's OpenSSL error queue: every call leaves it
 * exactly as it found it.  Applications that use OpenSSL themselves read
 * that queue (a TLS server calls ERR_get_error() after SSL_read() fails),
 * so a stale entry queued inside libwks would be blamed on their own call;
 * and an entry the application queued before calling libwks must survive.
 *
 * Each case runs the same libwks calls twice: on an empty queue (it must
 * still be empty after) and on a queue holding one sentinel entry (it
 * must hold exactly that entry after).  The calls are chosen so that
 * OpenSSL does queue errors inside them: unparsable certificates and
 * PKCS#8 keys, a key that does not match its certificate, bad CBC padding,
 * and certificates whose key algorithm OpenSSL 3.0 cannot decode (ML-DSA:
 * d2i_X509 succeeds and queues decoder errors).
 */
#include "testutil.h"

#include "crypto/crypto.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PW "wolfsslpassword"
#define SENTINEL_REASON 4242

typedef void (*calls_fn)(void);

/* Inputs read once, before any queue check (reading PEM files in the
 * test helpers clears the queue). */
static tu_der *ecc_cert, *ecc_key, *rsa_key;
static size_t n_ecc_cert, n_ecc_key, n_rsa_key;

static int read_inputs(void **state)
{
	(void)state;
	n_ecc_cert = tu_pem_ders(&ecc_cert, tu_input("server-ecc-cert.pem"),
	                         "CERTIFICATE");
	n_ecc_key = tu_pem_ders(&ecc_key, tu_input("ecc-key.pem"), NULL);
	n_rsa_key = tu_pem_ders(&rsa_key, tu_input("server-key.pem"), NULL);
	return n_ecc_cert && n_ecc_key && n_rsa_key ? 0 : -1;
}

static int free_inputs(void **state)
{
	(void)state;
	tu_ders_free(ecc_cert, n_ecc_cert);
	tu_ders_free(ecc_key, n_ecc_key);
	tu_ders_free(rsa_key, n_rsa_key);
	return 0;
}

/* set_private_key of `key` with the ECC server certificate. */
static int set_key(wks_store *st, const tu_der *key)
{
	const uint8_t *ders[1] = { ecc_cert[0].der };
	size_t lens[1] = { ecc_cert[0].len };

	return wks_store_set_private_key(st, "k", key->der, key->len, ders, lens,
	                                 1, PW, strlen(PW));
}

static void push_sentinel(void)
{
	ERR_raise_data(ERR_LIB_USER, SENTINEL_REASON, "the application's own");
}

/* Run `calls` on an empty queue, then after the sentinel. */
static void check_queue(calls_fn calls)
{
	unsigned long e;

	ERR_clear_error();
	calls();
	e = ERR_peek_error();
	if (e != 0)
		fail_msg("libwks left an OpenSSL error on an empty queue: %s",
		         ERR_error_string(e, NULL));

	push_sentinel();
	calls();
	e = ERR_get_error();
	assert_int_equal(ERR_GET_LIB(e), ERR_LIB_USER);
	assert_int_equal(ERR_GET_REASON(e), SENTINEL_REASON);
	e = ERR_get_error();
	if (e != 0)
		fail_msg("libwks queued an OpenSSL error after the caller's: %s",
		         ERR_error_string(e, NULL));
}

static void calls_bad_cert(void)
{
	/* A SEQUENCE that claims more bytes than there are, and a valid
	 * header over garbage. */
	static const uint8_t trunc[] = { 0x30, 0x82, 0x7f, 0xff, 0x30, 0x00 };
	static const uint8_t junk[] = { 0x30, 0x06, 0x02, 0x01, 0x01, 0x04,
	                                0x01, 0x00 };
	wks_store *st = tu_store_fast();

	TU_EXPECT(WKS_ERR_FORMAT,
	          wks_store_set_cert_der(st, "c", trunc, sizeof(trunc)));
	TU_EXPECT(WKS_ERR_FORMAT,
	          wks_store_set_cert_der(st, "c", junk, sizeof(junk)));
	wks_store_free(st);
}

static void calls_bad_pkcs8(void)
{
	static const uint8_t junk[] = { 0x30, 0x03, 0x02, 0x01, 0x00 };
	tu_der bad = { (uint8_t *)junk, sizeof(junk) };
	wks_store *st = tu_store_fast();

	TU_EXPECT(WKS_ERR_FORMAT, set_key(st, &bad));
	wks_store_free(st);
}

static void calls_key_mismatch(void)
{
	wks_store *st = tu_store_fast();

	/* The RSA server key with the ECC server certificate. */
	TU_EXPECT(WKS_ERR_INVALID, set_key(st, &rsa_key[0]));
	wks_store_free(st);
}

/* A secret key: set, read with a wrong password (the entry MAC fails
 * before any decryption), read back, and asked for as an EVP_PKEY. */
static void calls_secret_and_wrong_password(void)
{
	static const uint8_t key[32] = { 1, 2, 3 };
	wks_store *st = tu_store_fast();
	wks_key *k = NULL;
	EVP_PKEY *pk = NULL;

	TU_OK(wks_store_set_secret_key(st, "s", "AES", key, sizeof(key), PW,
	                               strlen(PW)));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_key(&k, st, "s", "x", 1));
	TU_OK(wks_store_get_key(&k, st, "s", PW, strlen(PW)));
	wks_key_free(k);
	/* A secret key is not an EVP_PKEY. */
	TU_EXPECT(WKS_ERR_WRONG_TYPE,
	          wks_store_get_pkey(&pk, st, "s", PW, strlen(PW)));
	wks_store_free(st);
}

/* Bad padding: reached only when an entry MAC verified (a password
 * holder's own damaged entry), so through the crypto layer directly: a
 * ciphertext made under one key, decrypted under another. */
static void calls_bad_padding(void)
{
	uint8_t k1[WKS_AES_KEY_LEN] = { 1 }, k2[WKS_AES_KEY_LEN] = { 2 };
	uint8_t iv[WKS_IV_LEN] = { 0 }, pt[40] = { 0 };
	wks_buf ct = WKS_BUF_INIT, back = WKS_BUF_INIT;

	TU_OK(wks__aes256cbc_encrypt(&ct, k1, iv, pt, sizeof(pt)));
	assert_int_equal(ct.len, 48);
	TU_EXPECT(WKS_ERR_INTEGRITY,
	          wks__aes256cbc_decrypt(&back, k2, iv, ct.ptr, ct.len));
	TU_OK(wks__aes256cbc_decrypt(&back, k1, iv, ct.ptr, ct.len));
	assert_memory_equal(back.ptr, pt, sizeof(pt));
	wks_buf_dispose(&ct);
	wks_buf_dispose(&back);
}

/* Every entry of a vector store: certificates (DER and X509), keys (raw
 * and EVP_PKEY), whatever the outcome. */
static void read_everything(const char *rel, const char *pw)
{
	size_t len = 0, n = 0, i, j;
	uint8_t *data = tu_read_file(tu_shared(rel), &len);
	wks_store *st = NULL;
	char **aliases = NULL;

	TU_OK(wks_store_new(&st));
	TU_OK(wks_store_load_buffer(st, data, len, pw, strlen(pw)));
	TU_OK(wks_store_aliases(&aliases, &n, st));
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		wks_key *k = NULL;
		EVP_PKEY *pk = NULL;

		for (j = 0; j < 4; j++) {
			X509 *x = NULL;

			(void)wks_store_get_cert(&x, st, aliases[i], j);
			X509_free(x);
		}
		if (wks_store_get_key(&k, st, aliases[i], pw, strlen(pw)) ==
		    WKS_OK)
			wks_key_free(k);
		if (wks_store_get_pkey(&pk, st, aliases[i], pw, strlen(pw)) ==
		    WKS_OK)
			EVP_PKEY_free(pk);
	}
	wks_aliases_free(aliases);
	wks_store_free(st);
	free(data);
}

/* Each vector costs seconds of PBKDF2 (210000 iterations per key) and
 * minutes under valgrind, so CI's valgrind stage (WKS_UNDER_VALGRIND)
 * reads one ML-DSA vector and no RSA one here: memcheck is about memory,
 * not the queue, and it sees those calls on RSA vectors in test_vectors;
 * the plain and ASan stages read all three. */
static int under_valgrind(void)
{
	return getenv("WKS_UNDER_VALGRIND") != NULL;
}

static void calls_mldsa_vectors(void)
{
	read_everything("vectors/wolfjce/server-mldsa65.wks", PW);
	if (!under_valgrind())
		read_everything("vectors/wolfjce/client-mldsa44.wks", PW);
}

static void calls_rsa_vector(void)
{
	read_everything("vectors/wolfjce/server.wks", PW);
}

static void calls_save(void)
{
	wks_store *st = tu_store_fast();
	uint8_t *out = NULL;
	size_t out_len = 0;

	TU_OK(set_key(st, &ecc_key[0]));
	TU_OK(wks_store_save_buffer(st, &out, &out_len, PW, strlen(PW)));
	wks_free(out);
	wks_store_free(st);
}

static void test_bad_cert(void **state)
{
	(void)state;
	check_queue(calls_bad_cert);
}

static void test_bad_pkcs8(void **state)
{
	(void)state;
	check_queue(calls_bad_pkcs8);
}

static void test_key_mismatch(void **state)
{
	(void)state;
	check_queue(calls_key_mismatch);
}

static void test_secret_and_wrong_password(void **state)
{
	(void)state;
	check_queue(calls_secret_and_wrong_password);
}

static void test_bad_padding(void **state)
{
	(void)state;
	check_queue(calls_bad_padding);
}

static void test_mldsa_vectors(void **state)
{
	(void)state;
	check_queue(calls_mldsa_vectors);
}

static void test_rsa_vector(void **state)
{
	(void)state;
	if (under_valgrind())
		skip();
	check_queue(calls_rsa_vector);
}

static void test_save(void **state)
{
	(void)state;
	check_queue(calls_save);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_cert),
		cmocka_unit_test(test_bad_pkcs8),
		cmocka_unit_test(test_key_mismatch),
		cmocka_unit_test(test_secret_and_wrong_password),
		cmocka_unit_test(test_bad_padding),
		cmocka_unit_test(test_mldsa_vectors),
		cmocka_unit_test(test_rsa_vector),
		cmocka_unit_test(test_save),
	};

	return cmocka_run_group_tests(tests, read_inputs, free_inputs);
}
