/*
 * fuzz_getkey: a hostile file loaded without a password, then get_key
 * (and get_pkey) on every key entry with the seeds' key password.
 *
 * At most two key entries per input go through get_key (each costs a
 * PBKDF2 of at most FUZZ_MAX_ITER iterations).  A fuzzer cannot forge
 * entry MACs, so the target also "reseals" one key entry (picked by the
 * last input byte): the entry's ciphertext field is taken as a plaintext
 * P, encrypted and MACed under the entry's own salt, iteration count and
 * IV (PBKDF2 and AES from OpenSSL, independent of libwks), and the entry
 * rebuilt.  get_key on the resealed entry then reaches decryption and
 * PKCS#8 parsing with fuzzer-chosen plaintext.
 *
 * Oracles:
 *  - get_key on the file as is: OK, INTEGRITY, LIMIT, FORMAT or
 *    UNSUPPORTED, nothing else;
 *  - a resealed entry never fails its MAC, and when get_key succeeds it
 *    returns exactly P (and, for a secret key, the entry's algorithm);
 *    a secret key always succeeds.
 */
#include "fuzz_common.h"

#include "config/config.h"
#include "format/format.h"
#include "store/decode.h"
#include "util/buf.h"

#include <openssl/hmac.h>

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

int FUZZ_INIT(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_settings();
	return 0;
}

static int getkey_ok_class(int rc)
{
	return rc == WKS_OK || rc == WKS_ERR_INTEGRITY || rc == WKS_ERR_LIMIT ||
	       rc == WKS_ERR_FORMAT || rc == WKS_ERR_UNSUPPORTED;
}

/* get_key on (at most two) key entries of a loaded store. */
static void getkey_all(wks_store *st)
{
	char **aliases = NULL;
	size_t count = 0, i, len, tried = 0;
	wks_key *k = NULL;
	EVP_PKEY *pk = NULL;
	int rc;

	FUZZ_CHECK(wks_store_aliases(&aliases, &count, st) == WKS_OK, "aliases");
	for (i = 0; i < count && tried < 2; i++) {
		wks_entry_type t = wks_store_entry_type(st, aliases[i]);

		if (t != WKS_ENTRY_CERTIFICATE)
			tried++;
		rc = wks_store_get_key(&k, st, aliases[i], FUZZ_PW, FUZZ_PW_LEN);
		if (t == WKS_ENTRY_CERTIFICATE) {
			FUZZ_CHECK(rc == WKS_ERR_WRONG_TYPE, "get_key on a cert: %d",
			           rc);
			continue;
		}
		FUZZ_CHECK(getkey_ok_class(rc), "get_key: %d", rc);
		if (rc == WKS_OK) {
			FUZZ_CHECK(wks_key_type(k) == t, "key type");
			FUZZ_CHECK(wks_key_data(k, &len) != NULL, "key data");
			FUZZ_CHECK(wks_key_algorithm(k) != NULL, "algorithm");
			wks_key_free(k);
			k = NULL;
			if (t == WKS_ENTRY_PRIVATE_KEY) {
				rc = wks_store_get_pkey(&pk, st, aliases[i], FUZZ_PW,
				                        FUZZ_PW_LEN);
				FUZZ_CHECK(rc == WKS_OK || rc == WKS_ERR_UNSUPPORTED ||
				           rc == WKS_ERR_FORMAT, "get_pkey: %d", rc);
				EVP_PKEY_free(pk);
				pk = NULL;
			}
		}
	}
	wks_aliases_free(aliases);
}

/* AES-256-CBC with PKCS#5 padding, by OpenSSL. */
static size_t getkey_encrypt(uint8_t *out, const uint8_t key[32],
                             const uint8_t iv[16], const uint8_t *in,
                             size_t len)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int a = 0, b = 0;

	FUZZ_CHECK(c && EVP_EncryptInit_ex(c, EVP_aes_256_cbc(), NULL, key, iv)
	           == 1 && EVP_EncryptUpdate(c, out, &a, in, (int)len) == 1 &&
	           EVP_EncryptFinal_ex(c, out + a, &b) == 1, "AES");
	EVP_CIPHER_CTX_free(c);
	return (size_t)a + (size_t)b;
}

