/*
 * fuzz_import: the input paths of `wks import-*` (cli/shared/pki.c, cli/shared/pkcs12.c
 * over the library's wks_p12_parse()):
 * the functions the CLI calls on a user's key, certificate and PKCS#12
 * files, then what the import does with their result (the library's
 * wks_store_set_private_key() / wks_store_set_cert_der() checks).
 *
 * The first input byte picks the path, the rest is the file:
 *   0  PKCS#12, empty password       (cli_p12_read)
 *   1  PKCS#12, password FUZZ_PW     (cli_p12_read)
 *   2  a private key file, PEM/DER, plain or encrypted (passphrase
 *      FUZZ_PW), with any certificates in it   (cli_load_key)
 *   3  a certificate bundle, PEM or DER        (cli_load_certs,
 *      cli_order_chain)
 * cli_load_key()/cli_load_certs() take a path: the bytes go to a memfd,
 * named /proc/self/fd/N.
 *
 * The CLI prints its messages on stderr: they are sent to /dev/null
 * (set FUZZ_VERBOSE=1 to see them); sanitizer reports use fd 2 directly.
 */
#define _GNU_SOURCE 1
#include "fuzz_common.h"

#include <sys/mman.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include "cli.h"

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

static int import_fd = -1;
static char import_path[64];
/* cli_p12_read() loads the legacy provider at each call and never unloads
 * it (once per CLI process: harmless there).  Loaded once here and kept
 * reachable, so LeakSanitizer does not report it at every input. */
static OSSL_PROVIDER *import_legacy, *import_default;

int FUZZ_INIT(int *argc, char ***argv)
{
	FILE *null;

	(void)argc;
	(void)argv;
	fuzz_settings();
	/* PKCS#12 and encrypted PKCS#8 inputs carry their own PBKDF2 and MAC
	 * counts (openssl's default is 2048): bounded by the CLI at
	 * libwks.wks.maxIterationCount, here 10000 instead of FUZZ_MAX_ITER. */
	wks_set_property("libwks.wks.maxIterationCount", "10000");
	import_default = OSSL_PROVIDER_load(NULL, "default");
	import_legacy = OSSL_PROVIDER_try_load(NULL, "legacy", 1);
	if (!getenv("FUZZ_VERBOSE") && (null = fopen("/dev/null", "w")) != NULL)
		stderr = null;
	return 0;
}

/* Put `data` in the memfd; returns its path. */
static const char *import_file(const uint8_t *data, size_t size)
{
	if (import_fd < 0) {
		import_fd = memfd_create("fuzz_import", MFD_CLOEXEC);
		FUZZ_CHECK(import_fd >= 0, "memfd_create");
		snprintf(import_path, sizeof(import_path), "/proc/self/fd/%d",
		         import_fd);
	}
	FUZZ_CHECK(ftruncate(import_fd, 0) == 0, "ftruncate");
	FUZZ_CHECK(pwrite(import_fd, data, size, 0) == (ssize_t)size, "pwrite");
	return import_path;
}

/* What `wks import-*` does next: put the key and chain in a store. */
static void import_store_key(const uint8_t *p8, size_t p8_len,
                             STACK_OF(X509) *chain)
{
	int n = sk_X509_num(chain), i, rc;
	uint8_t **der = calloc((size_t)n + 1, sizeof(*der));
	size_t *len = calloc((size_t)n + 1, sizeof(*len));
	wks_store *st = NULL;

	FUZZ_CHECK(der && len, "calloc");
	for (i = 0; i < n; i++) {
		int l = i2d_X509(sk_X509_value(chain, i), &der[i]);

		FUZZ_CHECK(l > 0, "i2d_X509");
		len[i] = (size_t)l;
	}
	FUZZ_CHECK(wks_store_new(&st) == WKS_OK, "store_new");
	rc = wks_store_set_private_key(st, "k", p8, p8_len,
	                               (const uint8_t *const *)der, len,
	                               (size_t)n, FUZZ_PW, FUZZ_PW_LEN);
	FUZZ_CHECK(rc == WKS_OK || rc == WKS_ERR_INVALID ||
	           rc == WKS_ERR_FORMAT || rc == WKS_ERR_UNSUPPORTED ||
	           rc == WKS_ERR_LIMIT, "set_private_key: %d", rc);
	if (rc == WKS_OK) {
		wks_key *k = NULL;
		const uint8_t *kd;
		size_t kl;

		rc = wks_store_get_key(&k, st, "k", FUZZ_PW, FUZZ_PW_LEN);
		FUZZ_CHECK(rc == WKS_OK, "get_key of a stored key: %d", rc);
		kd = wks_key_data(k, &kl);
		FUZZ_CHECK(kl == p8_len && memcmp(kd, p8, kl) == 0,
		           "stored key differs");
		wks_key_free(k);
	}
	for (i = 0; i < n; i++) {
		rc = wks_store_set_cert_der(st, "c", der[i], len[i]);
		FUZZ_CHECK(rc == WKS_OK, "set_cert_der of a parsed cert: %d", rc);
		OPENSSL_free(der[i]);
	}
	wks_store_free(st);
	free(der);
	free(len);
}

