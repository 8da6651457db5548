/*
 * wks-ref-bench: what key references cost (the decoder of wks.so,
 * docs/PROVIDER.md "Key references").
 *
 * 1. A store with -keys N (50) EC P-256 key entries at -iter I PBKDF2
 *    iterations (210,000 by default) and one reference file per entry;
 *    every reference read with PEM_read_bio_PrivateKey_ex() (what servers
 *    call) in a library context whose openssl.cnf says references = yes,
 *    with kek-cache = no, then with kek-cache = yes (first pass, second
 *    pass: a server reloading).  Next to it, the KDF cost measured with
 *    libwks itself: one store load (store MAC PBKDF2) and one get_key
 *    (entry PBKDF2), and what N keys should cost without kept stores,
 *    N x (load + get_key), and with them, load + N x get_key.
 * 2. -pem M (10,000) ordinary PEM keys (EC P-256, PKCS#8) read from memory
 *    with PEM_read_bio_PrivateKey_ex() in a context with only the default
 *    provider, one with wks.so and references = yes, and one with wks.so
 *    without it, and (a control) one with OpenSSL's "null" provider,
 *    which offers nothing, next to the default one; -runs R (3) rounds
 *    in turn, medians.
 *
 *   wks-ref-bench [-keys N] [-iter I] [-pem M] [-runs R] [-provider-path DIR]
 *   wks-ref-bench -read plain|on|off|null N [-provider-path DIR]
 *
 * -read only reads one PEM key N times in one of the four contexts of 2.,
 * for counting instructions free of timing noise:
 *   valgrind --tool=callgrind wks-ref-bench -read on 110   (and 10)
 * gives the instructions of 100 reads as the difference.
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#define BENCH_NAME "wks-ref-bench"
#include "benchutil.h"

#define PW "bench store password"

/* Read one PEM private key from a file (a reference) or memory. */
static int read_key(OSSL_LIB_CTX *lc, const char *file, const char *mem,
		    size_t len)
{
	BIO *b = file ? BIO_new_file(file, "r") :
			BIO_new_mem_buf(mem, (int)len);
	EVP_PKEY *k;

	if (!b)
		return 0;
	k = PEM_read_bio_PrivateKey_ex(b, NULL, NULL, NULL, lc, NULL);
	BIO_free(b);
	EVP_PKEY_free(k);
	return k != NULL;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/wks-ref-bench.XXXXXX";
	char path[512], ref[600], uri[1200], provdir[4096], exe[4096];
	const char *pdir = NULL, *iter = "210000";
	int nkeys = 50, npem = 10000, runs = 3;
	OSSL_LIB_CTX *lc;
	wks_store *st;
	wks_key *k;
	double t0, t_load, t_get, t_nocache, t_first, t_second;
	char **pem;
	size_t *pem_len;
	double *tp[4];
	ssize_t n;
	const char *read_kind = NULL;
	int read_n = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-read") && i + 2 < argc) {
			read_kind = argv[++i];
			read_n = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-keys") && i + 1 < argc)
			nkeys = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-iter") && i + 1 < argc)
			iter = argv[++i];
		else if (!strcmp(argv[i], "-pem") && i + 1 < argc)
			npem = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-provider-path") && i + 1 < argc)
			pdir = argv[++i];
		else {
			fprintf(stderr, "usage: %s [-keys N] [-iter I] [-pem M] "
				"[-runs R] [-provider-path DIR]\n", argv[0]);
			return 2;
		}
	}
	if (nkeys < 1 || npem < 1 || runs < 1)
		return 2;
	if (!pdir) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			die("readlink /proc/self/exe");
		exe[n] = 0;
		snprintf(provdir, sizeof(provdir), "%s/../provider",
			 dirname(exe));
		pdir = provdir;
	}
	if (!mkdtemp(dir))
		die("mkdtemp");
	if (read_kind) {
		EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		BIO *b = BIO_new(BIO_s_mem());
		char *p;
		long l;

		lc = !strcmp(read_kind, "plain") ?
			bench_context(dir, pdir, "r", NULL) :
		     !strcmp(read_kind, "on") ?
			bench_context(dir, pdir, "r", "references = yes\n") :
		     !strcmp(read_kind, "off") ?
			bench_context(dir, pdir, "r", "") :
			bench_context(dir, pdir, "r", "null");
		if (!key || !b || !PEM_write_bio_PrivateKey(b, key, NULL, NULL,
							    0, NULL, NULL))
			die("a PEM key");
		l = BIO_get_mem_data(b, &p);
		for (int i = 0; i < read_n; i++)
			if (!read_key(lc, NULL, p, (size_t)l))
				die("reading the PEM key");
		BIO_free(b);
		EVP_PKEY_free(key);
		OSSL_LIB_CTX_free(lc);
		rmdir(dir);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/bench.wks", dir);

	/* 1. The store, its references and the KDF cost. */
	if (wks_store_new(&st) < 0 ||
	    wks_store_set_property(st, "wolfjce.wks.iterationCount", iter) < 0)
		die("a store");
	for (int i = 0; i < nkeys; i++) {
		EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		X509 *cert;
		char alias[32];

		if (!key)
			die("EC key generation");
		cert = bench_cert(key, "bench", 1);
		snprintf(alias, sizeof(alias), "k%d", i);
		if (wks_store_set_pkey(st, alias, key, &cert, 1, PW,
				       strlen(PW)) < 0)
			die("wks_store_set_pkey");
		X509_free(cert);
		EVP_PKEY_free(key);
	}
	if (wks_store_save_file(st, path, PW, strlen(PW)) < 0)
		die("writing the store");
	wks_store_free(st);
	snprintf(ref, sizeof(ref), "%s/pw", dir);
	{
		FILE *f = fopen(ref, "w");

		if (!f)
			die("writing the password file");
		fprintf(f, "%s\n", PW);
		fclose(f);
	}
	for (int i = 0; i < nkeys; i++) {
		unsigned char b64[1700];
		FILE *f;

		snprintf(uri, sizeof(uri), "wks:%s?alias=k%d&storepass=file:%s/pw",
			 path, i, dir);
		EVP_EncodeBlock(b64, (const unsigned char *)uri,
				(int)strlen(uri));
		snprintf(ref, sizeof(ref), "%s/k%d.ref", dir, i);
		if (!(f = fopen(ref, "w")))
			die("writing a reference");
		fprintf(f, "-----BEGIN WKS KEY REFERENCE-----\n%s\n"
			"-----END WKS KEY REFERENCE-----\n", b64);
		fclose(f);
	}
	t0 = now_ms();
	if (wks_store_new(&st) < 0 ||
	    wks_store_load_file(st, path, PW, strlen(PW)) < 0)
		die("load");
	t_load = now_ms() - t0;
	t0 = now_ms();
	if (wks_store_get_key(&k, st, "k0", PW, strlen(PW)) < 0)
		die("get_key");
	t_get = now_ms() - t0;
	wks_key_free(k);
	wks_store_free(st);

	lc = bench_context(dir, pdir, "nocache",
			   "references = yes\nkek-cache = no\n");
	t0 = now_ms();
	for (int i = 0; i < nkeys; i++) {
		snprintf(ref, sizeof(ref), "%s/k%d.ref", dir, i);
		if (!read_key(lc, ref, NULL, 0))
			die("reading a reference (kek-cache = no)");
	}
	t_nocache = now_ms() - t0;
	OSSL_LIB_CTX_free(lc);
	lc = bench_context(dir, pdir, "cache",
			   "references = yes\nkek-cache = yes\n");
	t0 = now_ms();
	for (int i = 0; i < nkeys; i++) {
		snprintf(ref, sizeof(ref), "%s/k%d.ref", dir, i);
		if (!read_key(lc, ref, NULL, 0))
			die("reading a reference (kek-cache = yes)");
	}
	t_first = now_ms() - t0;
	t0 = now_ms();
	for (int i = 0; i < nkeys; i++) {
		snprintf(ref, sizeof(ref), "%s/k%d.ref", dir, i);
		if (!read_key(lc, ref, NULL, 0))
			die("reading a reference again (kek-cache = yes)");
	}
	t_second = now_ms() - t0;
	OSSL_LIB_CTX_free(lc);
	printf("wks-ref-bench: %s\n", OpenSSL_version(OPENSSL_VERSION));
	printf("%d EC P-256 keys of one store, %s iterations, read through "
	       "references\n", nkeys, iter);
	printf("  KDF: store load (MAC)          %10.2f ms\n", t_load);
	printf("  KDF: get_key (entry)           %10.2f ms\n", t_get);
	printf("  expected, no kept store        %10.2f ms  (N x (load + "
	       "get_key))\n", nkeys * (t_load + t_get));
	printf("  references, kek-cache = no     %10.2f ms  (%.2f ms a key)\n",
	       t_nocache, t_nocache / nkeys);
	printf("  expected, kept store           %10.2f ms  (load + N x "
	       "get_key)\n", t_load + nkeys * t_get);
	printf("  references, kek-cache = yes    %10.2f ms  (first pass)\n",
	       t_first);
	printf("  references, kek-cache = yes    %10.2f ms  (second pass, "
	       "%.3f ms a key)\n", t_second, t_second / nkeys);

	/* 2. Ordinary PEM keys. */
	pem = calloc((size_t)npem, sizeof(*pem));
	pem_len = calloc((size_t)npem, sizeof(*pem_len));
	for (int i = 0; i < 4; i++)
		tp[i] = calloc((size_t)runs, sizeof(double));
	if (!pem || !pem_len || !tp[0] || !tp[1] || !tp[2] || !tp[3])
		die("out of memory");
	for (int i = 0; i < npem; i++) {
		EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		BIO *b = BIO_new(BIO_s_mem());
		char *p;
		long l;

		if (!key || !b || !PEM_write_bio_PrivateKey(b, key, NULL, NULL,
							    0, NULL, NULL))
			die("an ordinary PEM key");
		l = BIO_get_mem_data(b, &p);
		pem[i] = malloc((size_t)l);
		if (!pem[i])
			die("out of memory");
		memcpy(pem[i], p, (size_t)l);
		pem_len[i] = (size_t)l;
		BIO_free(b);
		EVP_PKEY_free(key);
	}
	{
		OSSL_LIB_CTX *c[4];
		static const char *const label[4] = {
			"default provider only        ",
			"wks.so, references = yes     ",
			"wks.so, references off       ",
			"default + null (control)     " };

		c[0] = bench_context(dir, pdir, "plain", NULL);
		c[1] = bench_context(dir, pdir, "refs", "references = yes\n");
		c[2] = bench_context(dir, pdir, "norefs", "");
		c[3] = bench_context(dir, pdir, "null", "null");
		for (int r = 0; r < runs; r++) {
			for (int j = 0; j < 4; j++) {
				t0 = now_ms();
				for (int i = 0; i < npem; i++)
					if (!read_key(c[j], NULL, pem[i],
						      pem_len[i]))
						die("reading a PEM key");
				tp[j][r] = now_ms() - t0;
			}
		}
		printf("%d ordinary PEM keys (EC P-256, PKCS#8) from memory, %d "
		       "rounds (medians)\n", npem, runs);
		for (int j = 0; j < 4; j++) {
			double m = median(tp[j], runs);

			printf("  %s %10.2f ms  (%.2f us a key)\n", label[j], m,
			       m * 1000 / npem);
			OSSL_LIB_CTX_free(c[j]);
		}
	}
	for (int i = 0; i < npem; i++)
		free(pem[i]);
	free(pem);
	free(pem_len);
	for (int i = 0; i < 4; i++)
		free(tp[i]);
	for (int i = 0; i < nkeys; i++) {
		snprintf(ref, sizeof(ref), "%s/k%d.ref", dir, i);
		unlink(ref);
	}
	snprintf(ref, sizeof(ref), "%s/pw", dir);
	unlink(ref);
	unlink(path);
	rmdir(dir);
	return 0;
}
