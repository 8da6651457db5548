/*
 * wks-search-bench: what a certificate search through wks: costs in a big
 * truststore (docs/PROVIDER.md, "What a search costs").
 *
 * Builds once a store of -certs N (5,000) trusted certificates (distinct
 * subjects, one EC P-256 key signing them all; the store MAC at -iter I,
 * 10,000 PBKDF2 iterations by default, as the certificates need no other
 * PBKDF2), then times, -runs R (5) times each, medians:
 *   - OSSL_STORE_SEARCH_by_name() of one subject (what X509_LOOKUP_store,
 *     behind -CAstore, asks for each issuer), through OSSL_STORE: the
 *     objects that come back must be exactly that one certificate;
 *   - the same by fingerprint (SHA-256 of the DER);
 *   - listing all N certificates through OSSL_STORE and comparing each
 *     subject in the application, which is what a loader without the
 *     search makes a caller do;
 * each without a store password (no PBKDF2, the file parsed at every
 * open), and with the store password in the URI in a library context
 * whose openssl.cnf says kek-cache = yes (the store kept after the first
 * open: no file parsed, no PBKDF2).
 *
 *   wks-search-bench [-certs N] [-runs R] [-iter I] [-provider-path DIR]
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

#define BENCH_NAME "wks-search-bench"
#include "benchutil.h"

#define PW "bench store password"

static X509 *make_cert(EVP_PKEY *key, int i)
{
	char cn[32];

	snprintf(cn, sizeof(cn), "Bench CA %05d", i);
	return bench_cert(key, cn, i + 1);
}

/*
 * Open `uri`, apply `search` (NULL: none), load to the end.  Returns the
 * number of certificates that came back; *same counts those equal to
 * `want`, *named those whose subject is want's (compared here, as a
 * caller listing everything must).
 */