/* A secret key from a PKCS#12 secret bag: what `wks import-p12` does. */
static void import_store_secret(const cli_p12_entry *e)
{
	wks_store *st = NULL;
	wks_key *key = NULL;
	const uint8_t *d;
	size_t n = 0;
	int rc;

	FUZZ_CHECK(e->pkcs8 && e->pkcs8_len && e->algorithm && *e->algorithm,
	           "secret key without bytes or algorithm");
	FUZZ_CHECK(wks_store_new(&st) == WKS_OK, "wks_store_new");
	rc = wks_store_set_secret_key(st, "s", e->algorithm, e->pkcs8,
	                              e->pkcs8_len, FUZZ_PW, FUZZ_PW_LEN);
	FUZZ_CHECK(rc == WKS_OK || rc == WKS_ERR_LIMIT,
	           "set_secret_key: %d", rc);
	if (rc == WKS_OK) {
		rc = wks_store_get_key(&key, st, "s", FUZZ_PW, FUZZ_PW_LEN);
		FUZZ_CHECK(rc == WKS_OK, "get_key of a secret key: %d", rc);
		d = wks_key_data(key, &n);
		FUZZ_CHECK(n == e->pkcs8_len && !memcmp(d, e->pkcs8, n),
		           "secret key changed");
		FUZZ_CHECK(!strcmp(wks_key_algorithm(key), e->algorithm),
		           "secret key algorithm changed");
		wks_key_free(key);
	}
	wks_store_free(st);
}

static void import_p12(const uint8_t *data, size_t size, const char *pw)
{
	cli_p12_entry *e = NULL;
	size_t count = 0, i;
	cli_pw p;
	char buf[32];

	snprintf(buf, sizeof(buf), "%s", pw);
	p.p = buf;
	p.len = strlen(buf);
	/* MAC-less files too (--no-mac-ok): they reach the decryption. */
	if (cli_p12_read(&e, &count, "in.p12", data, size, &p, 1) != 0)
		return;
	for (i = 0; i < count; i++) {
		if (e[i].type == WKS_ENTRY_SECRET_KEY) {
			/* Java's secret bags: a key and its JCA name, stored
			 * and read back byte for byte. */
			import_store_secret(&e[i]);
			continue;
		}
		FUZZ_CHECK(e[i].chain != NULL, "entry without chain");
		if (e[i].type == WKS_ENTRY_PRIVATE_KEY) {
			FUZZ_CHECK(e[i].pkcs8 && e[i].pkcs8_len, "no key bytes");
			import_store_key(e[i].pkcs8, e[i].pkcs8_len, e[i].chain);
		}
	}
	cli_p12_free(e, count);
}

static void import_key(const uint8_t *data, size_t size)
{
	STACK_OF(X509) *certs = sk_X509_new_null(), *chain = NULL;
	cli_pwsrc src;
	EVP_PKEY *pk = NULL;
	uint8_t *p8 = NULL;
	size_t p8_len = 0;
	char pw[] = FUZZ_PW;

	FUZZ_CHECK(certs, "sk_X509_new_null");
	memset(&src, 0, sizeof(src));
	src.kind = CLI_PWSRC_PASS;
	src.option = "--inpass";
	src.value = pw;
	if (cli_load_key(&pk, &p8, &p8_len, certs, import_file(data, size),
	                 &src) == 0) {
		FUZZ_CHECK(pk && p8 && p8_len, "key loaded without bytes");
		if (sk_X509_num(certs) > 0 &&
		    cli_order_chain(&chain, NULL, pk, certs, "key", 0) == 0) {
			import_store_key(p8, p8_len, chain);
			sk_X509_pop_free(chain, X509_free);
		}
		OPENSSL_cleanse(p8, p8_len);
		free(p8);
	}
	EVP_PKEY_free(pk);
	sk_X509_pop_free(certs, X509_free);
}

static void import_certs(const uint8_t *data, size_t size)
{
	STACK_OF(X509) *certs = sk_X509_new_null(), *chain = NULL;

	FUZZ_CHECK(certs, "sk_X509_new_null");
	if (cli_load_certs(certs, import_file(data, size)) == 0 &&
	    sk_X509_num(certs) > 0) {
		if (cli_order_chain(&chain, sk_X509_value(certs, 0), NULL, certs,
		                    "certs", 0) == 0)
			sk_X509_pop_free(chain, X509_free);
	}
	sk_X509_pop_free(certs, X509_free);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		import_p12(data + 1, size - 1, "");
		break;
	case 1:
		import_p12(data + 1, size - 1, FUZZ_PW);
		break;
	case 2:
		import_key(data + 1, size - 1);
		break;
	default:
		import_certs(data + 1, size - 1);
		break;
	}
	ERR_clear_error();
	return 0;
}
