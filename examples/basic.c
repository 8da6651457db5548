/*
 * basic.c - the smallest complete libwks program.
 *
 * Creates a keystore with an EC private key and its self-signed
 * certificate plus an AES-256 secret key, saves it to a file, loads it
 * back into a fresh store (checking the store password), and reads both
 * keys again, printing what it does at each step.
 *
 *   usage: wks-example-basic [FILE]     (default: ./example.wks)
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <wks/wks.h>

#define PASSWORD "correct horse battery staple"

/* A self-signed certificate for `key` (real code would load its own). */
static X509 *self_signed(EVP_PKEY *key)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();

	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	                           (const unsigned char *)"example", -1, -1, 0);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600L * 24 * 365);
	X509_set_subject_name(x, name);
	X509_set_issuer_name(x, name);
	X509_set_pubkey(x, key);
	X509_sign(x, key, EVP_sha256());
	X509_NAME_free(name);
	return x;
}

static int check(int err, const char *what)
{
	if (err != WKS_OK)
		fprintf(stderr, "%s: %s (%s)\n", what, wks_strerror(err),
		        wks_error_detail());
	return err != WKS_OK;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "example.wks";
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *cert = key ? self_signed(key) : NULL;
	unsigned char aes[32];
	wks_store *st = NULL, *st2 = NULL;
	wks_key *k = NULL;
	const uint8_t *bytes;
	size_t len;
	int rc = 1;

	printf("libwks %s\n", wks_version());
	if (!cert || RAND_bytes(aes, sizeof(aes)) != 1)
		goto out;

	/* 1. A new store with two entries. */
	if (check(wks_store_new(&st), "new"))
		goto out;
	if (check(wks_store_set_pkey(st, "server", key, &cert, 1, PASSWORD,
	                             strlen(PASSWORD)), "set private key"))
		goto out;
	printf("stored private key \"server\" (EC P-256 + certificate)\n");
	if (check(wks_store_set_secret_key(st, "db-key", "AES", aes, sizeof(aes),
	                                   PASSWORD, strlen(PASSWORD)),
	          "set secret key"))
		goto out;
	printf("stored secret key \"db-key\" (AES-256)\n");

	/* 2. Save atomically. */
	if (check(wks_store_save_file(st, path, PASSWORD, strlen(PASSWORD)),
	          "save"))
		goto out;
	printf("saved %zu entries to %s\n", wks_store_size(st), path);

	/* 3. Load into a fresh store, verifying the store MAC. */
	if (check(wks_store_new(&st2), "new") ||
	    check(wks_store_load_file(st2, path, PASSWORD, strlen(PASSWORD)),
	          "load"))
		goto out;
	printf("loaded %s: %zu entries, integrity verified\n", path,
	       wks_store_size(st2));

	/* 4. Get both keys back. */
	if (check(wks_store_get_key(&k, st2, "server", PASSWORD,
	                            strlen(PASSWORD)), "get server"))
		goto out;
	bytes = wks_key_data(k, &len);
	printf("got \"server\": %s private key, %zu bytes of PKCS#8\n",
	       wks_key_algorithm(k), len);
	(void)bytes;
	wks_key_free(k);
	k = NULL;
	if (check(wks_store_get_key(&k, st2, "db-key", PASSWORD,
	                            strlen(PASSWORD)), "get db-key"))
		goto out;
	bytes = wks_key_data(k, &len);
	printf("got \"db-key\": %s key of %zu bytes, %s the one stored\n",
	       wks_key_algorithm(k), len,
	       len == sizeof(aes) && memcmp(bytes, aes, len) == 0 ? "equal to"
	                                                          : "DIFFERENT from");
	if (len != sizeof(aes) || memcmp(bytes, aes, len) != 0)
		goto out;
	/* Free a key before its variable is passed again: get_key writes a
	 * new pointer into it and never frees the one it held. */
	wks_key_free(k);
	k = NULL;

	/* 5. A wrong password is refused (and can't be told from tampering). */
	if (wks_store_get_key(&k, st2, "db-key", "wrong", 5) ==
	    WKS_ERR_INTEGRITY)
		printf("wrong password refused: %s\n", wks_error_detail());
	rc = 0;
out:
	OPENSSL_cleanse(aes, sizeof(aes));
	wks_key_free(k);
	wks_store_free(st);
	wks_store_free(st2);
	X509_free(cert);
	EVP_PKEY_free(key);
	printf(rc ? "FAILED\n" : "done\n");
	return rc;
}