static int run(OSSL_LIB_CTX *lc, const char *uri, OSSL_STORE_SEARCH *search,
	       X509 *want, int *same, int *named)
{
	OSSL_STORE_CTX *sc = OSSL_STORE_open_ex(uri, lc, NULL, NULL, NULL,
						 NULL, NULL, NULL);
	int n = 0;

	*same = *named = 0;
	if (!sc)
		die("OSSL_STORE_open_ex");
	if (!OSSL_STORE_expect(sc, OSSL_STORE_INFO_CERT))
		die("OSSL_STORE_expect");
	if (search && (!OSSL_STORE_supports_search(sc,
			OSSL_STORE_SEARCH_get_type(search)) ||
		       !OSSL_STORE_find(sc, search)))
		die("OSSL_STORE_find");
	while (!OSSL_STORE_eof(sc)) {
		OSSL_STORE_INFO *info = OSSL_STORE_load(sc);
		X509 *x;

		if (!info) {
			if (OSSL_STORE_error(sc))
				die("OSSL_STORE_load");
			continue;
		}
		if ((x = OSSL_STORE_INFO_get0_CERT(info)) != NULL) {
			n++;
			*same += X509_cmp(x, want) == 0;
			*named += X509_NAME_cmp(X509_get_subject_name(x),
					X509_get_subject_name(want)) == 0;
		}
		OSSL_STORE_INFO_free(info);
	}
	OSSL_STORE_close(sc);
	return n;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/wks-search-bench.XXXXXX";
	char path[512], uri[2][700], provdir[4096], exe[4096];
	const char *pdir = NULL, *iter = "10000";
	int ncerts = 5000, runs = 5;
	EVP_PKEY *key;
	X509 *want = NULL;
	wks_store *st;
	OSSL_LIB_CTX *lc[2];
	OSSL_STORE_SEARCH *by_name, *by_fp;
	unsigned char fp[EVP_MAX_MD_SIZE];
	unsigned int fp_len = 0;
	double t0, t_build, *t;
	ssize_t n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-certs") && i + 1 < argc)
			ncerts = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-iter") && i + 1 < argc)
			iter = argv[++i];
		else if (!strcmp(argv[i], "-provider-path") && i + 1 < argc)
			pdir = argv[++i];
		else {
			fprintf(stderr, "usage: %s [-certs N] [-runs R] "
				"[-iter I] [-provider-path DIR]\n", argv[0]);
			return 2;
		}
	}
	if (ncerts < 1 || runs < 1)
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
	snprintf(path, sizeof(path), "%s/trust.wks", dir);

	/* The store, once. */
	t0 = now_ms();
	if (!(key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")))
		die("EC key generation");
	if (wks_store_new(&st) < 0 ||
	    wks_store_set_property(st, "wolfjce.wks.iterationCount", iter) < 0)
		die("a store");
	for (int i = 0; i < ncerts; i++) {
		X509 *x = make_cert(key, i);
		char alias[32];

		snprintf(alias, sizeof(alias), "ca-%05d", i);
		if (wks_store_set_cert(st, alias, x) < 0)
			die("wks_store_set_cert");
		if (i == ncerts / 2)
			want = x;
		else
			X509_free(x);
	}
	if (wks_store_save_file(st, path, PW, strlen(PW)) < 0)
		die("writing the store");
	wks_store_free(st);
	EVP_PKEY_free(key);
	t_build = now_ms() - t0;

	snprintf(uri[0], sizeof(uri[0]), "wks://%s", path);
	snprintf(uri[1], sizeof(uri[1]), "wks://%s?storepass=pass:bench%%20"
		 "store%%20password", path);
	lc[0] = bench_context(dir, pdir, "bench", "kek-cache = no\n");
	lc[1] = bench_context(dir, pdir, "bench", "kek-cache = yes\n");
	if (!(by_name = OSSL_STORE_SEARCH_by_name(X509_get_subject_name(want))) ||
	    !X509_digest(want, EVP_sha256(), fp, &fp_len) ||
	    !(by_fp = OSSL_STORE_SEARCH_by_key_fingerprint(EVP_sha256(), fp,
							    fp_len)))
		die("the searches");
	if (!(t = malloc(sizeof(*t) * (size_t)runs)))
		die("out of memory");

	printf("wks-search-bench: %s, %d trusted certificates (store built "
	       "in %.0f ms), %d runs (medians)\n",
	       OpenSSL_version(OPENSSL_VERSION), ncerts, t_build, runs);
	for (int m = 0; m < 2; m++) {
		static const char *const mode[2] = {
			"no password (file parsed at each open)",
			"storepass=, kek-cache = yes (kept store)" };
		static const char *const what[3] = {
			"by subject (OSSL_STORE_SEARCH_by_name)",
			"by fingerprint (SHA-256)              ",
			"list all, compare subjects in the app " };
		int same = 0, named = 0, got = 0;

		printf("  %s\n", mode[m]);
		/* The kept store's first open (MAC PBKDF2, parse), not timed. */
		(void)run(lc[m], uri[m], by_name, want, &same, &named);
		for (int w = 0; w < 3; w++) {
			OSSL_STORE_SEARCH *s = w == 0 ? by_name :
					       w == 1 ? by_fp : NULL;
			double med;

			for (int r = 0; r < runs; r++) {
				t0 = now_ms();
				got = run(lc[m], uri[m], s, want, &same,
					  &named);
				t[r] = now_ms() - t0;
			}
			if ((s && (got != 1 || same != 1)) ||
			    (!s && (got != ncerts || named != 1))) {
				fprintf(stderr, "wks-search-bench: %s gave %d "
					"certificates, %d the one asked for\n",
					what[w], got, s ? same : named);
				return 1;
			}
			med = median(t, runs);
			printf("    %s %10.3f ms  (%d certificate%s)\n", what[w],
			       med, got, got == 1 ? "" : "s");
		}
	}
	free(t);
	OSSL_STORE_SEARCH_free(by_name);
	OSSL_STORE_SEARCH_free(by_fp);
	X509_free(want);
	OSSL_LIB_CTX_free(lc[0]);
	OSSL_LIB_CTX_free(lc[1]);
	unlink(path);
	rmdir(dir);
	return 0;
}
