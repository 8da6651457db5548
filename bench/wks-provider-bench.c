/*
 * wks-provider-bench: what opening a key through a wks: URI costs (the
 * OpenSSL provider, provider/, docs/PROVIDER.md), next to the same work
 * done with libwks directly, in one run.
 *
 * A store with one RSA-2048 key entry is written at the configured
 * iteration count (210,000 by default), then, -iterations times each:
 *
 *   load            wks_store_load_file() with the password (store MAC)
 *   get_key         wks_store_get_key() on a loaded store (entry PBKDF2)
 *   libwks total    new + load + get_key + wks_store_get_pkey's decoding
 *   wks: URI        OSSL_STORE_open_ex("wks:FILE?alias=k&storepass=...")
 *                   + expect PKEY + load until the EVP_PKEY: what
 *                   `openssl pkey -in wks:...` or a server does
 *
 * and prints the medians.  The wks: line should be the libwks total plus
 * a little (the URI, the PKCS#8 decoding by OpenSSL's decoders).  Then
 * the same URI in a library context whose openssl.cnf says kek-cache = yes:
 * the first open, and the median of -iterations reopens (kept store, no
 * PBKDF2 at all).
 *
 *   wks-provider-bench [-iterations N] [-provider-path DIR]
 *
 * DIR defaults to ../provider next to this program (the build tree).
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/store.h>
#include <openssl/x509.h>

#define BENCH_NAME "wks-provider-bench"
#include "benchutil.h"

#define PW "bench store password"

/* One open of the key through the provider; returns 1 if a key came. */
static int load_via_uri(OSSL_LIB_CTX *lc, const char *uri)
{
	OSSL_STORE_CTX *ctx = OSSL_STORE_open_ex(uri, lc, NULL, NULL, NULL,
						 NULL, NULL, NULL);
	int got = 0;

	if (!ctx)
		return 0;
	OSSL_STORE_expect(ctx, OSSL_STORE_INFO_PKEY);
	while (!got && !OSSL_STORE_eof(ctx)) {
		OSSL_STORE_INFO *info = OSSL_STORE_load(ctx);

		if (info) {
			got = OSSL_STORE_INFO_get0_PKEY(info) != NULL;
			OSSL_STORE_INFO_free(info);
		}
	}
	OSSL_STORE_close(ctx);
	return got;
}