static void getkey_reseal(const wks_entry *e, const wks_settings *cfg)
{
	const uint8_t *p = e->body + e->enc.off, *dk;
	size_t plen = e->enc.len, clen, i, len;
	const uint8_t **certs = NULL;
	size_t *cert_lens = NULL;
	uint8_t *ct = NULL, *file_mac, mac[64], salt[16] = { 0 };
	wks_buf body = WKS_BUF_INIT, file = WKS_BUF_INIT;
	wks_entry *ne = NULL;
	wks_store *st = NULL;
	wks_key *k = NULL;
	const uint8_t *kd;
	unsigned mac_len = 0;
	int rc;

	dk = fuzz_kdf(e->salt, (uint32_t)e->iterations, 96);
	FUZZ_CHECK((ct = malloc(plen + 16)) != NULL, "malloc");
	clen = getkey_encrypt(ct, dk, e->iv, p, plen);
	if (e->type == WKS_ENTRY_PRIVATE_KEY) {
		certs = calloc(e->cert_count + 1, sizeof(*certs));
		cert_lens = calloc(e->cert_count + 1, sizeof(*cert_lens));
		FUZZ_CHECK(certs && cert_lens, "calloc");
		for (i = 0; i < e->cert_count; i++)
			certs[i] = wks__entry_cert(e, i, &cert_lens[i]);
		rc = wks__body_private(&body, e->created_ms, e->salt, e->iterations,
		                       e->iv, ct, clen, certs, cert_lens,
		                       e->cert_count);
	} else {
		rc = wks__body_secret(&body, e->created_ms, e->algorithm, e->salt,
		                      e->iterations, e->iv, ct, clen);
	}
	FUZZ_CHECK(rc == WKS_OK, "body builder: %d", rc);
	FUZZ_CHECK(HMAC(EVP_sha512(), dk + 32, 64, body.ptr, body.len, mac,
	                &mac_len) != NULL, "HMAC");
	wks_buf_put_i32be(&body, 64);
	wks_buf_put(&body, mac, 64);
	FUZZ_CHECK(body.err == 0, "buffer");
	rc = wks__entry_from_body(&ne, (int)e->type, e->alias, e->alias_len,
	                          body.ptr, body.len, cfg, "resealed");
	if (rc == WKS_ERR_LIMIT) /* 16 bytes more than maxEntrySize allows */
		goto done;
	FUZZ_CHECK(rc == WKS_OK, "resealed entry does not parse: %d", rc);
	/* A one-entry file with a dummy trailer, loaded without password. */
	rc = wks__encode(&file, &ne, 1, salt, FUZZ_ITER);
	FUZZ_CHECK(rc == WKS_OK, "encode: %d", rc);
	wks_buf_put_i32be(&file, 64);
	file_mac = mac;
	memset(file_mac, 0, 64);
	wks_buf_put(&file, file_mac, 64);
	FUZZ_CHECK(wks_store_new(&st) == WKS_OK, "store_new");
	rc = wks_store_load_buffer(st, file.ptr, file.len, NULL, 0);
	FUZZ_CHECK(rc == WKS_OK, "resealed file does not load: %d", rc);
	rc = wks_store_get_key(&k, st, e->alias, FUZZ_PW, FUZZ_PW_LEN);
	FUZZ_CHECK(rc != WKS_ERR_INTEGRITY, "resealed entry fails its MAC");
	if (e->type == WKS_ENTRY_SECRET_KEY)
		FUZZ_CHECK(rc == WKS_OK, "resealed secret key: %d", rc);
	else
		FUZZ_CHECK(rc == WKS_OK || rc == WKS_ERR_FORMAT ||
		           rc == WKS_ERR_UNSUPPORTED, "resealed private key: %d",
		           rc);
	if (rc == WKS_OK) {
		kd = wks_key_data(k, &len);
		FUZZ_CHECK(len == plen && (plen == 0 || memcmp(kd, p, plen) == 0),
		           "get_key returned other bytes than were sealed");
		if (e->type == WKS_ENTRY_SECRET_KEY)
			FUZZ_CHECK(strcmp(wks_key_algorithm(k), e->algorithm) == 0,
			           "algorithm");
		wks_key_free(k);
	}
done:
	wks_store_free(st);
	wks__entry_unref(ne);
	wks_buf_dispose(&file);
	wks_buf_dispose(&body);
	free(certs);
	free(cert_lens);
	free(ct);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	wks_store *st = NULL;
	wks_entry **v = NULL;
	wks_settings cfg;
	size_t n = 0, i, keys = 0, pick;
	int rc;

	fuzz_settings();
	FUZZ_CHECK(wks_store_new(&st) == WKS_OK, "store_new");
	rc = wks_store_load_buffer(st, data, size, NULL, 0);
	if (rc != WKS_OK) {
		FUZZ_CHECK(fuzz_clean_reject(rc), "load: %d", rc);
		wks_store_free(st);
		return 0;
	}
	getkey_all(st);
	wks_store_free(st);

	wks__settings_get(&cfg, NULL);
	rc = wks__decode(&v, &n, NULL, NULL, data, size, &cfg);
	FUZZ_CHECK(rc == WKS_OK, "decode after load: %d", rc);
	for (i = 0; i < n; i++)
		keys += v[i]->type != WKS_ENTRY_CERTIFICATE;
	pick = keys ? data[size - 1] % keys : 0;
	for (i = 0; i < n; i++)
		if (v[i]->type != WKS_ENTRY_CERTIFICATE && pick-- == 0) {
			getkey_reseal(v[i], &cfg);
			break;
		}
	wks__entries_free(v, n);
	return 0;
}