int main(int argc, char **argv)
{
	char dir_tmpl[] = "/tmp/wks-provider-bench.XXXXXX";
	char path[512], uri[1024], provdir[4096], exe[4096], cnf[600];
	OSSL_LIB_CTX *lc;
	double t0, first;
	FILE *f;
	double *t_load, *t_get, *t_lib, *t_uri;
	const char *pdir = NULL;
	EVP_PKEY *key, *pk;
	OSSL_PROVIDER *pw, *pd;
	wks_store *st;
	wks_key *k;
	X509 *cert;
	int iters = 5;
	ssize_t n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-iterations") && i + 1 < argc) {
			iters = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-provider-path") && i + 1 < argc) {
			pdir = argv[++i];
		} else {
			fprintf(stderr, "usage: %s [-iterations N] "
				"[-provider-path DIR]\n", argv[0]);
			return 2;
		}
	}
	if (iters < 1)
		iters = 1;
	if (!pdir) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			die("readlink /proc/self/exe");
		exe[n] = 0;
		snprintf(provdir, sizeof(provdir), "%s/../provider",
			 dirname(exe));
		pdir = provdir;
	}
	if (!mkdtemp(dir_tmpl))
		die("mkdtemp");
	snprintf(path, sizeof(path), "%s/bench.wks", dir_tmpl);
	snprintf(uri, sizeof(uri), "wks:%s?alias=k&storepass=pass:bench%%20"
		 "store%%20password", path);

	/* The store, at the configured iteration count. */
	key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	if (!key)
		die("RSA key generation");
	cert = bench_cert(key, "bench", 1);
	if (wks_store_new(&st) < 0 ||
	    wks_store_set_pkey(st, "k", key, &cert, 1, PW, strlen(PW)) < 0 ||
	    wks_store_save_file(st, path, PW, strlen(PW)) < 0)
		die("writing the store");
	wks_store_free(st);

	if (!OSSL_PROVIDER_set_default_search_path(NULL, pdir) ||
	    !(pw = OSSL_PROVIDER_load(NULL, "wks")) ||
	    !(pd = OSSL_PROVIDER_load(NULL, "default")))
		die("loading the wks and default providers");

	t_load = calloc((size_t)iters, sizeof(double));
	t_get = calloc((size_t)iters, sizeof(double));
	t_lib = calloc((size_t)iters, sizeof(double));
	t_uri = calloc((size_t)iters, sizeof(double));
	if (!t_load || !t_get || !t_lib || !t_uri)
		die("out of memory");
	/* One warm-up of each path (first fetches, thread pool start). */
	if (!load_via_uri(NULL, uri))
		die("loading the key through wks:");
	for (int i = 0; i < iters; i++) {
		double t1, t2, t3;

		t0 = now_ms();
		if (wks_store_new(&st) < 0 ||
		    wks_store_load_file(st, path, PW, strlen(PW)) < 0)
			die("load");
		t1 = now_ms();
		if (wks_store_get_key(&k, st, "k", PW, strlen(PW)) < 0)
			die("get_key");
		t2 = now_ms();
		wks_key_free(k);
		if (wks_store_get_pkey(&pk, st, "k", PW, strlen(PW)) < 0)
			die("get_pkey");
		t3 = now_ms();
		EVP_PKEY_free(pk);
		wks_store_free(st);
		t_load[i] = t1 - t0;
		t_get[i] = t2 - t1;
		/* new + load + one get_pkey (get_key + decoding) */
		t_lib[i] = (t1 - t0) + (t3 - t2);

		t0 = now_ms();
		if (!load_via_uri(NULL, uri))
			die("loading the key through wks:");
		t_uri[i] = now_ms() - t0;
	}
	printf("wks-provider-bench: RSA-2048 key entry, %s, %d runs "
	       "(medians)\n", OpenSSL_version(OPENSSL_VERSION), iters);
	printf("  load (store MAC)            %9.2f ms\n", median(t_load, iters));
	printf("  get_key (entry PBKDF2)      %9.2f ms\n", median(t_get, iters));
	printf("  libwks: load + get_pkey     %9.2f ms\n", median(t_lib, iters));
	printf("  wks: URI through OSSL_STORE %9.2f ms\n", median(t_uri, iters));


	/* kek-cache = yes: kept stores. */
	snprintf(cnf, sizeof(cnf), "%s/wks.cnf", dir_tmpl);
	if (!(f = fopen(cnf, "w")))
		die("writing wks.cnf");
	fprintf(f, "openssl_conf = openssl_init\n[openssl_init]\n"
		"providers = provider_sect\n[provider_sect]\n"
		"default = default_sect\nwks = wks_sect\n"
		"[default_sect]\nactivate = 1\n[wks_sect]\n"
		"module = %s/wks.so\nkek-cache = yes\nactivate = 1\n", pdir);
	fclose(f);
	if (!(lc = OSSL_LIB_CTX_new()) || !OSSL_LIB_CTX_load_config(lc, cnf) ||
	    !OSSL_PROVIDER_available(lc, "wks"))
		die("a library context with kek-cache = yes");
	t0 = now_ms();
	if (!load_via_uri(lc, uri))
		die("loading the key through wks: (kek-cache = yes)");
	first = now_ms() - t0;
	for (int i = 0; i < iters; i++) {
		t0 = now_ms();
		if (!load_via_uri(lc, uri))
			die("reopening the key through wks:");
		t_uri[i] = now_ms() - t0;
	}
	printf("  kek-cache = yes: first open %9.2f ms\n", first);
	printf("  kek-cache = yes: reopen     %9.3f ms\n", median(t_uri, iters));
	OSSL_LIB_CTX_free(lc);
	unlink(cnf);

	OSSL_PROVIDER_unload(pw);
	OSSL_PROVIDER_unload(pd);
	unlink(path);
	rmdir(dir_tmpl);
	free(t_load);
	free(t_get);
	free(t_lib);
	free(t_uri);
	X509_free(cert);
	EVP_PKEY_free(key);
	return 0;
}
